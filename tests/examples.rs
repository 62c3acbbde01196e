//! The examples, filters of one's own made with `Filter`, checked through their built binaries as
//! the contract suite checks the five: FILEs and stdin in `cat`'s order, a `.gz` with `-z`, a
//! missing FILE told and skipped, `| head -1`, `--help`, `--version` and `--generate man` with
//! their own name and texts (docs/CONTRACT.md §4, §5). Each output is checked byte for byte against
//! a plain reference written here, or against the tool the example does as, `grep -F` and
//! `sed -E`, on real text (docs/CONTRACT.md §13).

mod common;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::Duration;

use common::{DEADLINE, Finished, finish, read_exactly, run_command, skip, spawn_piped};
use flate2::Compression;
use flate2::write::GzEncoder;

/// The example `name`'s binary, with `args`: built by cargo (an example has no
/// `CARGO_BIN_EXE_`, and `cargo test --test examples` alone would not build it) in the target
/// directory and profile this test was built in, once a test run.
fn example(name: &str, args: &[&str]) -> Command {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let examples = BUILT.get_or_init(|| {
        let built = Path::new(env!("CARGO_BIN_EXE_std-baseline"));
        pipelines_testing::workspace_built_beside(built).join("examples")
    });
    let mut command = Command::new(examples.join(name));
    command.args(args);
    command
}

/// `upper`'s settings: its default (`batched` on every core), and the smallest chunks on one and
/// on several threads, so that lines cross chunk ends.
const UPPER_SETTINGS: [&[&str]; 3] = [
    &[],
    &["--threads", "1", "--chunk-size", "1"],
    &["--threads", "3", "--chunk-size", "7"],
];

/// The reference for `upper`: each line of `input` with its ASCII letters upper-cased, ending in
/// `\n`.
fn upper_cased(input: &[u8]) -> Vec<u8> {
    let mut output: Vec<u8> = common::lines_of(input)
        .flat_map(|line| [line, b"\n"].concat())
        .collect();
    output.make_ascii_uppercase();
    output
}

/// A file in this test's scratch folder.
fn scratch_file(name: &str, contents: &[u8]) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    fs::write(&path, contents).expect("writing a scratch file");
    path
}

fn assert_quiet_success(what: &str, finished: &Finished) {
    assert!(
        finished.status.success() && finished.stderr.is_empty(),
        "{what}: {:?}, stderr {:?}",
        finished.status,
        finished.stderr
    );
}

/// docs/CONTRACT.md §4.1: FILEs and `-` (stdin) in order, as one stream.
#[test]
fn upper_reads_files_and_stdin_in_order() {
    let (first, stdin, second) = (
        &b"one two\nthr\xc3\xa9e"[..],
        &b" from stdin\n\n"[..],
        &b"Four Five\r\nsix"[..],
    );
    let expected = upper_cased(&[first, stdin, second].concat());
    let first = scratch_file("upper-first.txt", first);
    let second = scratch_file("upper-second.txt", second);
    for settings in UPPER_SETTINGS {
        let mut command = example("upper", settings);
        command.arg(&first).arg("-").arg(&second);
        let finished = run_command(command, stdin);
        assert_quiet_success(&format!("upper {settings:?}"), &finished);
        assert_eq!(finished.stdout, expected, "upper {settings:?}");
    }
}

/// docs/CONTRACT.md §12: `-z` decodes a gzip FILE; a plain one beside it is read as it is.
#[test]
fn upper_decodes_a_gz_with_z() {
    let text = b"compressed line\nand another".repeat(1000);
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(&text).expect("compressing in memory");
    let gz = scratch_file("upper.txt.gz", &encoder.finish().expect("compressing"));
    let plain = scratch_file("upper-plain.txt", b"\nplain\n");
    let expected = upper_cased(&[&text[..], b"\nplain\n"].concat());
    for settings in UPPER_SETTINGS {
        let mut command = example("upper", settings);
        command.arg("-z").arg(&gz).arg(&plain);
        let finished = run_command(command, b"");
        assert_quiet_success(&format!("upper -z {settings:?}"), &finished);
        assert_eq!(finished.stdout, expected, "upper -z {settings:?}");
    }
}

/// docs/CONTRACT.md §4.1 and §5.2: a missing FILE is told in one line naming the filter, the
/// others still read, exit 1.
#[test]
fn upper_tells_a_missing_file_and_reads_the_others() {
    let before = scratch_file("upper-before.txt", b"before it\n");
    let after = scratch_file("upper-after.txt", b"after it\n");
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("upper-no-such-file.txt");
    let mut command = example("upper", &[]);
    command.arg(&before).arg(&missing).arg(&after);
    let finished = run_command(command, b"");
    assert_eq!(finished.status.code(), Some(1), "{finished:?}");
    assert_eq!(finished.stdout, b"BEFORE IT\nAFTER IT\n");
    let told: Vec<&str> = finished.stderr.lines().collect();
    assert_eq!(told.len(), 1, "{:?}", finished.stderr);
    assert!(
        told[0].starts_with("upper: ")
            && told[0].contains("upper-no-such-file.txt")
            && told[0].ends_with("No such file or directory (os error 2)"),
        "{:?}",
        finished.stderr
    );
}

/// docs/CONTRACT.md §5.1: `yes | upper | head -1`: the reader goes away; the filter stops
/// promptly and quietly, exit 0.
#[test]
fn upper_stops_quietly_when_its_reader_goes() {
    let mut child = spawn_piped(example("upper", &[]));
    let mut stdin = child.stdin.take().expect("stdin");
    thread::spawn(move || {
        let block = b"y y\n".repeat(16 << 10);
        while stdin.write_all(&block).is_ok() {}
    });
    let (line, stdout) = read_exactly(child.stdout.take().expect("stdout"), 4);
    assert_eq!(line, b"Y Y\n");
    drop(stdout);
    let finished = finish(child, Duration::from_secs(10));
    assert_quiet_success("upper | head -1", &finished);
}

/// What `upper ARGS` printed on stdout, having exited 0 with nothing on stderr.
fn printed_by_upper(args: &[&str]) -> String {
    let finished = run_command(example("upper", args), b"");
    assert_quiet_success(&format!("upper {args:?}"), &finished);
    String::from_utf8(finished.stdout).expect("UTF-8")
}

/// docs/CONTRACT.md §4.5: `--help`, `--version` and the manual page are the filter's own: its
/// name, its texts, its version, the options it inherits, the exit statuses.
#[test]
fn upper_answers_help_version_and_man_as_its_own() {
    let help = printed_by_upper(&["--help"]);
    assert!(
        help.starts_with(
            "Upper-case every line's ASCII letters\n\nUsage: upper [OPTIONS] [FILES]..."
        ),
        "{help}"
    );
    for option in [
        "--decompress",
        "--decoders",
        "--stats",
        "--generate",
        "--threads",
    ] {
        assert!(help.contains(option), "--help lacks {option}:\n{help}");
    }
    assert!(help.ends_with("other bytes unchanged.\n"), "{help}");
    assert_eq!(
        printed_by_upper(&["--version"]),
        format!("upper {}\n", env!("CARGO_PKG_VERSION"))
    );
    let page = printed_by_upper(&["--generate", "man"]);
    assert!(page.contains(".TH upper 1"), "{page}");
    for words in [
        "upper \\- Upper\\-case every line\\*(Aqs ASCII letters",
        "Each line comes out with its ASCII letters upper\\-cased",
        "\\-\\-threads",
        "EXIT STATUS",
    ] {
        assert!(page.contains(words), "the page lacks {words:?}:\n{page}");
    }
}

/// The reference for `digest`: each line after its stretched hash (FNV-1a, then 4096 rounds of
/// a multiply and an xor-shift) in 16 hex digits and a space.
fn digested(input: &[u8]) -> Vec<u8> {
    let mut output = Vec::new();
    for line in common::lines_of(input) {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for &byte in line {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
        }
        for _ in 0..4096 {
            hash = (hash ^ (hash >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        }
        output.extend(format!("{hash:016x} ").bytes());
        output.extend_from_slice(line);
        output.push(b'\n');
    }
    output
}

/// `digest`, whose lines cost microseconds, on a regular FILE (cut into ranges by that cost)
/// and on stdin, at its defaults and on several threads.
#[test]
fn digest_puts_each_lines_stretched_hash_before_it() {
    let text: Vec<u8> = (0..3000)
        .flat_map(|n| format!("line {n}{}\n", " x".repeat(n % 7)).into_bytes())
        .collect();
    let expected = digested(&text);
    let file = scratch_file("digest.txt", &text);
    for settings in [&[][..], &["--threads", "3"]] {
        let mut command = example("digest", settings);
        command.arg(&file);
        let finished = run_command(command, b"");
        assert_quiet_success(&format!("digest FILE {settings:?}"), &finished);
        assert!(finished.stdout == expected, "digest FILE {settings:?}");
        let finished = run_command(example("digest", settings), &text);
        assert_quiet_success(&format!("digest {settings:?}"), &finished);
        assert!(finished.stdout == expected, "digest {settings:?}");
    }
}

/// Real text: the licences Debian ships (`/usr/share/common-licenses`, about 250 KB of prose in
/// 5,000 lines), joined; `None`, the test skipped, where there are none.
fn licences() -> Option<Vec<u8>> {
    let Ok(entries) = fs::read_dir("/usr/share/common-licenses") else {
        skip("no /usr/share/common-licenses for real text");
        return None;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| Some(entry.ok()?.path()))
        .collect();
    paths.sort();
    Some(
        paths
            .iter()
            .filter_map(|path| fs::read(path).ok())
            .flatten()
            .collect(),
    )
}

/// The inputs a real-text filter is checked on: the text, the text without its last newline, no
/// input at all, and the text four times over (a megabyte: several chunks at the defaults).
fn real_inputs(text: &[u8]) -> [Vec<u8>; 4] {
    [
        text.to_vec(),
        text.strip_suffix(b"\n").unwrap_or(text).to_vec(),
        Vec::new(),
        text.repeat(4),
    ]
}

/// What the tool `program` with `args` prints for `input` on stdin, in the C locale, and its exit
/// status: the reference an example is checked against.
fn tool(program: &str, args: &[&str], input: &[u8]) -> Finished {
    let mut command = Command::new(program);
    command.args(args).env("LC_ALL", "C");
    run_command(command, input)
}

/// `finished` printed `expected` with nothing on stderr and exited `status`.
fn assert_printed(what: &str, finished: &Finished, expected: &[u8], status: Option<i32>) {
    assert_eq!(
        (finished.status.code(), &*finished.stderr),
        (status, ""),
        "{what}"
    );
    assert!(
        finished.stdout == expected,
        "{what}: {} bytes printed, {} expected",
        finished.stdout.len(),
        expected.len()
    );
}

/// docs/CONTRACT.md §13: `grep PATTERN` prints what `grep -F PATTERN` prints and exits as it does
/// (1 where no line matched, empty input included), for patterns that match most lines, some,
/// none, or (the empty pattern) every line; from stdin and from a FILE, at its defaults and on
/// chunks small enough that lines cross their ends. Its own positional argument comes before
/// the FILEs.
#[test]
fn grep_prints_what_grep_f_prints_and_exits_as_it_does() {
    let Some(text) = licences() else { return };
    let settings: [&[&str]; 2] = [&[], &["--threads", "3", "--chunk-size", "7"]];
    for input in real_inputs(&text) {
        let file = scratch_file("grep-input.txt", &input);
        for pattern in ["the", "e", "Copyright", "no such words here", ""] {
            let expected = tool("grep", &["-F", pattern], &input);
            let status = expected.status.code();
            assert!(status == Some(if expected.stdout.is_empty() { 1 } else { 0 }));
            for settings in settings {
                let what = format!("grep {settings:?} {pattern:?} on {} bytes", input.len());
                let finished =
                    run_command(example("grep", &[settings, &[pattern]].concat()), &input);
                assert_printed(&what, &finished, &expected.stdout, status);
                let mut command = example("grep", &[settings, &[pattern]].concat());
                let finished = {
                    command.arg(&file);
                    run_command(command, b"")
                };
                assert_printed(
                    &format!("{what}, a FILE"),
                    &finished,
                    &expected.stdout,
                    status,
                );
            }
        }
    }
}

/// docs/CONTRACT.md §4.4: `--stats` tells the lines read and the lines written, which a filter
/// that drops lines makes fewer: as many as `grep -F` prints.
#[test]
fn grep_stats_tell_lines_read_and_written() {
    let Some(text) = licences() else { return };
    let printed = tool("grep", &["-F", "the"], &text).stdout;
    let count = |bytes: &[u8]| bytes.iter().filter(|&&byte| byte == b'\n').count();
    let finished = run_command(example("grep", &["--stats", "the"]), &text);
    assert!(finished.status.success() && finished.stdout == printed);
    let expected = format!(
        "grep: {} lines in, {} lines out, {} bytes in, {} bytes out, ",
        count(&text),
        count(&printed),
        text.len(),
        printed.len()
    );
    assert!(
        finished.stderr.starts_with(&expected),
        "{:?}",
        finished.stderr
    );
}

/// docs/CONTRACT.md §13.4: a tally's summary is written through the run's output, so `--stats`
/// counts it in the lines and bytes out, however the run is split into chunks.
#[test]
fn a_tallys_summary_is_counted_in_the_stats_lines_out() {
    let Some(text) = licences() else { return };
    for settings in TALLY_SETTINGS {
        let args = [&["--stats"], settings, &["1"]].concat();
        let finished = run_command(example("count-by", &args), &text);
        let newlines = |bytes: &[u8]| bytes.iter().filter(|&&byte| byte == b'\n').count();
        assert!(finished.status.success() && newlines(&finished.stdout) > 1);
        let expected = format!(
            "count-by: {} lines in, {} lines out, {} bytes in, {} bytes out, ",
            newlines(&text),
            newlines(&finished.stdout),
            text.len(),
            finished.stdout.len()
        );
        assert!(
            finished.stderr.starts_with(&expected),
            "{settings:?}: {:?}",
            finished.stderr
        );
    }
}

/// docs/CONTRACT.md §13: `redact [--replace WITH] PATTERN` writes what `sed -E
/// 's/PATTERN/WITH/g'` writes (a last line given its newline, §2.1), on real text, for patterns
/// and replacements that hold nothing special to sed: every line rendered, some longer than the
/// room `most_added` makes ahead for them.
#[test]
fn redact_writes_what_sed_e_writes() {
    let Some(text) = licences() else { return };
    for input in real_inputs(&text) {
        for (options, pattern, with) in [
            (&[][..], "the", "[redacted]"),
            (&["--replace", "X"][..], "License", "X"),
            (
                &["--replace", "<a much longer replacement>"][..],
                "e",
                "<a much longer replacement>",
            ),
        ] {
            let mut expected =
                tool("sed", &["-E", &format!("s/{pattern}/{with}/g")], &input).stdout;
            if expected.last().is_some_and(|&last| last != b'\n') {
                expected.push(b'\n');
            }
            let what = format!("redact {options:?} {pattern:?} on {} bytes", input.len());
            let finished = run_command(example("redact", &[options, &[pattern]].concat()), &input);
            assert_printed(&what, &finished, &expected, Some(0));
        }
    }
}

/// What the binaries' pages once said where a program's name belongs: none is left in a page.
fn placeholders(page: &str) -> Vec<&'static str> {
    let words: Vec<&str> = page
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .collect();
    let mut found: Vec<&'static str> = ["BIN", "_BIN"]
        .into_iter()
        .filter(|placeholder| words.contains(placeholder))
        .collect();
    found.extend(
        ["NAME:", "this binary"]
            .into_iter()
            .filter(|text| page.contains(text)),
    );
    found
}

/// docs/CONTRACT.md §13.2: a filter's manual page is its own: `.TH` names the filter, its
/// version and its manual, none of the toolkit's placeholders is left, and its own arguments are
/// among the options, in `--help` and in the completions too.
#[test]
fn a_filters_manual_page_names_it_and_its_own_arguments() {
    let version = env!("CARGO_PKG_VERSION");
    for (name, own) in [
        ("grep", &["PATTERN"][..]),
        ("redact", &["PATTERN", "\\-\\-replace"][..]),
    ] {
        let printed = |args: &[&str]| {
            let finished = run_command(example(name, args), b"");
            assert_quiet_success(&format!("{name} {args:?}"), &finished);
            String::from_utf8(finished.stdout).expect("UTF-8")
        };
        let page = printed(&["--generate", "man"]);
        let th = page
            .lines()
            .find(|line| line.starts_with(".TH "))
            .unwrap_or_default();
        assert_eq!(th, format!(".TH {name} 1  \"{name} {version}\" {name}"));
        assert_eq!(placeholders(&page), Vec::<&str>::new(), "{name}'s page");
        for words in own {
            assert!(page.contains(words), "{name}'s page lacks {words}:\n{page}");
        }
        let help = printed(&["--help"]);
        assert!(
            help.contains(&format!("Usage: {name} [OPTIONS] <PATTERN> [FILES]...")),
            "{help}"
        );
        assert!(printed(&["--generate", "complete-bash"]).contains("--threads"));
        if name == "redact" {
            assert!(help.contains("--replace <WITH>"), "{help}");
            assert!(printed(&["--generate", "complete-fish"]).contains("-l replace"));
        }
    }
}

/// The settings a tally is checked at: its defaults (`batched` on every core), and chunks small
/// enough that lines cross their ends on one and on several threads, so that many tallies are
/// merged, out of order on their way.
const TALLY_SETTINGS: [&[&str]; 3] = [
    &[],
    &["--threads", "1", "--chunk-size", "7"],
    &["--threads", "3", "--chunk-size", "7"],
];

/// `input` gzip-compressed, in a scratch file `name`.
fn gzipped(name: &str, input: &[u8]) -> PathBuf {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(input).expect("compressing in memory");
    scratch_file(name, &encoder.finish().expect("compressing"))
}

/// What the shell pipeline `script` prints for `input`, in the C locale, having exited 0.
fn piped(script: &str, input: &[u8]) -> Vec<u8> {
    let finished = tool("sh", &["-c", script], input);
    assert!(finished.status.success(), "{script}: {}", finished.stderr);
    finished.stdout
}

/// docs/CONTRACT.md §13.4: `count-by FIELD` prints what `awk '{print $FIELD}' | sort | uniq -c |
/// sort -k1,1nr -k2` prints once its leading blanks are trimmed, on real text, for fields that
/// most lines have, some, and few (a line without it counts under the empty key); from stdin, a
/// FILE and a `.gz` with `-z`, at its defaults and merged from many small chunks.
#[test]
fn count_by_prints_what_awk_sort_uniq_c_prints() {
    let Some(text) = licences() else { return };
    for input in real_inputs(&text) {
        let file = scratch_file("count-by-input.txt", &input);
        let gz = gzipped("count-by-input.txt.gz", &input);
        for field in ["1", "2", "9"] {
            let expected = piped(
                &format!(
                    "awk '{{print ${field}}}' | sort | uniq -c | sort -k1,1nr -k2 | sed 's/^ *//'"
                ),
                &input,
            );
            for settings in TALLY_SETTINGS {
                let what = format!("count-by {settings:?} {field} on {} bytes", input.len());
                let args = [settings, &[field]].concat();
                let finished = run_command(example("count-by", &args), &input);
                assert_printed(&what, &finished, &expected, Some(0));
                for (how, z, path) in [("a FILE", &[][..], &file), ("-z", &["-z"], &gz)] {
                    let mut command = example("count-by", &[z, &args[..]].concat());
                    command.arg(path);
                    let finished = run_command(command, b"");
                    assert_printed(&format!("{what}, {how}"), &finished, &expected, Some(0));
                }
            }
        }
    }
}

/// docs/CONTRACT.md §13.4: `count-by --sum` adds up `COUNT KEY` lines, so that the tallies of a
/// text's parts, made apart and given together (on stdin or as FILEs), are the tally of the whole.
#[test]
fn count_by_sum_merges_the_tallies_of_parts_into_the_whole() {
    let Some(text) = licences() else { return };
    let whole = run_command(example("count-by", &["1"]), &text);
    assert_printed("count-by 1", &whole, &whole.stdout, Some(0));
    let mut parts = Vec::new();
    let mut rest = &text[..];
    for (n, share) in [3, 2, 1].into_iter().enumerate() {
        let cut = memchr_newline_after(rest, rest.len() / share);
        let part = run_command(example("count-by", &["1"]), &rest[..cut]);
        parts.push(scratch_file(&format!("count-by-part-{n}"), &part.stdout));
        rest = &rest[cut..];
    }
    let together: Vec<u8> = parts
        .iter()
        .flat_map(|part| fs::read(part).expect("a part"))
        .collect();
    for settings in TALLY_SETTINGS {
        let args = [settings, &["--sum"]].concat();
        let summed = run_command(example("count-by", &args), &together);
        assert_printed(
            &format!("count-by {settings:?} --sum"),
            &summed,
            &whole.stdout,
            Some(0),
        );
        let mut command = example("count-by", &args);
        command.args(&parts);
        let summed = run_command(command, b"");
        assert_printed(
            &format!("count-by {settings:?} --sum FILE..."),
            &summed,
            &whole.stdout,
            Some(0),
        );
    }
}

/// Where the line holding byte `at` of `text` ends, past its `\n`; the text's end if it has none.
fn memchr_newline_after(text: &[u8], at: usize) -> usize {
    text[at..]
        .iter()
        .position(|&byte| byte == b'\n')
        .map_or(text.len(), |end| at + end + 1)
}

/// docs/CONTRACT.md §13.4: `wc FILE...` prints what `cat FILE... | wc` prints in the C locale, on
/// real text, text whose last line has no `\n`, every byte value (words split where `wc` splits
/// them), and no input, from stdin and from FILEs.
#[test]
fn wc_prints_what_cat_wc_prints() {
    let Some(text) = licences() else { return };
    let every_byte: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    let [text, unended, empty, longer] = real_inputs(&text);
    for input in [text, unended, empty, longer, every_byte] {
        let expected = tool("wc", &[], &input.repeat(2)).stdout;
        let file = scratch_file("wc-input", &input);
        for settings in TALLY_SETTINGS {
            let what = format!("wc {settings:?} on {} bytes", input.len());
            let mut command = example("wc", settings);
            command.arg(&file).arg("-");
            assert_printed(&what, &run_command(command, &input), &expected, Some(0));
        }
    }
}

/// docs/CONTRACT.md §13.4: a FILE that cannot be read is told and skipped, and the summary tallies
/// the others, exit 1, as `wc` does; a failure that ends the run (stdout full) leaves no summary
/// but its message, exit 1.
#[test]
fn a_tally_sums_what_was_read_when_a_file_fails_and_nothing_when_the_output_fails() {
    let file = scratch_file("tally-input", b"a b\nc\n");
    let mut command = example("wc", &[]);
    command.arg(&file).arg("no-such-file").arg(&file);
    let finished = run_command(command, b"");
    assert_eq!(finished.stdout, tool("wc", &[], b"a b\nc\na b\nc\n").stdout);
    assert_eq!(
        (finished.status.code(), &*finished.stderr),
        (
            Some(1),
            "wc: opening no-such-file: No such file or directory (os error 2)\n"
        )
    );
    let mut command = example("count-by", &["1"]);
    command
        .arg(&file)
        .stdin(Stdio::null())
        .stdout(fs::File::create("/dev/full").expect("/dev/full opens"))
        .stderr(Stdio::piped());
    let finished = finish(command.spawn().expect("spawning count-by"), DEADLINE);
    assert_eq!(
        (finished.status.code(), &*finished.stderr),
        (
            Some(1),
            "count-by: writing stdout: No space left on device (os error 28)\n"
        )
    );
}
