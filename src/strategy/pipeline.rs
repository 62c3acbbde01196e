//! `pipeline`: tokio's multi-thread runtime, with a reader, a renderer and a writer task joined by
//! bounded channels. Each message carries `batch` lines, split off the read buffer uncopied.
//!
//! Order holds by construction: one task per stage and first-in-first-out channels. When input
//! goes idle, the reader sends what it holds, short of a batch or not, marked so the writer writes
//! out at once: a lone line never waits for a batch to fill. `--stats` times each task busy
//! versus waiting on its channels: the reader's receiving is its reads of input, the writer's
//! sending its writes to the output.

use std::io;
use std::process::ExitCode;

use bytes::Bytes;
use tokio::io::AsyncWrite;
use tokio::sync::mpsc::{Receiver, Sender, channel};
use tokio::task::JoinHandle;

use crate::async_io::{AsyncInput, AsyncOutput};
use crate::error::Error;
use crate::frame::reserve;
use crate::frame::shared::SharedLines;
use crate::io::gather::is_due_idle;
use crate::stats::{StageClock, Stats};
use crate::tally::Tallying;

/// Bytes per read of input and per write of output.
pub const IO_SIZE: usize = 128 * 1024;

/// The knobs.
#[derive(Debug, Clone)]
pub struct Knobs {
    /// Lines per message between tasks.
    pub batch: usize,
    /// Messages a channel holds before its sender waits.
    pub queue: usize,
    /// Whether each task's clock runs, for `--stats`.
    pub clocks: bool,
}

/// What travels down a channel: lines, or their rendering, and whether input went idle after
/// them, so the writer must write out all it holds.
struct Message<T> {
    data: T,
    idle: bool,
}

/// Renders every line of `input` onto `output` with `transform`. Must run on a tokio runtime: it
/// spawns its tasks there, the transform moved into the one that renders.
pub async fn run(
    knobs: &Knobs,
    transform: impl Tallying + Send + 'static,
    input: impl AsyncInput + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> Result<Stats, Error> {
    let mut stats = Stats::start();
    let clock = |name| StageClock::new(name, knobs.clocks);
    let (lines_in, lines_out) = channel(knobs.queue);
    let (rendered_in, rendered_out) = channel(knobs.queue);
    let output = AsyncOutput::new(output, IO_SIZE);
    let reader = tokio::spawn(read(input, knobs.batch, lines_in, clock("reader")));
    let renderer = tokio::spawn(render(transform, lines_out, rendered_in, clock("renderer")));
    let writer = tokio::spawn(write(output, rendered_out, clock("writer")));
    // The writer first: if it fails, the reader may be waiting on input that never comes.
    let (bytes_out, writer) = joined(writer).await??;
    let (lines, status, renderer) = joined(renderer).await??;
    let (bytes_in, reader) = joined(reader).await??;
    stats.lines = lines;
    stats.status = status;
    stats.bytes_in = bytes_in;
    stats.bytes_out = bytes_out;
    stats.stages = vec![reader, renderer, writer];
    Ok(stats)
}

/// Cuts input into batches of `batch` whole lines and sends them on. Before a read that would
/// wait, sends what it holds, however short, marked idle. Returns the bytes read; stops early,
/// without error, if the renderer has gone (the writer failed, and says why).
async fn read(
    mut input: impl AsyncInput,
    batch: usize,
    lines: Sender<Message<Bytes>>,
    mut clock: StageClock,
) -> Result<(u64, StageClock), Error> {
    let mut buffer = SharedLines::new(IO_SIZE);
    let mut bytes_in = 0;
    // Bytes read and sent on: what is left is held in `buffer`.
    let mut bytes_sent = 0;
    // Whether lines went out since the last message marked idle.
    let mut unmarked = false;
    loop {
        while let Some(data) = buffer.next_batch(batch) {
            bytes_sent += data.len() as u64;
            if !send(&lines, Message { data, idle: false }, &mut clock).await {
                return Ok((bytes_in, clock));
            }
            unmarked = true;
        }
        // What the writer holds unwritten, and any short batch here, go when input is idle.
        if is_due_idle(unmarked || bytes_in > bytes_sent, || input.is_ready()) {
            let short = buffer.take_complete();
            bytes_sent += short.as_ref().map_or(0, |short| short.len() as u64);
            if short.is_some() || unmarked {
                let data = short.unwrap_or_default();
                if !send(&lines, Message { data, idle: true }, &mut clock).await {
                    return Ok((bytes_in, clock));
                }
                unmarked = false;
            }
        }
        clock.busy();
        let read = input.read_buf(buffer.spare()?).await?;
        clock.waited_to_receive();
        if read == 0 {
            break;
        }
        bytes_in += read as u64;
    }
    if let Some(data) = buffer.take_rest() {
        send(&lines, Message { data, idle: true }, &mut clock).await;
    }
    Ok((bytes_in, clock))
}

/// Renders each batch into a buffer of its own with `transform`. Returns the lines rendered.
async fn render(
    transform: impl Tallying,
    mut lines: Receiver<Message<Bytes>>,
    rendered: Sender<Message<Vec<u8>>>,
    mut clock: StageClock,
) -> Result<(u64, ExitCode, StageClock), Error> {
    let mut count = 0;
    // One task renders every batch, in input order: one tally is all their merge.
    let mut tally = Default::default();
    while let Some(Message { data, idle }) = lines.recv().await {
        clock.waited_to_receive();
        let mut out = Vec::new();
        count += transform.render_chunk(&mut tally, &mut out, &data)?;
        if !send(&rendered, Message { data: out, idle }, &mut clock).await {
            // The writer has failed: no summary, and the status is the failure's.
            return Ok((count, ExitCode::SUCCESS, clock));
        }
    }
    let mut summary = Vec::new();
    let status = transform.end(tally, &mut summary);
    if !summary.is_empty() {
        send(
            &rendered,
            Message {
                data: summary,
                idle: true,
            },
            &mut clock,
        )
        .await;
    }
    Ok((count, status, clock))
}

/// Gathers rendered batches into large writes, and writes out at once after one marked idle.
/// Returns the bytes written.
async fn write(
    mut output: AsyncOutput<impl AsyncWrite + Unpin>,
    mut rendered: Receiver<Message<Vec<u8>>>,
    mut clock: StageClock,
) -> Result<(u64, StageClock), Error> {
    while let Some(Message { data, idle }) = rendered.recv().await {
        clock.waited_to_receive();
        reserve(output.pending(), data.len())?;
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
/// gone, which happens only when a later stage has failed.
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

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::path::PathBuf;

    use tokio::io::AsyncReadExt;

    use super::*;
    use crate::async_io::AsyncFileInput;
    use crate::io::sources::Sources;
    use crate::io::testing::within;
    use crate::transform::SpaceCount;

    /// A lone line goes out while its batch is far from full and the input stays open: the
    /// reader marks it idle and the writer writes at once.
    #[test]
    fn a_live_line_is_not_held_for_its_batch() {
        // A line held back fails the test at the deadline instead of hanging it.
        within("the live line", || {
            let (reader, mut writer) = std::io::pipe().unwrap();
            let path = PathBuf::from(format!("/dev/fd/{}", reader.as_raw_fd()));
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_io()
                .build()
                .unwrap();
            runtime.block_on(async {
                let (output, mut rendered) = tokio::io::duplex(1024);
                let input = AsyncFileInput::new(Sources::new(&[path]), None);
                let knobs = Knobs {
                    batch: 1000,
                    queue: 4,
                    clocks: false,
                };
                let run = tokio::spawn(async move { run(&knobs, SpaceCount, input, output).await });
                writer.write_all(b"a b\n").unwrap();
                let mut line = [0; 15];
                rendered.read_exact(&mut line).await.unwrap();
                assert_eq!(&line, b"[spaces: 1]a b\n");
                drop(writer);
                let stats = run.await.unwrap().unwrap();
                assert_eq!((stats.lines, stats.bytes_in, stats.bytes_out), (1, 4, 15));
            });
        });
    }
}
