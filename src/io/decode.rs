//! `-z`: a compressed source decoded on a thread of its own, its bytes handed to the drivers in
//! memory (a regular file) or through a pipe (a stream).
//!
//! A source is told by its first bytes (a regular file's by [`sniff_file`], a stream's by the
//! decoder as it reads them): gzip members, zstd frames, xz streams, bzip2 streams and LZ4 frames
//! are each decoded one after another to the source's end; a source that begins with a skippable
//! frame (zstd's and LZ4's shared range) is told by the frame after it; anything else passes
//! through as it is, as `zcat -f` does. Which sources are decoded, and how
//! each is handed on, is the input's rule ([`Sources`](crate::io::sources::Sources)); this module
//! carries it out.
//!
//! Why a thread: on two cores the decoder, at a tenth of the renderer's speed or less, is most of
//! the cost, so it runs beside the rendering and the rendering hides behind it.
//!
//! Why two ways to hand the bytes on: a regular file is never live, so its decoded bytes go in
//! whole buffers over a bounded channel ([`decode_file`], read with [`DecodedFile`]), recycled,
//! with no system call and no kernel copy; at zstd's speed (about 1 GB/s) a pipe's write and read,
//! each a copy through the kernel, cost more than the decoding. A stream may be live: its bytes go
//! through a pipe ([`decode`]), whose read end is a stream like stdin, so waiting for input while
//! watching the output's reader, readiness, the reactor and writing when input is idle work
//! unchanged in every driver. Each decoded buffer is written as soon as the decoder hands it on,
//! and the decoder hands on what it has whenever its input pauses, so a slowly written compressed
//! stream still comes out line by line.
//!
//! The thread ends at the source's end, at a failure, or when its reader has gone. Before the
//! decoded bytes end (the pipe closes, the channel disconnects) it sends how decoding ended,
//! which [`Decoding::finish`] then takes without waiting, on any thread, the async runtime's too.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Chain, Cursor, Read, Seek, Write};
use std::num::NonZeroUsize;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::LazyLock;
use std::thread;

use crossbeam_channel::{Receiver, Sender, bounded};

use crate::error::panic_message;
use crate::io::fd;

mod frames;
mod gzip;
pub(crate) mod slices;
mod whole;
use frames::Parts;
use gzip::GzipMembers;

/// What a source holds, by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// gzip members, one after another.
    Gzip,
    /// zstd frames, one after another, skippable frames among them.
    Zstd,
    /// xz streams, one after another, stream padding among them.
    Xz,
    /// bzip2 streams, one after another.
    Bzip2,
    /// LZ4 frames, one after another, skippable frames among them.
    Lz4,
    /// Anything else: read as it is.
    Plain,
}

/// What a source's first bytes begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// A stream of this format.
    Format(Format),
    /// A skippable frame whose content is this many bytes long: what follows it tells the format.
    Skippable(u32),
}

/// A magic number: the bytes at a source's start, each between its `low` and `high` byte.
struct Magic {
    low: &'static [u8],
    high: &'static [u8],
    start: Start,
}

impl Magic {
    const fn exact(bytes: &'static [u8], format: Format) -> Magic {
        Magic {
            low: bytes,
            high: bytes,
            start: Start::Format(format),
        }
    }

    /// Whether `start` agrees with the magic as far as both go.
    fn agrees(&self, start: &[u8]) -> bool {
        let bounds = self.low.iter().zip(self.high);
        start
            .iter()
            .zip(bounds)
            .all(|(byte, (low, high))| (low..=high).contains(&byte))
    }
}

/// A skippable frame's header: a magic `0x184D2A50` to `0x184D2A5F` and its content's length, both
/// little-endian. zstd and LZ4 share the range.
const SKIPPABLE_HEADER: usize = 8;

/// Every magic [`sniff`] knows. No two formats' magics agree on their common length, so the first
/// bytes that tell one from the others decide. bzip2's `BZh` and level digit are followed by its
/// first block's magic or, for an empty stream, its end-of-stream magic: 10 bytes that plain text
/// beginning `BZh` is unlikely to hold.
const MAGICS: &[Magic] = &[
    Magic::exact(&[0x1f, 0x8b], Format::Gzip),
    Magic::exact(&[0x28, 0xb5, 0x2f, 0xfd], Format::Zstd),
    Magic::exact(&[0xfd, b'7', b'z', b'X', b'Z', 0x00], Format::Xz),
    Magic {
        low: b"BZh1\x31\x41\x59\x26\x53\x59",
        high: b"BZh9\x31\x41\x59\x26\x53\x59",
        start: Start::Format(Format::Bzip2),
    },
    Magic {
        low: b"BZh1\x17\x72\x45\x38\x50\x90",
        high: b"BZh9\x17\x72\x45\x38\x50\x90",
        start: Start::Format(Format::Bzip2),
    },
    Magic::exact(&[0x04, 0x22, 0x4d, 0x18], Format::Lz4),
    // Any length: `sniff` reads it from the header.
    Magic {
        low: &[0x50, 0x2a, 0x4d, 0x18, 0x00, 0x00, 0x00, 0x00],
        high: &[0x5f, 0x2a, 0x4d, 0x18, 0xff, 0xff, 0xff, 0xff],
        start: Start::Skippable(0),
    },
];

/// The most bytes [`sniff`] needs.
const LONGEST_MAGIC: usize = 10;

/// What a source whose first bytes are `start` begins; `None` while `start` could still begin a
/// magic and more bytes may come (`ended` false). Decided on the fewest bytes, so that a live plain
/// line is never held back waiting for bytes that would not change the answer.
fn sniff(start: &[u8], ended: bool) -> Option<Start> {
    let mut undecided = false;
    for magic in MAGICS.iter().filter(|magic| magic.agrees(start)) {
        if start.len() < magic.low.len() {
            undecided = !ended;
            continue;
        }
        return Some(match magic.start {
            Start::Skippable(_) => {
                let length = start[4..SKIPPABLE_HEADER]
                    .try_into()
                    .map(u32::from_le_bytes);
                Start::Skippable(length.unwrap_or_default())
            }
            format => format,
        });
    }
    (!undecided).then_some(Start::Format(Format::Plain))
}

/// The format of what follows one or more skippable frames: LZ4 frames, or else zstd frames, even
/// where no zstd frame follows. A skippable frame is itself a zstd (and LZ4) frame, so such a
/// source is decoded as `zstd -dc` decodes it: skippable frames alone are empty, anything else after
/// them a failure.
fn past_skippable(format: Format) -> Format {
    match format {
        Format::Lz4 => Format::Lz4,
        _ => Format::Zstd,
    }
}

/// What a regular file holds from its offset on, read there without moving the offset: stdin may
/// be a file that something before read part of, and reading goes on from where it stopped.
/// Skippable frames at its start are passed over with their lengths, unread.
pub fn sniff_file(file: &File) -> io::Result<Format> {
    let mut at = (&*file).stream_position()?;
    let mut skipped = false;
    loop {
        let mut start = [0; LONGEST_MAGIC];
        let mut read = 0;
        while read < start.len() {
            match file.read_at(&mut start[read..], at + read as u64) {
                Ok(0) => break,
                Ok(n) => read += n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        let format = match sniff(&start[..read], true) {
            Some(Start::Skippable(length)) => {
                at += (SKIPPABLE_HEADER as u64) + u64::from(length);
                skipped = true;
                continue;
            }
            Some(Start::Format(format)) => format,
            None => Format::Plain,
        };
        return Ok(match skipped {
            true => past_skippable(format),
            false => format,
        });
    }
}

/// How decoding a source failed.
#[derive(Debug)]
pub enum Failure {
    /// Reading the source itself failed, as it would have without `-z`.
    Reading(io::Error),
    /// The bytes are not a well-formed stream of their format: corrupt, truncated, a bad checksum,
    /// garbage after the last member, a window or dictionary larger than the decoder allows.
    Decompressing(io::Error),
}

/// Compressed bytes read, and decoded bytes handed on, at a time: large enough that a pipe write,
/// a channel's hand-over and the decoder's call overhead are a small part of each buffer.
pub const BUFFER: usize = 256 * 1024;

/// The most buffers of a regular file's decoded bytes in memory at once, unless it is decoded
/// ahead: as many as the pipe of a stream holds (1 MiB), enough for the decoder to run on while
/// the reader renders.
pub const BUFFERS: usize = 4;

/// The most decoded bytes all decoders together hold that their reader has not taken, when more
/// than one runs (FILEs decoded ahead, [`ahead`](crate::io::ahead)); also the most kept spare.
pub const DECODED_HELD: usize = 32 << 20;

/// Buffers whose decoding has ended, kept for the next decoding instead of freed, at most
/// [`DECODED_HELD`]'s worth. A buffer made afresh costs a page fault for each of its pages: with
/// eight FILEs decoded ahead on two cores, each decoder ahead making its share of buffers anew
/// took 0.06-0.08 s of system time beside 0.18 s of decoding (27,000 page faults against
/// 2,600), more than decoding ahead gained.
static SPARE: LazyLock<Channel> = LazyLock::new(|| bounded(DECODED_HELD / BUFFER));

/// Both ends of a channel of buffers.
type Channel = (Sender<Vec<u8>>, Receiver<Vec<u8>>);

/// Keeps `buffer` for the next decoding, if it is one of ours and room is left.
fn spare(buffer: Vec<u8>) {
    if buffer.capacity() >= BUFFER {
        let _ = SPARE.0.try_send(buffer);
    }
}

/// How a source's decoding ended, told once its decoded bytes have ended: [`finish`](Self::finish).
#[derive(Debug)]
pub struct Decoding {
    /// The thread's one message, sent before the decoded bytes end.
    ended: Receiver<Result<(), Failure>>,
}

impl Decoding {
    /// Whether the thread has ended: it has told how by then.
    pub fn has_ended(&self) -> bool {
        !self.ended.is_empty()
    }

    /// How decoding ended, once the decoded bytes have ended: the thread has told it by then, so
    /// this never waits.
    pub fn finish(self) -> Result<(), Failure> {
        self.ended.try_recv().unwrap_or_else(|_| {
            debug_assert!(false, "decoding finished before the thread told how");
            Err(Failure::Decompressing(io::Error::other(
                "the decoder ended without a word",
            )))
        })
    }
}

/// Starts decoding a stream on a thread of its own: returns the read end of a pipe that carries
/// the decoded bytes as they come, and how decoding ends. The thread sniffs the source as it
/// reads it (a pipe's bytes can be read only once), passing plain bytes through.
pub fn decode(source: File) -> io::Result<(File, Decoding)> {
    let (reader, writer) = std::io::pipe()?;
    fd::enlarge_pipe(writer.as_fd());
    let out = PipeOut {
        pipe: File::from(OwnedFd::from(writer)),
        buf: vec![0; BUFFER],
    };
    let decoding = start(out, |out| run(Undecoded::new(source), None, ONE, out))?;
    Ok((File::from(OwnedFd::from(reader)), decoding))
}

/// Starts decoding a regular file that holds `format` (sniffed with [`sniff_file`]) on a thread of
/// its own, holding at most `buffers` decoded buffers (at least one) that the reader has not
/// taken, with up to `threads` decoders where its parts decode apart (zstd frames, BGZF members,
/// an xz stream's blocks; CONTRACT §12.4): returns its decoded bytes, handed over in memory and in
/// the file's order, and how decoding ends.
pub fn decode_file(
    source: File,
    format: Format,
    buffers: usize,
    threads: NonZeroUsize,
) -> io::Result<(DecodedFile, Decoding)> {
    let buffers = buffers.max(1);
    let parts = match format {
        Format::Zstd => Some(Parts::Zstd),
        Format::Gzip => Some(Parts::Bgzf),
        _ => None,
    };
    let pool = parts.zip(pool_decoders(threads));
    let (to_reader, full) = bounded(buffers);
    // Room for every piece the decoders may hold, so that pieces are reused, not made anew.
    let ahead = pool.map_or(0, |(parts, decoders)| frames::pieces_ahead(parts, decoders));
    let (to_decoder, empty) = bounded(buffers + ahead);
    let out = Filling::new(ToReader {
        full: to_reader,
        empty,
        most: buffers,
        made: 0,
    });
    let decoding = start(out, move |out| match (pool, parts) {
        (Some((parts, decoders)), _) => frames::decode_parts(source, parts, decoders, out),
        (None, Some(parts)) => frames::decode_alone(source, parts, out),
        (None, None) => run(Undecoded::new(source), Some(format), threads, out),
    })?;
    let buffers = DecodedFile {
        full,
        empty: to_decoder,
        buffer: Vec::new(),
        at: 0,
    };
    Ok((buffers, decoding))
}

/// How many of `threads` decode a file's zstd frames or BGZF members at once: every one, or none
/// (one decoder, as for a stream) below two. With every thread short-sliced (CONTRACT §12.6) the
/// reader and the rendering run as soon as they have work beside decoders on every core: on 2
/// cores two zstd decoders took 0.70-0.76x one frame's time, two BGZF decoders 0.78-0.95x one
/// gzip member's (docs/DECOMPRESS.md). xz's decoder, ten times slower than the rendering, takes every thread too.
fn pool_decoders(threads: NonZeroUsize) -> Option<NonZeroUsize> {
    Some(threads).filter(|threads| threads.get() > 1)
}

/// Starts the thread that decodes into `out` with `decoding`, and tells how it ended before `out`
/// is dropped, which ends the decoded bytes. A panic is told as a failure of the source.
fn start<O: Out>(
    mut out: O,
    decoding: impl FnOnce(&mut O) -> Result<(), Failure> + Send + 'static,
) -> io::Result<Decoding> {
    let (tell, ended) = bounded(1);
    thread::Builder::new()
        .name("decode".to_owned())
        .spawn(move || {
            let ended = caught(|| decoding(&mut out));
            // The bytes before a failure are handed on too; a reader gone wants none of them.
            out.flush();
            let _ = tell.send(ended);
            drop(out);
        })?;
    Ok(Decoding { ended })
}

/// What `decoding` returned, or its panic as a failure of the source.
fn caught<T>(decoding: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(decoding)).unwrap_or_else(|panic| {
        let reason = io::Error::other(panic_message(&*panic));
        Err(Failure::Decompressing(reason))
    })
}

/// A regular file's decoded bytes as the reader takes them: whole buffers from the decoder's
/// thread, each handed back to it, emptied, for the next.
#[derive(Debug)]
pub struct DecodedFile {
    full: Receiver<Vec<u8>>,
    empty: Sender<Vec<u8>>,
    /// The buffer being read.
    buffer: Vec<u8>,
    /// How much of it has been read.
    at: usize,
}

impl DecodedFile {
    /// Waits for decoded bytes unless some are here, and hands them to `take`, which returns how
    /// many it took: at least one, or the end is taken to have come. Returns that, or 0 at the
    /// end of the decoded bytes.
    pub fn read_with(&mut self, take: impl FnOnce(&[u8]) -> usize) -> usize {
        while self.at == self.buffer.len() {
            // Handed back before the wait, so that the decoder never waits for the one buffer
            // the reader holds. The channel has room for every buffer; if the decoder has gone,
            // the buffer is kept spare.
            let read = std::mem::take(&mut self.buffer);
            self.at = 0;
            if read.capacity() > 0
                && let Err(unsent) = self.empty.try_send(read)
            {
                spare(unsent.into_inner());
            }
            let Ok(next) = self.full.recv() else {
                return 0;
            };
            self.buffer = next;
        }
        let taken = take(&self.buffer[self.at..]);
        self.at += taken;
        taken
    }

    /// Copies decoded bytes into `buf` (not empty), waiting for some unless some are here: how
    /// many, or 0 at the end.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        self.read_with(|bytes| {
            let n = bytes.len().min(buf.len());
            buf[..n].copy_from_slice(&bytes[..n]);
            n
        })
    }
}

impl Drop for DecodedFile {
    fn drop(&mut self) {
        spare(std::mem::take(&mut self.buffer));
        self.full.try_iter().for_each(spare);
    }
}

/// Where the thread puts what it decodes.
trait Out: Send + 'static {
    /// Room to decode into, or `None` when the reader has gone.
    fn room(&mut self) -> Option<&mut [u8]>;

    /// The first `n` bytes of the room now hold decoded bytes: false when the reader has gone.
    fn filled(&mut self, n: usize) -> bool;

    /// Hands on what is held, at the end.
    fn flush(&mut self);
}

/// A stream's decoded bytes, written to the pipe as each buffer comes, for live input.
struct PipeOut {
    pipe: File,
    buf: Vec<u8>,
}

impl Out for PipeOut {
    fn room(&mut self) -> Option<&mut [u8]> {
        Some(&mut self.buf)
    }

    fn filled(&mut self, n: usize) -> bool {
        // Our own blocking pipe: a failed write means its reader has gone, and nobody wants
        // the rest.
        Write::write_all(&mut &self.pipe, &self.buf[..n]).is_ok()
    }

    fn flush(&mut self) {}
}

/// Where whole buffers of decoded bytes go, and where empty ones come from.
trait Buffers: Send + 'static {
    /// An empty buffer to fill (its bytes of no meaning), or `None` when the reader has gone.
    fn empty(&mut self) -> Option<Vec<u8>>;

    /// Hands on a buffer of decoded bytes: false when the reader has gone.
    fn full(&mut self, buffer: Vec<u8>) -> bool;
}

/// Decoded bytes put into whole [`BUFFER`]-long buffers, each handed on as it fills.
struct Filling<B: Buffers> {
    buffers: B,
    /// The buffer being filled, [`BUFFER`] bytes long, or empty when none is.
    buffer: Vec<u8>,
    /// How much of it holds decoded bytes.
    held: usize,
}

impl<B: Buffers> Filling<B> {
    fn new(buffers: B) -> Self {
        Filling {
            buffers,
            buffer: Vec::new(),
            held: 0,
        }
    }

    /// Hands on the buffer being filled, cut to what it holds: false when the reader has gone.
    fn hand_on(&mut self) -> bool {
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.truncate(std::mem::take(&mut self.held));
        self.buffers.full(buffer)
    }

    /// Hands on `piece`, decoded elsewhere, after what is held: false when the reader has gone.
    fn pass(&mut self, piece: Vec<u8>) -> bool {
        if self.held > 0 && !self.hand_on() {
            return false;
        }
        piece.is_empty() || self.buffers.full(piece)
    }
}

impl<B: Buffers> Out for Filling<B> {
    fn room(&mut self) -> Option<&mut [u8]> {
        if self.buffer.is_empty() {
            let mut buffer = self.buffers.empty()?;
            // Zeroes only what was never written: a whole buffer handed back needs none, and
            // zeroing all of it made memset a tenth of a BGZF decoder's instructions.
            buffer.resize(BUFFER, 0);
            self.buffer = buffer;
        }
        Some(&mut self.buffer[self.held..])
    }

    fn filled(&mut self, n: usize) -> bool {
        self.held += n;
        self.held < BUFFER || self.hand_on()
    }

    fn flush(&mut self) {
        if self.held > 0 {
            self.hand_on();
        }
    }
}

impl<B: Buffers> Drop for Filling<B> {
    fn drop(&mut self) {
        spare(std::mem::take(&mut self.buffer));
    }
}

/// A regular file's decoded bytes, handed on to its reader a whole buffer at a time.
type BuffersOut = Filling<ToReader>;

/// The reader's buffers: at most `most` made, then only those it hands back.
struct ToReader {
    full: Sender<Vec<u8>>,
    empty: Receiver<Vec<u8>>,
    /// The most buffers made.
    most: usize,
    /// Buffers made so far: at `most`, the next is one the reader handed back.
    made: usize,
}

impl Buffers for ToReader {
    fn empty(&mut self) -> Option<Vec<u8>> {
        // One handed back first, so that a decoder let hold many makes only as many as the
        // reader leaves it holding.
        match self.empty.try_recv() {
            Ok(buffer) => Some(buffer),
            Err(_) if self.made < self.most => {
                self.made += 1;
                Some(SPARE.1.try_recv().unwrap_or_default())
            }
            Err(_) => self.empty.recv().ok(),
        }
    }

    fn full(&mut self, buffer: Vec<u8>) -> bool {
        self.full.send(buffer).is_ok()
    }
}

impl Drop for ToReader {
    fn drop(&mut self) {
        self.empty.try_iter().for_each(spare);
    }
}

/// The source as the decoder reads it: signals and an inherited non-blocking mode waited out, and
/// a failed read kept, so that it is told as the source's failure rather than the decoder's.
#[derive(Debug)]
struct Undecoded {
    file: File,
    failed: Option<io::Error>,
}

impl Undecoded {
    fn new(file: File) -> Self {
        Undecoded { file, failed: None }
    }
}

impl Read for Undecoded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        fd::read(&self.file, buf).map_err(|error| {
            let kind = error.kind();
            self.failed = Some(error);
            io::Error::from(kind)
        })
    }
}

/// The source with the bytes sniffing read put back in front.
type Sniffed = Chain<Cursor<Vec<u8>>, Undecoded>;

/// The most memory liblzma may take for an xz stream: a 128 MiB dictionary, as zstd's window is
/// bounded (CONTRACT §10), and the decoder's own state beside it. `xz -9` uses 64 MiB.
const XZ_MEMORY_LIMIT: u64 = (128 + 1) << 20;

/// One decoder, as a stream (which may be live) is decoded.
const ONE: NonZeroUsize = NonZeroUsize::MIN;

/// The thread's body: sniffs unless `format` is known, then decodes or copies into `out`, an xz
/// stream's blocks on up to `threads` threads.
fn run(
    mut source: Undecoded,
    format: Option<Format>,
    threads: NonZeroUsize,
    out: &mut impl Out,
) -> Result<(), Failure> {
    let (format, start) = match format {
        Some(format) => (format, Vec::new()),
        None => sniff_stream(&mut source)?,
    };
    let input = Cursor::new(start).chain(source);
    let buffered = |input| BufReader::with_capacity(BUFFER, input);
    let decompressing = |error: io::Error| Failure::Decompressing(error);
    match format {
        Format::Gzip => {
            let decoder = GzipMembers::all(buffered(input));
            pump(decoder, |decoder| decoder.get_mut().get_mut(), out)
        }
        Format::Zstd => {
            let decoder = zstd::stream::read::Decoder::with_buffer(buffered(input));
            let decoder = decoder.map_err(decompressing)?;
            pump(decoder, |decoder| decoder.get_mut().get_mut(), out)
        }
        Format::Xz => {
            let decoder = XzStreams::new(buffered(input), threads).map_err(decompressing)?;
            pump(decoder, |decoder| decoder.input.get_mut(), out)
        }
        Format::Bzip2 => {
            let decoder = bzip2::bufread::MultiBzDecoder::new(buffered(input));
            pump(decoder, |decoder| decoder.get_mut().get_mut(), out)
        }
        Format::Lz4 => pump(Lz4Frames::new(buffered(input)), Lz4Frames::source, out),
        Format::Plain => pump(input, |input| input, out),
    }
}

/// Reads a stream's first bytes until they tell what it holds: the format, and the bytes read
/// that the decoder is to read first. Skippable frames at the start are read and dropped (the
/// decoder would skip them) and what follows them decides; the header of one that the stream
/// ends inside is kept, for the decoder to find it incomplete.
fn sniff_stream(source: &mut Undecoded) -> Result<(Format, Vec<u8>), Failure> {
    let mut start = Vec::with_capacity(LONGEST_MAGIC);
    let mut skipped = false;
    loop {
        let mut more = [0; LONGEST_MAGIC];
        let read = source.read(&mut more[..LONGEST_MAGIC - start.len()]);
        let read = read.map_err(|_| reading(source))?;
        start.extend_from_slice(&more[..read]);
        let format = match sniff(&start, read == 0) {
            None => continue,
            Some(Start::Format(format)) => format,
            Some(Start::Skippable(length)) => {
                // The bytes read after the header are the content's first, or the next frame's.
                let length = u64::from(length);
                let read_of_content = (start.len() - SKIPPABLE_HEADER).min(length as usize);
                let header = start[..SKIPPABLE_HEADER].to_vec();
                start.drain(..SKIPPABLE_HEADER + read_of_content);
                let rest = length - read_of_content as u64;
                let dropped = io::copy(&mut source.by_ref().take(rest), &mut io::sink());
                if dropped.map_err(|_| reading(source))? < rest {
                    return Ok((Format::Zstd, header));
                }
                skipped = true;
                continue;
            }
        };
        // Nothing after the skippable frames is empty, which zstd's decoder, given nothing, would
        // call an incomplete frame.
        return Ok(match skipped && !start.is_empty() {
            true => (past_skippable(format), start),
            false => (format, start),
        });
    }
}

/// The failure of reading `source`, which its last read kept.
fn reading(source: &mut Undecoded) -> Failure {
    Failure::Reading(
        source
            .failed
            .take()
            .unwrap_or_else(|| io::Error::other("read failed")),
    )
}

/// Reads `from` (a decoder, or the source itself) into `out`'s room until the end, a failure, or
/// `out`'s reader going away. `source` finds the source inside `from`, to tell its own failures
/// from the decoder's.
fn pump<R: Read>(
    mut from: R,
    source: impl Fn(&mut R) -> &mut Sniffed,
    out: &mut impl Out,
) -> Result<(), Failure> {
    loop {
        let Some(room) = out.room() else {
            return Ok(());
        };
        let read = match from.read(room) {
            Ok(0) => return Ok(()),
            Ok(read) => read,
            Err(error) => {
                let source = &mut source(&mut from).get_mut().1;
                return Err(match source.failed.is_some() {
                    true => reading(source),
                    false => Failure::Decompressing(error),
                });
            }
        };
        if !out.filled(read) {
            return Ok(());
        }
    }
}

/// xz streams one after another, stream padding between them, read as liblzma's own `XzDecoder`
/// reads them but for two things: the bytes decoded by the call that finds a fault are handed on
/// before the fault is told, so that every byte of a stream comes out before the garbage after it;
/// and with more than one thread, each stream is decoded by liblzma's threaded decoder, which
/// decodes a stream's blocks at once where the encoder recorded their sizes (`xz -T2` does) and
/// ends at the stream's end (the crate sets no `CONCATENATED` for it), so the next stream is
/// begun here, past the padding.
struct XzStreams {
    stream: liblzma::stream::Stream,
    input: BufReader<Sniffed>,
    /// The fault found by a call that also decoded bytes, told at the next read.
    fault: Option<liblzma::stream::Error>,
    /// The threads liblzma may start, one stream at a time; `None`: one decoder, every stream.
    threads: Option<u32>,
    /// A stream has ended: the next, if any, is to be begun.
    between_streams: bool,
    /// The stream being decoded is not the first.
    later: bool,
}

impl XzStreams {
    fn new(input: BufReader<Sniffed>, threads: NonZeroUsize) -> io::Result<Self> {
        let threads = u32::try_from(threads.get())
            .ok()
            .filter(|&threads| threads > 1);
        Ok(XzStreams {
            stream: Self::decoder(threads)?,
            input,
            fault: None,
            threads,
            between_streams: false,
            later: false,
        })
    }

    /// A decoder of every stream to the end, or, with threads, of one stream. Its memory is
    /// bounded as one decoder's is ([`XZ_MEMORY_LIMIT`]); within that bound liblzma starts as
    /// many of the threads as fit (its default bound for threads, 0, starts one). Its threads
    /// decode beside the reader, so the process's threads take the short slice first
    /// (CONTRACT §12.6), and liblzma's inherit it.
    fn decoder(threads: Option<u32>) -> io::Result<liblzma::stream::Stream> {
        let decoder = match threads {
            None => liblzma::stream::Stream::new_stream_decoder(
                XZ_MEMORY_LIMIT,
                liblzma::stream::CONCATENATED,
            ),
            Some(threads) => {
                slices::ask_short();
                liblzma::stream::MtStreamBuilder::new()
                    .threads(threads)
                    .memlimit_threading(XZ_MEMORY_LIMIT)
                    .memlimit_stop(XZ_MEMORY_LIMIT)
                    .decoder()
            }
        };
        Ok(decoder?)
    }

    /// Passes over the stream padding after a stream (zero bytes, four at a time) and begins the
    /// next stream's decoder: false at the input's end.
    fn next_stream(&mut self, threads: Option<u32>) -> io::Result<bool> {
        let mut padding = 0;
        let ended = loop {
            let input = self.input.fill_buf()?;
            let zeros = input.iter().take_while(|&&byte| byte == 0).count();
            let (ended, more) = (input.is_empty(), zeros < input.len());
            self.input.consume(zeros);
            padding += zeros;
            if ended || more {
                break ended;
            }
        };
        if padding % 4 != 0 {
            // What liblzma's own concatenated decoding says of it.
            return Err(liblzma::stream::Error::Data.into());
        }
        if !ended {
            self.stream = Self::decoder(threads)?;
            (self.between_streams, self.later) = (false, true);
        }
        Ok(!ended)
    }
}

impl Read for XzStreams {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use liblzma::stream::{Action, Status};
        if let Some(fault) = self.fault.take() {
            return Err(fault.into());
        }
        loop {
            if self.between_streams && !self.next_stream(self.threads)? {
                return Ok(0);
            }
            let input = self.input.fill_buf()?;
            let ended = input.is_empty();
            let (read_before, decoded_before) = (self.stream.total_in(), self.stream.total_out());
            let action = if ended { Action::Finish } else { Action::Run };
            let status = self.stream.process(input, buf, action);
            let read = (self.stream.total_in() - read_before) as usize;
            let decoded = (self.stream.total_out() - decoded_before) as usize;
            self.input.consume(read);
            match status {
                // What does not begin a stream after a stream is, to liblzma's own
                // concatenated decoding, corrupt data.
                Err(liblzma::stream::Error::Format) if self.later => {
                    return Err(liblzma::stream::Error::Data.into());
                }
                Err(fault) if decoded > 0 => {
                    self.fault = Some(fault);
                    return Ok(decoded);
                }
                Err(fault) => return Err(fault.into()),
                Ok(Status::StreamEnd) if self.threads.is_some() => {
                    self.between_streams = true;
                    if decoded > 0 {
                        return Ok(decoded);
                    }
                }
                Ok(Status::StreamEnd) => return Ok(decoded),
                Ok(_) if decoded > 0 => return Ok(decoded),
                Ok(_) if ended => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "premature eof",
                    ));
                }
                // liblzma took input and made nothing of it yet.
                Ok(_) if read > 0 => {}
                Ok(_) => return Err(io::Error::from(io::ErrorKind::InvalidData)),
            }
        }
    }
}

/// LZ4 frames one after another, skippable frames skipped, as `lz4 -dc` reads them. lz4_flex's
/// `FrameDecoder` decodes frames but needs three things done around it: it stops with an error
/// at a skippable frame (skipped here), it takes the input's end at a frame's start for the end of
/// the frame before (so a frame starts only where input is left), and it ends a frame that the
/// input ends inside, between blocks, as if it were whole (so any end of input it meets fails).
struct Lz4Frames {
    decoder: lz4_flex::frame::FrameDecoder<EndSeen<BufReader<Sniffed>>>,
    /// The last frame ended whole (or none has begun): the next may start.
    between_frames: bool,
}

impl Lz4Frames {
    fn new(input: BufReader<Sniffed>) -> Self {
        let input = EndSeen { input, seen: false };
        Lz4Frames {
            decoder: lz4_flex::frame::FrameDecoder::new(input),
            between_frames: true,
        }
    }

    fn source(&mut self) -> &mut Sniffed {
        self.decoder.get_mut().input.get_mut()
    }

    fn input(&mut self) -> &mut BufReader<Sniffed> {
        &mut self.decoder.get_mut().input
    }
}

/// The end of a frame that the input ended inside.
fn incomplete_frame() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "incomplete frame")
}

impl Read for Lz4Frames {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.between_frames {
                if self.input().fill_buf()?.is_empty() {
                    return Ok(0);
                }
                self.between_frames = false;
            }
            let error = match self.decoder.read(buf) {
                Ok(0) if self.decoder.get_ref().seen => return Err(incomplete_frame()),
                Ok(0) => {
                    self.between_frames = true;
                    continue;
                }
                Ok(read) => return Ok(read),
                // A block or a header cut short.
                Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => {
                    return Err(incomplete_frame());
                }
                Err(error) => error,
            };
            let skippable = error
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<lz4_flex::frame::Error>());
            let Some(&lz4_flex::frame::Error::SkippableFrame(length)) = skippable else {
                return Err(error);
            };
            let length = u64::from(length);
            if io::copy(&mut self.input().take(length), &mut io::sink())? < length {
                return Err(incomplete_frame());
            }
            self.between_frames = true;
        }
    }
}

/// A reader that notes when it has met the end of its input.
struct EndSeen<R> {
    input: R,
    seen: bool,
}

impl<R: Read> Read for EndSeen<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.input.read(buf)?;
        self.seen |= read == 0 && !buf.is_empty();
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::*;
    use crate::io::testing::{self, gzip};

    fn zstd(bytes: &[u8]) -> Vec<u8> {
        zstd::encode_all(bytes, 3).unwrap()
    }

    fn xz(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = liblzma::write::XzEncoder::new(Vec::new(), 1);
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    fn bzip2(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// One LZ4 frame of `bytes` in 64 KiB blocks, with no content checksum, so that it ends with
    /// its end mark.
    fn lz4(bytes: &[u8]) -> Vec<u8> {
        let info =
            lz4_flex::frame::FrameInfo::new().block_size(lz4_flex::frame::BlockSize::Max64KB);
        let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// A zstd skippable frame holding `bytes`, which a decoder skips.
    pub(super) fn skippable(bytes: &[u8]) -> Vec<u8> {
        let mut frame = vec![0x50, 0x2a, 0x4d, 0x18];
        frame.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        frame.extend_from_slice(bytes);
        frame
    }

    /// `bytes` as a pipe's read end, written by a thread of its own.
    pub(super) fn piped(bytes: Vec<u8>) -> File {
        let (reader, mut writer) = std::io::pipe().unwrap();
        thread::spawn(move || writer.write_all(&bytes));
        File::from(std::os::fd::OwnedFd::from(reader))
    }

    /// Everything `source` decodes to, and how decoding ended: through the pipe when `format`
    /// is `None`, in buffers when it is known.
    pub(super) fn decoded(source: File, format: Option<Format>) -> (Vec<u8>, Result<(), Failure>) {
        let mut out = Vec::new();
        let decoding = match format {
            None => {
                let (mut pipe, decoding) = decode(source).unwrap();
                pipe.read_to_end(&mut out).unwrap();
                decoding
            }
            Some(format) => return decoded_file(source, format, NonZeroUsize::MIN),
        };
        (out, decoding.finish())
    }

    /// Everything the regular file `source` decodes to, in buffers, with up to `threads`
    /// decoders, and how decoding ended.
    pub(super) fn decoded_file(
        source: File,
        format: Format,
        threads: NonZeroUsize,
    ) -> (Vec<u8>, Result<(), Failure>) {
        let (mut buffers, decoding) = decode_file(source, format, BUFFERS, threads).unwrap();
        let mut out = Vec::new();
        // Odd sizes, so that reads straddle buffers.
        let mut buf = [0; 100_003];
        loop {
            match buffers.read(&mut buf) {
                0 => break,
                n => out.extend_from_slice(&buf[..n]),
            }
        }
        (out, decoding.finish())
    }

    /// A regular file holding `bytes`, unlinked.
    pub(super) fn file_of(bytes: &[u8]) -> File {
        static FILES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("pipelines-sniffed-{}-{n}", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::write(&path, bytes).unwrap();
        let file = File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        file
    }

    /// [`decoded`] both ways, `bytes` being `format`: what came and how it ended, each way.
    fn decoded_both_ways(bytes: &[u8], format: Format) -> [(Vec<u8>, Result<(), Failure>); 2] {
        [None, Some(format)].map(|way| decoded(piped(bytes.to_vec()), way))
    }

    /// What `bytes` decode to, sniffed as a stream is and as a regular file is (decoded by one
    /// decoder and by up to three), and how decoding ended, each way.
    fn sniffed_every_way(bytes: &[u8]) -> [(Vec<u8>, Result<(), Failure>); 3] {
        let format = sniff_file(&file_of(bytes)).unwrap();
        [
            decoded(piped(bytes.to_vec()), None),
            decoded(file_of(bytes), Some(format)),
            decoded_file(file_of(bytes), format, NonZeroUsize::new(3).unwrap()),
        ]
    }

    pub(super) fn reason(ended: Result<(), Failure>) -> String {
        match ended {
            Err(Failure::Decompressing(reason)) => reason.to_string(),
            other => panic!("{other:?} instead of a decoding failure"),
        }
    }

    /// What `sniff` says of `start`, the format it begins, if a format.
    fn format(start: &[u8], ended: bool) -> Option<Format> {
        match sniff(start, ended)? {
            Start::Format(format) => Some(format),
            Start::Skippable(length) => panic!("a skippable frame of {length} bytes"),
        }
    }

    #[test]
    fn sniffing_decides_on_the_fewest_bytes() {
        assert_eq!(format(b"\x1f\x8b\x08", false), Some(Format::Gzip));
        assert_eq!(format(b"\x28\xb5\x2f\xfd", false), Some(Format::Zstd));
        assert_eq!(format(b"\xfd7zXZ\x00", false), Some(Format::Xz));
        assert_eq!(format(b"BZh91AY&SY", false), Some(Format::Bzip2));
        assert_eq!(
            format(b"BZh1\x17\x72\x45\x38\x50\x90", false),
            Some(Format::Bzip2),
            "an empty bzip2 stream"
        );
        assert_eq!(format(b"\x04\x22\x4d\x18", false), Some(Format::Lz4));
        assert_eq!(
            sniff(b"\x5f\x2a\x4d\x18\x03\x01\x00\x00", false),
            Some(Start::Skippable(259))
        );
        assert_eq!(
            format(b"a", false),
            Some(Format::Plain),
            "no magic begins so"
        );
        for plain in [
            &b"\x1f\x8c"[..],
            b"BZh0",
            b"BZh9 is plain text",
            b"\xfd7zXZ\x01",
            b"\x60\x2a\x4d\x18",
            b"\x02\x21\x4c\x18 legacy LZ4",
        ] {
            assert_eq!(format(plain, false), Some(Format::Plain), "{plain:?}");
        }
        let starts = [
            &b""[..],
            b"\x1f",
            b"\x28\xb5\x2f",
            b"\xfd7zXZ",
            b"BZh",
            b"BZh51AY&S",
            b"\x04\x22",
            b"\x50\x2a\x4d\x18\x00\x00\x00",
        ];
        for start in starts {
            assert_eq!(sniff(start, false), None, "{start:?} may begin a magic");
            assert_eq!(
                format(start, true),
                Some(Format::Plain),
                "but the source ended"
            );
        }
    }

    #[test]
    fn a_file_is_sniffed_where_it_stands() {
        let path = std::env::temp_dir().join(format!("pipelines-sniff-{}", std::process::id()));
        std::fs::write(&path, gzip(b"x\n")).unwrap();
        let mut file = File::open(&path).unwrap();
        assert_eq!(sniff_file(&file).unwrap(), Format::Gzip);
        let mut all = Vec::new();
        file.read_to_end(&mut all).unwrap();
        assert_eq!(all, gzip(b"x\n"), "the offset did not move");
        std::fs::write(&path, b"\x1f").unwrap();
        assert_eq!(
            sniff_file(&File::open(&path).unwrap()).unwrap(),
            Format::Plain
        );
        std::fs::write(&path, [&b"plain\n"[..], &zstd(b"z\n")].concat()).unwrap();
        let mut file = File::open(&path).unwrap();
        assert_eq!(sniff_file(&file).unwrap(), Format::Plain);
        file.seek(io::SeekFrom::Start(6)).unwrap();
        assert_eq!(
            sniff_file(&file).unwrap(),
            Format::Zstd,
            "from the offset on"
        );
        assert_eq!(file.stream_position().unwrap(), 6, "which did not move");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn every_member_and_frame_is_decoded_and_plain_bytes_pass() {
        let members = [gzip(b"one\n"), gzip(b""), gzip(b"two\nthr")].concat();
        for (out, ended) in decoded_both_ways(&members, Format::Gzip) {
            assert_eq!(out, b"one\ntwo\nthr");
            assert!(ended.is_ok());
        }
        let frames = [zstd(b"one\n"), skippable(b"not text"), zstd(b"two\n")].concat();
        for (out, ended) in decoded_both_ways(&frames, Format::Zstd) {
            assert_eq!(out, b"one\ntwo\n");
            assert!(ended.is_ok());
        }
        // Many buffers, each handed back and filled again.
        let text: Vec<u8> = (0..2_000_000u32).flat_map(|n| n.to_le_bytes()).collect();
        for (out, ended) in decoded_both_ways(&zstd(&text), Format::Zstd) {
            assert!(out == text, "{} bytes of {}", out.len(), text.len());
            assert!(ended.is_ok());
        }
        for plain in [&b""[..], b"\x1f", b"\x28\xb5\x2f", b"plain\n", b"\x1f\x8c"] {
            let (out, ended) = decoded(piped(plain.to_vec()), None);
            assert_eq!(out, plain);
            assert!(ended.is_ok());
        }
    }

    #[test]
    fn every_xz_and_bzip2_stream_and_lz4_frame_is_decoded() {
        let text: Vec<u8> = (0..100_000u32)
            .flat_map(|n| format!("{n}\n").into_bytes())
            .collect();
        let (half, rest) = text.split_at(text.len() / 2 + 7);
        let both =
            |encode: fn(&[u8]) -> Vec<u8>| [encode(half), encode(b""), encode(rest)].concat();
        // xz's stream padding: zero bytes, four at a time, between streams.
        let padded_xz = [xz(half), vec![0; 8], xz(rest)].concat();
        let framed_lz4 = [lz4(half), skippable(b"not text"), lz4(rest), skippable(b"")].concat();
        for bytes in [both(xz), padded_xz, both(bzip2), both(lz4), framed_lz4] {
            for (out, ended) in sniffed_every_way(&bytes) {
                assert!(out == text, "{} bytes of {}", out.len(), text.len());
                assert!(ended.is_ok(), "{ended:?}");
            }
        }
    }

    /// A skippable frame first (as `pzstd` writes one before each frame), between frames, last,
    /// or alone: the frame after it says what the source holds, and a decoder skips it.
    #[test]
    fn skippable_frames_are_looked_past() {
        let (zstd_frame, lz4_frame) = (zstd(b"z\n"), lz4(b"l\n"));
        // Contents shorter and longer than the magic sniffing reads.
        let (empty, short, long) = (skippable(b""), skippable(b"s"), skippable(&[7; 300]));
        let cases: [(Vec<u8>, &[u8]); 8] = [
            ([&short[..], &zstd_frame].concat(), b"z\n"),
            ([&empty[..], &long, &lz4_frame].concat(), b"l\n"),
            ([&zstd_frame[..], &short, &zstd_frame].concat(), b"z\nz\n"),
            (
                [&long[..], &lz4_frame, &empty, &lz4_frame, &short].concat(),
                b"l\nl\n",
            ),
            (empty.clone(), b""),
            ([&long[..], &short, &empty].concat(), b""),
            ([&empty[..], b"z"].concat(), b""),
            ([&empty[..], &long[..long.len() - 1]].concat(), b""),
        ];
        for (n, (bytes, text)) in cases.into_iter().enumerate() {
            for (way, (out, ended)) in sniffed_every_way(&bytes).into_iter().enumerate() {
                assert_eq!(out, text, "case {n}, way {way}");
                match n {
                    // Neither a zstd nor an LZ4 frame follows: zstd's decoder says so.
                    6 => assert_eq!(reason(ended), "Unknown frame descriptor"),
                    // The source ends inside a skippable frame.
                    7 => assert_eq!(reason(ended), "incomplete frame"),
                    _ => assert!(ended.is_ok(), "case {n}, way {way}: {ended:?}"),
                }
            }
        }
    }

    #[test]
    fn a_known_format_is_not_sniffed_again() {
        let (out, ended) = decoded(piped(zstd(b"z\n")), Some(Format::Zstd));
        assert_eq!(out, b"z\n");
        assert!(ended.is_ok());
    }

    #[test]
    fn a_fault_ends_decoding_after_the_bytes_before_it() {
        let text: Vec<u8> = (0..200_000)
            .flat_map(|n| format!("line {n}\n").into_bytes())
            .collect();
        let whole = gzip(&text);
        for (out, ended) in decoded_both_ways(&whole[..whole.len() - 4], Format::Gzip) {
            assert!(text.starts_with(&out), "a prefix of the text");
            assert!(out.len() > text.len() / 2, "most of it: {}", out.len());
            assert!(matches!(ended, Err(Failure::Decompressing(_))));
        }
        let mut bad_checksum = whole.clone();
        let crc = bad_checksum.len() - 8;
        bad_checksum[crc] ^= 1;
        for (out, ended) in decoded_both_ways(&bad_checksum, Format::Gzip) {
            assert!(out == text, "every byte, then the checksum fails");
            assert!(reason(ended).contains("checksum"));
        }
        let garbage = [gzip(b"a\n"), b"garbage".to_vec()].concat();
        for (out, ended) in decoded_both_ways(&garbage, Format::Gzip) {
            assert_eq!(out, b"a\n");
            reason(ended);
        }
        let zstd_text = zstd(&text);
        for (out, ended) in decoded_both_ways(&zstd_text[..zstd_text.len() - 3], Format::Zstd) {
            assert!(text.starts_with(&out));
            assert!(out.len() > text.len() / 2, "most of it: {}", out.len());
            assert_eq!(reason(ended), "incomplete frame");
        }
        let mut encoder = zstd::Encoder::new(Vec::new(), 3).unwrap();
        encoder.include_checksum(true).unwrap();
        encoder.write_all(&text).unwrap();
        let mut bad_checksum = encoder.finish().unwrap();
        *bad_checksum.last_mut().unwrap() ^= 1;
        for (out, ended) in decoded_both_ways(&bad_checksum, Format::Zstd) {
            // libzstd checks as it decodes the frame's last buffer, and gives none of that buffer.
            assert!(text.starts_with(&out));
            assert!(reason(ended).contains("checksum"));
        }
    }

    /// An xz stream of `text` whose dictionary is `log` bits wide: made with a small one, then
    /// its block header's dictionary size and checksum rewritten (an encoder with a large
    /// dictionary takes ten times its size).
    fn xz_with_dictionary(text: &[u8], log: u8) -> Vec<u8> {
        let mut stream = xz(text);
        // After the 12-byte stream header: the block header's size, its flags, LZMA2's filter
        // id and property size, then the property (2 or 3 times a power of 2), then padding and
        // the header's CRC-32.
        let header = 12..20;
        assert_eq!(stream[header.start..header.start + 4], [2, 0, 0x21, 1]);
        stream[header.start + 4] = (log - 12) * 2;
        let mut crc = flate2::Crc::new();
        crc.update(&stream[header.clone()]);
        stream[header.end..header.end + 4].copy_from_slice(&crc.sum().to_le_bytes());
        stream
    }

    #[test]
    fn bad_xz_bzip2_and_lz4_end_decoding_after_the_bytes_before_it() {
        let text: Vec<u8> = (0..100_000)
            .flat_map(|n| format!("line {n}\n").into_bytes())
            .collect();
        let (xz_text, bzip2_text, lz4_text) = (xz(&text), bzip2(&text), lz4(&text));
        let mut bad_xz_check = xz_text.clone();
        // The CRC-64 before the index and the stream footer.
        let check = bad_xz_check.len() - 12 - 12 - 8;
        bad_xz_check[check] ^= 1;
        let flipped = |bytes: &[u8], at: usize| {
            let mut bytes = bytes.to_vec();
            bytes[at] ^= 0x55;
            bytes
        };
        // What comes out before the fault: every byte of the text, a first part of it, or
        // bytes that the damage made of it.
        #[derive(PartialEq)]
        enum Before {
            Whole,
            Prefix,
            Other,
        }
        // (bytes, a word of the reason, what comes out first)
        let cases: [(Vec<u8>, &str, Before); 9] = [
            (
                xz_text[..xz_text.len() - 5].to_vec(),
                "premature eof",
                Before::Whole,
            ),
            (bad_xz_check, "lzma data error", Before::Whole),
            (
                [&xz_text[..], b"garbage, longer than a stream header"].concat(),
                "",
                Before::Whole,
            ),
            (
                xz_with_dictionary(&text, 28),
                "memory limit",
                Before::Prefix,
            ),
            (
                bzip2_text[..bzip2_text.len() / 2].to_vec(),
                "EOF",
                Before::Prefix,
            ),
            (
                flipped(&bzip2_text, bzip2_text.len() / 2),
                "invalid data",
                Before::Other,
            ),
            (
                [&bzip2_text[..], b"garbage"].concat(),
                "header missing",
                Before::Whole,
            ),
            // Cut at a block's end, before the frame's end mark: lz4_flex alone ends there
            // quietly, as if the frame were whole.
            (
                lz4_text[..lz4_text.len() - 4].to_vec(),
                "incomplete frame",
                Before::Whole,
            ),
            (
                [&lz4_text[..], b"garbage"].concat(),
                "WrongMagicNumber",
                Before::Whole,
            ),
        ];
        for (n, (bytes, word, before)) in cases.into_iter().enumerate() {
            for (out, ended) in sniffed_every_way(&bytes) {
                let prefix = before == Before::Other || text.starts_with(&out);
                assert!(prefix, "case {n}: a prefix of the text");
                assert!(
                    before != Before::Whole || out == text,
                    "case {n}: all of it"
                );
                let reason = reason(ended);
                assert!(reason.contains(word), "case {n}: {reason}");
            }
        }
        for (out, ended) in sniffed_every_way(&xz_with_dictionary(&text, 27)) {
            assert!(
                out == text && ended.is_ok(),
                "a 128 MiB dictionary is allowed"
            );
        }
    }

    #[test]
    fn a_reader_that_goes_ends_the_decoder() {
        let text = vec![b'x'; 64 * BUFFER];
        for way in [None, Some(Format::Zstd)] {
            // The source stays open: a decoder that went on past its reader's going would wait
            // on it for ever, never telling how it ended.
            let (source, mut writer) = std::io::pipe().unwrap();
            let compressed = zstd(&text);
            let _feeding = thread::spawn(move || writer.write_all(&compressed).map(|()| writer));
            let source = File::from(std::os::fd::OwnedFd::from(source));
            let decoding = match way {
                None => decode(source).unwrap().1,
                Some(format) => {
                    let (mut buffers, decoding) =
                        decode_file(source, format, BUFFERS, NonZeroUsize::MIN).unwrap();
                    assert_eq!(buffers.read(&mut [0; 10]), 10);
                    decoding
                }
            };
            // The pipe's reader or the buffers dropped: the thread tells how it ended, and ends.
            let told = decoding.ended.recv_timeout(testing::DEADLINE);
            assert!(matches!(told, Ok(Ok(()))), "{way:?}: {told:?}");
        }
    }

    #[test]
    fn a_failed_read_is_the_sources_failure() {
        for way in [None, Some(Format::Gzip)] {
            let dir = File::open(std::env::temp_dir()).unwrap();
            let (out, ended) = decoded(dir, way);
            assert!(out.is_empty());
            match ended {
                Err(Failure::Reading(error)) => assert_eq!(error.raw_os_error(), Some(21)),
                other => panic!("{other:?} instead of a read failure"),
            }
        }
    }

    /// Reads a line of `lines`, on a thread of its own so that a line held back fails the test
    /// instead of hanging it.
    fn next_line(lines: &mut std::sync::mpsc::Receiver<String>) -> Option<String> {
        lines.recv_timeout(std::time::Duration::from_secs(10)).ok()
    }

    /// The lines read from `pipe`, as they come.
    fn lines_of(pipe: File) -> std::sync::mpsc::Receiver<String> {
        let (send, lines) = std::sync::mpsc::channel();
        thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(pipe)) {
                if line.map(|line| send.send(line)).is_err() {
                    break;
                }
            }
        });
        lines
    }

    #[test]
    fn a_slowly_written_stream_comes_out_as_it_decodes() {
        let (reader, writer) = std::io::pipe().unwrap();
        let (pipe, _decoding) = decode(File::from(std::os::fd::OwnedFd::from(reader))).unwrap();
        let mut lines = lines_of(pipe);
        let mut gzip = GzEncoder::new(writer, Compression::default());
        let mut zstd = zstd::Encoder::new(Vec::new(), 3).unwrap();
        let mut flushed = vec![0];
        for line in ["first", "second"] {
            gzip.write_all(format!("{line}\n").as_bytes()).unwrap();
            // A sync flush: the stream so far decodes to the line, and the writer pauses.
            gzip.flush().unwrap();
            assert_eq!(
                next_line(&mut lines).as_deref(),
                Some(line),
                "gzip held it back"
            );
            zstd.write_all(format!("{line}\n").as_bytes()).unwrap();
            zstd.flush().unwrap();
            flushed.push(zstd.get_ref().len());
        }
        let (reader, mut writer) = std::io::pipe().unwrap();
        let (pipe, _decoding) = decode(File::from(std::os::fd::OwnedFd::from(reader))).unwrap();
        let mut lines = lines_of(pipe);
        // The zstd stream in parts, each ending where a flush ended a block holding a line.
        for (n, line) in ["first", "second"].into_iter().enumerate() {
            writer
                .write_all(&zstd.get_ref()[flushed[n]..flushed[n + 1]])
                .unwrap();
            assert_eq!(
                next_line(&mut lines).as_deref(),
                Some(line),
                "zstd held it back"
            );
        }
    }

    /// zstd frames and BGZF members take every thread, and one decoder runs alone below two
    /// (CONTRACT §12.4).
    #[test]
    fn parts_take_every_thread_and_one_decoder_below_two() {
        let decoders = |threads| pool_decoders(NonZeroUsize::new(threads).unwrap());
        let counts = [1, 2, 3, 16].map(|threads| decoders(threads).map(NonZeroUsize::get));
        assert_eq!(counts, [None, Some(2), Some(3), Some(16)]);
    }
}
