//! `pipeline`: tokio's multi-thread runtime, with a reader, a counter and a writer task joined by
//! bounded channels. Each message carries `--batch` lines, split off the read buffer uncopied.
//!
//! Order holds by construction: one task per stage and first-in-first-out channels. When input
//! goes idle, the reader sends what it holds, short of a batch or not, marked so the writer writes
//! out at once: a lone line never waits for a batch to fill. `--stats` times each task busy
//! versus waiting on its channels: the reader's receiving is its reads of input, the writer's
//! sending its writes to stdout.

use std::io;
use std::process::ExitCode;

use bytes::Bytes;
use clap::Parser;
use pipelines::async_io::{self, AsyncInput, AsyncOutput};
use pipelines::cli::{CommonArgs, positive_up_to};
use pipelines::exit::{self, Error};
use pipelines::kernel::render_chunk;
use pipelines::shared_lines::SharedLines;
use pipelines::stats::{StageClock, Stats};
use tokio::runtime::Builder;
use tokio::sync::mpsc::{Receiver, Sender, channel};
use tokio::task::JoinHandle;

/// Bytes per read of input and per write of output.
const IO_SIZE: usize = 128 * 1024;

/// The most lines per message, or messages per channel: past it they only hold memory, and
/// tokio's channels refuse capacities near `usize::MAX` by panicking.
const MOST: u64 = 1 << 20;

/// Prefix every line with [spaces: N]: reader, counter and writer tasks joined by channels.
#[derive(Parser)]
#[command(name = env!("CARGO_BIN_NAME"), version)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Lines per message between tasks, at most 1048576.
    #[arg(long, value_name = "LINES", default_value_t = 1, value_parser = positive_up_to(MOST))]
    batch: usize,
    /// Messages a channel holds before its sender waits, at most 1048576.
    // 32 by measurement: at --batch 1, throughput rises to about 16 and is flat up to 4096 but
    // noisy; at --batch 1000, smaller queues did slightly better. More only hold memory.
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = positive_up_to(MOST))]
    queue: usize,
}

/// What travels down a channel: lines, or their rendering, and whether input went idle after
/// them, so the writer must write out all it holds.
struct Message<T> {
    data: T,
    idle: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    exit::run(env!("CARGO_BIN_NAME"), || {
        async_io::block_on(Builder::new_multi_thread(), transform(&args))
    })
}

async fn transform(args: &Args) -> Result<(), Error> {
    let mut stats = Stats::start();
    let clock = |name| StageClock::new(name, args.common.stats);
    let (lines_in, lines_out) = channel(args.queue);
    let (rendered_in, rendered_out) = channel(args.queue);
    let input = AsyncInput::new(&args.common.files);
    let output = AsyncOutput::stdout(IO_SIZE)?;
    let reader = tokio::spawn(read(input, args.batch, lines_in, clock("reader")));
    let counter = tokio::spawn(count(lines_out, rendered_in, clock("counter")));
    let writer = tokio::spawn(write(output, rendered_out, clock("writer")));
    // The writer first: if it fails, the reader may be waiting on input that never comes.
    let (bytes_out, writer) = joined(writer).await??;
    let (lines, counter) = joined(counter).await?;
    let (bytes_in, reader) = joined(reader).await?;
    if args.common.stats {
        stats.lines = lines;
        stats.bytes_in = bytes_in;
        stats.bytes_out = bytes_out;
        stats.stages = vec![reader, counter, writer];
        stats.print();
    }
    Ok(())
}

/// Cuts input into batches of `batch` whole lines and sends them on. Before a read that would
/// wait, sends what it holds, however short, marked idle.
async fn read(
    mut input: AsyncInput,
    batch: usize,
    lines: Sender<Message<Bytes>>,
    mut clock: StageClock,
) -> (u64, StageClock) {
    let mut buffer = SharedLines::new(IO_SIZE);
    // Whether lines went out since the last message marked idle.
    let mut unmarked = false;
    loop {
        while let Some(data) = buffer.next_batch(batch) {
            let message = Message { data, idle: false };
            if !send(&lines, message, &mut clock).await {
                return (input.bytes_read(), clock);
            }
            unmarked = true;
        }
        if !input.has_waiting() {
            let short = buffer.take_complete();
            if short.is_some() || unmarked {
                let data = short.unwrap_or_default();
                if !send(&lines, Message { data, idle: true }, &mut clock).await {
                    return (input.bytes_read(), clock);
                }
                unmarked = false;
            }
        }
        clock.busy();
        let read = input.read_buf(buffer.spare()).await;
        clock.waited_to_receive();
        if read == 0 {
            break;
        }
    }
    if let Some(data) = buffer.take_rest() {
        send(&lines, Message { data, idle: true }, &mut clock).await;
    }
    (input.bytes_read(), clock)
}

/// Renders each batch into a buffer of its own.
async fn count(
    mut lines: Receiver<Message<Bytes>>,
    rendered: Sender<Message<Vec<u8>>>,
    mut clock: StageClock,
) -> (u64, StageClock) {
    let mut count = 0;
    while let Some(Message { data, idle }) = lines.recv().await {
        clock.waited_to_receive();
        let mut out = Vec::new();
        count += render_chunk(&mut out, &data);
        if !send(&rendered, Message { data: out, idle }, &mut clock).await {
            break;
        }
    }
    (count, clock)
}

/// Gathers rendered batches into large writes, and writes out at once after one marked idle.
async fn write(
    mut output: AsyncOutput,
    mut rendered: Receiver<Message<Vec<u8>>>,
    mut clock: StageClock,
) -> Result<(u64, StageClock), Error> {
    while let Some(Message { data, idle }) = rendered.recv().await {
        clock.waited_to_receive();
        output.pending().extend_from_slice(&data);
        clock.busy();
        if idle {
            output.flush().await?;
        } else {
            output.flush_if_full().await?;
        }
        clock.waited_to_send();
    }
    output.flush().await?;
    Ok((output.bytes_written(), clock))
}

/// Sends `message`, timing the work before it and the wait for room; false if the receiver is
/// gone, which happens only when the writer has failed.
async fn send<T>(channel: &Sender<T>, message: T, clock: &mut StageClock) -> bool {
    clock.busy();
    let sent = channel.send(message).await.is_ok();
    clock.waited_to_send();
    sent
}

/// A task's result. Tasks here return rather than panic, so this fails only if one did.
async fn joined<T>(task: JoinHandle<T>) -> Result<T, Error> {
    task.await
        .map_err(|error| Error::new("running a task", io::Error::other(error)))
}
