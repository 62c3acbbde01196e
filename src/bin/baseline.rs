//! `baseline`: tokio, one task doing the whole loop, a line at a time.
//!
//! `std-baseline`'s loop with every read and write awaited: what the runtime costs when it
//! has no concurrency to offer.

use std::process::ExitCode;

use clap::Parser;
use pipelines::async_io::{self, AsyncInput, AsyncOutput};
use pipelines::cli::{BufferArgs, CommonArgs};
use pipelines::exit::{self, Error};
use pipelines::frame::LineBuffer;
use pipelines::kernel::render_line;
use pipelines::stats::Stats;
use tokio::runtime::Builder;

/// Prefix every line with [spaces: N]: one tokio task, one loop, a line at a time.
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
        // current-thread 687 ms, multi-thread 697 ms.
        async_io::block_on(Builder::new_current_thread(), transform(&args))
    })
}

async fn transform(args: &Args) -> Result<(), Error> {
    let mut stats = Stats::start();
    let mut input = AsyncInput::new(&args.common.files);
    let mut output = AsyncOutput::stdout(args.buffer.size)?;
    let mut lines = LineBuffer::new(args.buffer.size);
    loop {
        output.flush_if_idle(&input).await?;
        let read = input.read(lines.spare()).await;
        if read == 0 {
            break;
        }
        lines.filled(read);
        while let Some(line) = lines.next_line() {
            render_line(output.pending(), line);
            stats.lines += 1;
        }
        output.flush_if_full().await?;
    }
    if let Some(line) = lines.take_rest() {
        render_line(output.pending(), line);
        stats.lines += 1;
    }
    output.flush().await?;
    if args.common.stats {
        stats.bytes_in = input.bytes_read();
        stats.bytes_out = output.bytes_written();
        stats.print();
    }
    Ok(())
}
