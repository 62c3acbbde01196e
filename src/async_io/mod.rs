//! Input and output for the tokio strategies: drivers that await what the plain state of
//! [`io`](crate::io) says ([`Sources`](crate::io::sources::Sources) for input,
//! [`Gather`](crate::io::gather::Gather) for output), so the rules and messages are the sync
//! layer's own.
//!
//! An async strategy reads from any [`AsyncInput`] and writes to any `AsyncWrite`:
//! [`Memory`](crate::io::Memory) in tests and benches, and in the binaries [`AsyncFileInput`]
//! (stdin or FILEs) and an [`AsyncFile`] on stdout, on a runtime from [`runtime`].
//!
//! | module | holds |
//! | --- | --- |
//! | [`runtime`] | starting the runtime as an error, not a panic; shutting it down without waiting |
//! | [`file`](mod@file) | [`AsyncFile`]: a descriptor on the reactor through a description of its own, or inline |
//! | [`input`] | [`AsyncInput`]; [`AsyncFileInput`], the async driver of `Sources`, its waits on the reactor; the input as a stream of lines |
//! | [`output`] | [`AsyncOutput`], the async driver of `Gather`, in front of any `AsyncWrite`, also a `Sink` |

pub mod file;
pub mod input;
pub mod output;
pub mod runtime;

pub use file::AsyncFile;
pub use input::{AsyncFileInput, AsyncInput};
pub use output::AsyncOutput;

/// Runs `body` on a current-thread runtime with I/O enabled: for the tests of this layer and of
/// what writes through it.
#[cfg(test)]
pub(crate) fn on_runtime<T>(body: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .expect("a runtime")
        .block_on(body)
}
