//! Where a decoder's thread puts what it decodes ([`Out`]): a stream's bytes into a pipe, a
//! regular file's in whole buffers over a bounded channel to its reader ([`DecodedFile`]),
//! recycled, and kept spare across decodings.

use std::fs::File;
use std::io::Write;
use std::sync::LazyLock;

use crossbeam_channel::{Receiver, Sender, bounded};

use super::{BUFFER, DECODED_HELD};

/// Buffers whose decoding has ended, kept for the next decoding instead of freed, at most
/// [`DECODED_HELD`]'s worth. A buffer made afresh costs a page fault for each of its pages: with
/// eight FILEs decoded ahead on two cores, each decoder ahead making its share of buffers anew
/// took 0.06-0.08 s of system time beside 0.18 s of decoding (27,000 page faults against
/// 2,600), more than decoding ahead gained.
static SPARE: LazyLock<Channel> = LazyLock::new(|| bounded(DECODED_HELD / BUFFER));

/// Both ends of a channel of buffers.
type Channel = (Sender<Vec<u8>>, Receiver<Vec<u8>>);

/// Keeps `buffer` for the next decoding, if it is one of ours and room is left.
pub(super) fn spare(buffer: Vec<u8>) {
    if buffer.capacity() >= BUFFER {
        let _ = SPARE.0.try_send(buffer);
    }
}

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
    /// The decoded bytes it holds.
    pub(super) fn held(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// A regular file's decoded bytes as the reader takes them: whole buffers from the decoder's
/// thread, each handed back to it, emptied, for the next.
#[derive(Debug)]
pub struct DecodedFile {
    pub(super) full: Receiver<Decoded>,
    pub(super) empty: Sender<Vec<u8>>,
    /// The buffer being read.
    pub(super) buffer: Decoded,
    /// How much of it has been read.
    pub(super) at: usize,
}

impl DecodedFile {
    /// The decoded bytes that come over `full`, each buffer read handed back over `empty`.
    pub(super) fn new(full: Receiver<Decoded>, empty: Sender<Vec<u8>>) -> Self {
        DecodedFile {
            full,
            empty,
            buffer: Decoded::default(),
            at: 0,
        }
    }

    /// Waits for decoded bytes unless some are here, and hands them to `take`, which returns how
    /// many it took: at least one, or the end is taken to have come. Returns that, or 0 at the
    /// end of the decoded bytes.
    pub fn read_with(&mut self, take: impl FnOnce(&[u8]) -> usize) -> usize {
        while self.at == self.buffer.len {
            // Handed back before the wait, so that the decoder never waits for the one buffer
            // the reader holds. The channel has room for every buffer; if the decoder has gone,
            // the buffer is kept spare.
            let read = std::mem::take(&mut self.buffer).bytes;
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
        let taken = take(&self.buffer.held()[self.at..]);
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
        spare(std::mem::take(&mut self.buffer).bytes);
        self.full
            .try_iter()
            .for_each(|decoded| spare(decoded.bytes));
    }
}

/// Where the thread puts what it decodes.
pub(super) trait Out: Send + 'static {
    /// Room to decode into, or `None` when the reader has gone.
    fn room(&mut self) -> Option<&mut [u8]>;

    /// The first `n` bytes of the room now hold decoded bytes: false when the reader has gone.
    fn filled(&mut self, n: usize) -> bool;

    /// Hands on what is held, at the end.
    fn flush(&mut self);
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
}

/// Where whole buffers of decoded bytes go, and where empty ones come from.
pub(super) trait Buffers: Send + 'static {
    /// An empty buffer to fill (its bytes of no meaning), or `None` when the reader has gone.
    fn empty(&mut self) -> Option<Vec<u8>>;

    /// Hands on a buffer of decoded bytes: false when the reader has gone.
    fn full(&mut self, decoded: Decoded) -> bool;
}

/// Decoded bytes put into whole [`BUFFER`]-long buffers, each handed on as it fills.
pub(super) struct Filling<B: Buffers> {
    pub(super) buffers: B,
    /// The buffer being filled, [`BUFFER`] bytes long, or empty when none is.
    buffer: Vec<u8>,
    /// How much of it holds decoded bytes.
    held: usize,
}

impl<B: Buffers> Filling<B> {
    pub(super) fn new(buffers: B) -> Self {
        Filling {
            buffers,
            buffer: Vec::new(),
            held: 0,
        }
    }

    /// Hands on the buffer being filled, cut to what it holds: false when the reader has gone.
    fn hand_on(&mut self) -> bool {
        let bytes = std::mem::take(&mut self.buffer);
        let len = std::mem::take(&mut self.held);
        self.buffers.full(Decoded { bytes, len })
    }

    /// Hands on `piece`, decoded elsewhere, after what is held: false when the reader has gone.
    pub(super) fn pass(&mut self, piece: Decoded) -> bool {
        if self.held > 0 && !self.hand_on() {
            return false;
        }
        if piece.len == 0 {
            spare(piece.bytes);
            return true;
        }
        self.buffers.full(piece)
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
pub(super) type BuffersOut = Filling<ToReader>;

/// The reader's buffers: at most `most` made, then only those it hands back.
pub(super) struct ToReader {
    pub(super) full: Sender<Decoded>,
    pub(super) empty: Receiver<Vec<u8>>,
    /// The most buffers made.
    pub(super) most: usize,
    /// Buffers made so far: at `most`, the next is one the reader handed back.
    pub(super) made: usize,
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

    fn full(&mut self, decoded: Decoded) -> bool {
        self.full.send(decoded).is_ok()
    }
}

impl Drop for ToReader {
    fn drop(&mut self) {
        self.empty.try_iter().for_each(spare);
    }
}

/// A small file's decoded bytes, kept whole in memory: at most `most` buffers, after which there
/// is no more room, as if the reader had gone ([`decode_whole`](super::decode_whole)).
pub(super) struct Kept {
    pub(super) buffers: Vec<Decoded>,
    pub(super) most: usize,
    /// The decoder asked for more room than `most` buffers.
    pub(super) overflowed: bool,
}

impl Buffers for Kept {
    fn empty(&mut self) -> Option<Vec<u8>> {
        self.overflowed = self.buffers.len() == self.most;
        (!self.overflowed).then(|| SPARE.1.try_recv().unwrap_or_default())
    }

    fn full(&mut self, decoded: Decoded) -> bool {
        self.buffers.push(decoded);
        true
    }
}
