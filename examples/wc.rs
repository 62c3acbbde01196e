//! A tally of lines, words and bytes: `wc [FILE]...` prints what `cat FILE... | wc` prints in the
//! C locale: newlines, words (`words_in`, as GNU `wc` counts them) and bytes. Each chunk is
//! counted whole, so that a last line without its `\n` adds no newline.

use linewright::{Error, Filter, Tally, Tallying, lines_in, words_in};
use std::process::ExitCode;

/// The toolkit's options alone.
struct Wc;

impl Tallying for Wc {
    type Tally = [u64; 3]; // newlines, words, bytes

    /// A line as a chunk of one: a line-at-a-time strategy does not tell a last line without
    /// its `\n`, which `batched`, the filter's, does.
    fn render_line(&self, counts: &mut [u64; 3], out: &mut Vec<u8>, line: &[u8]) {
        let _ = self.render_chunk(counts, out, &[line, b"\n"].concat()); // cannot fail
    }

    fn render_chunk(
        &self,
        counts: &mut [u64; 3],
        _: &mut Vec<u8>,
        chunk: &[u8],
    ) -> Result<u64, Error> {
        counts.merge([
            memchr::memchr_iter(b'\n', chunk).count() as u64,
            words_in(chunk),
            chunk.len() as u64,
        ]);
        Ok(lines_in(chunk))
    }

    fn end(&self, [lines, words, bytes]: [u64; 3], out: &mut Vec<u8>) -> ExitCode {
        out.extend_from_slice(format!("{lines:7} {words:7} {bytes:7}\n").as_bytes());
        ExitCode::SUCCESS
    }
}

fn main() -> ExitCode {
    Filter::new("wc", env!("CARGO_PKG_VERSION"))
        .about(
            "Print the newlines, words and bytes of the FILEs together, as cat FILE... | wc does",
        )
        .run(Wc)
}
