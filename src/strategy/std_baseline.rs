//! `std-baseline`: std only. One thread, one loop, a line at a time, synchronous I/O.
//!
//! The floor every other strategy is measured against: no runtime, no queues, no threads.

use std::io::Write;

use crate::error::Error;
use crate::frame::LineBuffer;
use crate::io::{Input, Output};
use crate::stats::Stats;
use crate::tally::{Tallying, render_line_in_memory};

/// The knobs.
#[derive(Debug, Clone)]
pub struct Knobs {
    /// Bytes per read, and output bytes gathered before a write; a longer line grows the buffer.
    pub buffer_size: usize,
}

/// Renders every line of `input` onto `output` with `transform`.
pub fn run(
    knobs: &Knobs,
    transform: impl Tallying,
    mut input: impl Input,
    output: impl Write,
) -> Result<Stats, Error> {
    let mut stats = Stats::start();
    let mut output = Output::new(output, knobs.buffer_size);
    let mut lines = LineBuffer::new(knobs.buffer_size);
    let mut tally = Default::default();
    loop {
        output.flush_if_due(&mut input)?;
        let read = input.read(lines.spare()?)?;
        if read == 0 {
            break;
        }
        stats.bytes_in += read as u64;
        lines.filled(read);
        while let Some(line) = lines.next_line() {
            render_line_in_memory(&transform, &mut tally, output.pending(), line)?;
            stats.lines += 1;
        }
        output.flush_if_full()?;
    }
    if let Some(line) = lines.take_rest() {
        render_line_in_memory(&transform, &mut tally, output.pending(), line)?;
        stats.lines += 1;
    }
    stats.status = transform.end(tally, output.pending());
    output.flush()?;
    stats.bytes_out = output.bytes_written();
    Ok(stats)
}
