//! Input: stdin, or FILE arguments read in order as one stream, as `cat` does.
//!
//! A source that cannot be opened or read is [`report`](crate::exit::report)ed (so the exit
//! status becomes 1) and skipped; the rest are still read. That is `cat`'s rule, and it keeps
//! every strategy's loop free of per-source error handling.
//!
//! A read that would wait also watches stdout: when stdout is a pipe whose reader has gone, the
//! read stops with a broken pipe, so `(echo a; sleep 30) | std-baseline | head -1` ends when
//! `head` does, not when the input next moves.

use std::cell::Cell;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::fs::{FileType, fstat};
use rustix::io::Errno;

use crate::exit::{Error, report};

/// Where input comes from: one of these per FILE argument, or stdin alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Stdin,
    File(PathBuf),
}

impl Source {
    /// The sources named by FILE arguments; no arguments means stdin.
    pub fn from_args(files: &[PathBuf]) -> Vec<Source> {
        if files.is_empty() {
            return vec![Source::Stdin];
        }
        files
            .iter()
            .map(|file| {
                if file == Path::new("-") {
                    Source::Stdin
                } else {
                    Source::File(file.clone())
                }
            })
            .collect()
    }

    /// How error messages name this source.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "stdin".to_owned(),
            Source::File(path) => path.display().to_string(),
        }
    }

    /// Opens the source for reading. Stdin is duplicated into a plain `File`, so reads go
    /// straight to the descriptor, unbuffered, in the sizes the caller asks for.
    pub fn open(&self) -> Result<File, Error> {
        match self {
            Source::Stdin => io::stdin().as_fd().try_clone_to_owned().map(File::from),
            Source::File(path) => File::open(path),
        }
        .map_err(|error| Error::new(format!("opening {}", self.name()), error))
    }
}

/// The sources as one byte stream, read synchronously.
#[derive(Debug)]
pub struct Input {
    /// Sources not yet opened, in reverse order, so the next one is popped off the end.
    waiting: Vec<Source>,
    /// The source being read, if any is open.
    current: Option<Current>,
    /// Whether stdout is a pipe: the one kind of output whose reader can go away, and that the
    /// kernel flags when it does. A file, a terminal, `/dev/null` or `/dev/full` never is.
    stdout_is_pipe: bool,
    /// The last [`has_waiting`](Self::has_waiting) found the current source readable and no
    /// read has happened since: the next read returns at once, so it need not watch stdout.
    ready: Cell<bool>,
    /// Bytes read so far, from all sources.
    bytes_read: u64,
}

/// An open source.
#[derive(Debug)]
struct Current {
    source: Source,
    file: File,
    /// Whether a read may wait, and so must watch stdout meanwhile: never for a regular file,
    /// nor when stdout is not a pipe.
    watch: bool,
}

impl Input {
    pub fn new(files: &[PathBuf]) -> Self {
        let mut waiting = Source::from_args(files);
        waiting.reverse();
        Input {
            waiting,
            current: None,
            stdout_is_pipe: is_pipe(io::stdout().as_fd()),
            ready: Cell::new(false),
            bytes_read: 0,
        }
    }

    /// Reads into `buf` (not empty) from the current source, moving on to the next at each end.
    /// Returns 0 only at the end of the last source. Errors are reported and the source skipped.
    ///
    /// Fails only when stdout is a pipe whose reader went away while this waited for input: a
    /// broken pipe, which the caller stops on as it would on a failed write.
    pub fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        loop {
            let Some(current) = &mut self.current else {
                let Some(source) = self.waiting.pop() else {
                    return Ok(0);
                };
                match source.open() {
                    Ok(file) => {
                        let watch = self.stdout_is_pipe && !is_regular_file(file.as_fd());
                        self.current = Some(Current {
                            source,
                            file,
                            watch,
                        });
                    }
                    Err(error) => report(&error),
                }
                continue;
            };
            if current.watch && !self.ready.take() && !wait_readable(current.file.as_fd()) {
                return Err(Error::stdout_closed());
            }
            match current.file.read(buf) {
                Ok(0) => self.current = None,
                Ok(n) => {
                    self.bytes_read += n as u64;
                    return Ok(n);
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    let what = format!("reading {}", current.source.name());
                    report(&Error::new(what, error));
                    self.current = None;
                }
            }
        }
    }

    /// Whether a read now would return at once: more bytes (or the end) are waiting. When not,
    /// output held back for batching must be written out first, or a live line would be stuck.
    pub fn has_waiting(&self) -> bool {
        match &self.current {
            Some(current) => {
                let waiting = is_waiting(current.file.as_fd());
                self.ready.set(waiting);
                waiting
            }
            None => !self.waiting.is_empty(),
        }
    }

    /// Bytes read so far, from all sources.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }
}

/// Whether a read of `fd` now would return at once, with bytes or at the end.
pub(crate) fn is_waiting(fd: BorrowedFd<'_>) -> bool {
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // If poll itself fails, say nothing is waiting: the caller then flushes early, which costs a
    // write but never holds a line back.
    poll(&mut fds, Some(&now)).is_ok_and(|_| !fds[0].revents().is_empty())
}

/// Waits until a read of `source` would return at once; returns false instead if stdout's reader
/// goes away first. The kernel flags a pipe's write end with `POLLERR` the moment its last reader
/// closes, and poll reports that unasked.
fn wait_readable(source: BorrowedFd<'_>) -> bool {
    let stdout = io::stdout();
    let mut fds = [
        PollFd::new(&source, PollFlags::IN),
        PollFd::new(&stdout, PollFlags::empty()),
    ];
    loop {
        match poll(&mut fds, None) {
            Ok(_) => return !fds[1].revents().contains(PollFlags::ERR),
            Err(Errno::INTR) => {}
            // Then just read: only the early stop is lost.
            Err(_) => return true,
        }
    }
}

/// Whether `fd` is a pipe (or FIFO).
pub(crate) fn is_pipe(fd: BorrowedFd<'_>) -> bool {
    file_type(fd) == Some(FileType::Fifo)
}

/// Whether `fd` is a regular file: always readable, so never worth a poll.
fn is_regular_file(fd: BorrowedFd<'_>) -> bool {
    file_type(fd) == Some(FileType::RegularFile)
}

fn file_type(fd: BorrowedFd<'_>) -> Option<FileType> {
    fstat(fd)
        .ok()
        .map(|stat| FileType::from_raw_mode(stat.st_mode))
}
