//! The crate in one call: a file or a stream's decoded bytes as any reader reads them, its
//! failure told after the bytes decoded before it.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read, Seek, SeekFrom};
use std::num::NonZeroUsize;
use std::path::Path;

use crate::format::{Format, sniff_file, sniff_stream};
use crate::handoff::{DecodedFile, Out};
use crate::pool::{MemberRuns, NextRun, leave_offset};
use crate::pump::Pulled;
use crate::source::Undecoded;
use crate::spares::SpareBuffers;
use crate::streams::decoder_of;
use crate::{
    BUFFER, BUFFERS, DECODED_HERE, Decoding, Failure, KEPT_HERE, ONE, Regular, caught, decode_file,
    decode_stream,
};

/// The decoded bytes of a file or stream, whatever it holds: gzip members, zstd frames, xz
/// streams, an `.lzma` stream, bzip2 streams, LZ4 frames, each told by its first bytes and decoded
/// to the source's end; anything else passes through as it is (`zcat -f`), and compress's `.Z`
/// is refused. A regular file is decoded on up to `threads` threads where its layout allows
/// (zstd frames, BGZF members, xz blocks, bzip2 blocks); a stream (a pipe, a terminal, a socket)
/// on a thread of its own (its BGZF members, xz and bzip2 blocks on up to `threads`), its bytes
/// handed on as they come (a live stream's lines as they are written). Either way the decoded
/// bytes come over in memory, in buffers the reader recycles. On one thread, either is decoded
/// at each read, on the reading thread, as any other reader is
/// ([`from_reader`](Self::from_reader)).
///
/// Once the decoded bytes end, a read tells how decoding ended: `Ok(0)` where the source was
/// whole, else the error, after every byte decoded before the fault, saying where it is
/// (`decompressing: …, after N decoded bytes`). A source cut short inside a member, frame or
/// stream is never read as its end (one cut between two members is a whole file of fewer).
///
/// ```
/// use std::io::{Read, Write};
///
/// let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
/// gzip.write_all(b"one\ntwo\n")?;
/// let path = std::env::temp_dir().join(format!("decompressed-doc-{}.gz", std::process::id()));
/// std::fs::write(&path, gzip.finish()?)?;
///
/// let mut text = String::new();
/// decompressed::Reader::open(&path)?.read_to_string(&mut text)?;
/// assert_eq!(text, "one\ntwo\n");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Reader(Decoded);

/// Where a [`Reader`]'s bytes are decoded.
#[derive(Debug)]
enum Decoded {
    /// On threads of the crate's own, handed over in memory.
    Handed(Handed),
    /// On the reading thread, at each read: one decoder, no thread started (`threads` of 1).
    Here(BufReader<Here>),
}

/// A source decoded on threads of the crate's own.
#[derive(Debug)]
struct Handed {
    bytes: DecodedFile,
    /// How decoding ends, taken once the bytes have ended.
    decoding: Option<Decoding>,
    /// The decoded bytes read so far: where a fault is, as its error tells it.
    read: u64,
}

impl Reader {
    /// The file at `path` decoded, on as many threads as the machine has cores.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Reader> {
        let threads = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
        Reader::new(File::open(path)?, threads)
    }

    /// What `reader` gives, decoded: a reader that is not a file (a socket's or a body's of
    /// another crate, bytes in memory, a `File` behind a reader of its own). It is decoded at
    /// each read on the reading thread, as on one thread ([`new`](Self::new)): a reader cannot be
    /// asked whether its next read would wait, so a thread of the crate's reading it could not
    /// be stopped while it waits. Nothing is read until the first read. A failed read of
    /// `reader` is told as its own error, after the bytes decoded before it.
    pub fn from_reader(reader: impl Read + Send + 'static) -> Reader {
        let here = Here {
            stage: Stage::UnreadReader(Box::new(reader)),
            read: 0,
        };
        Reader(Decoded::Here(BufReader::with_capacity(BUFFER, here)))
    }

    /// `file` decoded from where its offset is, on up to `threads` threads. The reader owns
    /// `file`; a stream's descriptor is read, never changed (no flag is set on it). On one thread
    /// the reading thread decodes as it reads, with the format's one decoder, and no thread is
    /// started: as fast as the format's own crate where the reader does nothing else (a thread
    /// of its own lets the decoder run while the reader works on what it read, where a core is
    /// free for it).
    pub fn new(file: File, threads: NonZeroUsize) -> io::Result<Reader> {
        Reader::with_buffers(file, threads, BUFFERS)
    }

    /// [`new`](Self::new), holding at most `buffers` decoded buffers of [`BUFFER`](crate::BUFFER)
    /// bytes that the reader has not taken (at least one; [`BUFFERS`] unless told): the memory
    /// bound the caller sets, a file's or a stream's alike, beside what each decoder holds of its
    /// own (a frame's or block's window, docs/CONTRACT.md §12.4). On one thread the reader holds
    /// one such buffer.
    pub fn with_buffers(
        mut file: File,
        threads: NonZeroUsize,
        buffers: usize,
    ) -> io::Result<Reader> {
        let metadata = file.metadata()?;
        // A regular file's format, where it is read from and how much it holds.
        let (file, regular) = match metadata.is_file() {
            true => {
                let offset = file.stream_position()?;
                let source = Regular::at(file, offset, metadata.len());
                let format = sniff_file(&source)?;
                (source.file, Some((format, source.offset, source.len)))
            }
            false => (file, None),
        };
        if threads == ONE {
            let format = regular.map(|(format, ..)| format);
            let here = Here {
                stage: Stage::Unread(file, format),
                read: 0,
            };
            return Ok(Reader(Decoded::Here(BufReader::with_capacity(
                BUFFER, here,
            ))));
        }
        let spares = SpareBuffers::default();
        let (bytes, decoding) = match regular {
            Some((format, offset, len)) => {
                let source = Regular { file, offset, len };
                decode_file(source, format, buffers, threads, DECODED_HERE, &spares)?
            }
            None => decode_stream(file, threads, buffers, &spares)?,
        };
        Ok(Reader(Decoded::Handed(Handed {
            bytes,
            decoding: Some(decoding),
            read: 0,
        })))
    }
}

impl Handed {
    /// At the end of the decoded bytes: how decoding ended, told once (later reads find the end).
    fn ended(&mut self) -> io::Result<()> {
        match self.decoding.take().map(Decoding::finish) {
            None | Some(Ok(())) => Ok(()),
            Some(Err(failure)) => Err(told(failure, self.read)),
        }
    }
}

/// `failure` as a read tells it, `read` decoded bytes into the source. A fault says where it is
/// in the decoded bytes, the one offset every format has.
fn told(failure: Failure, read: u64) -> io::Error {
    match failure {
        Failure::Reading(error) => error,
        Failure::Decompressing(error) => io::Error::new(
            error.kind(),
            format!("decompressing: {error}, after {read} decoded bytes"),
        ),
    }
}

/// A source decoded on the reading thread, as it reads.
struct Here {
    stage: Stage,
    /// The decoded bytes given so far.
    read: u64,
}

/// Where the decoding of a source on the reading thread stands.
enum Stage {
    /// Not read yet, its format known where it is a regular file: a stream is sniffed at the
    /// first read, as its first bytes may be long in coming.
    Unread(File, Option<Format>),
    /// A reader of the caller's, not read yet: sniffed at the first read, as a stream is.
    UnreadReader(Box<dyn Read + Send>),
    /// A regular file's BGZF members, a run at a time.
    Runs(Runs),
    /// The format's one decoder.
    Decoding(Pulled),
    /// Told how decoding ended: every read finds the end.
    Ended,
}

/// A regular file's BGZF members decoded run by run, each member whole where libdeflate takes it,
/// as a thread of the crate's own decodes them: ISA-L's one decoder took 1.2 times as long over
/// `bgzip`'s 64 KiB members (results/2026-12-04-reader-on-one-thread.md). A run that decodes to
/// more than [`KEPT_HERE`] buffers (a run's compressed bytes are bounded, not what they decode
/// to) is read that far, then the one decoder decodes the file from the run's start, past as
/// many bytes: memory stays bounded, and only a run of such members is decoded twice.
struct Runs {
    file: File,
    runs: MemberRuns,
    /// The last run's decoded bytes, `at` of them read.
    decoded: Gathered,
    at: usize,
    /// What ended the last run short of its end (a fault, or where the one decoder is to go on),
    /// once its bytes are read.
    ended: Option<Result<Then, Failure>>,
}

/// What comes after the decoded bytes a run left, once they are read.
enum Then {
    Read(usize),
    /// The rest of the file is the one decoder's, from `at`, past the `read` bytes it decodes to
    /// that were read already.
    Rest {
        at: u64,
        read: u64,
    },
}

impl Runs {
    fn pull(&mut self, buf: &mut [u8]) -> Result<Then, Failure> {
        loop {
            let unread = &self.decoded.bytes[self.at..self.decoded.len];
            if !unread.is_empty() {
                let n = unread.len().min(buf.len());
                buf[..n].copy_from_slice(&unread[..n]);
                self.at += n;
                return Ok(Then::Read(n));
            }
            if let Some(ended) = self.ended.take() {
                return ended;
            }
            (self.decoded.len, self.at) = (0, 0);
            // A run's bytes before a fault or a rest are read first.
            match self.runs.next(&self.file, &mut self.decoded) {
                Ok(NextRun::Decoded) => {}
                Ok(NextRun::Rest(at)) => self.ended = Some(Ok(Then::Rest { at, read: 0 })),
                Ok(NextRun::End(at)) => {
                    return leave_offset(&self.file, at).map(|()| Then::Read(0));
                }
                // Nothing else takes the bytes: the run filled the buffer (`Gathered::room`).
                Ok(NextRun::ReaderGone) => {
                    let (at, read) = (self.runs.began, self.decoded.len as u64);
                    self.ended = Some(Ok(Then::Rest { at, read }));
                }
                Err(failure) => self.ended = Some(Err(failure)),
            }
        }
    }
}

/// Decoded bytes gathered in one buffer, grown as they come: one run's, up to [`KEPT_HERE`]
/// buffers.
struct Gathered {
    /// Made to its most at once, so that growing never doubles it past the bound; its pages are
    /// touched only as bytes come.
    bytes: Vec<u8>,
    len: usize,
}

impl Default for Gathered {
    fn default() -> Self {
        Gathered {
            bytes: Vec::with_capacity((KEPT_HERE + 1) * BUFFER),
            len: 0,
        }
    }
}

impl Out for Gathered {
    /// `None` once [`KEPT_HERE`] buffers are full: the run is then read that far.
    fn room(&mut self) -> Option<&mut [u8]> {
        if self.len >= KEPT_HERE * BUFFER {
            return None;
        }
        if self.bytes.len() < self.len + BUFFER {
            self.bytes.resize(self.len + BUFFER, 0);
        }
        Some(&mut self.bytes[self.len..])
    }

    fn filled(&mut self, n: usize) -> bool {
        self.len += n;
        true
    }

    fn flush(&mut self) {}
}

impl std::fmt::Debug for Here {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Here")
            .field("read", &self.read)
            .finish_non_exhaustive()
    }
}

impl Here {
    /// Decodes into `buf` (not empty), beginning the decoder at the first read.
    fn pull(&mut self, buf: &mut [u8]) -> Result<usize, Failure> {
        loop {
            match &mut self.stage {
                Stage::Decoding(decoder) => return decoder.pull(buf),
                Stage::Runs(runs) => match runs.pull(buf)? {
                    Then::Read(n) => return Ok(n),
                    Then::Rest { at, read } => {
                        let Stage::Runs(Runs { mut file, .. }) =
                            std::mem::replace(&mut self.stage, Stage::Ended)
                        else {
                            unreachable!("matched above");
                        };
                        file.seek(SeekFrom::Start(at)).map_err(Failure::Reading)?;
                        let source = Undecoded::new(file);
                        let mut decoder = Self::one_decoder(source, Some(Format::Gzip))?;
                        passed_over(&mut decoder, read)?;
                        self.stage = Stage::Decoding(decoder);
                    }
                },
                Stage::Unread(..) | Stage::UnreadReader(..) => {
                    self.stage = match std::mem::replace(&mut self.stage, Stage::Ended) {
                        Stage::Unread(file, format) => Self::begun(file, format)?,
                        Stage::UnreadReader(reader) => {
                            let source = Undecoded::of_reader(reader);
                            Stage::Decoding(Self::one_decoder(source, None)?)
                        }
                        _ => unreachable!("matched above"),
                    };
                }
                Stage::Ended => return Ok(0),
            }
        }
    }

    /// The decoder of `file`, holding `format` where it is a regular file, else sniffed now: a
    /// regular gzip file's runs of members, where it has them.
    fn begun(file: File, format: Option<Format>) -> Result<Stage, Failure> {
        if format == Some(Format::Gzip)
            && let Some(runs) = MemberRuns::of(&file)
        {
            return Ok(Stage::Runs(Runs {
                file,
                runs,
                decoded: Gathered::default(),
                at: 0,
                ended: None,
            }));
        }
        Self::one_decoder(Undecoded::new(file), format).map(Stage::Decoding)
    }

    /// The format's one decoder of `source` from where it is, `format` sniffed now where not
    /// known.
    fn one_decoder(mut source: Undecoded, format: Option<Format>) -> Result<Pulled, Failure> {
        let (format, start) = match format {
            Some(format) => (format, Vec::new()),
            None => sniff_stream(&mut source)?,
        };
        let input = Cursor::new(start).chain(source);
        decoder_of(format, ONE, input, None)
    }
}

/// Decodes and drops the first `read` bytes of `decoder`: those a run gave already.
fn passed_over(decoder: &mut Pulled, mut read: u64) -> Result<(), Failure> {
    let mut dropped = vec![0; BUFFER];
    while read > 0 {
        let most = usize::try_from(read).map_or(BUFFER, |read| read.min(BUFFER));
        match decoder.pull(&mut dropped[..most])? {
            0 => {
                return Err(Failure::Decompressing(io::Error::other(
                    "the one decoder ended before the bytes the members' runs decoded",
                )));
            }
            n => read -= n as u64,
        }
    }
    Ok(())
}

impl Read for Here {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        // libzstd and the `bzip2` crate give none of what a call decoded when it finds a bad
        // checksum: a call's room is what may be lost before one (CONTRACT §12.3).
        let room = buf.len().min(BUFFER);
        let buf = &mut buf[..room];
        // A decoder's panic is the source's failure, as on a thread of the crate's own.
        match caught(|| self.pull(buf)) {
            Ok(0) => {
                self.stage = Stage::Ended;
                Ok(0)
            }
            Ok(n) => {
                self.read += n as u64;
                Ok(n)
            }
            Err(failure) => {
                self.stage = Stage::Ended;
                Err(told(failure, self.read))
            }
        }
    }
}

impl Read for Reader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Decoded::Here(here) = &mut self.0 {
            return here.read(buf);
        }
        let unread = self.fill_buf()?;
        let n = unread.len().min(buf.len());
        buf[..n].copy_from_slice(&unread[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Reader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match &mut self.0 {
            Decoded::Here(here) => here.fill_buf(),
            Decoded::Handed(handed) => {
                if handed.bytes.unread().is_empty() {
                    handed.ended()?;
                }
                Ok(handed.bytes.unread())
            }
        }
    }

    fn consume(&mut self, n: usize) {
        match &mut self.0 {
            Decoded::Here(here) => here.consume(n),
            Decoded::Handed(handed) => {
                handed.read += n as u64;
                handed.bytes.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bgzip`'s members of zeros, 200 in one run of the walk (a few KB that decode to 13 MB):
    /// on one thread the reader holds at most [`KEPT_HERE`] buffers of them and one more, then
    /// the one decoder goes on past what was read, and every byte comes once.
    #[test]
    fn a_run_that_decodes_to_more_than_kept_here_is_held_within_it() {
        let zeros = vec![0; 200 * 65_280];
        let file = pipelines_testing::file(&pipelines_testing::bgzf(&zeros));
        let deadline = pipelines_testing::IN_MEMORY;
        let (read, held) = pipelines_testing::within_for(deadline, "13 MB of zeros", move || {
            let mut reader = Reader::new(file, ONE).unwrap();
            let (mut read, mut held) = (Vec::new(), 0);
            let mut buf = vec![0; 100_000];
            loop {
                let n = reader.read(&mut buf).unwrap();
                if n == 0 {
                    return (read, held);
                }
                read.extend_from_slice(&buf[..n]);
                if let Decoded::Here(here) = &reader.0
                    && let Stage::Runs(runs) = &here.get_ref().stage
                {
                    held = held.max(runs.decoded.bytes.capacity());
                }
            }
        });
        assert!(read == zeros, "{} bytes, not {}", read.len(), zeros.len());
        assert!(
            held > 0 && held <= (KEPT_HERE + 1) * BUFFER,
            "{held} bytes held"
        );
    }
}
