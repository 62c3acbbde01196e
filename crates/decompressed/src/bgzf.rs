//! BGZF (`bgzip`'s gzip, SAM/BAM's specification §4.1): gzip whose every member says its own
//! size, in a `BC` subfield of the header's extra field that holds the member's size less one.
//! What the walk and the part decoders know of its header: where a member ends, and which
//! members have `bgzip`'s own header.

use super::BUFFER;
use super::gzip::{DEFLATE, MAGIC};

/// The bytes of a BGZF member's header that `bgzip` writes: gzip's fixed 10, the extra field's
/// length, and the extra field holding the `BC` subfield alone (RFC 1952 §2.3, SAM/BAM §4.1).
pub(super) const BGZIP_HEADER: usize = 12 + 6;

/// The gzip header's flag that an extra field follows (RFC 1952 §2.3.1).
pub(super) const FEXTRA: u8 = 0x04;

/// gzip's magic and deflate's method byte, little-endian.
pub(super) const GZIP: u64 = u32::from_le_bytes([MAGIC[0], MAGIC[1], DEFLATE, 0]) as u64;

/// The member `bytes` begin with and the size it decodes to, where its header is the one
/// `bgzip` writes ([`BGZIP_HEADER`] bytes: no flag but the extra field's, which holds the `BC`
/// subfield alone) and it decodes to at most a [`BUFFER`], as its trailer says.
pub(super) fn bgzip_member(bytes: &[u8]) -> Option<(&[u8], usize)> {
    let size = bgzip_size(bytes.first_chunk()?)?;
    let member = bytes.get(..size).filter(|_| size >= BGZIP_HEADER + 8)?;
    let decoded = u32::from_le_bytes(*member.last_chunk()?) as usize;
    (decoded <= BUFFER).then_some((member, decoded))
}

/// The size of the member that `header` begins, where it is the header `bgzip` writes.
pub(super) fn bgzip_size(header: &[u8; BGZIP_HEADER]) -> Option<usize> {
    let gzip = header[..4] == [MAGIC[0], MAGIC[1], DEFLATE, FEXTRA];
    let bc = header[10..16] == [6, 0, b'B', b'C', 2, 0];
    let size = usize::from(u16::from_le_bytes([header[16], header[17]])) + 1;
    (gzip && bc).then_some(size)
}

/// Where the gzip member at `at`, `available` bytes before the file's end, ends as its BGZF `BC`
/// subfield says (its size less one), or `None` where it has none; `read(at, bytes)` fills
/// `bytes` from the file, or gives `None` where it cannot. What it reads is RFC 1952 §2.3: the
/// flags byte, then the extra field's length and its subfields, each an ID of two bytes, a length
/// of two, and that many bytes. The header is read at once, [`BGZIP_HEADER`] bytes (and the rest
/// of a longer extra field after them): the walk is what the decoders take turns at, and reading
/// each field apart took six `pread`s a member, 12,600 on 128 MiB of `bgzip`'s output.
pub(super) fn member_end(
    at: u64,
    available: u64,
    read: impl Fn(u64, &mut [u8]) -> Option<()>,
) -> Option<u64> {
    let mut header = vec![0; BGZIP_HEADER.min(usize::try_from(available).unwrap_or(usize::MAX))];
    read(at, &mut header)?;
    if header.len() < 12 || header[3] & FEXTRA == 0 {
        return None;
    }
    let end = 12 + usize::from(u16::from_le_bytes([header[10], header[11]]));
    if header.len() < end {
        header.resize(end, 0);
        read(at, &mut header)?;
    }
    let mut fields = &header[12..end];
    while let Some((&[id0, id1, length0, length1], rest)) = fields.split_first_chunk() {
        let length = usize::from(u16::from_le_bytes([length0, length1]));
        let (field, after) = rest.split_at_checked(length)?;
        if [id0, id1] == *b"BC"
            && let Ok(&size) = <&[u8; 2]>::try_from(field)
        {
            // The member has at least its header and its 8-byte trailer.
            let size = u64::from(u16::from_le_bytes(size)) + 1;
            return (size >= end as u64 + 8).then_some(at + size);
        }
        fields = after;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bgzf_member, text};
    use super::*;
    use pipelines_testing::gzip;

    /// Only a member with `bgzip`'s own header, whole, that decodes to at most a piece is one
    /// for libdeflate to decode whole.
    #[test]
    fn only_members_with_bgzips_own_header_go_to_libdeflate() {
        let text = text(0..1000);
        let member = bgzf_member(&text, 0, None);
        let next = [&member[..], b"next"].concat();
        assert_eq!(bgzip_member(&next), Some((&member[..], text.len())));
        let mut named = member.clone();
        named[3] |= 0x08;
        let cases = [
            bgzf_member(&text, 5, None),
            named,
            member[..member.len() - 1].to_vec(),
            bgzf_member(&text, 0, Some(25)),
            // One byte short of a header and a trailer, where the bytes its trailer would hold
            // say a size a piece holds.
            bgzf_member(b"", 0, Some(25)),
            bgzf_member(&vec![b'a'; BUFFER + 1], 0, None),
        ];
        for (n, bytes) in cases.iter().enumerate() {
            assert_eq!(bgzip_member(bytes), None, "case {n}");
        }
        assert!(bgzip_member(&bgzf_member(&vec![b'a'; BUFFER], 0, None)).is_some());
        // The smallest: bgzip's end-of-file marker, 28 bytes that decode to none.
        let marker = bgzf_member(b"", 0, None);
        assert_eq!(marker.len(), 28);
        assert_eq!(bgzip_member(&marker), Some((&marker[..], 0)));
    }

    /// What [`member_end`] finds in `bytes`, read as the walk reads a file.
    fn member_end_in(bytes: &[u8]) -> Option<u64> {
        member_end_and_reads(bytes).0
    }

    /// [`member_end_in`], and how many reads it took.
    fn member_end_and_reads(bytes: &[u8]) -> (Option<u64>, usize) {
        let reads = std::cell::Cell::new(0);
        let read = |at: u64, into: &mut [u8]| {
            reads.set(reads.get() + 1);
            let from = bytes.get(usize::try_from(at).ok()?..)?.get(..into.len())?;
            into.copy_from_slice(from);
            Some(())
        };
        let end = member_end(0, bytes.len() as u64, read);
        (end, reads.get())
    }

    /// `bgzip`'s own header is read at once; a longer extra field takes one read more.
    #[test]
    fn a_bgzip_header_is_read_at_once() {
        let text = text(0..100);
        for (before, reads) in [(0, 1), (5, 2)] {
            let member = bgzf_member(&text, before, None);
            let end = Some(member.len() as u64);
            assert_eq!(member_end_and_reads(&member), (end, reads), "{before}");
        }
    }

    /// A member ends where its `BC` field says, another field before it or not; one without the
    /// field or the flag that says an extra field follows, with a field of another length, a size
    /// shorter than a member, or a header cut short has no end to be found.
    #[test]
    fn a_member_ends_where_its_bc_field_says() {
        let text = text(0..1000);
        for before in [0, 2, 5] {
            let member = bgzf_member(&text, before, None);
            let after = [&member[..], b"after"].concat();
            assert_eq!(member_end_in(&after), Some(member.len() as u64), "{before}");
        }
        let mut wrong_length = bgzf_member(&text, 0, None);
        // The `BC` field's length, 2, made 3.
        wrong_length[14] = 3;
        let whole = bgzf_member(&text, 0, None);
        let mut no_extra_flag = whole.clone();
        no_extra_flag[3] &= !FEXTRA;
        let cases = [
            gzip(&text),
            no_extra_flag,
            wrong_length,
            bgzf_member(&text, 0, Some(20)),
            whole[..8].to_vec(),
            whole[..15].to_vec(),
        ];
        for (n, bytes) in cases.iter().enumerate() {
            assert_eq!(member_end_in(bytes), None, "case {n}");
        }
    }
}
