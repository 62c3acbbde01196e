//! `baseline`: tokio, one task doing the whole loop, a line at a time.

use std::process::ExitCode;

use linewright::{Baseline, Filter, SpaceCount};

fn main() -> ExitCode {
    Filter::space_count(
        env!("CARGO_BIN_NAME"),
        "Prefix every line with [spaces: N]: one tokio task, one loop, a line at a time",
    )
    .run_with::<Baseline, _>(SpaceCount)
}
