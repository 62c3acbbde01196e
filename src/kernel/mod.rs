//! The kernel: how many ASCII spaces (0x20) a line holds, the header that says so, and the
//! rendering of a line or of a whole chunk of lines into an output buffer.
//!
//! Only 0 to 6 are told apart; everything from 7 up shares the header `>6`, so counting may stop
//! there. Tabs, `\r` and other white space are not spaces.

use bytes::buf::Chain;
use bytes::{Buf, Bytes};
use memchr::memchr_iter;

/// The count at which headers stop telling counts apart.
pub const SPACES_CAP: usize = 7;

/// The header for each capped count: `HEADERS[n]` is what precedes a line with `n` spaces.
pub const HEADERS: [&[u8]; SPACES_CAP + 1] = [
    b"[spaces: 0]",
    b"[spaces: 1]",
    b"[spaces: 2]",
    b"[spaces: 3]",
    b"[spaces: 4]",
    b"[spaces: 5]",
    b"[spaces: 6]",
    b"[spaces: >6]",
];

/// The number of 0x20 bytes in `line`, capped at [`SPACES_CAP`].
///
/// Counts a block of bytes at a time into a byte-sized counter, which the compiler turns into
/// vector compares and adds (a `usize` counter per byte defeats that), and stops after the block
/// in which the count reaches the cap: log lines reach seven spaces well before their end.
#[inline]
pub fn count_spaces(line: &[u8]) -> usize {
    const BLOCK: usize = 32;
    let count_in = |bytes: &[u8]| {
        bytes
            .iter()
            .fold(0u8, |n, &byte| n + u8::from(byte == b' '))
    };
    let mut count = 0;
    let mut blocks = line.chunks_exact(BLOCK);
    for block in &mut blocks {
        count += usize::from(count_in(block));
        if count >= SPACES_CAP {
            return SPACES_CAP;
        }
    }
    (count + usize::from(count_in(blocks.remainder()))).min(SPACES_CAP)
}

/// The header for `line`.
#[inline]
pub fn header(line: &[u8]) -> &'static [u8] {
    HEADERS[count_spaces(line)]
}

/// Appends the rendering of one line (given without its `\n`) to `out`.
#[inline]
pub fn render_line(out: &mut Vec<u8>, line: &[u8]) {
    out.extend_from_slice(header(line));
    out.extend_from_slice(line);
    out.push(b'\n');
}

/// The rendering of one shared line, the bytes [`render_line`] would append, as a chain of three
/// slices: a stream passes the line on to its sink without copying it first.
pub fn render_shared(line: Bytes) -> Chain<Chain<&'static [u8], Bytes>, &'static [u8]> {
    header(&line).chain(line).chain(&b"\n"[..])
}

/// Appends the rendering of every line in `chunk` to `out` and returns how many lines that was.
///
/// `chunk` holds whole lines, each ending in `\n`, except that the last may lack it (the input's
/// final line); that one gets its `\n` added. An empty chunk renders to nothing.
pub fn render_chunk(out: &mut Vec<u8>, chunk: &[u8]) -> u64 {
    // Headers add at most 12 bytes a line; reserving for the worst case up front would double
    // the buffer for long-line input, so reserve the common case and let `Vec` grow if needed.
    out.reserve(chunk.len() + chunk.len() / 8 + 16);
    let mut start = 0;
    let mut lines = 0;
    for end in memchr_iter(b'\n', chunk) {
        render_line(out, &chunk[start..end]);
        start = end + 1;
        lines += 1;
    }
    if start < chunk.len() {
        render_line(out, &chunk[start..]);
        lines += 1;
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_the_space_byte() {
        assert_eq!(count_spaces(b""), 0);
        assert_eq!(count_spaces(b"\t\r\x0b\x0c\xa0"), 0);
        assert_eq!(count_spaces(b"a b"), 1);
        assert_eq!(count_spaces(b"      "), 6);
        assert_eq!(count_spaces(b"       "), 7);
        assert_eq!(count_spaces(&[b' '; 1000]), 7);
    }

    /// Spaces placed at every position of lines around the block size, against a plain count.
    #[test]
    fn counts_across_block_edges() {
        for length in 0..100 {
            for spaces in 0..=9 {
                for first in 0..length {
                    let mut line = vec![b'x'; length];
                    for position in (first..length).step_by(3).take(spaces) {
                        line[position] = b' ';
                    }
                    let plain = line
                        .iter()
                        .filter(|&&byte| byte == b' ')
                        .count()
                        .min(SPACES_CAP);
                    assert_eq!(count_spaces(&line), plain, "{line:?}");
                }
            }
        }
    }

    #[test]
    fn headers_match_counts() {
        for (n, header) in HEADERS.iter().enumerate().take(SPACES_CAP) {
            assert_eq!(*header, format!("[spaces: {n}]").as_bytes());
        }
        assert_eq!(header(b"a b c d e f g h"), b"[spaces: >6]");
    }

    fn rendered(chunk: &[u8]) -> (Vec<u8>, u64) {
        let mut out = Vec::new();
        let lines = render_chunk(&mut out, chunk);
        (out, lines)
    }

    #[test]
    fn render_shared_is_render_line() {
        for line in [
            &b""[..],
            b"a b",
            b"a b\r",
            b"       x",
            b"\t\tx",
            b"\xff \xfe",
        ] {
            let mut expected = Vec::new();
            render_line(&mut expected, line);
            let mut chained = render_shared(Bytes::copy_from_slice(line));
            assert_eq!(chained.copy_to_bytes(chained.remaining()), expected);
        }
    }

    #[test]
    fn chunk_edges() {
        assert_eq!(rendered(b""), (b"".to_vec(), 0));
        assert_eq!(rendered(b"\n"), (b"[spaces: 0]\n".to_vec(), 1));
        assert_eq!(rendered(b"a b"), (b"[spaces: 1]a b\n".to_vec(), 1));
        assert_eq!(
            rendered(b"a b\n\nc"),
            (b"[spaces: 1]a b\n[spaces: 0]\n[spaces: 0]c\n".to_vec(), 3)
        );
    }
}
