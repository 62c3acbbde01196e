//! `streamer`: tokio and futures. Input is a `Stream` of lines, each split off the read buffer
//! without a copy; each is rendered as a chain of slices and fed into the output as a `Sink`.
//!
//! The live-input rule is [`gather`](crate::io::gather)'s, asked before each read as every
//! strategy asks it: output held back goes when the read would wait.

use futures::{SinkExt, StreamExt};
use tokio::io::AsyncWrite;

use crate::async_io::{AsyncInput, AsyncOutput};
use crate::error::Error;
use crate::kernel::render_shared;
use crate::stats::Stats;

pub use super::std_baseline::Knobs;

/// Renders every line of `input` onto `output`.
pub async fn run(
    knobs: &Knobs,
    mut input: impl AsyncInput,
    output: impl AsyncWrite + Unpin,
) -> Result<Stats, Error> {
    let mut stats = Stats::start();
    let mut output = AsyncOutput::new(output, "stdout", knobs.buffer_size);
    let mut lines = input.lines(knobs.buffer_size);
    loop {
        if !lines.has_line() {
            output.flush_if_due(lines.input()).await?;
        }
        let Some(line) = lines.next().await else {
            break;
        };
        output.feed(render_shared(line?)).await?;
        stats.lines += 1;
    }
    output.flush().await?;
    stats.bytes_in = lines.bytes_read();
    stats.bytes_out = output.bytes_written();
    Ok(stats)
}
