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

/// What an implementation supplies: the bitmask of one byte value in a block, a line's copy piece, and whether
/// `count_ones` is one instruction.
pub(super) trait BlockScan: Copy {
    /// With a hardware popcount, counting every block's spaces costs less than the branch that
    /// would skip the count once a line has reached the cap; without one it is a dozen
    /// instructions, worth skipping for most of a long line's blocks.
    const POPCNT: bool;

    /// The bits of the bytes of `block` equal to `byte`.
    fn bits(self, block: &[u8; BLOCK], byte: u8) -> u64;

    #[inline(always)]
    fn masks(self, block: &[u8; BLOCK]) -> Masks {
        Masks {
            newlines: self.bits(block, b'\n'),
            spaces: self.bits(block, b' '),
        }
    }

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
    // Every line that ends in a block followed by at least one more whole block can be stored in
    // whole pieces without reading past the chunk: only the last whole block and the partial one
    // need the check, line by line.
    let (far, near) = blocks.split_at(blocks.len().saturating_sub(1));
    // SAFETY: each block of `far` is followed in `chunk` by a whole block (see above).
    unsafe { lines.stream(scan, far) };
    for block in near {
        // SAFETY: the block is in the chunk.
        unsafe { lines.block(scan, chunk, block.as_ptr(), scan.masks(block)) };
    }
    if !rest.is_empty() {
        // The last partial block is scanned from a zero-padded copy, so no read passes the
        // chunk's end; zero is neither a newline nor a space. Its lines are found where they lie
        // in the chunk.
        let mut padded = [0; BLOCK];
        padded[..rest.len()].copy_from_slice(rest);
        // SAFETY: the rest is in the chunk; the masks are of its bytes.
        unsafe { lines.block(scan, chunk, rest.as_ptr(), scan.masks(&padded)) };
    }
    let chunk_end = chunk.as_ptr_range().end;
    if lines.start < chunk_end {
        // SAFETY: the line ends at the chunk's end; the near-end path checks every read.
        unsafe {
            lines.emit(scan, chunk, chunk_end, lines.spaces);
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
    /// Writes every line that ends in `blocks`, the chunk's first blocks, each of which is
    /// followed in the chunk by at least one more whole block, and leaves the writer's cursor
    /// where the next line's header goes.
    ///
    /// Most lines have more than six spaces, so a line's header is written as the cap's, `>6`,
    /// before its spaces are counted, and each block is stored where the current line puts it
    /// as soon as it is read: a line costs no copy of its own. Where a line ends, the rest of
    /// the block is stored again behind the next line's header; where a line turns out to have
    /// fewer spaces, [`rewrite`] writes it over, one byte further forward.
    ///
    /// # Safety
    ///
    /// The chunk holds at least a whole block after the last of `blocks`, and nothing has been
    /// written yet.
    #[inline(always)]
    unsafe fn stream<S: BlockScan>(&mut self, scan: S, blocks: &[[u8; BLOCK]]) {
        let length = blocks.len() * BLOCK;
        if length == 0 {
            return;
        }
        const SPECULATED: usize = HEADER_LENGTH + 1;
        let speculated = PADDED_HEADERS[SPACES_CAP];
        let chunk = self.start;
        // Offsets in the chunk, and where offset 0 would go in the output given the headers
        // written so far: the byte at offset `x` of the current line goes to `shifted + x`, so
        // that a block, a line's end and the next line's start are each one addressing mode.
        // Bytes up to the current line's, and the current line's stored so far, are written.
        let (mut start, mut at) = (0, 0);
        // SAFETY: `Writer::new` left room for `BLOCK_ROOM` bytes at the cursor.
        let mut shifted = unsafe {
            let cursor = self.writer.cursor;
            cursor
                .cast::<[u8; HEADER_STORE]>()
                .write_unaligned(speculated);
            cursor.add(SPECULATED)
        };
        let mut limit = self.writer.limit - (BLOCK_ROOM - SLACK);
        // One offset for the walk, rather than an iterator over the blocks beside it.
        while at < length {
            // SAFETY: the block at `at` is one of `blocks`, in the chunk.
            let block = unsafe { &*chunk.add(at).cast::<[u8; BLOCK]>() };
            // SAFETY: the current line's bytes go from `shifted + start` on, in the allocation,
            // so this is where the block's go (room checked next).
            let mut to = unsafe { shifted.add(at) };
            if to as usize > limit {
                (to, self.writer.limit) = grow(self.writer.out, to, BLOCK_ROOM - SLACK);
                limit = self.writer.limit - (BLOCK_ROOM - SLACK);
                // SAFETY: as above, in the new allocation.
                shifted = unsafe { to.sub(at) };
            }
            // SAFETY: `to` has room for `BLOCK_ROOM` bytes (checked above); the block is in the
            // chunk.
            unsafe { scan.copy(block.as_ptr(), to) };
            let mut newlines = scan.bits(block, b'\n');
            if newlines == 0 {
                // Half the blocks of log lines hold no line's end, and most of those come after
                // the line's seventh space: their spaces are not looked for at all.
                if self.spaces < SPACES_CAP {
                    self.spaces += scan.bits(block, b' ').count_ones() as usize;
                }
                at += BLOCK;
                continue;
            }
            let mut spaces = scan.bits(block, b' ');
            while newlines != 0 {
                // The bits up to and including the first newline: the rest of the current line.
                let through = newlines ^ (newlines - 1);
                let end = at + newlines.trailing_zeros() as usize + 1;
                let count = self.spaces + (spaces & through).count_ones() as usize;
                if count < SPACES_CAP {
                    // SAFETY: the line is in the chunk, and its speculated header and bytes
                    // lie inside the checked room, which `rewrite` does not pass: its header is
                    // a byte shorter, and it writes no overshoot. After it, everything is a byte
                    // further forward.
                    unsafe {
                        rewrite(
                            chunk.add(start),
                            end - start,
                            count,
                            shifted.add(start).sub(SPECULATED),
                        );
                        shifted = shifted.sub(1);
                    }
                }
                // SAFETY: every line in the block moves the output at most a header further
                // than the block's store: `BLOCK_ROOM` covers the header store and the next
                // line's first `COPY` bytes after each of the block's newlines, and the chunk
                // holds `COPY` bytes after `end` (the caller's promise).
                unsafe {
                    shifted
                        .add(end)
                        .cast::<[u8; HEADER_STORE]>()
                        .write_unaligned(speculated);
                    shifted = shifted.add(SPECULATED);
                    scan.copy(chunk.add(end), shifted.add(end));
                }
                spaces &= !through;
                newlines &= newlines - 1;
                start = end;
                self.spaces = 0;
                self.count += 1;
            }
            if S::POPCNT || self.spaces < SPACES_CAP {
                self.spaces += spaces.count_ones() as usize;
            }
            at += BLOCK;
        }
        // SAFETY: the speculated header lies just before the current line.
        unsafe {
            self.start = chunk.add(start);
            self.writer.cursor = shifted.add(start).sub(SPECULATED);
        }
    }

    /// Writes every line that ends in the block at `block` in `chunk`, checking each read
    /// against the chunk's end, and carries the spaces after its last newline on to the next
    /// block.
    ///
    /// # Safety
    ///
    /// `block` points into `chunk`, at the bytes `masks` describe.
    #[inline(always)]
    unsafe fn block<S: BlockScan>(
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
            // SAFETY: the line runs from `self.start`, in the chunk, to `end` (the caller's
            // promise); every read is checked.
            unsafe { self.emit(scan, chunk, end, count) };
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
    /// `self.start..end` is a non-empty range of `chunk`.
    #[inline(always)]
    unsafe fn emit<S: BlockScan>(&mut self, scan: S, chunk: &[u8], end: *const u8, spaces: usize) {
        let length = end as usize - self.start as usize;
        let to = self.writer.header(length, spaces);
        if (chunk.as_ptr_range().end as usize) - (end as usize) < COPY {
            let offset = self.start as usize - chunk.as_ptr() as usize;
            // SAFETY: `header` left room for `length` bytes at `to`.
            unsafe { copy_near_the_end(&chunk[offset..offset + length], to) };
        } else {
            // SAFETY: `header` left room for `length + COPY` bytes at `to`. The pieces start at
            // offsets below `length`, so each write ends inside that room, and each read ends
            // before `end + COPY`, inside the chunk (checked above).
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

/// The room [`LineCursor::stream`] needs from where a block goes: the block's store, and after
/// each of up to a block's worth of newlines, a header further on and then a header store and
/// the next line's first `COPY` bytes.
const BLOCK_ROOM: usize = BLOCK + BLOCK * (HEADER_LENGTH + 1) + SLACK;

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
        const { assert!(super::chunk_room(0) >= BLOCK_ROOM && BLOCK_ROOM >= SLACK) };
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

/// The rewrite of a line that [`LineCursor::stream`] wrote behind the cap's header but that has
/// fewer spaces: its header, a byte shorter, and the line after it. Kept out of line, as one line
/// in eight takes it, so that the walk keeps its registers.
///
/// # Safety
///
/// `length` bytes are readable from `line`, and `to` has room for `HEADER_STORE + length`.
#[cold]
#[inline(never)]
unsafe fn rewrite(line: *const u8, length: usize, spaces: usize, to: *mut u8) {
    // SAFETY: the caller guarantees the room; the chunk and the output never overlap.
    unsafe {
        to.cast::<[u8; HEADER_STORE]>()
            .write_unaligned(PADDED_HEADERS[spaces]);
        ptr::copy_nonoverlapping(line, to.add(HEADERS[spaces].len()), length);
    }
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
