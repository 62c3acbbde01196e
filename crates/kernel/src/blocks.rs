//! What the x86-64 implementations share: the walk over a chunk's 64-byte blocks, turning each
//! block's newline and space bitmasks into lines, and the writing of each line with fixed-size
//! stores. Each implementation supplies only [`BlockScan`], and instantiates [`render_blocks`]
//! inside a function compiled for its own CPU features, so that `count_ones` and
//! `trailing_zeros` become single instructions where the CPU has them.
//!
//! The walk has two paths. The fast one takes every block that is followed in the chunk by
//! `COPY - 1` more bytes and has, from where it goes in the room, [`BLOCK_ROOM`] bytes of room:
//! there every read and write of its lines may run past the line's end, so a line costs a header
//! store and a 64-byte copy, with no length of its own to check. The careful one takes what is
//! left (the last block or two, or the lines for which the room runs short) a line at a time,
//! each read and write exact, and stops before the first line that does not fit.

use std::arch::x86_64::{_mm_loadu_si128, _mm_storeu_si128};
use std::mem::MaybeUninit;

use super::{HEADERS, Rendered, SPACES_CAP, place};

/// The bytes each block scan covers: one bit of a `u64` a byte.
pub(super) const BLOCK: usize = 64;

/// Where newlines and spaces lie in a block: bit `i` stands for the block's byte `i`.
#[derive(Clone, Copy)]
pub(super) struct Masks {
    pub(super) newlines: u64,
    pub(super) spaces: u64,
}

/// What an implementation supplies: the bitmask of one byte value in a block, a line's copy
/// piece, and whether `count_ones` is one instruction.
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

/// The bytes a line is copied by at a time: two 32-byte vector moves where the CPU has AVX, four
/// 16-byte ones on the x86-64 baseline.
pub(super) const COPY: usize = 64;

/// [`super::Implementation::render_into`] over blocks scanned by `scan`.
#[inline(always)]
pub(super) fn render_blocks<S: BlockScan>(
    scan: S,
    chunk: &[u8],
    room: &mut [MaybeUninit<u8>],
) -> Rendered {
    let mut walk = Walk::default();
    let at = walk.fast(scan, chunk, room);
    walk.careful(scan, chunk, room, at)
}

/// How far [`render_blocks`] has got: the chunk offset of the first line not yet written (every
/// byte before it is), the header bytes written so far (so that line's rendering starts at
/// `start + headers` in the room), the spaces seen in it so far, and the lines written.
#[derive(Default)]
struct Walk {
    start: usize,
    headers: usize,
    spaces: usize,
    lines: u64,
}

impl Walk {
    /// The fast path, from the chunk's first block, while nothing is written yet: renders the
    /// lines that end in each block that `COPY - 1` bytes follow in the chunk and that has
    /// [`BLOCK_ROOM`] bytes of room from where it goes, and returns the offset of the first block
    /// it did not take.
    ///
    /// Each block's newlines are taken in one pass. Only a block's first line may have begun in
    /// an earlier block, carry spaces counted there and be longer than a copy piece; the lines
    /// after it lie in the block, so each is one header store and one [`COPY`]-byte copy that
    /// runs on past its end (into bytes the next line's writes replace).
    #[inline(always)]
    fn fast<S: BlockScan>(&mut self, scan: S, chunk: &[u8], room: &mut [MaybeUninit<u8>]) -> usize {
        let (Some(last_block), Some(room_limit)) = (
            // A copy piece starts at most at a block's last byte (a first line's second piece
            // too: it starts `COPY - 1` after a start at or before the block's first byte).
            chunk.len().checked_sub(BLOCK + COPY - 1),
            room.len().checked_sub(BLOCK_ROOM),
        ) else {
            return 0;
        };
        let source = chunk.as_ptr();
        let room_start = room.as_mut_ptr().cast::<u8>();
        let (last, limit) = (
            source as usize + last_block,
            room_start as usize + room_limit,
        );
        // The block being read; where its first byte goes given the headers written so far; and
        // where the newline before the current line lies from the block's first byte (so -1 at
        // the chunk's start, and negative if the line began in an earlier block): each read and
        // write is one addressing mode off the two pointers (the line's start, one past the
        // newline, is a displacement), and those and the masks are all that a line needs.
        let (mut block, mut block_to, mut newline) = (source, room_start, -1);
        let (mut spaces, mut lines) = (0, 0);
        while block as usize <= last {
            // SAFETY: the block is in the chunk (checked above).
            let bytes = unsafe { &*block.cast::<[u8; BLOCK]>() };
            let mut newlines = scan.bits(bytes, b'\n');
            if newlines == 0 {
                // Most blocks of long lines hold no line's end, and most of those come after the
                // line's seventh space: their spaces are not looked for. So a line carries at
                // most 6 + 64 spaces into a block, or 63 from the block where the last line ended.
                if spaces < SPACES_CAP {
                    spaces += scan.bits(bytes, b' ').count_ones() as usize;
                }
            } else {
                // Only blocks where lines end write: the room is checked there.
                if block_to as usize > limit {
                    break;
                }
                lines += u64::from(newlines.count_ones());
                let mut not_spaces = !scan.bits(bytes, b' ');
                let (end, count) = take_line(&mut newlines, &mut not_spaces);
                // At most 70 spaces carried (see below) and 63 here: the headers' table has room.
                let count = (spaces + count) as u8;
                // SAFETY: the check above leaves `BLOCK_ROOM` bytes of room from `block_to`,
                // which covers every line that ends in this block, and the chunk the block and
                // `COPY - 1` bytes after it, which covers every copy piece (each starts inside
                // the line or, the first line's second, `COPY - 1` bytes after its start, which
                // is at or before the block's first byte: at the latest at the block's last
                // byte).
                block_to = unsafe { write_line(scan, block, block_to, newline..end, count, true) };
                newline = end;
                while newlines != 0 {
                    let (end, count) = take_line(&mut newlines, &mut not_spaces);
                    // SAFETY: as for the block's first line above; this line lies wholly inside
                    // the block.
                    block_to = unsafe {
                        write_line(scan, block, block_to, newline..end, count as u8, false)
                    };
                    newline = end;
                }
                spaces = (!not_spaces).count_ones() as usize;
            }
            // Wrapping: past the last block these point past the chunk and the room.
            block = block.wrapping_add(BLOCK);
            block_to = block_to.wrapping_add(BLOCK);
            newline -= BLOCK as isize;
        }
        let at = block as usize - source as usize;
        let start = at.wrapping_add_signed(newline + 1);
        *self = Walk {
            start,
            headers: block_to as usize - at - room_start as usize,
            spaces,
            lines,
        };
        at
    }

    /// The careful path, from the block at `at` to the chunk's end: each line's rendering
    /// written exactly by [`place`], until one does not fit. The chunk's last partial block is
    /// scanned from a zero-padded copy (zero is neither a newline nor a space).
    fn careful<S: BlockScan>(
        mut self,
        scan: S,
        chunk: &[u8],
        room: &mut [MaybeUninit<u8>],
        mut at: usize,
    ) -> Rendered {
        while let Some(rest) = chunk.get(at..).filter(|rest| !rest.is_empty()) {
            let Masks {
                mut newlines,
                spaces,
            } = match rest.first_chunk::<BLOCK>() {
                Some(block) => scan.masks(block),
                None => {
                    let mut padded = [0; BLOCK];
                    padded[..rest.len()].copy_from_slice(rest);
                    scan.masks(&padded)
                }
            };
            let mut not_spaces = !spaces;
            while newlines != 0 {
                let (end, count) = take_line(&mut newlines, &mut not_spaces);
                if !self.place(chunk, room, at + end as usize + 1, self.spaces + count) {
                    return self.rendered();
                }
            }
            if S::POPCNT || self.spaces < SPACES_CAP {
                self.spaces += (!not_spaces).count_ones() as usize;
            }
            at += BLOCK;
        }
        if self.start < chunk.len() {
            // The input's final line, without its newline: `place` adds it.
            self.place(chunk, room, chunk.len(), self.spaces);
        }
        self.rendered()
    }

    /// Writes the line that ends at `end` with the header for `spaces` (any count; capped
    /// here), if it fits, and says whether it did.
    fn place(
        &mut self,
        chunk: &[u8],
        room: &mut [MaybeUninit<u8>],
        end: usize,
        spaces: usize,
    ) -> bool {
        let header = HEADERS[spaces.min(SPACES_CAP)];
        let line = &chunk[self.start..end];
        let Some(written) = place(room, self.start + self.headers, header, line) else {
            return false;
        };
        *self = Walk {
            start: end,
            headers: written - end,
            spaces: 0,
            lines: self.lines + 1,
        };
        true
    }

    fn rendered(&self) -> Rendered {
        Rendered {
            read: self.start,
            written: self.start + self.headers,
            lines: self.lines,
        }
    }
}

/// Takes the first line end out of `newlines`, and the spaces before it out of `not_spaces` (the
/// complement of the spaces' bits, which BMI1's `andn` masks in one instruction): the newline's
/// offset in the block, and those spaces' count.
#[inline(always)]
fn take_line(newlines: &mut u64, not_spaces: &mut u64) -> (isize, usize) {
    let end = newlines.trailing_zeros() as isize;
    // The bits below the first newline, and those of the other newlines, which are not spaces.
    let before = *newlines - 1;
    let taken = !*not_spaces & before;
    *not_spaces |= taken;
    *newlines &= before;
    (end, taken.count_ones() as usize)
}

/// Writes the header for `spaces` where the line goes and the line's bytes after it, in
/// [`COPY`]-byte pieces up to its newline, the last of which runs on past the line's end; or in
/// one piece (whatever its length), unless `long`. `newlines` holds the offsets from `block` (and
/// `block_to`) of the newline before the line and of the line's own, so the line starts one past
/// the first. Returns the new `block_to` (see [`Walk::fast`]): a header further on.
///
/// # Safety
///
/// Unless `long`, the line is at most `COPY` bytes long. The source has `COPY` readable bytes
/// from each piece's start (the line's start, and for a long line that plus `COPY - 1` and every
/// `COPY` bytes on up to its newline), and the room has [`HEADER_STORE`] writable bytes from
/// `block_to` plus the line's start and, a header further on, `COPY` from each piece's start.
#[inline(always)]
unsafe fn write_line<S: BlockScan>(
    scan: S,
    block: *const u8,
    block_to: *mut u8,
    newlines: std::ops::Range<isize>,
    spaces: u8,
    long: bool,
) -> *mut u8 {
    let store = &HEADER_STORES[usize::from(spaces)];
    let start = newlines.start + 1;
    // SAFETY: the caller's promises; SSE2 is in every x86-64 CPU, and its 16-byte load reads
    // `store`.
    unsafe {
        _mm_storeu_si128(
            block_to.offset(start).cast(),
            _mm_loadu_si128(store.as_ptr().cast()),
        );
        let block_to = block_to.add(usize::from(store[HEADER_STORE - 1]));
        scan.copy(block.offset(start), block_to.offset(start));
        if long {
            // The second piece unconditionally: a loop that ran once or not at all, as lines of
            // up to `2 * COPY` bytes made it, mispredicted its exit on every other line. It
            // overlaps the first by a byte, so that it starts inside the block (the line's start
            // is at most 0) and reads no further than a piece from the block's last byte.
            let mut piece = start + COPY as isize - 1;
            scan.copy(block.offset(piece), block_to.offset(piece));
            piece += COPY as isize;
            while piece <= newlines.end {
                scan.copy(block.offset(piece), block_to.offset(piece));
                piece += COPY as isize;
            }
        }
        block_to
    }
}

/// The bytes one header store writes: every header fits in 16 bytes, one vector store.
const HEADER_STORE: usize = 16;

/// The header store for each count of spaces up to 255, so that the fast path's counts, which
/// stay below that, index it uncapped: the header, padded, with its length in the last byte,
/// which the line's bytes always overwrite, as they start at most 12 bytes on.
const HEADER_STORES: [[u8; HEADER_STORE]; 256] = {
    let mut stores = [[0; HEADER_STORE]; 256];
    let mut n = 0;
    while n < 256 {
        let header = HEADERS[if n < SPACES_CAP { n } else { SPACES_CAP }];
        let mut i = 0;
        while i < header.len() {
            stores[n][i] = header[i];
            i += 1;
        }
        stores[n][HEADER_STORE - 1] = header.len() as u8;
        n += 1;
    }
    stores
};

/// The room the fast path needs from where a block's first byte goes, exactly: the lines ending
/// in the block reach at most its end, pushed on by their headers, and the last copy piece runs
/// on `COPY - 1` bytes past that (a header store, 16 bytes, reaches less far than the piece after
/// it). The headers are 11 bytes a line, or 12 for a line of seven spaces or more; of up to
/// `BLOCK` lines ending in a block only the first may have begun before it, so each other long
/// header takes eight of the block's bytes and, with them, seven lines' headers: one long header
/// and `BLOCK - 1` short ones are the most. tests/kernel.rs renders that block into every room
/// size, so a byte less here crashes it.
const BLOCK_ROOM: usize = BLOCK + BLOCK * HEADER_LENGTH + 1 + COPY - 1;

/// The length of every header below the cap's.
const HEADER_LENGTH: usize = HEADERS[0].len();

const _: () = assert!(super::chunk_room(0) >= BLOCK_ROOM);

#[cfg(test)]
mod tests {
    use super::super::{Implementation, render_line};
    use super::*;

    /// Every byte of a rendering is written by the kernel, not left from before: the room is
    /// filled with a byte no rendering here holds first. The integration tests render into
    /// rooms that earlier renderings of like inputs wrote, so a byte the kernel skipped could
    /// hold the right value by chance (a first line's last copy piece skipped when it starts at
    /// the line's newline passed them). One newline or space at every position of every length
    /// up to three blocks and a copy piece, so that each line end falls on every piece boundary.
    #[test]
    fn every_byte_of_the_rendering_is_written() {
        const POISON: u8 = 0xAA;
        for implementation in Implementation::available() {
            if implementation == Implementation::Portable {
                continue;
            }
            for length in 0..=3 * BLOCK + COPY {
                for position in 0..length {
                    for (fill, mark) in [(b'x', b'\n'), (b' ', b'\n'), (b'x', b' ')] {
                        let mut chunk = vec![fill; length];
                        chunk[position] = mark;
                        chunk.push(b'\n');
                        let mut expected = Vec::new();
                        for line in chunk.split_inclusive(|&byte| byte == b'\n') {
                            render_line(&mut expected, &line[..line.len() - 1]);
                        }
                        let mut room =
                            vec![MaybeUninit::new(POISON); super::super::chunk_room(chunk.len())];
                        let rendered = implementation.render_into(&chunk, &mut room);
                        assert_eq!(
                            rendered.read,
                            chunk.len(),
                            "{implementation:?} on {chunk:?}"
                        );
                        // SAFETY: every byte of the room was initialised (to the poison byte).
                        let written: Vec<u8> = room[..rendered.written]
                            .iter()
                            .map(|byte| unsafe { byte.assume_init() })
                            .collect();
                        assert_eq!(written, expected, "{implementation:?} on {chunk:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn header_stores_hold_the_headers_and_their_lengths() {
        for (n, store) in HEADER_STORES.iter().enumerate() {
            let header = HEADERS[n.min(SPACES_CAP)];
            assert_eq!(*header, store[..header.len()]);
            assert_eq!(usize::from(store[HEADER_STORE - 1]), header.len());
        }
    }
}
