//! Facts about descriptors, and the few things done to them: what kind of file is behind one, is
//! input waiting, has a pipe's reader gone, is an input the output, a larger pipe, a private
//! non-blocking description, and reads and writes that wait out an inherited `O_NONBLOCK`.
//!
//! Nothing here changes an open file description that others may share: flags are only ever set
//! on a description of our own.

use std::fs::{File, Metadata};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::fs::{FileType, OFlags, SeekFrom, fcntl_getfl, fstat, seek};
use rustix::io::Errno;

fn file_type(fd: BorrowedFd<'_>) -> Option<FileType> {
    fstat(fd)
        .ok()
        .map(|stat| FileType::from_raw_mode(stat.st_mode))
}

/// Whether `fd` is a pipe (or FIFO): the one kind of output whose reader can go away and that the
/// kernel flags when it does.
pub fn is_pipe(fd: BorrowedFd<'_>) -> bool {
    file_type(fd) == Some(FileType::Fifo)
}

/// Whether `fd` is a regular file: always readable and writable at once, so never worth a poll,
/// and never something a reactor can wait on.
pub fn is_regular_file(fd: BorrowedFd<'_>) -> bool {
    file_type(fd) == Some(FileType::RegularFile)
}

/// The most a pipe is enlarged to even where the system allows more: past this, measurements
/// showed no gain, only memory held in the kernel.
#[cfg(target_os = "linux")]
const LARGEST_PIPE: usize = 1 << 20;

/// Asks for a larger pipe behind `fd`, up to what an unprivileged process may set
/// (`/proc/sys/fs/pipe-max-size`, 1 MiB by default), so reads and writes move large pieces instead
/// of the default 64 KiB. Anything that is not a pipe refuses, and that is fine.
#[cfg(target_os = "linux")]
pub fn enlarge_pipe(fd: BorrowedFd<'_>) {
    // Read once, for stdin and stdout alike.
    static SIZE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let size = *SIZE.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
            .ok()
            .and_then(|max| max.trim().parse::<usize>().ok())
            .map_or(LARGEST_PIPE, |max| max.min(LARGEST_PIPE))
    });
    let _ = rustix::pipe::fcntl_setpipe_size(fd, size);
}

/// Nothing: `F_SETPIPE_SZ` is Linux's alone, and the BSDs and macOS size a pipe themselves
/// (docs/CONTRACT.md §10.1).
#[cfg(not(target_os = "linux"))]
pub fn enlarge_pipe(_: BorrowedFd<'_>) {}

/// Polls `fds` until something is ready, retrying on signals.
fn poll_until_ready(fds: &mut [PollFd<'_>], timeout: Option<&Timespec>) -> rustix::io::Result<()> {
    loop {
        match poll(fds, timeout) {
            Err(Errno::INTR) => {}
            result => return result.map(drop),
        }
    }
}

/// Whether a read of `fd` now would return at once, with bytes or at the end.
pub fn is_ready(fd: BorrowedFd<'_>) -> bool {
    is_ready_within(fd, Duration::ZERO)
}

/// Whether a read of `fd` would return at once within `timeout`, waiting that long at most.
pub fn is_ready_within(fd: BorrowedFd<'_>, timeout: Duration) -> bool {
    // If poll itself fails, say nothing is waiting: the caller then writes early, which costs a
    // write but never holds a line back.
    readable_within(fd, timeout).unwrap_or(false)
}

/// Whether `fd` stayed without bytes or an end to read for all of `timeout`: false as soon as a
/// read would return, and where poll fails (a `ulimit -n 0` refuses even one descriptor), so that
/// a caller waiting in slices reads, and waits in the read, rather than polling on for ever.
pub fn stays_idle_for(fd: BorrowedFd<'_>, timeout: Duration) -> bool {
    matches!(readable_within(fd, timeout), Ok(false))
}

/// Whether a read of `fd` would return at once within `timeout`, or why poll could not tell.
fn readable_within(fd: BorrowedFd<'_>, timeout: Duration) -> rustix::io::Result<bool> {
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let timeout = Timespec {
        tv_sec: timeout.as_secs() as i64,
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    poll_until_ready(&mut fds, Some(&timeout))?;
    Ok(!fds[0].revents().is_empty())
}

/// Waits until a read of `input` would return at once; returns false instead if `watched`, a
/// pipe's write end, loses its reader first: the kernel flags a pipe's write end with `POLLERR`
/// the moment its last reader closes, so no write is needed to find out.
pub fn wait_readable_unless_reader_gone(input: BorrowedFd<'_>, watched: BorrowedFd<'_>) -> bool {
    let mut fds = [
        PollFd::new(&input, PollFlags::IN),
        PollFd::new(&watched, PollFlags::empty()),
    ];
    match poll_until_ready(&mut fds, None) {
        Ok(()) => !fds[1].revents().contains(PollFlags::ERR),
        // Then just read: only the early stop is lost.
        Err(_) => true,
    }
}

/// Waits until `fd` is ready for `flags`: how a descriptor handed over non-blocking is waited on,
/// instead of failing with "try again".
fn wait_ready(fd: BorrowedFd<'_>, flags: PollFlags) {
    let mut fds = [PollFd::new(&fd, flags)];
    // A failed poll leaves the retry to find out what is wrong.
    let _ = poll_until_ready(&mut fds, None);
}

/// Runs one read or write `op` on `fd` until it neither is interrupted by a signal nor would
/// block: `EAGAIN` from a descriptor handed over non-blocking means wait for readiness, then try
/// again. `writing` says which readiness to wait for.
pub fn retry<T>(
    fd: BorrowedFd<'_>,
    writing: bool,
    mut op: impl FnMut() -> io::Result<T>,
) -> io::Result<T> {
    let flags = if writing {
        PollFlags::OUT
    } else {
        PollFlags::IN
    };
    loop {
        match op() {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => wait_ready(fd, flags),
            result => return result,
        }
    }
}

/// Reads once from `file`, waiting out signals and an inherited non-blocking mode.
pub fn read(mut file: &File, buf: &mut [u8]) -> io::Result<usize> {
    retry(file.as_fd(), false, || file.read(buf))
}

/// Reads into `buf` at `at` without moving the file's offset, as much as comes in one read (a
/// signal's interruption waited out): 0 at the file's end.
pub fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    loop {
        match file.read_at(buf, at) {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            read => return read,
        }
    }
}

/// Writes once to `file`, waiting out signals and an inherited non-blocking mode.
pub fn write(mut file: &File, buf: &[u8]) -> io::Result<usize> {
    retry(file.as_fd(), true, || file.write(buf))
}

/// The output as each input is checked against it ([`Output::is_read_by`]): its descriptor, and
/// its file's metadata, found once (a descriptor's file never changes, only its offset, which is
/// asked for only when an input is that file). A thousand small FILEs cost an `fstat` each less.
#[derive(Debug)]
pub struct Output {
    file: File,
    metadata: Option<Metadata>,
}

impl Output {
    /// The output written through `fd`.
    pub fn new(fd: OwnedFd) -> Self {
        let file = File::from(fd);
        Output {
            metadata: file.metadata().ok(),
            file,
        }
    }

    /// Its descriptor, watched while a read waits.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    /// Its file, as device and inode, if it could be found.
    pub fn file(&self) -> Option<(u64, u64)> {
        self.metadata.as_ref().map(|out| (out.dev(), out.ino()))
    }

    /// Whether reading `input` (an open file's metadata) would read what is written here, by
    /// `cat`'s rule: both the same regular file, and the output either appending or positioned
    /// before the input's end. Reading it would then never end, or read back its own output.
    pub fn is_read_by(&self, input: &Metadata) -> bool {
        let Some(out) = &self.metadata else {
            return false;
        };
        if !input.is_file() || (input.dev(), input.ino()) != (out.dev(), out.ino()) {
            return false;
        }
        let appending = fcntl_getfl(&self.file).is_ok_and(|flags| flags.contains(OFlags::APPEND));
        appending || seek(&self.file, SeekFrom::Current(0)).is_ok_and(|at| at < input.len())
    }
}

/// A description of its own for the file behind `fd`, in non-blocking mode, for a reactor to wait
/// on: the inherited description, shared with other processes, is left as it was. Reopening
/// through `/proc/self/fd` gives a new open file description of the same pipe or terminal.
///
/// Fails where that is impossible (no `/proc`, a socket): the caller then does blocking I/O.
#[cfg(target_os = "linux")]
pub fn reopen_nonblocking(fd: BorrowedFd<'_>, write: bool) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;

    std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(OFlags::NONBLOCK.bits() as i32)
        .open(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// Always fails, so the caller does blocking I/O: elsewhere no path gives a new description of an
/// open pipe, as `/dev/fd/N` on the BSDs and macOS duplicates the descriptor, description and
/// flags shared (docs/CONTRACT.md §10.1).
#[cfg(not(target_os = "linux"))]
pub fn reopen_nonblocking(_: BorrowedFd<'_>, _: bool) -> io::Result<File> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Whether `fd`'s description is in non-blocking mode: what [`reopen_nonblocking`] sets on its own
/// description and leaves alone on the inherited one.
pub fn is_nonblocking(fd: BorrowedFd<'_>) -> bool {
    fcntl_getfl(fd).is_ok_and(|flags| flags.contains(OFlags::NONBLOCK))
}

#[cfg(test)]
mod tests {
    use std::fs::{self, OpenOptions};
    use std::io::{Seek, Write};
    use std::os::fd::OwnedFd;

    use rustix::fs::fcntl_setfl;
    use rustix::pipe::pipe;

    use super::*;
    use pipelines_testing::{self as testing, within};

    fn nonblocking(fd: &OwnedFd) {
        let flags = fcntl_getfl(fd).unwrap();
        fcntl_setfl(fd, flags | OFlags::NONBLOCK).unwrap();
    }

    #[test]
    fn kinds_of_file() {
        let (reader, writer) = pipe().unwrap();
        assert!(is_pipe(reader.as_fd()) && is_pipe(writer.as_fd()));
        assert!(!is_regular_file(reader.as_fd()));
        let file = testing::file(b"");
        assert!(is_regular_file(file.as_fd()) && !is_pipe(file.as_fd()));
    }

    #[test]
    fn waiting_input_and_a_gone_reader() {
        within("the waits", || {
            let (reader, writer) = pipe().unwrap();
            assert!(!is_ready(reader.as_fd()));
            assert!(!is_ready_within(reader.as_fd(), Duration::from_millis(1)));
            assert!(stays_idle_for(reader.as_fd(), Duration::from_millis(1)));
            rustix::io::write(&writer, b"x").unwrap();
            assert!(is_ready(reader.as_fd()));
            assert!(is_ready_within(reader.as_fd(), Duration::from_secs(60)));
            assert!(!stays_idle_for(reader.as_fd(), Duration::from_secs(60)));
            assert!(wait_readable_unless_reader_gone(
                reader.as_fd(),
                writer.as_fd()
            ));
            let (idle, _idle_writer) = pipe().unwrap();
            drop(reader);
            assert!(!wait_readable_unless_reader_gone(
                idle.as_fd(),
                writer.as_fd()
            ));
        });
    }

    #[test]
    fn reads_and_writes_wait_out_an_inherited_nonblocking_pipe() {
        within("the reads and writes", || {
            let (reader, writer) = pipe().unwrap();
            nonblocking(&reader);
            nonblocking(&writer);
            let (reader, writer) = (File::from(reader), File::from(writer));
            // More than the pipe holds, so the writer meets a full pipe and must wait for the
            // reader.
            let sent: Vec<u8> = (0..4 << 20).map(|n: u32| n as u8).collect();
            let expected = sent.clone();
            let writing = std::thread::spawn(move || {
                let mut unsent = &sent[..];
                while !unsent.is_empty() {
                    unsent = &unsent[write(&writer, unsent)?..];
                }
                io::Result::Ok(())
            });
            let mut received = Vec::new();
            let mut buf = vec![0; 65536];
            loop {
                match read(&reader, &mut buf).unwrap() {
                    0 => break,
                    n => received.extend_from_slice(&buf[..n]),
                }
            }
            writing.join().unwrap().unwrap();
            assert!(received == expected, "every byte arrives, in order");
        });
    }

    #[test]
    fn an_input_is_the_output_by_cats_rule() {
        let path = testing::path("fd-same");
        fs::write(&path, b"some bytes\n").unwrap();
        let input = File::open(&path).unwrap().metadata().unwrap();
        let output = |file: &File| Output::new(file.as_fd().try_clone_to_owned().unwrap());
        let appending = OpenOptions::new().append(true).open(&path).unwrap();
        assert!(output(&appending).is_read_by(&input));
        // Written from the start: its offset is before the input's end.
        let mut overwriting = OpenOptions::new().write(true).open(&path).unwrap();
        assert!(output(&overwriting).is_read_by(&input));
        // Positioned at the end, it writes only where the input has already ended.
        overwriting.seek(std::io::SeekFrom::End(0)).unwrap();
        assert!(!output(&overwriting).is_read_by(&input));
        let mut other = testing::file(b"");
        other.write_all(b"x").unwrap();
        assert!(!output(&other).is_read_by(&input));
        let (reader, writer) = pipe().unwrap();
        let pipe = File::from(reader).metadata().unwrap();
        assert!(!Output::new(writer).is_read_by(&pipe));
        fs::remove_file(&path).unwrap();
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_private_description_leaves_the_inherited_one_blocking() {
        let (reader, writer) = pipe().unwrap();
        let private = reopen_nonblocking(reader.as_fd(), false).unwrap();
        assert!(is_nonblocking(private.as_fd()));
        assert!(!is_nonblocking(reader.as_fd()));
        rustix::io::write(&writer, b"shared").unwrap();
        let mut buf = [0; 6];
        assert_eq!(rustix::io::read(&private, &mut buf), Ok(6));
        assert_eq!(
            &buf, b"shared",
            "the same pipe, through another description"
        );
        let private_writer = reopen_nonblocking(writer.as_fd(), true).unwrap();
        assert!(is_nonblocking(private_writer.as_fd()) && !is_nonblocking(writer.as_fd()));
    }
}
