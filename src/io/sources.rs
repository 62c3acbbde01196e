//! The input side's rules as plain state, with no I/O: which source to open next, what a failure
//! is reported as, when a read may wait and what for, and when the input is over.
//!
//! [`Sources`] is the input side of every binary, as [`Gather`](crate::io::gather::Gather) is the
//! output side: told what happened (a source opened or not, what a read returned, what a wait
//! ended on), it says what to do next ([`Step`]), and the sync
//! [`FileInput`](crate::io::FileInput) and async [`AsyncFileInput`](crate::async_io::AsyncFileInput)
//! only carry that out. The rules, `cat`'s where the contract follows it:
//!
//! - FILE arguments are read one after another as one stream; `-` is stdin, none at all means
//!   stdin; a FILE named twice is read twice.
//! - A source that cannot be opened or read is reported and skipped (the binaries then end with
//!   status 1); the rest is still read.
//! - A source that is the output itself
//!   ([`Output::is_read_by`](fd_facts::Output::is_read_by)) is refused, as `cat` refuses it:
//!   reading it would never end, or read back its own output.
//! - A read that may wait watches the output meanwhile when it is a pipe, the one kind of output
//!   whose reader can go away: the wait ends on input or on the reader going, and then the input
//!   stops with a broken pipe, so `(echo a; sleep 30) | BIN | head -1` ends when `head` does. A
//!   regular file never waits, decoded (`-z`) or not, and a read that a poll just found ready
//!   need not watch.
//! - Under `-z` with more than one decoder, the next sources may be decoded ahead
//!   ([`Sources::ahead`]); each is still opened, told and read at its turn.
//!
//! A driver's loop ([`Driver`](crate::io::driver::Driver) holds what both drivers do alike): ask
//! [`Sources::what_next`]; on [`Step::Open`] open the source and tell [`Sources::opened`]; on [`Step::Report`] hand
//! the error to the driver's `Failures` (`error.rs`); on [`Step::Wait`] wait for either event (the
//! sync driver with
//! [`fd::wait_readable_unless_reader_gone`](fd_facts::wait_readable_unless_reader_gone), the async
//! one on the reactor) and tell [`Sources::waited`]; on [`Step::Read`] read and tell
//! [`Sources::read`]; stop at [`Step::End`] or [`Step::ReaderGone`]. Between reads, "would a
//! read return at once?" (asked by [`gather`](crate::io::gather)'s rule) is
//! [`Sources::is_ready`], or a poll the driver tells [`Sources::polled`].

use std::io;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::quote::quote;
use decompressed::{Failure, Format};

/// Where input comes from: one of these per FILE argument, or stdin alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Standard input: no FILE given, or `-`.
    Stdin,
    /// A FILE argument, opened when its turn comes.
    File(PathBuf),
}

impl Source {
    /// How messages name this source: `stdin`, or the FILE quoted so it stays on one line.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "stdin".to_owned(),
            Source::File(path) => quote(path.as_os_str()),
        }
    }
}

/// What the driver found on opening a source, told to [`Sources::opened`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opened {
    /// The source is a regular file: a read of it never waits.
    pub regular: bool,
    /// Reading the source would read what is written to the output.
    pub is_output: bool,
    /// What a regular file's first bytes say it holds, sniffed only where the input decompresses
    /// ([`Sources::decompresses`]).
    pub format: Option<Format>,
}

/// What the driver of a [`Sources`] must do next.
#[derive(Debug)]
pub enum Step {
    /// Open this source, then tell what was found with [`Sources::opened`].
    Open(Source),
    /// Report this failure and ask again: its source is skipped.
    Report(Error),
    /// Wait until the open source has input (or its end), or the output's reader has gone, then
    /// tell which with [`Sources::waited`].
    Wait,
    /// Read from the open source, then tell what came with [`Sources::read`].
    Read,
    /// Every source is read: the input is at its end.
    End,
    /// The output's reader went away while input was awaited: stop, as a failed write would.
    ReaderGone,
}

/// How an open source is read: the one decision each kind of source adds to, made when it opens
/// ([`Sources::opened`], from what [`Opened`] says). A new kind (a compressed source, read through
/// its decoder) is a variant here and a fact in [`Opened`]: only a `File` is ever cut into
/// ranges, and only what [`How::may_wait`] is waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// As it comes: a pipe, a terminal, a device. A read may wait.
    Stream,
    /// A regular file: a read never waits, and other threads may read it in ranges at offsets
    /// ([`ranges`](crate::io::ranges)) while the stream goes on from the file's own offset.
    File,
    /// `-z`: through a decoder on a thread of its own, whose end is told with
    /// [`Sources::decoded`]. A regular file, its format sniffed (`Some`), is never live: its
    /// decoded bytes come in memory ([`decode::decode_file`](decompressed::decode_file)),
    /// and a read never waits for more than the decoder's next piece, as a file's read waits
    /// for the disk. A stream (`None`, for the decoder to sniff) is read as a stream from the
    /// decoder's pipe ([`decode::decode`](decompressed::decode)), where live input waits.
    Decoded(Option<Format>),
}

impl How {
    /// Whether a read may wait for input that has not come, and the output's reader is to be
    /// watched meanwhile: a stream's, decoded or not; never a regular file's.
    pub fn may_wait(self) -> bool {
        !matches!(self, How::File | How::Decoded(Some(_)))
    }
}

/// The source being read and what is known of it.
#[derive(Debug)]
struct Current {
    source: Source,
    how: How,
    /// A poll found input since the last read: the next read returns at once.
    ready: bool,
}

/// The sources not yet read, the one being read, and what the driver is to do next.
#[derive(Debug)]
pub struct Sources {
    /// Sources not yet opened, in reverse order, so the next one is popped off the end.
    unopened: Vec<Source>,
    /// The source being opened, between [`Step::Open`] and [`Sources::opened`].
    opening: Option<Source>,
    /// The source open now, if any.
    current: Option<Current>,
    /// A failure the driver is to report before anything else.
    to_report: Option<Error>,
    /// Whether the output is a pipe, whose reader a read that may wait must watch.
    output_is_pipe: bool,
    /// The output's reader has gone: the input is over.
    reader_gone: bool,
    /// `-z`: compressed sources are decoded.
    decompress: bool,
    /// Under `-z`, how many sources may be decoding at once: the one read and those after it.
    decoders: NonZeroUsize,
    /// Under `-z`, the most compressed bytes of a regular file decoded whole, at its turn on the
    /// reading thread or ahead of it with the small FILEs.
    decoded_here: u64,
}

impl Sources {
    /// The sources named by FILE arguments; no arguments means stdin.
    pub fn new(files: &[PathBuf]) -> Self {
        let mut unopened: Vec<Source> = files
            .iter()
            .map(|file| match file.as_path() == Path::new("-") {
                true => Source::Stdin,
                false => Source::File(file.clone()),
            })
            .collect();
        if unopened.is_empty() {
            unopened.push(Source::Stdin);
        }
        unopened.reverse();
        Sources {
            unopened,
            opening: None,
            current: None,
            to_report: None,
            output_is_pipe: false,
            reader_gone: false,
            decompress: false,
            decoders: NonZeroUsize::MIN,
            decoded_here: decompressed::DECODED_HERE,
        }
    }

    /// Tells whether the output is a pipe: its reader is then watched while a read may wait.
    pub fn output_is_pipe(&mut self, is_pipe: bool) {
        self.output_is_pipe = is_pipe;
    }

    /// With `decompress` (`-z`), each source that begins as a compressed format does
    /// ([`decode`](crate::io::decode)) is decoded, and any other is read as it is: a regular
    /// file is sniffed when it opens and, when compressed, decoded in memory as a whole (never
    /// read in ranges); a stream, whose bytes can be read only once, goes through the decoder's
    /// pipe, the decoder sniffing it and passing plain bytes on.
    pub fn decompress(&mut self, decompress: bool) {
        self.decompress = decompress;
    }

    /// Under `-z`, lets up to `decoders` sources (at least one) decode at once (`--decoders`):
    /// the one read, and the [`ahead`](Self::ahead) of it.
    pub fn decoders(&mut self, decoders: usize) {
        self.decoders = NonZeroUsize::new(decoders).unwrap_or(NonZeroUsize::MIN);
    }

    /// Under `-z`, decodes a compressed regular file of up to `bytes` whole, at its turn on the
    /// reading thread or ahead of it on the thread small FILEs share, rather than on a thread of
    /// its own ([`DECODED_HERE`](decompressed::DECODED_HERE) unless told): set only by the
    /// tests, which decode small files on threads of their own.
    #[cfg(test)]
    pub fn decode_here(&mut self, bytes: u64) {
        self.decoded_here = bytes;
    }

    /// The most compressed bytes of a regular file decoded whole.
    pub fn decoded_here(&self) -> u64 {
        self.decoded_here
    }

    /// How many threads a FILE decoded at its turn may decode its parts on (zstd frames, BGZF
    /// members, xz blocks: CONTRACT §12.4): `--decoders`. A FILE decoded
    /// [`ahead`](Self::ahead) decodes on one, beside the one read.
    pub fn decoder_threads(&self) -> NonZeroUsize {
        self.decoders
    }

    /// The sources after the one opening that may be decoded ahead, in order: under `-z` with
    /// more than one decoder the next `decoders` (as many decoders ahead as could all be busy
    /// once the one read has ended), or [`QUEUED`](decompressed::QUEUED) if more (as many
    /// small FILEs as are decoded ahead on one thread), else none. Which of them are decoded ahead
    /// (compressed regular files only), and when, is for the driver to find, and nothing it finds
    /// is reported: each is opened again at its turn, and only then told to
    /// [`opened`](Self::opened).
    pub fn ahead(&self) -> impl Iterator<Item = &Source> {
        let window = match self.decompress && self.decoders.get() > 1 {
            true => self.decoders.get().max(decompressed::QUEUED),
            false => 0,
        };
        self.unopened.iter().rev().take(window)
    }

    /// Whether a regular file's first bytes are to be sniffed when it opens ([`Opened::format`]).
    pub fn decompresses(&self) -> bool {
        self.decompress
    }

    /// What the driver must do now.
    pub fn what_next(&mut self) -> Step {
        if let Some(error) = self.to_report.take() {
            return Step::Report(error);
        }
        if self.reader_gone {
            return Step::ReaderGone;
        }
        match &self.current {
            Some(current) if self.output_is_pipe && current.how.may_wait() && !current.ready => {
                Step::Wait
            }
            Some(_) => Step::Read,
            None => match self.unopened.pop() {
                Some(source) => {
                    self.opening = Some(source.clone());
                    Step::Open(source)
                }
                None => Step::End,
            },
        }
    }

    /// The driver tried to open the source of [`Step::Open`]: `opening` is its handle and what
    /// it found, or why it failed. Returns the handle to read, or `None` when the source is
    /// skipped (and a failure is to be reported).
    pub fn opened<F>(&mut self, opening: io::Result<(F, Opened)>) -> Option<F> {
        let Some(source) = self.opening.take() else {
            debug_assert!(false, "a source opened with none being opened");
            return None;
        };
        match opening {
            Ok((_, opened)) if opened.is_output => {
                let error = io::Error::other("input file is output file");
                self.to_report = Some(Error::new(source.name(), error));
                None
            }
            Ok((handle, opened)) => {
                let how = match (opened.regular, self.decompress, opened.format) {
                    (true, true, Some(format)) if format != Format::Plain => {
                        How::Decoded(Some(format))
                    }
                    (true, _, _) => How::File,
                    (false, true, _) => How::Decoded(None),
                    (false, false, _) => How::Stream,
                };
                self.current = Some(Current {
                    source,
                    how,
                    ready: false,
                });
                Some(handle)
            }
            Err(error) => {
                self.to_report = Some(Error::new(format!("opening {}", source.name()), error));
                None
            }
        }
    }

    /// A decoded source's pipe ended, and decoding with it, as `ended`: a failure is reported as
    /// the source's. Then tell the end with [`read`](Self::read).
    pub fn decoded(&mut self, ended: Result<(), Failure>) {
        let Some(current) = &self.current else {
            return;
        };
        // Named only on a failure: quoting every FILE's name cost a thousand small FILEs 1 % more.
        let name = || current.source.name();
        self.to_report = match ended {
            Ok(()) => return,
            Err(Failure::Reading(error)) => Some(Error::new(format!("reading {}", name()), error)),
            Err(Failure::Decompressing(error)) => {
                Some(Error::new(format!("{}: decompressing", name()), error))
            }
        };
    }

    /// The driver waited as [`Step::Wait`] said: for input, unless `reader_gone`.
    pub fn waited(&mut self, reader_gone: bool) {
        self.reader_gone = reader_gone;
        self.polled(true);
    }

    /// The driver read from the open source, or gave it up after reading it otherwise (in
    /// ranges) failed. Returns the bytes read, or `None` when the source has ended or failed
    /// (a failure is to be reported), and the driver is to ask again.
    pub fn read(&mut self, read: io::Result<usize>) -> Option<usize> {
        let Some(current) = self.current.as_mut() else {
            debug_assert!(false, "a read told with no source open: {read:?}");
            return None;
        };
        current.ready = false;
        match read {
            Ok(0) => {}
            Ok(n) => return Some(n),
            Err(error) => {
                let what = format!("reading {}", current.source.name());
                self.to_report = Some(Error::new(what, error));
            }
        }
        self.current = None;
        None
    }

    /// Whether a read now would return at once, where the state knows: a regular file's always
    /// does, and with no source open the read opens the next or finds the end. `None` when only
    /// a poll of the open source can tell; the driver tells what it found with
    /// [`polled`](Self::polled).
    pub fn is_ready(&self) -> Option<bool> {
        match &self.current {
            Some(current) if !current.how.may_wait() || current.ready => Some(true),
            Some(_) => None,
            None => Some(true),
        }
    }

    /// A poll of the open source found it ready (input or its end there), or not.
    pub fn polled(&mut self, ready: bool) {
        if let Some(current) = &mut self.current {
            current.ready = ready;
        }
    }

    /// How the open source is read, if one is open.
    pub fn how(&self) -> Option<How> {
        self.current.as_ref().map(|current| current.how)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PIPE: Opened = Opened {
        regular: false,
        is_output: false,
        format: None,
    };
    const FILE: Opened = Opened {
        regular: true,
        is_output: false,
        format: None,
    };

    fn sources(files: &[&str]) -> Sources {
        Sources::new(&files.iter().map(PathBuf::from).collect::<Vec<_>>())
    }

    /// Opens the next source, which must be `name`, as `opened`; returns the handle kept.
    fn open(sources: &mut Sources, name: &str, opened: io::Result<Opened>) -> Option<&'static str> {
        match sources.what_next() {
            Step::Open(source) => assert_eq!(source.name(), name),
            other => panic!("{other:?} instead of opening {name}"),
        }
        sources.opened(opened.map(|opened| ("handle", opened)))
    }

    /// The name of what `sources` says to do next.
    fn next(sources: &mut Sources) -> String {
        format!("{:?}", sources.what_next())
    }

    fn reported(sources: &mut Sources) -> String {
        match sources.what_next() {
            Step::Report(error) => error.to_string(),
            other => panic!("{other:?} instead of a report"),
        }
    }

    #[test]
    fn no_files_is_stdin_dash_is_stdin_and_a_file_twice_is_read_twice() {
        let mut none = sources(&[]);
        assert_eq!(open(&mut none, "stdin", Ok(PIPE)), Some("handle"));
        let mut named = sources(&["a", "-", "a"]);
        for name in ["a", "stdin", "a"] {
            open(&mut named, name, Ok(FILE));
            assert_eq!(next(&mut named), "Read");
            assert_eq!(named.read(Ok(0)), None, "ended: the next is opened");
        }
        assert_eq!(next(&mut named), "End");
        assert_eq!(next(&mut named), "End", "and stays at its end");
    }

    #[test]
    fn failures_are_reported_and_the_rest_is_read() {
        let mut sources = sources(&["missing", "dir", "ok"]);
        let missing = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(open(&mut sources, "missing", Err(missing)), None);
        assert!(reported(&mut sources).starts_with("opening missing: "));
        assert_eq!(open(&mut sources, "dir", Ok(FILE)), Some("handle"));
        assert_eq!(next(&mut sources), "Read");
        let directory = io::Error::from_raw_os_error(21);
        assert_eq!(sources.read(Err(directory)), None);
        assert_eq!(
            reported(&mut sources),
            "reading dir: Is a directory (os error 21)"
        );
        open(&mut sources, "ok", Ok(FILE));
        assert_eq!(sources.read(Ok(3)), Some(3));
        assert_eq!(sources.read(Ok(0)), None);
        assert_eq!(next(&mut sources), "End");
    }

    #[test]
    fn a_source_that_is_the_output_is_refused() {
        let mut sources = sources(&["self", "other"]);
        let is_output = Opened {
            regular: true,
            is_output: true,
            format: None,
        };
        assert_eq!(open(&mut sources, "self", Ok(is_output)), None);
        assert_eq!(reported(&mut sources), "self: input file is output file");
        assert_eq!(open(&mut sources, "other", Ok(FILE)), Some("handle"));
    }

    #[test]
    fn a_read_that_may_wait_watches_a_pipe_output() {
        let mut unwatched = sources(&[]);
        open(&mut unwatched, "stdin", Ok(PIPE));
        assert_eq!(next(&mut unwatched), "Read", "no pipe to watch");
        let mut watched = sources(&["file", "-"]);
        watched.output_is_pipe(true);
        open(&mut watched, "file", Ok(FILE));
        assert_eq!(next(&mut watched), "Read", "a file never waits");
        watched.read(Ok(0));
        open(&mut watched, "stdin", Ok(PIPE));
        assert_eq!(next(&mut watched), "Wait");
        watched.waited(false);
        assert_eq!(next(&mut watched), "Read", "input came");
        watched.read(Ok(1));
        assert_eq!(next(&mut watched), "Wait", "each read may wait");
        watched.waited(true);
        assert_eq!(next(&mut watched), "ReaderGone");
        assert_eq!(next(&mut watched), "ReaderGone", "and stays over");
    }

    #[test]
    fn a_poll_that_found_input_spares_the_wait() {
        let mut sources = sources(&["-", "file"]);
        sources.output_is_pipe(true);
        assert_eq!(sources.is_ready(), Some(true), "a source is yet to open");
        open(&mut sources, "stdin", Ok(PIPE));
        assert_eq!(sources.is_ready(), None, "only a poll can tell");
        sources.polled(true);
        assert_eq!(sources.is_ready(), Some(true));
        assert_eq!(next(&mut sources), "Read");
        sources.read(Ok(5));
        assert_eq!(sources.is_ready(), None, "the read used what was found");
        sources.polled(false);
        assert_eq!(next(&mut sources), "Wait");
        sources.read(Ok(0));
        open(&mut sources, "file", Ok(FILE));
        assert_eq!(sources.is_ready(), Some(true), "a regular file always is");
        assert_eq!(sources.how(), Some(How::File));
        sources.read(Ok(0));
        assert_eq!(sources.is_ready(), Some(true), "the end comes at once");
        assert_eq!(sources.how(), None);
    }

    #[test]
    fn with_z_compressed_files_and_every_stream_go_through_the_decoder() {
        let gzip = Opened {
            format: Some(Format::Gzip),
            ..FILE
        };
        let plain = Opened {
            format: Some(Format::Plain),
            ..FILE
        };
        let mut without = sources(&["a.gz", "-"]);
        open(&mut without, "a.gz", Ok(gzip));
        assert_eq!(
            without.how(),
            Some(How::File),
            "without -z nothing is decoded"
        );
        without.read(Ok(0));
        open(&mut without, "stdin", Ok(PIPE));
        assert_eq!(without.how(), Some(How::Stream));
        let mut sources = sources(&["a.gz", "plain", "-", "last"]);
        sources.decompress(true);
        sources.output_is_pipe(true);
        open(&mut sources, "a.gz", Ok(gzip));
        assert_eq!(sources.how(), Some(How::Decoded(Some(Format::Gzip))));
        assert_eq!(
            next(&mut sources),
            "Read",
            "a file's decoding never waits for input"
        );
        assert_eq!(sources.is_ready(), Some(true));
        let bad = io::Error::other("bad");
        sources.decoded(Err(Failure::Decompressing(bad)));
        assert_eq!(sources.read(Ok(0)), None);
        assert_eq!(reported(&mut sources), "a.gz: decompressing: bad");
        open(&mut sources, "plain", Ok(plain));
        assert_eq!(
            sources.how(),
            Some(How::File),
            "plain files keep their ranges"
        );
        sources.read(Ok(0));
        open(&mut sources, "stdin", Ok(PIPE));
        assert_eq!(
            sources.how(),
            Some(How::Decoded(None)),
            "sniffed by the decoder"
        );
        assert_eq!(next(&mut sources), "Wait", "its pipe may wait");
        assert_eq!(sources.is_ready(), None, "only a poll of its pipe can tell");
        let directory = io::Error::from_raw_os_error(21);
        sources.decoded(Err(Failure::Reading(directory)));
        sources.read(Ok(0));
        assert_eq!(
            reported(&mut sources),
            "reading stdin: Is a directory (os error 21)"
        );
        open(&mut sources, "last", Ok(plain));
        sources.decoded(Ok(()));
        sources.read(Ok(0));
        assert_eq!(next(&mut sources), "End");
    }

    /// The names of the sources `sources` says may be decoded ahead.
    fn ahead(sources: &Sources) -> Vec<String> {
        sources.ahead().map(Source::name).collect()
    }

    #[test]
    fn under_z_the_next_decoders_or_queued_sources_may_be_decoded_ahead() {
        let names = ["a", "b", "-", "c", "d", "e", "f", "g", "h", "i", "j"];
        let mut sources = sources(&names);
        sources.decoders(3);
        assert_eq!(ahead(&sources), [] as [String; 0], "without -z none");
        sources.decompress(true);
        let queued = decompressed::QUEUED;
        let named = |names: &[&str]| {
            names
                .iter()
                .map(|name| name.replace('-', "stdin"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            ahead(&sources),
            named(&names[..queued]),
            "before any opens, as many as the queue holds"
        );
        open(&mut sources, "a", Ok(FILE));
        assert_eq!(
            ahead(&sources),
            named(&names[1..=queued]),
            "those after the one opening"
        );
        sources.decoders(10);
        assert_eq!(
            ahead(&sources),
            named(&names[1..]),
            "as many as the decoders, when more, up to the last"
        );
        sources.decoders(1);
        assert_eq!(
            ahead(&sources),
            [] as [String; 0],
            "one decoder: none ahead"
        );
        sources.decoders(0);
        assert_eq!(ahead(&sources), [] as [String; 0], "at least one decoder");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "none being opened")]
    fn opened_with_nothing_being_opened_is_loud() {
        sources(&[]).opened(Ok(("handle", PIPE)));
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "no source open")]
    fn a_read_failure_with_no_source_open_is_loud() {
        sources(&[]).read(Err(io::Error::other("lost")));
    }
}
