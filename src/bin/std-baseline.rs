//! `std-baseline`: std only. One thread, one loop, a line at a time, synchronous I/O.

use std::process::ExitCode;

use clap::Parser;
use pipelines::cli::{self, BufferArgs, CommonArgs, Request, TRANSFORM_HELP, VERSION};
use pipelines::process;
use pipelines::strategy::std_baseline::{self, Knobs};
use pipelines::transform::SpaceCount;

/// Prefix every line with [spaces: N]: one thread, one loop, a line at a time.
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
    process::filter(env!("CARGO_BIN_NAME"), &args.common, |input, output| {
        std_baseline::run(&knobs, SpaceCount, input, output)
    })
}
