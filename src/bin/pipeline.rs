//! `pipeline`: tokio's multi-thread runtime; reader, renderer and writer tasks joined by bounded
//! channels, `--batch` lines a message.

use std::process::ExitCode;

use linewright::internal::process::space_count;
use linewright::{Pipeline, SpaceCount};

fn main() -> ExitCode {
    space_count(
        env!("CARGO_BIN_NAME"),
        "Prefix every line with [spaces: N]: reader, renderer and writer tasks joined by channels",
    )
    .run_with::<Pipeline, _>(SpaceCount)
}
