//! `-z` (docs/CONTRACT.md §12): gzip, zstd, xz, bzip2 and LZ4 sources decoded, through every
//! binary, byte for byte against the reference model applied to the decoded bytes. Compressed data
//! is made here, with the crates the binaries decode with, and with the tools themselves (`gzip`,
//! `pigz`, `zstd`, `pzstd`, `xz`, `bzip2`, `lz4`, `bgzip`) where their own output matters.

mod common;

use std::ffi::OsStr;
use std::fs;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::{
    DEADLINE, TINY, VARIANTS, Variant, assert_quiet_success, finish, line_soup, peak_rss,
    reference, run_command, skip, spawn_piped,
};
use flate2::Compression;
use flate2::write::GzEncoder;
use proptest::prelude::*;

/// Each binary once at its defaults: the rows of the slower checks.
fn defaults() -> impl Iterator<Item = &'static Variant> {
    VARIANTS.iter().filter(|variant| variant.args.is_empty())
}

/// Each binary at its defaults and at its smallest sizes, where decoded bytes cross every buffer,
/// chunk and batch boundary: the decoding is the same for every row of `VARIANTS`, the framing
/// behind it is checked there by tests/contract.rs.
fn boundaries() -> impl Iterator<Item = &'static Variant> {
    defaults().chain(TINY)
}

/// `variant -z`, with `args` after.
fn decompressing<S: AsRef<std::ffi::OsStr>>(variant: &Variant, args: &[S]) -> Command {
    let mut command = variant.command();
    command.arg("-z").args(args);
    command
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// One zstd frame of `bytes`, with a content checksum.
fn zstd(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = zstd::Encoder::new(Vec::new(), 3).unwrap();
    encoder.include_checksum(true).unwrap();
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = liblzma::write::XzEncoder::new(Vec::new(), 1);
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn bzip2(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// One LZ4 frame of `bytes`, with a content checksum.
fn lz4(bytes: &[u8]) -> Vec<u8> {
    let info = lz4_flex::frame::FrameInfo::new().content_checksum(true);
    let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// Compresses bytes into one stream of a format.
type Encoder = fn(&[u8]) -> Vec<u8>;

/// Each format's encoder.
const ENCODERS: [Encoder; 5] = [gzip, zstd, xz, bzip2, lz4];

/// `bytes` in three zstd frames, skippable frames between, as `pzstd` cuts a file (its frames
/// are decoded at once, CONTRACT §12.4).
fn zstd_frames(bytes: &[u8]) -> Vec<u8> {
    let third = bytes.len() / 3;
    let (first, rest) = bytes.split_at(third);
    let (second, last) = rest.split_at(third);
    [
        zstd(first),
        skippable(b"x"),
        zstd(second),
        skippable(b""),
        zstd(last),
    ]
    .concat()
}

/// `bytes` in an xz stream of 4 KiB blocks whose sizes are recorded, as `xz -T2` writes them
/// (decoded at once, CONTRACT §12.4).
fn xz_blocks(bytes: &[u8]) -> Vec<u8> {
    let stream = liblzma::stream::MtStreamBuilder::new()
        .threads(2)
        .block_size(4096)
        .preset(1)
        .encoder()
        .unwrap();
    let mut encoder = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// The encoders of files whose parts are decoded at once.
const PARTED: [Encoder; 2] = [zstd_frames, xz_blocks];

/// A zstd (and LZ4) skippable frame holding `bytes`, which a decoder skips.
fn skippable(bytes: &[u8]) -> Vec<u8> {
    let mut frame = vec![0x50, 0x2a, 0x4d, 0x18];
    frame.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    frame.extend_from_slice(bytes);
    frame
}

/// A file in this test binary's scratch folder.
fn scratch_file(name: &str, contents: &[u8]) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    fs::write(&path, contents).expect("writing a scratch file");
    path
}

/// Lines of logs, long enough that decoding takes many reads.
fn text(lines: usize) -> Vec<u8> {
    (0..lines)
        .flat_map(|n| {
            format!(
                "10.0.{}.{} - - GET /page/{n} HTTP/1.1 200\n",
                n % 7,
                n % 255
            )
            .into_bytes()
        })
        .collect()
}

/// Checks that `variant -z ARGS` with `stdin` succeeded quietly with the reference's output of
/// `decoded`.
fn assert_decodes<S: AsRef<std::ffi::OsStr>>(
    variant: &Variant,
    args: &[S],
    stdin: &[u8],
    decoded: &[u8],
) {
    let finished = run_command(decompressing(variant, args), stdin);
    assert_quiet_success(variant, &finished);
    assert!(
        finished.stdout == reference(decoded),
        "{variant}: output differs from the reference"
    );
}

/// docs/CONTRACT.md §12.1: every gzip member, zstd frame, xz stream, bzip2 stream and LZ4 frame,
/// skippable frames skipped, from a FILE and from stdin.
#[test]
fn every_member_and_every_frame_is_decoded() {
    let text = text(3000);
    let (half, rest) = text.split_at(text.len() / 2 + 11);
    let mut sources: Vec<Vec<u8>> = ENCODERS
        .iter()
        .map(|encode| [encode(half), encode(b""), encode(rest)].concat())
        .collect();
    sources.push([zstd(half), skippable(b"not text"), zstd(rest)].concat());
    sources.push([lz4(half), skippable(b"not text"), lz4(rest), skippable(b"")].concat());
    for (n, bytes) in sources.iter().enumerate() {
        let file = scratch_file(&format!("streams-{n}"), bytes);
        for variant in boundaries() {
            assert_decodes(variant, &[&file], b"", &text);
            assert_decodes::<&str>(variant, &[], bytes, &text);
        }
    }
}

/// docs/CONTRACT.md §12.1: a skippable frame first (as `pzstd` writes one before each frame),
/// between frames, last, or alone, from a FILE and from stdin: the frame after it says what the
/// source holds; skippable frames alone are empty, as `zstd -dc` finds them.
#[test]
fn skippable_frames_first_between_last_and_alone() {
    let text = text(500);
    let (half, rest) = text.split_at(text.len() / 3);
    let (empty, short, long) = (skippable(b""), skippable(b"s"), skippable(&[b'\n'; 5000]));
    let cases: [(Vec<u8>, &[u8]); 6] = [
        (
            [&short[..], &zstd(half), &long, &zstd(rest), &empty].concat(),
            &text,
        ),
        (
            [&empty[..], &long, &lz4(half), &short, &lz4(rest)].concat(),
            &text,
        ),
        ([&long[..], &zstd(&text)].concat(), &text),
        ([&zstd(&text)[..], &short].concat(), &text),
        (empty.clone(), b""),
        ([&long[..], &short, &empty].concat(), b""),
    ];
    for (n, (bytes, decoded)) in cases.iter().enumerate() {
        let file = scratch_file(&format!("skippable-{n}"), bytes);
        for variant in boundaries() {
            assert_decodes(variant, &[&file], b"", decoded);
            assert_decodes::<&str>(variant, &[], bytes, decoded);
        }
    }
}

/// docs/CONTRACT.md §12.1 and §9: a compressed FILE, whose decoded bytes come in memory a piece at
/// a time, decodes to many pieces (each handed back to the decoder and filled again) as a stream
/// does; the same FILE twice is decoded twice.
#[test]
fn a_file_that_decodes_to_many_pieces_is_whole() {
    let text = text(60_000);
    assert!(text.len() > 8 << 20 >> 2, "past four 256 KiB pieces");
    let (gz, zst) = (gzip(&text), zstd(&text));
    let files = [
        scratch_file("pieces.gz", &gz),
        scratch_file("pieces.zst", &zst),
    ];
    let twice = [text.clone(), text.clone()].concat();
    for variant in boundaries() {
        for (file, bytes) in files.iter().zip([&gz, &zst]) {
            assert_decodes(variant, &[file, file], b"", &twice);
            assert_decodes::<&str>(variant, &[], bytes, &text);
        }
    }
}

/// docs/CONTRACT.md §12.1 and §9: a FILE whose lines are short, longer than a quarter of the
/// decoder's 256 KiB buffers, and longer than a buffer, in turn: its buffers are cut after their
/// last line end, or go on uncut past such a line, and `batched` takes them whole as chunks or
/// reads them on as a stream; every binary's output is the reference's.
#[test]
fn a_file_of_long_and_short_lines_decodes_across_every_buffer() {
    let lengths = [30, 70_000, 10, 300_000, 5, 200_000, 65_000, 1, 600_000, 40];
    let text: Vec<u8> = (0..4)
        .flat_map(|round| lengths.map(|len| len + round))
        .flat_map(|len| [vec![b' '; len % 7], vec![b'x'; len], vec![b'\n']].concat())
        .collect();
    let gz = gzip(&text);
    let file = scratch_file("long-and-short.gz", &gz);
    for variant in defaults() {
        assert_decodes(variant, &[&file], b"", &text);
    }
}

/// docs/CONTRACT.md §12.1 and §4.1: stdin that is a regular file is read from its offset on, as
/// `(head -c N; BIN -z) < FILE` leaves it, and so is sniffed there.
#[test]
fn stdin_that_is_a_file_is_sniffed_where_it_stands() {
    let text = text(100);
    let skipped = b"skipped by whatever read stdin before\n";
    for compressed in [gzip(&text), zstd(&text)] {
        let path = scratch_file("offset.bin", &[&skipped[..], &compressed].concat());
        for variant in defaults() {
            let mut stdin = fs::File::open(&path).unwrap();
            stdin
                .seek(std::io::SeekFrom::Start(skipped.len() as u64))
                .unwrap();
            let mut command = decompressing::<&str>(variant, &[]);
            command.stdin(stdin);
            command.stdout(Stdio::piped()).stderr(Stdio::piped());
            let finished = finish(command.spawn().expect("spawning"), DEADLINE);
            assert_quiet_success(variant, &finished);
            assert!(
                finished.stdout == reference(&text),
                "{variant}: not decoded from stdin's offset"
            );
        }
    }
}

/// docs/CONTRACT.md §12.1: what `gzip`, `pigz`, `zstd`, `pzstd` (a skippable frame before each
/// zstd frame), `xz` (one block, and several blocks from its threads), `bzip2` and `lz4` (its
/// frames, and its legacy frames) themselves write, concatenated files included.
#[test]
fn the_tools_own_output_is_decoded() {
    // More than one of xz's blocks at the size given; a file twice holds two of pzstd's frames.
    let text = text(10_000);
    let plain = scratch_file("tools.txt", &text);
    let mut compressed = Vec::new();
    for (tool, package, args) in [
        ("gzip", "gzip", &["-6", "-c"][..]),
        ("pigz", "pigz", &["-c"]),
        ("zstd", "zstd", &["-3", "-c", "-q"]),
        ("pzstd", "zstd", &["-p", "2", "-c", "-q"]),
        ("xz", "xz-utils", &["-c"]),
        ("xz", "xz-utils", &["-T2", "--block-size=100KiB", "-c"]),
        ("bzip2", "bzip2", &["-c", "-1"]),
        ("lz4", "lz4", &["-c", "-q"]),
        // Legacy blocks of 8 MiB: more than one at this size would take 80,000 lines.
        ("lz4", "lz4", &["-l", "-c", "-q"]),
    ] {
        match Command::new(tool).args(args).arg(&plain).output() {
            Ok(out) if out.status.success() => compressed.push(out.stdout),
            _ => {
                return skip(&format!(
                    "{tool} is not installed (apt-get install {package})"
                ));
            }
        }
    }
    let twice = [&text[..], &text].concat();
    for (n, bytes) in compressed.iter().enumerate() {
        let file = scratch_file(&format!("tools-{n}"), &[&bytes[..], bytes].concat());
        for variant in defaults() {
            assert_decodes(variant, &[&file], b"", &twice);
        }
    }
}

/// docs/CONTRACT.md §12.1: xz's legacy `.lzma`, written by `xz --format=lzma`, is decoded, one
/// stream and nothing after it, as `xz -dc` reads it (a second stream is corrupt data, after the
/// first's bytes, §12.3); compress's `.Z` is known and refused: one line naming what decodes it,
/// exit 1, nothing of it rendered as text, and the next FILE read.
#[test]
fn legacy_lzma_is_decoded_and_compress_refused() {
    let text = text(10_000);
    let plain = scratch_file("legacy.txt", &text);
    let Some(lzma) = tool_output("xz", "xz-utils", &["--format=lzma", "-c"], &plain) else {
        return;
    };
    let Some(z) = tool_output("compress", "ncompress", &["-c"], &plain) else {
        return;
    };
    let one = scratch_file("one.lzma", &lzma);
    let twice = scratch_file("twice.lzma", &[&lzma[..], &lzma].concat());
    let z = scratch_file("text.Z", &z);
    let next = scratch_file("the-next-file", b"the next FILE\n");
    for variant in defaults() {
        assert_decodes(variant, &[&one], b"", &text);
        assert_decodes::<&str>(variant, &[], &lzma, &text);
        let finished = run_command(decompressing(variant, &[&twice, &next]), b"");
        assert_fails_after(variant, &finished, &twice, "", &text, Before::Whole);
        let finished = run_command(decompressing(variant, &[&z, &next]), b"");
        assert_fails_after(
            variant,
            &finished,
            &z,
            ".Z data is not decoded here: pipe it through zcat",
            b"",
            Before::Whole,
        );
    }
}

/// docs/CONTRACT.md §12.1 and §4.1: plain sources pass as they are, FILEs of every kind mixed with
/// stdin are read in order as one stream, and an unended last line runs on into the next source,
/// decoded or not.
#[test]
fn plain_and_compressed_sources_mix_in_order() {
    let sources: [(&str, &[u8]); 5] = [
        ("plain.txt", b"plain  one\nplain tw"),
        ("gz.gz", b"o\ngzip three\ngzip fo"),
        ("-", b"ur\nzstd  five"),
        ("short", b"\x1f"),
        ("zst.zst", b" six\n"),
    ];
    let mut args = Vec::new();
    let mut stdin = Vec::new();
    for (name, bytes) in sources {
        let stored = match name.rsplit('.').next() {
            Some("gz") => gzip(bytes),
            Some("zst") => zstd(bytes),
            _ => bytes.to_vec(),
        };
        match name {
            "-" => {
                stdin = zstd(bytes);
                args.push(PathBuf::from("-"));
            }
            _ => args.push(scratch_file(&format!("mix-{name}"), &stored)),
        }
    }
    let decoded: Vec<u8> = sources
        .iter()
        .flat_map(|(_, bytes)| bytes.to_vec())
        .collect();
    for variant in boundaries() {
        assert_decodes(variant, &args, &stdin, &decoded);
        assert_decodes::<&str>(variant, &[], b"plain\n\x1f\x8b", b"plain\n\x1f\x8b");
    }
}

/// docs/CONTRACT.md §12: without `-z` nothing is decoded.
#[test]
fn without_z_compressed_bytes_pass_as_they_are() {
    let compressed = gzip(b"a b\n");
    for variant in defaults() {
        let finished = run_command(variant.command(), &compressed);
        assert_quiet_success(variant, &finished);
        assert_eq!(finished.stdout, reference(&compressed), "{variant}");
    }
}

/// Each line `stdout` gives, sent as it comes by a thread of its own.
fn lines_sent(stdout: std::process::ChildStdout) -> mpsc::Receiver<Vec<u8>> {
    let (lines, received) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).split(b'\n') {
            let Ok(mut line) = line else { break };
            line.push(b'\n');
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    received
}

/// docs/CONTRACT.md §12.2 and §6: a compressed stream written slowly, flushed after each line,
/// comes out line by line while stdin stays open. The bound is generous: this checks that nothing
/// is held back, not how fast.
#[test]
fn a_slowly_written_compressed_stream_comes_out_line_by_line() {
    for variant in defaults() {
        let mut child = spawn_piped(decompressing::<&str>(variant, &[]));
        let stdin = child.stdin.take().expect("stdin");
        let received = lines_sent(child.stdout.take().expect("stdout"));
        let mut encoder = GzEncoder::new(stdin, Compression::default());
        for line in [&b"first line\n"[..], b"second  line\n", b"third   line\n"] {
            encoder.write_all(line).expect("writing a line");
            // A sync flush: the stream so far decodes to every line written.
            encoder.flush().expect("flushing");
            let out = received.recv_timeout(Duration::from_secs(5));
            assert_eq!(
                out.ok(),
                Some(reference(line)),
                "{variant}: line held back while stdin open"
            );
        }
        encoder.finish().expect("ending the stream");
        let finished = finish(child, DEADLINE);
        assert_quiet_success(variant, &finished);
    }
}

/// What comes out of a damaged stream before its fault.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Before {
    /// Every byte of the text: the fault is found after it (a checksum, a trailer).
    Whole,
    /// Some first part of the text, cut anywhere.
    Prefix,
    /// Bytes the damage made of it, as `zcat` writes them too: not checked.
    Other,
}

/// Checks a run that met bad compressed input in FILE `bad`, before the good FILE `the next
/// FILE`: one line `NAME: FILE: decompressing: REASON` with `reason` in it, exit 1, and on stdout
/// the rendering of what came `before` the fault of `decoded`, then the next FILE's.
fn assert_fails_after(
    variant: &Variant,
    finished: &common::Finished,
    bad: &Path,
    reason: &str,
    decoded: &[u8],
    before: Before,
) {
    assert_eq!(
        finished.status.code(),
        Some(1),
        "{variant}: {}",
        finished.stderr
    );
    let prefix = format!("{}: {}: decompressing: ", variant.program, bad.display());
    let lines: Vec<&str> = finished.stderr.lines().collect();
    assert!(
        lines.len() == 1 && lines[0].starts_with(&prefix) && lines[0].contains(reason),
        "{variant}: stderr {:?}, not one line {prefix}…{reason}…",
        finished.stderr
    );
    let out = &finished.stdout;
    let next = reference(b"the next FILE\n");
    if before == Before::Whole {
        assert!(
            *out == [reference(decoded), next].concat(),
            "{variant}: not every byte decoded before the fault, or the next FILE missing"
        );
        return;
    }
    // The decoded bytes, cut anywhere: the last line runs on into the next FILE's, and every line
    // before it is the reference's.
    assert!(
        out.ends_with(b"the next FILE\n"),
        "{variant}: the next FILE is missing"
    );
    let last = out[..out.len() - 1]
        .iter()
        .rposition(|&byte| byte == b'\n')
        .map_or(0, |at| at + 1);
    assert!(
        before == Before::Other || reference(decoded).starts_with(&out[..last]),
        "{variant}: the bytes before the fault differ"
    );
}

/// docs/CONTRACT.md §12.3: corrupt, truncated, a bad checksum, garbage after the last member, a
/// window larger than zstd's limit, in each format: one line, exit 1, the bytes decoded before
/// written, the next FILE still read.
#[test]
fn bad_compressed_input_is_one_line_and_the_next_file_is_read() {
    // Decoded, more than one piece of a FILE's decoding: the fault may come in any.
    let text = text(20_000);
    let gz = gzip(&text);
    let zst = zstd(&text);
    let mut corrupt = gz.clone();
    corrupt[gz.len() / 2] ^= 0x55;
    let mut bad_crc = gz.clone();
    bad_crc[gz.len() - 8] ^= 1;
    let mut bad_zstd_checksum = zst.clone();
    *bad_zstd_checksum.last_mut().unwrap() ^= 1;
    let mut wide = zstd::Encoder::new(Vec::new(), 3).unwrap();
    wide.window_log(28).unwrap();
    wide.long_distance_matching(true).unwrap();
    wide.write_all(&text).unwrap();
    let wide = wide.finish().unwrap();
    let (xz_text, bzip2_text, lz4_text) = (xz(&text), bzip2(&text), lz4(&text));
    let flipped = |bytes: &[u8], from_end: usize| {
        let mut bytes = bytes.to_vec();
        let at = bytes.len() - from_end;
        bytes[at] ^= 1;
        bytes
    };
    // (name, bytes, a word of the reason, what of the text comes out first)
    let cases: [(&str, Vec<u8>, &str, Before); 16] = [
        (
            "truncated.xz",
            xz_text[..xz_text.len() - 3].to_vec(),
            "premature eof",
            Before::Whole,
        ),
        // The CRC-64 before the index and the stream footer.
        (
            "checksum.xz",
            flipped(&xz_text, 32),
            "data error",
            Before::Whole,
        ),
        (
            "garbage.xz",
            [&xz_text[..], b"this is no xz stream header"].concat(),
            "",
            Before::Whole,
        ),
        (
            "cut.bz2",
            bzip2_text[..bzip2_text.len() / 2].to_vec(),
            "EOF",
            Before::Prefix,
        ),
        // The stream's CRC, bits before its end: the bzip2 crate gives none of the bytes decoded
        // by the call that finds it.
        (
            "checksum.bz2",
            flipped(&bzip2_text, 2),
            "invalid data",
            Before::Prefix,
        ),
        (
            "garbage.bz2",
            [&bzip2_text[..], b"garbage"].concat(),
            "header missing",
            Before::Whole,
        ),
        // Its end mark and content checksum cut off: the input ends between blocks.
        (
            "truncated.lz4",
            lz4_text[..lz4_text.len() - 8].to_vec(),
            "incomplete frame",
            Before::Whole,
        ),
        (
            "checksum.lz4",
            flipped(&lz4_text, 1),
            "Checksum",
            Before::Whole,
        ),
        (
            "garbage.lz4",
            [&lz4_text[..], b"garbage"].concat(),
            "WrongMagicNumber",
            Before::Whole,
        ),
        ("corrupt.gz", corrupt, "", Before::Other),
        (
            "truncated.gz",
            gz[..gz.len() - 3].to_vec(),
            "end of file",
            Before::Whole,
        ),
        ("cut.gz", gz[..gz.len() / 3].to_vec(), "", Before::Prefix),
        ("checksum.gz", bad_crc, "checksum", Before::Whole),
        (
            "garbage.gz",
            [&gz[..], b"this is no gzip member"].concat(),
            "header",
            Before::Whole,
        ),
        (
            "checksum.zst",
            bad_zstd_checksum,
            "checksum",
            Before::Prefix,
        ),
        ("wide.zst", wide, "memory", Before::Prefix),
    ];
    let next = scratch_file("the-next-file", b"the next FILE\n");
    for (name, bytes, reason, before) in cases {
        let bad = scratch_file(name, &bytes);
        for variant in defaults() {
            let finished = run_command(decompressing(variant, &[&bad, &next]), b"");
            assert_fails_after(variant, &finished, &bad, reason, &text, before);
        }
    }
}

/// docs/CONTRACT.md §12.3 (RFC 1952 §2.3.1.2): a gzip member whose header has a reserved flag
/// set is refused as zlib and `gzip -t` refuse it, after every byte of the members before it,
/// from a FILE, from stdin that is a file (decoded in memory) and from a pipe (decoded as a
/// stream): one line, exit 1, the next FILE still read. Among gzip members and among `bgzip`'s,
/// whose members decoders decode at once (§12.4).
#[test]
fn a_gzip_member_with_a_reserved_flag_is_refused() {
    let text = text(20_000);
    let next = scratch_file("the-next-file", b"the next FILE\n");
    let mut cases = Vec::new();
    for flag in [0x20, 0x40, 0x80] {
        let mut reserved = gzip(b"never decoded\n");
        reserved[3] |= flag;
        cases.push((
            format!("reserved-{flag:x}.gz"),
            [gzip(&text), reserved].concat(),
            text.clone(),
        ));
    }
    // Lines of 16 bytes: `bgzip`'s members hold 65,280 bytes of input each, whole lines.
    let lines: Vec<u8> = (0..20_000)
        .flat_map(|n| format!("line {n:>10}\n").into_bytes())
        .collect();
    let plain = scratch_file("reserved.txt", &lines);
    if let Some(mut bgzf) = tool_output("bgzip", "tabix", &["-c"], &plain) {
        // The second member, after the size the first's `BC` field gives (less one).
        let second = usize::from(u16::from_le_bytes([bgzf[16], bgzf[17]])) + 1;
        let mut first = Vec::new();
        flate2::read::GzDecoder::new(&bgzf[..second])
            .read_to_end(&mut first)
            .unwrap();
        bgzf[second + 3] |= 0x20;
        cases.push(("reserved.bgz".to_owned(), bgzf, first));
    }
    // Operand `-`, named `stdin` in the failure's line.
    let (stdin, named) = (Path::new("-"), Path::new("stdin"));
    let reason = "invalid gzip header";
    for (name, bytes, before) in cases {
        let bad = scratch_file(&name, &bytes);
        for variant in defaults() {
            let from_file = run_command(decompressing(variant, &[&bad, &next]), b"");
            assert_fails_after(variant, &from_file, &bad, reason, &before, Before::Whole);
            let mut command = decompressing(variant, &[stdin, &next]);
            command.stdin(fs::File::open(&bad).unwrap());
            command.stdout(Stdio::piped()).stderr(Stdio::piped());
            let from_stdin = finish(command.spawn().expect("spawning"), DEADLINE);
            assert_fails_after(variant, &from_stdin, named, reason, &before, Before::Whole);
            let from_pipe = run_command(decompressing(variant, &[stdin, &next]), &bytes);
            assert_fails_after(variant, &from_pipe, named, reason, &before, Before::Whole);
        }
    }
}

/// The output of `tool ARGS FILE`, or `None` (the test skipped) where the tool is missing.
fn tool_output(tool: &str, package: &str, args: &[&str], file: &Path) -> Option<Vec<u8>> {
    match Command::new(tool).args(args).arg(file).output() {
        Ok(out) if out.status.success() => Some(out.stdout),
        _ => {
            skip(&format!(
                "{tool} is not installed (apt-get install {package})"
            ));
            None
        }
    }
}

/// docs/CONTRACT.md §12.2 for bzip2's blocks on every decoder: a block comes out once the magic
/// after it has arrived, the next block's or its stream's end, while the writer pauses.
#[test]
fn a_slowly_written_bzip2_stream_comes_out_block_by_block() {
    // Two blocks of 100 kB: where the second begins, from the first magic after the first's.
    let lines = text(4_000);
    let two_blocks = bzip2(&lines);
    let bit = |at: usize| u64::from(two_blocks[at / 8] >> (7 - at % 8) & 1);
    let magic_at = |at: usize| (0..48).all(|n| bit(at + n) == 0x3141_5926_5359 >> (47 - n) & 1);
    let second = (33..two_blocks.len() * 8 - 48)
        .find(|&at| magic_at(at))
        .expect("a second block");
    let first_block_sent = (second + 48).div_ceil(8);
    for variant in defaults() {
        let mut child = spawn_piped(decompressing(variant, &["--decoders", "2"]));
        let mut stdin = child.stdin.take().expect("stdin");
        let received = lines_sent(child.stdout.take().expect("stdout"));
        let next = || received.recv_timeout(Duration::from_secs(5)).ok();
        // A stream of its own: its end has come.
        stdin.write_all(&bzip2(b"first line\n")).expect("writing");
        assert_eq!(
            next(),
            Some(reference(b"first line\n")),
            "{variant}: held back"
        );
        // The first block, and the magic of the second.
        stdin
            .write_all(&two_blocks[..first_block_sent])
            .expect("writing");
        let first = &lines[..lines.iter().position(|&byte| byte == b'\n').unwrap() + 1];
        assert_eq!(next(), Some(reference(first)), "{variant}: block held back");
        stdin
            .write_all(&two_blocks[first_block_sent..])
            .expect("writing");
        drop(stdin);
        let finished = finish(child, DEADLINE);
        assert_quiet_success(variant, &finished);
    }
}

/// docs/CONTRACT.md §12.4 and §12.3 for bzip2's blocks on every decoder: files of many blocks
/// made by `bzip2`, `lbzip2` and `pbzip2` (a stream per block) come out of every binary from a
/// FILE and from stdin as from one decoder (`--decoders 1`); damaged (a bit flipped in a first,
/// a middle and a last block, cut short, a bad stream CRC, garbage after), each fails as on one
/// decoder: the same exit status and line, and the bytes before the fault one decoder's, cut
/// anywhere.
#[test]
fn bzip2_blocks_decode_on_every_decoder_as_on_one() {
    let text = text(12_000);
    let plain = scratch_file("blocks.txt", &text);
    for (tool, package, args) in [
        ("bzip2", "bzip2", &["-1", "-c"][..]),
        ("lbzip2", "lbzip2", &["-1", "-n", "2", "-c"]),
        ("pbzip2", "pbzip2", &["-1", "-p2", "-c"]),
    ] {
        let Some(whole) = tool_output(tool, package, args, &plain) else {
            return;
        };
        let flipped = |at: f64| {
            let mut bytes = whole.clone();
            let at = (bytes.len() as f64 * at) as usize;
            bytes[at] ^= 0x08;
            bytes
        };
        let damaged = [
            ("whole", whole.clone()),
            ("first", flipped(0.05)),
            ("middle", flipped(0.5)),
            ("last", flipped(0.95)),
            ("crc", flipped(1.0 - 2.0 / whole.len() as f64)),
            ("cut", whole[..whole.len() * 2 / 3].to_vec()),
            ("garbage", [&whole[..], b"garbage"].concat()),
        ];
        for (what, bytes) in damaged {
            let file = scratch_file(&format!("blocks-{tool}-{what}.bz2"), &bytes);
            for variant in defaults() {
                let run = |decoders: &str, from_stdin: bool| {
                    let mut command = decompressing(variant, &["--decoders", decoders]);
                    match from_stdin {
                        true => run_command(command, &bytes),
                        false => {
                            command.arg(&file);
                            run_command(command, b"")
                        }
                    }
                };
                let one = run("1", false);
                let stdin_name = format!(": {}: ", file.display());
                for (many, name) in [(run("2", false), ""), (run("2", true), "stdin")] {
                    let case = format!("{variant} {tool} {what} {name}");
                    assert_eq!(many.status.code(), one.status.code(), "{case}");
                    let told = match name {
                        "" => one.stderr.clone(),
                        _ => one.stderr.replace(&stdin_name, ": stdin: "),
                    };
                    assert_eq!(many.stderr, told, "{case}");
                    if what == "whole" {
                        assert!(many.stdout == reference(&text), "{case}");
                        continue;
                    }
                    // Each is one decoder's bytes cut somewhere: the shorter, less its last line,
                    // begins the longer.
                    let (short, long) = match many.stdout.len() < one.stdout.len() {
                        true => (&many.stdout, &one.stdout),
                        false => (&one.stdout, &many.stdout),
                    };
                    let whole_lines = short[..short.len().saturating_sub(1)]
                        .iter()
                        .rposition(|&byte| byte == b'\n')
                        .map_or(0, |at| at + 1);
                    assert!(long.starts_with(&short[..whole_lines]), "{case}");
                }
            }
        }
    }
}

/// docs/CONTRACT.md §12.1 and §12.3 for a FILE whose parts are decoded at once (§12.4): the
/// output is in the file's order, and a fault in a later part comes out after every part
/// before it, as with one decoder: `pzstd`'s frames (each after a skippable frame that holds the
/// frame's length), the blocks of `xz -T2`, whose streams follow one another as `cat a.xz
/// b.xz` writes them, and `bgzip`'s members (each giving its size in a `BC` field), a member of
/// plain gzip after them left to one decoder; `bgzip`'s from stdin too.
#[test]
fn parts_decoded_at_once_come_out_in_order_and_faults_after_them() {
    let text = text(100_000);
    let plain = scratch_file("parts.txt", &text);
    let pzstd_args = ["-1", "-p", "2", "-c", "-q"];
    let Some(pzstd) = tool_output("pzstd", "zstd", &pzstd_args, &plain) else {
        return;
    };
    let xz_args = ["-T2", "--block-size=256KiB", "-c"];
    let Some(xz) = tool_output("xz", "xz-utils", &xz_args, &plain) else {
        return;
    };
    let Some(bgzf) = tool_output("bgzip", "tabix", &["-c"], &plain) else {
        return;
    };
    // bgzip's first member, found by the size its `BC` field gives (after the 12 bytes of the
    // gzip header and the field's 4-byte ID and length), decoded alone.
    let member = 1 + u16::from_le_bytes(bgzf[16..18].try_into().unwrap()) as usize;
    let mut first_member = Vec::new();
    flate2::read::GzDecoder::new(&bgzf[..member])
        .read_to_end(&mut first_member)
        .unwrap();
    first_member.truncate(
        first_member
            .iter()
            .rposition(|&byte| byte == b'\n')
            .unwrap()
            + 1,
    );
    // pzstd's first frame, found by the length its skippable frame gives, decoded alone.
    let second = 12 + u32::from_le_bytes(pzstd[8..12].try_into().unwrap()) as usize;
    let mut first = zstd::decode_all(&pzstd[12..second]).unwrap();
    // Its lines that end in it.
    first.truncate(first.iter().rposition(|&byte| byte == b'\n').unwrap() + 1);
    assert!(
        first.len() < text.len() / 2,
        "pzstd wrote frames of {}",
        first.len()
    );
    let flipped = |bytes: &[u8], at: usize| {
        let mut bytes = bytes.to_vec();
        bytes[at] ^= 0x55;
        bytes
    };
    let whole = |bytes: &[u8], text: &[u8]| (bytes.to_vec(), text.to_vec(), None);
    let bad = |bytes: Vec<u8>, reason, before| (bytes, text.clone(), Some((reason, before)));
    let twice = [&text[..], &text].concat();
    // (name, bytes, the text, the fault's reason and what comes before it, the text that
    // comes out whole before the fault)
    let cases = [
        ("parts.pzst", whole(&pzstd, &text), &first[..]),
        (
            "twice.pzst",
            whole(&[&pzstd[..], &pzstd].concat(), &twice),
            &first,
        ),
        (
            "cut.pzst",
            bad(
                pzstd[..pzstd.len() * 3 / 4].to_vec(),
                "incomplete frame",
                Before::Prefix,
            ),
            &first,
        ),
        (
            "flipped.pzst",
            bad(flipped(&pzstd, second + 12 + 1000), "", Before::Other),
            &first,
        ),
        (
            "garbage.pzst",
            bad(
                [&pzstd[..], b"garbage"].concat(),
                "Unknown frame",
                Before::Whole,
            ),
            &first,
        ),
        ("parts.xz", whole(&xz, &text), b""),
        ("parts.bgz", whole(&bgzf, &text), &first_member[..]),
        (
            "then-gzip.bgz",
            whole(&[&bgzf[..], &gzip(&text)].concat(), &twice),
            &first_member,
        ),
        (
            "cut.bgz",
            bad(
                bgzf[..bgzf.len() * 3 / 4].to_vec(),
                "incomplete deflate stream",
                Before::Prefix,
            ),
            &first_member,
        ),
        (
            "flipped.bgz",
            bad(flipped(&bgzf, bgzf.len() / 2), "", Before::Other),
            &first_member,
        ),
        (
            "garbage.bgz",
            bad(
                [&bgzf[..], b"garbage, longer than a header"].concat(),
                "invalid gzip header",
                Before::Whole,
            ),
            &first_member,
        ),
        ("twice.xz", whole(&[&xz[..], &xz].concat(), &twice), b""),
        (
            "cut.xz",
            bad(
                xz[..xz.len() * 3 / 4].to_vec(),
                "premature eof",
                Before::Prefix,
            ),
            b"",
        ),
        (
            "flipped.xz",
            bad(flipped(&xz, xz.len() / 2), "data error", Before::Other),
            b"",
        ),
        (
            "garbage.xz",
            bad(
                [&xz[..], b"garbage, longer than a header"].concat(),
                "data error",
                Before::Whole,
            ),
            b"",
        ),
    ];
    let next = scratch_file("parts-next", b"the next FILE\n");
    // Four decoders, so that the parts are decoded at once whatever the machine's cores (§12.4:
    // zstd's frames on all but one, so on one decoder with two).
    fn at_once<'a>(files: &[&'a PathBuf]) -> Vec<&'a OsStr> {
        let mut args = vec![OsStr::new("--decoders"), OsStr::new("4")];
        args.extend(files.iter().map(|file| file.as_os_str()));
        args
    }
    let stdin = PathBuf::from("-");
    for (name, (bytes, text, fault), first) in cases {
        let file = scratch_file(name, &bytes);
        // `bgzip`'s members from stdin, a pipe, are decoded at once too, and read alike.
        let sources = match name.ends_with(".bgz") {
            true => vec![(&file, &b""[..]), (&stdin, &bytes[..])],
            false => vec![(&file, &b""[..])],
        };
        for variant in defaults() {
            for &(source, stdin) in &sources {
                let Some((reason, before)) = fault else {
                    assert_decodes(variant, &at_once(&[source]), stdin, &text);
                    continue;
                };
                let finished =
                    run_command(decompressing(variant, &at_once(&[source, &next])), stdin);
                let told = if stdin.is_empty() {
                    &file
                } else {
                    Path::new("stdin")
                };
                assert_fails_after(variant, &finished, told, reason, &text, before);
                assert!(
                    finished.stdout.starts_with(&reference(first)),
                    "{variant}: {name}: the first frame is not whole before the fault"
                );
            }
        }
    }
}

/// docs/CONTRACT.md §12.3 and §8.3: input that is the output is refused before anything is
/// decoded.
#[test]
fn compressed_input_that_is_the_output_is_refused() {
    for variant in defaults() {
        let path = scratch_file(&format!("self-{}.gz", variant.program), &gzip(b"x\n"));
        let out = fs::OpenOptions::new().append(true).open(&path).unwrap();
        let finished = decompressing(variant, &[&path])
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .output()
            .expect("running the binary");
        let stderr = String::from_utf8_lossy(&finished.stderr);
        assert_eq!(finished.status.code(), Some(1), "{variant}");
        assert!(
            stderr.ends_with("input file is output file\n"),
            "{variant}: {stderr}"
        );
    }
}

/// `batched -z` on a gzip file expanding to `mib` MiB of short lines: its peak RSS once every
/// line is out, stdin (read after the file) still open so the process can be looked at.
fn batched_peak_rss(mib: usize) -> u64 {
    // One member of 1 MiB, repeated: quick to make, and a multi-member file as `pigz` writes.
    let mib_of_lines: Vec<u8> = (0..1 << 20)
        .map(|n| if n % 16 == 15 { b'\n' } else { b"a b"[n % 3] })
        .collect();
    let member = gzip(&mib_of_lines);
    let file = scratch_file(&format!("rss-{mib}.gz"), &member.repeat(mib));
    let variant = VARIANTS
        .iter()
        .find(|variant| variant.program == "batched")
        .unwrap();
    let mut child = spawn_piped(decompressing(variant, &[file, PathBuf::from("-")]));
    let stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let lines = mib << 16;
    let mut line = Vec::new();
    for _ in 0..lines {
        line.clear();
        stdout.read_until(b'\n', &mut line).expect("reading a line");
    }
    let peak = peak_rss(child.id());
    drop(stdin);
    child.stdout = Some(stdout.into_inner());
    assert_quiet_success(variant, &finish(child, DEADLINE));
    peak
}

/// docs/CONTRACT.md §12.4: memory does not grow with the decoded size: 8 times the output costs no
/// more than a few MiB more, and stays under the 32 MiB bound (harness/compressed.sh measures it
/// at 1 GiB).
#[test]
fn decoding_memory_does_not_grow_with_the_output() {
    let (small, large) = (batched_peak_rss(4), batched_peak_rss(32));
    assert!(large < 32 << 20, "32 MiB decoded: {} MiB peak", large >> 20);
    assert!(
        large < small + (4 << 20),
        "8 MiB: {} KiB, 64 MiB: {} KiB",
        small >> 10,
        large >> 10
    );
}

/// A compressed stream damaged by `edits`: (position as a share of the length, what is done).
fn mutated(mut bytes: Vec<u8>, edits: &[(f64, u8, u8)]) -> Vec<u8> {
    for &(at, what, byte) in edits {
        let at = ((bytes.len() as f64) * at) as usize;
        match what % 3 {
            0 if at < bytes.len() => bytes[at] ^= byte | 1,
            1 => bytes.insert(at.min(bytes.len()), byte),
            _ => bytes.truncate(at),
        }
    }
    bytes
}

/// What the crates decode `input` to, the way `-z` reads it (by its first bytes): a failure
/// where they find one.
fn decoded(input: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut decoded = Vec::new();
    let starts = |magic: &[u8]| input.starts_with(magic);
    if starts(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(input).read_to_end(&mut decoded)?;
    } else if starts(&[0x28, 0xb5, 0x2f, 0xfd]) {
        zstd::Decoder::new(input)?.read_to_end(&mut decoded)?;
    } else if starts(b"\xfd7zXZ\x00") {
        liblzma::read::XzDecoder::new_multi_decoder(input).read_to_end(&mut decoded)?;
    } else if starts(b"BZh")
        && input.len() >= 10
        && matches!(input[3], b'1'..=b'9')
        && [&b"1AY&SY"[..], b"\x17\x72\x45\x38\x50\x90"].contains(&&input[4..10])
    {
        bzip2::read::MultiBzDecoder::new(input).read_to_end(&mut decoded)?;
    } else if starts(&[0x04, 0x22, 0x4d, 0x18]) {
        // One frame, as every damaged input here begins with.
        lz4_flex::frame::FrameDecoder::new(input).read_to_end(&mut decoded)?;
    } else {
        // A damaged magic: read as it is (§12.1).
        decoded.extend_from_slice(input);
    }
    Ok(decoded)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// docs/CONTRACT.md §12.3 and §5.3: random and damaged compressed input of every format (files
    /// whose parts are decoded at once too) never panics: exit 0 with the decoded bytes rendered,
    /// or exit 1 with one well-formed line.
    #[test]
    fn damaged_input_is_a_clean_failure(
        text in line_soup(2000),
        format in 0..ENCODERS.len() + PARTED.len(),
        edits in prop::collection::vec((0.0..1.0f64, any::<u8>(), any::<u8>()), 0..4),
        noise in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let compressed = ENCODERS.iter().chain(&PARTED).nth(format).unwrap()(&text);
        // The format's magic, then noise.
        let magic = &compressed[..compressed.len().min(10)];
        for input in [mutated(compressed.clone(), &edits), [magic, &noise].concat()] {
            // From stdin, through the decoder's pipe, and as a FILE, in buffers.
            let file = scratch_file("damaged", &input);
            let ways = defaults().flat_map(|variant| {
                [(variant, &[][..]), (variant, std::slice::from_ref(&file))]
            });
            for (variant, args) in ways {
                let (stdin, name) = match args.is_empty() {
                    true => (&input[..], "stdin".to_owned()),
                    false => (&b""[..], file.display().to_string()),
                };
                let finished = run_command(decompressing(variant, args), stdin);
                match finished.status.code() {
                    Some(0) => {
                        prop_assert_eq!(&finished.stderr, "");
                        let decoded = decoded(&input);
                        prop_assert!(decoded.is_ok(), "{}: exit 0 on a bad stream", variant);
                        prop_assert!(finished.stdout == reference(&decoded.unwrap()), "{}", variant);
                    }
                    Some(1) => {
                        let line = format!("{}: {name}: decompressing: ", variant.program);
                        prop_assert!(
                            finished.stderr.starts_with(&line) && finished.stderr.lines().count() == 1,
                            "{}: {:?}", variant, finished.stderr
                        );
                    }
                    other => prop_assert!(false, "{}: exit {:?}, {:?}", variant, other, finished.stderr),
                }
            }
        }
    }
}

/// How the kernel schedules a thread: the cores it may run on, and its policy, nice value,
/// real-time priority and slice (`sched_getattr`).
#[cfg(target_os = "linux")]
#[derive(Clone, Debug, PartialEq, Eq)]
struct Scheduling {
    cores: rustix::thread::CpuSet,
    policy: u32,
    nice: i32,
    priority: u32,
    slice: u64,
}

#[cfg(target_os = "linux")]
impl Scheduling {
    /// Thread `tid`'s (0: the calling thread's), or `None` once it has gone.
    fn of(tid: libc::pid_t) -> Option<Scheduling> {
        let cores = rustix::thread::sched_getaffinity(rustix::thread::Pid::from_raw(tid)).ok()?;
        let attr = attributes(tid)?;
        Some(Scheduling {
            cores,
            policy: attr.sched_policy,
            nice: attr.sched_nice,
            priority: attr.sched_priority,
            slice: attr.sched_runtime,
        })
    }

    /// The calling thread's.
    fn own() -> Scheduling {
        Scheduling::of(0).expect("the calling thread's scheduling")
    }
}

/// Thread `tid`'s scheduling attributes (0: the calling thread's), or `None` once it has gone.
#[cfg(target_os = "linux")]
fn attributes(tid: libc::pid_t) -> Option<libc::sched_attr> {
    // SAFETY: `sched_attr` is plain integers, for which all zeroes is a value.
    let mut attr: libc::sched_attr = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::sched_attr>() as libc::c_uint;
    // SAFETY: the kernel writes at most `size` bytes into `attr`, which has that many.
    let got = unsafe { libc::syscall(libc::SYS_sched_getattr, tid, &raw mut attr, size, 0) };
    (got == 0).then_some(attr)
}

/// The timer slack the test's own threads set, in nanoseconds: not the default (50 µs), so that
/// a thread that has it took it from one of them.
#[cfg(target_os = "linux")]
const SLACK: libc::c_ulong = 123_457;

/// The slice the test's own threads ask for, in nanoseconds: not the default, so that a thread
/// that has it took it from one of them (kernels before 6.12 have no slice to ask for).
#[cfg(target_os = "linux")]
const SLICE: u64 = 2_345_678;

/// Gives the calling thread `cores`, [`SLICE`] and [`SLACK`]: how the kernel then schedules it.
#[cfg(target_os = "linux")]
fn set_own(cores: &rustix::thread::CpuSet) -> Scheduling {
    rustix::thread::sched_setaffinity(None, cores).expect("setting the thread's cores");
    let mut attr = attributes(0).expect("the thread's scheduling");
    attr.sched_runtime = SLICE;
    // SAFETY: `attr` is a whole `sched_attr` whose `size` says so; the kernel only reads it. The
    // policy and nice value are the thread's own, which it may always keep.
    let set = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &raw const attr, 0) };
    assert_eq!(set, 0, "setting the thread's slice");
    // SAFETY: PR_SET_TIMERSLACK reads its one argument as a number and changes only the
    // calling thread's timer slack.
    let set = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, SLACK) };
    assert_eq!(set, 0, "setting the thread's timer slack");
    Scheduling::own()
}

/// The calling thread's timer slack, in nanoseconds.
#[cfg(target_os = "linux")]
fn own_slack() -> libc::c_ulong {
    // SAFETY: PR_GET_TIMERSLACK takes no argument and only returns a number.
    let slack = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK) };
    libc::c_ulong::try_from(slack).expect("the thread's timer slack")
}

/// A thread of the test's own on `cores` with [`SLACK`], that looks at how it is scheduled every
/// millisecond until the sender returned is dropped: returns, when joined, how it was scheduled
/// each time that changed, from the first.
#[cfg(target_os = "linux")]
fn bystander(
    cores: rustix::thread::CpuSet,
) -> (
    mpsc::Sender<()>,
    thread::JoinHandle<Vec<(Scheduling, libc::c_ulong)>>,
) {
    let (stop, stopped) = mpsc::channel::<()>();
    let (started, ready) = mpsc::channel();
    let looking = thread::spawn(move || {
        let mut seen = vec![(set_own(&cores), own_slack())];
        started.send(()).unwrap();
        while stopped.recv_timeout(Duration::from_millis(1)) == Err(mpsc::RecvTimeoutError::Timeout)
        {
            let now = (Scheduling::own(), own_slack());
            if seen.last() != Some(&now) {
                seen.push(now);
            }
        }
        seen
    });
    ready.recv().unwrap();
    (stop, looking)
}

/// The cores the test may run on, and the first of them alone.
#[cfg(target_os = "linux")]
fn every_core_and_the_first() -> (rustix::thread::CpuSet, rustix::thread::CpuSet) {
    use rustix::thread::CpuSet;
    let every = Scheduling::own().cores;
    let first = (0..CpuSet::MAX_CPU)
        .find(|&core| every.is_set(core))
        .unwrap();
    let mut pinned = CpuSet::new();
    pinned.set(first);
    (every, pinned)
}

/// docs/CONTRACT.md §12.6: decoding, through the library, changes nothing of a thread it did not
/// start. Two threads of the test's own, one pinned to a core and one on every core the test may
/// use, each with a timer slack it set, and the reading thread keep their cores, policy, nice
/// value, priority, slice and timer slack throughout and after: FILEs of zstd frames, of xz blocks
/// and of bzip2 blocks on two decoders, a gzip member on one, and a bzip2 stream on two.
#[cfg(target_os = "linux")]
#[test]
fn decoding_changes_no_thread_it_did_not_start() {
    use std::num::NonZeroUsize;

    use decompressed::{self as decode, Regular, SpareBuffers};

    let (every, pinned) = every_core_and_the_first();
    let reader = (Scheduling::own(), own_slack());
    let lookers = [bystander(pinned), bystander(every)];
    let text = text(20_000);
    let spares = SpareBuffers::default();
    let files = [
        ("frames.zst", zstd_frames(&text), 2),
        ("blocks.xz", xz_blocks(&text), 2),
        ("blocks.bz2", bzip2(&text), 2),
        ("member.gz", gzip(&text), 1),
    ];
    for (name, bytes, threads) in &files {
        let file = fs::File::open(scratch_file(&format!("untouched-{name}"), bytes)).unwrap();
        let source = Regular::at(file, 0, bytes.len() as u64);
        let format = decode::sniff_file(&source).unwrap();
        let threads = NonZeroUsize::new(*threads).unwrap();
        let (mut decoded, decoding) =
            decode::decode_file(source, format, decode::BUFFERS, threads, 0, &spares).unwrap();
        let (mut out, mut buf) = (Vec::new(), vec![0; 1 << 16]);
        while let n @ 1.. = decoded.read(&mut buf) {
            out.extend_from_slice(&buf[..n]);
        }
        decoding.finish().unwrap();
        assert!(out == text, "{name} decoded");
    }
    let stream = fs::File::open(scratch_file("untouched-stream.bz2", &files[2].1)).unwrap();
    let (mut pipe, decoding) = decode::decode(stream, NonZeroUsize::new(2).unwrap()).unwrap();
    let mut out = Vec::new();
    pipe.read_to_end(&mut out).unwrap();
    decoding.finish().unwrap();
    assert!(out == text, "the stream decoded");
    assert_eq!(
        (Scheduling::own(), own_slack()),
        reader,
        "the reading thread"
    );
    for ((stop, looking), cores) in lookers.into_iter().zip([pinned, every]) {
        drop(stop);
        let seen = looking.join().unwrap();
        assert_eq!(
            seen,
            [(
                Scheduling {
                    cores,
                    ..seen[0].0.clone()
                },
                SLACK
            )],
            "changed"
        );
    }
}

/// docs/CONTRACT.md §12.6, through every binary: decoding changes no thread's cores or slice. A
/// binary started from a thread of the test's own, with cores and a timer slack that thread set,
/// looked at every millisecond until it waits for its output to be read: each of its threads has
/// that thread's cores, policy, nice value, priority and slice, and its first thread that timer
/// slack, whether a FILE's parts decode on two decoders, FILEs are decoded ahead, or one decoder
/// runs alone.
#[cfg(target_os = "linux")]
#[test]
fn decoding_binaries_keep_their_threads_as_started() {
    let text = text(100_000);
    let frames = scratch_file("as-started.zst", &zstd_frames(&text));
    let blocks = scratch_file("as-started.xz", &xz_blocks(&text));
    let gzipped = scratch_file("as-started.gz", &gzip(&text));
    let bzipped = scratch_file("as-started.bz2", &bzip2(&text));
    let cases = [
        (vec![&frames], "2"),
        (vec![&blocks], "2"),
        (vec![&gzipped, &gzipped], "2"),
        (vec![&gzipped], "1"),
        (vec![&bzipped], "1"),
    ];
    let (every, _) = every_core_and_the_first();
    for variant in defaults() {
        for (files, decoders) in &cases {
            let mut command = decompressing(variant, &["--decoders", decoders]);
            command
                .args(files)
                .stdin(Stdio::null())
                .stdout(Stdio::piped());
            // A child starts with the cores and timer slack of the thread that starts it.
            let (mut child, started) = thread::spawn(move || {
                let started = set_own(&every);
                (command.spawn().unwrap(), started)
            })
            .join()
            .unwrap();
            let pid = child.id();
            let mut changed = Vec::new();
            let mut look = || {
                let tasks = fs::read_dir(format!("/proc/{pid}/task"))
                    .into_iter()
                    .flatten();
                for task in tasks.flatten() {
                    let tid = task.file_name().to_str().and_then(|tid| tid.parse().ok());
                    let now = tid.and_then(Scheduling::of);
                    if now.as_ref().is_some_and(|now| *now != started) {
                        let name = fs::read_to_string(task.path().join("comm")).unwrap_or_default();
                        let seen = (name.trim_end().to_owned(), now);
                        if !changed.contains(&seen) {
                            changed.push(seen);
                        }
                    }
                }
            };
            common::wait_for(&format!("{} waiting to write", variant.program), || {
                look();
                common::process_asleep_in(pid, "pipe_write")
                    || common::process_asleep_in(pid, "poll")
            });
            look();
            let slack = fs::read_to_string(format!("/proc/{pid}/timerslack_ns")).unwrap();
            child.kill().unwrap();
            child.wait().unwrap();
            assert_eq!(
                slack.trim(),
                SLACK.to_string(),
                "{} {files:?}",
                variant.program
            );
            assert!(
                changed.is_empty(),
                "{} {files:?}: as started {started:?}, changed {changed:?}",
                variant.program
            );
        }
    }
}
