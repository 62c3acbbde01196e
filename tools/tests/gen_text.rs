//! `gen-text` must hold the mean line length it is asked for, make the same bytes for the same
//! seed, write exactly the bytes asked for in whole lines, and make text in which every header
//! occurs at the lengths where real text has all of them.

use std::process::Command;

/// The mean line lengths `harness/linelength.sh` sweeps.
const SWEEP: [u64; 7] = [8, 16, 25, 50, 100, 134, 300];
/// Bytes of text each check reads: thousands of lines even at 300 bytes a line.
const SAMPLE_BYTES: u64 = 1_000_000;

fn generate(mean_line_length: u64, bytes: u64, seed: u64) -> Vec<u8> {
    let output = Command::new(env!("CARGO_BIN_EXE_gen-text"))
        .args([
            "--mean-line-length",
            &mean_line_length.to_string(),
            "--bytes",
            &bytes.to_string(),
            "--seed",
            &seed.to_string(),
        ])
        .output()
        .expect("running gen-text");
    assert!(output.status.success(), "gen-text failed: {output:?}");
    assert!(output.stderr.is_empty());
    output.stdout
}

fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.strip_suffix(b"\n")
        .unwrap_or(text)
        .split(|&byte| byte == b'\n')
}

#[test]
fn the_mean_line_length_is_within_3_percent_of_the_one_asked_for() {
    for mean in SWEEP {
        for seed in [1, 2] {
            let text = generate(mean, SAMPLE_BYTES, seed);
            let measured = text.len() as f64 / lines(&text).count() as f64;
            let error = (measured - mean as f64).abs() / mean as f64;
            assert!(
                error < 0.03,
                "asked for {mean}, got {measured:.2} (seed {seed})"
            );
        }
    }
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    for mean in [8, 134] {
        let text = generate(mean, 300_000, 7);
        assert_eq!(text, generate(mean, 300_000, 7));
        assert_ne!(text, generate(mean, 300_000, 8), "the seed must matter");
    }
}

#[test]
fn exactly_the_bytes_asked_for_in_whole_lines() {
    for bytes in [0, 1, 2, 7, 8, 9, 1_000, 123_457] {
        let text = generate(25, bytes, 1);
        assert_eq!(text.len() as u64, bytes);
        assert!(text.is_empty() || text.ends_with(b"\n"));
    }
}

#[test]
fn lines_vary_in_length_some_are_blank() {
    for mean in SWEEP {
        let text = generate(mean, SAMPLE_BYTES, 1);
        let lengths: Vec<usize> = lines(&text).map(|line| line.len() + 1).collect();
        let blank = lengths.iter().filter(|&&length| length == 1).count();
        let short = lengths
            .iter()
            .filter(|&&length| length * 2 <= mean as usize)
            .count();
        let long = lengths
            .iter()
            .filter(|&&length| length >= 2 * mean as usize)
            .count();
        for (what, count) in [
            ("blank", blank),
            ("half the mean or less", short),
            ("twice the mean or more", long),
        ] {
            assert!(
                count * 50 > lengths.len(),
                "mean {mean}: only {count} of {} lines {what}",
                lengths.len()
            );
        }
    }
}

#[test]
fn every_header_occurs_from_short_lines_to_log_lines() {
    // At 300 bytes a line nearly every non-blank line holds more than six spaces, as real text
    // of such lines does, so 1 to 6 are rare there and not required.
    for mean in SWEEP.into_iter().filter(|&mean| mean <= 134) {
        let text = generate(mean, SAMPLE_BYTES, 1);
        let mut lines_by_spaces = [0usize; 8];
        for line in lines(&text) {
            let spaces = line.iter().filter(|&&byte| byte == b' ').count();
            lines_by_spaces[spaces.min(7)] += 1;
        }
        assert!(
            lines_by_spaces.iter().all(|&count| count >= 5),
            "mean {mean}: lines by spaces 0..6, >6: {lines_by_spaces:?}"
        );
    }
}

#[test]
fn a_mean_too_short_to_keep_is_a_usage_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_gen-text"))
        .args(["--mean-line-length", "3", "--bytes", "10"])
        .output()
        .expect("running gen-text");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(output.stdout.is_empty());
}

#[test]
fn some_lines_are_indented_and_some_have_runs_of_spaces_between_words() {
    for mean in SWEEP {
        let text = generate(mean, SAMPLE_BYTES, 1);
        let all = lines(&text).count();
        let indented = lines(&text).filter(|line| line.starts_with(b"  ")).count();
        let runs = lines(&text)
            .filter(|line| {
                let words = line.trim_ascii_start();
                words.windows(3).any(|w| w[0] != b' ' && w[1..] == *b"  ")
            })
            .count();
        assert!(
            indented * 20 > all,
            "mean {mean}: {indented} of {all} lines indented"
        );
        assert!(
            runs * 100 > all,
            "mean {mean}: {runs} of {all} lines with runs"
        );
    }
}
