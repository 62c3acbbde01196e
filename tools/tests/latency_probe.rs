//! The latency probe, run briefly: its report against a good binary, and a loud failure against
//! children that lose, repeat, reorder or alter a line, stop early, fail or hang. Latency figures
//! are never asserted; only that they are there and ordered.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const PROBE: &str = env!("CARGO_BIN_EXE_latency-probe");

/// `std-baseline`, built by cargo in the target directory and profile this test was built in:
/// a binary of another package has no `CARGO_BIN_EXE_` here, and building it is what makes sure
/// it exists and is current.
fn std_baseline() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        pipelines_testing::workspace_built_beside(Path::new(PROBE)).join("std-baseline")
    })
}

/// Runs the probe at a low rate for a few hundred lines at most, with extra arguments, against
/// `command`.
fn probe(extra: &[&str], command: &[&str]) -> Output {
    Command::new(PROBE)
        .args(["--rate", "2k", "--lines", "300", "--timeout", "20"])
        .args(extra)
        .arg("--")
        .args(command)
        .output()
        .expect("the probe runs")
}

/// std-baseline with its output passed through a shell loop that runs `body` for each line (`$n`
/// counts them from 1, `$line` holds one) and `end` after the last: a fault, and no buffering,
/// since the shell reads a pipe byte by byte and `printf` is built in (awk and sed may hold input).
fn through_filter(body: &str, end: &str) -> Output {
    let baseline = std_baseline().to_str().expect("a UTF-8 path");
    let script = format!(
        "\"$0\" | {{ n=0; while IFS= read -r line; do n=$((n + 1)); {body}; done; {end}; }}"
    );
    probe(&[], &["sh", "-c", &script, baseline])
}

/// Asserts the probe failed with status 1 and an error line containing `message`.
fn assert_fails(output: &Output, message: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.starts_with("latency-probe: ") && stderr.contains(message),
        "expected `{message}` in: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// With one line in flight at a time, every line still comes back and is timed; a binary that
/// holds a line until the next arrives would never answer, and the timeout says so.
#[test]
fn ping_pong_sends_a_line_only_once_the_last_is_back() {
    let baseline = std_baseline().to_str().unwrap();
    let output = probe(&["--ping-pong", "--label", "std-baseline"], &[baseline]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stdout.starts_with("std-baseline, 2000 lines/s offered, one line in flight (ping-pong)\n"),
        "{stdout}"
    );
    assert!(stdout.contains("lines    300 in "), "{stdout}");
    // After the start-up line, each line is let out only when the next has come in (or at the
    // end): fine when lines stream in, never answering when each waits for its answer.
    let holding = r#"IFS= read -r line; printf '%s\n' "$line"; IFS= read -r held
        while IFS= read -r line; do printf '%s\n' "$held"; held=$line; done; printf '%s\n' "$held""#;
    let script = format!("\"$0\" | {{ {holding}; }}");
    let run = |extra: &[&str]| {
        Command::new(PROBE)
            .args(["--rate", "2k", "--lines", "3", "--timeout", "3"])
            .args(extra)
            .args(["--", "sh", "-c", &script, baseline])
            .output()
            .expect("the probe runs")
    };
    let streamed = run(&[]);
    assert!(streamed.status.success(), "{streamed:?}");
    let output = run(&["--ping-pong"]);
    assert_fails(&output, "did not finish before --timeout");
}

#[test]
fn reports_every_line_of_a_good_binary_on_stdout_and_as_a_tsv_row() {
    let dir = std::env::temp_dir().join(format!("latency-probe-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tsv = dir.join("latency.tsv");
    let _ = std::fs::remove_file(&tsv);
    let tsv_arg = tsv.to_str().unwrap();
    let baseline = std_baseline().to_str().unwrap();
    for _ in 0..2 {
        let output = probe(&["--label", "std-baseline", "--tsv", tsv_arg], &[baseline]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.starts_with("std-baseline, 2000 lines/s offered\n"),
            "{stdout}"
        );
        assert!(stdout.contains("lines    300 in "), "{stdout}");
        assert!(
            stdout.contains("p50 ") && stdout.contains("p99.9 "),
            "{stdout}"
        );
        assert!(
            stdout.contains("verified every line came back once, in order, with its header"),
            "{stdout}"
        );
    }

    // One header row, then a row per run.
    let table = std::fs::read_to_string(&tsv).unwrap();
    let rows: Vec<Vec<&str>> = table.lines().map(|row| row.split('\t').collect()).collect();
    assert_eq!(rows.len(), 3, "{table}");
    assert_eq!(
        rows[0],
        [
            "label", "offered", "lines", "seconds", "achieved", "min_us", "p50_us", "p99_us",
            "p999_us", "max_us"
        ]
    );
    for row in &rows[1..] {
        assert_eq!(row[..3], ["std-baseline", "2000", "300"], "{table}");
        let figures: Vec<f64> = row[3..].iter().map(|f| f.parse().unwrap()).collect();
        assert!(figures[0] > 0.0 && figures[1] > 0.0, "{table}");
        let latencies = &figures[2..];
        assert!(latencies[0] > 0.0, "{table}");
        assert!(
            latencies.windows(2).all(|pair| pair[0] <= pair[1]),
            "{table}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stops_at_the_duration_when_lines_would_take_longer() {
    let output = Command::new(PROBE)
        .args([
            "--rate",
            "1k",
            "--lines",
            "100000",
            "--duration",
            "0.2",
            "--",
        ])
        .arg(std_baseline())
        .output()
        .expect("the probe runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: u64 = stdout
        .split("lines    ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|count| count.parse().ok())
        .expect("a line count in the report");
    // Lines 1 to 201 fall due in the first 0.2 s at 1000 a second.
    assert!((1..=201).contains(&lines), "{stdout}");
}

#[test]
fn fails_on_a_lost_line() {
    // Filtered line 50 is probe line 49: line 0 is the start-up line.
    let output = through_filter(r#"[ $n -eq 50 ] || printf '%s\n' "$line""#, ":");
    assert_fails(
        &output,
        "line 49 is missing or out of order: line 50 came out in its place",
    );
}

#[test]
fn fails_on_a_reordered_line() {
    let output = through_filter(
        r#"if [ $n -eq 11 ]; then held=$line; else printf '%s\n' "$line"; fi;
           if [ $n -eq 12 ]; then printf '%s\n' "$held"; fi"#,
        ":",
    );
    assert_fails(
        &output,
        "line 10 is missing or out of order: line 11 came out in its place",
    );
}

#[test]
fn fails_on_a_repeated_line() {
    let output = through_filter(
        r#"printf '%s\n' "$line"; if [ $n -eq 30 ]; then printf '%s\n' "$line"; fi"#,
        ":",
    );
    assert_fails(
        &output,
        "line 29 came out again or out of order, where line 30 was due",
    );
}

#[test]
fn fails_on_an_altered_line() {
    let output = through_filter(
        r#"if [ $n -eq 20 ]; then line=${line%%payload*}PAYLOAD${line#*payload}; fi;
           printf '%s\n' "$line""#,
        ":",
    );
    assert_fails(&output, "line 19 came back altered");
}

#[test]
fn fails_on_an_extra_line() {
    let output = through_filter(r#"printf '%s\n' "$line""#, "echo extra");
    assert_fails(
        &output,
        "unexpected output where line 301 was due: \"extra\"",
    );
}

#[test]
fn fails_on_lines_without_headers() {
    let output = probe(&[], &["cat"]);
    assert_fails(&output, "unexpected output where line 0 was due");
}

#[test]
fn fails_when_the_output_ends_early() {
    let output = through_filter(r#"if [ $n -le 100 ]; then printf '%s\n' "$line"; fi"#, ":");
    assert_fails(&output, "lines were lost: the output ended after line 99");
}

#[test]
fn fails_when_the_binary_fails() {
    let baseline = std_baseline().to_str().unwrap();
    let output = probe(&[], &["sh", "-c", "\"$0\"; exit 3", baseline]);
    assert_fails(&output, "it failed: exit status: 3");
}

#[test]
fn fails_when_the_binary_cannot_start() {
    let output = probe(&[], &["/nonexistent/binary"]);
    assert_fails(&output, "cannot start it");
}

#[test]
fn fails_instead_of_hanging_when_nothing_comes_back() {
    let output = Command::new(PROBE)
        .args(["--timeout", "0.5", "--", "sleep", "30"])
        .output()
        .expect("the probe runs");
    assert_fails(&output, "it did not finish before --timeout: killed");
}

#[test]
fn refuses_a_bad_rate_as_a_usage_error() {
    for rate in ["fast", "-5", "10x"] {
        let output = Command::new(PROBE)
            .args(["--rate", rate, "--", "cat"])
            .output()
            .expect("the probe runs");
        assert_eq!(output.status.code(), Some(2), "--rate {rate}");
    }
}
