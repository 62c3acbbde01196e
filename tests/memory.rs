//! docs/CONTRACT.md §7: a setting is a ceiling, not a cost. Each binary at its largest buffer
//! settings, given one short line, holds only what that line needs.

#[macro_use]
mod common;

use std::io::{Read, Write};
use std::sync::mpsc;
use std::thread;

use common::{DEADLINE, Variant, assert_quiet_success, finish, reference, spawn_piped};

/// Every binary at the most its buffer settings allow (the parsers' upper bounds).
const LARGEST: &[Variant] = &[
    variant!("std-baseline", "--buffer-size", "1G"),
    variant!("baseline", "--buffer-size", "1G"),
    variant!("streamer", "--buffer-size", "1G"),
    variant!("pipeline", "--batch", "1048576", "--queue", "1048576"),
    variant!("batched", "--chunk-size", "1G", "--queue", "1024"),
    variant!(
        "batched",
        "--threads",
        "1024",
        "--chunk-size",
        "1G",
        "--queue",
        "1024"
    ),
];

/// Far below any of those settings, and far above what a binary needs for one line: a binary
/// that zero-fills or touches its buffers before data comes holds a gigabyte.
const MOST_RSS_KIB: u64 = 64 * 1024;

/// The peak resident set of process `pid` so far, in KiB (`VmHWM` in its `/proc` status).
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse().ok())
        .expect("VmHWM in /proc status")
}

#[test]
fn one_short_line_at_the_largest_settings_holds_little_memory() {
    const LINE: &[u8] = b"a b\n";
    for variant in LARGEST {
        let mut child = spawn_piped(variant.command());
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let mut stdout = child.stdout.take().expect("stdout is piped");
        stdin.write_all(LINE).expect("writing the line");
        // Its rendering out, with stdin still open: the line has been read, framed, rendered and
        // written, and the binary is alive for its peak to be read.
        let (sender, received) = mpsc::channel();
        thread::spawn(move || {
            let mut rendering = vec![0; reference(LINE).len()];
            let read = stdout.read_exact(&mut rendering).map(|()| rendering);
            let _ = sender.send((read, stdout));
        });
        let (rendering, stdout) = received
            .recv_timeout(DEADLINE)
            .unwrap_or_else(|_| panic!("{variant}: no rendering before the deadline"));
        assert_eq!(
            rendering.expect("reading stdout"),
            reference(LINE),
            "{variant}"
        );
        let peak = peak_rss_kib(child.id());
        drop(stdin);
        child.stdout = Some(stdout);
        assert_quiet_success(variant, &finish(child, DEADLINE));
        assert!(
            peak < MOST_RSS_KIB,
            "{variant}: peak RSS {peak} KiB for one short line"
        );
    }
}
