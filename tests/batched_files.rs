//! `batched` reading regular files in ranges, each worker its own: what comes out is what
//! `cat FILE... | batched` would give (docs/CONTRACT.md §9). Every case runs on
//! real files, in process through the library and through the binary.

mod common;

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::thread;

use common::{DEADLINE, finish, line_soup, reference, run_command, wait_until, within};
use linewright::Error;
use linewright::frame::Chunk;
use linewright::strategy::batched::{Knobs, run};
use linewright::transform::SpaceCount;
use linewright::{FileInput, Input, Piece, Range, RangedInput};
use proptest::prelude::*;

fn knobs(threads: usize, chunk_size: usize) -> Knobs {
    Knobs {
        threads,
        chunk_size,
        queue: 1,
        clocks: false,
    }
}

/// A scratch path of this test binary's own.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("batched-files");
    fs::create_dir_all(&dir).expect("a scratch dir");
    dir.join(name)
}

/// `count` distinct lines, 0 to 8 spaces each, numbered from `from`.
fn numbered_lines(from: usize, count: usize) -> Vec<u8> {
    (from..from + count)
        .flat_map(|n| {
            let spaces = " s".repeat(n % 9);
            format!("line {n:07}{spaces} end\n").into_bytes()
        })
        .collect()
}

/// Runs the library on `files` (FILE arguments), collecting the output; a run that hangs fails.
fn in_process(knobs: &Knobs, files: &[PathBuf]) -> Vec<u8> {
    let (knobs, files) = (knobs.clone(), files.to_vec());
    within("the run in process", move || {
        let mut output = Vec::new();
        run(&knobs, SpaceCount, FileInput::of(&files, None), &mut output).expect("runs");
        output
    })
}

fn batched(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_batched"));
    command.args(args);
    command
}

/// Runs the binary with a small chunk size on `files`, stdin empty, and checks it transforms
/// them as `cat` would feed them: exit 0, nothing on stderr.
fn assert_binary_transforms(files: &[&Path], expected_input: &[u8]) {
    for threads in ["1", "3"] {
        let mut command = batched(&["--threads", threads, "--chunk-size", "1K"]);
        command.args(files);
        let finished = run_command(command, b"");
        assert!(finished.status.success(), "{threads}: {finished:?}");
        assert_eq!(finished.stderr, "");
        assert!(
            finished.stdout == reference(expected_input),
            "--threads {threads}: output differs"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Ranges tile a file exactly at any chunk size, down to a line a range, and a file's last
    /// line without its `\n` runs on into the next one, the same file named again.
    #[test]
    fn ranges_tile_any_file(input in line_soup(300), chunk_size in 1usize..40, threads in 1usize..4) {
        let path = scratch(&format!("soup-{chunk_size}-{threads}"));
        fs::write(&path, &input).expect("writing");
        let output = in_process(&knobs(threads, chunk_size), &[path.clone(), path.clone()]);
        prop_assert!(output == reference(&[&input[..], &input[..]].concat()));
    }

    /// The same with lines longer than the 4 KiB a cut looks ahead, which the reading thread
    /// reads through to their ends itself, the last perhaps without its `\n`.
    #[test]
    fn ranges_tile_a_file_of_long_lines(
        lengths in prop::collection::vec(0usize..20_000, 1..10),
        ended in any::<bool>(),
        chunk_size in 1usize..9_000,
        threads in 1usize..4,
    ) {
        let mut input: Vec<u8> = lengths
            .iter()
            .flat_map(|&length| [&b"a b "[..].repeat(length / 4)[..], b"\n"].concat())
            .collect();
        if !ended {
            input.pop();
        }
        let path = scratch(&format!("long-soup-{chunk_size}-{threads}"));
        fs::write(&path, &input).expect("writing");
        let output = in_process(&knobs(threads, chunk_size), &[path.clone(), path.clone()]);
        prop_assert!(output == reference(&[&input[..], &input[..]].concat()));
    }
}

/// Many ranges, each line its own at chunk size 1, and a file large enough for every worker.
#[test]
fn ranges_of_a_large_file_come_out_in_order() {
    let path = scratch("large");
    let input = numbered_lines(0, 200_000);
    fs::write(&path, &input).expect("writing");
    // A line a range: a cut, a pread and a hand-off a line, so on a part of the file only.
    let part = &input[..input.len() / 20];
    let part_path = scratch("large-part");
    fs::write(&part_path, part).expect("writing");
    let output = in_process(&knobs(1, 1), std::slice::from_ref(&part_path));
    assert!(output == reference(part));
    for (threads, chunk_size) in [(2, 1000), (4, 4096), (3, 1 << 20)] {
        let output = in_process(&knobs(threads, chunk_size), std::slice::from_ref(&path));
        assert!(output == reference(&input), "{threads} {chunk_size}");
    }
    assert_binary_transforms(&[&path], &input);
}

/// A file whose size says nothing (`/proc`: 0) is read to its end.
#[test]
fn a_file_of_size_zero_is_read_to_its_end() {
    let path = PathBuf::from("/proc/self/mountinfo");
    let expected = fs::read(&path).expect("reading /proc");
    assert!(!expected.is_empty() && fs::metadata(&path).expect("stat").len() == 0);
    // /proc/self is the reader's own: the test process's mounts are the binary's.
    let output = in_process(&knobs(2, 1), std::slice::from_ref(&path));
    assert!(output == reference(&expected));
    assert_binary_transforms(&[&path], &expected);
}

/// The same file twice, its last line without `\n` running on into the second copy, then into
/// a file after it.
#[test]
fn the_same_file_twice_and_a_last_line_running_on() {
    let first = scratch("twice");
    let mut input = numbered_lines(0, 5000);
    input.extend_from_slice(b"no end here  ");
    fs::write(&first, &input).expect("writing");
    let second = scratch("after-twice");
    let after = numbered_lines(9000, 3000);
    fs::write(&second, &after).expect("writing");
    let files = [first.clone(), first.clone(), second.clone()];
    let expected = [&input[..], &input[..], &after[..]].concat();
    for threads in [1, 2] {
        let output = in_process(&knobs(threads, 1000), &files);
        assert!(output == reference(&expected), "{threads}");
    }
    assert_binary_transforms(&[&first, &first, &second], &expected);
}

/// A FIFO named as a FILE is a stream between regular files; so is `/dev/stdin`, a pipe or a
/// regular file.
#[test]
fn a_fifo_and_dev_stdin_named_as_files() {
    let file = scratch("beside-fifo");
    let contents = numbered_lines(0, 4000);
    fs::write(&file, &contents).expect("writing");
    let piped = numbered_lines(50_000, 3000);
    let fifo = scratch("fifo");
    let _ = fs::remove_file(&fifo);
    // The POSIX tool: rustix offers neither `mknodat` nor `mkfifoat` on macOS.
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.expect("running mkfifo").success(), "mkfifo");
    let feed = |fifo: PathBuf, bytes: Vec<u8>| {
        thread::spawn(move || File::create(fifo).and_then(|mut file| file.write_all(&bytes)))
    };
    let expected = [&contents[..], &piped[..], &contents[..]].concat();
    let files = [file.clone(), fifo.clone(), file.clone()];
    let feeding = feed(fifo.clone(), piped.clone());
    let output = in_process(&knobs(2, 1000), &files);
    within("feeding the FIFO", || feeding.join())
        .expect("no panic")
        .expect("fed");
    assert!(output == reference(&expected));

    let feeding = feed(fifo.clone(), piped.clone());
    let mut command = batched(&["--threads", "2", "--chunk-size", "1K"]);
    command.args(&files);
    let finished = run_command(command, b"");
    within("feeding the FIFO", || feeding.join())
        .expect("no panic")
        .expect("fed");
    assert!(finished.status.success(), "{finished:?}");
    assert!(finished.stdout == reference(&expected));

    // `/dev/stdin` is a regular file here, then a pipe.
    let dev_stdin = Path::new("/dev/stdin");
    let mut command = batched(&["--chunk-size", "1K"]);
    command.arg(&file).arg(dev_stdin).arg(&file);
    let child = command
        .stdin(File::open(&file).expect("opening"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning");
    let finished = finish(child, DEADLINE);
    assert!(finished.status.success(), "{finished:?}");
    let thrice = [&contents[..], &contents[..], &contents[..]].concat();
    assert!(finished.stdout == reference(&thrice));
    let mut command = batched(&["--chunk-size", "1K"]);
    command.arg(&file).arg(dev_stdin).arg(&file);
    let finished = run_command(command, &piped);
    assert!(finished.status.success(), "{finished:?}");
    assert!(finished.stdout == reference(&expected));
}

/// Starts a run on `path` writing into a pipe, reads its first output line, does `change` to
/// the file while the run is held back by the unread pipe, far from the file's end, then reads
/// the rest. Returns all the output; `run` starts the run and returns a waiter for its end.
fn change_while_read(
    path: &Path,
    run: impl FnOnce(&Path, OwnedFd) -> Box<dyn FnOnce() -> bool>,
    change: impl FnOnce(),
) -> (Vec<u8>, bool) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    let ended = run(path, writer.into());
    let (mut output, reader) = within("the first line", || {
        let mut reader = BufReader::new(reader);
        let mut output = Vec::new();
        reader.read_until(b'\n', &mut output).expect("reading");
        (output, reader)
    });
    change();
    output.extend(within("the rest", || {
        let mut rest = Vec::new();
        let mut reader = reader;
        reader.read_to_end(&mut rest).expect("reading");
        rest
    }));
    (output, ended())
}

/// The run in process.
fn run_in_process(path: &Path, output: OwnedFd) -> Box<dyn FnOnce() -> bool> {
    let files = vec![path.to_owned()];
    let running = thread::spawn(move || {
        let input = FileInput::of(&files, None);
        run(&knobs(2, 64 << 10), SpaceCount, input, File::from(output)).is_ok()
    });
    Box::new(move || within("the run in process", || running.join()).expect("no panic"))
}

/// The run through the binary.
fn run_binary(path: &Path, output: OwnedFd) -> Box<dyn FnOnce() -> bool> {
    let mut child = batched(&["--threads", "2", "--chunk-size", "64K"])
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::from(output))
        .spawn()
        .expect("spawning");
    Box::new(move || wait_until(&mut child, DEADLINE).success())
}

/// What is appended to a file before its end is reached comes out too, the last line running
/// on into the appended bytes.
#[test]
fn a_file_that_grows_while_read() {
    for (name, run) in [
        ("grows-lib", run_in_process as fn(&Path, OwnedFd) -> _),
        ("grows-bin", run_binary),
    ] {
        let path = scratch(name);
        let mut input = numbered_lines(0, 300_000);
        input.extend_from_slice(b"runs on ");
        fs::write(&path, &input).expect("writing");
        let appended = numbered_lines(1_000_000, 100_000);
        let (output, ok) = change_while_read(&path, run, || {
            let mut file = OpenOptions::new()
                .append(true)
                .open(&path)
                .expect("opening");
            file.write_all(&appended).expect("appending");
        });
        assert!(ok, "{name}");
        assert!(
            output == reference(&[&input[..], &appended[..]].concat()),
            "{name}"
        );
    }
}

/// A file cut short while read neither kills the process nor breaks a line: each line that
/// comes out is a whole rendered line of the file, or of the part of a line left at the cut.
#[test]
fn a_file_that_shrinks_while_read() {
    for (name, run) in [
        ("shrinks-lib", run_in_process as fn(&Path, OwnedFd) -> _),
        ("shrinks-bin", run_binary),
    ] {
        let path = scratch(name);
        let input = numbered_lines(0, 300_000);
        fs::write(&path, &input).expect("writing");
        let (output, ok) = change_while_read(&path, run, || {
            let file = OpenOptions::new().write(true).open(&path).expect("opening");
            file.set_len(input.len() as u64 / 3 + 5)
                .expect("truncating");
        });
        assert!(ok, "{name}");
        assert!(output.ends_with(b"\n"), "{name}");
        for line in output.split_inclusive(|&byte| byte == b'\n') {
            let body = &line[line.iter().position(|&b| b == b']').expect("a header") + 1..];
            assert_eq!(reference(body), line, "{name}");
            let body = body.strip_suffix(b"\n").expect("a whole line");
            assert!(body.starts_with(b"line "), "{name}");
        }
    }
}

/// A FILE that is the output itself is refused, however large, and the others are read.
#[test]
fn input_that_is_the_output_is_refused() {
    let path = scratch("self");
    let contents = numbered_lines(0, 20_000);
    let other = scratch("not-self");
    let others = numbered_lines(100, 50);
    fs::write(&other, &others).expect("writing");

    fs::write(&path, &contents).expect("writing");
    let output = OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("opening");
    let watched = OwnedFd::from(output.try_clone().expect("dup"));
    let input = FileInput::of(&[path.clone(), other.clone()], Some(watched));
    within("the run in process", move || {
        run(&knobs(2, 1000), SpaceCount, input, &output).expect("runs");
    });
    let after = fs::read(&path).expect("reading");
    assert!(after == [&contents[..], &reference(&others)[..]].concat());

    fs::write(&path, &contents).expect("writing");
    let mut command = batched(&["--chunk-size", "1K"]);
    command.arg(&path).arg(&other);
    let child = command
        .stdin(Stdio::null())
        .stdout(
            OpenOptions::new()
                .append(true)
                .open(&path)
                .expect("opening"),
        )
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning");
    let finished = finish(child, DEADLINE);
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    assert!(finished.stderr.ends_with(": input file is output file\n"));
    let after = fs::read(&path).expect("reading");
    assert!(after == [&contents[..], &reference(&others)[..]].concat());
}

/// Hundreds of FILEs, each long enough to be read in ranges, under a descriptor limit far below
/// their number: each is closed once read.
#[test]
fn hundreds_of_files_under_a_low_descriptor_limit() {
    let mut paths = Vec::new();
    let mut expected = Vec::new();
    for n in 0..300 {
        let path = scratch(&format!("many-{n}"));
        let contents = numbered_lines(n * 100, 100);
        fs::write(&path, &contents).expect("writing");
        expected.extend_from_slice(&contents);
        paths.push(path);
    }
    let output = in_process(&knobs(3, 1000), &paths);
    assert!(output == reference(&expected));
    let mut command = Command::new("sh");
    command
        .args(["-c", "ulimit -n 24 && exec \"$0\" --chunk-size 1K \"$@\""])
        .arg(env!("CARGO_BIN_EXE_batched"))
        .args(&paths);
    let finished = run_command(command, b"");
    assert!(finished.status.success(), "{finished:?}");
    assert_eq!(finished.stderr, "");
    assert!(finished.stdout == reference(&expected));
}

/// A regular file that opens but whose ranges cannot be read (stdin open for writing only): one
/// line on stderr, the file skipped, everything around it still transformed, exit 1.
#[test]
fn a_read_error_in_a_range_is_reported_and_the_file_skipped() {
    let path = scratch("write-only");
    fs::write(&path, numbered_lines(0, 10_000)).expect("writing");
    let other = scratch("after-write-only");
    let others = numbered_lines(100, 50);
    fs::write(&other, &others).expect("writing");
    let write_only = || OpenOptions::new().write(true).open(&path).expect("opening");

    /// One regular file in one range, as `FileInput` offers a large one, then nothing.
    struct OneFile(Option<Arc<File>>, bool);
    impl Input for OneFile {
        fn read(&mut self, _: &mut [u8]) -> Result<usize, Error> {
            Ok(0)
        }
        fn is_ready(&mut self) -> bool {
            true
        }
    }
    impl RangedInput for OneFile {
        fn next_piece(&mut self, size: usize, _: &mut Chunk) -> Result<Piece, Error> {
            Ok(match (self.0.take(), self.1) {
                (Some(file), _) => Piece::Range(Range {
                    file,
                    at: 0,
                    len: size,
                }),
                (None, true) => Piece::RangesEnd,
                (None, false) => Piece::Stream,
            })
        }
        fn ranges_read(&mut self, failure: Option<std::io::Error>) {
            let error = failure.expect("the range failed");
            assert_eq!(error.raw_os_error(), Some(9), "{error}");
            self.1 = false;
        }
    }
    let input = OneFile(Some(Arc::new(write_only())), true);
    let (output, stats) = within("the run in process", move || {
        let mut output = Vec::new();
        let stats = run(&knobs(2, 1000), SpaceCount, input, &mut output).expect("runs");
        (output, stats)
    });
    assert!(output.is_empty() && stats.lines == 0);

    let mut command = batched(&["--chunk-size", "1K", "-"]);
    command.arg(&other);
    let child = command
        .stdin(write_only())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning");
    let finished = finish(child, DEADLINE);
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    assert_eq!(
        finished.stderr,
        "batched: reading stdin: Bad file descriptor (os error 9)\n"
    );
    assert!(finished.stdout == reference(&others));
}

/// A file of lines far longer than a chunk is read about once: where a cut finds no line end
/// near it, the reading thread reads the range through to the line's end itself, rather than
/// reading each line once to find the cut and again in the worker. The bytes `batched` read are
/// its `rchar` (`/proc/PID/io`), which the shell that waited for it has taken into its own.
#[test]
fn lines_longer_than_a_chunk_are_read_once() {
    let path = scratch("long-lines");
    let input: Vec<u8> = (0..40)
        .flat_map(|n| format!("{n}{}\n", " x".repeat(50_000)).into_bytes())
        .collect();
    fs::write(&path, &input).expect("writing");
    // Its last line, as long, lacks its `\n` and runs on into the next file.
    let unended = scratch("long-lines-unended");
    let last = " y".repeat(30_000).into_bytes();
    fs::write(&unended, [&input[..], &last[..]].concat()).expect("writing");
    let next = scratch("after-long-lines");
    fs::write(&next, b"next\n").expect("writing");
    let expected = [&input[..], &last[..], b"next\n"].concat();
    assert!(in_process(&knobs(2, 4096), &[unended, next]) == reference(&expected));
    let files = [path];
    let script = r#""$0" --chunk-size 4K "$1" > /dev/null && exec cat /proc/$$/io"#;
    let mut command = Command::new("sh");
    command.args(["-c", script, env!("CARGO_BIN_EXE_batched")]);
    command.arg(&files[0]);
    let finished = run_command(command, b"");
    assert!(finished.status.success(), "{finished:?}");
    let io = String::from_utf8(finished.stdout).expect("text");
    let read: u64 = io
        .lines()
        .find_map(|line| line.strip_prefix("rchar: "))
        .and_then(|count| count.parse().ok())
        .expect("an rchar line");
    let size = input.len() as u64;
    assert!(
        read < size + size / 4,
        "read {read} bytes of a {size}-byte file"
    );
}

/// Reading a file in ranges changes nothing about reading it: the bytes read count as read.
#[test]
fn stats_count_the_bytes_the_workers_read() {
    let path = scratch("counted");
    let input = numbered_lines(0, 10_000);
    fs::write(&path, &input).expect("writing");
    let files = [path];
    let files_input = FileInput::of(&files, None);
    let (output, stats) = within("the run in process", move || {
        let mut output = Vec::new();
        let stats = run(&knobs(2, 1000), SpaceCount, files_input, &mut output).expect("runs");
        (output, stats)
    });
    assert_eq!(stats.bytes_in, input.len() as u64);
    assert_eq!(stats.lines, 10_000);
    assert_eq!(stats.bytes_out, output.len() as u64);
    let mut reread = Vec::new();
    File::open(&files[0])
        .expect("opening")
        .read_to_end(&mut reread)
        .expect("reading");
    assert!(reread == input);
}
