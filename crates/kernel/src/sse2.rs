//! The kernel for every x86-64 CPU: SSE2 is part of the baseline, so no detection is needed. A
//! block is four 16-byte loads, each compared with `\n` and with a space and reduced to 16 bits by
//! `movemask`. POPCNT is not in the baseline; `count_ones` compiles to the usual shift-and-add bit
//! trick there, a dozen instructions, paid about twice a line.

use std::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8, _mm_storeu_si128,
};
use std::mem::MaybeUninit;

use super::Rendered;
use super::blocks::{BLOCK, BlockScan, COPY, render_blocks};

/// [`super::Implementation::render_into`] with the SSE2 block scan.
pub(super) fn render_into(chunk: &[u8], room: &mut [MaybeUninit<u8>]) -> Rendered {
    render_blocks(Sse2, chunk, room)
}

#[derive(Clone, Copy)]
struct Sse2;

impl BlockScan for Sse2 {
    const POPCNT: bool = false;

    #[inline(always)]
    fn bits(self, block: &[u8; BLOCK], byte: u8) -> u64 {
        let mut bits = 0;
        for (index, piece) in block.as_chunks::<16>().0.iter().enumerate() {
            // SAFETY: SSE2 is in every x86-64 CPU; the unaligned load reads the 16 bytes of
            // `piece`.
            let mask = unsafe {
                let vector = _mm_loadu_si128(piece.as_ptr().cast::<__m128i>());
                _mm_movemask_epi8(_mm_cmpeq_epi8(vector, _mm_set1_epi8(byte as i8)))
            };
            // The cast keeps the 16 bits of the mask, one a byte.
            bits |= u64::from(mask as u16) << (16 * index);
        }
        bits
    }

    #[inline(always)]
    unsafe fn copy(self, from: *const u8, to: *mut u8) {
        let (from, to) = (from.cast::<__m128i>(), to.cast::<__m128i>());
        for piece in 0..COPY / 16 {
            // SAFETY: SSE2 is in every x86-64 CPU; the caller guarantees the `COPY` bytes at
            // each end, which the 16-byte pieces cover.
            unsafe { _mm_storeu_si128(to.add(piece), _mm_loadu_si128(from.add(piece))) };
        }
    }
}
