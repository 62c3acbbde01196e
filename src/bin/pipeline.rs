//! `pipeline`: tokio's multi-thread runtime; reader, renderer and writer tasks joined by bounded
//! channels, `--batch` lines a message.

use std::process::ExitCode;

use linewright::{Filter, Pipeline, SpaceCount};

fn main() -> ExitCode {
    Filter::space_count(
        env!("CARGO_BIN_NAME"),
        "Prefix every line with [spaces: N]: reader, renderer and writer tasks joined by channels",
    )
    .run_with::<Pipeline, _>(SpaceCount)
}
