//! `batched`: OS threads. A reader cuts the input into large chunks at line ends, `--threads`
//! workers render chunks in parallel, and one writer emits them in input order.
//!
//! Chunks travel in slots that go round: reader ──► workers ──► writer ──► reader. Only
//! `threads + queue` slots exist and their buffers are reused, so memory is bounded by the
//! settings and the longest line, the steady state allocates nothing, and a slow stdout holds the
//! reader back. Slots are numbered as read; the writer puts them back in that order.

use std::io;
use std::process::ExitCode;
use std::thread;

use clap::Parser;
use crossbeam_channel::{Receiver, Sender, bounded};
use pipelines::cli::{CommonArgs, LARGEST_SIZE, positive_up_to};
use pipelines::exit::{self, Error};
use pipelines::frame::Chunk;
use pipelines::input::Input;
use pipelines::kernel::render_chunk;
use pipelines::output::Output;
use pipelines::parallel::{OnPanic, Pool, Reorder, join, spawn};
use pipelines::stats::{StageClock, Stats};

/// The most threads, or queued chunks, allowed: past it they only cost memory, and soon fail.
const MOST: u64 = 1024;

/// Prefix every line with [spaces: N]: chunks of lines rendered in parallel on OS threads.
#[derive(Parser)]
#[command(name = env!("CARGO_BIN_NAME"), version)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Worker threads rendering chunks, at most 1024 [default: the available cores]
    #[arg(long, value_name = "N", value_parser = positive_up_to(MOST))]
    threads: Option<usize>,
    /// Bytes read into a chunk before it goes to a worker, at most 1 GiB; a longer line grows
    /// its chunk.
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024,
          value_parser = positive_up_to(LARGEST_SIZE))]
    chunk_size: usize,
    /// Chunks read ahead beyond one per worker, at most 1024 [default: the number of threads]
    #[arg(long, value_name = "N", value_parser = positive_up_to(MOST))]
    queue: Option<usize>,
}

/// A chunk on its round: its number in input order, the lines read in, their rendering.
struct Slot {
    number: u64,
    input: Chunk,
    output: Vec<u8>,
    lines: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    exit::run(env!("CARGO_BIN_NAME"), || transform(&args))
}

fn transform(args: &Args) -> Result<(), Error> {
    let mut stats = Stats::start();
    let threads = args
        .threads
        .unwrap_or_else(|| thread::available_parallelism().map_or(1, usize::from));
    let queue = args.queue.unwrap_or(threads);
    let slots = threads + queue;
    let mut output = Output::stdout(0)?;
    let (pool, give_back) = Pool::new(slots);
    let (to_workers, for_workers) = bounded(queue);
    let (to_writer, for_writer) = bounded(slots);
    let input = Input::new(&args.common.files);
    let size = args.chunk_size;
    let clock = StageClock::new("reader", args.common.stats);
    let reader = spawn("reader".to_owned(), move || {
        read(input, size, pool, to_workers, clock)
    })?;
    let mut workers = Vec::with_capacity(threads);
    for n in 1..=threads {
        let (from, to) = (for_workers.clone(), to_writer.clone());
        let clock = StageClock::new(format!("worker {n}"), args.common.stats);
        workers.push(spawn(format!("worker {n}"), move || work(from, to, clock))?);
    }
    // The workers now hold the only senders to the writer: dropping this one lets the writer's
    // loop end when the last worker does.
    drop(to_writer);

    // The writer is this, the main thread: when stdout fails, returning ends the process at once,
    // though the reader may be blocked in a read that never returns. While no write comes, the
    // reader itself notices stdout's reader going away, and ends with that error.
    let mut clock = StageClock::new("writer", args.common.stats);
    let mut in_order = Reorder::new(slots);
    for rendered in &for_writer {
        clock.waited_to_receive();
        let slot = rendered?;
        in_order.insert(slot.number, slot);
        while let Some(slot) = in_order.pop() {
            output.write(&slot.output)?;
            stats.lines += slot.lines;
            // Once the input has ended the reader has gone, and needs no slot back.
            let _ = give_back.send(slot);
        }
        clock.busy();
    }
    let (reader_clock, bytes_in) = join(reader)??;
    stats.stages.push(reader_clock);
    for worker in workers {
        stats.stages.push(join(worker)?);
    }
    stats.stages.push(clock);
    if args.common.stats {
        stats.bytes_in = bytes_in;
        stats.bytes_out = output.bytes_written();
        stats.print();
    }
    Ok(())
}

/// The reader: fills chunks and hands on their whole lines, numbered. Returns when the input
/// ends, or early if the writer has gone (the process is then ending); fails if stdout's reader
/// has gone.
fn read(
    mut input: Input,
    size: usize,
    mut pool: Pool<Slot>,
    to_workers: Sender<Slot>,
    mut clock: StageClock,
) -> Result<(StageClock, u64), Error> {
    let new_slot = move || Slot {
        number: 0,
        input: Chunk::new(size),
        output: Vec::new(),
        lines: 0,
    };
    let mut chunk = Chunk::new(size);
    let mut number = 0;
    loop {
        // Dropping `to_workers` on the way out ends the workers, then the writer's loop.
        let read = input.read(chunk.spare())?;
        let ended = read == 0;
        if ended {
            chunk.finish();
        } else {
            chunk.filled(read);
        }
        // A full chunk goes on, and the rest at the end; so do the lines read so far whenever
        // nothing more is waiting, so that a live line is never held back for more input.
        if chunk.has_lines() && (ended || chunk.is_full() || !input.has_waiting()) {
            clock.busy();
            let Some(mut slot) = pool.take(new_slot) else {
                break;
            };
            clock.waited_to_receive();
            chunk.take_lines(&mut slot.input);
            slot.number = number;
            number += 1;
            if to_workers.send(slot).is_err() {
                break;
            }
            clock.waited_to_send();
        }
        if ended {
            break;
        }
    }
    clock.busy();
    // The workers stop once this, the only sender to them, is gone.
    drop(to_workers);
    Ok((clock, input.bytes_read()))
}

/// A worker: renders chunks, each into its own slot's output buffer.
fn work(
    chunks: Receiver<Slot>,
    to_writer: Sender<Result<Slot, Error>>,
    mut clock: StageClock,
) -> StageClock {
    // A panic here would lose a chunk, and the writer would wait for it forever.
    let _alarm = OnPanic(|| {
        let _ = to_writer.send(Err(Error::new(
            "rendering",
            io::Error::other("a worker thread panicked"),
        )));
    });
    for mut slot in &chunks {
        clock.waited_to_receive();
        slot.output.clear();
        slot.lines = render_chunk(&mut slot.output, slot.input.bytes());
        clock.busy();
        if to_writer.send(Ok(slot)).is_err() {
            break;
        }
        clock.waited_to_send();
    }
    clock
}
