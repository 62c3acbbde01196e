//! zstd's frames (RFC 8878): its magic, the skippable frames it shares with LZ4, and where a
//! frame ends, read from its headers without decoding it. Each function reads the file through
//! `number(at, length)`: the little-endian number in the `length` bytes at `at`, or `None` where
//! the file ends before them.

use std::ops::Range;

/// The widest window a frame may have to be decoded beside others: `zstd -19`'s and `pzstd`'s
/// widest (8 MiB). Frames wider than that are rare, and each decoder holds its frame's window, so
/// a file of such frames is decoded by one decoder, as a file of one frame is.
pub(super) const WINDOW: u64 = 8 << 20;

/// zstd's frame magic, little-endian.
pub(super) const MAGIC: u64 = 0xfd2f_b528;

/// A skippable frame's magics (zstd's and LZ4's): `0x184D2A50` to `0x184D2A5F`.
pub(super) const SKIPPABLE: Range<u64> = 0x184d_2a50..0x184d_2a60;

/// A skippable frame's header: its magic (one of [`SKIPPABLE`]) and its content's length, both
/// 4 bytes, little-endian.
pub(super) const SKIPPABLE_HEADER: usize = 8;

/// Where the skippable frame at `at` ends: after its header and the length its header gives.
pub(super) fn skippable_end(at: u64, number: impl Fn(u64, usize) -> Option<u64>) -> Option<u64> {
    Some(at + SKIPPABLE_HEADER as u64 + number(at + 4, 4)?)
}

/// Where the zstd frame at `start` ends, or `None` where a decoder of its own could not decode it
/// alone (a dictionary, a window wider than [`WINDOW`], a reserved bit or block type). What it
/// reads is RFC 8878 §3.1.1.1: the frame header's descriptor byte, then its window or content
/// size field, then each block's header.
pub(super) fn frame_end(start: u64, number: impl Fn(u64, usize) -> Option<u64>) -> Option<u64> {
    let descriptor = number(start + 4, 1)?;
    let single_segment = descriptor & 0x20 != 0;
    // A single segment's window is its content's size, whose field is then never empty.
    let size_field = match (descriptor >> 6, single_segment) {
        (0, false) => 0,
        (0, true) => 1,
        (flag, _) => 1 << flag,
    };
    let reserved = descriptor & 0x08 != 0;
    let checksum = if descriptor & 0x04 != 0 { 4 } else { 0 };
    let dictionary = descriptor & 0x03 != 0;
    if reserved || dictionary {
        return None;
    }
    let (window, header) = match single_segment {
        true => {
            let size = number(start + 5, size_field)?;
            // A 2-byte field holds the size less 256.
            let size = if size_field == 2 { size + 256 } else { size };
            (size, 5 + size_field as u64)
        }
        false => {
            let descriptor = number(start + 5, 1)?;
            let base = 1u64 << (10 + (descriptor >> 3));
            (base + base / 8 * (descriptor & 7), 6 + size_field as u64)
        }
    };
    if window > WINDOW {
        return None;
    }
    let mut at = start + header;
    loop {
        let block = number(at, 3)?;
        let last = block & 1 != 0;
        let size = block >> 3;
        at += 3 + match (block >> 1) & 3 {
            // RLE: one byte, repeated `size` times.
            1 => 1,
            // Reserved.
            3 => return None,
            // Raw or compressed: `size` bytes.
            _ => size,
        };
        if last {
            return Some(at + checksum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{frame, skippable, text};
    use super::*;

    /// `bytes` read as the walk reads a file: the little-endian number in `length` bytes at `at`.
    fn number_in(bytes: &[u8]) -> impl Fn(u64, usize) -> Option<u64> + '_ {
        |at, length| {
            let field = bytes.get(usize::try_from(at).ok()?..)?.get(..length)?;
            let mut number = [0; 8];
            number[..length].copy_from_slice(field);
            Some(u64::from_le_bytes(number))
        }
    }

    /// A frame ends where the encoder ended it, checksum and all, wherever it starts; a
    /// skippable frame after its length. A frame that names a dictionary, whose window is wider
    /// than [`WINDOW`], whose headers are cut or that holds a block of the reserved type has no
    /// end to be decoded apart at.
    #[test]
    fn a_frame_ends_where_its_headers_say_unless_it_cannot_be_decoded_alone() {
        let plain = frame(&text(0..2000), |_| {});
        let checked = frame(&text(0..2000), |encoder| {
            encoder.include_checksum(true).unwrap();
        });
        for bytes in [&plain, &checked] {
            let after = [b"before", &bytes[..], b"after"].concat();
            assert_eq!(
                frame_end(6, number_in(&after)),
                Some(6 + bytes.len() as u64)
            );
        }
        let skipped = [&skippable(b"nine byte")[..], b"after"].concat();
        assert_eq!(skippable_end(0, number_in(&skipped)), Some(8 + 9));
        let mut with_dictionary = plain.clone();
        with_dictionary[4] |= 1;
        let wide = frame(&text(0..2000), |encoder| {
            encoder.include_contentsize(false).unwrap();
            encoder.window_log(24).unwrap();
        });
        // Cut inside its first block's header: how far its blocks go is for the walk to check.
        let cut = &plain[..7];
        // A block of the reserved type, 3: libzstd refuses it, and its size means nothing.
        let mut reserved_block = made(0x00, &[13 << 3]);
        reserved_block[6] |= 3 << 1;
        let cases = [&with_dictionary[..], &wide, cut, &reserved_block];
        for (n, bytes) in cases.iter().enumerate() {
            assert_eq!(frame_end(0, number_in(bytes)), None, "case {n}");
        }
    }

    /// A frame made by hand from its descriptor byte and the field after it (a window
    /// descriptor or the content's size), with one last raw block of one byte.
    fn made(descriptor: u8, field: &[u8]) -> Vec<u8> {
        let block = [0x09, 0x00, 0x00, b'x'];
        [&MAGIC.to_le_bytes()[..4], &[descriptor], field, &block].concat()
    }

    /// RFC 8878 §3.1.1.1.2: a window is taken up to [`WINDOW`] and no wider, whether a single
    /// segment's content size gives it (a 2-byte field holding the size less 256, a 4-byte one
    /// the size) or a window descriptor does (an exponent and eighths of it).
    #[test]
    fn a_window_up_to_the_widest_is_decoded_apart() {
        let widest = u32::try_from(WINDOW).unwrap();
        let cases: [(u8, &[u8], bool); 7] = [
            (0x60, &[0x00, 0x00], true),
            (0x60, &[0xff, 0xff], true),
            (0xa0, &widest.to_le_bytes(), true),
            (0xa0, &(widest + 1).to_le_bytes(), false),
            (0x00, &[13 << 3], true),
            (0x00, &[(12 << 3) | 7], true),
            (0x00, &[(13 << 3) | 1], false),
        ];
        for (n, (descriptor, field, apart)) in cases.into_iter().enumerate() {
            let frame = made(descriptor, field);
            let end = apart.then_some(frame.len() as u64);
            assert_eq!(frame_end(0, number_in(&frame)), end, "case {n}");
        }
    }
}
