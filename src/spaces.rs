//! The kernel: how many ASCII spaces (0x20) a line holds, and the header that says so.
//!
//! Only 0 to 6 are told apart; everything from 7 up shares the header `>6`, so counting may stop
//! there. Tabs, `\r` and other white space are not spaces.

/// The count at which headers stop telling counts apart.
pub const SPACES_CAP: usize = 7;

/// The header for each capped count: `HEADERS[n]` is what precedes a line with `n` spaces.
pub const HEADERS: [&[u8]; SPACES_CAP + 1] = [
    b"[spaces: 0]",
    b"[spaces: 1]",
    b"[spaces: 2]",
    b"[spaces: 3]",
    b"[spaces: 4]",
    b"[spaces: 5]",
    b"[spaces: 6]",
    b"[spaces: >6]",
];

/// The number of 0x20 bytes in `line`, capped at [`SPACES_CAP`].
///
/// A plain full count: the compiler vectorises it, which beats stopping early on the short,
/// space-rich lines of logs (see `benches/kernel.rs`).
#[inline]
pub fn count_spaces(line: &[u8]) -> usize {
    line.iter()
        .filter(|&&byte| byte == b' ')
        .count()
        .min(SPACES_CAP)
}

/// The header for `line`.
#[inline]
pub fn header(line: &[u8]) -> &'static [u8] {
    HEADERS[count_spaces(line)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_the_space_byte() {
        assert_eq!(count_spaces(b""), 0);
        assert_eq!(count_spaces(b"\t\r\x0b\x0c\xa0"), 0);
        assert_eq!(count_spaces(b"a b"), 1);
        assert_eq!(count_spaces(b"      "), 6);
        assert_eq!(count_spaces(b"       "), 7);
        assert_eq!(count_spaces(&[b' '; 1000]), 7);
    }

    #[test]
    fn headers_match_counts() {
        for (n, header) in HEADERS.iter().enumerate().take(SPACES_CAP) {
            assert_eq!(*header, format!("[spaces: {n}]").as_bytes());
        }
        assert_eq!(header(b"a b c d e f g h"), b"[spaces: >6]");
    }
}
