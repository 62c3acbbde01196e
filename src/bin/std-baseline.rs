//! `std-baseline`: std only. One thread, one loop, a line at a time, synchronous I/O.
//!
//! The floor every other strategy is measured against: no runtime, no queues, no threads.

use std::process::ExitCode;

use clap::Parser;
use pipelines::cli::{BufferArgs, CommonArgs};
use pipelines::exit::{self, Error};
use pipelines::frame::LineBuffer;
use pipelines::input::Input;
use pipelines::kernel::render_line;
use pipelines::output::Output;
use pipelines::stats::Stats;

/// Prefix every line with [spaces: N]: one thread, one loop, a line at a time.
#[derive(Parser)]
#[command(name = env!("CARGO_BIN_NAME"), version)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    buffer: BufferArgs,
}

fn main() -> ExitCode {
    let args = Args::parse();
    exit::run(env!("CARGO_BIN_NAME"), || transform(&args))
}

fn transform(args: &Args) -> Result<(), Error> {
    let mut stats = Stats::start();
    let mut input = Input::new(&args.common.files);
    let mut output = Output::stdout(args.buffer.size)?;
    let mut lines = LineBuffer::new(args.buffer.size);
    loop {
        output.flush_if_idle(&input)?;
        let read = input.read(lines.spare())?;
        if read == 0 {
            break;
        }
        lines.filled(read);
        while let Some(line) = lines.next_line() {
            render_line(output.pending(), line);
            stats.lines += 1;
        }
        output.flush_if_full()?;
    }
    if let Some(line) = lines.take_rest() {
        render_line(output.pending(), line);
        stats.lines += 1;
    }
    output.flush()?;
    if args.common.stats {
        stats.bytes_in = input.bytes_read();
        stats.bytes_out = output.bytes_written();
        stats.print();
    }
    Ok(())
}
