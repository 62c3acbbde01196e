//! What only `batched` promises beyond the shared contract suite: a closed stdout stops it even
//! while its reader waits on a live input, a slow consumer holds its reading back, a read error
//! part-way leaves the other threads working, and `--stats` times every stage.

mod common;

use std::io::Write;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::Duration;

use common::{
    asleep_in, finish, process_asleep_in, read_exactly, reference, run_command, spawn_piped,
    this_thread, wait_for,
};

fn batched(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_batched"));
    command.args(args);
    command
}

/// One worker, and more workers than cores.
const THREADS: &[&str] = &["1", "4"];

/// `tail -f app.log | batched | head -n 1`: once `head` has gone, `batched` ends (when it sees
/// stdout go while waiting for input, or at the latest when the next line arrives), though stdin
/// stays open and the reader is blocked reading it.
#[test]
fn closed_stdout_stops_it_while_the_reader_waits_on_live_input() {
    for threads in THREADS {
        let mut child = spawn_piped(batched(&["--threads", threads]));
        let mut stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        stdin.write_all(b"first line\n").expect("writing a line");
        let expected = reference(b"first line\n");
        let (first, stdout) = read_exactly(stdout, expected.len());
        assert_eq!(first, expected, "--threads {threads}");
        drop(stdout);
        // Its waiting read watches stdout too (`FileInput`), so it may have ended already, and
        // then this write finds its stdin closed: either way it must end, and quietly.
        let _ = stdin.write_all(b"second line\n");
        // Held open: the end of input must not be what stops it.
        let finished = finish(child, Duration::from_secs(10));
        assert!(
            finished.status.success(),
            "--threads {threads}: {finished:?}"
        );
        assert_eq!(finished.stderr, "", "--threads {threads}");
        drop(stdin);
    }
}

/// A consumer that stops reading: `batched` reads only what its bounded queues, its slots and
/// the pipes hold, then waits, rather than reading on without bound.
#[test]
fn a_stalled_consumer_holds_reading_back() {
    // Pipes of up to 1 MiB each way, and a few slots of 4 KiB chunks: well under this.
    const BOUND: u64 = 8 << 20;
    for threads in THREADS {
        let mut child = spawn_piped(batched(&["--threads", threads, "--chunk-size", "4096"]));
        let mut stdin = child.stdin.take().expect("stdin");
        let fed = Arc::new(AtomicU64::new(0));
        let (to_test, feeder_thread) = mpsc::channel();
        let feeder = {
            let fed = Arc::clone(&fed);
            thread::spawn(move || {
                let _ = to_test.send(this_thread());
                let block = b"y y\n".repeat(16 << 10);
                // Far more than the bound, so reading without back-pressure would show.
                while fed.load(Ordering::Relaxed) < 32 * BOUND && stdin.write_all(&block).is_ok() {
                    fed.fetch_add(block.len() as u64, Ordering::Relaxed);
                }
            })
        };
        // Stalled: the feeder waits for room in the full pipe, and batched, every thread asleep,
        // does not read it. Or it has read past the bound, which fails below.
        let feeder_thread = feeder_thread.recv().expect("the feeder's thread");
        wait_for("batched to stall", || {
            fed.load(Ordering::Relaxed) >= BOUND
                || (asleep_in(&feeder_thread, "pipe_write") && process_asleep_in(child.id(), ""))
        });
        let last = fed.load(Ordering::Relaxed);
        assert!(
            last < BOUND,
            "--threads {threads}: read {last} bytes with nobody reading its output"
        );
        // Closing its stdout ends it, and with it the feeder.
        drop(child.stdout.take());
        let finished = finish(child, Duration::from_secs(10));
        assert!(
            finished.status.success(),
            "--threads {threads}: {finished:?}"
        );
        feeder.join().expect("feeder");
    }
}

/// A FILE that opens but cannot be read (a directory) fails part-way through the stream: one
/// line on stderr, exit 1, and everything before and after it still transformed in order.
#[test]
fn a_read_error_part_way_is_reported_once_and_the_rest_processed() {
    let dir = env!("CARGO_TARGET_TMPDIR");
    let before = format!("{dir}/batched-before.txt");
    let after = format!("{dir}/batched-after.txt");
    let lines = b"a b c\n".repeat(50_000);
    std::fs::write(&before, &lines).expect("writing a scratch file");
    std::fs::write(&after, b"after it\n").expect("writing a scratch file");
    for threads in THREADS {
        let finished = run_command(
            batched(&[
                "--threads",
                threads,
                "--chunk-size",
                "4096",
                &before,
                dir,
                &after,
            ]),
            b"",
        );
        assert_eq!(finished.status.code(), Some(1), "--threads {threads}");
        assert_eq!(
            finished.stdout,
            reference(&[&lines[..], b"after it\n"].concat()),
            "--threads {threads}"
        );
        assert_eq!(
            finished.stderr,
            format!("batched: reading {dir}: Is a directory (os error 21)\n"),
            "--threads {threads}"
        );
    }
}

#[test]
fn stats_time_every_stage() {
    let command = batched(&["--threads", "3", "--chunk-size", "1", "--stats"]);
    let finished = run_command(command, b"one\ntwo three\n");
    assert!(finished.status.success(), "{finished:?}");
    let stages: Vec<&str> = finished
        .stderr
        .lines()
        .skip(1)
        .map(|line| {
            let stage = line.strip_prefix("batched: stage ").expect("a stage line");
            stage.split(':').next().expect("a name")
        })
        .collect();
    assert_eq!(stages, ["reader", "worker 1", "worker 2", "worker 3"]);
    for line in finished.stderr.lines().skip(1) {
        assert!(
            line.contains(" busy ") && line.contains(" waiting to receive "),
            "{line}"
        );
    }
}
