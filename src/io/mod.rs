//! Input and output for the sync strategies, and the rules both the sync and the async layers
//! share.
//!
//! The rules live in two pieces of plain state with no I/O, in the shape of rustls or quinn-proto:
//! told what happened, each says what to do next, and is unit-tested without a descriptor.
//! [`sources::Sources`] is the input side (open this source, report this failure, wait for input
//! or for the output's reader going away, read, the end), [`gather::Gather`] the output side
//! (write these bytes, or nothing yet). The sync drivers here and the tokio ones in
//! [`async_io`](crate::async_io) only carry their answers out, blocking or awaiting.
//!
//! A sync strategy reads from any [`Input`] and writes to any [`std::io::Write`]: [`Memory`] in
//! tests and benches, and in the binaries [`FileInput`] (stdin or FILEs) and [`Stdout`].
//!
//! | module | holds |
//! | --- | --- |
//! | [`sources`] | the input's rules as plain state: sources in `cat`'s order and its failures, input that is the output, when a read waits and watches the output |
//! | [`gather`] | the output's rules as plain state: held back for large writes, due when full or when input is idle ([`gather::is_due`], asked by every strategy), what to write next |
//! | [`fd_facts`] (crates/fd-facts) | descriptor facts and waits: pipe or file, input waiting, input or a gone reader, input is output, private non-blocking mode |
//! | [`driver`] | [`driver::Driver`]: what both drivers of [`sources::Sources`] do alike (opening a source, starting its decoder, telling reads and polls), all but their waits and reads |
//! | [`input`] | [`FileInput`], the sync driver of [`sources::Sources`]: its blocking waits and reads, and a regular file read in ranges |
//! | [`output`] | [`Output`], the sync driver of [`gather::Gather`], in front of any writer; [`Stdout`] |
//! | [`ahead`] | `-z` with more than one decoder: the compressed regular FILEs after the one read decoded ahead, each handed on at its turn |
//! | [`decompressed`] (crates/decompressed) | `-z`: a compressed source decoded on a thread of its own (a small file on the reader's), a regular file's bytes handed over in memory, a stream's through a pipe read as any stream; what a source holds, by its first bytes |
//! | [`ranges`] | a regular file read in ranges: [`ranges::Cuts`], the plain state that says range, read through or stream; reads at offsets, where lines end |

pub mod ahead;
pub mod driver;
pub mod gather;
pub mod input;
mod open;
pub mod output;
pub mod ranges;
pub mod sources;

use std::io::{self, Read};
use std::time::Duration;

pub use input::FileInput;
pub use output::{Output, Stdout};

use crate::error::{Context, Error};
use crate::frame::Chunk;
use crate::io::ranges::Range;

/// Where a sync strategy's bytes come from.
pub trait Input {
    /// Reads into `buf` (not empty). Returns 0 only at the end of all input.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error>;

    /// Whether a read now would return at once. When not, output held back for batching must go
    /// out first, or a live line would be stuck.
    fn is_ready(&mut self) -> bool;

    /// Whether a read would return at once within `timeout`, waiting that long at most: for a
    /// reader that has just handed work to another thread and may wait a moment for more input
    /// before it must write that work out.
    fn is_ready_within(&mut self, timeout: Duration) -> bool {
        let _ = timeout;
        self.is_ready()
    }
}

/// An input read by a reader that can hand ranges of a regular file to other threads: the input
/// decides how each source is read, as a stream or in ranges (`ranges::Cuts`).
pub trait RangedInput: Input {
    /// How to read on, for a reader that reads `size` bytes at a time into `held`.
    fn next_piece(&mut self, size: usize, held: &mut Chunk) -> Result<Piece, Error>;

    /// Ends the reading of a file in ranges (after [`Piece::RangesEnd`], or sooner when one
    /// failed): every range handed out is read, and `failure` is the first that could not be.
    /// The rest of the file is then read as a stream, or the file is given up and the failure
    /// reported as any failed read is.
    fn ranges_read(&mut self, failure: Option<io::Error>);
}

/// How a [`RangedInput`]'s reader reads on.
#[derive(Debug)]
pub enum Piece {
    /// As a stream, with [`Input::read`].
    Stream,
    /// The input read this many bytes into the chunk held, as a stream read would have, or none
    /// (0) where the chunk's lines are to go before it reads: its whole lines are to be handed on.
    Read(usize),
    /// A decoder's buffer of whole lines, this many bytes, taken into the chunk held uncopied,
    /// and whether its next is yet to come: the decoder is behind the reader.
    Decoded(usize, bool),
    /// A range of a regular file, whole lines, for another thread to read.
    Range(Range),
    /// No more ranges: once every range handed out is read, tell
    /// [`ranges_read`](RangedInput::ranges_read), then read on as a stream: the rest of the file
    /// has less than a range's worth, or has no line end, until a read moves it on.
    RangesEnd,
}

/// Bytes in memory, every one of them waiting: the input of tests and benches. A reader in general
/// cannot be an input, since only an input that knows whether a read would wait can say so: a pipe
/// taken for memory would hold live lines back.
#[derive(Debug, Clone)]
pub struct Memory<B> {
    bytes: B,
    /// How many of them have been read.
    read: usize,
}

impl<B: AsRef<[u8]>> Memory<B> {
    /// `bytes`, to be read from the first.
    pub fn new(bytes: B) -> Self {
        Memory { bytes, read: 0 }
    }

    /// Reads the bytes not yet read with `read`, which returns how many it took.
    pub(crate) fn read_with<E>(
        &mut self,
        read: impl FnOnce(&mut &[u8]) -> Result<usize, E>,
    ) -> Result<usize, E> {
        let mut unread = &self.bytes.as_ref()[self.read..];
        let n = read(&mut unread)?;
        self.read += n;
        Ok(n)
    }
}

impl<B: AsRef<[u8]>> Input for Memory<B> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        self.read_with(|unread| Read::read(unread, buf).context("reading input"))
    }

    fn is_ready(&mut self) -> bool {
        true
    }
}

/// Memory is read as a stream.
impl<B: AsRef<[u8]>> RangedInput for Memory<B> {
    fn next_piece(&mut self, _: usize, _: &mut Chunk) -> Result<Piece, Error> {
        Ok(Piece::Stream)
    }

    fn ranges_read(&mut self, _: Option<io::Error>) {
        debug_assert!(false, "memory is never read in ranges");
    }
}

/// For this crate's unit tests: the workspace's shared helpers, and one of the decoder's.
#[cfg(test)]
pub(crate) mod testing {
    pub use pipelines_testing::*;
    use std::time::{Duration, Instant};

    /// Whether `decoding` ends before the [`DEADLINE`].
    pub fn ends(decoding: &decompressed::Decoding) -> bool {
        let start = Instant::now();
        while !decoding.has_ended() {
            if start.elapsed() > DEADLINE {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }
}
