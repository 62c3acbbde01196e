//! `baseline`: tokio, one task doing the whole loop, a line at a time.

use std::process::ExitCode;

use linewright::internal::process::space_count;
use linewright::{Baseline, SpaceCount};

fn main() -> ExitCode {
    space_count(
        env!("CARGO_BIN_NAME"),
        "Prefix every line with [spaces: N]: one tokio task, one loop, a line at a time",
    )
    .run_with::<Baseline, _>(SpaceCount)
}
