//! [`Driver`]: what the sync [`FileInput`](crate::io::FileInput) and the async
//! [`AsyncFileInput`](crate::async_io::AsyncFileInput) do alike to carry out what [`Sources`]
//! says: open each source (under `-z`, start its decoder), hand failures on, tell reads, waits and
//! polls, stop at the end. Each of the two keeps only how it waits and reads, blocking or
//! awaiting: quinn-proto's split, the rules as plain state and the drivers around them thin.
//! Under `-z` with more than one decoder, it also keeps the decodings of the FILEs ahead
//! ([`Ahead`]) and takes each at its FILE's turn, where a decoder would start, so that neither
//! driver's loop knows of them.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use crate::error::{Error, Failures};
use crate::io::ahead::{Ahead, Started};
use crate::io::open::{self, Opening};
use crate::io::sources::{How, Opened, Source, Sources, Step};
use decompressed::{self as decode, DecodedFile, Decoding, SpareBuffers};
use fd_facts as fd;

/// Opens `source` for reading and finds what [`Sources::opened`] must know of it.
fn open(
    source: &Source,
    output: Option<&fd::Output>,
    sniff: bool,
) -> io::Result<(Opening, Opened)> {
    let opening = open::open(source, sniff, false)?;
    let (metadata, format) = match &opening {
        Opening::File(_, metadata) => (metadata, None),
        Opening::Regular(_, metadata, format) => (metadata, Some(*format)),
    };
    let opened = Opened {
        regular: metadata.is_file(),
        is_output: output.is_some_and(|output| output.is_read_by(metadata)),
        format,
    };
    Ok((opening, opened))
}

/// The open source as a driver reads it: a handle to read (the source itself, or its decoder's
/// pipe), or a regular file's decoded bytes, handed over in memory.
#[derive(Debug)]
pub enum Reading<F> {
    /// Read with `read(2)`, or on the reactor.
    Handle(F),
    /// Taken from the decoder's thread, never waiting for input (a regular file's).
    Decoded(DecodedFile),
}

impl<F> Reading<F> {
    /// The handle, if the source is read through one.
    pub fn handle(&self) -> Option<&F> {
        match self {
            Reading::Handle(handle) => Some(handle),
            Reading::Decoded(_) => None,
        }
    }
}

/// What [`Driver::proceed`] leaves to its driver: the wait or the read that only the driver knows
/// how to do, or the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// Wait until the open source has input, or the output's reader has gone; then tell which
    /// with [`Driver::waited`].
    Wait,
    /// Read from [`Driver::current`], then tell what came with [`Driver::tell_read`].
    Read,
    /// Every source is read.
    End,
}

/// The sources, the one open and how it is read, where failures go: all of a driver of
/// [`Sources`] but its waits and reads. `F` is the driver's handle on an open source.
#[derive(Debug)]
pub struct Driver<F> {
    sources: Sources,
    /// The source [`Sources`] has open, if any.
    current: Option<Reading<F>>,
    /// The decoding of the open source, when `-z` decodes it: `current` is then its pipe or its
    /// pieces.
    decoding: Option<Decoding>,
    /// The sources after the open one decoded ahead, under `-z` with more than one decoder.
    ahead: Ahead,
    /// The decoded buffers every decoding of this run makes its own from and keeps when done:
    /// the run's, freed with it.
    spares: SpareBuffers,
    /// Makes an opened source (or its decoder's pipe) the driver's handle.
    handle: fn(File) -> F,
    /// Where output goes: refused as input, and watched while a read waits.
    output: Option<fd::Output>,
    /// Where a source that cannot be opened or read is told, before the next is read.
    failures: Failures,
}

impl<F> Driver<F> {
    /// `sources`, read while writing to `output`, each opened source read through `handle`.
    /// Failures are kept until [`hand_failures_to`](Self::hand_failures_to).
    pub fn new(mut sources: Sources, output: Option<OwnedFd>, handle: fn(File) -> F) -> Self {
        sources.output_is_pipe(output.as_ref().is_some_and(|fd| fd::is_pipe(fd.as_fd())));
        let spares = SpareBuffers::default();
        Driver {
            ahead: Ahead::new(
                sources.decoder_threads(),
                sources.decoded_here(),
                spares.clone(),
            ),
            spares,
            sources,
            current: None,
            decoding: None,
            handle,
            output: output.map(fd::Output::new),
            failures: Failures::default(),
        }
    }

    /// Hands each failure that does not stop the input to `failures` as it happens.
    pub fn hand_failures_to(&mut self, failures: Failures) {
        self.failures = failures;
    }

    /// Carries out what [`Sources`] says (open, report) until it says to wait, read or stop.
    /// Fails only when the output's reader went away while a read waited: a broken pipe, which
    /// the caller stops on as it would on a failed write.
    pub fn proceed(&mut self) -> Result<Left, Error> {
        loop {
            match self.sources.what_next() {
                Step::Open(source) => {
                    let ahead = self.ahead.take_turn();
                    let opened = open(&source, self.output.as_ref(), self.sources.decompresses());
                    let opened = self.sources.opened(opened);
                    match self.sources.how() {
                        Some(How::File) => self.ahead.turn_found(false),
                        Some(How::Decoded(Some(_))) => self.ahead.turn_found(true),
                        _ => {}
                    }
                    (self.current, self.decoding) = self.decode_if_told(opened, ahead);
                    self.look_ahead();
                }
                Step::Report(error) => self.failures.add(error),
                Step::Wait => return Ok(Left::Wait),
                Step::Read => return Ok(Left::Read),
                Step::End => {
                    self.current = None;
                    return Ok(Left::End);
                }
                Step::ReaderGone => return Err(Error::reader_gone()),
            }
        }
    }

    /// The source just opened, `opened`, as it is to be read: where [`Sources::how`] says
    /// [`How::Decoded`], what its decoder hands on, and the decoding: its decoding `ahead` if
    /// that was of the file opened now, else a decoder started on it.
    fn decode_if_told(
        &mut self,
        opened: Option<Opening>,
        ahead: Option<Started>,
    ) -> (Option<Reading<F>>, Option<Decoding>) {
        let started = match (opened, self.sources.how()) {
            (None, _) => return (None, None),
            (Some(Opening::Regular(regular, metadata, _)), Some(How::Decoded(Some(format)))) => {
                match ahead.and_then(|ahead| ahead.if_still(&metadata, format)) {
                    Some(decoded) => Ok(decoded),
                    None => decode::decode_file(
                        regular,
                        format,
                        decode::BUFFERS,
                        self.sources.decoder_threads(),
                        self.sources.decoded_here(),
                        &self.spares,
                    ),
                }
                .map(|(pieces, decoding)| (Reading::Decoded(pieces), Some(decoding)))
            }
            (Some(opening), how) => {
                let file = match opening {
                    Opening::File(file, _) => file,
                    Opening::Regular(regular, ..) => regular.file,
                };
                match how {
                    Some(How::Decoded(None)) => decode::decode(
                        file,
                        self.sources.decoder_threads(),
                    )
                    .map(|(pipe, decoding)| (Reading::Handle((self.handle)(pipe)), Some(decoding))),
                    _ => Ok((Reading::Handle((self.handle)(file)), None)),
                }
            }
        };
        match started {
            Ok((reading, decoding)) => (Some(reading), decoding),
            Err(error) => {
                self.sources.read(Err(error));
                (None, None)
            }
        }
    }

    /// The open source, if any.
    pub fn current(&self) -> Option<&Reading<F>> {
        self.current.as_ref()
    }

    /// The open source, to read from.
    pub fn current_mut(&mut self) -> Option<&mut Reading<F>> {
        self.current.as_mut()
    }

    /// How the open source is read, if one is open.
    pub fn how(&self) -> Option<How> {
        self.sources.how()
    }

    /// Where output goes, to watch while a read waits.
    pub fn output(&self) -> Option<BorrowedFd<'_>> {
        self.output.as_ref().map(fd::Output::fd)
    }

    /// The driver waited as [`Left::Wait`] said: for input, unless `reader_gone`.
    pub fn waited(&mut self, reader_gone: bool) {
        self.sources.waited(reader_gone);
    }

    /// Tells what a read of the open source returned, or why reading it otherwise (in ranges)
    /// failed; at the end of a decoded source, how its decoding ended first. Returns the bytes
    /// read, or `None` when the source has ended or failed, and the driver is to ask
    /// [`proceed`](Self::proceed) again.
    pub fn tell_read(&mut self, read: io::Result<usize>) -> Option<usize> {
        if matches!(read, Ok(0))
            && let Some(decoding) = self.decoding.take()
        {
            self.sources.decoded(decoding.finish());
        }
        self.look_ahead();
        self.sources.read(read)
    }

    /// Starts decoding ahead where a decoder is free ([`Ahead::look`]): after every read, so that
    /// one that ends while the FILE read is being read is followed at once.
    fn look_ahead(&mut self) {
        let read_decoding = self.decoding.as_ref().is_some_and(|read| !read.has_ended());
        self.ahead
            .look(self.sources.ahead(), self.output.as_ref(), read_decoding);
    }

    /// Whether a read now would return at once: where [`Sources`] knows, what it says; else what
    /// `poll` finds of the open source's handle, told to [`Sources::polled`].
    pub fn is_ready(&mut self, poll: impl FnOnce(&F) -> bool) -> bool {
        if let Some(known) = self.sources.is_ready() {
            return known;
        }
        let ready = self
            .current
            .as_ref()
            .and_then(Reading::handle)
            .is_none_or(poll);
        self.sources.polled(ready);
        ready
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::sync::mpsc;

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::*;
    use crate::io::testing;

    /// A driver of `sources` whose handle is the file itself, its failures kept.
    fn driver(sources: Sources, output: Option<OwnedFd>) -> Driver<File> {
        Driver::new(sources, output, |file| file)
    }

    /// Everything `driver` reads, a few bytes a read, as a driver that never waits reads it.
    fn read_all(driver: &mut Driver<File>) -> Vec<u8> {
        let mut bytes = Vec::new();
        loop {
            match driver.proceed().unwrap() {
                Left::Wait => panic!("a wait with no pipe to watch"),
                Left::Read => {
                    let mut buf = [0; 3];
                    let read = match driver.current_mut().unwrap() {
                        Reading::Handle(file) => file.read(&mut buf),
                        Reading::Decoded(pieces) => Ok(pieces.read(&mut buf)),
                    };
                    if let Some(n) = driver.tell_read(read) {
                        bytes.extend_from_slice(&buf[..n]);
                    }
                }
                Left::End => return bytes,
            }
        }
    }

    /// The failures `driver` kept, as told.
    fn kept(driver: &Driver<File>) -> Vec<String> {
        match &driver.failures {
            Failures::Kept(kept) => kept.iter().map(ToString::to_string).collect(),
            Failures::HandedOn(_) => panic!("failures handed on"),
        }
    }

    #[test]
    fn opens_each_source_in_turn_reporting_and_skipping_failures() {
        let files = testing::files_and_failures("driver");
        let mut driver = driver(Sources::new(&files), None);
        let (tell, told) = mpsc::channel();
        driver.hand_failures_to(Failures::handed_to(move |error| {
            tell.send(error.to_string()).unwrap();
        }));
        assert_eq!(read_all(&mut driver), b"one\ntwo\n");
        assert!(driver.current().is_none(), "nothing is open at the end");
        let (missing, dir) = (files[1].display(), files[2].display());
        assert_eq!(
            told.try_iter().collect::<Vec<_>>(),
            [
                format!("opening {missing}: No such file or directory (os error 2)"),
                format!("reading {dir}: Is a directory (os error 21)"),
            ]
        );
        std::fs::remove_dir_all(&files[2]).unwrap();
    }

    #[test]
    fn with_z_compressed_files_and_streams_are_read_decoded_and_a_corrupt_one_reported() {
        let dir = testing::path("driver-z");
        std::fs::create_dir_all(&dir).unwrap();
        let mut gzip = GzEncoder::new(Vec::new(), Compression::default());
        gzip.write_all(b"decoded\n").unwrap();
        let gzip = gzip.finish().unwrap();
        let mut corrupt = gzip.clone();
        corrupt.truncate(gzip.len() - 4);
        let (pipe, _reader, mut writer) = testing::pipe_as_file();
        writer.write_all(&gzip).unwrap();
        drop(writer);
        let files = [dir.join("gz"), pipe, dir.join("plain"), dir.join("corrupt")];
        std::fs::write(&files[0], &gzip).unwrap();
        std::fs::write(&files[2], b"plain\n").unwrap();
        std::fs::write(&files[3], &corrupt).unwrap();
        let mut sources = Sources::new(&files);
        sources.decompress(true);
        let mut driver = driver(sources, None);
        assert_eq!(read_all(&mut driver), b"decoded\ndecoded\nplain\ndecoded\n");
        let told = kept(&driver);
        assert_eq!(told.len(), 1, "{told:?}");
        let corrupt = files[3].display().to_string();
        assert!(told[0].starts_with(&format!("{corrupt}: decompressing: ")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_decoder_ahead_starts_after_a_read_once_the_one_read_has_ended() {
        let dir = testing::path("driver-ahead");
        std::fs::create_dir_all(&dir).unwrap();
        // a decodes to more than it may hold at its turn (1 MiB), so its decoding is under way
        // until most of it is read; b to more than its share ahead (16 MiB of two decoders'), so
        // its decoding stays under way throughout.
        let a = 2 << 20;
        let files = [("a.gz", a), ("b.gz", 17 << 20), ("c.gz", 1)].map(|(name, size)| {
            let mut gzip = GzEncoder::new(Vec::new(), Compression::default());
            gzip.write_all(&vec![b'\n'; size]).unwrap();
            std::fs::write(dir.join(name), gzip.finish().unwrap()).unwrap();
            dir.join(name)
        });
        // Under a deadline: a decoder that never ends would hang `ends` and the reads.
        testing::within("reading a and looking ahead", move || {
            let mut sources = Sources::new(&files);
            sources.decompress(true);
            sources.decoders(2);
            // Each on a thread, as a larger file would be.
            sources.decode_here(0);
            let mut driver = driver(sources, None);
            assert_eq!(driver.proceed().unwrap(), Left::Read);
            assert_eq!(driver.ahead.looked_at(), 1, "a's decoder and b's");
            let read = |driver: &mut Driver<File>, most: usize| {
                let Some(Reading::Decoded(pieces)) = driver.current_mut() else {
                    panic!("a not decoded in memory");
                };
                let read = pieces.read(&mut vec![0; most]);
                driver.tell_read(Ok(read)).unwrap()
            };
            // All of a but its last byte: its decoder has handed on every piece and ends.
            let mut left = a - 1;
            while left > 0 {
                left -= read(&mut driver, left.min(64 << 10));
            }
            assert!(testing::ends(driver.decoding.as_ref().unwrap()));
            assert_eq!(read(&mut driver, 1), 1);
            assert_eq!(
                driver.ahead.looked_at(),
                2,
                "a's has ended and b's is under way: c's starts"
            );
        });
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// One read of the open source, told: the bytes read, or `None` at its end.
    fn read_once(driver: &mut Driver<File>) -> Option<usize> {
        let Some(Reading::Handle(file)) = driver.current_mut() else {
            panic!("no file open");
        };
        let read = file.read(&mut [0; 8]);
        driver.tell_read(read)
    }

    #[test]
    fn a_poll_is_asked_only_where_the_state_cannot_tell_and_is_kept_until_a_read() {
        let (pipe, _reader, mut writer) = testing::pipe_as_file();
        let file = testing::path("driver-ready");
        std::fs::write(&file, b"x").unwrap();
        let mut driver = driver(Sources::new(&[file.clone(), pipe]), None);
        let unasked = |_: &File| panic!("polled where the state knows");
        assert!(driver.is_ready(unasked), "a source is yet to open");
        assert_eq!(driver.proceed().unwrap(), Left::Read);
        assert!(driver.is_ready(unasked), "a regular file always is");
        assert_eq!(read_once(&mut driver), Some(1));
        assert_eq!(read_once(&mut driver), None, "the file's end");
        assert_eq!(driver.proceed().unwrap(), Left::Read, "the pipe, unwatched");
        assert!(!driver.is_ready(|_| false), "as the poll found");
        assert!(driver.is_ready(|_| true), "as the poll found");
        assert!(driver.is_ready(unasked), "what the last poll found is kept");
        writer.write_all(b"y").unwrap();
        assert_eq!(read_once(&mut driver), Some(1));
        assert!(!driver.is_ready(|_| false), "a read forgets the poll");
        drop(writer);
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn a_pipe_read_with_a_pipe_output_waits_and_stops_if_the_reader_went() {
        let (pipe, _reader, _writer) = testing::pipe_as_file();
        let (_output_reader, output) = std::io::pipe().unwrap();
        let mut driver = driver(Sources::new(&[pipe]), Some(output.into()));
        assert_eq!(driver.proceed().unwrap(), Left::Wait);
        assert!(driver.output().is_some(), "to watch while waiting");
        driver.waited(false);
        assert_eq!(driver.proceed().unwrap(), Left::Read, "input came");
        assert_eq!(driver.how(), Some(How::Stream));
        driver.tell_read(Ok(1));
        assert_eq!(driver.proceed().unwrap(), Left::Wait);
        driver.waited(true);
        assert!(driver.proceed().unwrap_err().is_broken_pipe());
    }
}
