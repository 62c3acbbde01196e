//! The kernel for x86-64 CPUs with AVX-512 (F and BW), POPCNT and BMI1: a block is one 64-byte
//! load, compared with `\n` and with a space straight into a 64-bit mask register
//! (`vpcmpeqb` into `k`, then `kmovq`), and a line's copy piece is one 64-byte load and store;
//! the shared line walk (`blocks.rs`) is the AVX2 kernel's.
//!
//! valgrind does not run AVX-512: under it the CPU it reports has none, so the dispatch picks
//! AVX2 there and this file is checked by the guard-page tests alone (docs/KERNEL.md).

use std::arch::x86_64::{
    __m512i, _mm512_cmpeq_epi8_mask, _mm512_loadu_si512, _mm512_set1_epi8, _mm512_storeu_si512,
};
use std::mem::MaybeUninit;

use super::ChunkKernel;
use super::Rendered;
use super::blocks::{BLOCK, BlockScan, COPY, render_blocks};

/// The renderer, if this CPU has every feature it is compiled for.
pub(super) fn kernel() -> Option<ChunkKernel> {
    let runs = is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("popcnt")
        && is_x86_feature_detected!("bmi1");
    runs.then_some(|chunk, room| {
        // SAFETY: this renderer is handed out only after the check above found AVX-512F and BW,
        // POPCNT and BMI1 on this CPU.
        unsafe { render_into(chunk, room) }
    })
}

/// [`super::Implementation::render_into`] with the code compiled for AVX-512F and BW, POPCNT and
/// BMI1.
#[target_feature(enable = "avx512f,avx512bw,popcnt,bmi1")]
fn render_into(chunk: &[u8], room: &mut [MaybeUninit<u8>]) -> Rendered {
    render_blocks(Avx512(()), chunk, room)
}

/// The AVX-512BW block scan. A value is made only inside `render_into`, which runs only on CPUs
/// with AVX-512F and BW, so holding one is the proof that their instructions may run.
#[derive(Clone, Copy)]
struct Avx512(());

impl BlockScan for Avx512 {
    const POPCNT: bool = true;

    #[inline(always)]
    fn bits(self, block: &[u8; BLOCK], byte: u8) -> u64 {
        const { assert!(BLOCK == 64) };
        // SAFETY: the CPU has AVX-512F and BW (see `Avx512`), and the unaligned 64-byte load
        // reads the block's 64 bytes.
        unsafe {
            let vector = _mm512_loadu_si512(block.as_ptr().cast::<__m512i>());
            _mm512_cmpeq_epi8_mask(vector, _mm512_set1_epi8(byte as i8))
        }
    }

    #[inline(always)]
    unsafe fn copy(self, from: *const u8, to: *mut u8) {
        const { assert!(COPY == 64) };
        // SAFETY: the CPU has AVX-512F (see `Avx512`); the caller guarantees the 64 bytes at each
        // end.
        unsafe {
            _mm512_storeu_si512(
                to.cast::<__m512i>(),
                _mm512_loadu_si512(from.cast::<__m512i>()),
            );
        }
    }
}
