//! BGZF (`bgzip`'s gzip, SAM/BAM's specification §4.1): gzip whose every member says its own
//! size, in a `BC` subfield of the header's extra field that holds the member's size less one.
//! What the walk and the part decoders know of its header.

use super::BUFFER;

/// The bytes of a BGZF member's header that `bgzip` writes: gzip's fixed 10, the extra field's
/// length, and the extra field holding the `BC` subfield alone (RFC 1952 §2.3, SAM/BAM §4.1).
pub(super) const BGZIP_HEADER: usize = 12 + 6;

/// The gzip header's flag that an extra field follows (RFC 1952 §2.3.1).
pub(super) const FEXTRA: u8 = 0x04;

/// gzip's magic and deflate's method byte, little-endian.
pub(super) const GZIP: u64 = 0x08_8b1f;

/// The member `bytes` begin with and the size it decodes to, where its header is the one
/// `bgzip` writes ([`BGZIP_HEADER`] bytes: no flag but the extra field's, which holds the `BC`
/// subfield alone) and it decodes to at most a [`BUFFER`], as its trailer says.
pub(super) fn bgzip_member(bytes: &[u8]) -> Option<(&[u8], usize)> {
    let header: &[u8; BGZIP_HEADER] = bytes.first_chunk()?;
    let gzip = header[..4] == [0x1f, 0x8b, 8, FEXTRA];
    let bc = header[10..16] == [6, 0, b'B', b'C', 2, 0];
    let size = usize::from(u16::from_le_bytes([header[16], header[17]])) + 1;
    let member = bytes
        .get(..size)
        .filter(|_| gzip && bc && size >= BGZIP_HEADER + 8)?;
    let decoded = u32::from_le_bytes(*member.last_chunk()?) as usize;
    (decoded <= BUFFER).then_some((member, decoded))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bgzf_member, text};
    use super::*;

    /// Only a member with `bgzip`'s own header, whole, that decodes to at most a piece is one
    /// for libdeflate to decode whole.
    #[test]
    fn only_members_with_bgzips_own_header_decode_whole() {
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
            bgzf_member(&vec![b'a'; BUFFER + 1], 0, None),
        ];
        for (n, bytes) in cases.iter().enumerate() {
            assert_eq!(bgzip_member(bytes), None, "case {n}");
        }
        assert!(bgzip_member(&bgzf_member(&vec![b'a'; BUFFER], 0, None)).is_some());
    }
}
