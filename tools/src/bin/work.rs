//! `work`: one of the five strategies, the library's own code as its binary runs it, with the
//! space count and a set number of nanoseconds of CPU a line on top (`pipelines_tools::work`), for
//! `harness/work.sh`. A program of the harness's rather than a flag of the binaries: their CLI
//! and their code stay as they are (no knob, no branch, no second transform compiled in), and the
//! strategies are generic, so this links the very code each binary runs, compiled for `Work`.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, ValueEnum};
use linewright::internal::cli::{self, CommonArgs, Request};
use linewright::internal::process;
use linewright::{Baseline, Batched, Pipeline, StdBaseline, Strategy as _, Streamer};
use pipelines_tools::work::{Work, calibrate};

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
    let mut command = Args::command();
    let args = match cli::parse::<Args>(&mut command) {
        Request::Run(args) => args,
        Request::Answer(answer) => {
            return process::answer(answer, command, process::TOOLKIT_MANUAL);
        }
    };
    let steps_per_us = args.steps_per_us.unwrap_or_else(calibrate);
    let Some(strategy) = args.strategy.filter(|_| !args.calibrate) else {
        println!("{steps_per_us:.1}");
        return ExitCode::SUCCESS;
    };
    let work = Work::new(args.ns, steps_per_us);
    let common = &args.common;
    // Each strategy as its binary runs it (knobs, runtime), at its defaults but for the above.
    match strategy {
        Strategy::StdBaseline => StdBaseline::default().filter("work", common, work),
        Strategy::Baseline => Baseline::default().filter("work", common, work),
        Strategy::Streamer => Streamer::default().filter("work", common, work),
        Strategy::Pipeline => Pipeline {
            batch: args.batch,
            ..Pipeline::default()
        }
        .filter("work", common, work),
        Strategy::Batched => Batched {
            threads: args.threads,
            ..Batched::default()
        }
        .filter("work", common, work),
    }
}
