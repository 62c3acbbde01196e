//! `-z` decoding ahead (docs/CONTRACT.md §12.5): with more than one decoder, the compressed
//! regular FILEs after the one read are decoded ahead of their turn, and each comes out at its
//! turn as if decoded then. Through every binary, on files made by `gzip` and `zstd` themselves,
//! against the reference model, and against the same run with `--decoders 1` (one FILE at a time,
//! as before decoding ahead). Each run names its decoders, so that a machine of one core still
//! decodes ahead.

mod common;

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::{
    DEADLINE, VARIANTS, Variant, assert_quiet_success, finish, peak_rss, read_exactly, reference,
    run_command, skip, spawn_piped, wait_until, within,
};

/// Each binary at its defaults.
fn defaults() -> impl Iterator<Item = &'static Variant> {
    VARIANTS.iter().filter(|variant| variant.args.is_empty())
}

/// `variant -z`, decoding on `decoders` threads (`None`: the default, the cores), with `files`.
fn decoding<S: AsRef<std::ffi::OsStr>>(
    variant: &Variant,
    decoders: Option<&str>,
    files: &[S],
) -> Command {
    let mut command = variant.command();
    command.arg("-z");
    if let Some(decoders) = decoders {
        command.args(["--decoders", decoders]);
    }
    command.args(files);
    command
}

/// `bytes` compressed by the tool `tool` with `args` (which must write to stdout), or `None`,
/// the test skipped, where the tool is not installed.
fn compressed_by(tool: &str, args: &[&str], bytes: &[u8]) -> Option<Vec<u8>> {
    let mut child = match Command::new(tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(_) => {
            skip(&format!("{tool} is not installed (apt-get install {tool})"));
            return None;
        }
    };
    let mut stdin = child.stdin.take().expect("stdin");
    let bytes = bytes.to_vec();
    let feeding = thread::spawn(move || stdin.write_all(&bytes));
    let out = child.wait_with_output().expect("running the compressor");
    feeding.join().expect("no panic").expect("fed");
    assert!(out.status.success(), "{tool} failed");
    Some(out.stdout)
}

fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    compressed_by("gzip", &["-6", "-c"], bytes)
}

fn zstd(bytes: &[u8]) -> Option<Vec<u8>> {
    compressed_by("zstd", &["-3", "-c", "-q"], bytes)
}

/// A fresh folder of this test's own for its files.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ahead-{test}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("making a scratch folder");
    dir
}

/// A FIFO at `path`, made by the POSIX tool.
fn fifo(path: &Path) -> PathBuf {
    let made = Command::new("mkfifo").arg(path).status();
    assert!(made.expect("running mkfifo").success(), "mkfifo");
    path.to_owned()
}

/// Lines of logs, some of them indented.
fn text(lines: usize, tag: &str) -> Vec<u8> {
    (0..lines)
        .flat_map(|n| format!("{}{tag} GET /page/{n} 200\n", " ".repeat(n % 9)).into_bytes())
        .collect()
}

/// A child's stderr as it comes, a piece at a time, so that a test can tell that nothing has
/// come yet.
fn stderr_as_it_comes(child: &mut Child) -> mpsc::Receiver<Vec<u8>> {
    let mut stderr = child.stderr.take().expect("stderr");
    let (send, received) = mpsc::channel();
    thread::spawn(move || {
        let mut buf = [0; 4096];
        while let Ok(n @ 1..) = stderr.read(&mut buf) {
            if send.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    received
}

/// How long a test waits to see that something does not happen too early: far longer than
/// decoding ahead the small files here takes.
const A_WHILE: Duration = Duration::from_millis(300);

/// docs/CONTRACT.md §12.5, §12.1 and §4.1: gzip and zstd FILEs, stdin and a plain FILE among
/// them, cut anywhere so that lines run on from one into the next, come out in order as one
/// stream, the same whatever the number of decoders.
#[test]
fn compressed_files_come_out_in_order_whatever_the_decoders() {
    let text = text(30_000, "part");
    let cuts = [
        0,
        90_001,
        200_000,
        333_333,
        500_000,
        640_007,
        777_777,
        text.len(),
    ];
    let part = |n: usize| &text[cuts[n]..cuts[n + 1]];
    let dir = scratch("order");
    let (mut files, mut stdin) = (Vec::new(), Vec::new());
    for n in 0..cuts.len() - 1 {
        let stored = match n {
            0 | 2 | 5 => gzip(part(n)),
            1 | 4 => zstd(part(n)),
            3 => {
                stdin = gzip(part(n)).unwrap_or_default();
                files.push(PathBuf::from("-"));
                continue;
            }
            _ => Some(part(n).to_vec()),
        };
        let Some(stored) = stored else { return };
        let file = dir.join(format!("part-{n}"));
        fs::write(&file, stored).expect("writing a part");
        files.push(file);
    }
    let expected = reference(&text);
    for variant in defaults() {
        for decoders in [None, Some("1"), Some("2"), Some("8")] {
            let finished = run_command(decoding(variant, decoders, &files), &stdin);
            assert_quiet_success(variant, &finished);
            assert!(
                finished.stdout == expected,
                "{variant} --decoders {decoders:?}: output differs from the reference"
            );
        }
    }
}

/// docs/CONTRACT.md §12.5 and §12.3: FIFOs among the FILEs are opened only at their turn (a
/// writer waiting for a reader is not let go early), and a FILE that fails while decoded ahead
/// (truncated) is told only at its turn, once the FILEs before it are read: messages, output
/// and exit status are those of one decoder, with regular files in the FIFOs' places.
#[test]
fn streams_are_opened_and_a_failure_ahead_told_only_at_their_turn() {
    let dir = scratch("turn");
    let (first, second) = (b"first  line\n", b"second line\n");
    let good_text = text(5_000, "good");
    let (Some(good), Some(whole), Some(last)) = (
        gzip(&good_text),
        gzip(&text(20_000, "cut")),
        zstd(&text(5_000, "last")),
    ) else {
        return;
    };
    let named = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        fs::write(&path, bytes).expect("writing a file");
        path
    };
    let good = named("good.gz", &good);
    let truncated = named("truncated.gz", &whole[..whole.len() / 2]);
    let last = named("last.zst", &last);
    let as_files = [named("first", first), named("second", second)];
    for variant in defaults() {
        let today = decoding(
            variant,
            Some("1"),
            &[&good, &as_files[0], &as_files[1], &truncated, &last],
        );
        let today = run_command(today, b"");
        assert_eq!(today.status.code(), Some(1), "{variant}: {}", today.stderr);

        let fifos = [fifo(&dir.join("fifo-1")), fifo(&dir.join("fifo-2"))];
        let files = [&good, &fifos[0], &fifos[1], &truncated, &last];
        let mut child = spawn_piped(decoding(variant, Some("4"), &files));
        drop(child.stdin.take());
        let told = stderr_as_it_comes(&mut child);
        let (opened, second_opened) = mpsc::channel();
        let second_fifo = fifos[1].clone();
        let second_writer = thread::spawn(move || {
            let mut writer = File::create(second_fifo)?;
            let _ = opened.send(());
            writer.write_all(second)
        });
        let first_fifo = fifos[0].clone();
        let mut writer = within("opening the first FIFO", move || {
            File::create(first_fifo).expect("opening the first FIFO")
        });
        writer.write_all(first).expect("writing the first FIFO");
        let so_far = [reference(&good_text), reference(first)].concat();
        let (out, mut stdout) = read_exactly(child.stdout.take().expect("stdout"), so_far.len());
        assert!(out == so_far, "{variant}: the first FILEs' output");
        thread::sleep(A_WHILE);
        assert!(
            second_opened.try_recv().is_err(),
            "{variant}: the second FIFO was opened before its turn"
        );
        assert!(
            told.try_recv().is_err(),
            "{variant}: a failure told before its turn"
        );
        drop(writer);
        within("writing the second FIFO", move || second_writer.join())
            .expect("no panic")
            .expect("written");
        let rest = within("reading the output", move || {
            let mut rest = Vec::new();
            stdout.read_to_end(&mut rest).map(|_| rest)
        })
        .expect("reading the output");
        let status = wait_until(&mut child, DEADLINE);
        let stderr: Vec<u8> = told.iter().flatten().collect();
        assert_eq!(status.code(), today.status.code(), "{variant}");
        assert_eq!(String::from_utf8_lossy(&stderr), today.stderr, "{variant}");
        assert!(
            [out, rest].concat() == today.stdout,
            "{variant}: output differs from one decoder's"
        );
        for fifo in fifos {
            fs::remove_file(fifo).expect("removing a FIFO");
        }
    }
}

/// docs/CONTRACT.md §12.5: a FILE renamed over, or rewritten in place, after it was opened ahead
/// is read as it is at its turn, as `cat` would read it.
#[test]
fn a_file_replaced_or_rewritten_after_it_was_opened_ahead_is_read_as_at_its_turn() {
    let dir = scratch("replaced");
    let texts = [
        text(3_000, "old x"),
        text(3_000, "old y"),
        text(4_000, "new x"),
        text(5_000, "new y"),
    ];
    let (Some(old_x), Some(old_y), Some(new_x), Some(new_y)) = (
        gzip(&texts[0]),
        zstd(&texts[1]),
        gzip(&texts[2]),
        zstd(&texts[3]),
    ) else {
        return;
    };
    let (x, y) = (dir.join("x.gz"), dir.join("y.zst"));
    let live = b"live line\n";
    for variant in defaults() {
        fs::write(&x, &old_x).expect("writing x");
        fs::write(&y, &old_y).expect("writing y");
        let fifo = fifo(&dir.join("fifo"));
        let mut child = spawn_piped(decoding(variant, Some("3"), &[&fifo, &x, &y]));
        drop(child.stdin.take());
        let opening = fifo.clone();
        let mut writer = within("opening the FIFO", move || {
            File::create(opening).expect("opening the FIFO")
        });
        writer.write_all(live).expect("writing the FIFO");
        // The FIFO's line is out: x and y were opened ahead when the FIFO opened.
        let (out, stdout) =
            read_exactly(child.stdout.take().expect("stdout"), reference(live).len());
        assert_eq!(out, reference(live), "{variant}");
        let replacement = dir.join("x.new");
        fs::write(&replacement, &new_x).expect("writing x's replacement");
        fs::rename(&replacement, &x).expect("renaming over x");
        let mut in_place = OpenOptions::new().write(true).truncate(true).open(&y);
        in_place
            .as_mut()
            .expect("opening y")
            .write_all(&new_y)
            .expect("rewriting y");
        drop(writer);
        child.stdout = Some(stdout);
        let finished = finish(child, DEADLINE);
        assert_quiet_success(variant, &finished);
        let expected = reference(&[&texts[2][..], &texts[3]].concat());
        assert!(
            finished.stdout == expected,
            "{variant}: not the files as they were at their turn"
        );
        fs::remove_file(fifo).expect("removing the FIFO");
    }
}

/// docs/CONTRACT.md §12.4: eight FILEs decoded ahead, each decoding to far more than a decoder
/// may hold, stay under 64 MiB of peak RSS in all: each decoder stops when its share is full.
#[test]
fn decoding_eight_files_ahead_is_bounded() {
    // 8 MiB of short lines: 64 MiB held if the decoders ahead were not bounded.
    let lines: Vec<u8> = (0..8 << 20)
        .map(|n| if n % 16 == 15 { b'\n' } else { b"a b"[n % 3] })
        .collect();
    let Some(gz) = gzip(&lines) else { return };
    let dir = scratch("memory");
    let file = dir.join("lines.gz");
    fs::write(&file, gz).expect("writing the file");
    let batched = VARIANTS
        .iter()
        .find(|variant| variant.program == "batched")
        .expect("batched");
    // The file nine times, then stdin, held open so that the process can be looked at at the end.
    let mut files = vec![file; 9];
    files.push(PathBuf::from("-"));
    let mut child = spawn_piped(decoding(batched, Some("9"), &files));
    let stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = Vec::new();
    for _ in 0..9 * (lines.len() / 16) {
        line.clear();
        stdout.read_until(b'\n', &mut line).expect("reading a line");
    }
    let peak = peak_rss(child.id());
    drop(stdin);
    child.stdout = Some(stdout.into_inner());
    assert_quiet_success(batched, &finish(child, DEADLINE));
    assert!(peak < 64 << 20, "{} MiB peak", peak >> 20);
}
