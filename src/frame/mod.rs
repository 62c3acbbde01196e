//! Line framing over reusable buffers: single lines ([`LineBuffer`]), chunks of whole lines
//! ([`Chunk`]), or lines and batches as shared `Bytes` ([`shared::SharedLines`]).
//!
//! Input arrives in reads of any size; lines are handed out as slices of the buffer, so no line is
//! copied or allocated. A line that does not end within the bytes read so far stays in the buffer
//! and is completed by the next read; one longer than the whole buffer grows it, through `grow`:
//! a line longer than the memory available is an error, never an abort.

pub mod shared;

use std::io;
use std::mem;

use memchr::{memchr, memrchr};

use crate::error::Error;

/// Makes room in `buf` for `additional` more bytes, or says the line does not fit in memory.
/// Capacity grows by doubling, as `Vec` does, so a long line is copied O(1) times a byte.
/// Called once a line: the check for room is inline, the growing out of line.
#[inline]
pub(crate) fn reserve(buf: &mut Vec<u8>, additional: usize) -> Result<(), Error> {
    if buf.capacity() - buf.len() >= additional {
        return Ok(());
    }
    grow_capacity(buf, additional)
}

#[cold]
#[inline(never)]
fn grow_capacity(buf: &mut Vec<u8>, additional: usize) -> Result<(), Error> {
    buf.try_reserve(additional)
        .map_err(|_| Error::line_too_long("buffering a line"))
}

/// The least a buffer grows by, so that a line far longer than a tiny buffer still arrives in
/// reads of a useful size.
const LEAST_GROWTH: usize = 64 * 1024;

/// The most room the first read is given. A buffer starts this small and doubles towards its
/// set size only while reads fill all the room they are given, so that a setting is a ceiling,
/// not a cost (docs/CONTRACT.md §7): four bytes of input touch this much, not `--buffer-size`,
/// and input that flows reaches the full size within a few reads.
const FIRST_ROOM: usize = 64 * 1024;

/// The length a buffer of `len` bytes grows to on its way to `size`: double, at least
/// [`FIRST_ROOM`], at most `size`.
fn towards(len: usize, size: usize) -> usize {
    len.saturating_mul(2).max(FIRST_ROOM).min(size)
}

/// Lengthens `buf` by `by` zeroed bytes, for a read to fill. Only those bytes are touched: the
/// doubled capacity behind them stays untouched, so a 1 GiB line costs 1 GiB of memory, not 2.
fn grow(buf: &mut Vec<u8>, by: usize) -> Result<(), Error> {
    reserve(buf, by)?;
    buf.resize(buf.len() + by, 0);
    Ok(())
}

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
    /// The storage, all of it initialised so that reads can go straight into it. Empty until the
    /// first read, so that making a buffer cannot fail; then its length only grows: towards
    /// `read_size` while reads fill it, past it only when one line fills all of it.
    buf: Vec<u8>,
    /// The first byte not yet handed out as part of a line. `start <= searched`.
    start: usize,
    /// Bytes in `start..searched` are known to hold no `\n`, so a long line is scanned once
    /// however many reads it takes to arrive. `searched <= end`.
    searched: usize,
    /// One past the last byte read in; `end..` is spare room for the next read. `end <= buf.len()`.
    end: usize,
    /// The most a read is given, once reads have filled the buffer up to it; past it, what the
    /// buffer grows by when one line fills it. At least 1.
    read_size: usize,
}

impl LineBuffer {
    /// A buffer of `capacity` bytes (at least 1), growing only for lines longer than that.
    pub fn new(capacity: usize) -> Self {
        let read_size = capacity.max(1);
        LineBuffer {
            buf: Vec::new(),
            start: 0,
            searched: 0,
            end: 0,
            read_size,
        }
    }

    /// Room for the next read: never empty. Moves the unconsumed bytes to the front, and grows
    /// the buffer when they fill it (a line longer than the buffer); fails if the memory for the
    /// buffer, or for such a line, cannot be had.
    pub fn spare(&mut self) -> Result<&mut [u8], Error> {
        // The last read took all the room it was given (or none was given yet): input is flowing.
        let filled = self.end == self.buf.len();
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.searched -= self.start;
            self.end -= self.start;
            self.start = 0;
        }
        let len = self.buf.len();
        if len < self.read_size && filled {
            grow(&mut self.buf, towards(len, self.read_size) - len)?;
        } else if self.end == len {
            grow(&mut self.buf, self.read_size.max(LEAST_GROWTH))?;
        }
        Ok(&mut self.buf[self.end..])
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

/// A chunk of input cut at a line end, for strategies that hand whole chunks to other threads.
///
/// Bytes are read in until the chunk holds its size; then [`take_lines`](Self::take_lines) hands
/// the whole lines on and keeps the partial line after them as the start of the next chunk. A
/// line longer than the size grows the chunk until its end arrives. Laid out as
///
/// ```text
/// 0             lines_end      end           buf.len()
/// | whole lines | partial line | spare       |
/// ```
#[derive(Debug)]
pub struct Chunk {
    /// The storage, all of it initialised so that reads can go straight into it. Empty until the
    /// first read, so that making a chunk cannot fail; grown towards `size` as reads fill it, past
    /// `size` only while one line does not fit. [`refill`](Self::refill) leaves it as long as what
    /// it read, unzeroed room behind.
    buf: Vec<u8>,
    /// One past the last `\n` in `..end`, or 0 if there is none. `lines_end <= end`.
    lines_end: usize,
    /// One past the last byte read in. `end <= buf.len()`.
    end: usize,
    /// How many bytes a chunk is filled to before its lines are handed on. At least 1.
    size: usize,
}

impl Chunk {
    /// An empty chunk to be filled to `size` bytes (at least 1).
    pub fn new(size: usize) -> Self {
        let size = size.max(1);
        Chunk {
            buf: Vec::new(),
            lines_end: 0,
            end: 0,
            size,
        }
    }

    /// Room for the next read: never empty. Up to the chunk's size; past it (no line has ended
    /// yet), room to grow; fails if the memory for the chunk, or for such a line, cannot be had.
    pub fn spare(&mut self) -> Result<&mut [u8], Error> {
        let len = self.buf.len();
        if self.end < self.size {
            // Reads have filled all the room so far: the chunk grows towards its size.
            if self.end == len {
                grow(&mut self.buf, towards(len, self.size) - len)?;
            }
            let room = self.size.min(self.buf.len());
            return Ok(&mut self.buf[self.end..room]);
        }
        if self.end == self.buf.len() {
            grow(&mut self.buf, self.size.max(LEAST_GROWTH))?;
        }
        Ok(&mut self.buf[self.end..])
    }

    /// Records that a read put `n` bytes at the front of [`spare`](Self::spare).
    pub fn filled(&mut self, n: usize) {
        assert!(
            n <= self.buf.len() - self.end,
            "filled more than the spare room"
        );
        // Only the new bytes are searched, so a long line is scanned once however many reads it
        // takes to arrive.
        if let Some(newline) = memrchr(b'\n', &self.buf[self.end..self.end + n]) {
            self.lines_end = self.end + newline + 1;
        }
        self.end += n;
    }

    /// At the end of input: the partial line is the input's final line, whole though it lacks a
    /// `\n`, so [`take_lines`](Self::take_lines) hands it on too.
    pub fn finish(&mut self) {
        self.lines_end = self.end;
    }

    /// Whether the chunk has reached its size: time to hand its lines on.
    pub fn is_full(&self) -> bool {
        self.end >= self.size
    }

    /// Whether what it holds ends at a line end: no partial line is held.
    pub fn ends_at_line_end(&self) -> bool {
        self.lines_end == self.end
    }

    /// Whether it holds at least one whole line.
    pub fn has_lines(&self) -> bool {
        self.lines_end > 0
    }

    /// The bytes held: whole lines, each ending in `\n`, then possibly a partial line. After
    /// [`finish`](Self::finish), that is the input's final line.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.end]
    }

    /// Takes `storage`, whose first `len` bytes were read elsewhere, as the chunk's own, without
    /// copying them, and returns the chunk's storage, which held nothing: for bytes already in a
    /// buffer of their own (a decoder's), as [`filled`](Self::filled) would have found them.
    pub fn adopt(&mut self, storage: Vec<u8>, len: usize) -> Vec<u8> {
        assert!(self.end == 0, "a chunk that holds bytes adopts others");
        assert!(
            len <= storage.len(),
            "more bytes adopted than the storage holds"
        );
        let held = mem::replace(&mut self.buf, storage);
        self.filled(len);
        held
    }

    /// Replaces what the chunk holds with what `read` appends to its emptied storage, in which room
    /// for `len` bytes is reserved but not zeroed: all of it then whole lines (the last may lack
    /// its `\n`), for a range of a file read at an offset, which may come back short where the file
    /// shrank. Fails if the room cannot be had; `read`'s own failure is returned inside, to be told
    /// apart, and leaves the chunk empty.
    pub fn refill(
        &mut self,
        len: usize,
        read: impl FnOnce(&mut Vec<u8>) -> io::Result<usize>,
    ) -> Result<io::Result<()>, Error> {
        self.buf.clear();
        reserve(&mut self.buf, len)?;
        let read = read(&mut self.buf);
        if read.is_err() {
            self.buf.clear();
        }
        // The storage is as long as what was read: `spare` lengthens it again if the chunk is
        // read into as a stream.
        (self.end, self.lines_end) = (self.buf.len(), self.buf.len());
        Ok(read.map(|_| ()))
    }

    /// Moves the whole lines into `into`, dropping the bytes it held, and keeps the partial line
    /// after them here, in `into`'s old storage: the two buffers trade places, so only the
    /// partial line is copied. Fails if `into`'s storage cannot grow to hold the partial line.
    pub fn take_lines(&mut self, into: &mut Chunk) -> Result<(), Error> {
        mem::swap(&mut self.buf, &mut into.buf);
        into.end = self.lines_end;
        into.lines_end = self.lines_end;
        let partial = self.lines_end..self.end;
        // Only the partial line's room: [`spare`](Self::spare) grows the rest as data comes.
        if self.buf.len() < partial.len() {
            let by = partial.len() - self.buf.len();
            grow(&mut self.buf, by)?;
        }
        self.buf[..partial.len()].copy_from_slice(&into.buf[partial.clone()]);
        self.end = partial.len();
        self.lines_end = 0;
        Ok(())
    }

    /// Moves the whole lines up to the first `\n` at or past byte `at` into `into`, dropping the
    /// bytes it held, and keeps the rest here: whole lines handed on in parts. Moves nothing and
    /// returns false where those would be all the whole lines held, for
    /// [`take_lines`](Self::take_lines) to hand on. The lines moved are copied, and the rest moved
    /// to the front: this is for a chunk's last lines, not for every chunk. Fails if `into`'s
    /// storage cannot grow to hold them.
    pub fn take_lines_past(&mut self, at: usize, into: &mut Chunk) -> Result<bool, Error> {
        let whole = &self.buf[..self.lines_end];
        let Some(newline) = whole.get(at..).and_then(|after| memchr(b'\n', after)) else {
            return Ok(false);
        };
        let end = at + newline + 1;
        if end == self.lines_end {
            return Ok(false);
        }
        into.buf.clear();
        reserve(&mut into.buf, end)?;
        into.buf.extend_from_slice(&whole[..end]);
        (into.end, into.lines_end) = (end, end);
        self.buf.copy_within(end..self.end, 0);
        self.end -= end;
        self.lines_end -= end;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` to `buffer` in reads of at most `read_size` bytes, each put into the spare
    /// room as a read would, and calls `after_read` after each.
    fn feed<B>(
        buffer: &mut B,
        input: &[u8],
        read_size: usize,
        spare: fn(&mut B) -> Result<&mut [u8], Error>,
        filled: fn(&mut B, usize),
        mut after_read: impl FnMut(&mut B),
    ) {
        for mut piece in input.chunks(read_size) {
            while !piece.is_empty() {
                let room = spare(buffer).unwrap();
                let n = room.len().min(piece.len());
                room[..n].copy_from_slice(&piece[..n]);
                filled(buffer, n);
                piece = &piece[n..];
                after_read(buffer);
            }
        }
    }

    /// Feeds `input` in reads of at most `read_size` bytes and collects what comes out.
    fn frame(input: &[u8], capacity: usize, read_size: usize) -> Vec<Vec<u8>> {
        let mut buffer = LineBuffer::new(capacity);
        let mut lines = Vec::new();
        let (spare, filled) = (LineBuffer::spare, LineBuffer::filled);
        feed(&mut buffer, input, read_size, spare, filled, |buffer| {
            while let Some(line) = buffer.next_line() {
                lines.push(line.to_vec());
            }
        });
        if let Some(rest) = buffer.take_rest() {
            lines.push(rest.to_vec());
        }
        assert_eq!(buffer.take_rest(), None);
        lines
    }

    fn owned(lines: &[&[u8]]) -> Vec<Vec<u8>> {
        lines.iter().map(|line| line.to_vec()).collect()
    }

    /// One line of this many bytes, no `\n`, arriving [`READ`] bytes at a time...
    const LONG: usize = 64 << 20;
    /// ...as reads from a pipe do.
    const READ: usize = 64 << 10;

    /// Feeds a line of [`LONG`] bytes in pieces of [`READ`] through `read`, which puts the front
    /// of a piece into a framer's spare room as a read would and says how much it took, where the
    /// framer's bytes now lie, and how many it held before. Returns the bytes moved: what was held
    /// whenever it came to lie elsewhere. Stops once that passes twice the line, so that a framer
    /// that moves its bytes once a read fails in a moment rather than after gigabytes of copying.
    pub(super) fn bytes_moved(mut read: impl FnMut(&[u8]) -> (usize, *const u8, usize)) -> usize {
        let piece = vec![b'x'; READ];
        let (mut moved, mut lying) = (0, std::ptr::null());
        for _ in 0..LONG / READ {
            let mut rest = &piece[..];
            while !rest.is_empty() && moved <= 2 * LONG {
                let (took, now, held) = read(rest);
                if now != lying {
                    (moved, lying) = (moved + held, now);
                }
                rest = &rest[took..];
            }
        }
        moved
    }

    /// `head -c 1G /dev/zero | BIN`: a line far longer than the buffer is moved O(1) times a byte
    /// as it grows, not once a read, so that its cost is linear (docs/CONTRACT.md §1: lines of
    /// any length).
    #[test]
    fn a_long_line_is_moved_a_bounded_number_of_times() {
        let mut buffer = LineBuffer::new(READ);
        let moved = bytes_moved(|piece| {
            let held = buffer.end - buffer.start;
            let room = buffer.spare().unwrap();
            let took = room.len().min(piece.len());
            room[..took].copy_from_slice(&piece[..took]);
            buffer.filled(took);
            assert_eq!(buffer.next_line(), None);
            (took, buffer.buf.as_ptr(), held)
        });
        assert!(moved <= LONG, "LineBuffer moved {moved} bytes");
        let mut chunk = Chunk::new(READ);
        let moved = bytes_moved(|piece| {
            let held = chunk.end;
            let room = chunk.spare().unwrap();
            let took = room.len().min(piece.len());
            room[..took].copy_from_slice(&piece[..took]);
            chunk.filled(took);
            assert!(!chunk.has_lines());
            (took, chunk.buf.as_ptr(), held)
        });
        assert!(moved <= LONG, "Chunk moved {moved} bytes");
    }

    /// `echo 'a b' | BIN --buffer-size 1G`: a buffer is given only as much room as reads have
    /// shown to be coming, and grows to its size as they fill it (docs/CONTRACT.md §7).
    #[test]
    fn buffers_grow_to_their_size_only_as_reads_fill_them() {
        const GIB: usize = 1 << 30;
        let mut buffer = LineBuffer::new(GIB);
        assert_eq!(buffer.spare().unwrap().len(), FIRST_ROOM);
        buffer.filled(4);
        assert!(
            buffer.spare().unwrap().len() < FIRST_ROOM,
            "a short read: no growth"
        );
        let mut chunk = Chunk::new(GIB);
        assert_eq!(chunk.spare().unwrap().len(), FIRST_ROOM);
        chunk.filled(4);
        assert!(chunk.spare().unwrap().len() < FIRST_ROOM);
        // Reads that fill the room double it, up to the size and no further.
        let mut buffer = LineBuffer::new(3 * FIRST_ROOM);
        let mut chunk = Chunk::new(3 * FIRST_ROOM);
        for expected in [FIRST_ROOM, 2 * FIRST_ROOM, 3 * FIRST_ROOM, 3 * FIRST_ROOM] {
            let room = buffer.spare().unwrap();
            room.fill(b'\n');
            let took = room.len();
            buffer.filled(took);
            assert_eq!(buffer.buf.len(), expected);
            while buffer.next_line().is_some() {}
        }
        for expected in [FIRST_ROOM, 2 * FIRST_ROOM, 3 * FIRST_ROOM] {
            let room = chunk.spare().unwrap();
            room.fill(b'\n');
            let took = room.len();
            chunk.filled(took);
            assert_eq!(chunk.buf.len(), expected);
        }
        assert!(chunk.is_full());
        // Handed on, the lines leave no room behind that the data did not need.
        let mut into = Chunk::new(3 * FIRST_ROOM);
        chunk.take_lines(&mut into).unwrap();
        assert_eq!(chunk.buf.len(), 0);
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

    /// Feeds `input` to a chunk of `size` in reads of at most `read_size` and hands its lines on
    /// whenever it is full, or, if `live`, after every read (as if nothing more were waiting), as
    /// `batched`'s reader does. Returns the chunks handed on, the final one included.
    fn chunks(input: &[u8], size: usize, read_size: usize, live: bool) -> Vec<Vec<u8>> {
        let mut chunk = Chunk::new(size);
        let mut handed = Chunk::new(size);
        let mut chunks = Vec::new();
        feed(
            &mut chunk,
            input,
            read_size,
            Chunk::spare,
            Chunk::filled,
            |chunk| {
                if chunk.has_lines() && (chunk.is_full() || live) {
                    chunk.take_lines(&mut handed).unwrap();
                    chunks.push(handed.bytes().to_vec());
                }
            },
        );
        chunk.finish();
        if chunk.has_lines() {
            chunk.take_lines(&mut handed).unwrap();
            chunks.push(handed.bytes().to_vec());
        }
        assert!(chunk.bytes().is_empty(), "nothing left behind");
        chunks
    }

    #[test]
    fn chunk_edges() {
        assert!(chunks(b"", 1, 1, false).is_empty());
        assert_eq!(chunks(b"\n", 1, 1, false), owned(&[b"\n"]));
        assert_eq!(chunks(b"a\nbc", 8, 8, false), owned(&[b"a\nbc"]));
        assert_eq!(chunks(b"a\nbc", 8, 8, true), owned(&[b"a\n", b"bc"]));
    }

    /// Whole lines handed on in parts: each part up to the line end at or past the byte asked,
    /// the partial line kept, nothing moved where the part would be all the whole lines.
    #[test]
    fn whole_lines_are_taken_in_parts_at_line_ends() {
        let mut chunk = Chunk::new(64);
        let text = b"a\nbb\nccc\ndd";
        chunk.spare().unwrap()[..text.len()].copy_from_slice(text);
        chunk.filled(text.len());
        let mut into = Chunk::new(2);
        into.spare().unwrap()[0] = b'x';
        into.filled(1);
        assert!(chunk.take_lines_past(0, &mut into).unwrap());
        assert_eq!(
            (into.bytes(), chunk.bytes()),
            (&b"a\n"[..], &b"bb\nccc\ndd"[..])
        );
        for at in [3, 6, 7, 100] {
            assert!(!chunk.take_lines_past(at, &mut into).unwrap(), "at {at}");
            assert_eq!(chunk.bytes(), b"bb\nccc\ndd");
        }
        assert!(chunk.take_lines_past(2, &mut into).unwrap());
        assert_eq!(
            (into.bytes(), chunk.bytes()),
            (&b"bb\n"[..], &b"ccc\ndd"[..])
        );
        chunk.take_lines(&mut into).unwrap();
        assert_eq!((into.bytes(), chunk.bytes()), (&b"ccc\n"[..], &b"dd"[..]));
        chunk.finish();
        assert!(!chunk.take_lines_past(0, &mut into).unwrap(), "one line");
    }

    #[test]
    fn a_refilled_chunk_holds_what_was_read_as_whole_lines() {
        let mut chunk = Chunk::new(4);
        chunk.spare().unwrap()[..3].copy_from_slice(b"a\nb");
        chunk.filled(3);
        let refilled = chunk.refill(5, |buf| {
            buf.extend_from_slice(b"x\ny");
            Ok(3)
        });
        assert!(refilled.unwrap().is_ok());
        assert_eq!(chunk.bytes(), b"x\ny", "short: the rest never came");
        let mut into = Chunk::new(2);
        chunk.take_lines(&mut into).unwrap();
        assert_eq!(
            into.bytes(),
            b"x\ny",
            "the last line too, though it lacks its end"
        );
        let failed = chunk.refill(4, |buf| {
            buf.push(b'x');
            Err(io::Error::other("no"))
        });
        assert!(failed.unwrap().is_err());
        assert!(chunk.bytes().is_empty());
    }

    #[test]
    fn chunk_size_one_is_a_line_a_chunk() {
        assert_eq!(
            chunks(b"ab\n\ncd", 1, 1, false),
            owned(&[b"ab\n", b"\n", b"cd"])
        );
    }

    #[test]
    fn long_line_grows_its_chunk() {
        assert_eq!(
            chunks(b"abcdefgh\nxy\nz", 2, 3, false),
            owned(&[b"abcdefgh\n", b"xy\n", b"z"])
        );
    }

    #[test]
    fn full_chunks_hold_the_lines_that_fit() {
        assert_eq!(
            chunks(b"ab\ncd\nef\ngh\n", 7, 100, false),
            owned(&[b"ab\ncd\n", b"ef\ngh\n"])
        );
    }

    #[test]
    fn chunks_every_size_and_read_size() {
        let input = b"one two\n\nthree\r\n  four  \nfive";
        for size in 1..=input.len() + 1 {
            for read_size in 1..=input.len() + 1 {
                for live in [false, true] {
                    let chunks = chunks(input, size, read_size, live);
                    assert_eq!(chunks.concat(), input, "{size} {read_size} {live}");
                    let (last, whole) = chunks.split_last().expect("input is not empty");
                    assert!(!last.is_empty());
                    for chunk in whole {
                        assert!(chunk.ends_with(b"\n"), "{size} {read_size} {live}");
                    }
                }
            }
        }
    }
}
