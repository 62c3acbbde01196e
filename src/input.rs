//! Input: stdin, or FILE arguments read in order as one stream, as `cat` does.
//!
//! A source that cannot be opened or read is [`report`](crate::exit::report)ed (so the exit
//! status becomes 1) and skipped; the rest are still read. That is `cat`'s rule, and it keeps
//! every strategy's loop free of per-source error handling.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use rustix::event::{PollFd, PollFlags, Timespec, poll};

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
    current: Option<(Source, File)>,
    /// Bytes read so far, from all sources.
    bytes_read: u64,
}

impl Input {
    pub fn new(files: &[PathBuf]) -> Self {
        let mut waiting = Source::from_args(files);
        waiting.reverse();
        Input {
            waiting,
            current: None,
            bytes_read: 0,
        }
    }

    /// Reads into `buf` (not empty) from the current source, moving on to the next at each end.
    /// Returns 0 only at the end of the last source. Errors are reported and the source skipped.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        loop {
            let Some((source, file)) = &mut self.current else {
                let Some(source) = self.waiting.pop() else {
                    return 0;
                };
                match source.open() {
                    Ok(file) => self.current = Some((source, file)),
                    Err(error) => report(&error),
                }
                continue;
            };
            match file.read(buf) {
                Ok(0) => self.current = None,
                Ok(n) => {
                    self.bytes_read += n as u64;
                    return n;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    report(&Error::new(format!("reading {}", source.name()), error));
                    self.current = None;
                }
            }
        }
    }

    /// Whether a read now would return at once: more bytes (or the end) are waiting. When not,
    /// output held back for batching must be written out first, or a live line would be stuck.
    pub fn has_waiting(&self) -> bool {
        match &self.current {
            Some((_, file)) => is_waiting(file.as_fd()),
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
