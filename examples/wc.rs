//! A tally of lines, words and bytes: `wc [FILE]...` prints what `cat FILE... | wc` prints in the
//! C locale: newlines, words and bytes. A word, as GNU `wc` counts them, begins at a printable
//! byte and ends at a space, `\t`, `\n`, `\v`, `\f` or `\r`; other bytes neither begin nor end
//! one. Each chunk is counted whole, so that a last line without its `\n` adds no newline.

use linewright::{Error, Filter, Tally, Tallying, lines_in};
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
        let printable = |byte: u8| byte.wrapping_sub(b'!') < 94; // b'!'..=b'~'
        let space = |byte: u8| byte == b' ' || byte.wrapping_sub(b'\t') < 5; // b'\t'..=b'\r'
        let neither = chunk.iter().fold(0, |any, &byte| {
            any | u8::from(!printable(byte) & !space(byte))
        });
        let words = if neither == 0 {
            // Each byte begins a word or ends one: a word begins at a printable byte after a
            // space, counted 255 bytes at a time into a byte, which the compiler vectorises.
            let (bytes, before) = (
                chunk.get(1..).unwrap_or_default(),
                chunk.get(..chunk.len().max(1) - 1),
            );
            let pairs = bytes
                .chunks(255)
                .zip(before.unwrap_or_default().chunks(255));
            let begun = pairs.map(|(bytes, before)| {
                let pairs = bytes.iter().zip(before);
                pairs.fold(0u8, |n, (&byte, &before)| {
                    n + u8::from(printable(byte) & !printable(before))
                })
            });
            begun.map(usize::from).sum::<usize>()
                + chunk
                    .first()
                    .map_or(0, |&byte| usize::from(printable(byte)))
        } else {
            let (mut words, mut in_word) = (0, false);
            for &byte in chunk {
                match byte {
                    _ if space(byte) => in_word = false,
                    _ if printable(byte) && !in_word => (words, in_word) = (words + 1, true),
                    _ => {} // neither begins nor ends a word
                }
            }
            words
        };
        counts.merge([
            memchr::memchr_iter(b'\n', chunk).count() as u64,
            words as u64,
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
