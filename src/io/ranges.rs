//! Reading a regular file at offsets (`pread`), so that several threads can each read their own
//! range of it, and finding where lines end without reading more than the line.
//!
//! `pread` rather than a memory map: a file that shrinks while mapped kills the process with
//! `SIGBUS` on the next touch of a page past its new end, and mapped pages count as the process's
//! memory; a read past the end just comes back short, and the bytes land in a buffer of our own.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;

use memchr::memchr;
use rustix::fs::fstat;

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
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], at + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(done)
}

/// The offset just past the first `\n` at or after offset `from` in `file`, or `None` if the file
/// ends first. Reads ahead into `scratch`, [`LOOKAHEAD`] bytes first, then twice as much each
/// read up to `most`: a line of a few hundred bytes costs one small read, a long one few reads,
/// and memory stays bounded by `most` however long the line.
pub fn line_end_after(
    file: &File,
    from: u64,
    scratch: &mut Vec<u8>,
    most: usize,
) -> io::Result<Option<u64>> {
    let mut at = from;
    let mut size = LOOKAHEAD.min(most.max(1));
    loop {
        scratch.resize(size, 0);
        let read = read_at_most(file, scratch, at)?;
        if let Some(newline) = memchr(b'\n', &scratch[..read]) {
            return Ok(Some(at + newline as u64 + 1));
        }
        if read < size {
            return Ok(None);
        }
        at += read as u64;
        size = (size * 2).min(most.max(size));
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
        for most in [1, 2, 3, 100] {
            let mut end_after = |from| line_end_after(&file, from, &mut scratch, most).unwrap();
            assert_eq!(end_after(0), Some(3));
            assert_eq!(end_after(2), Some(3));
            assert_eq!(end_after(3), Some(10));
            assert_eq!(end_after(10), None);
            assert_eq!(end_after(99), None);
        }
        assert!(scratch.len() <= 100);
        assert_eq!(size_hint(&file), 12);
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
    }
}
