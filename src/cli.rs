//! The arguments every binary shares, flattened into each binary's own `clap` parser, and the
//! parsers for counts and sizes with their bounds.

use std::path::PathBuf;

use clap::builder::{RangedU64ValueParser, StringValueParser, TypedValueParser};

/// What every binary's `--help` says of the transform, after its options.
pub const TRANSFORM_HELP: &str = "Each line comes out as [spaces: N] and the line's bytes, \
then a newline. N counts the byte 0x20 (the ASCII space) only: tabs, \\r and other white \
space do not count. N is 0 to 6, and >6 for 7 or more. Every other byte passes through \
unchanged; a last line without a newline gets one.";

/// What every binary's `--version` says: the crate's version and, when built from a git
/// checkout, the commit (`git describe --always --dirty`, from build.rs).
pub const VERSION: &str = env!("PIPELINES_VERSION");

/// Input files and `--stats`: the same for every binary.
#[derive(Debug, clap::Args)]
pub struct CommonArgs {
    /// Files to read in order, as one stream, as `cat` does; `-` is stdin. None: stdin.
    pub files: Vec<PathBuf>,

    /// Decode each source that begins as gzip or zstd does (every member, every frame); read any
    /// other as it is, as `zcat -f` does.
    #[arg(short = 'z', long)]
    pub decompress: bool,

    /// At exit, print lines, bytes in and out, wall time and throughput on stderr.
    #[arg(long)]
    pub stats: bool,
}

/// The largest buffer or chunk size any binary accepts, so that a typo is a usage error rather
/// than an allocation failure.
pub const LARGEST_SIZE: u64 = 1 << 30;

/// The buffer size of the binaries that read and write through one buffer each.
#[derive(Debug, clap::Args)]
pub struct BufferArgs {
    /// Bytes per read, and output bytes gathered before a write, at most 1G; a longer line grows
    /// the buffer. Takes suffixes as dd does: K, M, G (×1024), KB, MB, GB (×1000).
    #[arg(long = "buffer-size", value_name = "BYTES", default_value = "128K",
          value_parser = size_up_to(LARGEST_SIZE))]
    pub size: usize,
}

/// A parser for a count from 1 to `most`: 0, more, or a non-number is a usage error.
pub fn positive_up_to(most: u64) -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..=most)
}

/// A parser for a size in bytes from 1 to `most`, with an optional suffix as dd and head take
/// them: `K`, `M`, `G` (or `KiB`, `MiB`, `GiB`) for powers of 1024, `KB`, `MB`, `GB` for powers
/// of 1000. 0, more than `most`, or anything else is a usage error.
pub fn size_up_to(most: u64) -> impl TypedValueParser<Value = usize> {
    StringValueParser::new().try_map(move |text| match parse_size(&text) {
        Some(bytes) if (1..=most).contains(&bytes) => Ok(bytes as usize),
        Some(_) => Err(format!("{text} is not in 1..={most} bytes")),
        None => Err(format!(
            "'{text}' is not a size: a number, optionally followed by K, M, G, KB, MB or GB"
        )),
    })
}

/// `text` as a number of bytes, by the suffixes of [`size_up_to`]; `None` if it is not one, or
/// overflows.
fn parse_size(text: &str) -> Option<u64> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(digits);
    let power: u32 = match suffix.chars().next() {
        None => 0,
        Some('K' | 'k') => 1,
        Some('M') => 2,
        Some('G') => 3,
        Some(_) => return None,
    };
    let base: u64 = match suffix.get(1..).unwrap_or("") {
        "" | "iB" => 1024,
        "B" => 1000,
        _ => return None,
    };
    number
        .parse::<u64>()
        .ok()?
        .checked_mul(base.checked_pow(power)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_dd_suffixes() {
        assert_eq!(parse_size("7"), Some(7));
        assert_eq!(parse_size("1K"), Some(1024));
        assert_eq!(parse_size("1k"), Some(1024));
        assert_eq!(parse_size("1KiB"), Some(1024));
        assert_eq!(parse_size("1KB"), Some(1000));
        assert_eq!(parse_size("256K"), Some(256 * 1024));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("2MB"), Some(2_000_000));
        assert_eq!(parse_size("1G"), Some(1 << 30));
    }

    #[test]
    fn anything_else_is_not_a_size() {
        for text in [
            "",
            "K",
            "1.5M",
            "-1",
            "1T",
            "1Mb",
            "1 M",
            "99999999999999999999G",
            "1Kx",
        ] {
            assert_eq!(parse_size(text), None, "{text:?}");
        }
    }

    #[derive(Debug, clap::Parser)]
    struct Sized {
        #[arg(long, value_parser = size_up_to(LARGEST_SIZE))]
        size: usize,
    }

    #[test]
    fn sizes_are_bounded() {
        use clap::Parser;
        let size = |text: &str| Sized::try_parse_from(["x", "--size", text]).map(|s| s.size);
        assert_eq!(size("1M").unwrap(), 1 << 20);
        assert_eq!(size("1G").unwrap(), 1 << 30);
        assert!(size("0").is_err());
        assert!(size("2G").is_err());
        assert!(size("lots").is_err());
    }
}
