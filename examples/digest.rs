//! A filter that spends real work on each line: the line after a 64-bit hash of it, stretched over
//! 4096 rounds as a password hash is (FNV-1a, then a multiply and xor-shift a round), in hex:
//! `printf 'a b\nc\n' | cargo run --release --example digest`. A few microseconds a line, where
//! a scan of its bytes takes nanoseconds: `cost_a_line` says so, and `batched` then shares the
//! lines out between its workers rather than rendering them on its reading thread when input
//! idles or ends there, and cuts a regular file into ranges its workers finish together.

use linewright::{Filter, Transform};
use std::process::ExitCode;
use std::time::Duration;

/// The line after its stretched hash and a space.
struct Digest;

/// Rounds of stretching a line: work that no input makes cheaper.
const ROUNDS: u32 = 4096;

/// The stretched hash of `line`.
fn digest(line: &[u8]) -> u64 {
    let fnv = |hash: u64, &byte: &u8| (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
    let mut hash = line.iter().fold(0xcbf2_9ce4_8422_2325, fnv);
    for _ in 0..ROUNDS {
        hash = (hash ^ (hash >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    }
    hash
}

impl Transform for Digest {
    fn most_added(&self) -> usize {
        18 // 16 hex digits, a space and the `\n`
    }

    // 4096 dependent multiplies and xor-shifts: 5 µs a line as measured here (20,000 log lines,
    // one worker, 0.10 s of CPU); roughly is enough.
    fn cost_a_line(&self) -> Duration {
        Duration::from_micros(5)
    }

    fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
        let hash = digest(line);
        out.extend(
            (0..16)
                .rev()
                .map(|digit| b"0123456789abcdef"[(hash >> (4 * digit)) as usize & 15]),
        );
        out.push(b' ');
        out.extend_from_slice(line);
        out.push(b'\n');
    }
}

fn main() -> ExitCode {
    Filter::new("digest", env!("CARGO_PKG_VERSION"))
        .about("Put a hash of each line, stretched over 4096 rounds, before it")
        .description(
            "Each line comes out after 16 hex digits and a space: its FNV-1a hash, then 4096 \
             rounds of a multiply and an xor-shift, a few microseconds of work a line.",
        )
        .run(Digest)
}
