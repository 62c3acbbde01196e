//! Reading a regular file at offsets (`pread`), so that several threads can each read their own
//! range of it, and finding where lines end without reading more than the line.
//!
//! `pread` rather than a memory map: a file that shrinks while mapped kills the process with
//! `SIGBUS` on the next touch of a page past its new end, and mapped pages count as the process's
//! memory; a read past the end just comes back short, and the bytes land in a buffer of our own.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;

use memchr::memchr;
use rustix::fs::fstat;
use rustix::io::{Errno, pread};

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

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn file_of(bytes: &[u8]) -> File {
        let path = std::env::temp_dir().join(format!(
            "pipelines-ranges-{}-{}",
            std::process::id(),
            bytes.len()
        ));
        let mut file = File::create(&path).unwrap();
        file.write_all(bytes).unwrap();
        let file = File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        file
    }

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
}
