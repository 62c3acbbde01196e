//! The kernel: how many ASCII spaces (0x20) a line holds, the header that says so, and the
//! rendering of a line or of a whole chunk of lines into an output buffer.
//!
//! Only 0 to 6 are told apart; everything from 7 up shares the header `>6`, so counting may stop
//! there. Tabs, `\r` and other white space are not spaces.
//!
//! A line at a time, [`render_line`] counts with [`count_spaces`]. A chunk at a time,
//! [`render_chunk`] uses one of the [`Implementation`]s, one file each, chosen once at run time
//! from what the CPU can run. On x86-64 they scan 64-byte blocks into one bit a byte for newlines
//! and one for spaces, so that each line's count is the popcount of the space bits between two
//! newline bits (`blocks.rs`); how a block becomes bitmasks is all that differs between them.
//! Elsewhere the portable one renders a line at a time.

use std::sync::OnceLock;

use bytes::buf::Chain;
use bytes::{Buf, Bytes};

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod blocks;
mod portable;
#[cfg(target_arch = "x86_64")]
mod sse2;

/// The count at which headers stop telling counts apart.
pub const SPACES_CAP: usize = 7;

/// The header for each capped count: `HEADERS[n]` is what precedes a line with `n` spaces.
pub const HEADERS: [&[u8]; SPACES_CAP + 1] = [
    b"[spaces: 0]",
    b"[spaces: 1]",
    b"[spaces: 2]",
    b"[spaces: 3]",
    b"[spaces: 4]",
    b"[spaces: 5]",
    b"[spaces: 6]",
    b"[spaces: >6]",
];

/// The number of 0x20 bytes in `line`, capped at [`SPACES_CAP`].
///
/// Counts a block of bytes at a time into a byte-sized counter, which the compiler turns into
/// vector compares and adds (a `usize` counter per byte defeats that), and stops after the block
/// in which the count reaches the cap: log lines reach seven spaces well before their end.
#[inline]
pub fn count_spaces(line: &[u8]) -> usize {
    const BLOCK: usize = 32;
    let count_in = |bytes: &[u8]| {
        bytes
            .iter()
            .fold(0u8, |n, &byte| n + u8::from(byte == b' '))
    };
    let mut count = 0;
    let mut blocks = line.chunks_exact(BLOCK);
    for block in &mut blocks {
        count += usize::from(count_in(block));
        if count >= SPACES_CAP {
            return SPACES_CAP;
        }
    }
    (count + usize::from(count_in(blocks.remainder()))).min(SPACES_CAP)
}

/// The header for `line`.
#[inline]
pub fn header(line: &[u8]) -> &'static [u8] {
    HEADERS[count_spaces(line)]
}

/// Appends the rendering of one line (given without its `\n`) to `out`.
#[inline]
pub fn render_line(out: &mut Vec<u8>, line: &[u8]) {
    out.extend_from_slice(header(line));
    out.extend_from_slice(line);
    out.push(b'\n');
}

/// The rendering of one shared line, the bytes [`render_line`] would append, as a chain of three
/// slices: a stream passes the line on to its sink without copying it first.
pub fn render_shared(line: Bytes) -> Chain<Chain<&'static [u8], Bytes>, &'static [u8]> {
    header(&line).chain(line).chain(&b"\n"[..])
}

/// The room the block implementations reserve in `out` before rendering a chunk of `chunk_len`
/// bytes (the portable one, writing through `Vec`'s own checks, reserves less). Headers add at
/// most 12 bytes a line; reserving for the worst case up front would double the buffer for
/// long-line input, so this is the common case (`Vec` grows if short lines need more), and its
/// slack covers the wide stores of a block of lines (a block's worth of headers past it,
/// `blocks.rs`). A caller that reserves this much fallibly first makes the implementations' own
/// reservation a no-op.
pub const fn chunk_room(chunk_len: usize) -> usize {
    chunk_len + chunk_len / 8 + 1024
}

/// Chunks shorter than this are rendered a line at a time, by the portable implementation: for a
/// line or two (`pipeline`'s small batches) the block walk's set-up, and the kilobyte of room its
/// wide stores need, which makes every message's buffer a slow allocation, cost more than the
/// blocks save.
pub const SHORT_CHUNK: usize = 256;

/// Appends the rendering of every line in `chunk` to `out` and returns how many lines that was,
/// with the fastest [`Implementation`] this CPU runs (chosen on the first call), or a line at a
/// time below [`SHORT_CHUNK`].
///
/// `chunk` holds whole lines, each ending in `\n`, except that the last may lack it (the input's
/// final line); that one gets its `\n` added. An empty chunk renders to nothing.
#[inline]
pub fn render_chunk(out: &mut Vec<u8>, chunk: &[u8]) -> u64 {
    if chunk.len() < SHORT_CHUNK {
        return portable::render_chunk(out, chunk);
    }
    static CHOSEN: OnceLock<ChunkKernel> = OnceLock::new();
    let kernel = CHOSEN.get_or_init(|| {
        Implementation::ALL
            .into_iter()
            .find_map(Implementation::kernel)
            .expect("the portable implementation runs everywhere")
    });
    kernel(out, chunk)
}

/// A chunk renderer, safe to call: one is handed out only where the CPU runs it.
type ChunkKernel = fn(&mut Vec<u8>, &[u8]) -> u64;

/// The ways to render a chunk, fastest first. Every one gives the same bytes; [`render_chunk`]
/// uses the first that the CPU runs, and tests and benchmarks can force each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Implementation {
    /// x86-64 with AVX2, POPCNT and BMI1: two 32-byte compares a block, hardware popcount.
    Avx2,
    /// The x86-64 baseline: four 16-byte compares a block, popcount in ordinary instructions.
    Sse2,
    /// Any target, safe code only: a `memchr` a line, its spaces counted on their own (the loop
    /// before the block scans).
    Portable,
}

impl Implementation {
    /// Every implementation, fastest first.
    pub const ALL: [Implementation; 3] = [Self::Avx2, Self::Sse2, Self::Portable];

    /// The implementations this CPU runs, fastest first.
    pub fn available() -> Vec<Implementation> {
        Self::ALL
            .into_iter()
            .filter(|implementation| implementation.is_available())
            .collect()
    }

    /// Whether this CPU runs this implementation.
    pub fn is_available(self) -> bool {
        self.kernel().is_some()
    }

    /// [`render_chunk`] with this implementation.
    ///
    /// # Panics
    ///
    /// If this CPU does not run it (see [`Implementation::available`]).
    pub fn render_chunk(self, out: &mut Vec<u8>, chunk: &[u8]) -> u64 {
        let kernel = self
            .kernel()
            .unwrap_or_else(|| panic!("this CPU does not run the {self:?} kernel"));
        kernel(out, chunk)
    }

    /// This implementation's renderer, if this CPU runs it.
    fn kernel(self) -> Option<ChunkKernel> {
        match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx2 => avx2::kernel(),
            #[cfg(target_arch = "x86_64")]
            Self::Sse2 => Some(sse2::render_chunk),
            Self::Portable => Some(portable::render_chunk),
            #[cfg(not(target_arch = "x86_64"))]
            Self::Avx2 | Self::Sse2 => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_the_space_byte() {
        assert_eq!(count_spaces(b""), 0);
        assert_eq!(count_spaces(b"\t\r\x0b\x0c\xa0"), 0);
        assert_eq!(count_spaces(b"a b"), 1);
        assert_eq!(count_spaces(b"      "), 6);
        assert_eq!(count_spaces(b"       "), 7);
        assert_eq!(count_spaces(&[b' '; 1000]), 7);
    }

    /// Spaces placed at every position of lines around the block size, against a plain count.
    #[test]
    fn counts_across_block_edges() {
        for length in 0..100 {
            for spaces in 0..=9 {
                for first in 0..length {
                    let mut line = vec![b'x'; length];
                    for position in (first..length).step_by(3).take(spaces) {
                        line[position] = b' ';
                    }
                    let plain = line
                        .iter()
                        .filter(|&&byte| byte == b' ')
                        .count()
                        .min(SPACES_CAP);
                    assert_eq!(count_spaces(&line), plain, "{line:?}");
                }
            }
        }
    }

    #[test]
    fn headers_match_counts() {
        for (n, header) in HEADERS.iter().enumerate().take(SPACES_CAP) {
            assert_eq!(*header, format!("[spaces: {n}]").as_bytes());
        }
        assert_eq!(header(b"a b c d e f g h"), b"[spaces: >6]");
    }

    #[test]
    fn render_shared_is_render_line() {
        for line in [
            &b""[..],
            b"a b",
            b"a b\r",
            b"       x",
            b"\t\tx",
            b"\xff \xfe",
        ] {
            let mut expected = Vec::new();
            render_line(&mut expected, line);
            let mut chained = render_shared(Bytes::copy_from_slice(line));
            assert_eq!(chained.copy_to_bytes(chained.remaining()), expected);
        }
    }

    /// The chunk edges, through the dispatching entry point and every implementation this CPU
    /// runs (tests/kernel.rs checks them all against the reference model at length).
    #[test]
    fn chunk_edges() {
        let cases: [(&[u8], &[u8], u64); 5] = [
            (b"", b"", 0),
            (b"\n", b"[spaces: 0]\n", 1),
            (b"a b", b"[spaces: 1]a b\n", 1),
            (
                b"a b\n\nc",
                b"[spaces: 1]a b\n[spaces: 0]\n[spaces: 0]c\n",
                3,
            ),
            (b"       x\r\n", b"[spaces: >6]       x\r\n", 1),
        ];
        let mut renderers: Vec<(String, ChunkKernel)> = vec![("dispatch".into(), render_chunk)];
        for implementation in Implementation::available() {
            renderers.push((
                format!("{implementation:?}"),
                implementation.kernel().unwrap(),
            ));
        }
        for (name, render) in renderers {
            for (chunk, expected, lines) in cases {
                let mut out = Vec::new();
                assert_eq!(render(&mut out, chunk), lines, "{name} on {chunk:?}");
                assert_eq!(out, expected, "{name} on {chunk:?}");
            }
        }
    }

    #[test]
    fn the_portable_implementation_is_always_available() {
        assert!(Implementation::available().contains(&Implementation::Portable));
        assert_eq!(
            Implementation::Sse2.is_available(),
            cfg!(target_arch = "x86_64")
        );
    }
}
