//! The contract (docs/CONTRACT.md), checked on every binary and setting in `common::VARIANTS`,
//! byte for byte against the reference model.

mod common;

use std::fs::{self, File};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Stdio};
use std::thread;
use std::time::Duration;

use common::{
    INVALID_ARGS, TINY, VARIANTS, Variant, assert_quiet_success, assert_transforms, feed, finish,
    line_soup, read_exactly, reference, run_command, spawn_piped, wait_for, waits_for_input,
};
use proptest::prelude::*;
use rustix::io::ioctl_fionread;

/// The examples of docs/CONTRACT.md §2.5, as literal bytes: they pin the reference model itself.
const CONTRACT_EXAMPLES: &[(&[u8], &[u8])] = &[
    (b"hello world\n", b"[spaces: 1]hello world\n"),
    (b"", b""),
    (b"\n", b"[spaces: 0]\n"),
    (b"\n\n", b"[spaces: 0]\n[spaces: 0]\n"),
    (b"a b", b"[spaces: 1]a b\n"),
    (b"a b\r\n", b"[spaces: 1]a b\r\n"),
    (b"  x  \n", b"[spaces: 4]  x  \n"),
    (b"1 2 3 4 5 6 7\n", b"[spaces: 6]1 2 3 4 5 6 7\n"),
    (b"       x\n", b"[spaces: >6]       x\n"),
    (b"\t\tx\n", b"[spaces: 0]\t\tx\n"),
    (b"\xff \xfe\n", b"[spaces: 1]\xff \xfe\n"),
    (b"a\0 b\n", b"[spaces: 1]a\0 b\n"),
];

#[test]
fn reference_model_matches_the_contract_examples() {
    for (input, expected) in CONTRACT_EXAMPLES {
        assert_eq!(reference(input), *expected, "input {input:?}");
    }
}

/// docs/CONTRACT.md §2.
#[test]
fn contract_examples() {
    for (input, _) in CONTRACT_EXAMPLES {
        assert_transforms(VARIANTS, input);
    }
}

/// Small inputs at the edges of the contract: docs/CONTRACT.md §2.1 to §2.3.
fn edge_cases() -> Vec<Vec<u8>> {
    vec![
        b"no final newline".to_vec(),
        b"a\nb\n\n\nc".to_vec(),
        b"crlf line\r\nand another \r\n\r\n".to_vec(),
        b"lone\rcarriage return\r".to_vec(),
        b"\ttab\tseparated\t\n".to_vec(),
        b"nul\0byte \0\n\0".to_vec(),
        b"invalid \xc3\x28 utf-8 \xf0\x28\x8c\xbc\n\xff".to_vec(),
        b"six      \n".to_vec(),
        b"seven       \n".to_vec(),
        b"      \n       \n        \n ".to_vec(),
        vec![b' '; 10_000],
        b"\x0b\x0c\xa0 vertical tab, form feed, nbsp\n".to_vec(),
    ]
}

#[test]
fn edge_cases_match_reference() {
    for input in edge_cases() {
        assert_transforms(VARIANTS, &input);
    }
}

#[test]
fn many_empty_lines() {
    // 20,000: the output (12 bytes a line, 240 KB) still overflows a pipe and a 128 KiB output
    // buffer several times, and every chunk-size-1 row still hands each line between threads
    // 20,000 times, in about a second a row in debug; 100,000 took minutes on a loaded machine.
    let input = b"\n".repeat(20_000);
    assert_transforms(VARIANTS, &input);
}

/// docs/CONTRACT.md §2.3: lines of any length.
#[test]
fn sixteen_mib_line_without_a_space() {
    let mut input = vec![b'x'; 16 << 20];
    input.extend_from_slice(b"\nafter it\n");
    assert_transforms(VARIANTS, &input);
}

/// Lines ending just before, on and just after each size a binary reads, buffers or chunks by,
/// so that some line straddles every such boundary whatever the binary's settings: docs/CONTRACT.md
/// §2.4, the same bytes under every setting.
#[test]
fn lines_straddling_buffer_boundaries() {
    let mut input = Vec::new();
    for boundary in [7, 4096, 64 << 10, 128 << 10, 256 << 10, 1 << 20] {
        for length in boundary - 3..=boundary + 2 {
            let line: Vec<u8> = (0..length)
                .map(|i| if i % 5 == 4 { b' ' } else { b'a' })
                .collect();
            input.extend_from_slice(&line);
            input.push(b'\n');
        }
    }
    assert_transforms(VARIANTS, &input);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// docs/CONTRACT.md §2, at the settings that cut input smallest.
    #[test]
    fn generated_input_at_the_smallest_sizes(input in line_soup(3000)) {
        assert_transforms(TINY, &input);
    }
}

/// A file in this test binary's scratch folder.
fn scratch_file(name: &str, contents: &[u8]) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    fs::write(&path, contents).expect("writing a scratch file");
    path
}

/// docs/CONTRACT.md §4.1.
#[test]
fn files_and_stdin_are_read_in_order_as_one_stream() {
    // The first file's last line has no `\n`, so it runs on into the next source, as with `cat`.
    let (first, stdin, second) = (
        &b"one two\nthree"[..],
        &b" from stdin\n"[..],
        &b"four five six\n"[..],
    );
    let expected = reference(&[first, stdin, second].concat());
    let (first, second) = (
        scratch_file("first.txt", first),
        scratch_file("second.txt", second),
    );
    for variant in VARIANTS {
        let mut command = variant.command();
        command.arg(&first).arg("-").arg(&second);
        let finished = run_command(command, stdin);
        assert!(
            finished.status.success(),
            "{variant}: {:?} {}",
            finished.status,
            finished.stderr
        );
        assert_eq!(finished.stdout, expected, "{variant}");
    }
}

/// docs/CONTRACT.md §4.1 and §5.2.
#[test]
fn a_missing_file_is_reported_and_the_others_still_processed() {
    let first = scratch_file("before-missing.txt", b"before it\n");
    let second = scratch_file("after-missing.txt", b"after it\n");
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-file.txt");
    for variant in VARIANTS {
        let mut command = variant.command();
        command.arg(&first).arg(&missing).arg(&second);
        let finished = run_command(command, b"");
        assert_eq!(finished.status.code(), Some(1), "{variant}");
        assert_eq!(
            finished.stdout,
            reference(b"before it\nafter it\n"),
            "{variant}"
        );
        assert_one_error_line(variant, &finished.stderr, "No such file or directory");
        assert!(
            finished.stderr.contains("no-such-file.txt"),
            "{variant}: {}",
            finished.stderr
        );
    }
}

/// Exactly one line on stderr, `NAME: what failed: os error text` (docs/CONTRACT.md §5.2).
fn assert_one_error_line(variant: &Variant, stderr: &str, os_error: &str) {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{variant}: stderr {stderr:?}");
    assert!(
        lines[0].starts_with(&format!("{}: ", variant.program)),
        "{variant}: {stderr:?}"
    );
    assert!(lines[0].contains(os_error), "{variant}: {stderr:?}");
}

/// docs/CONTRACT.md §5.2: `BIN > /dev/full`.
#[test]
fn disk_full_is_one_line_and_exit_1() {
    // Small input fails at the final write, large input part-way through.
    for input in [b"hello world\n".to_vec(), b"a b c\n".repeat(1 << 20)] {
        for variant in VARIANTS {
            let dev_full = File::options()
                .write(true)
                .open("/dev/full")
                .expect("opening /dev/full");
            let mut child = variant
                .command()
                .stdin(Stdio::piped())
                .stdout(dev_full)
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawning");
            feed(child.stdin.take().expect("stdin"), input.clone());
            let finished = finish(child, common::DEADLINE);
            assert_eq!(finished.status.code(), Some(1), "{variant}");
            assert_one_error_line(variant, &finished.stderr, "No space left on device");
        }
    }
}

/// docs/CONTRACT.md §5.2: `BIN < /`.
#[test]
fn a_directory_as_stdin_is_one_line_and_exit_1() {
    for variant in VARIANTS {
        let directory = File::open(env!("CARGO_TARGET_TMPDIR")).expect("opening a directory");
        let child = variant
            .command()
            .stdin(directory)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning");
        let finished = finish(child, common::DEADLINE);
        assert_eq!(finished.status.code(), Some(1), "{variant}");
        assert_eq!(finished.stdout, b"", "{variant}");
        assert_one_error_line(variant, &finished.stderr, "Is a directory");
    }
}

/// `yes | BIN | head -n 1`: the reader goes away; the binary stops promptly, quietly, exit 0
/// (docs/CONTRACT.md §5.1).
#[test]
fn closed_stdout_on_endless_input_stops_quietly() {
    for variant in VARIANTS {
        let mut child = spawn_piped(variant.command());
        let mut stdin = child.stdin.take().expect("stdin");
        thread::spawn(move || {
            let block = b"y y\n".repeat(16 << 10);
            while stdin.write_all(&block).is_ok() {}
        });
        let stdout = child.stdout.take().expect("stdout");
        let first = b"[spaces: 1]y y\n";
        let (line, stdout) = read_exactly(stdout, first.len());
        assert_eq!(line, first, "{variant}");
        drop(stdout);
        assert_stops_quietly(variant, child, Duration::from_secs(10));
    }
}

/// Waits for `child`, whose reader has gone, to end by itself within `deadline`, as a filter
/// should: exit 0, nothing on stderr.
fn assert_stops_quietly(variant: &Variant, child: Child, deadline: Duration) {
    let finished = finish(child, deadline);
    assert_quiet_success(variant, &finished);
}

/// `(echo a; sleep 30) | BIN | head -1` and `tail -f app.log | BIN | head -0`: the reader goes away
/// while the input is open but idle, so no write fails; the binary must still stop promptly,
/// quietly, exit 0 (docs/CONTRACT.md §5.1).
#[test]
fn closed_stdout_on_idle_input_stops_quietly() {
    for first_line in [None, Some(&b"first line\n"[..])] {
        for variant in VARIANTS {
            let mut child = spawn_piped(variant.command());
            // Held open, and written nothing more, until the child has exited.
            let mut stdin = child.stdin.take().expect("stdin");
            let mut stdout = child.stdout.take().expect("stdout");
            if let Some(line) = first_line {
                stdin.write_all(line).expect("writing a line");
                let rendering;
                (rendering, stdout) = read_exactly(stdout, reference(line).len());
                assert_eq!(rendering, reference(line), "{variant}");
            }
            drop(stdout);
            assert_stops_quietly(variant, child, Duration::from_secs(5));
            drop(stdin);
        }
    }
}

/// `tail -f app.log | BIN`: each line comes out while stdin stays open (docs/CONTRACT.md §6).
/// Untimed: once the binary waits for input again, every thread asleep, the line's rendering must
/// be written already; how long the binary takes to start, or to be scheduled, does not count.
#[test]
fn live_lines_come_out_while_stdin_stays_open() {
    for variant in VARIANTS {
        let mut child = spawn_piped(variant.command());
        let mut stdin = child.stdin.take().expect("stdin");
        let mut stdout = child.stdout.take().expect("stdout");
        for line in [&b"first line\n"[..], b"second  line\n", b"third   line\n"] {
            stdin.write_all(line).expect("writing a line");
            let rendering = reference(line);
            let written = |stdout: &ChildStdout| {
                ioctl_fionread(stdout).expect("reading what the pipe holds") as usize
            };
            wait_for("the rendering, or the binary waiting for input", || {
                written(&stdout) >= rendering.len() || waits_for_input(child.id())
            });
            assert!(
                written(&stdout) >= rendering.len(),
                "{variant}: line held back while stdin open: waiting for input with {} bytes written",
                written(&stdout)
            );
            let out;
            (out, stdout) = read_exactly(stdout, rendering.len());
            assert_eq!(out, rendering, "{variant}");
        }
        drop(stdin);
        child.stdout = Some(stdout);
        let finished = finish(child, common::DEADLINE);
        assert_quiet_success(variant, &finished);
    }
}

/// What `variant FLAG` prints on stdout, having exited with success.
fn printed_by(variant: &Variant, flag: &str) -> String {
    let mut command = variant.command();
    command.arg(flag);
    let finished = run_command(command, b"");
    assert!(finished.status.success(), "{variant} {flag}");
    String::from_utf8_lossy(&finished.stdout).into_owned()
}

/// docs/CONTRACT.md §4.2.
#[test]
fn help_and_version() {
    for variant in VARIANTS {
        for (flag, expected) in [("--help", "Usage:"), ("--version", variant.program)] {
            let stdout = printed_by(variant, flag);
            assert!(stdout.contains(expected), "{variant} {flag}: {stdout}");
        }
    }
}

/// `--help` says what N counts, the byte 0x20 only, and that it stops at `>6`.
#[test]
fn help_names_the_byte_counted_and_the_cap() {
    for variant in VARIANTS {
        let help = printed_by(variant, "--help");
        for words in ["0x20", "only", ">6"] {
            assert!(
                help.contains(words),
                "{variant} --help lacks {words:?}: {help}"
            );
        }
    }
}

/// `--version` names the commit built, as `git rev-parse --short HEAD` does in this checkout;
/// where this crate is not a git checkout of its own, the crate's version alone.
#[test]
fn version_names_the_commit() {
    let crate_dir = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(crate_dir)
            .output()
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    let own_checkout = git(&["rev-parse", "--show-toplevel"])
        .is_some_and(|top| fs::canonicalize(top).ok() == fs::canonicalize(crate_dir).ok());
    let commit = own_checkout
        .then(|| git(&["rev-parse", "--short", "HEAD"]))
        .flatten();
    for variant in VARIANTS {
        let version = printed_by(variant, "--version");
        let alone = format!("{} {}", variant.program, env!("CARGO_PKG_VERSION"));
        match &commit {
            Some(commit) => assert!(
                version.starts_with(&format!("{alone} (commit {commit}")),
                "{variant} --version: {version}, HEAD is {commit}"
            ),
            None => assert_eq!(version.trim_end(), alone, "{variant} --version"),
        }
    }
}

/// `pipeline --help` says that its default, `--batch 1`, is the original's per-line hand-off,
/// and which batch to use for speed.
#[test]
fn pipeline_help_says_which_batch_is_fast() {
    let pipeline = VARIANTS
        .iter()
        .find(|variant| variant.program == "pipeline")
        .expect("a pipeline row");
    let help = printed_by(pipeline, "--help");
    for words in ["as the original experiment did", "For speed use 1000"] {
        assert!(
            help.contains(words),
            "pipeline --help lacks {words:?}: {help}"
        );
    }
}

/// docs/CONTRACT.md §4.3.
#[test]
fn invalid_arguments_are_usage_errors() {
    for invalid in INVALID_ARGS {
        let finished = run_command(invalid.command(), b"x\n");
        assert_eq!(finished.status.code(), Some(2), "{invalid}");
        assert_eq!(finished.stdout, b"", "{invalid}");
        assert!(!finished.stderr.is_empty(), "{invalid}");
    }
}

/// docs/CONTRACT.md §4.4.
#[test]
fn stats_summarise_the_run_on_stderr() {
    for variant in VARIANTS {
        let mut command = variant.command();
        command.arg("--stats");
        let input = b"one\ntwo three\n";
        let finished = run_command(command, input);
        assert!(finished.status.success(), "{variant}");
        assert_eq!(finished.stdout, reference(input), "{variant}");
        let summary = finished.stderr.lines().next().unwrap_or_default();
        let out_bytes = reference(input).len();
        let expected = format!(
            "{}: 2 lines in, 2 lines out, 14 bytes in, {out_bytes} bytes out, ",
            variant.program
        );
        assert!(
            summary.starts_with(&expected),
            "{variant}: {:?}",
            finished.stderr
        );
        assert!(
            summary.contains(" s, ") && summary.ends_with(" MiB/s in"),
            "{variant}: {summary}"
        );
    }
}
