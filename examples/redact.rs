//! A redactor, a filter with an option and an argument of its own: `redact --replace WITH
//! PATTERN [FILE]...` writes each line with every PATTERN in it (a fixed string) replaced by
//! WITH, as `sed -E 's/PATTERN/WITH/g'` does where PATTERN and WITH hold no character special to
//! sed: `cargo run --example redact -- --replace 'x.x.x.x' 10.0.0.1 access.log`.

use clap::builder::NonEmptyStringValueParser;
use linewright::{Filter, Transform};
use memchr::memmem::Finder;
use std::process::ExitCode;

/// `redact`'s own option and argument, beside the toolkit's options and before the FILEs.
#[derive(clap::Args)]
struct Args {
    /// What each PATTERN becomes
    #[arg(long, value_name = "WITH", default_value = "[redacted]")]
    replace: String,
    /// The fixed string to replace wherever it is in a line
    #[arg(value_parser = NonEmptyStringValueParser::new())]
    pattern: String,
}

/// Every occurrence of a fixed string replaced.
struct Redact {
    pattern: Finder<'static>,
    with: Vec<u8>,
}

impl Transform for Redact {
    fn most_added(&self) -> usize {
        // Room made ahead, not a limit: a line with many a PATTERN grows past it as it is written.
        self.with.len() + 1
    }

    fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
        let mut kept = 0;
        for at in self.pattern.find_iter(line) {
            out.extend_from_slice(&line[kept..at]);
            out.extend_from_slice(&self.with);
            kept = at + self.pattern.needle().len();
        }
        out.extend_from_slice(&line[kept..]);
        out.push(b'\n');
    }
}

fn main() -> ExitCode {
    Filter::new("redact", env!("CARGO_PKG_VERSION"))
        .about("Replace a fixed string wherever it is in a line")
        .description("Each line comes out with every PATTERN in it replaced by WITH.")
        .run_with_args(|args: Args| Redact {
            pattern: Finder::new(args.pattern.as_bytes()).into_owned(),
            with: args.replace.into_bytes(),
        })
}
