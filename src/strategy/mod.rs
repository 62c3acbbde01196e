//! The five strategies, one file each, named after the binary that runs it. Each is generic over
//! the [`Transform`](crate::transform::Transform) it renders lines with, and over where its bytes
//! come from and go to, so tests and benches drive the very code the binaries run, in memory or
//! over real descriptors, with the space count or another transform; its knobs are a plain
//! struct; it returns the run's [`Stats`](crate::stats::Stats).
//!
//! | strategy | how lines travel from framing to rendering |
//! | --- | --- |
//! | [`std_baseline`] | one thread, one loop, a line at a time, synchronous I/O |
//! | [`baseline`] | the same loop as one tokio task, every read and write awaited |
//! | [`streamer`] | a `Stream` of lines, rendered by `map`, `forward`ed into a `Sink` |
//! | [`pipeline`] | reader, renderer and writer tasks joined by bounded channels, batches of lines |
//! | [`batched`] | a reader cutting chunks, worker threads rendering them, a writer restoring order |

pub mod baseline;
pub mod batched;
pub mod pipeline;
pub mod std_baseline;
pub mod streamer;
