//! The kernel for any target, in safe code: each 8 bytes of a block as one `u64`, compared with
//! `\n` and with a space bytewise by SWAR arithmetic, the 8 answers gathered into 8 bits.

use super::{BLOCK, BlockScan, Masks, render_blocks};

/// [`super::render_chunk`] with the SWAR block scan.
pub(super) fn render_chunk(out: &mut Vec<u8>, chunk: &[u8]) -> u64 {
    render_blocks(Swar, out, chunk)
}

#[derive(Clone, Copy)]
struct Swar;

impl BlockScan for Swar {
    #[inline(always)]
    fn masks(self, block: &[u8; BLOCK]) -> Masks {
        let mut masks = Masks {
            newlines: 0,
            spaces: 0,
        };
        for (index, word) in block.as_chunks::<8>().0.iter().enumerate() {
            let word = u64::from_le_bytes(*word);
            masks.newlines |= equal_bytes(word, b'\n') << (8 * index);
            masks.spaces |= equal_bytes(word, b' ') << (8 * index);
        }
        masks
    }
}

/// One bit for each byte of `word` (little-endian, so bit `i` is byte `i`) that equals `byte`.
#[inline(always)]
fn equal_bytes(word: u64, byte: u8) -> u64 {
    const LOW_SEVEN: u64 = u64::from_ne_bytes([0x7f; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // Bytes equal to `byte` become zero.
    let zero_where_equal = word ^ u64::from_ne_bytes([byte; 8]);
    // The high bit of each byte says whether the byte is non-zero; adding only the low seven bits
    // means no carry crosses into the next byte, so every byte is told exactly.
    let nonzero = ((zero_where_equal & LOW_SEVEN) + LOW_SEVEN) | zero_where_equal;
    let equal_high_bits = !nonzero & HIGH;
    // The multiplication moves the high bit of byte i to bit 56 + i, with no two partial
    // products landing on the same bit; the shift keeps those eight.
    equal_high_bits.wrapping_mul(0x0002_0408_1020_4081) >> 56
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value beside the wanted one, in every arrangement of the 8 bytes.
    #[test]
    fn equal_bytes_marks_exactly_the_equal_bytes() {
        for byte in [b'\n', b' ', 0, 0x7f, 0x80, 0xff] {
            for other in 0..=u8::MAX {
                for pattern in 0..=u8::MAX {
                    let bytes: [u8; 8] =
                        std::array::from_fn(|i| if pattern & (1 << i) != 0 { byte } else { other });
                    let expected = if other == byte { 0xff } else { pattern };
                    assert_eq!(
                        equal_bytes(u64::from_le_bytes(bytes), byte),
                        u64::from(expected),
                        "{byte:#x} in {bytes:?}"
                    );
                }
            }
        }
    }
}
