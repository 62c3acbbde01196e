//! `baseline`: tokio, one task doing the whole loop, a line at a time.
//!
//! [`std_baseline`](super::std_baseline)'s loop with every read and write awaited: what the
//! runtime costs when it has no concurrency to offer.

use tokio::io::AsyncWrite;

use crate::async_io::{AsyncInput, AsyncOutput};
use crate::error::Error;
use crate::frame::LineBuffer;
use crate::stats::Stats;
use crate::tally::{Tallying, render_line_in_memory};

pub use super::std_baseline::Knobs;

/// Renders every line of `input` onto `output` with `transform`.
pub async fn run(
    knobs: &Knobs,
    transform: impl Tallying,
    mut input: impl AsyncInput,
    output: impl AsyncWrite + Unpin,
) -> Result<Stats, Error> {
    let mut stats = Stats::start();
    let mut output = AsyncOutput::new(output, knobs.buffer_size);
    let mut lines = LineBuffer::new(knobs.buffer_size);
    let mut tally = Default::default();
    loop {
        output.flush_if_due(&mut input).await?;
        let read = input.read_buf(&mut lines.spare()?).await?;
        if read == 0 {
            break;
        }
        stats.bytes_in += read as u64;
        lines.filled(read);
        while let Some(line) = lines.next_line() {
            render_line_in_memory(&transform, &mut tally, output.pending(), line)?;
            stats.lines += 1;
        }
        output.flush_if_full().await?;
    }
    if let Some(line) = lines.take_rest() {
        render_line_in_memory(&transform, &mut tally, output.pending(), line)?;
        stats.lines += 1;
    }
    stats.status = transform.end(tally, output.pending());
    output.flush().await?;
    stats.bytes_out = output.bytes_written();
    Ok(stats)
}
