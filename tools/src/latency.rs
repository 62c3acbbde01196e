//! The latency probe's parts that need no processes: the lines it sends, the check of what comes
//! back, and latency percentiles.
//!
//! Every probe line carries its sequence number, so the output for line `n` is known exactly:
//! anything lost, repeated, reordered or altered is caught at the first line where it shows.

use std::time::Duration;

/// Digits of the zero-padded sequence number that starts every probe line.
const SEQ_DIGITS: usize = 10;

/// Bytes after the spaced words, so a probe line is about as long as a short log line.
const TAIL: &[u8] = b":latency-probe-payload-abcdefghijklmnopqrstuvwxyz";

/// The header the contract requires for a line with `spaces` spaces: written out here, apart
/// from the library's table, so the probe checks the binaries rather than trusting their code.
fn header(spaces: usize) -> &'static [u8] {
    const HEADERS: [&[u8]; 8] = [
        b"[spaces: 0]",
        b"[spaces: 1]",
        b"[spaces: 2]",
        b"[spaces: 3]",
        b"[spaces: 4]",
        b"[spaces: 5]",
        b"[spaces: 6]",
        b"[spaces: >6]",
    ];
    HEADERS[spaces.min(7)]
}

/// Spaces in line `seq`: 0 to 8 in turn, so every header occurs, `>6` from both 7 and 8.
fn spaces_in(seq: u64) -> usize {
    (seq % 9) as usize
}

/// As many ` w` words as a line can have: line `seq` takes the first [`spaces_in`]`(seq)` of them.
const WORDS: &[u8] = b" w w w w w w w w";

/// `"00"` to `"99"`, so numbers are written two digits per division: the probe writes and checks
/// millions of lines a second at `max` and should stay faster than the binaries it measures.
const DIGIT_PAIRS: [u8; 200] = {
    let mut pairs = [0; 200];
    let mut n = 0;
    while n < 100 {
        pairs[2 * n] = b'0' + (n / 10) as u8;
        pairs[2 * n + 1] = b'0' + (n % 10) as u8;
        n += 1;
    }
    pairs
};

/// Appends line `seq` without its `\n`: the number, one ` w` per space, then [`TAIL`]. Numbers
/// past ten digits wrap, which no bounded run reaches.
fn push_body(out: &mut Vec<u8>, seq: u64) {
    let mut digits = [0; SEQ_DIGITS];
    let mut rest = seq;
    for pair in digits.rchunks_exact_mut(2) {
        let two = (rest % 100) as usize;
        pair.copy_from_slice(&DIGIT_PAIRS[2 * two..2 * two + 2]);
        rest /= 100;
    }
    out.extend_from_slice(&digits);
    out.extend_from_slice(&WORDS[..2 * spaces_in(seq)]);
    out.extend_from_slice(TAIL);
}

/// Appends probe line `seq`, with its `\n`, as the probe sends it.
pub fn push_line(out: &mut Vec<u8>, seq: u64) {
    push_body(out, seq);
    out.push(b'\n');
}

/// Appends the output the contract requires for probe line `seq`, without its `\n`.
pub fn push_expected(out: &mut Vec<u8>, seq: u64) {
    out.extend_from_slice(header(spaces_in(seq)));
    push_body(out, seq);
}

/// The sequence number an output line claims to carry, if it looks like a probe line at all.
fn claimed_seq(line: &[u8]) -> Option<u64> {
    let after_header = line.iter().position(|&byte| byte == b']')? + 1;
    let digits = line.get(after_header..after_header + SEQ_DIGITS)?;
    digits.iter().try_fold(0u64, |seq, &byte| {
        byte.is_ascii_digit()
            .then(|| seq * 10 + u64::from(byte - b'0'))
    })
}

/// A line for an error message: escaped, and cut short if long.
fn shown(line: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(line).escape_debug().collect();
    match text.char_indices().nth(120) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

/// Checks output lines, in the order they come out, against the probe lines sent.
#[derive(Debug, Default)]
pub struct Verifier {
    /// The sequence number the next output line must carry; also how many lines have passed.
    next: u64,
    /// Scratch space for the expected output of line `next`.
    expected: Vec<u8>,
}

impl Verifier {
    /// A verifier expecting line 0 first.
    pub fn new() -> Self {
        Verifier::default()
    }

    /// How many lines have passed the check.
    pub fn passed(&self) -> u64 {
        self.next
    }

    /// Checks that `line` (without its `\n`) is exactly the output for the next line sent, and
    /// returns that line's sequence number; otherwise says what went wrong.
    pub fn check(&mut self, line: &[u8]) -> Result<u64, String> {
        let seq = self.next;
        self.expected.clear();
        push_expected(&mut self.expected, seq);
        if line == self.expected.as_slice() {
            self.next += 1;
            return Ok(seq);
        }
        Err(match claimed_seq(line) {
            Some(claimed) if claimed == seq => format!(
                "line {seq} came back altered: expected \"{}\", got \"{}\"",
                shown(&self.expected),
                shown(line)
            ),
            Some(claimed) if claimed > seq => {
                format!(
                    "line {seq} is missing or out of order: line {claimed} came out in its place"
                )
            }
            Some(claimed) => {
                format!("line {claimed} came out again or out of order, where line {seq} was due")
            }
            None => format!(
                "unexpected output where line {seq} was due: \"{}\"",
                shown(line)
            ),
        })
    }
}

/// Latencies of many lines, kept exactly but compactly: lines that were written in one write and
/// read in one read share one latency, so a run of them is stored once with its count, and memory
/// grows with the number of writes and reads rather than with the number of lines.
#[derive(Debug, Default)]
pub struct Latencies {
    /// (latency in nanoseconds, lines) in the order recorded.
    runs: Vec<(u64, u64)>,
}

/// Percentiles of a run's latencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// How many lines were measured.
    pub lines: u64,
    /// The fastest line's latency.
    pub min: Duration,
    /// The median: half the lines took at most this.
    pub p50: Duration,
    /// 99% of the lines took at most this.
    pub p99: Duration,
    /// 99.9% of the lines took at most this.
    pub p999: Duration,
    /// The slowest line's latency.
    pub max: Duration,
}

impl Latencies {
    /// No latencies yet.
    pub fn new() -> Self {
        Latencies::default()
    }

    /// Records one line that took `latency` from write to read.
    pub fn record(&mut self, latency: Duration) {
        let nanos = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
        match self.runs.last_mut() {
            Some((last, lines)) if *last == nanos => *lines += 1,
            _ => self.runs.push((nanos, 1)),
        }
    }

    /// Min, max and nearest-rank percentiles (the smallest latency that at least that share of
    /// lines did not exceed); `None` when nothing was recorded.
    pub fn summary(mut self) -> Option<Summary> {
        self.runs.sort_unstable();
        let lines: u64 = self.runs.iter().map(|&(_, count)| count).sum();
        let &(min, _) = self.runs.first()?;
        let &(max, _) = self.runs.last()?;
        let percentile = |per_mille: u64| {
            // Nearest rank: ceil(lines * p), at least 1.
            let rank = (lines * per_mille).div_ceil(1000).max(1);
            let mut seen = 0;
            for &(nanos, count) in &self.runs {
                seen += count;
                if seen >= rank {
                    return Duration::from_nanos(nanos);
                }
            }
            Duration::from_nanos(max)
        };
        Some(Summary {
            lines,
            min: Duration::from_nanos(min),
            p50: percentile(500),
            p99: percentile(990),
            p999: percentile(999),
            max: Duration::from_nanos(max),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(seq: u64) -> Vec<u8> {
        let mut out = Vec::new();
        push_line(&mut out, seq);
        out
    }

    fn expected(seq: u64) -> Vec<u8> {
        let mut out = Vec::new();
        push_expected(&mut out, seq);
        out
    }

    #[test]
    fn lines_carry_their_number_and_cycle_through_every_header() {
        assert_eq!(
            line(42),
            b"0000000042 w w w w w w:latency-probe-payload-abcdefghijklmnopqrstuvwxyz\n"
        );
        assert!(line(1_234_567_890).starts_with(b"1234567890:"));
        assert!(expected(42).starts_with(b"[spaces: 6]0000000042 w"));
        assert!(expected(0).starts_with(b"[spaces: 0]0000000000:"));
        assert!(expected(7).starts_with(b"[spaces: >6]0000000007 w"));
        assert!(expected(8).starts_with(b"[spaces: >6]0000000008 w"));
        for seq in 0..9 {
            let spaces = line(seq).iter().filter(|&&b| b == b' ').count();
            assert_eq!(spaces, seq as usize);
        }
    }

    #[test]
    fn verifier_accepts_the_lines_in_order() {
        let mut verifier = Verifier::new();
        for seq in 0..20 {
            assert_eq!(verifier.check(&expected(seq)), Ok(seq));
        }
        assert_eq!(verifier.passed(), 20);
    }

    #[test]
    fn verifier_names_a_lost_line() {
        let mut verifier = Verifier::new();
        verifier.check(&expected(0)).unwrap();
        let error = verifier.check(&expected(2)).unwrap_err();
        assert_eq!(
            error,
            "line 1 is missing or out of order: line 2 came out in its place"
        );
    }

    #[test]
    fn verifier_names_a_repeated_line() {
        let mut verifier = Verifier::new();
        verifier.check(&expected(0)).unwrap();
        verifier.check(&expected(1)).unwrap();
        let error = verifier.check(&expected(1)).unwrap_err();
        assert_eq!(
            error,
            "line 1 came out again or out of order, where line 2 was due"
        );
    }

    #[test]
    fn verifier_catches_a_wrong_header_or_body() {
        let mut wrong_header = expected(0);
        wrong_header[9] = b'1';
        let error = Verifier::new().check(&wrong_header).unwrap_err();
        assert!(error.starts_with("line 0 came back altered"), "{error}");

        let mut with_cr = expected(0);
        with_cr.push(b'\r');
        let error = Verifier::new().check(&with_cr).unwrap_err();
        assert!(error.starts_with("line 0 came back altered"), "{error}");

        let unprefixed = line(0);
        let error = Verifier::new()
            .check(&unprefixed[..unprefixed.len() - 1])
            .unwrap_err();
        assert!(error.starts_with("unexpected output"), "{error}");
    }

    #[test]
    fn percentiles_are_nearest_rank_over_every_line() {
        let mut latencies = Latencies::new();
        // 1..=1000 microseconds, the same latency twice in a row being merged into one run.
        for micros in 1..=1000 {
            latencies.record(Duration::from_micros(micros));
            if micros == 500 {
                latencies.record(Duration::from_micros(micros));
            }
        }
        let summary = latencies.summary().unwrap();
        assert_eq!(summary.lines, 1001);
        assert_eq!(summary.min, Duration::from_micros(1));
        assert_eq!(summary.p50, Duration::from_micros(500));
        assert_eq!(summary.p99, Duration::from_micros(990));
        assert_eq!(summary.p999, Duration::from_micros(999));
        assert_eq!(summary.max, Duration::from_micros(1000));
    }

    #[test]
    fn no_lines_no_summary() {
        assert_eq!(Latencies::new().summary(), None);
    }
}
