//! [`FileInput`]: stdin or FILEs, read synchronously as one stream, or a regular file in ranges:
//! the driver that carries out what [`Sources`] and [`Cuts`] say, blocking. [`open`] is how both
//! it and the async driver open a source.

use std::fs::File;
use std::io::{self, Seek, SeekFrom};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Failures};
use crate::frame::Chunk;
use crate::io::decode::{self, DecodedFile, Decoding};
use crate::io::fd;
use crate::io::ranges::{Cut, Cuts, Range, complete_line, line_end_after, read_through, size_hint};
use crate::io::sources::{How, Next, Opened, Source, Sources};
use crate::io::{Input, Piece, RangedInput};

/// Opens `source` for reading and finds what [`Sources::opened`] must know of it. Stdin is
/// duplicated into a plain `File`, so reads go straight to the descriptor, unbuffered, in the
/// sizes the caller asks for.
pub fn open(
    source: &Source,
    output: Option<BorrowedFd<'_>>,
    sniff: bool,
) -> io::Result<(File, Opened)> {
    let file = match source {
        Source::Stdin => io::stdin().as_fd().try_clone_to_owned().map(File::from)?,
        Source::File(path) => File::open(path)?,
    };
    let regular = fd::is_regular_file(file.as_fd());
    let opened = Opened {
        regular,
        is_output: output.is_some_and(|output| fd::is_output(file.as_fd(), output)),
        format: match sniff && regular {
            true => Some(decode::sniff_file(&file)?),
            false => None,
        },
    };
    Ok((file, opened))
}

/// The open source as a driver reads it: a handle to read (the source itself, or its decoder's
/// pipe), or a regular file's decoded bytes, handed over in memory.
#[derive(Debug)]
pub enum Reading<F> {
    /// Read with `read(2)`, or on the reactor.
    Handle(F),
    /// Taken from the decoder's thread, never waiting for input (a regular file's).
    Pieces(DecodedFile),
}

impl<F> Reading<F> {
    /// The handle, made into another kind of handle.
    pub fn map<G>(self, into: impl FnOnce(F) -> G) -> Reading<G> {
        match self {
            Reading::Handle(handle) => Reading::Handle(into(handle)),
            Reading::Pieces(pieces) => Reading::Pieces(pieces),
        }
    }

    /// The handle, if the source is read through one.
    pub fn handle(&self) -> Option<&F> {
        match self {
            Reading::Handle(handle) => Some(handle),
            Reading::Pieces(_) => None,
        }
    }
}

/// The source just opened, `opened`, as it is to be read: where [`Sources::how`] says
/// [`How::Decoded`], what its decoder, started on it, hands on, and the decoding, whose end the
/// reader tells with [`tell_read`].
pub fn decode_if_told(
    sources: &mut Sources,
    opened: Option<File>,
) -> (Option<Reading<File>>, Option<Decoding>) {
    let Some(file) = opened else {
        return (None, None);
    };
    let started = match sources.how() {
        Some(How::Decoded(None)) => {
            decode::decode(file).map(|(pipe, decoding)| (Reading::Handle(pipe), decoding))
        }
        Some(How::Decoded(Some(format))) => decode::decode_file(file, format)
            .map(|(pieces, decoding)| (Reading::Pieces(pieces), decoding)),
        _ => return (Some(Reading::Handle(file)), None),
    };
    match started {
        Ok((reading, decoding)) => (Some(reading), Some(decoding)),
        Err(error) => {
            sources.read(Err(error));
            (None, None)
        }
    }
}

/// Tells `sources` what a read of the open source returned ([`Sources::read`]'s answer); at the
/// end of a decoded source, how its decoding ended first.
pub fn tell_read(
    sources: &mut Sources,
    decoding: &mut Option<Decoding>,
    read: io::Result<usize>,
) -> Option<usize> {
    if matches!(read, Ok(0))
        && let Some(decoding) = decoding.take()
    {
        sources.decoded(decoding.finish());
    }
    sources.read(read)
}

/// The sources as one byte stream, read synchronously.
#[derive(Debug)]
pub struct FileInput {
    sources: Sources,
    /// The source [`Sources`] has open, if any; a file is shared with threads reading it at
    /// offsets.
    current: Option<Reading<Arc<File>>>,
    /// Where output goes: refused as input, and watched while a read waits.
    output: Option<OwnedFd>,
    /// Where a source that cannot be opened or read is told, before the next is read.
    failures: Failures,
    /// The open source's reading in ranges, while it lasts.
    cuts: Option<Cuts>,
    /// Where line ends are looked for.
    scratch: Vec<u8>,
    /// The decoding of the open source, when `-z` decodes it: `current` is then its pipe or its
    /// pieces.
    decoding: Option<Decoding>,
}

impl FileInput {
    /// `sources`, read while writing to `output`.
    pub fn new(mut sources: Sources, output: Option<OwnedFd>) -> Self {
        sources.output_is_pipe(output.as_ref().is_some_and(|fd| fd::is_pipe(fd.as_fd())));
        FileInput {
            sources,
            current: None,
            output,
            failures: Failures::default(),
            cuts: None,
            scratch: Vec::new(),
            decoding: None,
        }
    }

    /// The input, handing each failure that does not stop it to `failures` as it happens: they
    /// are kept in the input otherwise.
    pub fn handing_failures_to(mut self, failures: Failures) -> Self {
        self.failures = failures;
        self
    }

    /// Carries out what [`Sources`] says until it says to wait (when `wait` is false), read, or
    /// stop: the source to read, or `None` at the end.
    fn until_read(&mut self, wait: bool) -> Result<Option<&mut Reading<Arc<File>>>, Error> {
        loop {
            match self.sources.what_next() {
                Next::Open(source) => {
                    let output = self.output.as_ref().map(AsFd::as_fd);
                    let opened = open(&source, output, self.sources.decompresses());
                    let opened = self.sources.opened(opened);
                    let (file, decoding) = decode_if_told(&mut self.sources, opened);
                    let reading = file.map(|reading| reading.map(Arc::new));
                    (self.current, self.decoding) = (reading, decoding);
                }
                Next::Report(error) => self.failures.add(error),
                Next::Wait if wait => {
                    let gone = match (&self.current, &self.output) {
                        (Some(Reading::Handle(file)), Some(output)) => {
                            !fd::wait_readable_unless_reader_gone(file.as_fd(), output.as_fd())
                        }
                        // Nothing to watch: the read waits by itself.
                        _ => false,
                    };
                    self.sources.waited(gone);
                }
                Next::Wait | Next::Read => return Ok(self.current.as_mut()),
                Next::End => {
                    self.current = None;
                    return Ok(None);
                }
                Next::ReaderGone => return Err(Error::reader_gone()),
            }
        }
    }
}

impl Input for FileInput {
    /// Moves on to the next source at each end; a failure is handed to the input's [`Failures`]
    /// and its source skipped.
    /// Fails only when the output is a pipe whose reader went away while this waited for input:
    /// a broken pipe, which the caller stops on as it would on a failed write.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        while let Some(reading) = self.until_read(true)? {
            let read = match reading {
                Reading::Handle(file) => fd::read(file, buf),
                Reading::Pieces(pieces) => Ok(pieces.read(buf)),
            };
            if let Some(n) = tell_read(&mut self.sources, &mut self.decoding, read) {
                return Ok(n);
            }
        }
        Ok(0)
    }

    fn waits_within(&mut self, timeout: Duration) -> bool {
        if let Some(known) = self.sources.is_waiting() {
            return known;
        }
        let waiting = self
            .current
            .as_ref()
            .and_then(Reading::handle)
            .is_none_or(|file| fd::is_waiting_within(file.as_fd(), timeout));
        self.sources.polled(waiting);
        waiting
    }

    fn has_waiting(&mut self) -> bool {
        self.waits_within(Duration::ZERO)
    }
}

impl RangedInput for FileInput {
    /// A regular file with two chunks' worth or more left is read in ranges, as its [`Cuts`]
    /// say; anything else as a stream.
    fn next_piece(&mut self, size: usize, held: &mut Chunk) -> Result<Piece, Error> {
        if self.cuts.is_none() {
            let reading = self.until_read(false)?;
            let Some(file) = reading.and_then(|reading| reading.handle()).map(Arc::clone) else {
                return Ok(Piece::Stream);
            };
            if self.sources.how() != Some(How::File) {
                return Ok(Piece::Stream);
            }
            let Ok(start) = (&*file).stream_position() else {
                return Ok(Piece::Stream);
            };
            self.cuts = Cuts::new(start, size_hint(&file), size, !held.bytes().is_empty());
        }
        let file = self.current.as_ref().and_then(Reading::handle);
        let (Some(cuts), Some(file)) = (&mut self.cuts, file) else {
            return Ok(Piece::Stream);
        };
        loop {
            match cuts.next_cut() {
                Cut::CompleteLine { at } => match complete_line(file, at, held)? {
                    Ok((end, ended)) => {
                        cuts.completed(end, ended);
                        return Ok(Piece::Read((end - at) as usize));
                    }
                    Err(error) => cuts.failed(error),
                },
                Cut::FindEnd { from, within } => {
                    match line_end_after(file, from, &mut self.scratch, within) {
                        Ok(end) => cuts.found(end),
                        Err(error) => cuts.failed(error),
                    }
                }
                Cut::Range { at, len } => {
                    let file = Arc::clone(file);
                    return Ok(Piece::Range(Range { file, at, len }));
                }
                Cut::ReadThrough { at, size } => {
                    // Only whole lines are ever held here: the lines before were handed on.
                    debug_assert!(held.bytes().is_empty(), "a read through into a held line");
                    match held.refill(size, |buf| read_through(file, buf, size, at))? {
                        Ok(()) => {
                            let kept = held.bytes().len();
                            cuts.read_through(kept);
                            return Ok(Piece::Read(kept));
                        }
                        Err(error) => cuts.failed(error),
                    }
                }
                Cut::Stream { .. } => return Ok(Piece::RangesEnd),
            }
        }
    }

    fn ranges_read(&mut self, failure: Option<io::Error>) {
        let Some(cuts) = self.cuts.take() else {
            debug_assert!(false, "ranges read with none handed out");
            return;
        };
        let file = self.current.as_ref().and_then(Reading::handle);
        let went_on = cuts.finish(failure).and_then(|at| match file {
            Some(file) => (&**file).seek(SeekFrom::Start(at)).map(drop),
            None => Ok(()),
        });
        if let Err(error) = went_on {
            self.sources.read(Err(error));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::path::PathBuf;
    use std::sync::mpsc;

    use super::*;
    use crate::io::testing::{self, within};

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
        let file = testing::path("input");
        std::fs::write(&file, b"from a file\n").unwrap();
        let mut input = FileInput::new(Sources::new(&[file.clone(), path]), None);
        assert!(input.has_waiting(), "a source is yet to be opened");
        let mut buf = [0; 64];
        assert_eq!(input.read(&mut buf).unwrap(), 12);
        assert!(input.has_waiting(), "the file's end, then the pipe");
        writer.write_all(b"piped").unwrap();
        // Each read returns at once: input is there, or its end.
        let (read, mut input) = within("a read of waiting input", move || {
            (input.read(&mut buf).unwrap(), input)
        });
        assert_eq!(read, 5, "the file ended, the pipe is read");
        assert!(!input.has_waiting(), "the pipe is open and empty");
        drop(writer);
        assert!(input.has_waiting(), "the end is waiting");
        let end = within("a read of the end", move || {
            input.read(&mut [0; 64]).unwrap()
        });
        assert_eq!(end, 0);
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn a_waiting_read_stops_when_the_outputs_reader_goes() {
        let (path, _reader, _writer) = pipe_as_file();
        let (output_reader, output_writer) = std::io::pipe().unwrap();
        let (reader_id, id) = mpsc::channel();
        let reading = std::thread::spawn(move || {
            reader_id.send(testing::thread_id()).unwrap();
            let mut input = FileInput::new(Sources::new(&[path]), Some(output_writer.into()));
            input.read(&mut [0; 8])
        });
        testing::until_polling(id.recv().unwrap());
        drop(output_reader);
        let error = within("the waiting read", move || reading.join().unwrap()).unwrap_err();
        assert!(error.is_broken_pipe(), "{error}");
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
        let read = within("a read of waiting input", move || {
            input.read(&mut [0; 8]).unwrap()
        });
        assert_eq!(read, 1);
    }
}
