//! What the x86-64 implementations share: the walk over a chunk's 64-byte blocks, turning each
//! block's newline and space bitmasks into lines, and the emission of a line with fixed-size
//! writes. Each implementation supplies only [`BlockScan::masks`], and instantiates
//! [`render_blocks`] inside a function compiled for its own CPU features, so that `count_ones`
//! and `trailing_zeros` become single instructions where the CPU has them.

use std::ops::Range;
use std::ptr;

use super::{HEADERS, SPACES_CAP};

/// The bytes each block scan covers: one bit of a `u64` a byte.
pub(super) const BLOCK: usize = 64;

/// Where newlines and spaces lie in a block: bit `i` stands for the block's byte `i`.
#[derive(Clone, Copy)]
pub(super) struct Masks {
    pub(super) newlines: u64,
    pub(super) spaces: u64,
}

/// What an implementation supplies: the masks of one block.
pub(super) trait BlockScan: Copy {
    fn masks(self, block: &[u8; BLOCK]) -> Masks;
}

/// [`super::render_chunk`] over blocks scanned by `scan`.
#[inline(always)]
pub(super) fn render_blocks<S: BlockScan>(scan: S, out: &mut Vec<u8>, chunk: &[u8]) -> u64 {
    out.reserve(super::chunk_room(chunk.len()));
    let mut lines = LineCursor::default();
    let (blocks, rest) = chunk.as_chunks::<BLOCK>();
    for block in blocks {
        // The block's offset in the chunk from its address: the loop then keeps one counter.
        let base = block.as_ptr() as usize - chunk.as_ptr() as usize;
        lines.block(out, chunk, base, scan.masks(block));
    }
    if !rest.is_empty() {
        // The last partial block is scanned from a zero-padded copy, so no read passes the
        // chunk's end; zero is neither a newline nor a space.
        let mut padded = [0; BLOCK];
        padded[..rest.len()].copy_from_slice(rest);
        lines.block(out, chunk, blocks.len() * BLOCK, scan.masks(&padded));
    }
    if lines.start < chunk.len() {
        emit(out, chunk, lines.start..chunk.len(), lines.spaces);
        out.push(b'\n');
        lines.count += 1;
    }
    lines.count
}

/// How far [`render_blocks`] has got: the start of the line not yet written, the spaces seen in
/// it so far, and how many lines were written.
#[derive(Default)]
struct LineCursor {
    start: usize,
    spaces: usize,
    count: u64,
}

impl LineCursor {
    /// Writes every line that ends in the block at `base` in `chunk`, and carries the spaces
    /// after its last newline on to the next block.
    #[inline(always)]
    fn block(&mut self, out: &mut Vec<u8>, chunk: &[u8], base: usize, masks: Masks) {
        let Masks {
            mut newlines,
            mut spaces,
        } = masks;
        while newlines != 0 {
            // The bits up to and including the first newline: the rest of the current line.
            let through = newlines ^ (newlines - 1);
            let end = base + newlines.trailing_zeros() as usize;
            let count = self.spaces + (spaces & through).count_ones() as usize;
            emit(out, chunk, self.start..end + 1, count);
            spaces &= !through;
            newlines &= newlines - 1;
            self.start = end + 1;
            self.spaces = 0;
            self.count += 1;
        }
        // Past the cap more spaces change nothing, so they are not counted: on the x86-64
        // baseline a popcount is a dozen instructions, and most of a long line's blocks come
        // after its seventh space. (No cap is needed: a count never exceeds the chunk's length.)
        if self.spaces < SPACES_CAP {
            self.spaces += spaces.count_ones() as usize;
        }
    }
}

/// The bytes one header store writes: every header padded to one 16-byte store.
const HEADER_STORE: usize = 16;

/// `HEADERS`, each padded to [`HEADER_STORE`] bytes, with its real length.
const PADDED_HEADERS: [([u8; HEADER_STORE], usize); SPACES_CAP + 1] = {
    let mut padded = [([0; HEADER_STORE], 0); SPACES_CAP + 1];
    let mut n = 0;
    while n <= SPACES_CAP {
        let header = HEADERS[n];
        let mut i = 0;
        while i < header.len() {
            padded[n].0[i] = header[i];
            i += 1;
        }
        padded[n].1 = header.len();
        n += 1;
    }
    padded
};

/// The bytes a line is copied by at a time: two 32-byte vector moves where the CPU has AVX, four
/// 16-byte ones on the x86-64 baseline.
const COPY: usize = 64;

/// Appends the header for `spaces` (any count; capped here) and then `chunk[line]` as it is.
///
/// Every write is a fixed-size one, a few vector moves instead of a call to `memcpy`: the header
/// as one 16-byte store of its padded form, and the line in whole [`COPY`]-byte pieces, the last
/// of which runs on past the line's end (into bytes the next write overwrites) as long as the
/// chunk holds the bytes it reads. Room for the overshoot is reserved first.
#[inline(always)]
fn emit(out: &mut Vec<u8>, chunk: &[u8], line: Range<usize>, spaces: usize) {
    let (store, header_length) = PADDED_HEADERS[spaces.min(SPACES_CAP)];
    let length = line.end - line.start;
    out.reserve(HEADER_STORE + length + COPY);
    let start = out.len();
    // SAFETY: the reserve above leaves room for HEADER_STORE + length + COPY bytes from `start`.
    // The header store writes HEADER_STORE of them. The pieces start at offsets below `length`,
    // so each write ends before header_length + length + COPY <= that room, and each read ends
    // before length + COPY = readable.len(), inside the chunk. Every byte up to the new length
    // was written: the header's, then the line's.
    unsafe {
        let header_at = out.as_mut_ptr().add(start);
        header_at
            .cast::<[u8; HEADER_STORE]>()
            .write_unaligned(store);
        let line_at = header_at.add(header_length);
        if let Some(readable) = chunk.get(line.start..line.end + COPY) {
            // A line holds at least its `\n`, or is a non-empty final line: one piece at least.
            let mut offset = 0;
            loop {
                let piece = readable
                    .as_ptr()
                    .add(offset)
                    .cast::<[u8; COPY]>()
                    .read_unaligned();
                line_at
                    .add(offset)
                    .cast::<[u8; COPY]>()
                    .write_unaligned(piece);
                offset += COPY;
                if offset >= length {
                    break;
                }
            }
        } else {
            copy_near_the_end(&chunk[line], line_at);
        }
        out.set_len(start + header_length + length);
    }
}

/// The line copy of [`emit`] for the few lines too near the chunk's end for whole pieces: a call
/// kept out of line so that the common path keeps its registers.
///
/// # Safety
///
/// `to` has room for `from.len()` bytes.
#[cold]
#[inline(never)]
unsafe fn copy_near_the_end(from: &[u8], to: *mut u8) {
    // SAFETY: the caller guarantees the room; a slice and a buffer being written never overlap.
    unsafe { ptr::copy_nonoverlapping(from.as_ptr(), to, from.len()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_headers_are_the_headers() {
        for (header, (store, length)) in HEADERS.iter().zip(PADDED_HEADERS) {
            assert_eq!(*header, &store[..length]);
        }
    }
}
