//! docs/CONTRACT.md §8, "Hostile environments", checked on every binary with real descriptors,
//! real signals and real limits: shared and non-blocking pipes, a signal mid-run, input that is
//! the output, threads and memory that cannot be had, names that try to forge a message.
//!
//! Linux only, as it reads a pipe's size (`F_GETPIPE_SZ`) and watches the binaries through
//! `/proc`: elsewhere it compiles to nothing (docs/CONTRACT.md §10.1).
#![cfg(target_os = "linux")]

mod common;

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;

use common::{
    DEADLINE, VARIANTS, Variant, asleep_in, assert_quiet_success, feed, finish, process_asleep_in,
    reference, spawn_piped, this_thread, wait_for, wait_until,
};
use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
use rustix::io::ioctl_fionread;
use rustix::pipe::{PipeFlags, fcntl_getpipe_size, pipe_with};

/// The settings beside the defaults that these tests run: the multi-stage binaries with small
/// pieces, so that their stages hand over many times.
const SMALL_SETTINGS: &[&[&str]] = &[
    &["--threads", "2", "--chunk-size", "7"],
    &["--batch", "7", "--queue", "1"],
];

/// Every binary at its defaults, and batched and pipeline at a small setting as well.
fn variants() -> Vec<&'static Variant> {
    let chosen: Vec<_> = VARIANTS
        .iter()
        .filter(|variant| variant.args.is_empty() || SMALL_SETTINGS.contains(&variant.args))
        .collect();
    assert_eq!(
        chosen.len(),
        7,
        "the rows of common::VARIANTS this file runs"
    );
    chosen
}

/// Runs `check` on every variant, then fails naming each variant it failed on: one run shows
/// the state of every binary, not just the first to fail. Each failure's message is printed as
/// it happens.
fn for_each_variant(check: impl Fn(&Variant)) {
    let failed: Vec<String> = variants()
        .into_iter()
        .filter(|variant| catch_unwind(AssertUnwindSafe(|| check(variant))).is_err())
        .map(|variant| variant.to_string())
        .collect();
    assert!(failed.is_empty(), "failed on {failed:?}");
}

/// A pipe whose ends only the children they are handed to inherit: an end leaked into another
/// child (this file's tests run in parallel) would keep the pipe from ever reaching its end.
fn pipe() -> (OwnedFd, OwnedFd) {
    pipe_with(PipeFlags::CLOEXEC).expect("creating a pipe")
}

/// The variant's command, asking for a backtrace, so that one shows if it ever panics.
fn command(variant: &Variant) -> Command {
    let mut command = variant.command();
    command.env("RUST_BACKTRACE", "1");
    command
}

/// The variant run by bash after `limits` (`ulimit ...` commands) took effect; when a limit
/// cannot be set, bash fails instead of running the binary without it.
fn limited(variant: &Variant, limits: &str) -> Command {
    let mut command = Command::new("bash");
    command
        .arg("-c")
        .arg(format!("{limits} && exec \"$@\""))
        .arg("bash")
        .arg(variant.path)
        .args(variant.args)
        .env("RUST_BACKTRACE", "1");
    command
}

/// A path in this test binary's scratch folder, unique to the variant and the case.
fn scratch(variant: &Variant, case: &str) -> PathBuf {
    let name = format!("{variant}-{case}").replace([' ', '-'], "_");
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// `count` lines with spaces in them, about 24 bytes each.
fn lines(count: usize) -> Vec<u8> {
    (0..count)
        .flat_map(|i| format!("line {i} of the input\n").into_bytes())
        .collect()
}

/// The next `count` bytes from `from`; fails rather than waits past the deadline for bytes that
/// do not come, as when the binary died while this test holds the pipe's write end open.
fn read_exactly(from: &File, count: usize) -> Vec<u8> {
    common::read_exactly(from.try_clone().expect("sharing the pipe"), count).0
}

/// Waits until the writer of a pipe has filled it and waits for room, as `waits` says, so that
/// its writes are held up by the pipe; or until it has `ended`.
fn wait_until_full(ended: &AtomicBool, waits: impl Fn() -> bool) {
    wait_for("the pipe's writer to fill it", || {
        ended.load(Ordering::Relaxed) || waits()
    });
}

/// Whether a binary writing non-blocking into `read_end`'s pipe has filled it (half its size at
/// least: it writes in pieces of kilobytes) and waits in poll for room, or for nothing else.
fn filled_and_polling(read_end: impl AsFd, binary: u32) -> bool {
    let held = ioctl_fionread(&read_end).expect("reading what the pipe holds");
    let size = fcntl_getpipe_size(&read_end).expect("reading the pipe's size");
    held >= size as u64 / 2 && process_asleep_in(binary, "poll")
}

/// Waits until `reader` has taken all that `read_end`'s pipe holds and waits in poll for more,
/// so that its next read finds the pipe empty; or until it has exited.
fn wait_until_drained(read_end: impl AsFd, reader: &mut Child) {
    wait_for("the binary to drain its stdin and wait", || {
        reader.try_wait().expect("checking on the binary").is_some()
            || (ioctl_fionread(&read_end).expect("reading what the pipe holds") == 0
                && process_asleep_in(reader.id(), "poll"))
    });
}

fn is_non_blocking(fd: impl AsFd) -> bool {
    fcntl_getfl(fd)
        .expect("reading a descriptor's flags")
        .contains(OFlags::NONBLOCK)
}

fn set_non_blocking(fd: impl AsFd) {
    let flags = fcntl_getfl(&fd).expect("reading a descriptor's flags");
    fcntl_setfl(&fd, flags | OFlags::NONBLOCK).expect("setting O_NONBLOCK");
}

/// The start of `stderr`: enough to tell what went wrong, without a whole backtrace.
fn brief(stderr: &str) -> String {
    stderr.chars().take(300).collect()
}

/// What docs/CONTRACT.md §8.4 asks of a binary out of some resource: exit 1 and one line naming
/// what failed, never a panic, an abort or a backtrace.
fn assert_fails_cleanly(variant: &Variant, finished: &common::Finished) {
    let stderr = &finished.stderr;
    assert_eq!(
        finished.status.code(),
        Some(1),
        "{variant}: {:?}, stderr {:?}",
        finished.status,
        brief(stderr)
    );
    assert_eq!(stderr.lines().count(), 1, "{variant}: {:?}", brief(stderr));
    assert!(
        stderr.starts_with(&format!("{}: ", variant.program)),
        "{variant}: {stderr:?}"
    );
    for sign in ["panicked", "backtrace", "memory allocation of"] {
        assert!(!stderr.contains(sign), "{variant}: {stderr:?}");
    }
}

/// `{ BIN & head -c 20M /dev/zero; } | slow reader`: another process writes to the pipe the binary
/// writes to, through the same open file description. Its writes must wait for room, never fail
/// with EAGAIN, and both its bytes and the binary's output must arrive whole (docs/CONTRACT.md
/// §8.1).
#[test]
fn a_concurrent_writer_on_the_same_stdout_pipe_loses_nothing() {
    const OTHERS: usize = 4 << 20;
    for_each_variant(|variant| {
        let (read_end, write_end) = pipe();
        let shared: File = write_end.try_clone().expect("sharing the pipe").into();
        let mut child = command(variant)
            .stdin(Stdio::piped())
            .stdout(Stdio::from(write_end))
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning");
        let mut stdin = child.stdin.take().expect("stdin");
        let mut read_end = File::from(read_end);

        // Once its first line is out, the binary has set up its stdout, whatever it does to it.
        stdin.write_all(b"first line\n").expect("writing a line");
        let first = read_exactly(&read_end, reference(b"first line\n").len());
        assert_eq!(first, reference(b"first line\n"), "{variant}");
        // Asserted last, so that a failure shows what the flag does to the other writer first.
        let non_blocking_mid_run = is_non_blocking(&shared);

        // Nobody reads until the other writer has filled the pipe and has to wait.
        let ended = Arc::new(AtomicBool::new(false));
        let (to_reader, writer_thread) = mpsc::channel();
        let writer = thread::spawn({
            let ended = Arc::clone(&ended);
            move || {
                let _ = to_reader.send(this_thread());
                let written = (&shared).write_all(&vec![0; OTHERS]);
                ended.store(true, Ordering::Relaxed);
                written
            }
        });
        let writer_thread = writer_thread.recv().expect("the other writer's thread");
        let reader = thread::spawn(move || {
            wait_until_full(&ended, || asleep_in(&writer_thread, "pipe_write"));
            let mut bytes = Vec::new();
            read_end.read_to_end(&mut bytes).map(|_| bytes)
        });
        let written = writer.join().expect("the other writer");
        assert!(
            written.is_ok(),
            "{variant}: the other writer failed: {written:?}"
        );
        stdin.write_all(b"last  line\n").expect("writing a line");
        drop(stdin);
        let finished = finish(child, DEADLINE);
        assert_quiet_success(variant, &finished);

        let rest = reader
            .join()
            .expect("the reader")
            .expect("reading the pipe");
        let zeros = rest.iter().filter(|&&byte| byte == 0).count();
        assert_eq!(
            zeros, OTHERS,
            "{variant}: the other writer's bytes that arrived"
        );
        let binarys: Vec<u8> = rest.into_iter().filter(|&byte| byte != 0).collect();
        assert_eq!(binarys, reference(b"last  line\n"), "{variant}");
        assert!(
            !non_blocking_mid_run,
            "{variant}: O_NONBLOCK set on the shared stdout pipe"
        );
    });
}

/// `{ echo first; sleep 1; echo second; } | { timeout -s INT 0.3 BIN; cat; }`: killed mid-run,
/// the binary must leave stdin (and stdout) blocking, so that the next reader of the same pipe
/// reads the rest instead of failing with EAGAIN (docs/CONTRACT.md §8.1).
fn after_a_signal_the_next_reader_reads_the_rest(signal: &str) {
    for_each_variant(|variant| {
        let (stdin_read, stdin_write) = pipe();
        let (stdout_read, stdout_write) = pipe();
        let next_readers_stdin = stdin_read.try_clone().expect("sharing stdin");
        let stdin_kept = stdin_read.try_clone().expect("sharing stdin");
        let stdout_kept = stdout_write.try_clone().expect("sharing stdout");
        // With the signal's default action restored: a suite started in the background by a
        // shell without job control inherits SIGINT ignored, and the binary would not end.
        let mut child = Command::new("env")
            .arg(format!("--default-signal={signal}"))
            .arg(variant.path)
            .args(variant.args)
            .env("RUST_BACKTRACE", "1")
            .stdin(Stdio::from(stdin_read))
            .stdout(Stdio::from(stdout_write))
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning");
        let mut stdin_write = File::from(stdin_write);
        stdin_write.write_all(b"first\n").expect("writing a line");
        // Kept open until the end: a binary whose reader has gone ends by itself.
        let stdout_read = File::from(stdout_read);
        let first = read_exactly(&stdout_read, reference(b"first\n").len());
        assert_eq!(first, reference(b"first\n"), "{variant}");

        // Mid-run: waiting for its next line, with stdin and stdout set up.
        let running = child.try_wait().expect("checking on the binary").is_none();
        assert!(running, "{variant}: ended before the signal");
        let killed = Command::new("kill")
            .args(["-s", signal, &child.id().to_string()])
            .status()
            .expect("running kill");
        assert!(killed.success(), "kill -s {signal}");
        finish(child, DEADLINE);

        let next = Command::new("cat")
            .stdin(Stdio::from(next_readers_stdin))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning cat");
        // cat finds the pipe empty first, as the next command in a shell group would.
        let cat = PathBuf::from(format!("/proc/{}", next.id()));
        wait_for("cat to wait on the empty pipe", || {
            asleep_in(&cat, "pipe_read")
        });
        stdin_write.write_all(b"second\n").expect("writing a line");
        drop(stdin_write);
        let next = finish(next, DEADLINE);
        assert!(
            next.status.success(),
            "{variant}: after SIG{signal}, cat: {:?}",
            next.stderr
        );
        assert_eq!(next.stdout, b"second\n", "{variant}: after SIG{signal}");
        assert!(
            !is_non_blocking(&stdin_kept),
            "{variant}: stdin left O_NONBLOCK after SIG{signal}"
        );
        assert!(
            !is_non_blocking(&stdout_kept),
            "{variant}: stdout left O_NONBLOCK after SIG{signal}"
        );
    });
}

#[test]
fn after_sigint_the_next_reader_of_stdin_reads_the_rest() {
    after_a_signal_the_next_reader_reads_the_rest("INT");
}

#[test]
fn after_sigterm_the_next_reader_of_stdin_reads_the_rest() {
    after_a_signal_the_next_reader_reads_the_rest("TERM");
}

/// stdout handed over non-blocking, with a reader slower than the binary: it must wait for room
/// rather than fail, and leave the flag as it found it (docs/CONTRACT.md §8.2).
#[test]
fn a_non_blocking_stdout_is_waited_on() {
    // About 5 MiB: more than a pipe holds, however enlarged.
    let input = lines(200_000);
    let expected = reference(&input);
    for_each_variant(|variant| {
        let (read_end, write_end) = pipe();
        set_non_blocking(&write_end);
        let kept = write_end.try_clone().expect("sharing stdout");
        let mut child = command(variant)
            .stdin(Stdio::piped())
            .stdout(Stdio::from(write_end))
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning");
        feed(child.stdin.take().expect("stdin"), input.clone());
        let ended = Arc::new(AtomicBool::new(false));
        let binary = child.id();
        let reader = thread::spawn({
            let ended = Arc::clone(&ended);
            move || {
                wait_until_full(&ended, || filled_and_polling(&read_end, binary));
                let mut bytes = Vec::new();
                File::from(read_end).read_to_end(&mut bytes).map(|_| bytes)
            }
        });
        let finished = finish(child, DEADLINE);
        ended.store(true, Ordering::Relaxed);
        assert_quiet_success(variant, &finished);
        assert!(is_non_blocking(&kept), "{variant}: O_NONBLOCK cleared");
        drop(kept);
        let output = reader.join().expect("the reader").expect("reading stdout");
        assert!(output == expected, "{variant}: output differs");
    });
}

/// stdin handed over non-blocking, with input that pauses: the binary must wait for the rest
/// rather than give up on stdin. stdout is a file, so nothing else makes the binary wait
/// (docs/CONTRACT.md §8.2).
#[test]
fn a_non_blocking_stdin_is_waited_on() {
    // Less than a pipe holds, so writing it cannot wait on a binary that died.
    let (before, after) = (lines(1_000), lines(1_000));
    let expected = reference(&[&before[..], &after].concat());
    for_each_variant(|variant| {
        let (read_end, write_end) = pipe();
        set_non_blocking(&read_end);
        let kept = read_end.try_clone().expect("sharing stdin");
        let output = scratch(variant, "non-blocking-stdin");
        let mut child = command(variant)
            .stdin(Stdio::from(read_end))
            .stdout(File::create(&output).expect("creating the output file"))
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning");
        let mut write_end = File::from(write_end);
        write_end.write_all(&before).expect("writing input");
        wait_until_drained(&kept, &mut child);
        write_end.write_all(&after).expect("writing input");
        drop(write_end);
        let finished = finish(child, DEADLINE);
        assert_quiet_success(variant, &finished);
        assert!(is_non_blocking(&kept), "{variant}: O_NONBLOCK cleared");
        let written = fs::read(&output).expect("reading the output");
        assert!(written == expected, "{variant}: output differs");
    });
}

/// How a case opens the file that is both input and stdout, as a shell redirection would.
#[derive(Debug, Clone, Copy)]
enum Redirection {
    /// `>> FILE`
    Append,
    /// `1<> FILE`: at offset 0, before the input's end.
    AtStart,
    /// `> FILE`: emptied, so there is nothing to read and nothing to refuse.
    Truncate,
    /// At an offset past the input's end: what it writes lies beyond what it reads.
    PastTheEnd,
}

/// How far past the input's end [`Redirection::PastTheEnd`] writes.
const GAP: usize = 4096;

impl Redirection {
    /// Opens `path`, which holds `contents`, as the redirection does.
    fn open(self, path: &Path, contents: &[u8]) -> File {
        let mut options = File::options();
        match self {
            Redirection::Append => options.append(true),
            Redirection::AtStart | Redirection::PastTheEnd => options.write(true),
            Redirection::Truncate => options.write(true).truncate(true),
        };
        let mut file = options.open(path).expect("opening the output");
        if let Redirection::PastTheEnd = self {
            let past = (contents.len() + GAP) as u64;
            file.seek(SeekFrom::Start(past)).expect("seeking");
        }
        file
    }

    /// docs/CONTRACT.md §8.3: refused where reading would read what is written.
    fn is_refused(self) -> bool {
        matches!(self, Redirection::Append | Redirection::AtStart)
    }

    /// The file after `output` was written through the redirection into a file that held
    /// `contents`.
    fn result(self, contents: &[u8], output: &[u8]) -> Vec<u8> {
        let (mut file, at) = match self {
            Redirection::Append => (contents.to_vec(), contents.len()),
            Redirection::AtStart => (contents.to_vec(), 0),
            Redirection::Truncate => (Vec::new(), 0),
            Redirection::PastTheEnd => (contents.to_vec(), contents.len() + GAP),
        };
        file.resize(file.len().max(at + output.len()), 0);
        file[at..at + output.len()].copy_from_slice(output);
        file
    }
}

/// `BIN FILE OTHER >> FILE` and its kin, FILE named or as stdin. Where reading FILE would read
/// the output, FILE is refused with one line, OTHER still processed, and the exit status is 1;
/// where it would not, the binary runs as usual. A bash file-size limit stops a binary that feeds
/// on its own output.
///
/// FILE is shorter than the smallest read of any variant here (7 bytes): each reads it whole and
/// reaches its end before it writes. Past the end, writing sooner grows FILE under the reader,
/// which then reads the gap and its own output, as `cat` does and as docs/CONTRACT.md §9 ("a file
/// that grows while read") allows: with two lines, `batched --chunk-size 7` sent the first on
/// before reading the second, and on a loaded machine its writer sometimes won the race (1 to 2
/// runs in 300).
#[test]
fn input_that_is_the_output_is_refused() {
    const CONTENTS: &[u8] = b"a  b\n";
    const OTHER: &[u8] = b"e f\n";
    let redirections = [
        Redirection::Append,
        Redirection::AtStart,
        Redirection::Truncate,
        Redirection::PastTheEnd,
    ];
    for_each_variant(|variant| {
        let other = scratch(variant, "other");
        fs::write(&other, OTHER).expect("writing a file");
        for redirection in redirections {
            for from_stdin in [false, true] {
                let case = format!("{redirection:?}, from stdin: {from_stdin}");
                let path = scratch(variant, &format!("self-{redirection:?}-{from_stdin}"));
                fs::write(&path, CONTENTS).expect("writing the file");
                let mut command = limited(variant, "ulimit -f 1024");
                if from_stdin {
                    command
                        .arg("-")
                        .stdin(File::open(&path).expect("opening the input"));
                } else {
                    command.arg(&path).stdin(Stdio::null());
                }
                let stdout = redirection.open(&path, CONTENTS);
                let held = fs::read(&path).expect("reading the file");
                let child = command
                    .arg(&other)
                    .stdout(stdout)
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawning");
                let finished = finish(child, DEADLINE);
                let (status, stderr) = (finished.status, &finished.stderr);
                let read = if redirection.is_refused() {
                    OTHER.to_vec()
                } else {
                    [&held, OTHER].concat()
                };
                let after = fs::read(&path).expect("reading the file");
                assert!(
                    after == redirection.result(CONTENTS, &reference(&read)),
                    "{variant}, {case}: {status:?}, {stderr:?}, the file is {:?}",
                    String::from_utf8_lossy(&after)
                );
                if !redirection.is_refused() {
                    assert!(status.success(), "{variant}, {case}: {status:?} {stderr:?}");
                    assert_eq!(stderr, "", "{variant}, {case}");
                    continue;
                }
                assert_eq!(status.code(), Some(1), "{variant}, {case}: {stderr:?}");
                let lines: Vec<&str> = stderr.lines().collect();
                assert_eq!(lines.len(), 1, "{variant}, {case}: {stderr:?}");
                // How stdin is named is not docs/CONTRACT.md §8.3's to say: `-`, as cat does, or
                // `stdin`.
                let name = if from_stdin {
                    lines[0]
                        .strip_prefix(&format!("{}: ", variant.program))
                        .and_then(|rest| rest.strip_suffix(": input file is output file"))
                        .unwrap_or_default()
                        .to_owned()
                } else {
                    plain(&path)
                };
                let expected = format!("{}: {name}: input file is output file", variant.program);
                assert!(
                    !name.is_empty() && lines[0] == expected,
                    "{variant}, {case}: {:?}",
                    lines[0]
                );
            }
        }
    });
}

/// Why the binaries cannot be run as another user here, if they cannot: only root may switch,
/// and `setpriv` does it.
fn cannot_drop_root() -> Option<&'static str> {
    // /proc/self belongs to the effective user of whoever looks at it.
    let euid = fs::metadata("/proc/self").map(|meta| meta.uid());
    if euid.ok() != Some(0) {
        return Some("not root, so no other user to drop to");
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        return Some("no setpriv");
    }
    None
}

/// `path` where the user nobody may run it: as it is when every folder above it is open to all,
/// else a copy in a folder of the temporary directory (a checkout under /root is closed to
/// others, and the test must not skip there).
fn runnable_by_all(path: &OsStr) -> PathBuf {
    let open_to_all = |path: &Path| fs::metadata(path).is_ok_and(|meta| meta.mode() & 0o001 != 0);
    let path = Path::new(path);
    if path.ancestors().all(open_to_all) {
        return path.to_owned();
    }
    let folder = std::env::temp_dir().join(format!("pipelines-nobody-{}", std::process::id()));
    fs::create_dir_all(&folder).expect("making a folder for the copies");
    fs::set_permissions(&folder, fs::Permissions::from_mode(0o755)).expect("opening it to all");
    let copy = folder.join(path.file_name().expect("a binary's file name"));
    fs::copy(path, &copy).expect("copying the binary");
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).expect("opening it to all");
    copy
}

/// `command` run as the unprivileged user nobody, with no groups; the binaries it names are
/// run from where nobody may run them.
fn nobody(command: &Command) -> Command {
    let binaries: Vec<&OsStr> = variants().iter().map(|v| OsStr::new(v.path)).collect();
    let mut nobody = Command::new("setpriv");
    nobody
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(command.get_program())
        .args(command.get_args().map(|arg| {
            if binaries.contains(&arg) {
                runnable_by_all(arg).into_os_string()
            } else {
                arg.to_owned()
            }
        }))
        .env("RUST_BACKTRACE", "1");
    nobody
}

/// No thread to be had: a thread that cannot start ends the run with one line and exit 1; a
/// binary that needs no thread just works. stdout is a pipe, then a file: the tokio binaries
/// write a file from a thread of their pool. docs/CONTRACT.md §8.4.
fn without_threads(wrap: impl Fn(Command) -> Command, limits: impl Fn(&Variant) -> String) {
    let input = b"a b\n";
    for_each_variant(|variant| {
        let limits = &limits(variant);
        for to_file in [false, true] {
            let mut command = wrap(limited(variant, limits));
            let output = scratch(variant, &format!("no-thread-{limits}"));
            if to_file {
                command.stdout(File::create(&output).expect("creating the output file"));
            } else {
                command.stdout(Stdio::piped());
            }
            let mut child = command
                .stdin(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawning");
            feed(child.stdin.take().expect("stdin"), input.to_vec());
            let mut finished = finish(child, DEADLINE);
            if to_file {
                finished.stdout = fs::read(&output).expect("reading the output");
            }
            let case = format!("{limits}, stdout to a file: {to_file}");
            if finished.status.success() {
                assert_eq!(finished.stdout, reference(input), "{variant}, {case}");
                assert_eq!(finished.stderr, "", "{variant}, {case}");
            } else {
                assert_fails_cleanly(variant, &finished);
            }
        }
    });
}

/// `ulimit -u 1` as an unprivileged user (root is exempt from the limit): the process itself is
/// the one process allowed, so no thread can start.
#[test]
fn no_thread_under_a_process_limit_is_one_line_and_exit_1() {
    if let Some(why) = cannot_drop_root() {
        common::skip(why);
        return;
    }
    without_threads(|command| nobody(&command), |_| "ulimit -u 1".to_owned());
}

/// The least address space, in KiB and to the next 1000, in which `variant` starts at all
/// (prints its version): what its code and libraries take, which differs by build.
fn least_address_space(variant: &Variant) -> u64 {
    (2000..1_000_000)
        .step_by(1000)
        .find(|kib| {
            let mut command = limited(variant, &format!("ulimit -v {kib}"));
            command
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            command
                .spawn()
                .is_ok_and(|mut child| wait_until(&mut child, DEADLINE).success())
        })
        .expect("the binary starts in some address space")
}

/// `ulimit -v` just above what the binary needs to start: too little address space for a
/// thread's stack (2 MiB) besides.
#[test]
fn no_thread_under_a_memory_limit_is_one_line_and_exit_1() {
    without_threads(
        |command| command,
        |variant| format!("ulimit -v {}", least_address_space(variant) + 1500),
    );
}

/// Whether a run of `variant` under `ulimit -v KIB` succeeded; a run that fails must fail
/// cleanly, and every run must end by the deadline (docs/CONTRACT.md §8.4).
fn runs_under(variant: &Variant, kib: u64) -> bool {
    let input = b"a b\n";
    let mut child = spawn_piped(limited(variant, &format!("ulimit -v {kib}")));
    feed(child.stdin.take().expect("stdin"), input.to_vec());
    let finished = finish(child, DEADLINE);
    if finished.status.success() {
        assert_eq!(
            finished.stdout,
            reference(input),
            "{variant}, ulimit -v {kib}"
        );
    } else {
        assert_fails_cleanly(variant, &finished);
    }
    finished.status.success()
}

/// The binary `program` at its defaults.
fn at_defaults(program: &str) -> &'static Variant {
    variants()
        .into_iter()
        .find(|variant| variant.program == program && variant.args.is_empty())
        .expect("the binary at its defaults")
}

/// The least `ulimit -v` in which `variant` starts, to the next MiB past it, and the least, to
/// the next MiB, in which it then first ran: its threads' stacks and heaps besides.
fn least_and_first_ran(variant: &Variant) -> (u64, u64) {
    let least = least_address_space(variant) + 1000;
    let first_ran = (least..least + 1_000_000)
        .step_by(1000)
        .find(|&kib| runs_under(variant, kib))
        .expect("the binary runs in some address space");
    (least, first_ran)
}

/// Runs `variant`, once each, under every page of the 1200 KiB below `first_ran` (down to
/// `least`): there the last of its threads had room for its stack but not for what the standard
/// library maps and allocates as a thread it started begins, and the process aborted (a band
/// some 40 KiB wide, in most runs, just below the least limit it runs in, whatever the CPU
/// count), unless the room for the threads is checked before they start.
fn every_page_below(variant: &Variant, least: u64, first_ran: u64) {
    // A page: no mapping is smaller, so no finer step tells apart another limit.
    const PAGE_KIB: usize = 4;
    for kib in (first_ran.saturating_sub(1200).max(least)..first_ran).step_by(PAGE_KIB) {
        runs_under(variant, kib);
    }
}

/// `pipeline` under `ulimit -v` limits from the least in which it starts up to where it runs,
/// every page just below that ([`every_page_below`]), and closely, several runs a limit, around
/// the least in which it first ran: there tokio can start one worker thread but not the next,
/// and its build's panic, once a worker had taken its task, waited in the unwinding for that
/// worker for ever (now and then: a hang in a few of the runs). Every run must end by the
/// deadline, succeeding or failing cleanly (docs/CONTRACT.md §8.4).
#[test]
fn pipeline_never_hangs_starting_its_workers_under_a_memory_limit() {
    let variant = at_defaults("pipeline");
    let (least, first_ran) = least_and_first_ran(variant);
    every_page_below(variant, least, first_ran);
    for kib in (first_ran.saturating_sub(4000).max(least)..first_ran + 3000).step_by(250) {
        for _ in 0..6 {
            runs_under(variant, kib);
        }
    }
}

/// `batched` under `ulimit -v` limits from the least in which it starts up to where it runs, and
/// every page just below that ([`every_page_below`]), where its last worker aborted the process
/// (exit 134) rather than failing cleanly (docs/CONTRACT.md §8.4).
#[test]
fn batched_never_aborts_starting_its_workers_under_a_memory_limit() {
    let variant = at_defaults("batched");
    let (least, first_ran) = least_and_first_ran(variant);
    every_page_below(variant, least, first_ran);
}

/// `BIN /dev/zero` under `ulimit -v`: one endless line, held whole until it ends, outgrows any
/// memory. The binary must say so in one line and exit 1, not abort. The same limit leaves room
/// for an ordinary run, so it is the line that fails, not the start (docs/CONTRACT.md §7, §8.4).
#[test]
fn a_line_too_long_for_memory_is_one_line_and_exit_1() {
    const LIMITS: &str = "ulimit -v 400000";
    for_each_variant(|variant| {
        let mut ordinary = spawn_piped(limited(variant, LIMITS));
        feed(ordinary.stdin.take().expect("stdin"), b"a b\n".to_vec());
        let ordinary = finish(ordinary, DEADLINE);
        assert!(
            ordinary.status.success(),
            "{variant}: an ordinary run under `{LIMITS}` failed: {:?}",
            ordinary.stderr
        );

        let mut endless = limited(variant, LIMITS);
        endless.arg("/dev/zero");
        let mut child = spawn_piped(endless);
        drop(child.stdin.take());
        let finished = finish(child, DEADLINE);
        assert_fails_cleanly(variant, &finished);
    });
}

/// A missing FILE whose name holds a newline, or bytes that are not UTF-8: still exactly one
/// line on stderr, naming the file escaped as GNU tools do, so it cannot forge a message
/// (docs/CONTRACT.md §8.5).
#[test]
fn names_in_messages_are_escaped() {
    for_each_variant(|variant| {
        let forged = format!("x\n{}: forged", variant.program).into_bytes();
        for name in [&forged[..], b"bad\xff\xfename"] {
            let name = OsStr::from_bytes(name);
            let mut command = command(variant);
            command.current_dir(env!("CARGO_TARGET_TMPDIR")).arg(name);
            let mut child = spawn_piped(command);
            drop(child.stdin.take());
            let finished = finish(child, DEADLINE);
            let stderr = &finished.stderr;
            assert_eq!(finished.status.code(), Some(1), "{variant}: {stderr:?}");
            assert_eq!(stderr.lines().count(), 1, "{variant}: {stderr:?}");
            assert!(
                stderr.starts_with(&format!("{}: ", variant.program)),
                "{variant}: {stderr:?}"
            );
            let quoted = gnu_quoted(name);
            assert!(
                stderr.contains(&quoted),
                "{variant}: {stderr:?} does not name {quoted}"
            );
            assert!(!stderr.contains('\u{fffd}'), "{variant}: {stderr:?}");
        }
    });
}

/// `path` as a message names it: as it is, as GNU tools show a name of only these characters.
fn plain(path: &Path) -> String {
    let name = path.to_str().expect("a UTF-8 path");
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-".contains(c);
    assert!(name.chars().all(plain), "{name:?} would be quoted");
    name.to_owned()
}

/// A missing `name` as GNU `cat` quotes it in its message: the reference the binaries' quoting
/// is checked against (docs/CONTRACT.md §8.5).
fn gnu_quoted(name: &OsStr) -> String {
    let told = Command::new("cat")
        .env("LC_ALL", "C")
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .arg("--")
        .arg(name)
        .output()
        .expect("running cat");
    let stderr = String::from_utf8(told.stderr).expect("cat's message is UTF-8");
    let quoted = stderr
        .strip_prefix("cat: ")
        .and_then(|rest| rest.strip_suffix(": No such file or directory\n"));
    quoted
        .expect("cat's one line about a missing file")
        .to_owned()
}
