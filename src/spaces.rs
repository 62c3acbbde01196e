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
/// Counts a block of bytes at a time into a byte-sized counter, which the compiler turns into
/// vector compares and adds (a `usize` counter per byte defeats that), and stops after the block
/// in which the count reaches the cap: log lines reach seven spaces well before their end.
#[inline]
pub fn count_spaces(line: &[u8]) -> usize {
    const BLOCK: usize = 32;
    let count_in = |bytes: &[u8]| {
        bytes
            .iter()
            .fold(0u8, |n, &byte| n + u8::from(byte == b' '))
    };
    let mut count = 0;
    let mut blocks = line.chunks_exact(BLOCK);
    for block in &mut blocks {
        count += usize::from(count_in(block));
        if count >= SPACES_CAP {
            return SPACES_CAP;
        }
    }
    (count + usize::from(count_in(blocks.remainder()))).min(SPACES_CAP)
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

    /// Spaces placed at every position of lines around the block size, against a plain count.
    #[test]
    fn counts_across_block_edges() {
        for length in 0..100 {
            for spaces in 0..=9 {
                for first in 0..length {
                    let mut line = vec![b'x'; length];
                    for position in (first..length).step_by(3).take(spaces) {
                        line[position] = b' ';
                    }
                    let plain = line
                        .iter()
                        .filter(|&&byte| byte == b' ')
                        .count()
                        .min(SPACES_CAP);
                    assert_eq!(count_spaces(&line), plain, "{line:?}");
                }
            }
        }
    }

    #[test]
    fn headers_match_counts() {
        for (n, header) in HEADERS.iter().enumerate().take(SPACES_CAP) {
            assert_eq!(*header, format!("[spaces: {n}]").as_bytes());
        }
        assert_eq!(header(b"a b c d e f g h"), b"[spaces: >6]");
    }
}
