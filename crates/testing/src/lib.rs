//! What the workspace's tests share: the contract's reference model (the one every rendering is
//! checked against), skipping a test that cannot run here (or failing it where it must), paths no
//! other test uses, files and pipes to read, gzip input, and deadlines on what may wait, so that a
//! regression fails a test instead of hanging the run. A dev-dependency only; never published.

use std::cell::RefCell;
use std::fs::{self, File, OpenOptions};
use std::io::{self, PipeReader, PipeWriter, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long a test waits for what should come at once before it fails: long beside any
/// wait a test expects, even on a loaded machine.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// The deadline of decoding a few kilobytes in memory, where a decoder that loops for ever
/// should fail its test in seconds.
pub const IN_MEMORY: Duration = Duration::from_secs(10);

/// A path no other test of any run uses: the process's id, when its first path was made,
/// and a count in it. The id alone is not enough: a test that fails leaves its files behind,
/// and a later run given the same id (hundreds of mutant runs recycle them) met them.
pub fn path(what: &str) -> PathBuf {
    static STARTED: OnceLock<u128> = OnceLock::new();
    static MADE: AtomicU64 = AtomicU64::new(0);
    let started = STARTED.get_or_init(|| {
        let since = SystemTime::now().duration_since(UNIX_EPOCH);
        since.unwrap_or_default().as_nanos()
    });
    let n = MADE.fetch_add(1, Ordering::Relaxed);
    let id = std::process::id();
    std::env::temp_dir().join(format!("pipelines-{what}-{id}-{started}-{n}"))
}

/// A pipe's read end named as a FILE, as a shell's process substitution names it, and its
/// two ends.
pub fn pipe_as_file() -> (PathBuf, PipeReader, PipeWriter) {
    let (reader, writer) = std::io::pipe().unwrap();
    let path = PathBuf::from(format!("/dev/fd/{}", reader.as_raw_fd()));
    (path, reader, writer)
}

/// FILEs in a folder of their own (the third): `one\ntw`, one missing, the folder itself,
/// `o\n`. Read past the two that fail, they are `one\ntwo\n`.
pub fn files_and_failures(what: &str) -> [PathBuf; 4] {
    let dir = path(what);
    fs::create_dir_all(&dir).unwrap();
    let (first, second) = (dir.join("first"), dir.join("second"));
    fs::write(&first, b"one\ntw").unwrap();
    fs::write(&second, b"o\n").unwrap();
    [first, dir.join("missing"), dir, second]
}

/// One gzip member of `bytes`, as `gzip -6` writes it.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// `bytes` as `bgzip` writes them: a member of each 65,280 bytes ([`bgzf_member`]).
pub fn bgzf(bytes: &[u8]) -> Vec<u8> {
    bytes
        .chunks(65_280)
        .flat_map(|text| bgzf_member(text, 0, None))
        .collect()
}

/// A gzip member of `bytes` with a BGZF `BC` field that says its size is `size` (its own
/// when `None`), the field after another of `before` bytes, or alone, as `bgzip` writes it,
/// when `before` is 0.
pub fn bgzf_member(bytes: &[u8], before: usize, size: Option<usize>) -> Vec<u8> {
    use std::io::Write;
    let mut deflate = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
    deflate.write_all(bytes).unwrap();
    let deflate = deflate.finish().unwrap();
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    let other = if before > 0 { 4 + before } else { 0 };
    let extra = other + 6;
    let own = 12 + extra + deflate.len() + 8;
    let mut member = vec![0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff];
    member.extend_from_slice(&(extra as u16).to_le_bytes());
    if before > 0 {
        member.extend_from_slice(b"XY");
        member.extend_from_slice(&(before as u16).to_le_bytes());
        member.extend(std::iter::repeat_n(b'x', before));
    }
    member.extend_from_slice(b"BC\x02\x00");
    member.extend_from_slice(&((size.unwrap_or(own) - 1) as u16).to_le_bytes());
    member.extend_from_slice(&deflate);
    member.extend_from_slice(&crc.sum().to_le_bytes());
    member.extend_from_slice(&crc.amount().to_le_bytes());
    member
}

/// A file holding `bytes`, open for reading and writing, its name already gone.
pub fn file(bytes: &[u8]) -> File {
    let path = path("file");
    fs::write(&path, bytes).unwrap();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    fs::remove_file(&path).unwrap();
    file
}

/// What `body` returns, and how many bytes this thread read from files in it: the kernel's
/// count (`rchar`), which counts `pread`s too, less what reading the count read. glibc's `malloc`
/// may add a byte of `/proc/sys/vm/overcommit_memory`, once a process, on the thread that first
/// gives back memory of a heap of its own.
pub fn counting_reads<T>(body: impl FnOnce() -> T) -> (T, u64) {
    // The count read does not count the read that reads it, but the next one does.
    let count = || {
        let io = fs::read_to_string("/proc/thread-self/io").unwrap();
        let rchar = io.lines().find_map(|line| line.strip_prefix("rchar: "));
        (rchar.unwrap().parse::<u64>().unwrap(), io.len() as u64)
    };
    let (before, counting) = count();
    let result = body();
    (result, count().0 - before - counting)
}

/// What `body` returns, run on a thread of its own; if it takes past [`DEADLINE`], ends the
/// test process, naming `what`. A panic in `body` fails the test as its own.
pub fn within<T: Send + 'static>(what: &str, body: impl FnOnce() -> T + Send + 'static) -> T {
    within_for(DEADLINE, what, body)
}

/// [`within`] a `deadline` of the caller's ([`IN_MEMORY`] for work in memory). Past it, the
/// process ends with a failure, where a panic would fail the test alone: the thread that
/// overran cannot be stopped, and left spinning beside the tests after it (and a property
/// test's shrinking, which meets the deadline again for each case it tries) it made a hang
/// of a run rather than a failure.
pub fn within_for<T: Send + 'static>(
    deadline: Duration,
    what: &str,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done, result) = mpsc::channel();
    let running = std::thread::spawn(move || done.send(body()));
    match result.recv_timeout(deadline) {
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            // Straight to the descriptor: the test's captured output dies with the process.
            let _ = writeln!(io::stderr(), "{what}: no end within {deadline:?}");
            std::process::exit(101)
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => match running.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(_) => unreachable!("the result was sent"),
        },
    }
}

/// The calling thread's id in the kernel, for [`until_polling`].
pub fn thread_id() -> u32 {
    let link = fs::read_link("/proc/thread-self").unwrap();
    let id = link.file_name().unwrap().to_str().unwrap();
    id.parse().unwrap()
}

/// Waits until `condition` holds, asking every millisecond; fails the test past [`DEADLINE`].
/// For a state the test waits on, such as a process asleep on a pipe, so that it synchronises on
/// the state itself rather than on a guess of how long reaching it takes.
pub fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(
            started.elapsed() < DEADLINE,
            "{what}: not after {DEADLINE:?}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether the thread whose `/proc` folder is `task` is asleep (state `S`) in a kernel function
/// whose name holds `waiting_in`: `pipe_read` (reading an empty pipe), `pipe_write` (writing a
/// full one), `poll` (waiting in poll or epoll). False once it is gone.
pub fn asleep_in(task: &Path, waiting_in: &str) -> bool {
    let state = fs::read_to_string(task.join("stat"))
        .ok()
        .and_then(|stat| Some(stat.rsplit_once(')')?.1.split_whitespace().next()? == "S"));
    let wchan = fs::read_to_string(task.join("wchan")).unwrap_or_default();
    state == Some(true) && wchan.contains(waiting_in)
}

/// Returns once thread `id` of this process sleeps in `poll`: the event a test that must act
/// while a read waits waits for, rather than sleeping a while and hoping the read got there.
pub fn until_polling(id: u32) {
    let task = PathBuf::from(format!("/proc/self/task/{id}"));
    wait_for(&format!("thread {id} waiting in poll"), || {
        asleep_in(&task, "poll")
    });
}

/// The lines of `input`, each without its `\n`, as the contract splits them (docs/CONTRACT.md
/// §2.1), written as plainly as possible and independently of the library.
pub fn lines_of(input: &[u8]) -> impl Iterator<Item = &[u8]> {
    // A final `\n` ends the last line rather than starting an empty one; no input, no line.
    let body = input.strip_suffix(b"\n").unwrap_or(input);
    let lines = (!input.is_empty()).then(|| body.split(|&byte| byte == b'\n'));
    lines.into_iter().flatten()
}

/// The contract's output for `input` (`rendered`, below); the last input's is kept, as tests ask
/// again for the same input's for each variant and format, and working out megabytes anew,
/// unoptimised, took seconds each time.
pub fn reference(input: &[u8]) -> Vec<u8> {
    thread_local! {
        static LAST: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
    }
    LAST.with_borrow_mut(|(last_input, last_output)| {
        if last_input.as_slice() != input {
            *last_output = rendered(input);
            *last_input = input.to_vec();
        }
        last_output.clone()
    })
}

/// The contract, written as plainly as possible and independently of the library.
fn rendered(input: &[u8]) -> Vec<u8> {
    let mut output = Vec::new();
    for line in lines_of(input) {
        let spaces = line.iter().filter(|&&byte| byte == b' ').count();
        let count = if spaces > 6 {
            ">6".to_string()
        } else {
            spaces.to_string()
        };
        output.extend_from_slice(format!("[spaces: {count}]").as_bytes());
        output.extend_from_slice(line);
        output.push(b'\n');
    }
    output
}

/// Set to `1` where every capability the tests ask for is expected (CI: root, setpriv, AVX2), so
/// a test that would skip fails instead, and one that silently stopped running is noticed. The
/// one exemption is [`skip_optional`]'s.
pub const NO_SKIPS: &str = "PIPELINES_NO_SKIPS";

/// Says on stderr that the calling test cannot run here, and why; the caller then returns. Under
/// [`NO_SKIPS`]`=1` it panics instead, failing the test.
pub fn skip(why: &str) {
    if std::env::var_os(NO_SKIPS).is_some_and(|value| value == "1") {
        panic!("{NO_SKIPS}=1, yet this test cannot run here: {why}");
    }
    eprintln!("skipped: {why}");
}

/// Says on stderr that the calling test cannot run here, and why, even under [`NO_SKIPS`]`=1`:
/// for a capability that CI's machines are not expected to have (AVX-512: the machines of this
/// project's sessions and CI differ, and most lack it), so that its absence fails nothing. The
/// caller then returns.
pub fn skip_optional(why: &str) {
    eprintln!("skipped (optional here, even under {NO_SKIPS}=1): {why}");
}

/// Builds the workspace's binaries and examples, as `cargo test --workspace` builds them (its
/// crates' features unify as in that build, which one package alone does not: it built seven crates
/// again, 48-60 s of a test's run in CI), in the target directory and profile of `built`, a binary
/// cargo built for the calling test; returns that profile's folder. A binary of another package,
/// or an example, has no `CARGO_BIN_EXE_` in a test, and building it is what makes sure it exists
/// and is current.
pub fn workspace_built_beside(built: &Path) -> PathBuf {
    let profile_dir = built.parent().expect("a binary lies in a profile dir");
    let target_dir = profile_dir
        .parent()
        .expect("a profile dir lies in the target dir");
    let profile = match profile_dir.file_name().and_then(|name| name.to_str()) {
        // `cargo test` builds in the test profile, whose folder is `debug`.
        Some("debug") => "test",
        Some(name) => name,
        None => panic!("no profile in {}", profile_dir.display()),
    };
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--workspace", "--bins", "--examples"])
        .args(["--profile", profile])
        .env("CARGO_TARGET_DIR", target_dir)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building the workspace's binaries failed");
    profile_dir.to_owned()
}

/// How many of this process's threads are named `name` (as `thread::Builder::name` sets it, cut
/// to the kernel's 15 bytes).
pub fn threads_named(name: &str) -> usize {
    let Ok(tasks) = fs::read_dir("/proc/self/task") else {
        return 0;
    };
    let comm = |task: fs::DirEntry| fs::read_to_string(task.path().join("comm"));
    tasks
        .filter_map(|task| comm(task.ok()?).ok())
        .filter(|comm| comm.trim_end() == name)
        .count()
}
