//! # space-kernel
//!
//! The pipelines experiment's per-line work: how many ASCII spaces (0x20) a line holds, the
//! header that says so, and the rendering of a line or of a whole chunk of lines into an output
//! buffer. linewright's `SpaceCount` renders with it; its public surface: [`count_spaces`],
//! [`header`], [`render_line`], [`render_shared`], [`render_chunk`], [`chunk_room`], the
//! [`Implementation`]s and their [`Rendered`], and four constants ([`SPACES_CAP`], [`HEADERS`],
//! [`SHORT_CHUNK`], [`LINE_OVERHEAD`]).
//!
//! Only 0 to 6 are told apart; everything from 7 up shares the header `>6`, so counting may stop
//! there. Tabs, `\r` and other white space are not spaces.
//!
//! A line at a time, [`render_line`] counts with [`count_spaces`]. A chunk at a time,
//! [`render_chunk`] uses one of the [`Implementation`]s, one file each, chosen once at run time
//! from what the CPU can run, through their common step [`Implementation::render_into`], which
//! renders into a given room the lines that fit. On x86-64 they scan 64-byte blocks into one bit
//! a byte for newlines and one for spaces, so that each line's count is the popcount of the space
//! bits before its newline bit, and take all of a block's lines in one pass (`blocks.rs`); how a
//! block becomes bitmasks is all that differs between them. Elsewhere the portable one renders a
//! line at a time.

use std::mem::MaybeUninit;
use std::sync::OnceLock;

use bytes::buf::Chain;
use bytes::{Buf, Bytes};

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
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

/// The room the block implementations want in `out` before rendering a chunk of `chunk_len`
/// bytes, so that their fast path runs to the chunk's end. Headers add at most 12 bytes a line;
/// reserving for the worst case up front would double the buffer for long-line input, so this is
/// the common case, and its slack covers the wide stores of a block of lines (`blocks.rs`). With
/// less room, or when short lines need more, a kernel renders the lines that fit, precisely, and
/// [`render_chunk`] grows `out` for the rest. A caller that reserves this much fallibly first
/// makes the kernels' own reservation a no-op.
pub const fn chunk_room(chunk_len: usize) -> usize {
    chunk_len + chunk_len / 8 + 1024
}

/// Chunks shorter than this are rendered a line at a time, by the portable implementation: for a
/// line or two (`pipeline`'s small batches) the block walk's set-up, and the kilobyte of room its
/// wide stores need, which makes every message's buffer a slow allocation, cost more than the
/// blocks save.
pub const SHORT_CHUNK: usize = 256;

/// The most a line's rendering adds to it: the longest header and a `\n` that the input's final
/// line may lack.
pub const LINE_OVERHEAD: usize = HEADERS[SPACES_CAP].len() + 1;

/// Appends the rendering of every line in `chunk` to `out` and returns how many lines that was,
/// with the fastest [`Implementation`] this CPU runs (chosen on the first call), or a line at a
/// time below [`SHORT_CHUNK`].
///
/// `chunk` holds whole lines, each ending in `\n`, except that the last may lack it (the input's
/// final line); that one gets its `\n` added. An empty chunk renders to nothing.
#[inline]
pub fn render_chunk(out: &mut Vec<u8>, chunk: &[u8]) -> u64 {
    if chunk.len() < SHORT_CHUNK {
        return render_chunk_with(portable::render_into, out, chunk);
    }
    static CHOSEN: OnceLock<ChunkKernel> = OnceLock::new();
    let kernel = CHOSEN.get_or_init(|| {
        Implementation::ALL
            .into_iter()
            .find_map(Implementation::kernel)
            .expect("the portable implementation runs everywhere")
    });
    render_chunk_with(*kernel, out, chunk)
}

/// What one call of [`Implementation::render_into`] did: it rendered the chunk's first `read`
/// bytes, `lines` whole lines, into the room's first `written` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rendered {
    /// The bytes of the chunk rendered: whole lines, each with its `\n` if it has one.
    pub read: usize,
    /// The bytes of the room written (initialised), from its start.
    pub written: usize,
    /// The lines rendered.
    pub lines: u64,
}

/// A chunk renderer, safe to call: one is handed out only where the CPU runs it. It renders the
/// chunk's lines in order into the room while the next one's rendering fits whole, and writes
/// nothing past what it reports.
type ChunkKernel = fn(&[u8], &mut [MaybeUninit<u8>]) -> Rendered;

/// [`render_chunk`] with `kernel`: it renders into `out`'s spare capacity, and where the next
/// line does not fit, `out` grows and the kernel goes on from that line. Every implementation
/// writes through this one loop, so the tests that hand a kernel a room ending at an unmapped
/// page test the code that runs here.
fn render_chunk_with(kernel: ChunkKernel, out: &mut Vec<u8>, chunk: &[u8]) -> u64 {
    // The common case's output (headers add 11 or 12 bytes a line); short lines need more.
    out.reserve(chunk.len() + chunk.len() / 8 + LINE_OVERHEAD);
    let (mut rest, mut lines) = (chunk, 0);
    loop {
        let rendered = kernel(rest, out.spare_capacity_mut());
        // SAFETY: the kernel initialised the first `written` bytes of the spare capacity, which
        // follow the length.
        unsafe { out.set_len(out.len() + rendered.written) };
        lines += rendered.lines;
        rest = &rest[rendered.read..];
        if rest.is_empty() {
            return lines;
        }
        // Room for the rest with every header at its longest would double the buffer: `Vec`
        // grows at least twofold, and room for the rest's bytes and one header is enough for its
        // next line, so every call makes progress.
        out.reserve(rest.len() + LINE_OVERHEAD);
    }
}

/// Writes `header`, then `line`, then a `\n` unless `line` ends in one, at `at` in `room`, and
/// returns where the rendering ends, or `None` (writing nothing) if it does not fit. The line at
/// a time write that every implementation's careful path shares.
#[inline]
fn place(room: &mut [MaybeUninit<u8>], at: usize, header: &[u8], line: &[u8]) -> Option<usize> {
    let terminated = line.last() == Some(&b'\n');
    let end = at + header.len() + line.len() + usize::from(!terminated);
    let target = room.get_mut(at..end)?;
    let (head, body) = target.split_at_mut(header.len());
    head.write_copy_of_slice(header);
    if terminated {
        body.write_copy_of_slice(line);
    } else {
        let (text, newline) = body.split_at_mut(line.len());
        text.write_copy_of_slice(line);
        newline[0].write(b'\n');
    }
    Some(end)
}

/// The ways to render a chunk, fastest first. Every one gives the same bytes; [`render_chunk`]
/// uses the first that the CPU runs, and tests and benchmarks can force each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Implementation {
    /// x86-64 with AVX-512F and BW, POPCNT and BMI1: one 64-byte compare into a mask register
    /// a block, and a line's copy in one 64-byte move.
    Avx512,
    /// x86-64 with AVX2, POPCNT and BMI1: two 32-byte compares a block, hardware popcount.
    Avx2,
    /// The x86-64 baseline: four 16-byte compares a block, popcount in ordinary instructions.
    Sse2,
    /// Any target, safe code only: a `memchr` a line, its spaces counted on their own (the loop
    /// before the block scans, and the "before" of their benchmarks).
    Portable,
}

impl Implementation {
    /// Every implementation, fastest first.
    pub const ALL: [Implementation; 4] = [Self::Avx512, Self::Avx2, Self::Sse2, Self::Portable];

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
        render_chunk_with(self.runnable_kernel(), out, chunk)
    }

    /// The step under [`render_chunk`](Self::render_chunk): renders `chunk`'s lines in order
    /// into `room` from its start, as long as the next line's rendering fits whole, and says how
    /// far it got. Nothing outside `room` is written (the bytes after [`Rendered::written`] may
    /// hold scratch), and nothing past the chunk is read, whatever the lengths: the tests hand it
    /// memory that ends at an unmapped page.
    ///
    /// # Panics
    ///
    /// If this CPU does not run it (see [`Implementation::available`]).
    pub fn render_into(self, chunk: &[u8], room: &mut [MaybeUninit<u8>]) -> Rendered {
        self.runnable_kernel()(chunk, room)
    }

    /// This implementation's renderer, or a panic that says this CPU does not run it.
    fn runnable_kernel(self) -> ChunkKernel {
        self.kernel()
            .unwrap_or_else(|| panic!("this CPU does not run the {self:?} kernel"))
    }

    /// This implementation's renderer, if this CPU runs it.
    fn kernel(self) -> Option<ChunkKernel> {
        match self {
            #[cfg(target_arch = "x86_64")]
            Self::Avx512 => avx512::kernel(),
            #[cfg(target_arch = "x86_64")]
            Self::Avx2 => avx2::kernel(),
            #[cfg(target_arch = "x86_64")]
            Self::Sse2 => Some(sse2::render_into),
            Self::Portable => Some(portable::render_into),
            #[cfg(not(target_arch = "x86_64"))]
            Self::Avx512 | Self::Avx2 | Self::Sse2 => None,
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
        type Render = Box<dyn Fn(&mut Vec<u8>, &[u8]) -> u64>;
        let mut renderers: Vec<(String, Render)> =
            vec![("dispatch".into(), Box::new(render_chunk))];
        for implementation in Implementation::available() {
            renderers.push((
                format!("{implementation:?}"),
                Box::new(move |out: &mut Vec<u8>, chunk: &[u8]| {
                    implementation.render_chunk(out, chunk)
                }),
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
