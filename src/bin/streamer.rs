//! `streamer`: tokio and futures; input as a `Stream` of lines, rendered and forwarded into
//! stdout as a `Sink`.

use std::process::ExitCode;

use linewright::{Filter, SpaceCount, Streamer};

fn main() -> ExitCode {
    Filter::space_count(
        env!("CARGO_BIN_NAME"),
        "Prefix every line with [spaces: N]: a stream of lines, rendered and forwarded into stdout",
    )
    .run_with::<Streamer, _>(SpaceCount)
}
