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
//! A sync strategy reads from any [`Input`] and writes to any [`std::io::Write`]: bytes in memory
//! in tests and benches, and in the binaries [`FileInput`] (stdin or FILEs) and [`Stdout`].
//!
//! | module | holds |
//! | --- | --- |
//! | [`sources`] | the input's rules as plain state: sources in `cat`'s order and its failures, input that is the output, when a read waits and watches the output |
//! | [`gather`] | the output's rules as plain state: held back for large writes, due when full or when input is idle ([`gather::is_due`], asked by every strategy), what to write next |
//! | [`fd`] | descriptor facts and waits: pipe or file, input waiting, input or a gone reader, input is output, private non-blocking mode |
//! | [`input`] | [`FileInput`], the sync driver of [`sources::Sources`]; opening a source, for both drivers |
//! | [`output`] | [`Output`], the sync driver of [`gather::Gather`], in front of any writer; [`Stdout`] |
//! | [`ranges`] | a regular file read at offsets, and where its lines end |

pub mod decode;
pub mod fd;
pub mod gather;
pub mod input;
pub mod output;
pub mod ranges;
pub mod sources;

use std::fs::File;
use std::io::{self, Read};
use std::sync::Arc;
use std::time::Duration;

pub use input::FileInput;
pub use output::{Output, Stdout};

use crate::error::{Context, Error};

/// Where a sync strategy's bytes come from.
pub trait Input {
    /// Reads into `buf` (not empty). Returns 0 only at the end of all input.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error>;

    /// Whether a read now would return at once. When not, output held back for batching must go
    /// out first, or a live line would be stuck.
    fn has_waiting(&mut self) -> bool;

    /// Whether a read would return at once within `timeout`, waiting that long at most: for a
    /// reader that has just handed work to another thread and may wait a moment for more input
    /// before it must write that work out.
    fn waits_within(&mut self, timeout: Duration) -> bool {
        let _ = timeout;
        self.has_waiting()
    }

    /// The source now being read, opening the next if none is open, when it is a regular file:
    /// other threads may then read it at offsets (see [`ranges`]) while [`read`](Self::read) goes
    /// on from the file's own offset. `None` for a stream, and for an input that is no file.
    fn regular_file(&mut self) -> Option<Arc<File>> {
        None
    }

    /// Gives up the source now being read, after reading it at an offset failed with `error`:
    /// reported as a failed [`read`](Self::read) is, and reading goes on with the next source.
    fn skip_source(&mut self, error: io::Error) {
        let _ = error;
    }
}

/// Any reader is an input whose bytes are always waiting: memory, in tests and benches.
impl<R: Read> Input for R {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        Read::read(self, buf).context("reading input")
    }

    fn has_waiting(&mut self) -> bool {
        true
    }
}
