//! Where a decoder's thread puts what it decodes ([`Out`]): a stream's bytes into a pipe, a
//! regular file's in whole buffers, cut after their last line end, over a bounded channel to its
//! reader ([`DecodedFile`]), which may take them as its own, recycled, and kept spare across
//! decodings ([`SpareBuffers`]).

use std::fs::File;
use std::io::Write;

use crossbeam_channel::{Receiver, Sender};
use memchr::{memchr, memrchr};

use super::BUFFER;
use super::spares::SpareBuffers;

/// The most a buffer handed to a decoder holds room for: a [`BUFFER`] and what a chunk reading
/// one grows by.
pub(super) const MOST_KEPT: usize = 2 * BUFFER;

/// Decoded bytes: the first `len` of `bytes`. A buffer stays as long as it was made (a
/// [`BUFFER`]) however few bytes it holds, so that it is not zeroed again when used again: a
/// small FILE's buffer, cut to its few KB, was zeroed back to 256 KiB for the next FILE, 73% of
/// the instructions of a thousand small FILEs.
#[derive(Debug, Default)]
pub(super) struct Decoded {
    pub(super) bytes: Vec<u8>,
    len: usize,
}

impl Decoded {
    /// All of `bytes`.
    pub(super) fn whole(bytes: Vec<u8>) -> Self {
        let len = bytes.len();
        Decoded { bytes, len }
    }

    /// The decoded bytes it holds.
    pub(super) fn held(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Whether its last line goes on past it.
    pub(super) fn ends_inside_a_line(&self) -> bool {
        self.held().last().is_some_and(|&byte| byte != b'\n')
    }

    /// Ends its last line with `line_end`, the rest of that line and its end, where it has room
    /// for them: false, nothing added, where it has none.
    pub(super) fn end_line_with(&mut self, line_end: &[u8]) -> bool {
        let Some(room) = self.bytes.get_mut(self.len..self.len + line_end.len()) else {
            return false;
        };
        room.copy_from_slice(line_end);
        self.len += line_end.len();
        true
    }

    /// Cuts off its bytes up to and after its first line end, the rest moved to its front:
    /// `None`, nothing cut, where it holds no line end.
    pub(super) fn cut_first_line(&mut self) -> Option<Vec<u8>> {
        let line = memchr(b'\n', self.held())? + 1;
        let cut = self.bytes[..line].to_vec();
        self.bytes.copy_within(line..self.len, 0);
        self.len -= line;
        Some(cut)
    }
}

/// A regular file's decoded bytes as the reader takes them: whole buffers from the decoder's
/// thread, or the pieces of a pool's parts handed on here, each handed back, emptied, for the
/// next.
pub struct DecodedFile {
    pub(super) full: Receiver<Decoded>,
    /// Pieces handed on on the reader's thread, taken before `full` (where the rest of the file
    /// then comes, if any does).
    parts: Option<Box<dyn Pieces>>,
    pub(super) empty: Sender<Vec<u8>>,
    /// The buffer being read.
    pub(super) buffer: Decoded,
    /// How much of it has been read.
    pub(super) at: usize,
    /// [`is_behind`](Self::is_behind).
    behind: bool,
    /// Where buffers go that the decoder no longer takes.
    spares: SpareBuffers,
}

impl DecodedFile {
    /// The decoded bytes that come over `full`, each buffer read handed back over `empty`, or
    /// kept among `spares` once the decoder has gone.
    pub(super) fn new(
        full: Receiver<Decoded>,
        empty: Sender<Vec<u8>>,
        spares: SpareBuffers,
    ) -> Self {
        DecodedFile {
            full,
            parts: None,
            empty,
            buffer: Decoded::default(),
            at: 0,
            behind: false,
            spares,
        }
    }

    /// The decoded bytes not read yet, waiting for the next buffer once this one is read: empty
    /// at the end of the decoded bytes. [`consume`](Self::consume) says how many were taken.
    pub fn unread(&mut self) -> &[u8] {
        match self.has_unread() {
            true => &self.buffer.held()[self.at..],
            false => &[],
        }
    }

    /// Takes the first `n` of the bytes [`unread`](Self::unread) gave.
    pub fn consume(&mut self, n: usize) {
        debug_assert!(
            self.at + n <= self.buffer.len,
            "more consumed than was unread"
        );
        self.at = (self.at + n).min(self.buffer.len);
    }

    /// Whether bytes are left to read, waiting for the next buffer once this one is read: false
    /// at the end of the decoded bytes.
    fn has_unread(&mut self) -> bool {
        while self.at == self.buffer.len {
            // Handed back before the wait, so that the decoder never waits for the one buffer
            // the reader holds.
            let read = std::mem::take(&mut self.buffer).bytes;
            self.at = 0;
            if read.capacity() > 0 {
                self.hand_back(read);
            }
            let waiting = self
                .parts
                .as_ref()
                .map_or(self.full.len(), |parts| parts.waiting());
            match waiting {
                0 => self.behind = true,
                waiting if waiting > SENT_TOGETHER => self.behind = false,
                _ => {} // the rest of the batch the reader last waited for, or did not
            }
            let Some(next) = self.next_buffer() else {
                return false;
            };
            self.buffer = next;
        }
        true
    }

    /// The next buffer, waiting for it: `None` at the end.
    fn next_buffer(&mut self) -> Option<Decoded> {
        if let Some(parts) = &mut self.parts {
            match parts.next() {
                Some(piece) => return Some(piece),
                None => self.parts = None,
            }
        }
        self.full.recv().ok()
    }

    /// `parts` handed on here before what comes over the channel.
    pub(super) fn with_parts(mut self, parts: impl Pieces) -> Self {
        self.parts = Some(Box::new(parts));
        self
    }

    /// Hands `storage` to the decoder to decode into. The channel has room for every buffer; if
    /// the decoder has gone, the storage is kept spare. Storage grown past [`MOST_KEPT`] (a
    /// chunk's, for a long line, given in [`exchange`](Self::exchange)) is freed, and the decoder
    /// makes a buffer instead: else each long line would leave its storage among the decoders'
    /// and the spare buffers, which would hold many such where `batched`'s chunks hold a few.
    fn hand_back(&mut self, mut storage: Vec<u8>) {
        if storage.capacity() > MOST_KEPT {
            storage = Vec::new();
        }
        if let Err(unsent) = self.empty.try_send(storage) {
            self.spares.keep(unsent.into_inner());
        }
    }

    /// How many decoded bytes the next buffer holds if none of them has been read yet, waiting
    /// for it once the last is read: `None` when part of it has been read, or at the end.
    pub fn unread_buffer(&mut self) -> Option<usize> {
        (self.has_unread() && self.at == 0).then_some(self.buffer.len)
    }

    /// Hands the buffer that [`unread_buffer`](Self::unread_buffer) found to `take`, its storage
    /// and how many of its first bytes are decoded, without copying them; the storage `take`
    /// returns goes to the decoder in its place, so that the decoder has as many buffers to decode
    /// into.
    pub fn exchange(&mut self, take: impl FnOnce(Vec<u8>, usize) -> Vec<u8>) {
        debug_assert!(self.at == 0, "a buffer part-read is exchanged");
        let Decoded { bytes, len } = std::mem::take(&mut self.buffer);
        let storage = take(bytes, len);
        self.hand_back(storage);
    }

    /// Whether the decoder is behind its reader: the reader found no buffer waiting when it last
    /// wanted one, and has not found more than a batch waiting since (the decoder a whole batch
    /// ahead: a batch alone may be the one it waited for, or one sent while it rendered).
    pub fn is_behind(&self) -> bool {
        self.behind
    }

    /// Copies decoded bytes into `buf` (not empty), waiting for some unless some are here: how
    /// many, or 0 at the end.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let unread = self.unread();
        let n = unread.len().min(buf.len());
        buf[..n].copy_from_slice(&unread[..n]);
        self.consume(n);
        n
    }
}

impl std::fmt::Debug for DecodedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecodedFile")
            .field("unread", &(self.buffer.len - self.at))
            .field("parts", &self.parts.is_some())
            .field("behind", &self.behind)
            .finish_non_exhaustive()
    }
}

impl Drop for DecodedFile {
    fn drop(&mut self) {
        self.spares.keep(std::mem::take(&mut self.buffer).bytes);
        self.full
            .try_iter()
            .for_each(|decoded| self.spares.keep(decoded.bytes));
    }
}

/// Pieces that the reader's thread hands on itself, decoded on threads that send them to it (a
/// pool's parts), one hop fewer than through a decoding thread of their own.
pub(super) trait Pieces: Send + 'static {
    /// The next piece, waiting for it: `None` once the pieces have ended.
    fn next(&mut self) -> Option<Decoded>;

    /// How many pieces wait to be taken now.
    fn waiting(&self) -> usize;
}

/// Where the thread puts what it decodes.
pub(super) trait Out: Send + 'static {
    /// Room to decode into, or `None` when the reader has gone.
    fn room(&mut self) -> Option<&mut [u8]>;

    /// The first `n` bytes of the room now hold decoded bytes: false when the reader has gone.
    fn filled(&mut self, n: usize) -> bool;

    /// Hands on what is held, at the end.
    fn flush(&mut self);

    /// Room for at least `size` bytes to decode into at once, what is held handed on first where
    /// less is left: `None` when the reader has gone.
    fn room_for(&mut self, size: usize) -> Option<&mut [u8]> {
        if self.room()?.len() < size {
            self.flush();
        }
        self.room()
    }

    /// Hands on `bytes[..len]`, decoded elsewhere (on a decoder's thread), and returns storage for
    /// the next, its bytes of no meaning: `None` when the reader has gone. Copied into the room,
    /// where the bytes cannot go on in their own storage.
    fn hand_over(&mut self, bytes: Vec<u8>, len: usize) -> Option<Vec<u8>> {
        let mut left = &bytes[..len];
        while !left.is_empty() {
            let room = self.room()?;
            let n = room.len().min(left.len());
            room[..n].copy_from_slice(&left[..n]);
            left = &left[n..];
            if !self.filled(n) {
                return None;
            }
        }
        Some(bytes)
    }

    /// The caller's pool that a decoder may take its state from and keep it in when it ends:
    /// none unless the bytes go to a reader of the caller's run.
    fn spares(&self) -> Option<&SpareBuffers> {
        None
    }
}

/// A stream's decoded bytes, written to the pipe as each buffer comes, for live input.
pub(super) struct PipeOut {
    pub(super) pipe: File,
    pub(super) buf: Vec<u8>,
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

    fn hand_over(&mut self, bytes: Vec<u8>, len: usize) -> Option<Vec<u8>> {
        Write::write_all(&mut &self.pipe, &bytes[..len])
            .is_ok()
            .then_some(bytes)
    }
}

/// Where whole buffers of decoded bytes go, and where empty ones come from.
pub(super) trait Buffers: Send + 'static {
    /// An empty buffer to fill (its bytes of no meaning), or `None` when the reader has gone.
    fn empty(&mut self) -> Option<Vec<u8>>;

    /// Hands on a buffer of decoded bytes: false when the reader has gone.
    fn full(&mut self, decoded: Decoded) -> bool;

    /// Hands on every buffer [`full`](Self::full) was given, at the end.
    fn flush(&mut self) {}

    /// Where buffers go that nobody takes.
    fn spares(&self) -> &SpareBuffers;
}

/// The longest partial line a full buffer hands to the next ([`Filling`]): past it, the buffer
/// goes on uncut, and its reader copies it as it did before buffers were cut.
const MOST_CARRIED: usize = BUFFER / 4;

/// Decoded bytes put into [`BUFFER`]-long buffers, each handed on as it fills, cut after its last
/// line end: the partial line after it begins the next buffer, so that a reader can take a
/// buffer as a chunk of whole lines without copying it ([`DecodedFile::exchange`]). Moving that
/// line costs the decoder a copy of some tens of bytes a buffer.
pub(super) struct Filling<B: Buffers> {
    pub(super) buffers: B,
    /// The buffer being filled, [`BUFFER`] bytes long, or empty when none is.
    buffer: Vec<u8>,
    /// How much of it holds decoded bytes.
    held: usize,
    /// The partial line cut off the last buffer handed on, for the front of the next.
    carried: Vec<u8>,
}

impl<B: Buffers> Filling<B> {
    pub(super) fn new(buffers: B) -> Self {
        Filling {
            buffers,
            buffer: Vec::new(),
            held: 0,
            carried: Vec::new(),
        }
    }

    /// Hands on the buffer being filled, cut to what it holds: false when the reader has gone.
    fn hand_on(&mut self) -> bool {
        let bytes = std::mem::take(&mut self.buffer);
        let len = std::mem::take(&mut self.held);
        self.buffers.full(Decoded { bytes, len })
    }

    /// Hands on the full buffer, its partial last line carried to the next unless too long.
    fn hand_on_whole_lines(&mut self) -> bool {
        if let Some(newline) = memrchr(b'\n', &self.buffer[..self.held])
            && self.held - (newline + 1) <= MOST_CARRIED
        {
            self.carried
                .extend_from_slice(&self.buffer[newline + 1..self.held]);
            self.held = newline + 1;
        }
        self.hand_on()
    }

    /// Puts the line carried into a buffer of its own: false when the reader has gone.
    fn place_carried(&mut self) -> bool {
        self.carried.is_empty() || self.room().is_some()
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
            self.held = self.carried.len();
            self.buffer[..self.held].copy_from_slice(&self.carried);
            self.carried.clear();
        }
        Some(&mut self.buffer[self.held..])
    }

    fn filled(&mut self, n: usize) -> bool {
        self.held += n;
        self.held < BUFFER || self.hand_on_whole_lines()
    }

    fn flush(&mut self) {
        if self.place_carried() && self.held > 0 {
            self.hand_on();
        }
        self.buffers.flush();
    }

    /// What is held handed on cut after its last line end, as a full buffer is, so that a reader
    /// may take it as whole lines; the line carried then handed on alone where `size` is more
    /// than it leaves room for.
    fn room_for(&mut self, size: usize) -> Option<&mut [u8]> {
        if self.room()?.len() < size && !self.hand_on_whole_lines() {
            return None;
        }
        if self.room()?.len() < size {
            self.flush();
        }
        self.room()
    }

    fn spares(&self) -> Option<&SpareBuffers> {
        Some(self.buffers.spares())
    }
}

impl<B: Buffers> Drop for Filling<B> {
    fn drop(&mut self) {
        let buffer = std::mem::take(&mut self.buffer);
        self.buffers.spares().keep(buffer);
    }
}

/// A stream's decoded bytes for a reader in memory ([`Reader`](crate::Reader)): what each read
/// of the decoder gives, sent at once in the buffer it was decoded into. A stream may be live and
/// pause anywhere, so no buffer waits to fill, and none is cut at a line end: its reader reads
/// bytes, not lines.
pub(super) struct Passing {
    buffers: ToReader,
    /// The buffer being decoded into, [`BUFFER`] bytes long, or empty when none is.
    buffer: Vec<u8>,
}

impl Passing {
    pub(super) fn new(buffers: ToReader) -> Self {
        Passing {
            buffers,
            buffer: Vec::new(),
        }
    }

    /// Sends `decoded` to the reader at once, no buffer waiting for another: false when the
    /// reader has gone.
    fn send(&mut self, decoded: Decoded) -> bool {
        self.buffers.full(decoded) && self.buffers.send_unsent()
    }
}

impl Out for Passing {
    fn room(&mut self) -> Option<&mut [u8]> {
        if self.buffer.is_empty() {
            let mut buffer = self.buffers.empty()?;
            buffer.resize(BUFFER, 0);
            self.buffer = buffer;
        }
        Some(&mut self.buffer)
    }

    fn filled(&mut self, n: usize) -> bool {
        let bytes = std::mem::take(&mut self.buffer);
        self.send(Decoded { bytes, len: n })
    }

    /// Every read was sent at once: nothing is held. A stream's decoder keeps no state spare
    /// (the default `spares`): one source a reader, there is no next decoder to take it.
    fn flush(&mut self) {}

    /// Sent at once in its own storage, a buffer the reader handed back taken in its place.
    fn hand_over(&mut self, bytes: Vec<u8>, len: usize) -> Option<Vec<u8>> {
        self.send(Decoded { bytes, len })
            .then(|| self.buffers.empty())?
    }
}

impl Drop for Passing {
    fn drop(&mut self) {
        self.buffers.spares.keep(std::mem::take(&mut self.buffer));
    }
}

/// How many full buffers go to the reader together. The reader, faster than the decoder, waits
/// for each, parked, and waking it took the decoder 4 % of the CPU time of `batched -z` on the
/// main job's manual pages (a cross-core wake-up on a virtual machine); together, one wakes it
/// for both.
const SENT_TOGETHER: usize = 2;

/// The reader's buffers: at most `most` made, then only those it hands back.
pub(super) struct ToReader {
    full: Sender<Decoded>,
    /// Shared with the pool's decoders too, which take their pieces' buffers from it.
    pub(super) empty: Receiver<Vec<u8>>,
    /// The most buffers made.
    most: usize,
    /// Buffers made so far: at `most`, the next is one the reader handed back.
    made: usize,
    /// Full buffers not yet sent, fewer than [`SENT_TOGETHER`].
    unsent: Vec<Decoded>,
    /// Where buffers are made from, and go at the end.
    pub(super) spares: SpareBuffers,
}

impl ToReader {
    /// Buffers sent over `full`, at most `most` made (from `spares` where it has some), then
    /// those that come back over `empty`.
    pub(super) fn new(
        full: Sender<Decoded>,
        empty: Receiver<Vec<u8>>,
        most: usize,
        spares: SpareBuffers,
    ) -> Self {
        ToReader {
            full,
            empty,
            most,
            made: 0,
            unsent: Vec::new(),
            spares,
        }
    }

    /// Sends the full buffers held: false when the reader has gone.
    fn send_unsent(&mut self) -> bool {
        let full = &self.full;
        self.unsent
            .drain(..)
            .all(|decoded| full.send(decoded).is_ok())
    }
}

impl Buffers for ToReader {
    fn empty(&mut self) -> Option<Vec<u8>> {
        // One handed back first, so that a decoder let hold many makes only as many as the
        // reader leaves it holding.
        match self.empty.try_recv() {
            Ok(buffer) => Some(buffer),
            Err(_) if self.made < self.most => {
                self.made += 1;
                Some(self.spares.take_buffer())
            }
            // The reader may be waiting for those held to hand any back.
            Err(_) => self.send_unsent().then(|| self.empty.recv().ok())?,
        }
    }

    fn full(&mut self, decoded: Decoded) -> bool {
        self.unsent.push(decoded);
        self.unsent.len() < SENT_TOGETHER.min(self.most) || self.send_unsent()
    }

    fn flush(&mut self) {
        self.send_unsent();
    }

    fn spares(&self) -> &SpareBuffers {
        &self.spares
    }
}

impl Drop for ToReader {
    fn drop(&mut self) {
        self.empty
            .try_iter()
            .for_each(|buffer| self.spares.keep(buffer));
    }
}

/// A small file's decoded bytes, kept whole in memory: at most `most` buffers, after which there
/// is no more room, as if the reader had gone ([`decode_here`](super::decode_here)).
pub(super) struct Kept {
    pub(super) buffers: Vec<Decoded>,
    most: usize,
    /// The decoder asked for more room than `most` buffers.
    pub(super) overflowed: bool,
    /// Where buffers are made from.
    pub(super) spares: SpareBuffers,
}

impl Kept {
    /// Room for at most `most` buffers, none yet filled, made from `spares` where it has some.
    pub(super) fn new(most: usize, spares: SpareBuffers) -> Self {
        Kept {
            buffers: Vec::new(),
            most,
            overflowed: false,
            spares,
        }
    }
}

impl Buffers for Kept {
    fn empty(&mut self) -> Option<Vec<u8>> {
        self.overflowed = self.buffers.len() == self.most;
        (!self.overflowed).then(|| self.spares.take_buffer())
    }

    fn full(&mut self, decoded: Decoded) -> bool {
        self.buffers.push(decoded);
        true
    }

    fn spares(&self) -> &SpareBuffers {
        &self.spares
    }
}

#[cfg(test)]
mod tests {
    use crossbeam_channel::bounded;

    use super::*;

    /// What `pieces`, written one after another as a decoder writes, come to: each buffer
    /// handed on, as the reader sees it.
    fn handed_on(pieces: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let mut out = Filling::new(Kept::new(usize::MAX, SpareBuffers::default()));
        for piece in pieces {
            let mut piece = &piece[..];
            while !piece.is_empty() {
                let room = out.room().unwrap();
                assert!(!room.is_empty(), "no room to decode into");
                let n = room.len().min(piece.len());
                room[..n].copy_from_slice(&piece[..n]);
                assert!(out.filled(n));
                piece = &piece[n..];
            }
        }
        out.flush();
        let buffers = std::mem::take(&mut out.buffers.buffers);
        buffers
            .iter()
            .map(|decoded| decoded.held().to_vec())
            .collect()
    }

    /// Lines of these lengths, each ended but perhaps the last.
    fn lines(lengths: &[usize], last_ended: bool) -> Vec<u8> {
        let mut bytes = Vec::new();
        for (n, &len) in lengths.iter().enumerate() {
            bytes.extend(std::iter::repeat_n(b'a' + (n % 26) as u8, len));
            if n + 1 < lengths.len() || last_ended {
                bytes.push(b'\n');
            }
        }
        bytes
    }

    proptest::proptest! {
        // Shrinking is bounded: each case copies megabytes, and a change that fails every case
        // shrank for minutes, a hang of the run rather than a failure.
        #![proptest_config(proptest::prelude::ProptestConfig {
            max_shrink_time: 10_000,
            ..proptest::prelude::ProptestConfig::with_cases(64)
        })]

        /// The decoded bytes come out whole and in order, in buffers cut after their last line
        /// end unless the partial line after it is longer than `MOST_CARRIED`, or the buffer has
        /// none; only the last may hold less for any other reason (the end).
        #[test]
        fn buffers_are_cut_after_their_last_line_end(
            lengths in proptest::collection::vec(
                proptest::prop_oneof![0..200usize, 0..2 * BUFFER], 1..24),
            last_ended: bool,
            write in 1..3 * BUFFER,
        ) {
            let text = lines(&lengths, last_ended);
            let pieces: Vec<Vec<u8>> = text.chunks(write).map(<[u8]>::to_vec).collect();
            let buffers = handed_on(&pieces);
            proptest::prop_assert!(buffers.concat() == text, "the bytes as written");
            for (n, buffer) in buffers.iter().enumerate() {
                proptest::prop_assert!(!buffer.is_empty() && buffer.len() <= BUFFER);
                if n + 1 == buffers.len() {
                    continue;
                }
                if buffer.ends_with(b"\n") {
                    // Cut: the line carried on was the rest of a full buffer.
                    proptest::prop_assert!(BUFFER - buffer.len() <= MOST_CARRIED,
                        "buffer {} cut {} bytes short", n, BUFFER - buffer.len());
                    continue;
                }
                // Uncut: it is whole, and either has no line end or too long a line after it.
                proptest::prop_assert_eq!(buffer.len(), BUFFER, "buffer {} cut short", n);
                let partial = buffer.iter().rev().take_while(|&&byte| byte != b'\n').count();
                proptest::prop_assert!(partial == BUFFER || partial > MOST_CARRIED,
                    "buffer {} left a partial line of {} uncut", n, partial);
            }
        }
    }

    /// Full buffers go to the reader two at a time, and all of them before the decoder waits for
    /// one back or ends, so that the reader is never left waiting for bytes the decoder holds.
    #[test]
    fn full_buffers_go_together_and_before_any_wait() {
        let (to_reader, full) = bounded(3);
        let (to_decoder, empty) = bounded(3);
        let mut buffers = ToReader::new(to_reader, empty, 3, SpareBuffers::default());
        let fill = |buffers: &mut ToReader, byte: u8| {
            // A spare buffer may hold another test's bytes.
            let mut bytes = buffers.empty().unwrap();
            bytes.clear();
            bytes.push(byte);
            assert!(buffers.full(Decoded { bytes, len: 1 }));
        };
        fill(&mut buffers, b'1');
        assert!(full.is_empty(), "one held for the next");
        fill(&mut buffers, b'2');
        assert_eq!(full.len(), 2, "sent together");
        fill(&mut buffers, b'3');
        let waiting = std::thread::spawn(move || {
            fill(&mut buffers, b'4');
            buffers.flush();
        });
        let received = pipelines_testing::within("the decoder's buffers", move || {
            let mut received: Vec<Decoded> = full.iter().take(3).collect();
            to_decoder.send(Vec::new()).unwrap();
            received.push(full.recv().unwrap());
            received
        });
        waiting.join().unwrap();
        let bytes: Vec<u8> = received.iter().flat_map(Decoded::held).copied().collect();
        assert_eq!(bytes, b"1234", "in order, the last at the end");
    }

    /// The decoder is behind once its reader finds no buffer waiting, for the rest of the batch
    /// it then waits for, and no longer once it finds more than a batch waiting.
    #[test]
    fn the_decoder_is_behind_from_a_wait_until_a_batch_waits() {
        let (to_reader, full) = bounded(2 * SENT_TOGETHER);
        let (to_decoder, _empty) = bounded(2 * SENT_TOGETHER);
        let mut decoded = DecodedFile::new(full, to_decoder, SpareBuffers::default());
        let send = move |n| {
            for _ in 0..n {
                to_reader.send(Decoded::whole(b"line\n".to_vec())).unwrap();
            }
        };
        let take_whole = |decoded: &mut DecodedFile| {
            assert_eq!(decoded.unread_buffer(), Some(5));
            decoded.exchange(|bytes, _| bytes);
            decoded.is_behind()
        };
        send(1);
        assert!(
            !take_whole(&mut decoded),
            "one buffer waited: no batch, no wait either"
        );
        let later = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            send(SENT_TOGETHER);
            send
        });
        let (mut decoded, behind) = pipelines_testing::within("a batch", move || {
            let behind: Vec<bool> = (0..SENT_TOGETHER)
                .map(|_| take_whole(&mut decoded))
                .collect();
            (decoded, behind)
        });
        assert!(
            behind.iter().all(|&behind| behind),
            "waited for: {behind:?}"
        );
        let send = later.join().unwrap();
        send(SENT_TOGETHER);
        assert!(take_whole(&mut decoded), "a batch waiting, and no more");
        send(SENT_TOGETHER);
        assert!(!take_whole(&mut decoded), "more than a batch waiting");
    }

    /// Storage given for a buffer taken whole goes to the decoder, unless a long line grew it
    /// past [`MOST_KEPT`]: then it is freed, and the decoder is given an empty one to grow.
    #[test]
    fn storage_grown_for_a_long_line_is_not_handed_to_the_decoder() {
        let (to_reader, full) = bounded(2);
        let (to_decoder, empty) = bounded(2);
        let mut decoded = DecodedFile::new(full, to_decoder, SpareBuffers::default());
        let grown = [(BUFFER, BUFFER), (BUFFER + BUFFER / 2, BUFFER + BUFFER / 2)];
        let kept = [(MOST_KEPT, MOST_KEPT), (MOST_KEPT + 1, 0), (4 * BUFFER, 0)];
        for (storage, given) in grown.into_iter().chain(kept) {
            to_reader.send(Decoded::whole(b"line\n".to_vec())).unwrap();
            assert_eq!(decoded.unread_buffer(), Some(5));
            decoded.exchange(|bytes, len| {
                assert_eq!(&bytes[..len], b"line\n");
                Vec::with_capacity(storage)
            });
            assert_eq!(empty.try_recv().unwrap().capacity(), given, "for {storage}");
        }
    }

    /// A buffer part read is not offered whole: its bytes left are read on as a stream, and
    /// once the decoder has gone, the end is read at once. Read within a deadline: a read that
    /// never ends (an empty buffer taken again and again) ends the test process.
    #[test]
    fn a_buffer_part_read_is_not_offered_whole() {
        let (to_reader, full) = bounded(1);
        let (to_decoder, _empty) = bounded(1);
        let mut decoded = DecodedFile::new(full, to_decoder, SpareBuffers::default());
        to_reader.send(Decoded::whole(b"line\n".to_vec())).unwrap();
        drop(to_reader);
        let (offered, rest, end) =
            pipelines_testing::within_for(pipelines_testing::IN_MEMORY, "a buffer", move || {
                assert_eq!(decoded.read(&mut [0; 2]), 2);
                let offered = decoded.unread_buffer();
                let mut rest = [0; 8];
                let n = decoded.read(&mut rest);
                (offered, rest[..n].to_vec(), decoded.read(&mut [0; 8]))
            });
        assert_eq!(offered, None);
        assert_eq!(rest, b"ne\n");
        assert_eq!(end, 0, "the end");
    }

    /// A full buffer is cut after its last line end while the partial line after it is at most
    /// a quarter of a buffer; a longer one goes on uncut, whatever the line ends before it.
    #[test]
    fn a_partial_line_past_a_quarter_of_a_buffer_is_not_carried() {
        for (partial, cut) in [(BUFFER / 4, true), (BUFFER / 4 + 1, false)] {
            let text = lines(&[BUFFER - partial - 1, partial + 10], true);
            let buffers = handed_on(std::slice::from_ref(&text));
            let first = buffers[0].len();
            assert_eq!(
                first,
                if cut { BUFFER - partial } else { BUFFER },
                "{partial}"
            );
            assert!(buffers.concat() == text);
        }
    }

    /// A decoder sending to a reader makes at most `most` buffers, then decodes only into those
    /// handed back: a regular file's decoded bytes in memory are bounded (CONTRACT §12.4).
    #[test]
    fn a_reader_is_sent_at_most_most_buffers_made() {
        let (to_reader, _full) = bounded(4);
        let (to_decoder, empty) = bounded(4);
        let mut buffers = ToReader::new(to_reader, empty, 2, SpareBuffers::default());
        let given = pipelines_testing::within_for(
            pipelines_testing::IN_MEMORY,
            "buffers made or handed back",
            move || {
                let made = [buffers.empty(), buffers.empty()];
                to_decoder.send(vec![7]).unwrap();
                let handed_back = buffers.empty();
                drop(to_decoder);
                (
                    made.map(|made| made.is_some()),
                    handed_back,
                    buffers.empty(),
                )
            },
        );
        assert_eq!(given, ([true, true], Some(vec![7]), None));
    }

    /// Nothing held at the end hands on nothing: no empty buffer after a full one, or alone.
    #[test]
    fn nothing_held_at_the_end_hands_on_nothing() {
        assert!(handed_on(&[]).is_empty(), "nothing decoded");
        let full = lines(&[BUFFER - 1], true);
        assert_eq!(handed_on(std::slice::from_ref(&full)), [full]);
    }

    /// A stream's read goes to the reader at once, whole, in the buffer it was decoded into,
    /// whatever line ends it holds and however few its bytes; a buffer being decoded into when
    /// the decoder ends is kept spare.
    #[test]
    fn a_streams_read_is_passed_on_at_once_and_whole() {
        let (to_reader, full) = bounded(4);
        let (_to_decoder, empty) = bounded(4);
        let spares = SpareBuffers::default();
        let mut out = Passing::new(ToReader::new(to_reader, empty, 4, spares.clone()));
        let room = out.room().unwrap();
        assert_eq!(room.len(), BUFFER);
        room[..5].copy_from_slice(b"a\nbc\n");
        let decoded_into = room.as_ptr();
        assert!(out.filled(3));
        let passed = full.try_recv().expect("held back");
        assert_eq!(passed.held(), b"a\nb");
        assert_eq!(passed.bytes.as_ptr(), decoded_into, "copied");
        let being_filled = out.room().unwrap().as_ptr();
        drop(out);
        let kept = spares.take_buffer();
        assert_eq!(kept.as_ptr(), being_filled, "not kept spare");
    }

    /// Kept has room for `most` buffers: the next asked for finds none and says it overflowed.
    #[test]
    fn kept_has_room_for_its_buffers_and_no_more() {
        let mut kept = Kept::new(2, SpareBuffers::default());
        for _ in 0..2 {
            let bytes = kept.empty().expect("room");
            assert!(kept.full(Decoded { bytes, len: 0 }) && !kept.overflowed);
        }
        assert!(kept.empty().is_none() && kept.overflowed);
    }

    /// Room asked for where too little is left hands on what is held cut after its last line
    /// end, and is there however long the line carried to the next buffer.
    #[test]
    fn room_for_more_than_is_left_cuts_what_is_held_after_its_line_end() {
        for (carried, asked) in [(10, 64 << 10), (MOST_CARRIED, BUFFER)] {
            let text = lines(&[BUFFER - carried - 100, carried], false);
            let mut out = Filling::new(Kept::new(usize::MAX, SpareBuffers::default()));
            out.room().unwrap()[..text.len()].copy_from_slice(&text);
            assert!(out.filled(text.len()));
            assert!(out.room_for(asked).unwrap().len() >= asked);
            let held: Vec<&[u8]> = out.buffers.buffers.iter().map(Decoded::held).collect();
            assert!(
                held[0].ends_with(b"\n"),
                "{carried}: not cut after its line end"
            );
            // The line carried goes on alone where the room asked for is more than it leaves.
            let handed_on = match asked > BUFFER - carried {
                true => &text[..],
                false => &text[..text.len() - carried],
            };
            assert!(
                held.concat() == handed_on,
                "{carried}: other bytes handed on"
            );
        }
    }

    /// An `Out` of sixteen bytes of room, which flushing hands on whole.
    #[derive(Default)]
    struct Sixteen {
        room: [u8; 16],
        held: usize,
        flushed: usize,
    }

    impl Out for Sixteen {
        fn room(&mut self) -> Option<&mut [u8]> {
            Some(&mut self.room[self.held..])
        }

        fn filled(&mut self, n: usize) -> bool {
            self.held += n;
            true
        }

        fn flush(&mut self) {
            self.flushed += std::mem::take(&mut self.held);
        }
    }

    /// Room asked for of an `Out` that has less left hands on what it holds first; one that has
    /// as much, or more, keeps it.
    #[test]
    fn room_for_more_than_is_left_flushes_first() {
        let mut out = Sixteen::default();
        out.filled(10);
        for (asked, flushed) in [(4, 0), (6, 0), (7, 10)] {
            assert!(out.room_for(asked).unwrap().len() >= asked);
            assert_eq!(out.flushed, flushed, "{asked} asked");
        }
    }

    /// Whole lines of two pieces: the first ended with the rest of its last line, cut off the
    /// front of the second, the second's bytes moved to its front.
    #[test]
    fn a_line_cut_off_one_piece_ends_another() {
        let mut next = Decoded::whole(b"line\nnext\npartial".to_vec());
        let line_end = next.cut_first_line().unwrap();
        assert_eq!(
            (&line_end[..], next.held()),
            (&b"line\n"[..], &b"next\npartial"[..])
        );
        let mut before = Decoded {
            bytes: b"first\nthe ".iter().copied().chain([0; 5]).collect(),
            len: 10,
        };
        assert!(before.end_line_with(&line_end));
        assert_eq!(before.held(), b"first\nthe line\n");
        assert!(
            !before.end_line_with(b"more"),
            "room for five bytes, not nine"
        );
        assert_eq!(
            Decoded::whole(b"no line end".to_vec()).cut_first_line(),
            None
        );
    }

    /// A line cut off the last full buffer comes out when the decoding ends.
    #[test]
    fn the_line_carried_is_handed_on_at_the_end() {
        let ends_a_buffer = lines(&[BUFFER - 10, 9], false);
        assert_eq!(
            handed_on(std::slice::from_ref(&ends_a_buffer)).concat(),
            ends_a_buffer
        );
    }
}
