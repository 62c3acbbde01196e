//! # decompressed
//!
//! The decoded bytes of any compressed file or pipe: gzip members, zstd frames, xz streams, an
//! `.lzma` stream, bzip2 streams and LZ4 frames (and legacy frames), each told by its first bytes
//! (past zstd's and LZ4's skippable frames) and decoded one after another to the source's end;
//! anything else passes through as it is, as `zcat -f` does, and compress's `.Z` is refused. A
//! regular file's frames, members and blocks are decoded on several threads where its layout allows
//! (zstd frames, BGZF members, xz blocks, bzip2 blocks), a stream's BGZF members, xz and bzip2
//! blocks too, in order. A fault gives every byte decoded before it, then an error; a source cut
//! short inside a member, frame or stream is never read as its end (one cut between two members is
//! a whole file of fewer).
//!
//! ```no_run
//! use std::io::BufRead;
//!
//! for line in decompressed::Reader::open("access.log.gz")?.lines() {
//!     println!("{}", line?);
//! }
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! The crate's face is [`Reader`] (`Read` and `BufRead`; `examples/zcat.rs` is `zcat -f` on it).
//! Below it, for a caller that runs many decodings and takes their buffers uncopied, as
//! linewright's `-z` does: [`decode`] (a stream, through a pipe), [`decode_file`] (a regular
//! file, its buffers handed over in memory: [`DecodedFile`]), [`sniff_file`] and [`Format`],
//! [`Regular`], [`Decoding`] and [`Failure`] (how decoding ended), [`SpareBuffers`] (the
//! caller's pool of buffers, freed when dropped), [`gzip::GzipMembers`] (ISA-L's gzip reader
//! alone) and five sizes ([`BUFFER`], [`BUFFERS`], [`DECODED_HELD`], [`DECODED_HERE`],
//! [`QUEUED`]): 8 types, 3 functions, 5 constants, 1 module. It changes no thread it did not
//! start and no descriptor it did not open (docs/CONTRACT.md §12.6, §12.7).
//!
//! ## How
//!
//! A compressed source is decoded on a thread of its own, its bytes handed to the reader in
//! memory; a stream's through a pipe instead for a caller that waits on descriptors ([`decode`]).
//! A regular file's parts decoded apart (zstd frames, BGZF members) are decoded on threads of
//! their own and put in order on the reading thread as it reads: a thread between, one more
//! hop, woke and was woken for every piece. A [`Reader`] on one thread starts none: its reads
//! pull the decoder on the reading thread.
//!
//! A regular file's format is sniffed before it is decoded ([`sniff_file`]), a stream's by the
//! decoder as it reads it. Which sources are decoded, and how each is handed on, is the caller's
//! rule (linewright's `io::sources`); this crate carries it out.
//!
//! Why a thread: on two cores the decoder, at a tenth of the renderer's speed or less, is most of
//! the cost, so it runs beside the rendering and the rendering hides behind it.
//! A small regular file ([`DECODED_HERE`]) is the exception: a thread and its hand-offs cost more
//! than decoding it, so it is decoded whole, at its turn on the reader's thread, or ahead of it on
//! one thread that small FILEs share (as linewright's `io::ahead` does).
//!
//! Why two ways to hand the bytes on: a regular file is never live, so its decoded bytes go in
//! whole buffers over a bounded channel ([`decode_file`], read with [`DecodedFile`]), recycled,
//! with no system call and no kernel copy; at zstd's speed (about 1 GB/s) a pipe's write and read,
//! each a copy through the kernel, cost more than the decoding. A stream may be live: [`Reader`]
//! takes its bytes in memory too, but each read of the decoder is sent at once, however few bytes
//! it gave, rather than a whole buffer; [`decode`] hands them through a pipe, whose read end is a
//! stream like stdin, so that waiting for input while watching the output's reader, readiness,
//! the reactor and writing when input is idle work unchanged in every one of linewright's
//! drivers. Either way the decoder hands on what it has whenever its input pauses, so a slowly
//! written compressed stream still comes out line by line.
//!
//! The thread ends at the source's end, at a failure, or when its reader has gone. Before the
//! decoded bytes end (the pipe closes, the channel disconnects) it sends how decoding ended,
//! which [`Decoding::finish`] then takes without waiting, on any thread, the async runtime's too.

use std::fs::File;
use std::io::{self, Seek};
use std::num::NonZeroUsize;
use std::os::fd::{AsFd, OwnedFd};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread;

use crossbeam_channel::{Receiver, Sender, bounded};

use fd_facts as fd;

mod bgzf;
mod bzip2;
mod dispatch;
mod format;
pub mod gzip;
mod handoff;
mod lz4;
mod members;
mod parts;
mod pool;
mod pump;
mod reader;
mod sized;
mod source;
mod spares;
mod streams;
mod walk;
mod zstd;

use dispatch::run;
pub use format::{Format, sniff_file};
pub use handoff::DecodedFile;
use handoff::{Decoded, Filling, Kept, Out, Passing, PipeOut, ToReader};
pub use reader::Reader;
use source::Undecoded;
pub use spares::SpareBuffers;
use walk::Parts;

/// A regular file to sniff and decode: read from `offset` on (stdin may be a file that something
/// before read part of, and reading goes on from where it stopped), where it held `len` bytes
/// when opened. Found once: a small FILE then costs the system calls of its reading alone.
#[derive(Debug)]
pub struct Regular {
    /// The file, at `offset`.
    pub file: File,
    /// Where reading begins.
    pub offset: u64,
    /// The bytes from `offset` to the end, when opened.
    pub len: u64,
}

impl Regular {
    /// `file`, of `size` bytes when opened, read from `offset`: a file opened by name is at 0.
    pub fn at(file: File, offset: u64, size: u64) -> Regular {
        Regular {
            file,
            offset,
            len: size.saturating_sub(offset),
        }
    }
}

/// The end of a frame that the input ended inside.
pub(crate) fn incomplete_frame() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "incomplete frame")
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
/// than one runs (FILEs decoded ahead, as linewright's `io::ahead` decodes them); also the most
/// kept spare.
pub const DECODED_HELD: usize = 32 << 20;

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
/// reads it (a pipe's bytes can be read only once), passing plain bytes through; a stream's BGZF
/// members, xz and bzip2 blocks on up to `threads` threads.
pub fn decode(source: File, threads: NonZeroUsize) -> io::Result<(File, Decoding)> {
    let (reader, writer) = std::io::pipe()?;
    fd::enlarge_pipe(writer.as_fd());
    let out = PipeOut {
        pipe: File::from(OwnedFd::from(writer)),
        buf: vec![0; BUFFER],
    };
    let decoding = start(out, move |out| {
        run(Undecoded::new(source), None, threads, out)
    })?;
    Ok((File::from(OwnedFd::from(reader)), decoding))
}

/// [`decode`] for a reader in memory ([`Reader`]): the stream's decoded bytes handed over as each
/// read of its decoder gives them, at most `buffers` (at least one) that the reader has not taken,
/// made from `spares` where it has some and kept there once done with.
fn decode_stream(
    source: File,
    threads: NonZeroUsize,
    buffers: usize,
    spares: &SpareBuffers,
) -> io::Result<(DecodedFile, Decoding)> {
    let (to_reader, decoded) = in_memory(buffers, 0, spares);
    let decoding = start(Passing::new(to_reader), move |out| {
        run(Undecoded::new(source), None, threads, out)
    })?;
    Ok((decoded, decoding))
}

/// The two ends of decoded bytes handed over in memory: the decoder's, making at most `buffers`
/// buffers (at least one) from `spares`, and the reader's, handing buffers back with room for
/// `ahead` more (the pieces a pool's decoders hold).
fn in_memory(buffers: usize, ahead: usize, spares: &SpareBuffers) -> (ToReader, DecodedFile) {
    let buffers = buffers.max(1);
    let (to_reader, full) = bounded(buffers);
    let (to_decoder, empty) = bounded(buffers + ahead);
    (
        ToReader::new(to_reader, empty, buffers, spares.clone()),
        DecodedFile::new(full, to_decoder, spares.clone()),
    )
}

/// Starts decoding a regular file that holds `format` (sniffed with [`sniff_file`]): where it holds
/// at most `here` bytes from its offset on, whole on this thread (`decode_here`), else on a thread
/// of its own, holding at most `buffers` decoded buffers (at least one) that the reader has not
/// taken, with up to `threads` decoders where its parts decode apart (zstd frames, BGZF members, an
/// xz stream's blocks; CONTRACT §12.4), its buffers made from `spares` where it has some and kept
/// there once done with: returns its decoded bytes, handed over in memory and in the file's order,
/// and how decoding ends.
pub fn decode_file(
    source: Regular,
    format: Format,
    buffers: usize,
    threads: NonZeroUsize,
    here: u64,
    spares: &SpareBuffers,
) -> io::Result<(DecodedFile, Decoding)> {
    let source = match source.len <= here {
        true => match decode_here(source, format, spares)? {
            Ok(whole) => return Ok(whole.handed_over()),
            Err(file) => file,
        },
        false => source.file,
    };
    let parts = Parts::of(format);
    let pool = parts.zip(pool_decoders(threads));
    // Room for every piece the decoders may hold, so that pieces are reused, not made anew.
    let ahead = pool.map_or(0, |(_, decoders)| pool::pieces_ahead(decoders));
    let (to_reader, decoded) = in_memory(buffers, ahead, spares);
    let (tell, ended) = bounded(1);
    let (source, to_reader) = match pool {
        Some((parts, decoders)) => {
            match pool::start_parts(source, parts, decoders, to_reader, tell.clone()) {
                Ok(hand_on) => return Ok((decoded.with_parts(hand_on), Decoding { ended })),
                Err(alone) => alone,
            }
        }
        None => (source, to_reader),
    };
    start_telling(Filling::new(to_reader), tell, move |out| match parts {
        Some(parts) => pool::decode_alone(source, parts, out),
        None => run(Undecoded::new(source), Some(format), threads, out),
    })?;
    Ok((decoded, Decoding { ended }))
}

/// The most compressed bytes of a regular file decoded whole (`decode_here`), on the reader's
/// thread at its turn or on one thread ahead of it (as linewright's `io::ahead` does): a thread of
/// its own, its channels and their hand-offs cost more than decoding this much, about 2 ms of
/// ISA-L's.
pub const DECODED_HERE: u64 = 256 << 10;

/// The most a file decoded whole may decode to, in [`BUFFER`]s: a file that decodes to more is
/// decoded again on a thread, from its start, as any other, and the work is lost (a file of
/// [`DECODED_HERE`] bytes would decode at more than 16 times its size).
const KEPT_HERE: usize = 16;

/// The most small FILEs decoded ahead (as linewright's `io::ahead` does), decoded or to decode,
/// that their reader has not taken: each decoded whole may hold up to `KEPT_HERE` buffers (4 MiB),
/// and together no more than [`DECODED_HELD`].
pub const QUEUED: usize = DECODED_HELD / (KEPT_HERE * BUFFER);
const _: () = assert!(
    QUEUED >= 1 && QUEUED * KEPT_HERE * BUFFER <= DECODED_HELD,
    "room for one small FILE decoded ahead, and all of them within DECODED_HELD"
);

/// A small file decoded whole: its decoded buffers and how decoding ended.
#[derive(Debug)]
struct DecodedHere {
    kept: Vec<Decoded>,
    ended: Result<(), Failure>,
    spares: SpareBuffers,
}

impl DecodedHere {
    /// The buffers handed to a reader as a decoding thread's come, and how decoding ended.
    fn handed_over(self) -> (DecodedFile, Decoding) {
        let (to_reader, full) = bounded(self.kept.len().max(1));
        self.kept.into_iter().for_each(|buffer| {
            let _ = to_reader.send(buffer);
        });
        // Buffers the reader hands back go spare: nothing here takes them.
        let (to_nobody, _) = bounded(0);
        let (tell, told) = bounded(1);
        let _ = tell.send(self.ended);
        (
            DecodedFile::new(full, to_nobody, self.spares),
            Decoding { ended: told },
        )
    }
}

/// Decodes `source` whole on this thread, into recycled buffers: a small FILE costs its bytes'
/// decoding, not a thread and hand-offs (a thousand FILEs of 8 KB took longer than `zcat` on
/// them). Where it decodes to more than [`KEPT_HERE`] buffers, the file is handed back, its
/// offset where it was.
fn decode_here(
    source: Regular,
    format: Format,
    spares: &SpareBuffers,
) -> io::Result<Result<DecodedHere, File>> {
    let Regular { file, offset, len } = source;
    let mut out = Filling::new(Kept::new(KEPT_HERE, spares.clone()));
    // Read in one piece; by one decoder, which decodes BGZF members and zstd frames alike.
    let shared = Arc::new(file);
    // A byte past the end finds it in the same read; a length past memory's is read in pieces.
    let most = usize::try_from(len).map_or(usize::MAX, |len| len.saturating_add(1));
    let reading = Undecoded::reading(shared.clone(), most);
    let ended = decoded_into(&mut out, |out| run(reading, Some(format), ONE, out));
    let kept = std::mem::take(&mut out.buffers.buffers);
    if !out.buffers.overflowed {
        let spares = spares.clone();
        return Ok(Ok(DecodedHere {
            kept,
            ended,
            spares,
        }));
    }
    kept.into_iter()
        .for_each(|decoded| spares.keep(decoded.bytes));
    // `run` has dropped its share: the file is whole again (a panic caught there dropped it as it
    // unwound).
    let mut file = Arc::into_inner(shared).ok_or_else(|| io::Error::other("file still shared"))?;
    file.seek(io::SeekFrom::Start(offset))?;
    Ok(Err(file))
}

/// How many of `threads` decode a file's zstd frames or BGZF members at once: every one, or none
/// (one decoder, as for a stream) below two; xz's decoder, ten times slower than the rendering,
/// takes every thread too. Every one was chosen when every thread had a short slice (gone, CONTRACT
/// §12.6): without it, two `pzstd` decoders on 2 cores beside busy processes took 1.15-1.22x as
/// long (results/runs/2026-12-01T2258Z-0a4a5df-2-cores); on a quiet machine two took 0.74 (`pzstd`)
/// and 0.84 (BGZF) of one's time (results/runs/2026-12-02T2101Z-1280f26-2-cores-decoders).
fn pool_decoders(threads: NonZeroUsize) -> Option<NonZeroUsize> {
    Some(threads).filter(|threads| threads.get() > 1)
}

/// Starts the thread that decodes into `out` with `decoding`, and tells how it ended before `out`
/// is dropped, which ends the decoded bytes. A panic is told as a failure of the source.
fn start<O: Out>(
    out: O,
    decoding: impl FnOnce(&mut O) -> Result<(), Failure> + Send + 'static,
) -> io::Result<Decoding> {
    let (tell, ended) = bounded(1);
    start_telling(out, tell, decoding)?;
    Ok(Decoding { ended })
}

/// [`start`], telling how decoding ended over `tell`.
fn start_telling<O: Out>(
    mut out: O,
    tell: Sender<Result<(), Failure>>,
    decoding: impl FnOnce(&mut O) -> Result<(), Failure> + Send + 'static,
) -> io::Result<()> {
    thread::Builder::new()
        .name("decode".to_owned())
        .spawn(move || {
            let ended = decoded_into(&mut out, decoding);
            let _ = tell.send(ended);
            drop(out);
        })?;
    Ok(())
}

/// Decodes into `out` with `decoding`, then hands on what `out` holds: the bytes before a failure
/// go too (a reader gone wants none of them). A panic in either is the source's failure, told as
/// any other, where it would have ended the thread without a word.
fn decoded_into<O: Out>(
    out: &mut O,
    decoding: impl FnOnce(&mut O) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let ended = caught(|| decoding(out));
    let flushed = caught(|| {
        out.flush();
        Ok(())
    });
    ended.and(flushed)
}

/// What `decoding` returned, or its panic as a failure of the source.
fn caught<T>(decoding: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(decoding)).unwrap_or_else(|panic| {
        let said = match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
            (Some(text), _) => text,
            (_, Some(text)) => text.as_str(),
            _ => "no message",
        };
        let reason =
            io::Error::other(format!("the decoder panicked: {said}").replace(['\n', '\r'], " "));
        Err(Failure::Decompressing(reason))
    })
}

/// One decoder, as a stream (which may be live) is decoded.
const ONE: NonZeroUsize = NonZeroUsize::MIN;

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Cursor, Read, Write};

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::source::{Sniffed, Undecoded};
    use super::*;
    use pipelines_testing::{self as testing, gzip};

    pub(super) fn zstd(bytes: &[u8]) -> Vec<u8> {
        ::zstd::encode_all(bytes, 3).unwrap()
    }

    pub(super) fn xz(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = liblzma::write::XzEncoder::new(Vec::new(), 1);
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    pub(super) fn bzip2(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = ::bzip2::write::BzEncoder::new(Vec::new(), ::bzip2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// One LZ4 frame of `bytes` in 64 KiB blocks, with no content checksum, so that it ends with
    /// its end mark.
    pub(super) fn lz4(bytes: &[u8]) -> Vec<u8> {
        let info =
            lz4_flex::frame::FrameInfo::new().block_size(lz4_flex::frame::BlockSize::Max64KB);
        let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// `bytes` as a sniffed source, read through a buffer as each adapter reads it.
    pub(super) fn input(bytes: &[u8]) -> BufReader<Sniffed> {
        let sniffed = Cursor::new(Vec::new()).chain(Undecoded::new(file_of(bytes)));
        BufReader::with_capacity(1000, sniffed)
    }

    /// Everything `reader` reads, and the failure it ends with, if any, as words.
    pub(super) fn read_all(mut reader: impl Read) -> (Vec<u8>, Option<String>) {
        let mut out = Vec::new();
        let ended = reader.read_to_end(&mut out).err();
        (out, ended.map(|error| error.to_string()))
    }

    /// `bytes` as one LZ4 legacy frame, as `lz4 -l` writes it: the magic, then each block of
    /// `block` bytes compressed apart, after its compressed size.
    pub(super) fn lz4_legacy(bytes: &[u8], block: usize) -> Vec<u8> {
        let mut frame = super::lz4::LEGACY_MAGIC.to_le_bytes().to_vec();
        for chunk in bytes.chunks(block) {
            let compressed = lz4_flex::block::compress(chunk);
            frame.extend_from_slice(&(compressed.len() as u32).to_le_bytes());
            frame.extend_from_slice(&compressed);
        }
        frame
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
        let Some(format) = format else {
            return testing::within("decoding a stream", move || {
                let mut out = Vec::new();
                let (mut pipe, decoding) = decode(source, ONE).unwrap();
                pipe.read_to_end(&mut out).unwrap();
                (out, decoding.finish())
            });
        };
        decoded_file(source, format, NonZeroUsize::MIN)
    }

    /// Everything the regular file `source` decodes to, in buffers, with up to `threads`
    /// decoders, and how decoding ended.
    pub(super) fn decoded_file(
        source: File,
        format: Format,
        threads: NonZeroUsize,
    ) -> (Vec<u8>, Result<(), Failure>) {
        decoded_file_up_to(source, format, threads, 0)
    }

    /// [`decoded_file`], decoded on this thread if it holds at most `here` bytes.
    fn decoded_file_up_to(
        source: File,
        format: Format,
        threads: NonZeroUsize,
        here: u64,
    ) -> (Vec<u8>, Result<(), Failure>) {
        testing::within("decoding a file", move || {
            drained(
                decode_file(
                    regular(source),
                    format,
                    BUFFERS,
                    threads,
                    here,
                    &SpareBuffers::default(),
                )
                .unwrap(),
            )
        })
    }

    /// Every decoded byte of a decoded file, and how decoding ended.
    fn drained((mut buffers, decoding): (DecodedFile, Decoding)) -> (Vec<u8>, Result<(), Failure>) {
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

    /// `file` as it is now, from its offset on. A stream (a source that stays open) holds an
    /// unknown amount, and is never decoded whole.
    pub(super) fn regular(mut file: File) -> Regular {
        let metadata = file.metadata().unwrap();
        if !metadata.is_file() {
            return Regular::at(file, 0, u64::MAX);
        }
        let offset = file.stream_position().unwrap();
        Regular::at(file, offset, metadata.len())
    }

    /// [`file_of`] as a [`Regular`].
    pub(super) fn regular_of(bytes: &[u8]) -> Regular {
        regular(file_of(bytes))
    }

    /// A regular file holding `bytes`, unlinked: the crate's, under the name the wing's tests use.
    pub(super) use pipelines_testing::file as file_of;

    /// One zstd frame of `bytes` as `zstd::Encoder` writes it when told `how`.
    pub(super) fn frame(
        bytes: &[u8],
        how: impl FnOnce(&mut ::zstd::Encoder<'static, Vec<u8>>),
    ) -> Vec<u8> {
        let mut encoder = ::zstd::Encoder::new(Vec::new(), 3).unwrap();
        how(&mut encoder);
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// What the one decoder, `MultiGzDecoder` on a stream, makes of `bytes`.
    pub(super) fn streamed(bytes: &[u8]) -> (Vec<u8>, Result<(), Failure>) {
        decoded(piped(bytes.to_vec()), None)
    }

    /// Numbered lines, `lines` of them.
    pub(super) fn text(lines: std::ops::Range<u32>) -> Vec<u8> {
        lines
            .flat_map(|n| format!("line {n} of the text\n").into_bytes())
            .collect()
    }

    pub(super) use pipelines_testing::bgzf_member;

    /// Bytes that deflate cannot shrink: xorshift's.
    pub(super) fn random(bytes: usize) -> Vec<u8> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        (0..bytes)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect()
    }

    /// [`decoded`] both ways, `bytes` being `format`: what came and how it ended, each way.
    fn decoded_both_ways(bytes: &[u8], format: Format) -> [(Vec<u8>, Result<(), Failure>); 2] {
        [None, Some(format)].map(|way| decoded(piped(bytes.to_vec()), way))
    }

    /// What `bytes` decode to, sniffed as a stream is and as a regular file is (decoded by one
    /// decoder, by up to three, and on this thread), and how decoding ended, each way.
    fn sniffed_every_way(bytes: &[u8]) -> [(Vec<u8>, Result<(), Failure>); 4] {
        let format = sniff_file(&regular_of(bytes)).unwrap();
        let three = NonZeroUsize::new(3).unwrap();
        [
            decoded(piped(bytes.to_vec()), None),
            decoded(file_of(bytes), Some(format)),
            decoded_file(file_of(bytes), format, three),
            decoded_file_up_to(file_of(bytes), format, three, u64::MAX),
        ]
    }

    /// The way back to the decoder has room for every buffer it makes and every piece a pool's
    /// decoders hold, and no more: a buffer handed back while the decoder is busy waits for it.
    /// One that found no room would be kept spare, and a decoder that has made its most could
    /// then wait for a buffer that never comes.
    #[test]
    fn the_way_back_has_room_for_every_buffer_made_and_every_piece_ahead() {
        for (buffers, ahead) in [(2, 0), (2, 3)] {
            let (_to_reader, decoded) = in_memory(buffers, ahead, &SpareBuffers::default());
            for n in 0..buffers + ahead {
                assert!(
                    decoded.empty.try_send(vec![0; n]).is_ok(),
                    "{buffers}, {ahead}: {n}"
                );
            }
            assert!(
                decoded.empty.try_send(Vec::new()).is_err(),
                "{buffers}, {ahead}"
            );
        }
    }

    /// CONTRACT §12.5: a file of at most [`DECODED_HERE`] bytes is decoded by the time
    /// `decode_file` returns, on this thread; one that decodes to more than [`KEPT_HERE`] buffers
    /// is decoded on a thread from its start, the work here dropped, whole all the same.
    #[test]
    fn a_small_file_is_decoded_here_unless_it_decodes_to_too_much() {
        let text: Vec<u8> = (0..2_000)
            .flat_map(|n| format!("line {n}\n").into_bytes())
            .collect();
        let small = gzip(&text);
        assert!(small.len() as u64 <= DECODED_HERE);
        let (buffers, decoding) = decode_file(
            regular_of(&small),
            Format::Gzip,
            BUFFERS,
            ONE,
            DECODED_HERE,
            &SpareBuffers::default(),
        )
        .unwrap();
        assert!(decoding.has_ended(), "decoded before decode_file returned");
        drop(buffers);
        let (out, ended) = decoded_file_up_to(file_of(&small), Format::Gzip, ONE, DECODED_HERE);
        assert!(out == text && ended.is_ok());
        let much = vec![b'\n'; KEPT_HERE * BUFFER + 1];
        for bytes in [gzip(&much), zstd(&much)] {
            assert!(bytes.len() as u64 <= DECODED_HERE);
            let format = sniff_file(&regular_of(&bytes)).unwrap();
            let (out, ended) = decoded_file_up_to(file_of(&bytes), format, ONE, DECODED_HERE);
            assert!(out == much && ended.is_ok(), "{format:?}");
        }
    }

    pub(super) fn reason(ended: Result<(), Failure>) -> String {
        match ended {
            Err(Failure::Decompressing(reason)) => reason.to_string(),
            other => panic!("{other:?} instead of a decoding failure"),
        }
    }

    /// A FILE's length past what memory can address (`Regular`'s fields are the caller's) is
    /// decoded as any other, in reads of a buffer: its length and a byte to find the end in the
    /// same read overflowed.
    #[test]
    fn a_length_past_memory_is_decoded_in_reads_of_a_buffer() {
        let file = file_of(&gzip(b"one\ntwo\n"));
        let source = Regular {
            file,
            offset: 0,
            len: u64::MAX,
        };
        let (out, ended) = drained(
            decode_file(
                source,
                Format::Gzip,
                BUFFERS,
                ONE,
                u64::MAX,
                &SpareBuffers::default(),
            )
            .unwrap(),
        );
        assert_eq!(out, b"one\ntwo\n");
        assert!(ended.is_ok());
    }

    /// Where handing on the last bytes panics.
    struct FlushPanics;

    impl Out for FlushPanics {
        fn room(&mut self) -> Option<&mut [u8]> {
            None
        }

        fn filled(&mut self, _: usize) -> bool {
            false
        }

        fn flush(&mut self) {
            panic!("flushing failed");
        }
    }

    /// A panic while decoding or while the last decoded bytes are handed on is the source's
    /// failure, told as any other with its message, a literal's or a formatted one's: it ended
    /// the thread without a word, which `finish` could only guess at.
    #[test]
    fn a_panic_decoding_or_handing_on_the_last_bytes_is_told_as_the_failure() {
        let told = |decoding: Decoding| {
            let ended = decoding
                .ended
                .recv_timeout(std::time::Duration::from_secs(60));
            reason(ended.expect("the thread ended without a word"))
        };
        let reason = told(start(FlushPanics, |_| Ok(())).unwrap());
        assert!(reason.contains("flushing failed"), "{reason}");
        let at = 7;
        let reason = told(start(FlushPanics, move |_| panic!("decoding failed at {at}")).unwrap());
        assert!(
            reason.contains("the decoder panicked: decoding failed at 7"),
            "{reason}"
        );
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
        let mut encoder = ::zstd::Encoder::new(Vec::new(), 3).unwrap();
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
            let decoding =
                testing::within("a read of the first decoded bytes", move || match way {
                    None => decode(source, ONE).unwrap().1,
                    Some(format) => {
                        let (mut buffers, decoding) = decode_file(
                            regular(source),
                            format,
                            BUFFERS,
                            NonZeroUsize::MIN,
                            0,
                            &SpareBuffers::default(),
                        )
                        .unwrap();
                        assert_eq!(buffers.read(&mut [0; 10]), 10);
                        decoding
                    }
                });
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

    /// A stream's lines come out as it is written, and its decoding has not ended while its
    /// source is open; it has once the decoded bytes end.
    #[test]
    fn a_slowly_written_stream_comes_out_as_it_decodes() {
        let (reader, writer) = std::io::pipe().unwrap();
        let (pipe, decoding) = decode(File::from(std::os::fd::OwnedFd::from(reader)), ONE).unwrap();
        let mut lines = lines_of(pipe);
        let mut gzip = GzEncoder::new(writer, Compression::default());
        let mut zstd = ::zstd::Encoder::new(Vec::new(), 3).unwrap();
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
        assert!(!decoding.has_ended(), "ended while its source is open");
        drop(gzip.finish().unwrap());
        assert_eq!(next_line(&mut lines), None, "a line after the end");
        assert!(
            decoding.has_ended(),
            "not ended once the decoded bytes have"
        );
        decoding.finish().unwrap();
        let (reader, mut writer) = std::io::pipe().unwrap();
        let (pipe, _decoding) =
            decode(File::from(std::os::fd::OwnedFd::from(reader)), ONE).unwrap();
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
