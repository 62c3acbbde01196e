//! A regular file read in ranges: [`Cuts`], the plain state that says how its next bytes are read
//! (a range for another thread, read through a long line here, or the rest as a stream), and the
//! reads at offsets (`pread`) that carry it out, finding where lines end without reading more
//! than the line.
//!
//! The rules, for a reader that hands ranges of about a chunk's size to other threads:
//!
//! - Fewer than two chunks' worth left is read as a stream: there is little to share, and a small
//!   file is then read to its end before anything is written, as a one-thread filter reads it.
//! - A line begun in the previous source runs on into the file: it is completed first, here.
//! - Ranges are cut in order, each at the first `\n` at or past a chunk's worth: finding it reads
//!   a few KiB at the cut, so each range is known whole before a worker starts on it, no worker
//!   waits on another, and the ranges tile the file exactly.
//! - A range whose last line is long is not cut through (which would read that line twice, once
//!   to find the cut and again in the worker): it is read here, through to the line's end.
//! - Where the file ends within a range (a last line without its `\n`, a file that shrank), the
//!   rest is read as a stream, from the offset reached, as is all of a file whose size says
//!   nothing (`/proc`).
//!
//! `pread` rather than a memory map: a file that shrinks while mapped kills the process with
//! `SIGBUS` on the next touch of a page past its new end, and mapped pages count as the process's
//! memory; a read past the end just comes back short, and the bytes land in a buffer of our own.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::sync::Arc;

use memchr::{memchr, memrchr};
use rustix::fs::fstat;
use rustix::io::{Errno, pread};

use crate::error::Error;
use crate::frame::Chunk;

/// Bytes read at a time when looking for a line's end: most lines end within the first read.
pub const LOOKAHEAD: usize = 4096;

/// The size `file` reports now. A hint, never the truth: `/proc` and `/sys` files report 0 and
/// hold text, and a file may grow or shrink at any moment.
pub fn size_hint(file: &File) -> u64 {
    fstat(file.as_fd()).map_or(0, |stat| stat.st_size.max(0) as u64)
}

/// Reads from `file` at offset `at` into `buf` until it is full or the file ends (it may have
/// shrunk); returns the bytes read. Signals are waited out.
pub fn read_at_most(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    read_fully(at, buf.len(), |done, at| pread(file, &mut buf[done..], at))
}

/// Appends to `buf` what `file` holds from offset `at`, `len` bytes or up to the file's end (it
/// may have shrunk), as [`read_at_most`] does; returns the bytes read. The bytes are read into
/// `buf`'s spare capacity, which is not zeroed first; failing to make room is an error.
pub fn append_at_most(file: &File, buf: &mut Vec<u8>, len: usize, at: u64) -> io::Result<usize> {
    buf.try_reserve(len)
        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
    read_fully(at, len, |done, at| {
        let start = buf.len();
        let room = &mut buf.spare_capacity_mut()[..len - done];
        let read = pread(file, room, at)?.0.len();
        // SAFETY: `pread` initialised the first `read` bytes of the spare capacity, which begins
        // at the old length.
        unsafe { buf.set_len(start + read) };
        Ok(read)
    })
}

/// Runs `read(done, at + done)` until `len` bytes are done or a read returns 0; returns the bytes
/// done. A read interrupted by a signal is tried again.
fn read_fully(
    at: u64,
    len: usize,
    mut read: impl FnMut(usize, u64) -> Result<usize, Errno>,
) -> io::Result<usize> {
    let mut done = 0;
    while done < len {
        match read(done, at + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(Errno::INTR) => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(done)
}

/// Where a line ends, as far as it was looked for.
#[derive(Debug, PartialEq, Eq)]
pub enum LineEnd {
    /// Just past its `\n`, at this offset.
    At(u64),
    /// The file ends first (it ends without a `\n`, or it shrank).
    FileEnd,
    /// Not within the bytes looked at: a longer line.
    Beyond,
}

/// Where the first `\n` at or after offset `from` in `file` is, looking at most `within` bytes
/// (at least 1) on. Reads into `scratch`, [`LOOKAHEAD`] bytes first, then twice as much each read:
/// a line of a few hundred bytes costs one small read, a long one a few, and memory and reading
/// stay bounded by `within` however long the line.
pub fn line_end_after(
    file: &File,
    from: u64,
    scratch: &mut Vec<u8>,
    within: usize,
) -> io::Result<LineEnd> {
    let last = from + within.max(1) as u64;
    let mut at = from;
    let mut size = LOOKAHEAD.min(within.max(1));
    loop {
        scratch.resize(size, 0);
        let read = read_at_most(file, scratch, at)?;
        if let Some(newline) = memchr(b'\n', &scratch[..read]) {
            return Ok(LineEnd::At(at + newline as u64 + 1));
        }
        if read < size {
            return Ok(LineEnd::FileEnd);
        }
        at += read as u64;
        if at >= last {
            return Ok(LineEnd::Beyond);
        }
        size = (size * 2).min((last - at) as usize);
    }
}

/// Bytes `at..at + len` of a regular file: whole lines, as far as the file was read when the
/// range was cut, for another thread to read itself.
#[derive(Debug, Clone)]
pub struct Range {
    /// The file, shared by every range of it.
    pub file: Arc<File>,
    /// Where the range begins.
    pub at: u64,
    /// Its length.
    pub len: usize,
}

impl Range {
    /// Appends the range to `buf`, or as much of it as the file still holds; returns the bytes
    /// read.
    pub fn read(&self, buf: &mut Vec<u8>) -> io::Result<usize> {
        append_at_most(&self.file, buf, self.len, self.at)
    }
}

/// What comes next in a file read in ranges, as [`Cuts`] says.
#[derive(Debug, PartialEq, Eq)]
pub enum Cut {
    /// Complete the line the reader holds from the previous source ([`complete_line`]); tell
    /// [`Cuts::completed`].
    CompleteLine {
        /// Where the file is read from.
        at: u64,
    },
    /// Find where the line running at `from` ends ([`line_end_after`]); tell [`Cuts::found`].
    FindEnd {
        /// Where the search begins: the last byte of a chunk's worth.
        from: u64,
        /// How far on it looks.
        within: usize,
    },
    /// A range for another thread: whole lines.
    Range {
        /// Where it begins.
        at: u64,
        /// Its length.
        len: usize,
    },
    /// Read here, and on through the line running at its end ([`read_through`]); tell
    /// [`Cuts::read_through`].
    ReadThrough {
        /// Where it begins.
        at: u64,
        /// A chunk's worth, read before the line's end is looked for.
        size: usize,
    },
    /// No more ranges: once every range handed out is read, the rest is read as a stream
    /// ([`Cuts::finish`]).
    Stream {
        /// Where the ranges end.
        at: u64,
    },
}

/// Where the reading of a regular file in ranges stands, with no I/O: told what the reads found,
/// it says what comes next ([`Cut`]). The rules are the module's.
#[derive(Debug)]
pub struct Cuts {
    /// Where the next range begins: everything before it is read or handed out.
    at: u64,
    /// The file's size when the cutting began: ranges are cut while a chunk's worth is left.
    hint: u64,
    /// A chunk's worth.
    size: u64,
    step: Step,
    /// A read here failed: no more is cut, and the file is given up.
    failure: Option<io::Error>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    CompleteLine,
    Cut,
    /// A line ends here: the range up to it is next.
    Found(u64),
    ReadThrough,
    Stream,
}

impl Cuts {
    /// The file's reading at offset `start`, its size now `hint`, cut into ranges of about `size`
    /// bytes; `holding_line` when the reader holds the start of a line from the previous source.
    /// `None` when fewer than two chunks' worth is left: the file is read as a stream.
    pub fn new(start: u64, hint: u64, size: usize, holding_line: bool) -> Option<Self> {
        let size = size.max(1) as u64;
        if start.saturating_add(2 * size) >= hint {
            return None;
        }
        Some(Cuts {
            at: start,
            hint,
            size,
            step: match holding_line {
                true => Step::CompleteLine,
                false => Step::Cut,
            },
            failure: None,
        })
    }

    /// What comes next.
    pub fn next_cut(&mut self) -> Cut {
        let at = self.at;
        match self.step {
            _ if self.failure.is_some() => Cut::Stream { at },
            Step::CompleteLine => Cut::CompleteLine { at },
            Step::Cut if at + self.size < self.hint => Cut::FindEnd {
                from: at + self.size - 1,
                // A cut looks this far on for its line's end; a longer line is read through.
                within: (self.size as usize / 8).max(LOOKAHEAD),
            },
            Step::Found(end) => {
                self.at = end;
                self.step = Step::Cut;
                let len = (end - at) as usize;
                Cut::Range { at, len }
            }
            Step::ReadThrough => Cut::ReadThrough {
                at,
                size: self.size as usize,
            },
            Step::Cut | Step::Stream => {
                self.step = Step::Stream;
                Cut::Stream { at }
            }
        }
    }

    /// The line held was completed up to `end`: it `ended` there, or the file did first (it is all
    /// one line, still running on: the rest is a stream).
    pub fn completed(&mut self, end: u64, ended: bool) {
        self.at = end;
        self.step = match ended {
            true => Step::Cut,
            false => Step::Stream,
        };
    }

    /// What [`Cut::FindEnd`] found.
    pub fn found(&mut self, end: LineEnd) {
        self.step = match end {
            LineEnd::At(end) => Step::Found(end),
            LineEnd::Beyond => Step::ReadThrough,
            // The file ends within this range (its last line lacks its `\n`, or it shrank).
            LineEnd::FileEnd => Step::Stream,
        };
    }

    /// [`Cut::ReadThrough`] kept `kept` bytes of whole lines; none when the file ends before any
    /// line does (the rest is a stream).
    pub fn read_through(&mut self, kept: usize) {
        self.at += kept as u64;
        self.step = match kept {
            0 => Step::Stream,
            _ => Step::Cut,
        };
    }

    /// A read here failed: the file is given up once the ranges out are read.
    pub fn failed(&mut self, error: io::Error) {
        self.failure.get_or_insert(error);
    }

    /// Every range handed out is read, `range_failure` the first that could not be: the offset
    /// the rest of the file is read from as a stream, or the failure that gives the file up (one
    /// here first, as it came first).
    pub fn finish(self, range_failure: Option<io::Error>) -> io::Result<u64> {
        match self.failure.or(range_failure) {
            Some(error) => Err(error),
            None => Ok(self.at),
        }
    }
}

/// Reads `file` from `at` into `chunk`, which holds the start of a line, up to that line's end or
/// the file's, as a stream read would; returns the offset after it and whether the line ended.
/// What a read brings past the line's end is left unused, to be read again: reads of
/// [`LOOKAHEAD`] keep that small. Fails outside only when the chunk cannot grow.
pub fn complete_line(
    file: &File,
    mut at: u64,
    chunk: &mut Chunk,
) -> Result<io::Result<(u64, bool)>, Error> {
    loop {
        let spare = chunk.spare()?;
        let room = spare.len().min(LOOKAHEAD);
        let read = match read_at_most(file, &mut spare[..room], at) {
            Ok(read) => read,
            Err(error) => return Ok(Err(error)),
        };
        let newline = memchr(b'\n', &spare[..read]);
        let used = newline.map_or(read, |newline| newline + 1);
        chunk.filled(used);
        at += used as u64;
        if newline.is_some() || read < room {
            return Ok(Ok((at, newline.is_some())));
        }
    }
}

/// Appends to `buf` what `file` holds from `at`: `size` bytes, then on to the end of the line
/// running there, in reads of [`LOOKAHEAD`] doubling up to 64 KiB or a chunk, so that what the
/// last read brings past the line's end, which is dropped, stays small beside a line this long.
/// Where the file ends first, only whole lines are kept. Returns the bytes kept.
pub fn read_through(file: &File, buf: &mut Vec<u8>, size: usize, at: u64) -> io::Result<usize> {
    let mut want = size;
    let mut read = append_at_most(file, buf, want, at)?;
    let mut piece = LOOKAHEAD;
    let mut from = size.saturating_sub(1).min(buf.len());
    loop {
        if let Some(newline) = memchr(b'\n', &buf[from..]) {
            buf.truncate(from + newline + 1);
            return Ok(buf.len());
        }
        if read < want {
            // The file ended within the line: it is left to the stream, to run on into the next
            // source if it lacks its `\n` at the end.
            let whole = memrchr(b'\n', buf).map_or(0, |newline| newline + 1);
            buf.truncate(whole);
            return Ok(whole);
        }
        from = buf.len();
        want = piece;
        piece = (piece * 2).min((16 * LOOKAHEAD).min(size).max(LOOKAHEAD));
        read = append_at_most(file, buf, want, at + from as u64)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::testing::file as file_of;

    #[test]
    fn line_ends_are_found_across_reads_and_not_past_the_end() {
        let file = file_of(b"ab\ncdefgh\nij");
        let mut scratch = Vec::new();
        for within in [7, 8, 100] {
            let mut end_after = |from| line_end_after(&file, from, &mut scratch, within).unwrap();
            assert_eq!(end_after(0), LineEnd::At(3));
            assert_eq!(end_after(2), LineEnd::At(3));
            assert_eq!(end_after(3), LineEnd::At(10));
            assert_eq!(end_after(10), LineEnd::FileEnd);
            assert_eq!(end_after(99), LineEnd::FileEnd);
        }
        assert!(scratch.len() <= 100);
        assert_eq!(size_hint(&file), 12);
    }

    #[test]
    fn a_line_longer_than_the_search_is_beyond_it() {
        let file = file_of(b"ab\ncdefgh\nij");
        let mut scratch = Vec::new();
        for within in [1, 2, 6] {
            let end_after = line_end_after(&file, 3, &mut scratch, within).unwrap();
            assert_eq!(end_after, LineEnd::Beyond, "{within}");
            assert!(scratch.len() <= within);
        }
        assert_eq!(
            line_end_after(&file, 2, &mut scratch, 1).unwrap(),
            LineEnd::At(3)
        );
    }

    #[test]
    fn reads_at_an_offset_stop_short_at_the_end() {
        let file = file_of(b"0123456789");
        let mut buf = [0; 4];
        assert_eq!(read_at_most(&file, &mut buf, 3).unwrap(), 4);
        assert_eq!(&buf, b"3456");
        assert_eq!(read_at_most(&file, &mut buf, 8).unwrap(), 2);
        assert_eq!(&buf[..2], b"89");
        assert_eq!(read_at_most(&file, &mut buf, 20).unwrap(), 0);
        let mut appended = b"ab".to_vec();
        assert_eq!(append_at_most(&file, &mut appended, 4, 3).unwrap(), 4);
        assert_eq!(append_at_most(&file, &mut appended, 4, 8).unwrap(), 2);
        assert_eq!(append_at_most(&file, &mut appended, 4, 20).unwrap(), 0);
        assert_eq!(appended, b"ab345689");
    }

    /// Runs `cuts` to its end as a reader would, `ends` answering each search for a line's end
    /// and `kept` each read through: what it said, in order.
    fn cut(
        mut cuts: Cuts,
        mut ends: impl FnMut(u64) -> LineEnd,
        mut kept: impl FnMut(u64) -> usize,
    ) -> (Vec<Cut>, io::Result<u64>) {
        let mut said = Vec::new();
        loop {
            let next = cuts.next_cut();
            match next {
                Cut::CompleteLine { at } => cuts.completed(at + 3, true),
                Cut::FindEnd { from, .. } => cuts.found(ends(from)),
                Cut::ReadThrough { at, .. } => cuts.read_through(kept(at)),
                Cut::Range { .. } => {}
                Cut::Stream { .. } => {
                    said.push(next);
                    return (said, cuts.finish(None));
                }
            }
            said.push(next);
        }
    }

    #[test]
    fn fewer_than_two_chunks_left_is_a_stream() {
        assert!(Cuts::new(0, 20, 10, false).is_none());
        assert!(Cuts::new(5, 24, 10, false).is_none());
        assert!(Cuts::new(u64::MAX - 1, u64::MAX, 10, false).is_none());
        assert!(Cuts::new(0, 21, 10, false).is_some());
    }

    #[test]
    fn ranges_tile_the_file_cut_at_line_ends_past_a_chunk() {
        // Lines end 2 bytes past each chunk's worth; the file ends without its `\n`.
        let cuts = Cuts::new(0, 45, 10, false).unwrap();
        let (said, finished) = cut(cuts, |from| LineEnd::At(from + 3), |_| 0);
        let find = |from| Cut::FindEnd {
            from,
            within: LOOKAHEAD,
        };
        let expected = [
            find(9),
            Cut::Range { at: 0, len: 12 },
            find(21),
            Cut::Range { at: 12, len: 12 },
            find(33),
            Cut::Range { at: 24, len: 12 },
            Cut::Stream { at: 36 },
        ];
        assert_eq!(
            said, expected,
            "the last 9 bytes, less than a chunk, are a stream"
        );
        assert_eq!(finished.unwrap(), 36);
    }

    #[test]
    fn a_long_line_is_read_through_and_a_file_ending_first_is_a_stream() {
        let cuts = Cuts::new(100, 200, 10, true).unwrap();
        let (said, finished) = cut(
            cuts,
            |from| match from {
                112 => LineEnd::Beyond,
                _ => LineEnd::FileEnd,
            },
            |_| 25,
        );
        let expected = [
            Cut::CompleteLine { at: 100 },
            Cut::FindEnd {
                from: 112,
                within: LOOKAHEAD,
            },
            Cut::ReadThrough { at: 103, size: 10 },
            Cut::FindEnd {
                from: 137,
                within: LOOKAHEAD,
            },
            Cut::Stream { at: 128 },
        ];
        assert_eq!(said, expected);
        assert_eq!(finished.unwrap(), 128);
    }

    #[test]
    fn a_held_line_the_file_never_ends_and_a_read_through_with_no_line_are_streams() {
        let mut cuts = Cuts::new(0, 100, 10, true).unwrap();
        assert_eq!(cuts.next_cut(), Cut::CompleteLine { at: 0 });
        cuts.completed(100, false);
        assert_eq!(cuts.next_cut(), Cut::Stream { at: 100 });
        let mut cuts = Cuts::new(0, 100, 10, false).unwrap();
        cuts.found(LineEnd::Beyond);
        assert_eq!(cuts.next_cut(), Cut::ReadThrough { at: 0, size: 10 });
        cuts.read_through(0);
        assert_eq!(cuts.next_cut(), Cut::Stream { at: 0 });
    }

    #[test]
    fn a_failure_here_or_in_a_range_gives_the_file_up() {
        let mut cuts = Cuts::new(0, 100, 10, false).unwrap();
        cuts.failed(io::Error::other("here"));
        cuts.failed(io::Error::other("later"));
        assert_eq!(
            cuts.next_cut(),
            Cut::Stream { at: 0 },
            "nothing more is cut"
        );
        let failure = cuts.finish(Some(io::Error::other("range")));
        assert_eq!(
            failure.unwrap_err().to_string(),
            "here",
            "the first failure"
        );
        let cuts = Cuts::new(0, 100, 10, false).unwrap();
        let failure = cuts.finish(Some(io::Error::other("range")));
        assert_eq!(failure.unwrap_err().to_string(), "range");
    }

    #[test]
    fn a_line_is_completed_and_a_long_one_read_through_from_the_file() {
        let file = file_of(b"end\nab\ncdefghij\nk");
        let mut chunk = Chunk::new(64);
        chunk.spare().unwrap()[..3].copy_from_slice(b"the");
        chunk.filled(3);
        assert_eq!(
            complete_line(&file, 0, &mut chunk).unwrap().unwrap(),
            (4, true)
        );
        assert_eq!(chunk.bytes(), b"theend\n");
        let mut buf = Vec::new();
        assert_eq!(read_through(&file, &mut buf, 2, 4).unwrap(), 3, "ab\n");
        buf.clear();
        let through = read_through(&file, &mut buf, 4, 4).unwrap();
        assert_eq!(through, 12, "on through the line running past 4 bytes");
        buf.clear();
        assert_eq!(
            read_through(&file, &mut buf, 2, 7).unwrap(),
            9,
            "cdefghij\n"
        );
        buf.clear();
        assert_eq!(
            read_through(&file, &mut buf, 1, 16).unwrap(),
            0,
            "k has no end"
        );
        let mut chunk = Chunk::new(64);
        assert_eq!(
            complete_line(&file, 16, &mut chunk).unwrap().unwrap(),
            (17, false)
        );
    }
}
