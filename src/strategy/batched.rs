//! `batched`: OS threads. A reader cuts the input into large chunks at line ends, `threads`
//! workers render chunks in parallel, and one writer, the calling thread, emits them in input
//! order.
//!
//! Chunks travel in slots that go round: reader ──► workers ──► writer ──► reader. Only
//! `threads + queue` slots exist and their buffers are reused, so memory is bounded by the
//! settings and the longest line, the steady state allocates nothing, and a slow output holds the
//! reader back. Slots are numbered as read; the writer puts them back in that order.

use std::io::{self, Write};

use crossbeam_channel::{Receiver, Sender, bounded};

use crate::error::Error;
use crate::frame::Chunk;
use crate::io::gather::is_due;
use crate::io::{Input, Output};
use crate::parallel::{OnPanic, Pool, Reorder, join, spawn};
use crate::stats::{StageClock, Stats};
use crate::strategy::render_chunk_in_memory;

/// The knobs.
#[derive(Debug, Clone)]
pub struct Knobs {
    /// Worker threads rendering chunks.
    pub threads: usize,
    /// Bytes read into a chunk before it goes to a worker; a longer line grows its chunk.
    pub chunk_size: usize,
    /// Chunks read ahead beyond one per worker.
    pub queue: usize,
    /// Whether each thread's clock runs, for `--stats`.
    pub clocks: bool,
}

/// A chunk on its round: its number in input order, the lines read in, their rendering.
struct Slot {
    number: u64,
    input: Chunk,
    output: Vec<u8>,
    lines: u64,
}

/// Renders every line of `input` onto `output`.
///
/// The writer is the calling thread: when the output fails, this returns at once, though the
/// reader may be blocked in a read that never returns (the process is then ending). While no
/// write comes, an input that watches the output (as [`FileInput`](crate::io::FileInput) does)
/// notices its reader going away and ends the run with that error.
pub fn run(
    knobs: &Knobs,
    input: impl Input + Send + 'static,
    output: impl Write,
) -> Result<Stats, Error> {
    let mut stats = Stats::start();
    let slots = knobs.threads + knobs.queue;
    let mut output = Output::new(output, "stdout", 0);
    let (pool, give_back) = Pool::new(slots);
    let (to_workers, for_workers) = bounded(knobs.queue);
    let (to_writer, for_writer) = bounded(slots);
    let size = knobs.chunk_size;
    let clock = StageClock::new("reader", knobs.clocks);
    let reader = spawn("reader".to_owned(), move || {
        read(input, size, pool, to_workers, clock)
    })?;
    let mut workers = Vec::with_capacity(knobs.threads);
    for n in 1..=knobs.threads {
        let (from, to) = (for_workers.clone(), to_writer.clone());
        let clock = StageClock::new(format!("worker {n}"), knobs.clocks);
        workers.push(spawn(format!("worker {n}"), move || work(from, to, clock))?);
    }
    // The workers now hold the only senders to the writer: dropping this one lets the writer's
    // loop end when the last worker does.
    drop(to_writer);

    let mut clock = StageClock::new("writer", knobs.clocks);
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
    stats.bytes_in = bytes_in;
    stats.bytes_out = output.bytes_written();
    Ok(stats)
}

/// The reader: fills chunks and hands on their whole lines, numbered. Returns the bytes read when
/// the input ends, or early if the writer has gone (the run is then ending); fails if the input
/// does.
fn read(
    mut input: impl Input,
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
    let mut bytes_in = 0;
    loop {
        // Dropping `to_workers` on the way out ends the workers, then the writer's loop.
        let read = input.read(chunk.spare()?)?;
        let ended = read == 0;
        if ended {
            chunk.finish();
        } else {
            chunk.filled(read);
            bytes_in += read as u64;
        }
        // A full chunk goes on, and the rest at the end; so do the lines read so far whenever
        // nothing more is waiting, so that a live line is never held back for more input.
        let due = ended || is_due(chunk.bytes().len(), size, || input.has_waiting());
        if chunk.has_lines() && due {
            clock.busy();
            let Some(mut slot) = pool.take(new_slot) else {
                break;
            };
            clock.waited_to_receive();
            chunk.take_lines(&mut slot.input)?;
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
    Ok((clock, bytes_in))
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
        let rendered = render_chunk_in_memory(&mut slot.output, slot.input.bytes());
        clock.busy();
        let sent = match rendered {
            Ok(lines) => {
                slot.lines = lines;
                to_writer.send(Ok(slot))
            }
            Err(error) => to_writer.send(Err(error)),
        };
        if sent.is_err() {
            break;
        }
        clock.waited_to_send();
    }
    clock
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::os::fd::AsRawFd;
    use std::path::PathBuf;

    use super::*;
    use crate::io::FileInput;
    use crate::io::sources::Sources;

    /// A lone line goes to a worker and out while its chunk is far from full and the input stays
    /// open.
    #[test]
    fn a_live_line_is_not_held_for_its_chunk() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let (output_reader, output_writer) = std::io::pipe().unwrap();
        let path = PathBuf::from(format!("/dev/fd/{}", reader.as_raw_fd()));
        let knobs = Knobs {
            threads: 2,
            chunk_size: 1 << 20,
            queue: 1,
            clocks: true,
        };
        let input = FileInput::new(Sources::new(&[path]), None);
        let running = std::thread::spawn(move || run(&knobs, input, output_writer));
        writer.write_all(b"a b\n").unwrap();
        let mut line = String::new();
        BufReader::new(output_reader).read_line(&mut line).unwrap();
        assert_eq!(line, "[spaces: 1]a b\n");
        drop(writer);
        let stats = running.join().unwrap().unwrap();
        assert_eq!((stats.lines, stats.bytes_in, stats.bytes_out), (1, 4, 15));
        assert_eq!(stats.stages.len(), 4, "reader, two workers, writer");
    }

    /// A worker renders each chunk into its own slot, counts its lines, hands it to the writer,
    /// and ends when the reader's channel closes.
    #[test]
    fn a_worker_renders_into_the_slot_it_hands_on() {
        let (to_worker, chunks) = bounded(1);
        let (to_writer, rendered) = bounded(1);
        let mut slot = Slot {
            number: 0,
            input: Chunk::new(4),
            output: Vec::new(),
            lines: 0,
        };
        slot.input.spare().unwrap()[..4].copy_from_slice(b"a b\n");
        slot.input.filled(4);
        to_worker.send(slot).unwrap();
        drop(to_worker);
        work(chunks, to_writer, StageClock::new("worker", false));
        let slot = rendered.recv().unwrap().unwrap();
        assert_eq!(slot.output, b"[spaces: 1]a b\n");
        assert_eq!(slot.lines, 1);
    }
}
