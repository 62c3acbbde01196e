//! A fixed-string grep, a filter with an argument of its own: `grep PATTERN [FILE]...` prints the
//! lines that hold PATTERN, as `grep -F PATTERN` does, and exits 1 when none did, as grep does:
//! `cargo run --release --example grep -- fn src/*.rs`. A line that does not match is dropped by
//! writing nothing. A chunk of lines is searched whole (`lines_found`, with memchr's memmem), so
//! that where nothing matches it skips through the input as grep does.

use linewright::{Error, Filter, Transform, lines_found, lines_in};
use memchr::memmem::Finder;
use std::{process::ExitCode, sync::atomic::AtomicBool, sync::atomic::Ordering::Relaxed};

/// `grep`'s own argument (before the FILEs), and whether any line held it.
#[derive(clap::Args)]
struct Grep {
    /// The fixed string a line must hold to be printed (no newline in it)
    pattern: String,
    #[arg(skip)]
    matched: AtomicBool,
}

impl Transform for Grep {
    fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
        let _ = self.render_chunk(out, line); // a chunk of one line, which cannot fail
    }

    fn render_chunk(&self, out: &mut Vec<u8>, chunk: &[u8]) -> Result<u64, Error> {
        let (finder, written) = (Finder::new(&self.pattern), out.len());
        for line in lines_found(chunk, |rest| finder.find(rest)) {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
        self.matched.fetch_or(out.len() > written, Relaxed);
        Ok(lines_in(chunk))
    }

    fn exit_status(&self) -> ExitCode {
        ExitCode::from(u8::from(!self.matched.load(Relaxed))) // 1 where no line matched
    }
}

fn main() -> ExitCode {
    Filter::new("grep", env!("CARGO_PKG_VERSION"))
        .about("Print the lines that hold a fixed string, as grep -F does; exit 1 where none did")
        .run_with_args(|grep: Grep| grep)
}
