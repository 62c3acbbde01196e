//! The arguments every binary shares, flattened into each binary's own `clap` parser.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;

/// Input files and `--stats`: the same for every binary.
#[derive(Debug, clap::Args)]
pub struct CommonArgs {
    /// Files to read in order, as one stream, as `cat` does; `-` is stdin. None: stdin.
    pub files: Vec<PathBuf>,

    /// At exit, print lines, bytes in and out, wall time and throughput on stderr.
    #[arg(long)]
    pub stats: bool,
}

/// The largest buffer or chunk size any binary accepts, so that a typo is a usage error rather
/// than an allocation failure that aborts.
pub const LARGEST_SIZE: u64 = 1 << 30;

/// The buffer size of the binaries that read and write through one buffer each.
#[derive(Debug, clap::Args)]
pub struct BufferArgs {
    /// Bytes per read, and output bytes gathered before a write, at most 1 GiB; a longer line
    /// grows the buffer.
    #[arg(long = "buffer-size", value_name = "BYTES", default_value_t = 128 * 1024,
          value_parser = positive_up_to(LARGEST_SIZE))]
    pub size: usize,
}

/// A parser for a count or size from 1 to `most`: 0, more, or a non-number is a usage error.
pub fn positive_up_to(most: u64) -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..=most)
}
