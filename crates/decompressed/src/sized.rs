//! A gzip member of a size known before it is decoded, decoded in one call from a buffer
//! holding all of it into a buffer of exactly that size, by libdeflate: the way htslib, BGZF's reference implementation, decodes
//! `bgzip`'s members. Each member is small (at most 64 KiB decoded) and says its decoded size
//! in its trailer, so nothing streams: one call decodes it with tables built for that member
//! alone, where a streaming decoder starts anew for every member. On 128 MiB of `bgzip`'s
//! output it took 0.70 of flate2's time, member by member on one thread (docs/DECOMPRESS.md).

use std::ptr::NonNull;

use libdeflate_sys::{
    libdeflate_alloc_decompressor, libdeflate_decompressor, libdeflate_free_decompressor,
    libdeflate_gzip_decompress_ex, libdeflate_result_LIBDEFLATE_SUCCESS,
};

/// libdeflate's decompressor: its Huffman tables, rebuilt for each member it decodes.
pub(super) struct SizedMember(NonNull<libdeflate_decompressor>);

impl SizedMember {
    /// A decompressor, or `None` where there is no memory for it.
    pub(super) fn new() -> Option<Self> {
        // SAFETY: takes nothing; a null return (no memory) is turned into `None`.
        NonNull::new(unsafe { libdeflate_alloc_decompressor() }).map(SizedMember)
    }

    /// Decodes `member`, which must be one gzip member exactly, into the whole of `decoded`:
    /// true only where the member's deflate data and trailer end at its end and it decodes to
    /// exactly `decoded.len()` bytes, with the trailer's CRC-32 and size matching them. On
    /// false, `decoded` holds bytes of no meaning, and the member is for another decoder to
    /// decode, and to tell what is wrong with it.
    pub(super) fn decode(&mut self, member: &[u8], decoded: &mut [u8]) -> bool {
        let (mut used, mut made) = (0, 0);
        // SAFETY: the decompressor is this value's alone (`&mut self`) and live until it drops;
        // libdeflate reads at most `member.len()` bytes from `member`, writes at most
        // `decoded.len()` bytes into `decoded`, and writes the two counts, which are live locals.
        let result = unsafe {
            libdeflate_gzip_decompress_ex(
                self.0.as_ptr(),
                member.as_ptr().cast(),
                member.len(),
                decoded.as_mut_ptr().cast(),
                decoded.len(),
                &mut used,
                &mut made,
            )
        };
        result == libdeflate_result_LIBDEFLATE_SUCCESS
            && used == member.len()
            && made == decoded.len()
    }
}

impl Drop for SizedMember {
    fn drop(&mut self) {
        // SAFETY: the decompressor came from `libdeflate_alloc_decompressor` and is freed once,
        // here, after its last use.
        unsafe { libdeflate_free_decompressor(self.0.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipelines_testing::gzip;

    #[test]
    fn a_member_decodes_only_whole_into_its_size() {
        let text = b"one line\nanother line\n".repeat(100);
        let member = gzip(&text);
        let mut sized = SizedMember::new().unwrap();
        let mut decoded = vec![0; text.len()];
        assert!(sized.decode(&member, &mut decoded));
        assert_eq!(decoded, text);
        // Too little room, too much, or a member with bytes after its trailer.
        assert!(!sized.decode(&member, &mut decoded[1..]));
        assert!(!sized.decode(&member, &mut vec![0; text.len() + 1]));
        let mut longer = member.clone();
        longer.push(0);
        assert!(!sized.decode(&longer, &mut decoded));
        // A damaged CRC-32, or deflate data the member ends inside.
        let mut damaged = member.clone();
        let crc = damaged.len() - 8;
        damaged[crc] ^= 1;
        assert!(!sized.decode(&damaged, &mut decoded));
        assert!(!sized.decode(&member[..member.len() - 9], &mut decoded));
    }
}
