//! The kernel for any target, in safe code: the loop that came before the block scans, a
//! `memchr` for each line's end and [`render_line`] for the rest. memchr brings its own vector
//! code for the common targets and `count_spaces` is vectorised by the compiler and stops at the
//! cap, so this loop outruns a block scan in plain `u64` arithmetic (SWAR), which measured a
//! third of its speed on log lines.

use memchr::memchr_iter;

use super::render_line;

/// [`super::render_chunk`] a line at a time.
pub(super) fn render_chunk(out: &mut Vec<u8>, chunk: &[u8]) -> u64 {
    // Headers add at most 12 bytes a line: room for the common case, and `Vec` grows if short
    // lines need more. No slack: nothing here writes past what `Vec` checks.
    out.reserve(chunk.len() + chunk.len() / 8 + 16);
    let mut start = 0;
    let mut lines = 0;
    for end in memchr_iter(b'\n', chunk) {
        render_line(out, &chunk[start..end]);
        start = end + 1;
        lines += 1;
    }
    if start < chunk.len() {
        render_line(out, &chunk[start..]);
        lines += 1;
    }
    lines
}
