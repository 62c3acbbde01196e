//! `streamer`: tokio and futures; input as a `Stream` of lines, rendered and forwarded into
//! stdout as a `Sink`.

use std::process::ExitCode;

use clap::Parser;
use pipelines::async_io::runtime::Flavor;
use pipelines::cli::{self, BufferArgs, CommonArgs, Request, TRANSFORM_HELP, VERSION};
use pipelines::process;
use pipelines::strategy::streamer::{self, Knobs};
use pipelines::transform::SpaceCount;

/// Prefix every line with [spaces: N]: a stream of lines, rendered and forwarded into stdout.
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
    // The current-thread runtime, by measurement: 1.1 GB of logs through pipes, median of 9:
    // current-thread 1285 ms, multi-thread 1489 ms.
    let flavor = Flavor::CurrentThread;
    process::filter_async(
        env!("CARGO_BIN_NAME"),
        &args.common,
        flavor,
        |input, output| async move { streamer::run(&knobs, SpaceCount, input, output).await },
    )
}
