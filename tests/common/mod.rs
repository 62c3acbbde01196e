//! What every contract test shares: the table of binaries and settings under test, the reference
//! model, and ways to run a binary with a deadline so a hang fails instead of stalling the suite.

// Each test file compiles this module separately and uses a different part of it.
#![allow(dead_code)]

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use proptest::prelude::*;

// The reference model and the skips live with the workspace's shared test helpers, where the
// kernel crate's tests reach them too; each test binary here uses its own part of them.
#[allow(unused_imports)]
pub use pipelines_testing::{
    NO_SKIPS, asleep_in, lines_of, reference, skip, skip_optional, wait_for,
};

/// A binary under test with its settings. The table-driven tests run over every row.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// The binary's name, as it prefixes its error messages.
    pub program: &'static str,
    /// Its path, from cargo.
    pub path: &'static str,
    /// The strategy knobs to run it with.
    pub args: &'static [&'static str],
}

/// Set where the binaries cannot be run directly: the command, split at spaces, that runs one.
/// `.ci/cross` sets it to `qemu-aarch64 -L /usr/aarch64-linux-gnu`, as a container has no
/// binfmt_misc to hand a foreign binary to qemu.
pub const RUNNER: &str = "PIPELINES_TEST_RUNNER";

/// Set to test binaries built for another target: the folder that holds them, in place of those
/// cargo built beside these tests. The tests themselves then run natively and only the binaries
/// under [`RUNNER`]: a test process that is itself emulated forks its children inside qemu-user,
/// where a fork beside the test's other threads now and then hangs before its `exec`, holding
/// copies of other children's pipes open.
pub const BINARIES: &str = "PIPELINES_TEST_BINARIES";

impl Variant {
    /// The binary under test: cargo's, or the one of the same name in [`BINARIES`]'s folder.
    pub fn binary(&self) -> PathBuf {
        match std::env::var_os(BINARIES) {
            Some(folder) => Path::new(&folder).join(self.program),
            None => PathBuf::from(self.path),
        }
    }

    pub fn command(&self) -> Command {
        let runner = std::env::var(RUNNER).unwrap_or_default();
        let mut runner = runner.split_whitespace();
        let mut command = match runner.next() {
            Some(program) => {
                let mut command = Command::new(program);
                command.args(runner).arg(self.binary());
                command
            }
            None => Command::new(self.binary()),
        };
        command.args(self.args);
        command
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.program, self.args.join(" "))
    }
}

macro_rules! variant {
    ($program:literal $(, $arg:literal)*) => {
        Variant { program: $program, path: env!(concat!("CARGO_BIN_EXE_", $program)), args: &[$($arg),*] }
    };
}

/// Every binary at its defaults and at the settings its strategy turns on. A new binary, or a new
/// knob, joins every test by adding rows here.
pub const VARIANTS: &[Variant] = &[
    variant!("std-baseline"),
    variant!("std-baseline", "--buffer-size", "1"),
    variant!("std-baseline", "--buffer-size", "7"),
    variant!("batched"),
    variant!("batched", "--threads", "1", "--chunk-size", "1"),
    variant!("batched", "--threads", "1", "--chunk-size", "7"),
    variant!("batched", "--threads", "1", "--chunk-size", "4096"),
    variant!("batched", "--threads", "2", "--chunk-size", "1"),
    variant!("batched", "--threads", "2", "--chunk-size", "7"),
    variant!("batched", "--threads", "2", "--chunk-size", "4096"),
    variant!("batched", "--threads", "3", "--chunk-size", "1"),
    variant!("batched", "--threads", "3", "--chunk-size", "7"),
    variant!("batched", "--threads", "3", "--chunk-size", "4096"),
    variant!("batched", "--threads", "8", "--chunk-size", "1"),
    variant!("batched", "--threads", "8", "--chunk-size", "7"),
    variant!("batched", "--threads", "8", "--chunk-size", "4096"),
    variant!("batched", "--threads", "2", "--queue", "1"),
    variant!("batched", "--threads", "2", "--chunk-size", "1K"),
    variant!("baseline"),
    variant!("baseline", "--buffer-size", "1"),
    variant!("baseline", "--buffer-size", "7"),
    variant!("streamer"),
    variant!("streamer", "--buffer-size", "1"),
    variant!("streamer", "--buffer-size", "7"),
    variant!("pipeline"),
    variant!("pipeline", "--batch", "2"),
    variant!("pipeline", "--batch", "7"),
    variant!("pipeline", "--batch", "1000"),
    variant!("pipeline", "--batch", "1", "--queue", "1"),
    variant!("pipeline", "--batch", "7", "--queue", "1"),
];

/// Every binary at the smallest sizes it allows, so that generated input crosses every boundary
/// (buffer ends, chunk ends, batch ends) many times.
pub const TINY: &[Variant] = &[
    variant!("std-baseline", "--buffer-size", "1"),
    variant!("batched", "--threads", "1", "--chunk-size", "1"),
    variant!("batched", "--threads", "2", "--chunk-size", "1"),
    variant!("batched", "--threads", "8", "--chunk-size", "1"),
    variant!("baseline", "--buffer-size", "1"),
    variant!("streamer", "--buffer-size", "1"),
    variant!("pipeline", "--batch", "1", "--queue", "1"),
    variant!("pipeline", "--batch", "2", "--queue", "1"),
];

/// Each binary with arguments it must refuse as a usage error (exit 2).
pub const INVALID_ARGS: &[Variant] = &[
    variant!("std-baseline", "--buffer-size", "0"),
    variant!("std-baseline", "--buffer-size", "many"),
    variant!("std-baseline", "--no-such-option"),
    variant!("batched", "--threads", "0"),
    variant!("batched", "--chunk-size", "0"),
    variant!("batched", "--chunk-size", "1T"),
    variant!("batched", "--chunk-size", "2G"),
    variant!("batched", "--queue", "0"),
    variant!("batched", "--threads", "many"),
    variant!("batched", "--threads", "1025"),
    variant!("batched", "--queue", "1025"),
    variant!("batched", "--chunk-size", "1073741825"),
    variant!("baseline", "--buffer-size", "0"),
    variant!("streamer", "--buffer-size", "many"),
    variant!("pipeline", "--batch", "0"),
    variant!("pipeline", "--queue", "0"),
    variant!("pipeline", "--batch", "many"),
    variant!("pipeline", "--queue", "18446744073709551615"),
    variant!("pipeline", "--batch", "1048577"),
    variant!("std-baseline", "--buffer-size", "1073741825"),
    variant!("streamer", "--buffer-size", "100000000000000"),
    variant!("streamer", "--decoders", "0"),
    variant!("baseline", "--decoders", "1025"),
    variant!("pipeline", "--decoders", "many"),
];

/// Generated bytes, up to `longest`, heavy in spaces and line ends, so that every header and
/// every kind of line boundary occurs.
pub fn line_soup(longest: usize) -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        6 => Just(b' '),
        4 => Just(b'\n'),
        3 => Just(b'a'),
        1 => Just(b'\r'),
        1 => Just(b'\t'),
        1 => Just(0u8),
        1 => any::<u8>(),
    ];
    prop::collection::vec(byte, 0..longest)
}

/// Inputs of every length from 0 to `longest`, in which a line end and a run of spaces fall at
/// every position, so that whatever a strategy's buffer, chunk, batch or block size, some line,
/// header boundary and final line without `\n` lies across each of its edges.
pub fn padded_inputs(longest: usize) -> Vec<Vec<u8>> {
    let mut inputs = Vec::new();
    for length in 0..=longest {
        for at in 0..length.max(1) {
            let mut input: Vec<u8> = (0..length).map(|i| b"ab c"[i % 4]).collect();
            if at < length {
                input[at] = b'\n';
            }
            inputs.push(input.clone());
            // Seven spaces after the line end: the capped header right at the edge.
            for space in input.iter_mut().skip(at + 1).take(7) {
                *space = b' ';
            }
            inputs.push(input);
        }
    }
    inputs
}

/// The peak resident memory of the process `pid` (`VmHWM`), in bytes.
pub fn peak_rss(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("reading its status");
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .expect("VmHWM");
    kib.trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .expect("a number")
        * 1024
}

/// How long any one run may take before it counts as hung.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// What a finished run left behind.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// Collects the output of a spawned child (stdout and stderr piped) and waits for it to exit,
/// killing it and failing the test if that takes longer than `deadline`.
pub fn finish(mut child: Child, deadline: Duration) -> Finished {
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let stdout_reader = thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(stdout) = stdout.as_mut() {
            stdout
                .read_to_end(&mut bytes)
                .expect("reading the child's stdout");
        }
        bytes
    });
    let stderr_reader = thread::spawn(move || {
        let mut text = String::new();
        stderr
            .read_to_string(&mut text)
            .expect("reading the child's stderr");
        text
    });
    let status = wait_until(&mut child, deadline);
    Finished {
        status,
        stdout: stdout_reader.join().expect("stdout reader"),
        stderr: stderr_reader.join().expect("stderr reader"),
    }
}

/// Waits for `child` to exit; kills it and panics if it is still running after `deadline`.
pub fn wait_until(child: &mut Child, deadline: Duration) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("waiting for the child") {
            return status;
        }
        if started.elapsed() > deadline {
            let stuck = where_stuck(child.id());
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {deadline:?}: killed\n{stuck}");
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// What a hung child was and where each of its threads waited, from Linux's `/proc` (empty
/// elsewhere): a hang seen once on a loaded CI machine is then diagnosed from its log.
fn where_stuck(pid: u32) -> String {
    let read = |path: String| fs::read_to_string(path).unwrap_or_default();
    let mut report = format!(
        "command: {}",
        read(format!("/proc/{pid}/cmdline")).replace('\0', " ")
    );
    let tasks = fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten();
    for task in tasks.flatten() {
        let task = task.path().display().to_string();
        let stat = read(format!("{task}/stat"));
        // The name may hold spaces; the state is the field after its closing parenthesis.
        let state = stat
            .rsplit_once(") ")
            .map_or("", |(_, rest)| &rest[..1.min(rest.len())]);
        let name = read(format!("{task}/comm"));
        let wchan = read(format!("{task}/wchan"));
        report += &format!(
            "\n  thread {task}: {} state {state}, waiting in {wchan}",
            name.trim()
        );
    }
    report
}

/// Does `work` on a thread of its own and returns what it returns; fails the test if that takes
/// longer than [`DEADLINE`] (a run in process that hangs, a read of output that never comes), or
/// with `work`'s own panic.
pub fn within<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, received) = mpsc::channel();
    let worker = thread::spawn(move || {
        let _ = sender.send(work());
    });
    match received.recv_timeout(DEADLINE) {
        Ok(value) => value,
        Err(RecvTimeoutError::Timeout) => panic!("{what}: not done after {DEADLINE:?}"),
        Err(RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => panic!("{what}: ended without a result"),
        },
    }
}

/// The next `count` bytes from `from` (a child's output), and `from` back for more; fails the test
/// if they have not come by the deadline, as when the binary holds its output back or died while
/// the test holds its input open.
pub fn read_exactly<R: Read + Send + 'static>(mut from: R, count: usize) -> (Vec<u8>, R) {
    within("reading the output", move || {
        let mut bytes = vec![0; count];
        from.read_exact(&mut bytes).expect("reading the output");
        (bytes, from)
    })
}

/// The calling thread, as its folder in `/proc`: for [`asleep_in`] to look at from another.
pub fn this_thread() -> PathBuf {
    Path::new("/proc").join(fs::read_link("/proc/thread-self").expect("/proc/thread-self"))
}

/// Whether every thread of process `pid` is asleep and one of them [`asleep_in`] `waiting_in`:
/// the process waits on that, and nothing of its own is left to do meanwhile.
pub fn process_asleep_in(pid: u32, waiting_in: &str) -> bool {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    let tasks: Vec<PathBuf> = tasks.flatten().map(|task| task.path()).collect();
    !tasks.is_empty()
        && tasks.iter().all(|task| asleep_in(task, ""))
        && tasks.iter().any(|task| asleep_in(task, waiting_in))
}

/// Whether process `pid` waits for input with nothing of its own left to do: every thread asleep,
/// one of them reading a pipe or in poll. A binary in this state writes nothing more until input
/// comes (or its output is read, had it filled the pipe).
pub fn waits_for_input(pid: u32) -> bool {
    process_asleep_in(pid, "pipe_read") || process_asleep_in(pid, "poll")
}

/// Writes `input` to the child's stdin from a thread (so a child that writes before it has read
/// everything cannot deadlock against us), then closes it.
pub fn feed(stdin: ChildStdin, input: Vec<u8>) {
    let mut stdin = stdin;
    thread::spawn(move || {
        // A child that stops reading early (an error path) closes the pipe: not our failure.
        let _ = stdin.write_all(&input);
    });
}

/// Starts `command` with stdin, stdout and stderr all pipes of ours.
pub fn spawn_piped(mut command: Command) -> Child {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning the binary")
}

/// Runs `command` with `input` on stdin, to completion.
pub fn run_command(command: Command, input: &[u8]) -> Finished {
    let mut child = spawn_piped(command);
    feed(child.stdin.take().expect("stdin is piped"), input.to_vec());
    finish(child, DEADLINE)
}

/// Checks that a run of `variant` exited 0 with nothing on stderr.
pub fn assert_quiet_success(variant: &Variant, finished: &Finished) {
    assert!(
        finished.status.success(),
        "{variant}: {:?}, stderr {:?}",
        finished.status,
        finished.stderr
    );
    assert_eq!(finished.stderr, "", "{variant}: stderr");
}

/// Runs each of `variants` on `input` and checks it succeeded, silently, with exactly the
/// reference's output.
pub fn assert_transforms(variants: &[Variant], input: &[u8]) {
    let expected = reference(input);
    for variant in variants {
        let finished = run_command(variant.command(), input);
        assert_quiet_success(variant, &finished);
        if finished.stdout != expected {
            panic!(
                "{variant}: output differs from the reference{}",
                first_difference(&finished.stdout, &expected)
            );
        }
    }
}

/// Where two outputs part, shown briefly: inputs can be megabytes.
fn first_difference(actual: &[u8], expected: &[u8]) -> String {
    let at = actual
        .iter()
        .zip(expected)
        .take_while(|(a, e)| a == e)
        .count();
    let around = |bytes: &[u8]| {
        String::from_utf8_lossy(&bytes[at.saturating_sub(40)..(at + 40).min(bytes.len())])
            .into_owned()
    };
    format!(
        " at byte {at} (lengths {} and {}):\n  actual   {:?}\n  expected {:?}",
        actual.len(),
        expected.len(),
        around(actual),
        around(expected)
    )
}
