//! Input and output for the sync strategies, and the rules both the sync and the async layers
//! share.
//!
//! A sync strategy reads from any [`Input`] and writes to any [`std::io::Write`]: bytes in memory
//! in tests and benches, and in the binaries [`FileInput`] (stdin or FILEs) and [`Stdout`].
//!
//! | module | holds |
//! | --- | --- |
//! | [`sources`] | the sources in order with `cat`'s rules: unreadable FILE, input that is the output |
//! | [`gather`] | output held back for large writes, when it must go, what to write next: plain state |
//! | [`fd`] | descriptor facts: pipe or file, input waiting, reader gone, private non-blocking mode |
//! | [`input`] | [`FileInput`]: the sources read synchronously, watching stdout while idle |
//! | [`ranges`] | a regular file read at offsets, and where its lines end |
//! | [`output`] | [`Output`]: gathering in front of any writer; [`Stdout`] |

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
