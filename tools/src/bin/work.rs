//! `work`: one of the five strategies, the library's own code as its binary runs it, with the
//! space count and a set number of nanoseconds of CPU a line on top (`pipelines_tools::work`), for
//! `harness/work.sh`. A program of the harness's rather than a flag of the binaries: their CLI
//! and their code stay as they are (no knob, no branch, no second transform compiled in), and the
//! strategies are generic, so this links the very code each binary runs, compiled for `Work`.

use std::process::ExitCode;
use std::thread;

use clap::{Parser, ValueEnum};
use pipelines::async_io::runtime::Flavor;
use pipelines::cli::{self, CommonArgs, Request};
use pipelines::process;
use pipelines::strategy::{baseline, batched, pipeline, std_baseline, streamer};
use pipelines_tools::work::{Work, calibrate};

/// The binaries' defaults: `--buffer-size`, `batched --chunk-size`, `pipeline --queue`.
const BUFFER_SIZE: usize = 128 << 10;
const CHUNK_SIZE: usize = 256 << 10;
const PIPELINE_QUEUE: usize = 32;

#[derive(Clone, Copy, ValueEnum)]
enum Strategy {
    StdBaseline,
    Baseline,
    Streamer,
    Pipeline,
    Batched,
}

/// Run a strategy with the space count and NS nanoseconds of CPU a line on top.
#[derive(Parser)]
#[command(name = "work")]
struct Args {
    /// The strategy, at its binary's defaults but for the knobs below.
    #[arg(value_enum, required_unless_present = "calibrate")]
    strategy: Option<Strategy>,
    /// CPU a line on top of the space count, in nanoseconds.
    #[arg(long, default_value_t = 0)]
    ns: u64,
    /// This machine's work steps a microsecond, as `--calibrate` prints it [default: measured now]
    #[arg(long, value_name = "STEPS")]
    steps_per_us: Option<f64>,
    /// Print this machine's work steps a microsecond, and exit.
    #[arg(long)]
    calibrate: bool,
    /// `batched`'s worker threads [default: the available cores]
    #[arg(long)]
    threads: Option<usize>,
    /// `pipeline`'s lines a message.
    #[arg(long, default_value_t = 1)]
    batch: usize,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> ExitCode {
    let args = match cli::parse::<Args>() {
        Request::Run(args) => args,
        Request::Answer(answer) => return process::answer::<Args>(answer),
    };
    let steps_per_us = args.steps_per_us.unwrap_or_else(calibrate);
    let Some(strategy) = args.strategy.filter(|_| !args.calibrate) else {
        println!("{steps_per_us:.1}");
        return ExitCode::SUCCESS;
    };
    let work = Work::new(args.ns, steps_per_us);
    let common = &args.common;
    let buffer = std_baseline::Knobs {
        buffer_size: BUFFER_SIZE,
    };
    match strategy {
        Strategy::StdBaseline => process::filter("work", common, |input, output| {
            std_baseline::run(&buffer, work, input, output)
        }),
        // The current-thread runtime, as their binaries run them.
        Strategy::Baseline => {
            process::filter_async("work", common, Flavor::CurrentThread, |i, o| {
                baseline::run(&buffer, work, i, o)
            })
        }
        Strategy::Streamer => {
            process::filter_async("work", common, Flavor::CurrentThread, |i, o| {
                streamer::run(&buffer, work, i, o)
            })
        }
        Strategy::Pipeline => {
            let knobs = pipeline::Knobs {
                batch: args.batch,
                queue: PIPELINE_QUEUE,
                clocks: common.stats,
            };
            process::filter_async("work", common, Flavor::MultiThread, |i, o| {
                pipeline::run(&knobs, work, i, o)
            })
        }
        Strategy::Batched => {
            let threads = args
                .threads
                .unwrap_or_else(|| thread::available_parallelism().map_or(1, usize::from));
            let knobs = batched::Knobs {
                threads,
                chunk_size: CHUNK_SIZE,
                queue: threads,
                clocks: common.stats,
            };
            process::filter("work", common, |input, output| {
                batched::run(&knobs, work, input, output)
            })
        }
    }
}
