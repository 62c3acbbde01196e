//! `streamer`: tokio and futures. Input is a `Stream` of lines, each split off the read buffer
//! without a copy; `map` renders each one and `forward` drains the stream into stdout as a `Sink`.
//!
//! The live-input rule comes with `forward`: whenever the stream has no line ready, it flushes
//! the sink before waiting, so a line never sits in the buffer while input is idle.

use std::process::ExitCode;

use clap::Parser;
use futures::StreamExt;
use pipelines::async_io::{self, AsyncInput, AsyncOutput};
use pipelines::cli::{BufferArgs, CommonArgs};
use pipelines::exit::{self, Error};
use pipelines::kernel::render_shared;
use pipelines::stats::Stats;
use tokio::runtime::Builder;

/// Prefix every line with [spaces: N]: a stream of lines, rendered and forwarded into stdout.
#[derive(Parser)]
#[command(name = env!("CARGO_BIN_NAME"), version)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    buffer: BufferArgs,
}

fn main() -> ExitCode {
    let args = Args::parse();
    exit::run(env!("CARGO_BIN_NAME"), || {
        // The current-thread runtime, by measurement: a single task has nothing to run in
        // parallel, and the multi-thread runtime only moves the reactor onto another thread, so
        // every wake-up crosses threads. 1.1 GB of logs through pipes, median of 9:
        // current-thread 1285 ms, multi-thread 1489 ms.
        async_io::block_on(Builder::new_current_thread(), transform(&args))
    })
}

async fn transform(args: &Args) -> Result<(), Error> {
    let mut stats = Stats::start();
    let mut input = AsyncInput::new(&args.common.files);
    let mut output = AsyncOutput::stdout(args.buffer.size)?;
    input
        .lines(args.buffer.size)
        .inspect(|_| stats.lines += 1)
        .map(|line| Ok(render_shared(line)))
        .forward(&mut output)
        .await?;
    if args.common.stats {
        stats.bytes_in = input.bytes_read();
        stats.bytes_out = output.bytes_written();
        stats.print();
    }
    Ok(())
}
