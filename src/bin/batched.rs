//! `batched`: OS threads; a reader cuts input into chunks at line ends, workers render them in
//! parallel, one writer emits them in input order.

use std::process::ExitCode;

use linewright::{Batched, Filter, SpaceCount};

fn main() -> ExitCode {
    Filter::space_count(
        env!("CARGO_BIN_NAME"),
        "Prefix every line with [spaces: N]: chunks of lines rendered in parallel on OS threads",
    )
    .run_with::<Batched, _>(SpaceCount)
}
