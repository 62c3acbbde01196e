//! The five strategies, one file each, named after the binary that runs it. Each is generic over
//! where its bytes come from and go to, so tests and benches drive the very code the binaries
//! run, in memory or over real descriptors; its knobs are a plain struct; it returns the run's
//! [`Stats`](crate::stats::Stats).
//!
//! | strategy | how lines travel from framing to rendering |
//! | --- | --- |
//! | [`std_baseline`] | one thread, one loop, a line at a time, synchronous I/O |
//! | [`baseline`] | the same loop as one tokio task, every read and write awaited |
//! | [`streamer`] | a `Stream` of lines, rendered by `map`, `forward`ed into a `Sink` |
//! | [`pipeline`] | reader, counter and writer tasks joined by bounded channels, batches of lines |
//! | [`batched`] | a reader cutting chunks, worker threads rendering them, a writer restoring order |

pub mod baseline;
pub mod batched;
pub mod pipeline;
pub mod std_baseline;
pub mod streamer;

use crate::error::Error;
use crate::frame::reserve;
use crate::kernel::{SHORT_CHUNK, chunk_room, render_chunk, render_line};

/// The longest rendering's overhead on a line: the longest header and the `\n`.
const RENDER_OVERHEAD: usize = 13;

/// Appends `line`'s rendering to `out`, or fails if `out` cannot grow to hold it: a line too long
/// for the memory available is an error, not an abort.
#[inline(always)]
fn render_line_in_memory(out: &mut Vec<u8>, line: &[u8]) -> Result<(), Error> {
    reserve(out, line.len() + RENDER_OVERHEAD)?;
    render_line(out, line);
    Ok(())
}

/// Appends the rendering of `chunk`'s lines to `out` and returns how many there were, or fails if
/// `out` cannot grow to hold a long line's rendering. Short lines may need more room than the
/// kernel reserves, but a chunk of them is small.
fn render_chunk_in_memory(out: &mut Vec<u8>, chunk: &[u8]) -> Result<u64, Error> {
    // A short chunk's rendering cannot outgrow memory, and the block kernel's room for it would
    // make each of `pipeline`'s one-line messages a kilobyte allocation.
    if chunk.len() >= SHORT_CHUNK {
        reserve(out, chunk_room(chunk.len()))?;
    }
    Ok(render_chunk(out, chunk))
}
