//! Input and output for the tokio strategies: the same sources, rules and messages as
//! [`io`](crate::io), awaited instead of blocked on, split by role.
//!
//! An async strategy reads from any [`AsyncInput`] and writes to any `AsyncWrite`: bytes in memory
//! in tests and benches, and in the binaries [`AsyncFileInput`] (stdin or FILEs) and an
//! [`AsyncFile`] on stdout, on a runtime from [`runtime`].
//!
//! | module | holds |
//! | --- | --- |
//! | [`runtime`] | starting the runtime as an error, not a panic; the closed-stdout rule |
//! | [`file`] | [`AsyncFile`]: a descriptor on the reactor through a description of its own, or inline |
//! | [`input`] | [`AsyncInput`], [`AsyncFileInput`], and the input as a stream of lines |
//! | [`output`] | [`AsyncOutput`]: gathering in front of any `AsyncWrite`, also a `Sink` |

pub mod file;
pub mod input;
pub mod output;
pub mod runtime;

pub use file::AsyncFile;
pub use input::{AsyncFileInput, AsyncInput};
pub use output::AsyncOutput;

/// Runs `body` on a current-thread runtime with I/O enabled: for this layer's tests.
#[cfg(test)]
fn on_runtime<T>(body: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .expect("a runtime")
        .block_on(body)
}
