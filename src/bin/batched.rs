//! `batched`: OS threads; a reader cuts input into chunks at line ends, workers render them in
//! parallel, one writer emits them in input order.

use std::process::ExitCode;
use std::thread;

use clap::Parser;
use pipelines::cli::{
    self, CommonArgs, LARGEST_SIZE, Request, TRANSFORM_HELP, VERSION, positive_up_to, size_up_to,
};
use pipelines::process;
use pipelines::strategy::batched::{self, Knobs};
use pipelines::transform::SpaceCount;

/// The most threads, or queued chunks, allowed: past it they only cost memory, and soon fail.
const MOST: u64 = 1024;

/// Prefix every line with [spaces: N]: chunks of lines rendered in parallel on OS threads.
#[derive(Parser)]
#[command(name = env!("CARGO_BIN_NAME"), version = VERSION, after_help = TRANSFORM_HELP)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Worker threads rendering chunks, at most 1024 [default: the available cores]
    #[arg(long, value_name = "N", value_parser = positive_up_to(MOST))]
    threads: Option<usize>,
    /// Bytes read into a chunk before it goes to a worker, at most 1G; a longer line grows its
    /// chunk. Takes suffixes as dd does: K, M, G (×1024), KB, MB, GB (×1000).
    #[arg(long, value_name = "BYTES", default_value = "256K", value_parser = size_up_to(LARGEST_SIZE))]
    chunk_size: usize,
    /// Chunks read ahead beyond one per worker, at most 1024 [default: the number of threads]
    #[arg(long, value_name = "N", value_parser = positive_up_to(MOST))]
    queue: Option<usize>,
}

fn main() -> ExitCode {
    let args = match cli::parse::<Args>() {
        Request::Run(args) => args,
        Request::Answer(answer) => return process::answer::<Args>(answer),
    };
    let threads = args
        .threads
        .unwrap_or_else(|| thread::available_parallelism().map_or(1, usize::from));
    let knobs = Knobs {
        threads,
        chunk_size: args.chunk_size,
        queue: args.queue.unwrap_or(threads),
        clocks: args.common.stats,
    };
    process::filter(env!("CARGO_BIN_NAME"), &args.common, |input, output| {
        batched::run(&knobs, SpaceCount, input, output)
    })
}
