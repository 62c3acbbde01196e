//! A fixed-string grep, a filter with an argument of its own: `grep PATTERN [FILE]...` prints the
//! lines that hold PATTERN, as `grep -F PATTERN` does, and exits 1 when none did, as grep does:
//! `cargo run --release --example grep -- fn src/*.rs`. A line that does not match is dropped by
//! writing nothing. A chunk of lines is searched whole (`lines_found`, with memchr's memmem), so
//! that where nothing matches it skips through the input as grep does. How many lines matched is
//! its tally, kept for each chunk and merged, which decides the exit status at the end.

use linewright::{Error, Filter, Tallying, lines_found, lines_in};
use std::process::ExitCode;

/// `grep`'s own argument, before the FILEs.
#[derive(clap::Args)]
struct Grep {
    /// The fixed string a line must hold to be printed (no newline in it)
    pattern: String,
}

impl Tallying for Grep {
    type Tally = u64; // lines that held the pattern

    fn render_line(&self, matched: &mut u64, out: &mut Vec<u8>, line: &[u8]) {
        let _ = self.render_chunk(matched, out, line); // a chunk of one line, which cannot fail
    }

    fn render_chunk(
        &self,
        matched: &mut u64,
        out: &mut Vec<u8>,
        chunk: &[u8],
    ) -> Result<u64, Error> {
        let finder = memchr::memmem::Finder::new(&self.pattern);
        for line in lines_found(chunk, |rest| finder.find(rest)) {
            out.extend_from_slice(line);
            out.push(b'\n');
            *matched += 1;
        }
        Ok(lines_in(chunk))
    }

    fn end(&self, matched: u64, _: &mut Vec<u8>) -> ExitCode {
        ExitCode::from(u8::from(matched == 0)) // 1 where no line matched
    }
}

fn main() -> ExitCode {
    Filter::new("grep", env!("CARGO_PKG_VERSION"))
        .about("Print the lines that hold a fixed string, as grep -F does; exit 1 where none did")
        .run_with_args(|grep: Grep| grep)
}
