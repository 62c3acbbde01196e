//! A regular file's zstd frames, or BGZF members, decoded on several threads at once and handed
//! on in the file's order.
//!
//! A zstd frame does not depend on the frames around it, and where it ends is found without
//! decoding it (RFC 8878 §3.1.1): its header says how long the header is and whether a checksum
//! ends the frame, and each block's 3-byte header says how long the block is and whether it is
//! the last. So the threads take turns to walk the file to the next frame's end (a few `pread`s
//! of a few bytes each), and each decodes the frame it found into pieces of its own; this thread
//! hands the pieces on frame after frame. `pzstd` writes such files, a frame for every few MiB.
//!
//! BGZF (`bgzip`'s gzip, SAM/BAM's specification §4.1) is gzip whose every member says its own
//! size: a `BC` subfield of the header's extra field holds the member's size less one. The walk
//! is the one thing that differs ([`Parts`]). A member with `bgzip`'s own header is decoded whole
//! by libdeflate ([`WholeMember`]), into the piece, when it decodes whole and exactly; from the
//! first one that does not, flate2's `GzDecoder`, the decoder inside the one-decoder path's
//! `MultiGzDecoder`, decodes the run's members, so faults read the same. A member whose deflate
//! data ends elsewhere than its `BC` size says is decoded to where it ends, as one decoder would,
//! and the rest is left to one decoder from there.
//!
//! What the walk cannot make sense of (a magic or a header it does not know, a block or frame
//! that the file ends inside, a dictionary, a window wider than [`WINDOW`](super::walk::WINDOW)) is left, from that
//! frame on, to the decoder that decodes a file of one frame or member ([`run`]), which says
//! what is wrong as it always does: bad input comes out exactly as without threads, after every
//! frame before it. A file of one frame is decoded by that decoder alone, as is a zstd file when
//! one thread is allowed; a file of BGZF members is then walked on that one thread, its runs
//! decoded as a decoder of the pool decodes them ([`decode_alone`]).
//!
//! Memory: each decoder holds its window (at most [`WINDOW`](super::walk::WINDOW)), at most [`Parts::under_way`] parts
//! per decoder are under way, and each holds at most [`Parts::pieces`] pieces ahead of the reader,
//! so the pieces in memory are at most [`pieces_ahead`] besides the reader's own.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::num::NonZeroUsize;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

use crossbeam_channel::{Receiver, Sender, bounded};
use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

use super::gzip::GzipMembers;
use super::handoff::{Buffers, BuffersOut, Decoded, Filling, Out};
use super::source::Undecoded;
use super::streams::{incomplete_frame, run};
use super::walk::{BGZIP_HEADER, FEXTRA, Part, Parts, Walk};
use super::whole::WholeMember;
use super::{BUFFER, Failure, ONE, caught};

/// The pool's limits for each kind of part.
impl Parts {
    /// The most decoded pieces ([`BUFFER`] bytes each) a part decoded ahead holds until the reader
    /// comes to it, so that a decoder ahead seldom waits for the reader: for zstd 8 MiB, a whole
    /// frame of `pzstd`'s at its default level; for BGZF 2 MiB, more than the 1.2 MiB a run of
    /// [`RUN`](super::walk::RUN) compressed bytes of text decodes to.
    fn pieces(self) -> usize {
        match self {
            Parts::Zstd => 32,
            Parts::Bgzf => 8,
        }
    }

    /// The parts under way for each decoder: decoded, being decoded or being handed on. One
    /// each made a decoder that finished its part wait for the other's part before it, whose
    /// pieces go to the reader as they are decoded, to be handed on: on 2 cores two zstd decoders
    /// took 0.74x one frame's time with 1 part each and 0.69x with 1.5; BGZF's small parts 0.97x,
    /// 0.84x and 0.78x one member's with 1, 2.5 and 4.5 each (docs/DECOMPRESS.md).
    fn under_way(self) -> usize {
        match self {
            Parts::Zstd => 2,
            Parts::Bgzf => 4,
        }
    }
}

/// The most decoded pieces held ahead of the reader when `threads` decoders decode a file of
/// `parts`: the pieces of every part under way, and the one each decoder fills.
pub(super) fn pieces_ahead(parts: Parts, threads: NonZeroUsize) -> usize {
    threads.get() * (parts.under_way() * parts.pieces() + 1)
}

/// Decodes `source`, a regular file holding `parts` from its offset on, into `out`: its parts on
/// up to `threads` threads when it has two or more, else on this thread.
pub(super) fn decode_parts(
    source: File,
    parts: Parts,
    threads: NonZeroUsize,
    out: &mut BuffersOut,
) -> Result<(), Failure> {
    // Where the file cannot be walked (it has no offset or size), the one decoder reads it.
    let Ok(mut walk) = Walk::new(&source, parts) else {
        return run(Undecoded::new(source), Some(parts.format()), ONE, out);
    };
    let start = walk.at;
    let frames = [walk.next(&source), walk.next(&source)];
    if !matches!(frames, [Part::Frame(_), Part::Frame(_)]) {
        return decode_alone(source, parts, out);
    }
    walk.at = start;
    super::slices::ask_short();
    let source = Arc::new(source);
    // Parts under way: the one being handed on, and the rest of each decoder's share.
    let (order, decoded) = bounded(threads.get() * parts.under_way() - 1);
    let walking = Arc::new(Mutex::new(Walking {
        walk,
        order: Some(order),
    }));
    for _ in 0..threads.get() {
        let (source, walking, empty) = (source.clone(), walking.clone(), out.buffers.empty.clone());
        let spawned = thread::Builder::new()
            .name("decode frames".to_owned())
            .spawn(move || decode_frames(&source, parts, &walking, &empty));
        if spawned.is_err() {
            // Those started take every frame; with none, the walk's turn never comes.
            break;
        }
    }
    // Only the decoders hold the walk, so the parts end when the last of them has gone.
    drop(walking);
    hand_on(decoded, &source, parts, start, out)
}

/// Hands on the parts that `decoded` tells of, in the file's order, into `out`, until the walk's
/// end, a fault, or a rest for the one decoder; the parts begin at `start` in `source`.
fn hand_on(
    decoded: Receiver<Parted>,
    source: &File,
    parts: Parts,
    start: u64,
    out: &mut BuffersOut,
) -> Result<(), Failure> {
    let mut handed_on = false;
    for part in decoded {
        match part {
            Parted::Frame(pieces) => {
                handed_on = true;
                for piece in pieces {
                    match piece {
                        Piece::Decoded(piece) => {
                            if !out.pass(piece) {
                                return Ok(());
                            }
                        }
                        Piece::Failed(failure) => return Err(failure),
                        Piece::Rest(at) => return decode_rest(source, parts, at, out),
                    }
                }
            }
            Parted::Rest(at) => return decode_rest(source, parts, at, out),
            Parted::End(at) => return leave_offset(source, at),
        }
    }
    // The decoders have gone without telling the walk's end (none could be started, or a panic
    // outside a part took the walk with it).
    match handed_on {
        false => decode_rest(source, parts, start, out),
        // From the start again, what was handed on would come out twice.
        true => Err(Failure::Decompressing(io::Error::other(
            "the part decoders ended before the file's end",
        ))),
    }
}

/// Decodes `source`, a regular file holding `parts` from its offset on, into `out` on this
/// thread: BGZF members in runs as a decoder of the pool decodes them, whole where libdeflate
/// takes them; zstd frames, and what the walk cannot follow, by the one decoder.
pub(super) fn decode_alone(source: File, parts: Parts, out: &mut impl Out) -> Result<(), Failure> {
    let walk = Walk::new(&source, parts).ok();
    let Some(mut walk) = walk.filter(|_| matches!(parts, Parts::Bgzf)) else {
        return run(Undecoded::new(source), Some(parts.format()), ONE, out);
    };
    let (mut whole, mut input) = (WholeMember::new(), Vec::new());
    loop {
        match walk.next(&source) {
            Part::Frame(members) => {
                match decode_members(&source, members, whole.as_mut(), &mut input, out)? {
                    RunEnded::Whole => {}
                    RunEnded::ReaderGone => return Ok(()),
                    RunEnded::Rest(at) => return decode_rest(&source, parts, at, out),
                }
            }
            Part::Rest(at) => return decode_rest(&source, parts, at, out),
            Part::End(at) => return leave_offset(&source, at),
        }
    }
}

/// Leaves the file's offset at `at`, its end, where a decoder reading the file to its end would
/// have left it: stdin shares it with whatever reads it next.
fn leave_offset(mut source: &File, at: u64) -> Result<(), Failure> {
    source.seek(SeekFrom::Start(at)).map_err(Failure::Reading)?;
    Ok(())
}

/// What a decoder sends of its part, in order.
enum Piece {
    /// Decoded bytes.
    Decoded(Decoded),
    /// The part's fault, after the bytes decoded before it.
    Failed(Failure),
    /// The part ended at this offset, not where the walk found: the rest is the one decoder's.
    Rest(u64),
}

/// What a decoder found next, as it is handed on.
enum Parted {
    /// A part's decoded pieces, as they come; a failure or a rest ends them.
    Frame(Receiver<Piece>),
    /// Left to one decoder from this offset on.
    Rest(u64),
    /// The file's end, at this offset.
    End(u64),
}

/// The walk the decoders take turns at, and where they tell what they found, in the file's order.
struct Walking {
    walk: Walk,
    /// Gone once the walk has ended or the reader has gone.
    order: Option<Sender<Parted>>,
}

/// Decodes the file from `at` on with one decoder, as a file of one frame is decoded.
fn decode_rest(source: &File, parts: Parts, at: u64, out: &mut impl Out) -> Result<(), Failure> {
    let mut rest = source.try_clone().map_err(Failure::Reading)?;
    rest.seek(SeekFrom::Start(at)).map_err(Failure::Reading)?;
    run(Undecoded::new(rest), Some(parts.format()), ONE, out)
}

/// A decoder's thread: takes the next part from the walk and decodes it, until the walk ends or
/// the reader has gone.
fn decode_frames(source: &File, parts: Parts, walking: &Mutex<Walking>, empty: &Receiver<Vec<u8>>) {
    let (mut decoder, mut whole) = (None, None);
    let mut input = vec![0; BUFFER];
    loop {
        let (frame, pieces) = {
            let mut walking = walking.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(order) = walking.order.take() else {
                return;
            };
            let (part, frame) = match walking.walk.next(source) {
                Part::Frame(range) => {
                    let (pieces, taken) = bounded(parts.pieces());
                    (Parted::Frame(taken), Some((range, pieces)))
                }
                Part::Rest(at) => (Parted::Rest(at), None),
                Part::End(at) => (Parted::End(at), None),
            };
            // Sent while the walk is held, so that parts go in the file's order. After the
            // walk's end, or with the reader gone, the order is dropped: nothing more comes.
            let sent = order.send(part).is_ok();
            match frame {
                Some(frame) if sent => {
                    walking.order = Some(order);
                    frame
                }
                _ => return,
            }
        };
        let mut out = Filling::new(ToPart {
            pieces,
            empty: empty.clone(),
        });
        let decoded = caught(|| match parts {
            Parts::Zstd => {
                let decoder = match &mut decoder {
                    Some(decoder) => decoder,
                    empty => empty.insert(Decoder::new().map_err(Failure::Decompressing)?),
                };
                decode_frame(source, frame, decoder, &mut input, &mut out)
            }
            Parts::Bgzf => {
                let whole = whole.get_or_insert_with(WholeMember::new).as_mut();
                decode_members(source, frame, whole, &mut input, &mut out)
            }
        });
        // The bytes before a failure or a rest go first.
        out.flush();
        let ended = match decoded {
            Ok(RunEnded::Rest(at)) => Piece::Rest(at),
            Err(failure) => Piece::Failed(failure),
            Ok(RunEnded::Whole | RunEnded::ReaderGone) => continue,
        };
        let _ = out.buffers.pieces.send(ended);
    }
}

/// A part's decoded pieces, handed to the thread that hands the parts on in order; each piece one
/// the reader handed back where there is one.
struct ToPart {
    pieces: Sender<Piece>,
    empty: Receiver<Vec<u8>>,
}

impl Buffers for ToPart {
    fn empty(&mut self) -> Option<Vec<u8>> {
        Some(self.empty.try_recv().unwrap_or_default())
    }

    fn full(&mut self, piece: Decoded) -> bool {
        self.pieces.send(Piece::Decoded(piece)).is_ok()
    }
}

/// How a run of members, or a frame, ended short of a fault.
enum RunEnded {
    /// At its end, as the walk found.
    Whole,
    /// Elsewhere, at this offset: the rest of the file is the one decoder's.
    Rest(u64),
    /// The reader has gone.
    ReaderGone,
}

/// Decodes the zstd frame in `frame` of the file into `out`, the bytes before a failure too.
/// `input` is room to read into. Where libzstd ends the frame elsewhere than the walk found, the
/// frame is decoded to libzstd's end, reading past the walk's if it wants more, and the rest is
/// the one decoder's from there: the bytes and the words are then the one decoder's, which
/// decodes the same frame from the same start.
fn decode_frame(
    source: &File,
    frame: Range<u64>,
    decoder: &mut Decoder<'static>,
    input: &mut [u8],
    out: &mut impl Out,
) -> Result<RunEnded, Failure> {
    decoder.reinit().map_err(Failure::Decompressing)?;
    let (mut at, mut read, mut used) = (frame.start, 0, 0);
    // libzstd took every byte read and made nothing of them: it wants more.
    let mut starved = false;
    loop {
        if used == read && (at < frame.end || starved) {
            let wanted = match at < frame.end {
                true => input.len().min((frame.end - at) as usize),
                false => input.len(),
            };
            read = read_at(source, &mut input[..wanted], at).map_err(Failure::Reading)?;
            if read == 0 {
                // The file ends inside the frame (it shrank after the walk, or the frame is longer
                // than the walk found), as the one decoder finds it.
                return Err(Failure::Decompressing(incomplete_frame()));
            }
            (at, used) = (at + read as u64, 0);
        }
        let Some(room) = out.room() else {
            return Ok(RunEnded::ReaderGone);
        };
        let mut from = InBuffer::around(&input[used..read]);
        let mut into = OutBuffer::around(room);
        let hint = decoder.run(&mut from, &mut into);
        let made = into.pos();
        used += from.pos();
        let ended = match hint {
            Err(error) => Some(Err(Failure::Decompressing(error))),
            Ok(0) => {
                let end = at - (read - used) as u64;
                Some(Ok(match end == frame.end {
                    true => RunEnded::Whole,
                    false => RunEnded::Rest(end),
                }))
            }
            Ok(_) => {
                starved = made == 0 && from.pos() == 0 && used == read;
                None
            }
        };
        if !out.filled(made) {
            return Ok(RunEnded::ReaderGone);
        }
        if let Some(ended) = ended {
            return ended;
        }
    }
}

/// Decodes the gzip members in `members` of the file into `out`, the bytes before a failure too,
/// member after member from where the last ended, as the one decoder would decode them there;
/// says where the last ended if elsewhere than `members`' end, for the one decoder to go on from.
///
/// Members with `bgzip`'s own header are decoded by `whole` (where there is one) from `input`,
/// which the members are read into, straight into `out`'s room; from the first member it does
/// not decode whole (another header, a size or trailer that does not hold, damage) flate2's
/// `GzDecoder` decodes them, so that what is wrong reads as the one decoder would say it.
fn decode_members(
    source: &File,
    members: Range<u64>,
    whole: Option<&mut WholeMember>,
    input: &mut Vec<u8>,
    out: &mut impl Out,
) -> Result<RunEnded, Failure> {
    let mut at = members.start;
    input.resize((members.end - members.start) as usize, 0);
    // A read that fails, or finds the file shrunk, is left to `GzDecoder`'s reads to tell.
    if let Some(whole) = whole
        && source.read_exact_at(input, members.start).is_ok()
    {
        let mut rest = &input[..];
        while let Some((member, size)) = bgzip_member(rest) {
            // A member whole in one piece: the piece is handed on short where it does not fit,
            // and the next is a whole [`BUFFER`], at least the member's size.
            if out.room().is_some_and(|room| room.len() < size) {
                out.flush();
            }
            let Some(room) = out.room() else {
                return Ok(RunEnded::ReaderGone);
            };
            if !whole.decode(member, &mut room[..size]) {
                break;
            }
            if !out.filled(size) {
                return Ok(RunEnded::ReaderGone);
            }
            at += member.len() as u64;
            rest = &rest[member.len()..];
        }
    }
    if at < members.end {
        let from = FileAt {
            source,
            at,
            failed: None,
        };
        // The members' bytes in one read; a member longer than its size says reads on.
        let mut reader = BufReader::with_capacity((members.end - at) as usize, from);
        while at < members.end {
            let mut member = GzipMembers::one(&mut reader);
            loop {
                let Some(room) = out.room() else {
                    return Ok(RunEnded::ReaderGone);
                };
                match member.read(room) {
                    Ok(0) => break,
                    Ok(read) if out.filled(read) => {}
                    Ok(_) => return Ok(RunEnded::ReaderGone),
                    Err(error) => {
                        let from = member.get_mut().get_mut();
                        return Err(match from.failed.take() {
                            Some(failed) => Failure::Reading(failed),
                            None => Failure::Decompressing(error),
                        });
                    }
                }
            }
            drop(member);
            at = reader.get_ref().at - reader.buffer().len() as u64;
        }
    }
    Ok(match at == members.end {
        true => RunEnded::Whole,
        false => RunEnded::Rest(at),
    })
}

/// The member `bytes` begin with and the size it decodes to, where its header is the one
/// `bgzip` writes ([`BGZIP_HEADER`] bytes: no flag but the extra field's, which holds the `BC`
/// subfield alone) and it decodes to at most a [`BUFFER`], as its trailer says.
fn bgzip_member(bytes: &[u8]) -> Option<(&[u8], usize)> {
    let header: &[u8; BGZIP_HEADER] = bytes.first_chunk()?;
    let gzip = header[..4] == [0x1f, 0x8b, 8, FEXTRA];
    let bc = header[10..16] == [6, 0, b'B', b'C', 2, 0];
    let size = usize::from(u16::from_le_bytes([header[16], header[17]])) + 1;
    let member = bytes
        .get(..size)
        .filter(|_| gzip && bc && size >= BGZIP_HEADER + 8)?;
    let decoded = u32::from_le_bytes(*member.last_chunk()?) as usize;
    (decoded <= BUFFER).then_some((member, decoded))
}

/// The file read from an offset on, a failed read kept, so that it is told as the source's
/// failure rather than the decoder's.
struct FileAt<'a> {
    source: &'a File,
    at: u64,
    failed: Option<io::Error>,
}

impl Read for FileAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = read_at(self.source, buf, self.at).map_err(|error| {
            let kind = error.kind();
            self.failed = Some(error);
            io::Error::from(kind)
        })?;
        self.at += read as u64;
        Ok(read)
    }
}

/// Reads into `buf` at `at`, as much as comes in one read (a signal's interruption waited out):
/// 0 at the file's end.
pub(super) fn read_at(source: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    loop {
        match source.read_at(buf, at) {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            read => return read,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::format::Format;
    use super::super::handoff::{DecodedFile, Kept, ToReader};
    use super::super::tests::{
        bgzf_member, decoded, decoded_file, file_of, frame, piped, random, reason, regular_of,
        skippable, text,
    };
    use super::super::{BUFFERS, decode_file};
    use super::*;
    use crate::io::testing;

    /// What [`hand_on`] makes of the first of `frames` handed on by a decoder (none where
    /// `first_handed_on` is false), then the decoders gone without a word, in a file of `frames`:
    /// what it hands on, and how it ends.
    fn handed_on_then_silence(
        frames: &[Vec<u8>],
        first_handed_on: bool,
    ) -> (Vec<u8>, Result<(), Failure>) {
        let source = file_of(
            &frames
                .iter()
                .map(|text| zstd::encode_all(&text[..], 3).unwrap())
                .collect::<Vec<_>>()
                .concat(),
        );
        let (order, decoded) = bounded(1);
        if first_handed_on {
            let mut kept = Filling::new(Kept::new(usize::MAX));
            let room = kept.room().unwrap();
            room[..frames[0].len()].copy_from_slice(&frames[0]);
            kept.filled(frames[0].len());
            kept.flush();
            let (piece, pieces) = bounded(kept.buffers.buffers.len());
            for buffer in kept.buffers.buffers.drain(..) {
                piece.send(Piece::Decoded(buffer)).unwrap();
            }
            order.send(Parted::Frame(pieces)).unwrap();
        }
        drop(order);
        let (to_reader, full) = bounded(BUFFERS * 16);
        let (to_decoder, empty) = bounded(BUFFERS * 16);
        let mut out = Filling::new(ToReader::new(to_reader, empty, BUFFERS));
        let ended = hand_on(decoded, &source, Parts::Zstd, 0, &mut out);
        out.flush();
        drop(out);
        let mut reader = DecodedFile::new(full, to_decoder);
        let (mut read, mut buf) = (Vec::new(), vec![0; BUFFER]);
        while let n @ 1.. = reader.read(&mut buf) {
            read.extend_from_slice(&buf[..n]);
        }
        (read, ended)
    }

    /// Decoders gone without telling the walk's end, after a part was handed on, is a failure:
    /// decoding again from the parts' start repeated what had been handed on. Where none was,
    /// the one decoder decodes the file from its start.
    #[test]
    fn parts_that_end_without_a_word_are_not_decoded_twice() {
        let frames = [text(0..1000), text(1000..2000)];
        let (out, ended) = handed_on_then_silence(&frames, true);
        assert!(out == frames[0], "the part handed on is not all that came");
        assert_eq!(
            reason(ended),
            "the part decoders ended before the file's end"
        );
        let (out, ended) = handed_on_then_silence(&frames, false);
        assert!(out == frames.concat(), "not decoded from the start");
        assert!(ended.is_ok());
    }

    /// What [`decode_frame`] makes of the frame the walk found at `frame` in a file of `bytes`:
    /// the bytes it hands on, and how it ends.
    fn frame_decoded(bytes: &[u8], frame: Range<u64>) -> (Vec<u8>, String) {
        let source = file_of(bytes);
        let mut decoder = Decoder::new().unwrap();
        let mut out = Filling::new(Kept::new(usize::MAX));
        let ended = decode_frame(&source, frame, &mut decoder, &mut [0; 1000], &mut out);
        out.flush();
        let decoded = out
            .buffers
            .buffers
            .iter()
            .flat_map(|buffer| buffer.held())
            .copied();
        let ended = match ended {
            Ok(RunEnded::Whole) => "whole".to_owned(),
            Ok(RunEnded::Rest(at)) => format!("rest at {at}"),
            Ok(RunEnded::ReaderGone) => "reader gone".to_owned(),
            Err(failure) => reason(Err(failure)),
        };
        (decoded.collect(), ended)
    }

    /// CONTRACT §12.3: a zstd frame that libzstd ends elsewhere than the walk found, earlier or
    /// later, is decoded to libzstd's end, and the rest is the one decoder's from there: the
    /// bytes and words are the one decoder's. Both were failures of words of their own.
    #[test]
    fn a_frame_libzstd_ends_elsewhere_than_the_walk_leaves_the_rest_to_one_decoder() {
        let (first, second) = (text(0..3000), text(3000..4000));
        let frames = [
            zstd::encode_all(&first[..], 3).unwrap(),
            zstd::encode_all(&second[..], 3).unwrap(),
        ];
        let bytes = frames.concat();
        let end = frames[0].len() as u64;
        let rest = format!("rest at {end}");
        for walked in [end, end - 3, end + 5, 1] {
            let (out, ended) = frame_decoded(&bytes, 0..walked);
            assert!(out == first, "walked to {walked}: not the frame's bytes");
            let want = if walked == end {
                "whole".to_owned()
            } else {
                rest.clone()
            };
            assert_eq!(ended, want, "walked to {walked}");
        }
        // The file ends inside the frame, past the walk's end: as the one decoder says it.
        let cut = &frames[0][..frames[0].len() - 2];
        let (out, ended) = frame_decoded(cut, 0..end - 5);
        let (one_out, one_ended) = decoded_file(file_of(cut), Format::Zstd, ONE);
        assert!(out == one_out);
        assert_eq!(ended, reason(one_ended));
    }

    /// Frames of many sizes, skippable frames among them, and where each is cut.
    fn frames_of(text: &[u8]) -> (Vec<u8>, Vec<usize>) {
        let (mut bytes, mut cuts, mut at) = (Vec::new(), Vec::new(), 0);
        for n in 0.. {
            // From a line to a few of the decoders' pieces.
            let size = [20, 700_000, 3_000, 90_000][n % 4].min(text.len() - at);
            if size == 0 {
                break;
            }
            bytes.extend_from_slice(&skippable(&(n as u32).to_le_bytes()));
            cuts.push(bytes.len());
            bytes.extend_from_slice(&frame(&text[at..at + size], |encoder| {
                encoder.include_checksum(true).unwrap();
            }));
            at += size;
        }
        (bytes, cuts)
    }

    /// This process's threads named as the decoders of frames are.
    fn frame_decoders() -> usize {
        let tasks = std::fs::read_dir("/proc/self/task").unwrap();
        let named = |task: std::fs::DirEntry| std::fs::read(task.path().join("comm")).ok();
        tasks
            .filter_map(|task| named(task.unwrap()))
            .filter(|name| name == b"decode frames\n")
            .count()
    }

    #[test]
    fn frames_decoded_at_once_come_out_in_order() {
        let text = text(0..300_000);
        let (bytes, cuts) = frames_of(&text);
        assert!(cuts.len() > 20);
        // Every decoder at work, each holding a frame's pieces while the reader holds back (other
        // tests running beside this one start three at most).
        // Eight threads: one for the reader and the rendering, seven decoders.
        let eight = NonZeroUsize::new(8).unwrap();
        let (mut buffers, _decoding) =
            decode_file(regular_of(&bytes), Format::Zstd, BUFFERS, eight, 0).unwrap();
        assert_eq!(buffers.read(&mut [0; 10]), 10);
        let started = std::time::Instant::now();
        while frame_decoders() < 7 {
            assert!(started.elapsed() < testing::DEADLINE, "not decoded at once");
            thread::sleep(std::time::Duration::from_millis(10));
        }
        drop(buffers);
        for threads in [2, 3, 8] {
            let threads = NonZeroUsize::new(threads).unwrap();
            let (out, ended) = decoded_file(file_of(&bytes), Format::Zstd, threads);
            assert!(
                out == text,
                "{threads}: {} bytes of {}",
                out.len(),
                text.len()
            );
            assert!(ended.is_ok(), "{ended:?}");
        }
    }

    /// A fault in a frame is told after every frame before it, whichever decoder finds it first.
    #[test]
    fn a_bad_frame_ends_decoding_after_the_frames_before_it() {
        let text = text(0..300_000);
        let (bytes, cuts) = frames_of(&text);
        let threads = NonZeroUsize::new(3).unwrap();
        // How much of the text the frames before the `n`th decode to.
        let whole_before = |n: usize| {
            decoded_file(file_of(&bytes[..cuts[n]]), Format::Zstd, threads)
                .0
                .len()
        };
        let flipped = |at: usize| {
            let mut bytes = bytes.clone();
            bytes[at] ^= 0x55;
            bytes
        };
        // (bytes, the frame the fault is in, a word of the reason)
        let cases = [
            // The fourth frame's content checksum, its last 4 bytes, before the fifth's
            // skippable frame.
            (flipped(cuts[4] - 13), 3, "checksum"),
            (bytes[..cuts[5] + 100].to_vec(), 5, "incomplete frame"),
            (
                [&bytes[..], b"garbage"].concat(),
                cuts.len(),
                "Unknown frame",
            ),
            (flipped(cuts[1] + 1), 1, "Unknown frame"),
        ];
        for (n, (bytes, bad, word)) in cases.into_iter().enumerate() {
            let (out, ended) = decoded_file(file_of(&bytes), Format::Zstd, threads);
            let whole = match bad {
                bad if bad == cuts.len() => text.len(),
                bad => whole_before(bad),
            };
            assert!(out.len() >= whole, "case {n}: {} of {whole}", out.len());
            assert!(text.starts_with(&out), "case {n}: a prefix of the text");
            let reason = reason(ended);
            assert!(reason.contains(word), "case {n}: {reason}");
        }
    }

    #[test]
    fn a_reader_that_goes_ends_the_decoders() {
        let (bytes, _) = frames_of(&text(0..300_000));
        let threads = NonZeroUsize::new(3).unwrap();
        let (mut buffers, decoding) =
            decode_file(regular_of(&bytes), Format::Zstd, BUFFERS, threads, 0).unwrap();
        assert_eq!(buffers.read(&mut [0; 10]), 10);
        drop(buffers);
        let told = decoding.ended.recv_timeout(testing::DEADLINE);
        assert!(matches!(told, Ok(Ok(()))), "{told:?}");
    }

    /// Members whose `BC` sizes are wrong are decoded as the one decoder decodes them, each from
    /// where the last ended, on three decoders and on this file's one; a fault in a later member
    /// is told as the one decoder tells it, after the members before it.
    #[test]
    fn bgzf_members_decode_as_one_decoder_decodes_them() {
        let text = text(0..300_000);
        let chunks: Vec<&[u8]> = text.chunks(65_280).collect();
        let members: Vec<Vec<u8>> = chunks
            .iter()
            .map(|chunk| bgzf_member(chunk, 0, None))
            .collect();
        let bytes = members.concat();
        let ones = |bytes: &[u8]| decoded_file(file_of(bytes), Format::Gzip, ONE);
        let threes = |bytes: &[u8]| {
            let three = NonZeroUsize::new(3).unwrap();
            decoded_file(file_of(bytes), Format::Gzip, three)
        };
        for (out, ended) in [threes(&bytes), ones(&bytes)] {
            assert!(out == text && ended.is_ok(), "{ended:?}");
        }
        // A size that covers the next member too, and later one 100 bytes too long or too short,
        // in runs after the first: the walk goes on past the first, and ends at the second, where
        // the decoder of that run goes on to where the member really ends.
        for by in [100, -100] {
            let mut lying = members.clone();
            let (n, size) = (20, members[20].len() + members[21].len());
            lying[n] = bgzf_member(chunks[n], 0, Some(size));
            let (n, size) = (50, members[50].len() as isize + by);
            lying[n] = bgzf_member(chunks[n], 0, Some(size as usize));
            for (out, ended) in [threes(&lying.concat()), ones(&lying.concat())] {
                assert!(out == text && ended.is_ok(), "{by}: {ended:?}");
            }
        }
        let mut flipped = bytes.clone();
        let late = bytes.len() - members[40..].concat().len() + 1000;
        flipped[late] ^= 0x55;
        let (one, one_ended) = streamed(&flipped);
        let one_ended = reason(one_ended);
        assert!(one.len() >= members[..40].concat().len(), "{}", one.len());
        for (out, ended) in [threes(&flipped), ones(&flipped)] {
            assert!(out == one, "{} bytes, not {}", out.len(), one.len());
            assert_eq!(reason(ended), one_ended);
        }
    }

    /// Only a member with `bgzip`'s own header, whole, that decodes to at most a piece is one
    /// for libdeflate to decode whole.
    #[test]
    fn only_members_with_bgzips_own_header_decode_whole() {
        let text = text(0..1000);
        let member = bgzf_member(&text, 0, None);
        let next = [&member[..], b"next"].concat();
        assert_eq!(bgzip_member(&next), Some((&member[..], text.len())));
        let mut named = member.clone();
        named[3] |= 0x08;
        let cases = [
            bgzf_member(&text, 5, None),
            named,
            member[..member.len() - 1].to_vec(),
            bgzf_member(&text, 0, Some(25)),
            bgzf_member(&vec![b'a'; BUFFER + 1], 0, None),
        ];
        for (n, bytes) in cases.iter().enumerate() {
            assert_eq!(bgzip_member(bytes), None, "case {n}");
        }
        assert!(bgzip_member(&bgzf_member(&vec![b'a'; BUFFER], 0, None)).is_some());
    }

    /// Members libdeflate decodes whole and members left to `GzDecoder` (another subfield before
    /// `BC`, more than a piece decoded, a damaged one) come out alike in one run, whole pieces
    /// filled across them: as one decoder decodes them.
    #[test]
    fn members_decoded_whole_and_one_by_one_come_out_alike() {
        let texts: Vec<Vec<u8>> = (0..40u32)
            .map(|n| match n % 4 {
                0 => vec![b'a' + n as u8; BUFFER + 1],
                1 => text(n * 1000..n * 1000 + 900 + n * 37),
                _ => random(20_000 + n as usize * 1000),
            })
            .collect();
        let members: Vec<Vec<u8>> = (texts.iter().enumerate())
            .map(|(n, text)| bgzf_member(text, (n % 7 == 5) as usize * 3, None))
            .collect();
        let three = NonZeroUsize::new(3).unwrap();
        let bytes = members.concat();
        let walked = file_of(&bytes);
        let mut walk = Walk::new(&walked, Parts::Bgzf).unwrap();
        let runs = std::iter::from_fn(|| match walk.next(&walked) {
            Part::Frame(run) => Some(run),
            _ => None,
        });
        assert!(runs.count() >= 3);
        let (out, ended) = decoded_file(file_of(&bytes), Format::Gzip, three);
        assert!(out == texts.concat() && ended.is_ok(), "{ended:?}");
        let mut damaged = members.clone();
        let middle = damaged[26].len() / 2;
        damaged[26][middle] ^= 0x55;
        let damaged = damaged.concat();
        let (one, one_ended) = streamed(&damaged);
        let (three, three_ended) = decoded_file(file_of(&damaged), Format::Gzip, three);
        assert!(three.starts_with(&texts[..26].concat()), "{}", three.len());
        assert!(three == one, "{} bytes, not {}", three.len(), one.len());
        assert_eq!(reason(three_ended), reason(one_ended));
    }

    /// What the one decoder, `MultiGzDecoder` on a stream, makes of `bytes`.
    fn streamed(bytes: &[u8]) -> (Vec<u8>, Result<(), Failure>) {
        decoded(piped(bytes.to_vec()), None)
    }

    /// What [`decode_members`] hands on of a run of `members`: the decoded bytes, and the
    /// failure's reason or the offset the rest is left at, if any.
    fn run_decoded(members: &[u8]) -> (Vec<u8>, Option<String>) {
        let (pieces, taken) = bounded(members.len());
        let (_, empty) = bounded(0);
        let mut out = Filling::new(ToPart { pieces, empty });
        let (mut whole, run) = (WholeMember::new(), 0..members.len() as u64);
        let source = file_of(members);
        let ended = decode_members(&source, run, whole.as_mut(), &mut Vec::new(), &mut out);
        out.flush();
        drop(out);
        let decoded = taken.iter().flat_map(|piece| match piece {
            Piece::Decoded(piece) => piece.held().to_vec(),
            _ => unreachable!("a run's end is returned"),
        });
        let ended = match ended {
            Ok(RunEnded::Whole) => None,
            Ok(RunEnded::Rest(at)) => Some(format!("rest at {at}")),
            Ok(RunEnded::ReaderGone) => Some("reader gone".to_owned()),
            Err(failure) => Some(reason(Err(failure))),
        };
        (decoded.collect(), ended)
    }

    /// A run's members are decoded whole until the first that libdeflate cannot decode whole,
    /// then by `GzDecoder`: a fault in either reads as the one decoder tells it, after the bytes
    /// of every member before it.
    #[test]
    fn a_run_decodes_members_whole_until_one_it_cannot() {
        // More than a piece decoded before the member with a subfield before `BC`.
        let texts: Vec<Vec<u8>> = (0..12).map(|n| random(30_000 + n * 1000)).collect();
        let mut members: Vec<Vec<u8>> = texts.iter().map(|t| bgzf_member(t, 0, None)).collect();
        members[10] = bgzf_member(&texts[10], 3, None);
        assert_eq!(run_decoded(&members.concat()), (texts.concat(), None));
        for n in [4, 11] {
            let mut damaged = members.clone();
            let middle = damaged[n].len() / 2;
            damaged[n][middle] ^= 0x55;
            let damaged = damaged.concat();
            let (one, one_ended) = streamed(&damaged);
            assert!(
                one.starts_with(&texts[..n].concat()),
                "member {n}: {}",
                one.len()
            );
            assert!(
                run_decoded(&damaged) == (one, Some(reason(one_ended))),
                "member {n}"
            );
        }
    }
}
