//! A line filter of one's own: each line's ASCII letters upper-cased, with everything the toolkit's
//! binaries have (FILEs, `-z`, `--stats`, `--help`, `--generate man`, `--threads`, ...):
//! `printf 'a b\nc\n' | cargo run --example upper`.

use linewright::{Filter, Transform};
use std::process::ExitCode;

/// A line with its ASCII letters upper-cased.
struct Upper;

impl Transform for Upper {
    fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
        out.extend(line.iter().map(u8::to_ascii_uppercase));
        out.push(b'\n');
    }
}

fn main() -> ExitCode {
    Filter::new("upper", env!("CARGO_PKG_VERSION"))
        .about("Upper-case every line's ASCII letters")
        .description(
            "Each line comes out with its ASCII letters upper-cased, other bytes unchanged.",
        )
        .run(Upper)
}
