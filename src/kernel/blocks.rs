//! What the x86-64 implementations share: the walk over a chunk's 64-byte blocks, turning each
//! block's newline and space bitmasks into lines, and the emission of a line with fixed-size
//! writes through a raw output cursor. Each implementation supplies only [`BlockScan::masks`],
//! and instantiates [`render_blocks`] inside a function compiled for its own CPU features, so
//! that `count_ones` and `trailing_zeros` become single instructions where the CPU has them.

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

/// What an implementation supplies: the masks of one block, a line's copy piece, and whether
/// `count_ones` is one instruction.
pub(super) trait BlockScan: Copy {
    /// With a hardware popcount, counting every block's spaces costs less than the branch that
    /// would skip the count once a line has reached the cap; without one it is a dozen
    /// instructions, worth skipping for most of a long line's blocks.
    const POPCNT: bool;

    fn masks(self, block: &[u8; BLOCK]) -> Masks;

    /// Copies [`COPY`] bytes from `from` to `to`, with the widest vector moves the CPU has
    /// (written out, as a plain 64-byte copy left a dead copy on the stack in the loop).
    ///
    /// # Safety
    ///
    /// `COPY` bytes are readable from `from` and writable at `to`.
    unsafe fn copy(self, from: *const u8, to: *mut u8);
}

/// [`super::render_chunk`] over blocks scanned by `scan`.
#[inline(always)]
pub(super) fn render_blocks<S: BlockScan>(scan: S, out: &mut Vec<u8>, chunk: &[u8]) -> u64 {
    let mut lines = LineCursor {
        writer: Writer::new(out, chunk.len()),
        start: chunk.as_ptr(),
        spaces: 0,
        count: 0,
    };
    let (blocks, rest) = chunk.as_chunks::<BLOCK>();
    // Every line that ends in a block followed by at least one more whole block can be copied in
    // whole pieces without reading past the chunk: only the last whole block and the partial one
    // need the check.
    let (far, near) = blocks.split_at(blocks.len().saturating_sub(1));
    for block in far {
        // SAFETY: `block` is followed in `chunk` by a whole block (see above).
        unsafe { lines.block::<S, false>(scan, chunk, block.as_ptr(), scan.masks(block)) };
    }
    for block in near {
        // SAFETY: the near-end path checks every read.
        unsafe { lines.block::<S, true>(scan, chunk, block.as_ptr(), scan.masks(block)) };
    }
    if !rest.is_empty() {
        // The last partial block is scanned from a zero-padded copy, so no read passes the
        // chunk's end; zero is neither a newline nor a space. Its lines are found where they lie
        // in the chunk.
        let mut padded = [0; BLOCK];
        padded[..rest.len()].copy_from_slice(rest);
        // SAFETY: the near-end path checks every read.
        unsafe { lines.block::<S, true>(scan, chunk, rest.as_ptr(), scan.masks(&padded)) };
    }
    let chunk_end = chunk.as_ptr_range().end;
    if lines.start < chunk_end {
        // SAFETY: the near-end path checks every read; the line ends at the chunk's end.
        unsafe {
            lines.emit::<S, true>(scan, chunk, chunk_end, lines.spaces);
            lines.writer.newline();
        }
        lines.count += 1;
    }
    lines.writer.finish();
    lines.count
}

/// How far [`render_blocks`] has got: where the output goes, the start in the chunk of the line
/// not yet written, the spaces seen in it so far, and how many lines were written. Addresses
/// rather than offsets, so that the walk keeps no chunk base to add.
struct LineCursor<'a> {
    writer: Writer<'a>,
    start: *const u8,
    spaces: usize,
    count: u64,
}

impl LineCursor<'_> {
    /// Writes every line that ends in the block at `block` in `chunk`, and carries the spaces
    /// after its last newline on to the next block.
    ///
    /// # Safety
    ///
    /// `block` points into `chunk`, at the block `masks` describe; unless `NEAR_END`, `chunk`
    /// holds at least `2 * BLOCK` bytes from there.
    #[inline(always)]
    unsafe fn block<S: BlockScan, const NEAR_END: bool>(
        &mut self,
        scan: S,
        chunk: &[u8],
        block: *const u8,
        masks: Masks,
    ) {
        let Masks {
            mut newlines,
            mut spaces,
        } = masks;
        while newlines != 0 {
            // The bits up to and including the first newline: the rest of the current line.
            let through = newlines ^ (newlines - 1);
            // SAFETY: the newline lies in the block, inside the chunk.
            let end = unsafe { block.add(newlines.trailing_zeros() as usize + 1) };
            let count = self.spaces + (spaces & through).count_ones() as usize;
            // SAFETY: the line ends in this block, so the caller's promise covers its copy.
            unsafe { self.emit::<S, NEAR_END>(scan, chunk, end, count) };
            spaces &= !through;
            newlines &= newlines - 1;
            self.start = end;
            self.spaces = 0;
            self.count += 1;
        }
        // Past the cap more spaces change nothing, so without a hardware popcount they are not
        // counted (no cap is needed on the count: it never exceeds the chunk's length).
        if S::POPCNT || self.spaces < SPACES_CAP {
            self.spaces += spaces.count_ones() as usize;
        }
    }

    /// Writes the header for `spaces` (any count; capped here) and then the line from
    /// `self.start` to `end` in `chunk`.
    ///
    /// The line is copied in whole [`COPY`]-byte pieces, the last of which runs on past the
    /// line's end (into bytes the next write overwrites): a few vector moves instead of a call
    /// to `memcpy`.
    ///
    /// # Safety
    ///
    /// `self.start..end` is a non-empty range of `chunk`; unless `NEAR_END`, `chunk` holds at
    /// least `COPY` bytes from `end`.
    #[inline(always)]
    unsafe fn emit<S: BlockScan, const NEAR_END: bool>(
        &mut self,
        scan: S,
        chunk: &[u8],
        end: *const u8,
        spaces: usize,
    ) {
        let length = end as usize - self.start as usize;
        let to = self.writer.header(length, spaces);
        if NEAR_END && (chunk.as_ptr_range().end as usize) - (end as usize) < COPY {
            let offset = self.start as usize - chunk.as_ptr() as usize;
            // SAFETY: `header` left room for `length` bytes at `to`.
            unsafe { copy_near_the_end(&chunk[offset..offset + length], to) };
        } else {
            // SAFETY: `header` left room for `length + COPY` bytes at `to`. The pieces start at
            // offsets below `length`, so each write ends inside that room, and each read ends
            // before `end + COPY`, inside the chunk (the caller's promise, or the check above).
            unsafe {
                let mut offset = 0;
                // The line is not empty: one piece at least.
                loop {
                    scan.copy(self.start.add(offset), to.add(offset));
                    offset += COPY;
                    if offset >= length {
                        break;
                    }
                }
            }
        }
        self.writer.advance(length);
    }
}

/// The bytes one header store writes: every header padded to one 16-byte store.
const HEADER_STORE: usize = 16;

/// `HEADERS`, each padded to [`HEADER_STORE`] bytes, so that a header is one load and one store.
const PADDED_HEADERS: [[u8; HEADER_STORE]; SPACES_CAP + 1] = {
    let mut padded = [[0; HEADER_STORE]; SPACES_CAP + 1];
    let mut n = 0;
    while n <= SPACES_CAP {
        let header = HEADERS[n];
        let mut i = 0;
        while i < header.len() {
            padded[n][i] = header[i];
            i += 1;
        }
        n += 1;
    }
    padded
};

/// The length of the headers below the cap; the one at the cap, `>6`, is a byte longer.
const HEADER_LENGTH: usize = HEADERS[0].len();

const _: () = {
    let mut n = 0;
    while n <= SPACES_CAP {
        assert!(HEADERS[n].len() == HEADER_LENGTH + (n == SPACES_CAP) as usize);
        n += 1;
    }
};

/// The bytes a line is copied by at a time: two 32-byte vector moves where the CPU has AVX, four
/// 16-byte ones on the x86-64 baseline.
pub(super) const COPY: usize = 64;

/// The room a line's writes may need beyond its own length: the header store, and the last
/// piece's overshoot.
const SLACK: usize = HEADER_STORE + COPY;

/// The output of [`render_blocks`]: a raw cursor into `out`'s spare capacity, so that a line
/// costs no `Vec` length update and no capacity check beyond one comparison. The length is set
/// once, by [`Writer::finish`]; every byte before the cursor has been written.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
    cursor: *mut u8,
    /// The address past which a line's first byte may not go: `SLACK` before the end of the
    /// capacity, so that a line of length `n` fits, writes and overshoot included, while the
    /// cursor plus `n` is at most this.
    limit: usize,
}

impl<'a> Writer<'a> {
    /// A writer at the end of `out`, for a chunk of `chunk_len` bytes: [`super::chunk_room`]'s
    /// reservation is made first.
    fn new(out: &'a mut Vec<u8>, chunk_len: usize) -> Self {
        // `chunk_room` reserves at least this much, even for an empty chunk.
        const { assert!(super::chunk_room(0) >= SLACK) };
        out.reserve(super::chunk_room(chunk_len));
        // SAFETY: `out.len()` is within the allocation.
        let cursor = unsafe { out.as_mut_ptr().add(out.len()) };
        // The capacity is at least `SLACK` past the length (see above).
        let limit = out.as_ptr() as usize + out.capacity() - SLACK;
        Writer { out, cursor, limit }
    }

    /// Writes the header for `spaces` (any count; capped here) for a line of `length` bytes,
    /// and returns where the line goes, with room for `length + COPY` bytes there.
    #[inline(always)]
    fn header(&mut self, length: usize, spaces: usize) -> *mut u8 {
        if self.cursor as usize + length > self.limit {
            (self.cursor, self.limit) = grow(self.out, self.cursor, length);
        }
        // SAFETY: the check above leaves room for `length + SLACK` bytes at the cursor: the
        // 16-byte store, and then the header's length (at most 12) plus `length + COPY`.
        unsafe {
            self.cursor
                .cast::<[u8; HEADER_STORE]>()
                .write_unaligned(PADDED_HEADERS[spaces.min(SPACES_CAP)]);
            // The comparison the cap already made gives the length (see `HEADER_LENGTH`).
            self.cursor = self
                .cursor
                .add(HEADER_LENGTH + usize::from(spaces >= SPACES_CAP));
        }
        self.cursor
    }

    /// Moves the cursor past a line of `length` bytes written where `header` said.
    #[inline(always)]
    fn advance(&mut self, length: usize) {
        // SAFETY: `header` left room for the line.
        self.cursor = unsafe { self.cursor.add(length) };
    }

    /// Appends the `\n` a final line lacks, just after it.
    ///
    /// # Safety
    ///
    /// `header` and `advance` were just called for the line, which left room for `COPY` bytes.
    #[inline(always)]
    unsafe fn newline(&mut self) {
        // SAFETY: the caller's promise.
        unsafe {
            self.cursor.write(b'\n');
            self.cursor = self.cursor.add(1);
        }
    }

    /// Sets `out`'s length to take in everything written.
    fn finish(self) {
        let written = self.cursor as usize - self.out.as_ptr() as usize;
        // SAFETY: every byte up to the cursor was written, and it lies within the capacity.
        unsafe { self.out.set_len(written) };
    }
}

/// Makes room in `out` for a line of `length` bytes, with everything up to `cursor` written,
/// and returns [`Writer`]'s new cursor and limit: rare, as `chunk_room` covers the common case.
/// Kept out of line, and given the writer's fields rather than the writer, so that the common
/// path keeps them in registers.
#[cold]
#[inline(never)]
fn grow(out: &mut Vec<u8>, cursor: *mut u8, length: usize) -> (*mut u8, usize) {
    let written = cursor as usize - out.as_ptr() as usize;
    // SAFETY: every byte up to the cursor was written, and it lies within the capacity.
    unsafe { out.set_len(written) };
    out.reserve(length + SLACK);
    // SAFETY: `written` is the length, within the allocation.
    let cursor = unsafe { out.as_mut_ptr().add(written) };
    (cursor, out.as_ptr() as usize + out.capacity() - SLACK)
}

/// The line copy of [`LineCursor::emit`] for the few lines too near the chunk's end for whole
/// pieces: a call kept out of line so that the common path keeps its registers.
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
        for (header, store) in HEADERS.iter().zip(PADDED_HEADERS) {
            assert_eq!(*header, &store[..header.len()]);
        }
    }
}
