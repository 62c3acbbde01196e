//! Rendering: a header, the line's bytes, then `\n`, appended to an output buffer.

use bytes::buf::Chain;
use bytes::{Buf, Bytes};
use memchr::memchr_iter;

use crate::spaces::header;

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
