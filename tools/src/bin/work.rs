//! `work`: one of the five strategies, the library's own code as its binary runs it, with the
//! space count and a set number of nanoseconds of CPU a line on top (`pipelines_tools::work`), for
//! `harness/work.sh`. A program of the harness's rather than a flag of the binaries: their CLI
//! and their code stay as they are (no knob, no branch, no second transform compiled in), and the
//! strategies are generic, so this links the very code each binary runs, compiled for `Work`,
//! through the library's own `Filter`: each strategy's knobs are its binary's options
//! (`work pipeline --batch 1000`, `work batched --threads 1`).

use std::process::ExitCode;

use clap::ValueEnum;
use linewright::{Baseline, Batched, Filter, Pipeline, StdBaseline, Streamer};
use pipelines_tools::work::{Work, calibrate};

#[derive(Clone, Copy, ValueEnum)]
enum Strategy {
    StdBaseline,
    Baseline,
    Streamer,
    Pipeline,
    Batched,
}

/// `work`'s own arguments, before the FILEs.
#[derive(clap::Args)]
struct Own {
    /// The strategy, at its binary's defaults but for the options given
    #[arg(value_enum)]
    strategy: Strategy,
    /// CPU a line on top of the space count, in nanoseconds
    #[arg(long, default_value_t = 0)]
    ns: u64,
    /// This machine's work steps a microsecond, as `work --calibrate` prints it [default: measured
    /// now]
    #[arg(long, value_name = "STEPS")]
    steps_per_us: Option<f64>,
}

fn main() -> ExitCode {
    let first = std::env::args().nth(1);
    if first.as_deref() == Some("--calibrate") {
        println!("{:.1}", calibrate());
        return ExitCode::SUCCESS;
    }
    let filter = Filter::new("work", env!("CARGO_PKG_VERSION"))
        .about("Run a strategy with the space count and NS nanoseconds of CPU a line on top");
    let work = |own: Own| Work::new(own.ns, own.steps_per_us.unwrap_or_else(calibrate));
    // The strategy is the first argument: it picks the strategy the command line is parsed for;
    // anything else (`--help`, a name unknown) is parsed for `batched`, and answered or refused.
    let strategy = first.and_then(|first| Strategy::from_str(&first, false).ok());
    match strategy.unwrap_or(Strategy::Batched) {
        Strategy::StdBaseline => filter.run_with_args_through::<StdBaseline, _, _>(work),
        Strategy::Baseline => filter.run_with_args_through::<Baseline, _, _>(work),
        Strategy::Streamer => filter.run_with_args_through::<Streamer, _, _>(work),
        Strategy::Pipeline => filter.run_with_args_through::<Pipeline, _, _>(work),
        Strategy::Batched => filter.run_with_args_through::<Batched, _, _>(work),
    }
}
