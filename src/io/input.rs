//! [`FileInput`]: stdin or FILEs, read synchronously as one stream.
//!
//! A read that would wait also watches stdout: when stdout is a pipe whose reader has gone, the
//! read stops with a broken pipe, so `(echo a; sleep 30) | std-baseline | head -1` ends when
//! `head` does, not when the input next moves.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;
use crate::io::Input;
use crate::io::fd;
use crate::io::sources::Sources;

/// The sources as one byte stream, read synchronously.
#[derive(Debug)]
pub struct FileInput {
    sources: Sources,
    /// The source being read, if one is open; shared with threads reading it at offsets.
    current: Option<Arc<File>>,
    /// Whether `current` is a regular file.
    regular: bool,
    /// Where output goes: refused as input (`cat`'s rule), and watched while a read waits when
    /// it is a pipe, the one kind of output whose reader can go away.
    output: Option<OwnedFd>,
    /// Whether a read of `current` may wait, and so must watch `output` meanwhile: never for a
    /// regular file, nor when the output is no pipe.
    watch: bool,
    /// The last [`has_waiting`](Input::has_waiting) found `current` readable and no read has
    /// happened since: the next read returns at once, so it need not watch.
    ready: bool,
}

impl FileInput {
    /// `sources`, read while writing to `output`.
    pub fn new(sources: Sources, output: Option<OwnedFd>) -> Self {
        FileInput {
            sources,
            current: None,
            regular: false,
            output,
            watch: false,
            ready: false,
        }
    }
}

impl FileInput {
    /// The source being read, opening the next one that opens if none is; `None` once all are
    /// read.
    fn open_current(&mut self) -> Option<Arc<File>> {
        if self.current.is_none() {
            let output = self.output.as_ref().map(AsFd::as_fd);
            let file = self.sources.open_next(output)?;
            self.regular = fd::is_regular_file(file.as_fd());
            self.watch = output.is_some_and(fd::is_pipe) && !self.regular;
            self.ready = false;
            self.current = Some(Arc::new(file));
        }
        self.current.clone()
    }
}

impl Input for FileInput {
    /// Moves on to the next source at each end; errors are reported and the source skipped.
    /// Fails only when the output is a pipe whose reader went away while this waited for input:
    /// a broken pipe, which the caller stops on as it would on a failed write.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        while let Some(file) = self.open_current() {
            let may_wait = self.watch && !std::mem::take(&mut self.ready);
            if let (true, Some(output)) = (may_wait, &self.output)
                && !fd::wait_readable_unless_reader_gone(file.as_fd(), output.as_fd())
            {
                return Err(Error::stdout_closed());
            }
            match self.sources.read_done(fd::read(&file, buf)) {
                Some(n) => return Ok(n),
                None => self.current = None,
            }
        }
        Ok(0)
    }

    fn waits_within(&mut self, timeout: Duration) -> bool {
        self.ready = match &self.current {
            Some(file) => fd::is_waiting_within(file.as_fd(), timeout),
            None => self.sources.has_more(),
        };
        self.ready
    }

    fn regular_file(&mut self) -> Option<Arc<File>> {
        let file = self.open_current()?;
        self.regular.then_some(file)
    }

    fn skip_source(&mut self, error: io::Error) {
        self.sources.read_done(Err(error));
        self.current = None;
    }

    fn has_waiting(&mut self) -> bool {
        self.waits_within(Duration::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::path::PathBuf;

    use super::*;

    /// A pipe's read end named as a FILE, as a shell's process substitution names it.
    fn pipe_as_file() -> (PathBuf, std::io::PipeReader, std::io::PipeWriter) {
        let (reader, writer) = std::io::pipe().unwrap();
        (
            PathBuf::from(format!("/dev/fd/{}", reader.as_raw_fd())),
            reader,
            writer,
        )
    }

    #[test]
    fn says_whether_input_is_waiting_and_reads_across_sources() {
        let (path, _reader, mut writer) = pipe_as_file();
        let file = std::env::temp_dir().join(format!("pipelines-input-{}", std::process::id()));
        std::fs::write(&file, b"from a file\n").unwrap();
        let mut input = FileInput::new(Sources::new(&[file.clone(), path]), None);
        assert!(input.has_waiting(), "a source is yet to be opened");
        let mut buf = [0; 64];
        assert_eq!(input.read(&mut buf).unwrap(), 12);
        assert!(input.has_waiting(), "the file's end, then the pipe");
        writer.write_all(b"piped").unwrap();
        assert_eq!(
            input.read(&mut buf).unwrap(),
            5,
            "the file ended, the pipe is read"
        );
        assert!(!input.has_waiting(), "the pipe is open and empty");
        drop(writer);
        assert!(input.has_waiting(), "the end is waiting");
        assert_eq!(input.read(&mut buf).unwrap(), 0);
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn a_waiting_read_stops_when_the_outputs_reader_goes() {
        let (path, _reader, _writer) = pipe_as_file();
        let (output_reader, output_writer) = std::io::pipe().unwrap();
        let mut input = FileInput::new(Sources::new(&[path]), Some(output_writer.into()));
        let closing = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(output_reader);
        });
        let error = input.read(&mut [0; 8]).unwrap_err();
        assert!(error.is_broken_pipe(), "{error}");
        closing.join().unwrap();
    }

    #[test]
    fn an_output_that_is_no_pipe_is_never_taken_for_a_gone_reader() {
        let (path, _reader, mut writer) = pipe_as_file();
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .unwrap();
        let mut input = FileInput::new(Sources::new(&[path]), Some(null.into()));
        writer.write_all(b"x").unwrap();
        assert_eq!(input.read(&mut [0; 8]).unwrap(), 1);
    }
}
