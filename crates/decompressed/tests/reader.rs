//! `Reader`, the crate's face (docs/CONTRACT.md §12.7), against the formats' own encoders: every
//! format from a regular file and from a pipe decodes to what was encoded, two members or streams
//! in a row; a source cut short or followed by garbage gives the bytes before the fault, then an
//! error, never the end; a stream written slowly comes out line by line.

use std::fs::File;
use std::io::{self, BufRead, Read, Write};
use std::num::NonZeroUsize;

use decompressed::Reader;
use pipelines_testing::{IN_MEMORY, within_for};
use proptest::prelude::*;

/// Text of `lines` numbered lines, the shape of a log.
fn text(lines: usize) -> Vec<u8> {
    (0..lines)
        .flat_map(|n| format!("{n} GET /index.html 200 {}\n", n * 7 % 1000).into_bytes())
        .collect()
}

/// `bytes` encoded in `format`, as its own crate writes it.
fn encoded(format: &str, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match format {
        "gzip" => {
            let mut gzip = flate2::write::GzEncoder::new(out, flate2::Compression::new(6));
            gzip.write_all(bytes).unwrap();
            out = gzip.finish().unwrap();
        }
        "bgzf" => out = pipelines_testing::bgzf(bytes),
        "zstd" => out = zstd::encode_all(bytes, 3).unwrap(),
        "xz" => {
            let mut xz = liblzma::write::XzEncoder::new(out, 6);
            xz.write_all(bytes).unwrap();
            out = xz.finish().unwrap();
        }
        "bzip2" => {
            let mut bzip2 = bzip2::write::BzEncoder::new(out, bzip2::Compression::new(9));
            bzip2.write_all(bytes).unwrap();
            out = bzip2.finish().unwrap();
        }
        "lz4" => {
            let mut lz4 = lz4_flex::frame::FrameEncoder::new(out);
            lz4.write_all(bytes).unwrap();
            out = lz4.finish().unwrap();
        }
        _ => out.extend_from_slice(bytes),
    }
    out
}

const FORMATS: [&str; 7] = ["gzip", "bgzf", "zstd", "xz", "bzip2", "lz4", "plain"];

/// Two members (frames, streams) in a row, of two halves of `text`.
fn two_in_a_row(format: &str, text: &[u8]) -> Vec<u8> {
    let (first, second) = text.split_at(text.len() / 2);
    [encoded(format, first), encoded(format, second)].concat()
}

/// A regular file holding `bytes`, its name already gone.
fn regular(bytes: &[u8]) -> File {
    let path = pipelines_testing::path("reader");
    std::fs::write(&path, bytes).unwrap();
    let file = File::open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    file
}

/// The read end of a pipe that a thread of its own writes `bytes` into.
fn piped(bytes: Vec<u8>) -> File {
    let (reader, mut writer) = io::pipe().unwrap();
    std::thread::spawn(move || {
        let _ = writer.write_all(&bytes);
    });
    File::from(std::os::fd::OwnedFd::from(reader))
}

/// What a [`Reader`] of `file` on `threads` reads: the bytes, and how reading ended. On one
/// thread it holds one buffer at most, on more the default.
fn read(file: File, threads: usize) -> (Vec<u8>, io::Result<usize>) {
    let mut reader = match NonZeroUsize::new(threads).unwrap() {
        NonZeroUsize::MIN => Reader::with_buffers(file, NonZeroUsize::MIN, 1).unwrap(),
        threads => Reader::new(file, threads).unwrap(),
    };
    let mut bytes = Vec::new();
    let ended = reader.read_to_end(&mut bytes);
    (bytes, ended)
}

/// Every source read, whatever `read` does with it: a regular file and a pipe on one thread and
/// on two, and a reader of the caller's.
fn every_way(bytes: &[u8], check: impl Fn(&str, Vec<u8>, io::Result<usize>)) {
    for threads in [1, 2] {
        // Within deadlines: a reader that gives bytes for ever fails in seconds.
        let file = regular(bytes);
        let (from_file, ended) =
            within_for(IN_MEMORY, "a file's decoding", move || read(file, threads));
        check("a regular file", from_file, ended);
        let (from_pipe, ended) = pipelines_testing::within("a pipe's decoding", {
            let bytes = bytes.to_vec();
            move || read(piped(bytes), threads)
        });
        check("a pipe", from_pipe, ended);
    }
    let trickle = Trickle(io::Cursor::new(bytes.to_vec()), false);
    let (from_reader, ended) = within_for(IN_MEMORY, "a reader's decoding", move || {
        let mut from_reader = Vec::new();
        let ended = Reader::from_reader(trickle).read_to_end(&mut from_reader);
        (from_reader, ended)
    });
    check("a reader", from_reader, ended);
}

/// A reader that gives at most 4,093 bytes a read, each after a read interrupted (a signal's):
/// a reader's reads need not fill what is asked, and an interrupted one is tried again.
struct Trickle<R>(R, bool);

impl<R: Read> Read for Trickle<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.1 = !self.1;
        if self.1 {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let most = buf.len().min(4_093);
        self.0.read(&mut buf[..most])
    }
}

#[test]
fn every_format_decodes_from_a_file_and_from_a_pipe() {
    let text = text(20_000);
    for format in FORMATS {
        every_way(&two_in_a_row(format, &text), |from, decoded, ended| {
            assert!(ended.is_ok(), "{format} from {from}: {ended:?}");
            assert!(decoded == text, "{format} from {from}: other bytes");
        });
    }
}

#[test]
fn a_source_cut_short_is_an_error_after_the_bytes_before_the_cut() {
    let text = text(5_000);
    for format in FORMATS.iter().filter(|&&format| format != "plain") {
        let mut bytes = two_in_a_row(format, &text);
        bytes.truncate(bytes.len() - 5);
        every_way(&bytes, |from, decoded, ended| {
            let told = ended.expect_err(&format!("{format} cut short, from {from}: read whole"));
            assert!(
                text.starts_with(&decoded),
                "{format} from {from}: not a prefix"
            );
            assert_eq!(
                told.kind(),
                io::ErrorKind::UnexpectedEof,
                "{format}: {told}"
            );
            let place = format!(", after {} decoded bytes", decoded.len());
            assert!(told.to_string().ends_with(&place), "{format}: {told}");
        });
    }
}

#[test]
fn garbage_after_the_last_member_is_an_error_after_every_decoded_byte() {
    let text = text(5_000);
    for format in FORMATS.iter().filter(|&&format| format != "plain") {
        let bytes = [two_in_a_row(format, &text), b"garbage\n".to_vec()].concat();
        every_way(&bytes, |from, decoded, ended| {
            assert!(
                ended.is_err(),
                "{format} with garbage, from {from}: read as whole"
            );
            assert!(decoded == text, "{format} from {from}: not every byte");
        });
    }
}

/// CONTRACT §12.3: a bad checksum is a failure after the bytes it covers, less at most a
/// buffer's 256 KiB (one call's room) before the end of a zstd frame or a bzip2 block, however
/// much a read asks for: `read_to_end` asks for megabytes, and a decoder given all of that room
/// at once gave none of a bad frame's 750 KB.
#[test]
fn a_bad_checksum_loses_at_most_a_buffer_before_it_however_much_a_read_asks() {
    let text = text(100_000);
    // The second, of about 750 KB, one bzip2 block.
    let (first, second) = text.split_at(text.len() / 4 * 3);
    let checked = |bytes: &[u8]| {
        let mut zstd = zstd::Encoder::new(Vec::new(), 3).unwrap();
        zstd.include_checksum(true).unwrap();
        zstd.write_all(bytes).unwrap();
        zstd.finish().unwrap()
    };
    let mut zstd = [checked(first), checked(second)].concat();
    // The frame's last byte is its checksum's.
    *zstd.last_mut().unwrap() ^= 1;
    let mut bzip2 = [encoded("bzip2", first), encoded("bzip2", second)].concat();
    // The second stream's first block CRC: after `BZh9` and the block's 6-byte magic.
    bzip2[encoded("bzip2", first).len() + 10] ^= 1;
    for (format, bytes) in [("zstd", zstd), ("bzip2", bzip2)] {
        every_way(&bytes, |from, decoded, ended| {
            assert!(ended.is_err(), "{format} from {from}: read as whole");
            assert!(
                text.starts_with(&decoded),
                "{format} from {from}: not a prefix"
            );
            let missing = text.len() - decoded.len();
            assert!(
                missing <= decompressed::BUFFER,
                "{format} from {from}: {missing} bytes missing"
            );
        });
    }
}

/// A regular file of `bgzip`'s members read on one thread reads each of its bytes once: a run of
/// members decodes whole into one buffer of up to 16 of the crate's buffers (`Gathered`), and a
/// run that decodes to more is read again from its start by the one decoder. Counted by the
/// kernel (`rchar`, this thread's), as a bound that let a run gather one buffer's worth read each
/// run twice.
#[test]
fn a_bgzf_file_on_one_thread_is_read_once() {
    let bgzf = pipelines_testing::bgzf(&text(200_000));
    let file = regular(&bgzf);
    let read = pipelines_testing::within("a bgzip file's reads", move || {
        let ((), read) = pipelines_testing::counting_reads(|| {
            let mut reader = Reader::new(file, NonZeroUsize::MIN).unwrap();
            io::copy(&mut reader, &mut io::sink()).unwrap();
        });
        read
    });
    // Besides the file: a sniff of its first bytes, and a byte glibc reads once a process.
    let most = bgzf.len() as u64 + 8192;
    assert!(
        read <= most,
        "{read} bytes read of a {} byte file",
        bgzf.len()
    );
}

/// A reader of the caller's is not read until the reader is, and its failed read is told as
/// its own error, after every byte decoded before it.
#[test]
fn a_readers_failure_is_its_own_error_after_the_bytes_before_it() {
    struct Breaks {
        bytes: io::Cursor<Vec<u8>>,
        read: std::sync::Arc<std::sync::atomic::AtomicBool>,
    }
    impl Read for Breaks {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.read.store(true, std::sync::atomic::Ordering::Relaxed);
            match self.bytes.read(buf)? {
                0 => Err(io::Error::new(
                    io::ErrorKind::ConnectionReset,
                    "the body broke",
                )),
                n => Ok(n),
            }
        }
    }
    let text = text(5_000);
    let first = encoded("zstd", &text);
    let bytes = [first, encoded("zstd", b"never seen\n")[..6].to_vec()].concat();
    let read = std::sync::Arc::default();
    let breaks = Breaks {
        bytes: io::Cursor::new(bytes),
        read: std::sync::Arc::clone(&read),
    };
    let mut reader = Reader::from_reader(breaks);
    assert!(
        !read.load(std::sync::atomic::Ordering::Relaxed),
        "read before its reader"
    );
    let (decoded, told) = within_for(IN_MEMORY, "a failing reader's decoding", move || {
        let mut decoded = Vec::new();
        let told = reader.read_to_end(&mut decoded).unwrap_err();
        (decoded, told)
    });
    assert!(decoded == text, "{} bytes of {}", decoded.len(), text.len());
    assert_eq!(
        (told.kind(), told.to_string()),
        (io::ErrorKind::ConnectionReset, "the body broke".into())
    );
}

/// A member whose `BC` field says a size other than its own, among `bgzip`'s members, is read
/// past as gzip reads it, and so is every member before and after it, on one thread and two: the
/// walk's run ends at that member, and the one decoder takes the rest from where it really ends.
#[test]
fn a_bgzf_member_that_lies_about_its_size_loses_no_member_around_it() {
    let text = text(40_000);
    let (before, after) = text.split_at(text.len() / 2);
    let lying = pipelines_testing::bgzf_member(b"lying\n", 0, Some(40));
    let bytes = [
        pipelines_testing::bgzf(before),
        lying,
        pipelines_testing::bgzf(after),
    ]
    .concat();
    let whole = [before, b"lying\n", after].concat();
    every_way(&bytes, |how, read, ended| {
        assert!(ended.is_ok(), "{how}: {ended:?}");
        assert!(
            read == whole,
            "{how}: {} bytes, not {}",
            read.len(),
            whole.len()
        );
    });
}

/// A large file of `bgzip`'s members on two threads, its runs walked and decoded on the pool's
/// decoders (`tests/threads.rs` counts them), reads as on one thread: whole, cut
/// inside a member (but for the last symbols ISA-L holds back of a cut, a match's 258 bytes at
/// most, twice), a byte flipped, garbage after.
#[test]
fn a_large_bgzf_file_on_two_threads_reads_as_on_one() {
    let text = text(400_000);
    let whole = encoded("bgzf", &text);
    assert!(whole.len() as u64 > decompressed::DECODED_HERE);
    let mut flipped = whole.clone();
    flipped[whole.len() / 2] ^= 0x55;
    let cut = whole[..whole.len() * 2 / 3].to_vec();
    let garbage = [&whole[..], b"garbage\n"].concat();
    for (case, bytes) in [
        ("whole", &whole),
        ("cut", &cut),
        ("flipped", &flipped),
        ("garbage", &garbage),
    ] {
        let (one, one_ended) = read(regular(bytes), 1);
        let (two, two_ended) = read(regular(bytes), 2);
        let held = if case == "cut" { 2 * 258 } else { 0 };
        let shorter = one.len().min(two.len());
        assert!(
            one[..shorter] == two[..shorter] && one.len().abs_diff(two.len()) <= held,
            "{case}: {} bytes, not {}",
            two.len(),
            one.len()
        );
        assert_eq!(one_ended.is_ok(), case == "whole", "{case}: {one_ended:?}");
        let told = |ended: io::Result<usize>| {
            ended.map_err(|error| match held {
                0 => error.to_string(),
                _ => format!("{:?}", error.kind()),
            })
        };
        assert_eq!(told(two_ended), told(one_ended), "{case}");
    }
}

#[test]
fn the_end_is_told_once_and_then_stays_the_end() {
    let mut bytes = encoded("gzip", &text(100));
    bytes.truncate(bytes.len() - 3);
    let mut reader = Reader::new(regular(&bytes), NonZeroUsize::MIN).unwrap();
    assert!(reader.read_to_end(&mut Vec::new()).is_err());
    assert!(reader.fill_buf().unwrap().is_empty());
}

/// A stream's lines come out of the reader as they are written, each once the stream so far
/// decodes to it (a gzip sync flush, a zstd block flushed, an xz block ended), while the source
/// stays open; then the end. A buffer held until it fills, or until a second one is ready, fails
/// here, and so does a block that liblzma's threads decoded held until more input comes, whole or
/// its rest past a full buffer: xz's blocks are `xz -T2`'s, their sizes recorded, and read on two
/// threads.
#[test]
fn a_slowly_written_stream_comes_out_line_by_line() {
    for format in ["gzip", "zstd", "xz"] {
        let (source, writer) = io::pipe().unwrap();
        let threads = NonZeroUsize::new(if format == "xz" { 2 } else { 1 }).unwrap();
        let reader = Reader::new(File::from(std::os::fd::OwnedFd::from(source)), threads);
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in reader.unwrap().lines() {
                if send.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        let mut encoder: Box<dyn Write> = match format {
            "gzip" => Box::new(flate2::write::GzEncoder::new(
                writer,
                flate2::Compression::new(6),
            )),
            "zstd" => Box::new(zstd::Encoder::new(writer, 3).unwrap().auto_finish()),
            _ => Box::new(XzBlocks::new(writer)),
        };
        let next = || lines.recv_timeout(pipelines_testing::DEADLINE).ok();
        // A line longer than a buffer: what liblzma's threads hold is more than one read takes.
        let long = "x".repeat(decompressed::BUFFER + 1000);
        for line in ["first", &long, "second"] {
            writeln!(encoder, "{line}").unwrap();
            encoder.flush().unwrap();
            let came = next();
            let length = line.len();
            assert!(
                came.as_deref() == Some(line),
                "{format} held back a line of {length} bytes"
            );
        }
        drop(encoder);
        assert_eq!(next(), None, "{format}: a line after the end");
    }
}

/// xz as `xz -T2` writes it, each block's sizes recorded, a block ended at each flush: liblzma's
/// threaded encoder, driven here because `liblzma::write::XzEncoder`'s flush keeps the block's
/// last bytes until the next write.
struct XzBlocks<W: Write> {
    encoder: liblzma::stream::Stream,
    to: W,
}

impl<W: Write> XzBlocks<W> {
    fn new(to: W) -> Self {
        let encoder = liblzma::stream::MtStreamBuilder::new().threads(2).encoder();
        XzBlocks {
            encoder: encoder.unwrap(),
            to,
        }
    }

    /// Encodes `bytes` under `action` to its end, every encoded byte written.
    fn encode(&mut self, mut bytes: &[u8], action: liblzma::stream::Action) -> io::Result<()> {
        use liblzma::stream::{Action, Status};
        loop {
            let mut encoded = Vec::with_capacity(64 * 1024);
            let before = self.encoder.total_in();
            let status = self.encoder.process_vec(bytes, &mut encoded, action)?;
            bytes = &bytes[(self.encoder.total_in() - before) as usize..];
            self.to.write_all(&encoded)?;
            let done = match action {
                Action::Run => bytes.is_empty(),
                _ => status == Status::StreamEnd,
            };
            if done {
                return Ok(());
            }
        }
    }
}

impl<W: Write> Write for XzBlocks<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.encode(bytes, liblzma::stream::Action::Run)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.encode(&[], liblzma::stream::Action::FullFlush)?;
        self.to.flush()
    }
}

impl<W: Write> Drop for XzBlocks<W> {
    fn drop(&mut self) {
        let _ = self.encode(&[], liblzma::stream::Action::Finish);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Cut anywhere, a gzip file gives a prefix of its text, and success only where it is whole.
    #[test]
    fn a_gzip_file_cut_anywhere_is_whole_or_an_error(lines in 1..3_000usize, cut in 0.0..1.0f64) {
        let text = text(lines);
        let whole = encoded("gzip", &text);
        let at = (whole.len() as f64 * cut) as usize;
        let (decoded, ended) = read(regular(&whole[..at.max(4)]), 2); // gzip by its magic
        prop_assert!(text.starts_with(&decoded));
        prop_assert!(ended.is_err() || decoded == text);
    }
}
