//! `gen-text`: prose-like text of a chosen mean line length, the same bytes for the same seed.
//! The text's shape (blank, short and long lines, indentation, runs of spaces) is described in
//! `pipelines_tools::text`.

use std::io::{self, BufWriter, ErrorKind, Write};
use std::process::ExitCode;

use clap::Parser;
use pipelines_tools::text::{MIN_MEAN_LINE_LENGTH, TextGenerator};

/// Write seeded, reproducible text of a chosen mean line length to stdout.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// The mean line length in bytes, the newline included.
    #[arg(long, value_parser = clap::value_parser!(u64).range(MIN_MEAN_LINE_LENGTH..))]
    mean_line_length: u64,

    /// How many bytes to write: whole lines, the last one cut short to fit.
    #[arg(long)]
    bytes: u64,

    /// The seed: the same seed gives the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut generator = TextGenerator::new(args.mean_line_length, args.seed)
        .expect("clap keeps the mean line length in range");
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match generator
        .write(args.bytes, &mut out)
        .and_then(|()| out.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that has seen enough (`gen-text ... | head`) is not a failure.
        Err(error) if error.kind() == ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            // Nothing more can be done if stderr fails too.
            let _ = writeln!(io::stderr(), "gen-text: writing stdout: {error}");
            ExitCode::FAILURE
        }
    }
}
