//! Line framing over one reusable buffer.
//!
//! Input arrives in reads of any size; lines are handed out as slices of the buffer, so no line is
//! copied or allocated. A line that does not end within the bytes read so far stays in the buffer
//! and is completed by the next read; one longer than the whole buffer grows it.

use memchr::memchr;

/// Complete lines out of a buffer that is refilled in place.
///
/// The buffer is laid out as
///
/// ```text
/// 0          start      searched        end          buf.len()
/// | consumed | unconsumed, no `\n` | unsearched | spare       |
/// ```
#[derive(Debug)]
pub struct LineBuffer {
    /// The storage, all of it initialised so that reads can go straight into it. Its length only
    /// grows, and only when one line fills all of it.
    buf: Vec<u8>,
    /// The first byte not yet handed out as part of a line. `start <= searched`.
    start: usize,
    /// Bytes in `start..searched` are known to hold no `\n`, so a long line is scanned once
    /// however many reads it takes to arrive. `searched <= end`.
    searched: usize,
    /// One past the last byte read in; `end..` is spare room for the next read. `end <= buf.len()`.
    end: usize,
}

impl LineBuffer {
    /// A buffer of `capacity` bytes (at least 1), growing only for lines longer than that.
    pub fn new(capacity: usize) -> Self {
        LineBuffer {
            buf: vec![0; capacity.max(1)],
            start: 0,
            searched: 0,
            end: 0,
        }
    }

    /// Room for the next read: never empty. Moves the unconsumed bytes to the front, and doubles
    /// the buffer when they fill it (a line longer than the buffer).
    pub fn spare(&mut self) -> &mut [u8] {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.searched -= self.start;
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        &mut self.buf[self.end..]
    }

    /// Records that a read put `n` bytes at the front of [`spare`](Self::spare).
    pub fn filled(&mut self, n: usize) {
        assert!(
            n <= self.buf.len() - self.end,
            "filled more than the spare room"
        );
        self.end += n;
    }

    /// The next complete line, without its `\n`, or `None` until more input is read.
    pub fn next_line(&mut self) -> Option<&[u8]> {
        match memchr(b'\n', &self.buf[self.searched..self.end]) {
            Some(offset) => {
                let line_end = self.searched + offset;
                let line = self.start..line_end;
                self.start = line_end + 1;
                self.searched = self.start;
                Some(&self.buf[line])
            }
            None => {
                self.searched = self.end;
                None
            }
        }
    }

    /// At the end of input: the final line if it had no `\n`, then `None`.
    pub fn take_rest(&mut self) -> Option<&[u8]> {
        if self.start == self.end {
            return None;
        }
        let rest = self.start..self.end;
        self.start = self.end;
        self.searched = self.end;
        Some(&self.buf[rest])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in reads of at most `read_size` bytes and collects what comes out.
    fn frame(input: &[u8], capacity: usize, read_size: usize) -> Vec<Vec<u8>> {
        let mut buffer = LineBuffer::new(capacity);
        let mut lines = Vec::new();
        for piece in input.chunks(read_size) {
            let mut piece = piece;
            while !piece.is_empty() {
                let spare = buffer.spare();
                let n = spare.len().min(piece.len());
                spare[..n].copy_from_slice(&piece[..n]);
                buffer.filled(n);
                piece = &piece[n..];
                while let Some(line) = buffer.next_line() {
                    lines.push(line.to_vec());
                }
            }
        }
        if let Some(rest) = buffer.take_rest() {
            lines.push(rest.to_vec());
        }
        assert_eq!(buffer.take_rest(), None);
        lines
    }

    fn owned(lines: &[&[u8]]) -> Vec<Vec<u8>> {
        lines.iter().map(|line| line.to_vec()).collect()
    }

    #[test]
    fn empty() {
        assert!(frame(b"", 1, 1).is_empty());
    }

    #[test]
    fn lone_newline() {
        assert_eq!(frame(b"\n", 1, 1), owned(&[b""]));
    }

    #[test]
    fn no_final_newline() {
        assert_eq!(frame(b"a\nbc", 8, 8), owned(&[b"a", b"bc"]));
    }

    #[test]
    fn capacity_one_grows_for_long_lines() {
        assert_eq!(
            frame(b"abc\n\nde\nf", 1, 3),
            owned(&[b"abc", b"", b"de", b"f"])
        );
    }

    #[test]
    fn every_capacity_and_read_size() {
        let input = b"one two\n\nthree\r\n  four  \nfive";
        let expected = owned(&[b"one two", b"", b"three\r", b"  four  ", b"five"]);
        for capacity in 1..=input.len() + 1 {
            for read_size in 1..=input.len() + 1 {
                assert_eq!(
                    frame(input, capacity, read_size),
                    expected,
                    "{capacity} {read_size}"
                );
            }
        }
    }
}
