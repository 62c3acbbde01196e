//! Line framing into shared [`Bytes`]: lines, or batches of lines, split off one growing
//! [`BytesMut`] and handed on by reference count, never copied.
//!
//! [`LineBuffer`](crate::frame::LineBuffer) lends each line only until the next read; these
//! outlive it, so a line can travel down a stream or a channel to another task. Once every line
//! split off a block of the buffer is dropped, the block is reused for later reads.

use bytes::{Bytes, BytesMut};
use memchr::memchr;

use crate::error::Error;
use crate::frame::{reserve, towards};

/// Complete lines, split off a buffer that is read into at its end.
///
/// ```text
/// 0                complete    searched        buf.len()
/// | counted lines  | no `\n`   | not searched  |
/// ```
#[derive(Debug)]
pub struct SharedLines {
    /// Input not yet handed on.
    buf: BytesMut,
    /// The most room [`spare`](Self::spare) makes for a read.
    read_size: usize,
    /// The room it makes now: growing towards `read_size` while reads fill it, so that memory,
    /// reserved or touched, follows the data (docs/CONTRACT.md §7).
    room: usize,
    /// One past the last `\n` counted into `lines`, or 0. `complete <= searched`.
    complete: usize,
    /// Bytes in `complete..searched` hold no `\n`, so a long line is scanned once however many
    /// reads it takes to arrive. `searched <= buf.len()`.
    searched: usize,
    /// Complete lines in `..complete`.
    lines: usize,
}

impl SharedLines {
    /// Empty, reading up to `read_size` bytes (at least 1) at a time.
    pub fn new(read_size: usize) -> Self {
        let read_size = read_size.max(1);
        SharedLines {
            buf: BytesMut::new(),
            read_size,
            room: 0,
            complete: 0,
            searched: 0,
            lines: 0,
        }
    }

    /// The buffer to read into, with room for a read at its end; fails if that room cannot be
    /// had (a line longer than the memory available).
    pub fn spare(&mut self) -> Result<&mut BytesMut, Error> {
        // `BytesMut` can only grow infallibly: first reuse its space if a read's room is there,
        // else move into storage grown fallibly here. The new storage holds at least twice what
        // is held, so a long line or a big batch gathering over many reads is moved O(1) times
        // a byte, not once a read (while lines split off it are alive, the buffer cannot grow
        // in place).
        // The last read took all the room it was given (or none was given yet): input is flowing.
        if self.buf.len() == self.buf.capacity() {
            self.room = towards(self.room, self.read_size);
        }
        if !self.buf.try_reclaim(self.room) {
            let held = self.buf.len();
            let mut grown = Vec::new();
            reserve(&mut grown, held.max(self.room).saturating_add(held))?;
            grown.extend_from_slice(&self.buf);
            self.buf = BytesMut::from(Bytes::from(grown));
        }
        Ok(&mut self.buf)
    }

    /// The next `lines` complete lines, each with its `\n`, or `None` until that many are in.
    pub fn next_batch(&mut self, lines: usize) -> Option<Bytes> {
        while self.lines < lines {
            match memchr(b'\n', &self.buf[self.searched..]) {
                Some(offset) => {
                    self.searched += offset + 1;
                    self.complete = self.searched;
                    self.lines += 1;
                }
                None => {
                    self.searched = self.buf.len();
                    return None;
                }
            }
        }
        self.take_complete()
    }

    /// The next complete line, without its `\n`. Not to be mixed with batches of more than one.
    pub fn next_line(&mut self) -> Option<Bytes> {
        let mut line = self.next_batch(1)?;
        line.truncate(line.len() - 1);
        Some(line)
    }

    /// The complete lines counted so far, fewer than a batch: for when no more input is waiting
    /// and a short batch must go rather than wait to fill. `None` if there are none.
    pub fn take_complete(&mut self) -> Option<Bytes> {
        if self.lines == 0 {
            return None;
        }
        let lines = self.buf.split_to(self.complete).freeze();
        self.searched -= self.complete;
        self.complete = 0;
        self.lines = 0;
        Some(lines)
    }

    /// At the end of input: everything left, whole lines then a final line without `\n`.
    pub fn take_rest(&mut self) -> Option<Bytes> {
        if self.buf.is_empty() {
            return None;
        }
        self.complete = 0;
        self.searched = 0;
        self.lines = 0;
        Some(self.buf.split().freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in reads of at most `read_size` bytes and collects the batches of `batch`
    /// lines; if `live`, takes the short batch after every read, as if no more were waiting.
    fn batches(input: &[u8], read_size: usize, batch: usize, live: bool) -> Vec<Vec<u8>> {
        let mut lines = SharedLines::new(read_size);
        let mut out = Vec::new();
        for piece in input.chunks(read_size) {
            lines.spare().unwrap().extend_from_slice(piece);
            while let Some(batch) = lines.next_batch(batch) {
                out.push(batch.to_vec());
            }
            if live && let Some(short) = lines.take_complete() {
                out.push(short.to_vec());
            }
        }
        if let Some(rest) = lines.take_rest() {
            out.push(rest.to_vec());
        }
        out
    }

    /// `head -c 1G /dev/zero | streamer`: a line far longer than a read is moved O(1) times a
    /// byte as it gathers, not once a read (docs/CONTRACT.md §1: lines of any length).
    #[test]
    fn a_long_line_is_moved_a_bounded_number_of_times() {
        let mut lines = SharedLines::new(64 << 10);
        let moved = crate::frame::tests::bytes_moved(|piece| {
            let held = lines.buf.len();
            let buf = lines.spare().unwrap();
            // A read fills the spare capacity, no more.
            let took = (buf.capacity() - buf.len()).min(piece.len());
            buf.extend_from_slice(&piece[..took]);
            assert_eq!(lines.next_line(), None);
            (took, lines.buf.as_ptr(), held)
        });
        assert!(moved <= 64 << 20, "moved {moved} bytes");
    }

    /// `echo 'a b' | streamer --buffer-size 1G`: the room made for a read, reserved or touched,
    /// grows to the read size only as reads fill it (docs/CONTRACT.md §7).
    #[test]
    fn room_grows_to_the_read_size_only_as_reads_fill_it() {
        const KIB: usize = 1024;
        let mut lines = SharedLines::new(1 << 30);
        let buf = lines.spare().unwrap();
        assert_eq!(buf.capacity(), 64 * KIB);
        buf.extend_from_slice(b"a b\n");
        let buf = lines.spare().unwrap();
        assert_eq!(
            buf.capacity() - buf.len(),
            64 * KIB,
            "a short read: no more room"
        );
        let mut lines = SharedLines::new(256 * KIB);
        for expected in [64 * KIB, 128 * KIB, 256 * KIB, 256 * KIB] {
            let buf = lines.spare().unwrap();
            let room = buf.capacity() - buf.len();
            assert_eq!(room, expected);
            buf.extend_from_slice(&vec![b'\n'; room]);
            assert!(lines.take_rest().is_some());
        }
    }

    #[test]
    fn single_lines_lose_their_newline() {
        let mut lines = SharedLines::new(4);
        lines.spare().unwrap().extend_from_slice(b"a b\n\nc");
        assert_eq!(lines.next_line().as_deref(), Some(&b"a b"[..]));
        assert_eq!(lines.next_line().as_deref(), Some(&b""[..]));
        assert_eq!(lines.next_line(), None);
        assert_eq!(lines.take_rest().as_deref(), Some(&b"c"[..]));
        assert_eq!(lines.take_rest(), None);
    }

    #[test]
    fn batches_hold_whole_lines_and_lose_nothing() {
        let input = b"one two\n\nthree\r\n  four  \nfive";
        for read_size in 1..=input.len() + 1 {
            for batch in 1..=6 {
                for live in [false, true] {
                    let got = batches(input, read_size, batch, live);
                    assert_eq!(got.concat(), input, "{read_size} {batch} {live}");
                    let (last, whole) = got.split_last().expect("input is not empty");
                    assert!(last.ends_with(b"five"), "{read_size} {batch} {live}");
                    let last_count = last.iter().filter(|&&byte| byte == b'\n').count();
                    assert!(last_count < batch, "{read_size} {batch} {live}");
                    for lines in whole {
                        let count = lines.iter().filter(|&&byte| byte == b'\n').count();
                        assert!(lines.ends_with(b"\n"), "{read_size} {batch} {live}");
                        assert!(count == batch || (live && count < batch));
                    }
                }
            }
        }
    }

    #[test]
    fn full_batches_only_when_not_live() {
        assert_eq!(
            batches(b"a\nb\nc\n", 100, 2, false),
            vec![b"a\nb\n".to_vec(), b"c\n".to_vec()]
        );
        assert_eq!(
            batches(b"a\nb\nc\n", 100, 2, true),
            vec![b"a\nb\n".to_vec(), b"c\n".to_vec()]
        );
        assert_eq!(batches(b"", 1, 1, true), Vec::<Vec<u8>>::new());
    }
}
