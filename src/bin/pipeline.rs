//! `pipeline`: tokio's multi-thread runtime; reader, renderer and writer tasks joined by bounded
//! channels, `--batch` lines a message.

use std::process::ExitCode;

use clap::Parser;
use pipelines::async_io::runtime::Flavor;
use pipelines::cli::{self, CommonArgs, Request, TRANSFORM_HELP, VERSION, positive_up_to};
use pipelines::process;
use pipelines::strategy::pipeline::{self, Knobs};
use pipelines::transform::SpaceCount;

/// The most lines per message, or messages per channel: past it they only hold memory, and
/// tokio's channels refuse capacities near `usize::MAX` by panicking.
const MOST: u64 = 1 << 20;

/// Prefix every line with [spaces: N]: reader, renderer and writer tasks joined by channels.
#[derive(Parser)]
#[command(name = env!("CARGO_BIN_NAME"), version = VERSION, after_help = TRANSFORM_HELP)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Lines per message between tasks, at most 1048576. 1 hands each line on alone, as the
    /// original experiment did: the slowest setting, tens of MiB/s on short lines. For speed use
    /// 1000: the sweep (harness/sweep.sh) found 100 to 2000 lines a message fastest, about 5
    /// times --batch 1's rate on logs.
    #[arg(long, value_name = "LINES", default_value_t = 1, value_parser = positive_up_to(MOST))]
    batch: usize,
    /// Messages a channel holds before its sender waits, at most 1048576.
    // 32 by measurement: at --batch 1, throughput rises to about 16 and is flat up to 4096 but
    // noisy; at --batch 1000, smaller queues did slightly better. More only hold memory.
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = positive_up_to(MOST))]
    queue: usize,
}

fn main() -> ExitCode {
    let args = match cli::parse::<Args>() {
        Request::Run(args) => args,
        Request::Answer(answer) => return process::answer::<Args>(answer),
    };
    let knobs = Knobs {
        batch: args.batch,
        queue: args.queue,
        clocks: args.common.stats,
    };
    let flavor = Flavor::MultiThread;
    process::filter_async(
        env!("CARGO_BIN_NAME"),
        &args.common,
        flavor,
        |input, output| async move { pipeline::run(&knobs, SpaceCount, input, output).await },
    )
}
