//! `std-baseline`: std only. One thread, one loop, a line at a time, synchronous I/O.

use std::process::ExitCode;

use linewright::{Filter, SpaceCount, StdBaseline};

fn main() -> ExitCode {
    Filter::space_count(
        env!("CARGO_BIN_NAME"),
        "Prefix every line with [spaces: N]: one thread, one loop, a line at a time",
    )
    .run_with::<StdBaseline, _>(SpaceCount)
}
