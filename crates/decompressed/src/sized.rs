//! A gzip member of a size known before it is decoded, decoded in one call from a buffer holding
//! all of it into a buffer of exactly that size, by libdeflate: the way htslib, BGZF's reference
//! implementation, decodes `bgzip`'s members. Each member is small (at most 64 KiB decoded) and
//! says its decoded size in its trailer, so nothing streams: one call decodes it with tables built
//! for that member alone, where a streaming decoder starts anew for every member. On 128 MiB of
//! `bgzip`'s output it took 0.70 of flate2's time, member by member on one thread
//! (docs/DECOMPRESS.md).

use std::ptr::NonNull;

use libdeflate_sys::{
    libdeflate_alloc_decompressor, libdeflate_decompressor, libdeflate_free_decompressor,
    libdeflate_gzip_decompress_ex, libdeflate_result_LIBDEFLATE_SUCCESS,
};

/// libdeflate's decompressor: its Huffman tables, rebuilt for each member it decodes.
pub(super) struct SizedMember(NonNull<libdeflate_decompressor>);

// SAFETY: the decompressor is memory libdeflate allocated for this value alone, tied to no
// thread: libdeflate lets any thread use one, one thread at a time, which `&mut self` ensures. A
// `Reader` on one thread holds one and may be sent to another thread.
unsafe impl Send for SizedMember {}

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

    /// The blocks libdeflate allocated for the test's decompressor, and those it freed: counted
    /// by the allocator given to that decompressor alone, so no other test's count here.
    static ALLOCATED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static FREED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    unsafe extern "C" {
        fn malloc(size: usize) -> *mut std::ffi::c_void;
        fn free(block: *mut std::ffi::c_void);
    }

    unsafe extern "C" fn counted_malloc(size: usize) -> *mut std::ffi::c_void {
        ALLOCATED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        // SAFETY: C's `malloc`, as libdeflate's default allocator calls it.
        unsafe { malloc(size) }
    }

    unsafe extern "C" fn counted_free(block: *mut std::ffi::c_void) {
        FREED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        // SAFETY: `block` came from `counted_malloc`, C's `malloc`, and libdeflate frees it once.
        unsafe { free(block) }
    }

    /// A decompressor is freed when its member decoder drops: every block libdeflate allocated
    /// for it is given back, and none before.
    #[test]
    fn a_decompressor_is_freed_when_it_drops() {
        use libdeflate_sys::{libdeflate_alloc_decompressor_ex, libdeflate_options};
        use std::sync::atomic::Ordering::SeqCst;
        let options = libdeflate_options {
            sizeof_options: size_of::<libdeflate_options>(),
            malloc_func: Some(counted_malloc),
            free_func: Some(counted_free),
        };
        // SAFETY: the options are whole and live for the call; libdeflate keeps the two
        // functions, which live as long as the program, in the decompressor.
        let decompressor = unsafe { libdeflate_alloc_decompressor_ex(&options) };
        let mut sized = SizedMember(NonNull::new(decompressor).unwrap());
        let text = b"a line\n".repeat(50);
        let mut decoded = vec![0; text.len()];
        assert!(sized.decode(&gzip(&text), &mut decoded) && decoded == text);
        let allocated = ALLOCATED.load(SeqCst);
        assert!(
            allocated > 0 && FREED.load(SeqCst) == 0,
            "{allocated} allocated"
        );
        drop(sized);
        assert_eq!(FREED.load(SeqCst), allocated);
    }
}
