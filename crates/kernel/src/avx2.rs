//! The kernel for x86-64 CPUs with AVX2, POPCNT and BMI1: a block is two 32-byte loads, each
//! compared with `\n` and with a space and reduced to 32 bits by `movemask`; the shared line walk
//! then runs on `popcnt`, `tzcnt` and `blsr`.

use std::arch::x86_64::{
    __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8,
    _mm256_storeu_si256,
};
use std::mem::MaybeUninit;

use super::ChunkKernel;
use super::Rendered;
use super::blocks::{BLOCK, BlockScan, COPY, render_blocks};

/// The renderer, if this CPU has every feature it is compiled for.
pub(super) fn kernel() -> Option<ChunkKernel> {
    let runs = is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("popcnt")
        && is_x86_feature_detected!("bmi1");
    runs.then_some(|chunk, room| {
        // SAFETY: this renderer is handed out only after the check above found AVX2, POPCNT and
        // BMI1 on this CPU.
        unsafe { render_into(chunk, room) }
    })
}

/// [`super::Implementation::render_into`] with the code compiled for AVX2, POPCNT and BMI1.
#[target_feature(enable = "avx2,popcnt,bmi1")]
fn render_into(chunk: &[u8], room: &mut [MaybeUninit<u8>]) -> Rendered {
    render_blocks(Avx2(()), chunk, room)
}

/// The AVX2 block scan. A value is made only inside `render_into`, which runs only on CPUs with
/// AVX2, so holding one is the proof that its instructions may run.
#[derive(Clone, Copy)]
struct Avx2(());

impl BlockScan for Avx2 {
    const POPCNT: bool = true;

    #[inline(always)]
    fn bits(self, block: &[u8; BLOCK], byte: u8) -> u64 {
        // SAFETY: the CPU has AVX2 (see `Avx2`), and the two unaligned 32-byte loads read bytes
        // 0..32 and 32..64 of the 64-byte block. The casts keep the 32 bits of each mask, one a
        // byte.
        unsafe {
            let start = block.as_ptr().cast::<__m256i>();
            let byte = _mm256_set1_epi8(byte as i8);
            let half =
                |vector| u64::from(_mm256_movemask_epi8(_mm256_cmpeq_epi8(vector, byte)) as u32);
            half(_mm256_loadu_si256(start)) | half(_mm256_loadu_si256(start.add(1))) << 32
        }
    }

    #[inline(always)]
    unsafe fn copy(self, from: *const u8, to: *mut u8) {
        const { assert!(COPY == 64) };
        // SAFETY: the CPU has AVX2 (see `Avx2`); the caller guarantees the 64 bytes at each end.
        unsafe {
            let (from, to) = (from.cast::<__m256i>(), to.cast::<__m256i>());
            let (low, high) = (_mm256_loadu_si256(from), _mm256_loadu_si256(from.add(1)));
            _mm256_storeu_si256(to, low);
            _mm256_storeu_si256(to.add(1), high);
        }
    }
}
