//! `baseline`: tokio, one task doing the whole loop, a line at a time.

use std::process::ExitCode;

use clap::Parser;
use pipelines::async_io::runtime::Flavor;
use pipelines::cli::{self, BufferArgs, CommonArgs, Request, TRANSFORM_HELP, VERSION};
use pipelines::process;
use pipelines::strategy::baseline::{self, Knobs};
use pipelines::transform::SpaceCount;

/// Prefix every line with [spaces: N]: one tokio task, one loop, a line at a time.
#[derive(Parser)]
#[command(name = env!("CARGO_BIN_NAME"), version = VERSION, after_help = TRANSFORM_HELP)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    buffer: BufferArgs,
}

fn main() -> ExitCode {
    let args = match cli::parse::<Args>() {
        Request::Run(args) => args,
        Request::Answer(answer) => return process::answer::<Args>(answer),
    };
    let knobs = Knobs {
        buffer_size: args.buffer.size,
    };
    // The current-thread runtime, by measurement: a single task has nothing to run in parallel,
    // and the multi-thread runtime only moves the reactor onto another thread, so every wake-up
    // crosses threads. 1.1 GB of logs through pipes, median of 9: current-thread 687 ms,
    // multi-thread 697 ms.
    let flavor = Flavor::CurrentThread;
    process::filter_async(
        env!("CARGO_BIN_NAME"),
        &args.common,
        flavor,
        |input, output| async move { baseline::run(&knobs, SpaceCount, input, output).await },
    )
}
