//! `streamer`: tokio and futures. Input is a `Stream` of lines, each split off the read buffer
//! without a copy; `map` renders each one and `forward` drains the stream into the output as a
//! `Sink`.
//!
//! The live-input rule is `io::gather`'s, asked where `forward` flushes: whenever
//! the stream has no line ready, the read would wait, and the sink then writes what the rule says
//! is due (see `AsyncOutput`'s `poll_flush`), so a line never sits in the buffer while input is
//! idle.

use futures::StreamExt;
use tokio::io::AsyncWrite;

use crate::async_io::{AsyncInput, AsyncOutput};
use crate::error::Error;
use crate::stats::Stats;
use crate::tally::Tallying;

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
    let mut lines = input.lines(knobs.buffer_size);
    let mut tally = Default::default();
    (&mut lines)
        .inspect(|_| stats.lines += 1)
        .map(|line| line.and_then(|line| transform.render_shared(&mut tally, line)))
        .forward(&mut output)
        .await?;
    // `forward` closed the output, which only flushes it: the summary follows the lines.
    stats.status = transform.end(tally, output.pending());
    output.flush().await?;
    stats.bytes_in = lines.bytes_read();
    stats.bytes_out = output.bytes_written();
    Ok(stats)
}
