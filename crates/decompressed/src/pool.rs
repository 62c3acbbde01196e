//! A regular file's parts (zstd frames, runs of BGZF members) decoded on several threads at once
//! and handed on in the file's order. A zstd frame does not depend on the frames around it, nor a
//! gzip member on the members around it, and where each ends is found without decoding it
//! ([`Walk`]): so the threads take turns to walk the file to the next part's end, each decodes the
//! part it found into pieces of its own ([`parts`](super::parts)), and the reading thread takes the
//! pieces part after part ([`HandOn`]). `pzstd` writes such files, a frame for every few MiB;
//! `bgzip` a member for every 64 KiB.
//!
//! What the walk cannot make sense of (a magic or a header it does not know, a block or frame that
//! the file ends inside, a dictionary, a window wider than [`WINDOW`](super::zstd::WINDOW)) is
//! left, from that frame on, to the decoder that decodes a file of one frame or member ([`run`]),
//! which says what is wrong as it always does: bad input comes out exactly as without threads,
//! after every frame before it. A file of one frame is decoded by that decoder alone, as is a zstd
//! file when one thread is allowed; a file of BGZF members is then walked on that one thread, its
//! runs decoded as a decoder of the pool decodes them ([`decode_alone`]).
//!
//! Memory: each decoder holds its window (at most [`WINDOW`](super::zstd::WINDOW)), at most
//! [`Parts::under_way`] parts per decoder are under way, and together they hold at most
//! [`HELD`] pieces ahead of the reader, so the pieces in memory are at most
//! [`pieces_ahead`] besides the reader's own.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Seek, SeekFrom};
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

use crossbeam_channel::{Receiver, Sender, TryRecvError, bounded, unbounded};
use zstd::stream::raw::Decoder;

use super::dispatch::run;
use super::handoff::{Buffers, Decoded, Filling, Out, Pieces, ToReader};
use super::parts::{RunEnded, decode_frame, decode_members};
use super::sized::SizedMember;
use super::source::Undecoded;
use super::spares::SpareBuffers;
use super::walk::{Part, Parts, Walk};
use super::{BUFFER, Failure, ONE, caught, start_telling};

/// The most decoded pieces ([`BUFFER`] bytes each, 8 MiB) a decoder holds ahead of the reader,
/// in whichever of its parts under way: a whole frame of `pzstd`'s at its default level, or four
/// runs of BGZF members (a run of [`RUN`](super::walk::RUN) compressed bytes of man pages decodes
/// to 1-2.5 MiB). Held by each part instead, 2 MiB a run, a longer run stopped its decoder until
/// the reader came to it, and on 2 cores the decoders took turns; 8 MiB a frame, two frames
/// each, touched more fresh pages and took longer (CONTRACT §12.4).
const HELD: usize = 32;

/// The pieces a decoder's share begins with (2 MiB), widened by one each time the reader waits
/// while the decoder is stopped by it, up to [`HELD`] ([`Shares`]). With every share [`HELD`]
/// from the start, the decoders of a reader slower than they are (`batched`'s rendering) filled
/// 16 MiB of pieces made afresh before the first came back, a page fault a page: `batched -z` on
/// 64 MiB of `bgzip`'s members took 5,308 page faults against 2,701 with shares that widen, and
/// 0.93 of the time (CONTRACT §12.4).
const FIRST_HELD: usize = 8;

/// The pool's limits for each kind of part.
impl Parts {
    /// The parts under way for each decoder: decoded, being decoded or being handed on. One
    /// each made a decoder that finished its part wait for the other's part before it, whose
    /// pieces go to the reader as they are decoded, to be handed on: on 2 cores two zstd decoders
    /// took 0.74x one frame's time with 1 part each and 0.69x with 1.5; BGZF's small parts 0.97x,
    /// 0.84x and 0.78x one member's with 1, 2.5 and 4.5 each (the pool's runs:
    /// results/2026-12-02-decoder-figures.md).
    fn under_way(self) -> usize {
        match self {
            Parts::Zstd => 2,
            Parts::Bgzf => 4,
        }
    }
}

/// The most decoded pieces held ahead of the reader when `threads` decoders decode a file's
/// parts: those each decoder holds, and the one each fills.
pub(super) fn pieces_ahead(threads: NonZeroUsize) -> usize {
    threads.get() * (HELD + 1)
}

/// Starts decoding `source`, a regular file holding `parts` from its offset on, on `threads`
/// decoders (two or more), which take their pieces' buffers from `to_reader`: its parts then
/// handed on by the reader itself ([`HandOn`]), which tells how decoding ended over `tell`. The
/// file comes back where the pool does not decode it: it cannot be walked, or holds fewer than
/// two parts ([`decode_alone`]'s).
pub(super) fn start_parts(
    source: File,
    parts: Parts,
    threads: NonZeroUsize,
    to_reader: ToReader,
    tell: Sender<Result<(), Failure>>,
) -> Result<HandOn, (File, ToReader)> {
    let Ok(mut walk) = Walk::new(&source, parts) else {
        return Err((source, to_reader));
    };
    let start = walk.at;
    let frames = [walk.next(&source), walk.next(&source)];
    if !matches!(frames, [Part::Frame(_), Part::Frame(_)]) {
        return Err((source, to_reader));
    }
    walk.at = start;
    let source = Arc::new(source);
    // Parts under way: the one being handed on, and the rest of each decoder's share.
    let (order, decoded) = bounded(threads.get() * parts.under_way() - 1);
    let walking = Arc::new(Mutex::new(Walking {
        walk,
        order: Some(order),
    }));
    let mut shares = Shares::default();
    for decoder in 0..threads.get() {
        let (source, walking) = (source.clone(), walking.clone());
        let (empty, spares) = (to_reader.empty.clone(), to_reader.spares.clone());
        let hold = shares.add();
        let spawned = thread::Builder::new()
            .name("decode frames".to_owned())
            .spawn(move || decode_frames(&source, parts, &walking, decoder, hold, &empty, &spares));
        if spawned.is_err() {
            // Those started take every frame; with none, the walk's turn never comes.
            break;
        }
    }
    // Only the decoders hold the walk, so the parts end when the last of them has gone.
    drop(walking);
    Ok(HandOn::new(
        decoded,
        shares,
        source,
        parts,
        start,
        (to_reader, tell),
    ))
}

/// Each decoder's pieces not yet handed on, a message a piece, by decoder: it waits for room
/// there before it sends a piece, and finds it gone once the pieces are handed on no more.
/// Room is withheld from each at first, and given as the reader waits while the decoder is
/// stopped: a reader faster than one decoder lets each decode up to [`HELD`] pieces ahead, and a
/// slower one holds them to [`FIRST_HELD`].
#[derive(Default)]
struct Shares {
    held: Vec<Receiver<()>>,
    /// The room still withheld from each, as messages in its channel that stand for no piece.
    withheld: Vec<usize>,
}

impl Shares {
    /// A new decoder's share, of [`FIRST_HELD`] pieces: where it counts its pieces.
    fn add(&mut self) -> Sender<()> {
        let (hold, held) = bounded(HELD);
        let withheld = (FIRST_HELD..HELD)
            .take_while(|_| hold.try_send(()).is_ok())
            .count();
        self.held.push(held);
        self.withheld.push(withheld);
        hold
    }

    /// A piece of `decoder`'s handed on: room for another.
    fn handed_on(&self, decoder: usize) {
        // Its decoder counted it before sending it.
        let _ = self.held[decoder].try_recv();
    }

    /// The reader is to wait: each decoder stopped by its share may hold a piece more.
    fn widen(&mut self) {
        for (held, withheld) in self.held.iter().zip(&mut self.withheld) {
            if *withheld > 0 && held.is_full() && held.try_recv().is_ok() {
                *withheld -= 1;
            }
        }
    }

    /// The next of `from`, the shares widened first if it has not come: `None` once nothing
    /// more comes.
    fn next_of<T>(&mut self, from: &Receiver<T>) -> Option<T> {
        match from.try_recv() {
            Ok(next) => Some(next),
            Err(TryRecvError::Disconnected) => None,
            Err(TryRecvError::Empty) => {
                self.widen();
                from.recv().ok()
            }
        }
    }
}

/// The pool's parts handed on by their reader, in the file's order, piece after piece, each
/// taken off its decoder's share, until the walk's end, a fault, or a rest for the one decoder.
/// On the reading thread: a thread of its own between the decoders and the reader woke and was
/// woken for every piece, and on 2 cores shared a CPU with the reader and a decoder
/// (results/runs/2026-12-07T0700Z-7fbcf05-2-cores-reader-buffers); without it the `Reader` on a
/// `pzstd` FILE took 0.81 of the time (results/runs/2026-12-07T0945Z-178c2af-2-cores-hand-on).
pub(super) struct HandOn {
    decoded: Receiver<Parted>,
    shares: Shares,
    /// The part being handed on, and its decoder.
    part: Option<(Receiver<Piece>, usize)>,
    seams: Seams,
    /// Whether a part has begun to be handed on.
    handed_on: bool,
    source: Arc<File>,
    parts: Parts,
    /// Where the parts begin.
    start: u64,
    /// Until the parts end (gone once they have): the way to the reader for the one decoder of
    /// a rest, and where how decoding ended is told.
    rest: Option<(ToReader, Sender<Result<(), Failure>>)>,
}

impl HandOn {
    /// The parts that `decoded` tells of, beginning at `start` in `source`, each piece taken off
    /// its decoder's share; `rest`: the way to the reader for a rest, and where how decoding ended
    /// is told.
    fn new(
        decoded: Receiver<Parted>,
        shares: Shares,
        source: Arc<File>,
        parts: Parts,
        start: u64,
        rest: (ToReader, Sender<Result<(), Failure>>),
    ) -> Self {
        HandOn {
            decoded,
            shares,
            part: None,
            seams: Seams::default(),
            handed_on: false,
            source,
            parts,
            start,
            rest: Some(rest),
        }
    }

    /// Takes the next part, or the next piece of the one being handed on.
    fn step(&mut self) {
        let Some((pieces, decoder)) = &self.part else {
            match self.shares.next_of(&self.decoded) {
                Some(Parted::Frame { pieces, decoder }) => {
                    self.handed_on = true;
                    self.part = Some((pieces, decoder));
                }
                Some(Parted::Rest(at)) => self.decode_rest(at),
                Some(Parted::End(at)) => self.end(leave_offset(&self.source, at)),
                // The decoders have gone without telling the walk's end (none could be started,
                // or a panic outside a part took the walk with it).
                None if !self.handed_on => self.decode_rest(self.start),
                // From the start again, what was handed on would come out twice.
                None => self.end(Err(Failure::Decompressing(io::Error::other(
                    "the part decoders ended before the file's end",
                )))),
            }
            return;
        };
        match self.shares.next_of(pieces) {
            Some(Piece::Decoded(piece)) => {
                self.shares.handed_on(*decoder);
                self.seams.pass(piece);
            }
            Some(Piece::LineEnd(line_end)) => self.seams.end_line(line_end),
            Some(Piece::Failed(failure)) => self.end(Err(failure)),
            Some(Piece::Rest(at)) => self.decode_rest(at),
            None => self.part = None,
        }
    }

    /// Ends the parts, telling how.
    fn end(&mut self, ended: Result<(), Failure>) {
        if let Some((_, tell)) = self.rest.take() {
            self.told(tell, ended);
        }
    }

    /// Ends the parts, the piece held back handed on first, and tells how over `tell`.
    fn told(&mut self, tell: Sender<Result<(), Failure>>, ended: Result<(), Failure>) {
        self.seams.pass_inside();
        let _ = tell.send(ended);
    }

    /// Starts the one decoder on the file from `at` on ([`decode_rest`]), on a thread of its own
    /// that sends its buffers to the reader: the parts' last act.
    fn decode_rest(&mut self, at: u64) {
        let Some((to_reader, tell)) = self.rest.take() else {
            return;
        };
        let (source, parts) = (self.source.clone(), self.parts);
        let started = start_telling(Filling::new(to_reader), tell.clone(), move |out| {
            decode_rest(&source, parts, at, out)
        });
        match started {
            // The piece held back goes before the rest's buffers, which follow over the channel.
            Ok(()) => self.seams.pass_inside(),
            Err(failed) => self.told(tell, Err(Failure::Reading(failed))),
        }
    }
}

impl Pieces for HandOn {
    /// `None` once the parts have ended, and how is told, or the rest's decoder has begun, which
    /// sends its buffers over the reader's channel.
    fn next(&mut self) -> Option<Decoded> {
        loop {
            if let Some(piece) = self.seams.ready.pop_front() {
                return Some(piece);
            }
            // The parts have ended once the way to the reader is gone.
            self.rest.as_ref()?;
            self.step();
        }
    }

    /// Those of the part being handed on.
    fn waiting(&self) -> usize {
        let part = self.part.as_ref().map_or(0, |(pieces, _)| pieces.len());
        self.seams.ready.len() + part
    }
}

impl Drop for HandOn {
    /// A reader gone has ended decoding, as it ends a decoder's thread: with success.
    fn drop(&mut self) {
        self.end(Ok(()));
    }
}

/// The parts' pieces as they go to the reader, each seam between two parts mended where the
/// piece before it has room: a part's pieces are cut after their last line end but its last,
/// which ends inside the line that the next part begins with, and the next part's decoder cuts
/// that line's end off its first piece ([`Piece::LineEnd`]) to go onto it. `batched` takes a
/// piece as its chunk only where it begins and ends a line, and copied every byte of a `bgzip`
/// file's 64 MiB, decoded in runs of about a megabyte, piece after piece.
#[derive(Default)]
struct Seams {
    /// The last piece, held back while it ends inside a line.
    inside: Option<Decoded>,
    /// Pieces for the reader to take, in order.
    ready: VecDeque<Decoded>,
}

impl Seams {
    /// Hands on `piece` after the piece before it.
    fn pass(&mut self, piece: Decoded) {
        self.pass_inside();
        match piece.ends_inside_a_line() {
            true => self.inside = Some(piece),
            false => self.ready.push_back(piece),
        }
    }

    /// Ends the piece held back with `line_end`, where it has room, else hands that on as a
    /// piece of its own.
    fn end_line(&mut self, line_end: Vec<u8>) {
        let ended = (self.inside.as_mut()).is_some_and(|inside| inside.end_line_with(&line_end));
        match ended {
            true => self.pass_inside(),
            false => self.pass(Decoded::whole(line_end)),
        }
    }

    /// Hands on the piece held back, if one is.
    fn pass_inside(&mut self) {
        self.ready.extend(self.inside.take());
    }
}

/// Decodes `source`, a regular file holding `parts` from its offset on, into `out` on this
/// thread: BGZF members in runs as a decoder of the pool decodes them, whole where libdeflate
/// takes them ([`MemberRuns`]); zstd frames, and what the walk cannot follow, by the one decoder.
pub(super) fn decode_alone(source: File, parts: Parts, out: &mut impl Out) -> Result<(), Failure> {
    let runs = matches!(parts, Parts::Bgzf).then(|| MemberRuns::of(&source));
    let Some(Some(mut runs)) = runs else {
        return run(Undecoded::new(source), Some(parts.format()), ONE, out);
    };
    loop {
        match runs.next(&source, out)? {
            NextRun::Decoded => {}
            NextRun::ReaderGone => return Ok(()),
            NextRun::Rest(at) => return decode_rest(&source, parts, at, out),
            NextRun::End(at) => return leave_offset(&source, at),
        }
    }
}

/// A regular file's BGZF members walked and decoded on one thread, a run at a time, each member
/// whole where libdeflate takes it, as a decoder of the pool decodes its runs: what
/// [`decode_alone`] hands on, and what a [`Reader`](crate::Reader) on one thread reads, run by run.
pub(super) struct MemberRuns {
    walk: Walk,
    sized: Option<SizedMember>,
    input: Vec<u8>,
    /// Where the last run began.
    pub(super) began: u64,
}

/// What the next run of members came to.
pub(super) enum NextRun {
    /// Its members, decoded whole.
    Decoded,
    /// Something the walk or a member's decoding cannot follow, from this offset on: the rest is
    /// the one decoder's.
    Rest(u64),
    /// The file's end, at this offset.
    End(u64),
    /// The reader has gone.
    ReaderGone,
}

impl MemberRuns {
    /// The runs of `source`'s members from its offset on; `None` where the file cannot be walked.
    pub(super) fn of(source: &File) -> Option<Self> {
        Some(MemberRuns {
            walk: Walk::new(source, Parts::Bgzf).ok()?,
            sized: SizedMember::new(),
            input: Vec::new(),
            began: 0,
        })
    }

    /// Decodes the next run of `source` into `out`, the bytes before a failure too.
    pub(super) fn next(&mut self, source: &File, out: &mut impl Out) -> Result<NextRun, Failure> {
        let members = match self.walk.next(source) {
            Part::Frame(members) => members,
            Part::Rest(at) => return Ok(NextRun::Rest(at)),
            Part::End(at) => return Ok(NextRun::End(at)),
        };
        self.began = members.start;
        let sized = self.sized.as_mut();
        Ok(
            match decode_members(source, members, sized, &mut self.input, out)? {
                RunEnded::Whole => NextRun::Decoded,
                RunEnded::ReaderGone => NextRun::ReaderGone,
                RunEnded::Rest(at) => NextRun::Rest(at),
            },
        )
    }
}

/// Leaves the file's offset at `at`, its end, where a decoder reading the file to its end would
/// have left it: stdin shares it with whatever reads it next.
pub(super) fn leave_offset(mut source: &File, at: u64) -> Result<(), Failure> {
    source.seek(SeekFrom::Start(at)).map_err(Failure::Reading)?;
    Ok(())
}

/// What a decoder sends of its part, in order.
enum Piece {
    /// Decoded bytes.
    Decoded(Decoded),
    /// The part's bytes up to and after its first line end, cut off its first piece: the end of
    /// the line that the part before ends inside ([`Seams`]).
    LineEnd(Vec<u8>),
    /// The part's fault, after the bytes decoded before it.
    Failed(Failure),
    /// The part ended at this offset, not where the walk found: the rest is the one decoder's.
    Rest(u64),
}

/// What a decoder found next, as it is handed on.
enum Parted {
    /// A part's decoded pieces, as they come (a failure or a rest ends them), and which decoder
    /// holds them.
    Frame {
        pieces: Receiver<Piece>,
        decoder: usize,
    },
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

/// A decoder's thread, number `decoder`: takes the next part from the walk and decodes it, each
/// piece counted in `hold` before it is sent, until the walk ends or the reader has gone.
fn decode_frames(
    source: &File,
    parts: Parts,
    walking: &Mutex<Walking>,
    decoder: usize,
    hold: Sender<()>,
    empty: &Receiver<Vec<u8>>,
    spares: &SpareBuffers,
) {
    let (mut frames, mut sized) = (None, None);
    let mut input = vec![0; BUFFER];
    loop {
        let (frame, pieces) = {
            let mut walking = walking.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(order) = walking.order.take() else {
                return;
            };
            let (part, frame) = match walking.walk.next(source) {
                Part::Frame(range) => {
                    // Bounded by what the decoder holds, and a part's one line end and end.
                    let (pieces, taken) = unbounded();
                    let part = Parted::Frame {
                        pieces: taken,
                        decoder,
                    };
                    (part, Some((range, pieces)))
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
            hold: hold.clone(),
            begins_inside_a_line: true,
            empty: empty.clone(),
            spares: spares.clone(),
        });
        let decoded = caught(|| match parts {
            Parts::Zstd => {
                let frames = match &mut frames {
                    Some(frames) => frames,
                    empty => empty.insert(Decoder::new().map_err(Failure::Decompressing)?),
                };
                decode_frame(source, frame, frames, &mut input, &mut out)
            }
            Parts::Bgzf => {
                let sized = sized.get_or_insert_with(SizedMember::new).as_mut();
                decode_members(source, frame, sized, &mut input, &mut out)
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

/// A part's decoded pieces, handed to the reader, which puts the parts in order; each piece one
/// the reader handed back where there is one.
struct ToPart {
    pieces: Sender<Piece>,
    /// The decoder's count of pieces not yet handed on, full at [`HELD`].
    hold: Sender<()>,
    /// Until its first piece: a part begins where the walk found the part before it to end,
    /// inside a line but by chance.
    begins_inside_a_line: bool,
    empty: Receiver<Vec<u8>>,
    /// Where a buffer goes that nobody takes.
    spares: SpareBuffers,
}

impl Buffers for ToPart {
    fn empty(&mut self) -> Option<Vec<u8>> {
        // Else one that a decoding before this left spare: the next `pzstd` or `bgzip` FILE of
        // a run made each of its pieces afresh, a page fault a page, beside 32 MiB of spares.
        let handed_back = self.empty.try_recv();
        Some(handed_back.unwrap_or_else(|_| self.spares.take_buffer()))
    }

    fn full(&mut self, mut piece: Decoded) -> bool {
        // Cut here, where the piece was just decoded: the thread that put pieces in order found
        // it gone from the cache, and moving it there took a tenth of the time it saved.
        if std::mem::take(&mut self.begins_inside_a_line)
            && let Some(line_end) = piece.cut_first_line()
            && self.pieces.send(Piece::LineEnd(line_end)).is_err()
        {
            return false;
        }
        self.hold.send(()).is_ok() && self.pieces.send(Piece::Decoded(piece)).is_ok()
    }

    fn spares(&self) -> &SpareBuffers {
        &self.spares
    }
}

#[cfg(test)]
mod tests {
    use super::super::format::Format;
    use super::super::handoff::{DecodedFile, Kept, ToReader};
    use super::super::tests::{
        bgzf_member, decoded_file, file_of, frame, random, reason, regular_of, skippable, streamed,
        text,
    };
    use super::super::walk::RUN;
    use super::super::{BUFFERS, decode_file};
    use super::*;
    use pipelines_testing as testing;

    /// What [`HandOn`] makes of the first of `frames` handed on by a decoder (none where
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
        let mut shares = Shares::default();
        let hold = shares.add();
        if first_handed_on {
            let mut kept = Filling::new(Kept::new(usize::MAX, SpareBuffers::default()));
            let room = kept.room().unwrap();
            room[..frames[0].len()].copy_from_slice(&frames[0]);
            kept.filled(frames[0].len());
            kept.flush();
            let (piece, pieces) = unbounded();
            for buffer in kept.buffers.buffers.drain(..) {
                hold.send(()).unwrap();
                piece.send(Piece::Decoded(buffer)).unwrap();
            }
            order.send(Parted::Frame { pieces, decoder: 0 }).unwrap();
        }
        drop(order);
        let (to_reader, full) = bounded(BUFFERS * 16);
        let (to_decoder, empty) = bounded(BUFFERS * 16);
        let spares = SpareBuffers::default();
        let to_reader = ToReader::new(to_reader, empty, BUFFERS, spares.clone());
        let (tell, told) = bounded(1);
        let source = Arc::new(source);
        let hand_on = HandOn::new(decoded, shares, source, Parts::Zstd, 0, (to_reader, tell));
        let mut reader = DecodedFile::new(full, to_decoder, spares).with_parts(hand_on);
        // Bounded: a hand-on that neither decodes the rest nor ends would step for ever.
        testing::within_for(
            testing::IN_MEMORY,
            "parts ended without a word",
            move || {
                let (mut read, mut buf) = (Vec::new(), vec![0; BUFFER]);
                while let n @ 1.. = reader.read(&mut buf) {
                    read.extend_from_slice(&buf[..n]);
                }
                (read, told.try_recv().unwrap())
            },
        )
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

    /// A reader of a pool's parts counts as waiting the pieces of the part being handed on, as a
    /// reader over the channel counts those sent: behind its decoders at a wait, no more once more
    /// than a pair waits (handoff's `the_decoder_is_behind_from_a_wait_until_a_batch_waits`), so
    /// that `batched` renders on the reading thread only while the decoders are behind.
    #[test]
    fn a_reader_of_parts_is_behind_until_more_than_a_pair_of_pieces_waits() {
        let (order, decoded) = bounded(1);
        let mut shares = Shares::default();
        let hold = shares.add();
        let (piece, pieces) = unbounded();
        order.send(Parted::Frame { pieces, decoder: 0 }).unwrap();
        for _ in 0..1 + 3 {
            hold.send(()).unwrap();
            let line = Decoded::whole(b"line\n".to_vec());
            piece.send(Piece::Decoded(line)).unwrap();
        }
        let (to_reader, full) = bounded(BUFFERS);
        let (to_decoder, empty) = bounded(BUFFERS);
        let spares = SpareBuffers::default();
        let to_reader = ToReader::new(to_reader, empty, BUFFERS, spares.clone());
        let (tell, _told) = bounded(1);
        let source = Arc::new(file_of(b""));
        let hand_on = HandOn::new(decoded, shares, source, Parts::Zstd, 0, (to_reader, tell));
        let mut reader = DecodedFile::new(full, to_decoder, spares).with_parts(hand_on);
        let mut take_whole = || {
            assert_eq!(reader.unread_buffer(), Some(5));
            reader.exchange(|bytes, _| bytes);
            reader.is_behind()
        };
        assert!(take_whole(), "no part taken yet: the reader waits");
        assert!(!take_whole(), "three of the part's pieces waiting");
        assert!(!take_whole(), "two waiting, after more than a pair");
        assert!(!take_whole(), "one waiting, after more than a pair");
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

    #[test]
    fn frames_decoded_at_once_come_out_in_order() {
        let text = text(0..300_000);
        let (bytes, cuts) = frames_of(&text);
        assert!(cuts.len() > 20);
        // Every decoder at work, each holding a frame's pieces while the reader holds back (other
        // tests running beside this one start three at most).
        // Eight threads: one for the reader and the rendering, seven decoders.
        let eight = NonZeroUsize::new(8).unwrap();
        let (mut buffers, _decoding) = decode_file(
            regular_of(&bytes),
            Format::Zstd,
            BUFFERS,
            eight,
            0,
            &SpareBuffers::default(),
        )
        .unwrap();
        assert_eq!(buffers.read(&mut [0; 10]), 10);
        testing::wait_for("decoded at once", || {
            testing::threads_named("decode frames") >= 7
        });
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
        let (mut buffers, decoding) = decode_file(
            regular_of(&bytes),
            Format::Zstd,
            BUFFERS,
            threads,
            0,
            &SpareBuffers::default(),
        )
        .unwrap();
        assert_eq!(buffers.read(&mut [0; 10]), 10);
        drop(buffers);
        let told = decoding.ended.recv_timeout(testing::DEADLINE);
        assert!(matches!(told, Ok(Ok(()))), "{told:?}");
    }

    /// A file decoded in parts is left at its end, as one decoder reading it leaves it: stdin
    /// shares its offset with whatever reads it next. Parts are read at offsets, which move no
    /// offset, so only the decoding's end moves it.
    #[test]
    fn a_file_decoded_in_parts_is_left_at_its_end() {
        let text = text(0..100_000);
        let frames = frames_of(&text).0;
        let members: Vec<u8> = (text.chunks(65_280))
            .flat_map(|chunk| bgzf_member(chunk, 0, None))
            .collect();
        let two = NonZeroUsize::new(2).unwrap();
        for (bytes, format, threads) in [
            (&frames, Format::Zstd, two),
            (&members, Format::Gzip, two),
            (&members, Format::Gzip, ONE),
        ] {
            let source = file_of(bytes);
            let shared = source.try_clone().unwrap();
            let (out, ended) = decoded_file(source, format, threads);
            assert!(
                out == text && ended.is_ok(),
                "{format:?}, {threads}: {ended:?}"
            );
            let offset = (&shared).stream_position().unwrap();
            assert_eq!(offset, bytes.len() as u64, "{format:?}, {threads}");
        }
    }

    /// The buffers handed to the reader begin and end lines, where parts and members end inside
    /// them: each but the last ends after a line end, so that `batched` takes each as a chunk.
    #[test]
    fn buffers_of_parts_decoded_apart_are_cut_after_line_ends() {
        let text = text(0..300_000);
        // Frames of 300,001 bytes, each ending inside a line; and `bgzip`'s members.
        let frames: Vec<u8> = (text.chunks(300_001))
            .flat_map(|chunk| zstd::encode_all(chunk, 3).unwrap())
            .collect();
        let members = pipelines_testing::bgzf(&text);
        let two = NonZeroUsize::new(2).unwrap();
        for (bytes, format) in [(frames, Format::Zstd), (members, Format::Gzip)] {
            let buffers = testing::within("decoding in parts", move || {
                let source = regular_of(&bytes);
                let spares = SpareBuffers::default();
                let (mut decoded, decoding) =
                    decode_file(source, format, BUFFERS, two, 0, &spares).unwrap();
                let mut buffers = Vec::new();
                while let n @ 1.. = decoded.unread().len() {
                    buffers.push(decoded.unread().to_vec());
                    decoded.consume(n);
                }
                assert!(decoding.finish().is_ok());
                buffers
            });
            assert!(buffers.concat() == text, "{format:?}: other bytes");
            let cut_inside_a_line = buffers[..buffers.len() - 1]
                .iter()
                .filter(|buffer| !buffer.ends_with(b"\n"))
                .count();
            assert_eq!(cut_inside_a_line, 0, "{format:?}, of {}", buffers.len());
        }
    }

    /// A decoder's share begins at [`FIRST_HELD`] pieces and widens by one each time the reader
    /// is to wait while the decoder is stopped by it, up to [`HELD`]; a decoder with room left
    /// is not widened, nor is any where the reader need not wait, and a piece handed on makes
    /// room (CONTRACT §12.4).
    #[test]
    fn a_share_widens_while_the_reader_waits_and_its_decoder_is_stopped() {
        let mut shares = Shares::default();
        let (stopped, going) = (shares.add(), shares.add());
        let sent = |hold: &Sender<()>| std::iter::from_fn(|| hold.try_send(()).ok()).count();
        assert_eq!(sent(&stopped), FIRST_HELD);
        (1..FIRST_HELD).for_each(|_| going.try_send(()).unwrap());
        let (message, messages) = unbounded();
        message.send(()).unwrap();
        assert!(shares.next_of(&messages).is_some());
        assert_eq!(sent(&stopped), 0, "widened with no wait");
        for share in FIRST_HELD..HELD {
            let widened = thread::scope(|scope| {
                let sending = scope.spawn(|| {
                    // Room comes only from the wait's widening; the message ends the wait.
                    let started = std::time::Instant::now();
                    let widened = std::iter::repeat_with(|| stopped.try_send(()).is_ok())
                        .take_while(|_| started.elapsed() < testing::IN_MEMORY)
                        .any(|room| room);
                    message.send(()).unwrap();
                    widened
                });
                assert!(shares.next_of(&messages).is_some());
                sending.join().unwrap()
            });
            assert!(
                widened,
                "a share of {share} not widened as the reader waited"
            );
        }
        shares.widen();
        assert_eq!(sent(&stopped), 0, "widened past HELD");
        assert_eq!(sent(&going), 1, "widened with room left");
        shares.handed_on(0);
        assert_eq!(sent(&stopped), 1, "no room made by a piece handed on");
    }

    /// A decoder that finds the reader gone as it sends a part walks no further: the walk stays
    /// where that part ends, however many parts the file holds after it.
    #[test]
    fn a_decoder_walks_no_further_once_the_reader_has_gone() {
        let frames: Vec<Vec<u8>> = (0..10)
            .map(|n| zstd::encode_all(&text(n * 100..(n + 1) * 100)[..], 3).unwrap())
            .collect();
        let source = file_of(&frames.concat());
        let (order, decoded) = bounded(1);
        drop(decoded);
        let walk = Walk::new(&source, Parts::Zstd).unwrap();
        let walking = Mutex::new(Walking {
            walk,
            order: Some(order),
        });
        let (hold, _held) = bounded(HELD);
        let (_to_decoder, empty) = bounded(1);
        let spares = SpareBuffers::default();
        decode_frames(&source, Parts::Zstd, &walking, 0, hold, &empty, &spares);
        let walked = walking.into_inner().unwrap().walk.at;
        assert_eq!(walked, frames[0].len() as u64);
    }

    /// A part's decoder takes a buffer the reader handed back, else one a decoding before left
    /// spare, and only then makes one (CONTRACT §12.4).
    #[test]
    fn a_parts_decoder_takes_a_spare_buffer_before_it_makes_one() {
        let (to_decoder, empty) = bounded(1);
        let spares = SpareBuffers::default();
        let (handed_back, kept) = (Vec::with_capacity(BUFFER), Vec::with_capacity(BUFFER));
        let (handed_back_at, kept_at) = (handed_back.as_ptr(), kept.as_ptr());
        to_decoder.send(handed_back).unwrap();
        spares.keep(kept);
        let (pieces, _taken) = unbounded();
        let (hold, _held) = bounded(HELD);
        let mut part = ToPart {
            pieces,
            hold,
            begins_inside_a_line: true,
            empty,
            spares,
        };
        let taken: Vec<Vec<u8>> = (0..3).map(|_| part.empty().unwrap()).collect();
        assert_eq!(taken[0].as_ptr(), handed_back_at, "not the one handed back");
        assert_eq!(taken[1].as_ptr(), kept_at, "not the spare");
        assert_eq!(taken[2].capacity(), 0, "not made afresh");
    }

    /// A decoder holds its share of pieces whatever parts they belong to (CONTRACT §12.4): a run
    /// that decodes to more than a quarter of it, read by nobody, still gets every piece of it.
    /// Held by each part, a fourth of it, such a run stopped its decoder while the reader was
    /// on the parts before it, and on 2 cores the decoders took turns.
    #[test]
    fn a_decoder_holds_its_share_of_pieces_in_one_part() {
        let line = b"the same line, over and over\n".repeat(65_280 / 29);
        // One run: 200 members of a few hundred bytes, decoding to about 50 pieces.
        let bytes = bgzf_member(&line, 0, None).repeat(200);
        assert!(bytes.len() < RUN as usize);
        let source = Arc::new(file_of(&bytes));
        let (order, decoded) = bounded(Parts::Bgzf.under_way());
        let walk = Walk::new(&source, Parts::Bgzf).unwrap();
        let walking = Mutex::new(Walking {
            walk,
            order: Some(order),
        });
        let (hold, held) = bounded(HELD);
        let decoding = thread::spawn(move || {
            let (_empty_sender, empty) = bounded(1);
            decode_frames(
                &source,
                Parts::Bgzf,
                &walking,
                0,
                hold,
                &empty,
                &SpareBuffers::default(),
            );
        });
        let Ok(Parted::Frame { pieces, decoder: 0 }) = decoded.recv() else {
            panic!("no run");
        };
        let started = std::time::Instant::now();
        while !held.is_full() {
            assert!(
                started.elapsed() < testing::IN_MEMORY,
                "{} pieces held, of {}",
                held.len(),
                HELD
            );
            thread::sleep(std::time::Duration::from_millis(10));
        }
        let decoded = (pieces.try_iter()).filter(|piece| matches!(piece, Piece::Decoded(_)));
        assert_eq!(decoded.count(), HELD);
        // Nobody hands pieces on any more: the decoder stops.
        drop((held, pieces));
        testing::within_for(testing::IN_MEMORY, "the decoder's end", move || {
            decoding.join()
        })
        .unwrap();
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
}
