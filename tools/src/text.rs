//! Prose-like text of a chosen mean line length, for measuring the binaries along line length.
//!
//! The per-line cost of a filter shows on short lines, and real short-line text (manual pages,
//! source code, package lists) is not uniform: it has blank lines, short and long lines, words of
//! every length, indentation and runs of spaces. This generator makes such text with the mean
//! line length (bytes a line, the newline included) as its one knob, so that a sweep compares
//! like with like:
//!
//! - one line in [`BLANK_ONE_IN`] is blank;
//! - the others take a length drawn from a log-normal distribution (spread [`LENGTH_SIGMA`])
//!   whose mean makes the text's mean line length the one asked for;
//! - a line is filled with words of 1 to 14 letters (English-like lengths, some ending in
//!   punctuation) apart by one space, and cut at its length;
//! - one line in [`INDENT_ONE_IN`] is indented by 2 to 16 spaces (less on a line too short), and one in [`RUNS_ONE_IN`]
//!   has runs of 2 to 8 spaces between some words (aligned columns), so that every header, `0`
//!   to `6` and `>6`, occurs from short lines up.
//!
//! Every draw comes from one seeded PCG stream, so a seed gives the same bytes on every run.

use std::io::{self, Write};

use rand_pcg::Pcg64Mcg;
use rand_pcg::rand_core::{Rng, SeedableRng};

/// One line in this many is blank.
pub const BLANK_ONE_IN: u64 = 10;
/// One line in this many is indented.
pub const INDENT_ONE_IN: u64 = 5;
/// One line in this many has runs of spaces between some of its words.
pub const RUNS_ONE_IN: u64 = 8;
/// The spread of the non-blank lines' lengths: the standard deviation of their logarithm. At 0.7,
/// nine lines in ten of text with a mean of 25 bytes are between about 7 and 66 bytes long.
pub const LENGTH_SIGMA: f64 = 0.7;
/// The smallest mean line length the generator takes: below it, lines of at least one byte
/// could not keep the mean.
pub const MIN_MEAN_LINE_LENGTH: u64 = 4;

/// Word lengths, repeated to weight the draw roughly as English prose (mean about 5 letters).
const WORD_LENGTHS: &[usize] = &[
    1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 8, 8, 9, 10, 11, 12, 14,
];
/// Indentation widths, as in source code and manual pages.
const INDENTS: &[usize] = &[2, 4, 4, 4, 8, 8, 12, 16];

/// Text of a chosen mean line length, drawn line by line from a seeded stream.
pub struct TextGenerator {
    rng: Pcg64Mcg,
    /// The log-normal's `mu`: the mean of the logarithm of a non-blank line's content length.
    log_mean: f64,
    line: Vec<u8>,
}

impl TextGenerator {
    /// A generator of text whose lines average `mean_line_length` bytes, the newline included;
    /// `None` below [`MIN_MEAN_LINE_LENGTH`].
    pub fn new(mean_line_length: u64, seed: u64) -> Option<Self> {
        if mean_line_length < MIN_MEAN_LINE_LENGTH {
            return None;
        }
        // Blank lines have no content, so the others carry all of it: their mean content length
        // m satisfies (1 - 1/BLANK_ONE_IN) * m + 1 = mean. A log-normal's mean is
        // exp(mu + sigma^2 / 2).
        let non_blank_share = 1.0 - 1.0 / BLANK_ONE_IN as f64;
        let content_mean = (mean_line_length - 1) as f64 / non_blank_share;
        Some(TextGenerator {
            rng: Pcg64Mcg::seed_from_u64(seed),
            log_mean: content_mean.ln() - LENGTH_SIGMA * LENGTH_SIGMA / 2.0,
            line: Vec::new(),
        })
    }

    /// Writes exactly `bytes` bytes of whole lines, each ending in a newline: the last line is
    /// cut short to fit.
    pub fn write(&mut self, bytes: u64, out: &mut impl Write) -> io::Result<()> {
        let mut left = bytes;
        while left > 0 {
            let room = usize::try_from(left - 1).unwrap_or(usize::MAX);
            let content = self.content_length().min(room);
            self.fill_line(content);
            self.line.push(b'\n');
            out.write_all(&self.line)?;
            left -= self.line.len() as u64;
        }
        Ok(())
    }

    /// A uniform draw below `n` (`n` > 0). The modulo's bias, under n / 2^64, does not matter
    /// for test data.
    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n
    }

    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[self.below(choices.len() as u64) as usize]
    }

    /// A uniform draw in (0, 1]: never 0, whose logarithm the normal draw takes.
    fn unit(&mut self) -> f64 {
        ((self.rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// A line's content length: 0 for a blank line, else a log-normal draw of at least 1.
    fn content_length(&mut self) -> usize {
        if self.one_in(BLANK_ONE_IN) {
            return 0;
        }
        // Box-Muller: one standard normal draw from two uniform ones.
        let normal = (-2.0 * self.unit().ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos();
        // The cast saturates, so even an extreme draw is a valid (long) length.
        ((self.log_mean + LENGTH_SIGMA * normal).exp().round() as usize).max(1)
    }

    /// Fills `self.line` with exactly `length` bytes: indentation, words and the spaces between.
    fn fill_line(&mut self, length: usize) {
        self.line.clear();
        if length == 0 {
            return;
        }
        if self.one_in(INDENT_ONE_IN) {
            // At least one letter after the indentation: a line of spaces only is rare in text.
            let indent = self.pick(INDENTS).min(length - 1);
            self.line.resize(indent, b' ');
        }
        let runs = self.one_in(RUNS_ONE_IN);
        let mut first = true;
        while self.line.len() < length {
            if !first {
                let gap = if runs && self.one_in(3) {
                    2 + self.below(7) as usize
                } else {
                    1
                };
                self.line.resize(self.line.len() + gap, b' ');
            }
            first = false;
            self.push_word();
        }
        // Cut at the length: a long word or run at the end is cut, as a wrapped line would be.
        self.line.truncate(length);
    }

    /// A word of random letters, sometimes capitalised, sometimes ending in punctuation.
    fn push_word(&mut self) {
        let start = self.line.len();
        for _ in 0..self.pick(WORD_LENGTHS) {
            let letter = b'a' + self.below(26) as u8;
            self.line.push(letter);
        }
        if self.one_in(6) {
            self.line[start] = self.line[start].to_ascii_uppercase();
        }
        if self.one_in(8) {
            let mark = self.pick(b".,;:");
            self.line.push(mark);
        }
    }
}
