//! `-z`: a compressed source decoded on a thread of its own, its bytes handed to the drivers in
//! memory (a regular file) or through a pipe (a stream).
//!
//! A source that begins with the gzip magic (`1f 8b`) is decoded member after member, one that
//! begins with a zstd frame (`28 b5 2f fd`) frame after frame (skippable frames skipped); anything
//! else passes through as it is, as `zcat -f` does. Which sources are decoded, and how each is
//! handed on, is the input's rule ([`Sources`](crate::io::sources::Sources)); this module carries
//! it out.
//!
//! Why a thread: on two cores the decoder, at a tenth of the renderer's speed or less, is most of
//! the cost, so it runs beside the rendering and the rendering hides behind it.
//!
//! Why two ways to hand the bytes on: a regular file is never live, so its decoded bytes go in
//! whole pieces over a bounded channel ([`decode_file`], read with [`Pieces`]), recycled, with no
//! system call and no kernel copy; at zstd's speed (about 1 GB/s) a pipe's write and read, each a
//! copy through the kernel, cost more than the decoding. A stream may be live: its bytes go
//! through a pipe ([`decode`]), whose read end is a stream like stdin, so waiting for input while
//! watching the output's reader, readiness, the reactor and writing when input is idle work
//! unchanged in every driver. Each decoded piece is written as soon as the decoder hands it on,
//! and the decoder hands on what it has whenever its input pauses, so a slowly written compressed
//! stream still comes out line by line.
//!
//! The thread ends at the source's end, at a failure, or when its reader has gone. Before the
//! decoded bytes end (the pipe closes, the channel disconnects) it sends how decoding ended,
//! which [`Decoding::finish`] then takes without waiting, on any thread, the async runtime's too.

use std::fs::File;
use std::io::{self, BufReader, Chain, Cursor, Read, Seek, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread;

use crossbeam_channel::{Receiver, Sender, bounded};
use flate2::bufread::MultiGzDecoder;

use crate::error::panic_message;
use crate::io::fd;

/// What a source holds, by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// gzip members, one after another.
    Gzip,
    /// zstd frames, one after another, skippable frames among them.
    Zstd,
    /// Anything else: read as it is.
    Plain,
}

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// The most bytes [`sniff`] needs.
const LONGEST_MAGIC: usize = 4;

/// What a source whose first bytes are `start` holds; `None` while `start` could still begin a
/// magic and more bytes may come (`ended` false). Decided on the fewest bytes, so that a live plain
/// line is never held back waiting for bytes that would not change the answer.
pub fn sniff(start: &[u8], ended: bool) -> Option<Format> {
    for (magic, format) in [(GZIP_MAGIC, Format::Gzip), (ZSTD_MAGIC, Format::Zstd)] {
        if start.starts_with(magic) {
            return Some(format);
        }
        if !ended && magic.starts_with(start) {
            return None;
        }
    }
    Some(Format::Plain)
}

/// What a regular file holds from its offset on, read there without moving the offset: stdin may
/// be a file that something before read part of, and reading goes on from where it stopped.
pub fn sniff_file(file: &File) -> io::Result<Format> {
    let at = (&*file).stream_position()?;
    let mut start = [0; LONGEST_MAGIC];
    let mut read = 0;
    while read < start.len() {
        match file.read_at(&mut start[read..], at + read as u64) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(sniff(&start[..read], true).unwrap_or(Format::Plain))
}

/// How decoding a source failed.
#[derive(Debug)]
pub enum Failure {
    /// Reading the source itself failed, as it would have without `-z`.
    Reading(io::Error),
    /// The bytes are not a well-formed stream of their format: corrupt, truncated, a bad checksum,
    /// garbage after the last member, a window larger than the decoder allows.
    Decompressing(io::Error),
}

/// Compressed bytes read, and decoded bytes handed on, at a time: large enough that a pipe write,
/// a channel's hand-over and the decoder's call overhead are a small part of each piece.
const PIECE: usize = 256 * 1024;

/// The most pieces of a regular file's decoded bytes in memory at once: as many as the pipe of a
/// stream holds (1 MiB), enough for the decoder to run on while the reader renders.
const PIECES: usize = 4;

/// How a source's decoding ended, told once its decoded bytes have ended: [`finish`](Self::finish).
#[derive(Debug)]
pub struct Decoding {
    /// The thread's one message, sent before the decoded bytes end.
    ended: Receiver<Result<(), Failure>>,
}

impl Decoding {
    /// How decoding ended, once the decoded bytes have ended: the thread has told it by then, so
    /// this never waits.
    pub fn finish(self) -> Result<(), Failure> {
        self.ended.try_recv().unwrap_or_else(|_| {
            debug_assert!(false, "decoding finished before the thread told how");
            Err(Failure::Decompressing(io::Error::other(
                "the decoder ended without a word",
            )))
        })
    }
}

/// Starts decoding a stream on a thread of its own: returns the read end of a pipe that carries
/// the decoded bytes as they come, and how decoding ends. The thread sniffs the source as it
/// reads it (a pipe's bytes can be read only once), passing plain bytes through.
pub fn decode(source: File) -> io::Result<(File, Decoding)> {
    let (reader, writer) = std::io::pipe()?;
    fd::enlarge_pipe(writer.as_fd());
    let out = PipeOut {
        pipe: File::from(OwnedFd::from(writer)),
        buf: vec![0; PIECE],
    };
    let decoding = start(source, None, out)?;
    Ok((File::from(OwnedFd::from(reader)), decoding))
}

/// Starts decoding a regular file that holds `format` (sniffed with [`sniff_file`]) on a thread of
/// its own: returns its decoded bytes, handed over in memory, and how decoding ends.
pub fn decode_file(source: File, format: Format) -> io::Result<(Pieces, Decoding)> {
    let (to_reader, full) = bounded(PIECES);
    let (to_decoder, empty) = bounded(PIECES);
    let out = PiecesOut {
        full: to_reader,
        empty,
        made: 0,
        piece: Vec::new(),
        held: 0,
    };
    let decoding = start(source, Some(format), out)?;
    let pieces = Pieces {
        full,
        empty: to_decoder,
        piece: Vec::new(),
        at: 0,
    };
    Ok((pieces, decoding))
}

/// Starts the thread that decodes `source` into `out`, and tells how it ended before `out` is
/// dropped, which ends the decoded bytes. A panic is told as a failure of the source.
fn start(source: File, format: Option<Format>, mut out: impl Out) -> io::Result<Decoding> {
    let (tell, ended) = bounded(1);
    thread::Builder::new()
        .name("decode".to_owned())
        .spawn(move || {
            let ran = catch_unwind(AssertUnwindSafe(|| {
                run(Source::new(source), format, &mut out)
            }));
            let ended = ran.unwrap_or_else(|panic| {
                let reason = io::Error::other(panic_message(&*panic));
                Err(Failure::Decompressing(reason))
            });
            // The bytes before a failure are handed on too; a reader gone wants none of them.
            out.flush();
            let _ = tell.send(ended);
            drop(out);
        })?;
    Ok(Decoding { ended })
}

/// A regular file's decoded bytes as the reader takes them: whole pieces from the decoder's
/// thread, each handed back to it, emptied, for the next.
#[derive(Debug)]
pub struct Pieces {
    full: Receiver<Vec<u8>>,
    empty: Sender<Vec<u8>>,
    /// The piece being read.
    piece: Vec<u8>,
    /// How much of it has been read.
    at: usize,
}

impl Pieces {
    /// Waits for decoded bytes unless some are here, and hands them to `take`, which returns how
    /// many it took: at least one, or the end is taken to have come. Returns that, or 0 at the
    /// end of the decoded bytes.
    pub fn read_with(&mut self, take: impl FnOnce(&[u8]) -> usize) -> usize {
        while self.at == self.piece.len() {
            // Handed back before the wait, so that the decoder never waits for the one piece
            // the reader holds. The channel has room for every piece; if the decoder has gone,
            // the piece is dropped.
            let read = std::mem::take(&mut self.piece);
            self.at = 0;
            if read.capacity() > 0 {
                let _ = self.empty.try_send(read);
            }
            let Ok(next) = self.full.recv() else {
                return 0;
            };
            self.piece = next;
        }
        let taken = take(&self.piece[self.at..]);
        self.at += taken;
        taken
    }

    /// Copies decoded bytes into `buf` (not empty), waiting for some unless some are here: how
    /// many, or 0 at the end.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        self.read_with(|bytes| {
            let n = bytes.len().min(buf.len());
            buf[..n].copy_from_slice(&bytes[..n]);
            n
        })
    }
}

/// Where the thread puts what it decodes.
trait Out: Send + 'static {
    /// Room to decode into, or `None` when the reader has gone.
    fn room(&mut self) -> Option<&mut [u8]>;

    /// The first `n` bytes of the room now hold decoded bytes: false when the reader has gone.
    fn filled(&mut self, n: usize) -> bool;

    /// Hands on what is held, at the end.
    fn flush(&mut self);
}

/// A stream's decoded bytes, written to the pipe as each piece comes, for live input.
struct PipeOut {
    pipe: File,
    buf: Vec<u8>,
}

impl Out for PipeOut {
    fn room(&mut self) -> Option<&mut [u8]> {
        Some(&mut self.buf)
    }

    fn filled(&mut self, n: usize) -> bool {
        // Our own blocking pipe: a failed write means its reader has gone, and nobody wants
        // the rest.
        Write::write_all(&mut &self.pipe, &self.buf[..n]).is_ok()
    }

    fn flush(&mut self) {}
}

/// A regular file's decoded bytes, handed on a whole piece at a time.
struct PiecesOut {
    full: Sender<Vec<u8>>,
    empty: Receiver<Vec<u8>>,
    /// Pieces made so far: at [`PIECES`], the next is one the reader handed back.
    made: usize,
    /// The piece being filled, [`PIECE`] bytes long, or empty when none is.
    piece: Vec<u8>,
    /// How much of it holds decoded bytes.
    held: usize,
}

impl PiecesOut {
    /// Hands on the piece being filled, cut to what it holds: false when the reader has gone.
    fn hand_on(&mut self) -> bool {
        let mut piece = std::mem::take(&mut self.piece);
        piece.truncate(std::mem::take(&mut self.held));
        self.full.send(piece).is_ok()
    }
}

impl Out for PiecesOut {
    fn room(&mut self) -> Option<&mut [u8]> {
        if self.piece.is_empty() {
            let mut piece = if self.made < PIECES {
                self.made += 1;
                Vec::new()
            } else {
                self.empty.recv().ok()?
            };
            // Zeroes only what was never written: a whole piece handed back needs none.
            piece.resize(PIECE, 0);
            self.piece = piece;
        }
        Some(&mut self.piece[self.held..])
    }

    fn filled(&mut self, n: usize) -> bool {
        self.held += n;
        self.held < PIECE || self.hand_on()
    }

    fn flush(&mut self) {
        if self.held > 0 {
            self.hand_on();
        }
    }
}

/// The source as the decoder reads it: signals and an inherited non-blocking mode waited out, and
/// a failed read kept, so that it is told as the source's failure rather than the decoder's.
#[derive(Debug)]
struct Source {
    file: File,
    failed: Option<io::Error>,
}

impl Source {
    fn new(file: File) -> Self {
        Source { file, failed: None }
    }
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        fd::read(&self.file, buf).map_err(|error| {
            let kind = error.kind();
            self.failed = Some(error);
            io::Error::from(kind)
        })
    }
}

/// The source with the bytes sniffing read put back in front.
type Sniffed = Chain<Cursor<Vec<u8>>, Source>;

/// The thread's body: sniffs unless `format` is known, then decodes or copies into `out`.
fn run(mut source: Source, format: Option<Format>, out: &mut impl Out) -> Result<(), Failure> {
    let mut start = Vec::new();
    let format = match format {
        Some(format) => format,
        None => loop {
            let mut more = [0; LONGEST_MAGIC];
            let read = source.read(&mut more[..LONGEST_MAGIC - start.len()]);
            let read = read.map_err(|_| reading(&mut source))?;
            start.extend_from_slice(&more[..read]);
            if let Some(format) = sniff(&start, read == 0) {
                break format;
            }
        },
    };
    let input = Cursor::new(start).chain(source);
    match format {
        Format::Gzip => {
            let decoder = MultiGzDecoder::new(BufReader::with_capacity(PIECE, input));
            pump(decoder, |decoder| decoder.get_mut().get_mut(), out)
        }
        Format::Zstd => {
            let buffered = BufReader::with_capacity(PIECE, input);
            let decoder = zstd::stream::read::Decoder::with_buffer(buffered)
                .map_err(Failure::Decompressing)?;
            pump(decoder, |decoder| decoder.get_mut().get_mut(), out)
        }
        Format::Plain => pump(input, |input| input, out),
    }
}

/// The failure of reading `source`, which its last read kept.
fn reading(source: &mut Source) -> Failure {
    Failure::Reading(
        source
            .failed
            .take()
            .unwrap_or_else(|| io::Error::other("read failed")),
    )
}

/// Reads `from` (a decoder, or the source itself) into `out`'s room until the end, a failure, or
/// `out`'s reader going away. `source` finds the source inside `from`, to tell its own failures
/// from the decoder's.
fn pump<R: Read>(
    mut from: R,
    source: impl Fn(&mut R) -> &mut Sniffed,
    out: &mut impl Out,
) -> Result<(), Failure> {
    loop {
        let Some(room) = out.room() else {
            return Ok(());
        };
        let read = match from.read(room) {
            Ok(0) => return Ok(()),
            Ok(read) => read,
            Err(error) => {
                let source = &mut source(&mut from).get_mut().1;
                return Err(match source.failed.is_some() {
                    true => reading(source),
                    false => Failure::Decompressing(error),
                });
            }
        };
        if !out.filled(read) {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::*;
    use crate::io::testing;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    fn zstd(bytes: &[u8]) -> Vec<u8> {
        zstd::encode_all(bytes, 3).unwrap()
    }

    /// A zstd skippable frame holding `bytes`, which a decoder skips.
    fn skippable(bytes: &[u8]) -> Vec<u8> {
        let mut frame = vec![0x50, 0x2a, 0x4d, 0x18];
        frame.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        frame.extend_from_slice(bytes);
        frame
    }

    /// `bytes` as a pipe's read end, written by a thread of its own.
    fn piped(bytes: Vec<u8>) -> File {
        let (reader, mut writer) = std::io::pipe().unwrap();
        thread::spawn(move || writer.write_all(&bytes));
        File::from(std::os::fd::OwnedFd::from(reader))
    }

    /// Everything `source` decodes to, and how decoding ended: through the pipe when `format`
    /// is `None`, in pieces when it is known.
    fn decoded(source: File, format: Option<Format>) -> (Vec<u8>, Result<(), Failure>) {
        let mut out = Vec::new();
        let decoding = match format {
            None => {
                let (mut pipe, decoding) = decode(source).unwrap();
                pipe.read_to_end(&mut out).unwrap();
                decoding
            }
            Some(format) => {
                let (mut pieces, decoding) = decode_file(source, format).unwrap();
                // Odd sizes, so that reads straddle pieces.
                let mut buf = [0; 100_003];
                loop {
                    match pieces.read(&mut buf) {
                        0 => break,
                        n => out.extend_from_slice(&buf[..n]),
                    }
                }
                decoding
            }
        };
        (out, decoding.finish())
    }

    /// [`decoded`] both ways, `bytes` being `format`: what came and how it ended, each way.
    fn decoded_both_ways(bytes: &[u8], format: Format) -> [(Vec<u8>, Result<(), Failure>); 2] {
        [None, Some(format)].map(|way| decoded(piped(bytes.to_vec()), way))
    }

    fn reason(ended: Result<(), Failure>) -> String {
        match ended {
            Err(Failure::Decompressing(reason)) => reason.to_string(),
            other => panic!("{other:?} instead of a decoding failure"),
        }
    }

    #[test]
    fn sniffing_decides_on_the_fewest_bytes() {
        assert_eq!(sniff(b"\x1f\x8b\x08", false), Some(Format::Gzip));
        assert_eq!(sniff(b"\x28\xb5\x2f\xfd", false), Some(Format::Zstd));
        assert_eq!(
            sniff(b"a", false),
            Some(Format::Plain),
            "no magic begins so"
        );
        assert_eq!(sniff(b"\x1f\x8c", false), Some(Format::Plain));
        for start in [&b""[..], b"\x1f", b"\x28", b"\x28\xb5", b"\x28\xb5\x2f"] {
            assert_eq!(sniff(start, false), None, "{start:?} may begin a magic");
            assert_eq!(
                sniff(start, true),
                Some(Format::Plain),
                "but the source ended"
            );
        }
    }

    #[test]
    fn a_file_is_sniffed_where_it_stands() {
        let path = std::env::temp_dir().join(format!("pipelines-sniff-{}", std::process::id()));
        std::fs::write(&path, gzip(b"x\n")).unwrap();
        let mut file = File::open(&path).unwrap();
        assert_eq!(sniff_file(&file).unwrap(), Format::Gzip);
        let mut all = Vec::new();
        file.read_to_end(&mut all).unwrap();
        assert_eq!(all, gzip(b"x\n"), "the offset did not move");
        std::fs::write(&path, b"\x1f").unwrap();
        assert_eq!(
            sniff_file(&File::open(&path).unwrap()).unwrap(),
            Format::Plain
        );
        std::fs::write(&path, [&b"plain\n"[..], &zstd(b"z\n")].concat()).unwrap();
        let mut file = File::open(&path).unwrap();
        assert_eq!(sniff_file(&file).unwrap(), Format::Plain);
        file.seek(io::SeekFrom::Start(6)).unwrap();
        assert_eq!(
            sniff_file(&file).unwrap(),
            Format::Zstd,
            "from the offset on"
        );
        assert_eq!(file.stream_position().unwrap(), 6, "which did not move");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn every_member_and_frame_is_decoded_and_plain_bytes_pass() {
        let members = [gzip(b"one\n"), gzip(b""), gzip(b"two\nthr")].concat();
        for (out, ended) in decoded_both_ways(&members, Format::Gzip) {
            assert_eq!(out, b"one\ntwo\nthr");
            assert!(ended.is_ok());
        }
        let frames = [zstd(b"one\n"), skippable(b"not text"), zstd(b"two\n")].concat();
        for (out, ended) in decoded_both_ways(&frames, Format::Zstd) {
            assert_eq!(out, b"one\ntwo\n");
            assert!(ended.is_ok());
        }
        // Many pieces, each handed back and filled again.
        let text: Vec<u8> = (0..2_000_000u32).flat_map(|n| n.to_le_bytes()).collect();
        for (out, ended) in decoded_both_ways(&zstd(&text), Format::Zstd) {
            assert!(out == text, "{} bytes of {}", out.len(), text.len());
            assert!(ended.is_ok());
        }
        for plain in [&b""[..], b"\x1f", b"\x28\xb5\x2f", b"plain\n", b"\x1f\x8c"] {
            let (out, ended) = decoded(piped(plain.to_vec()), None);
            assert_eq!(out, plain);
            assert!(ended.is_ok());
        }
    }

    #[test]
    fn a_known_format_is_not_sniffed_again() {
        let (out, ended) = decoded(piped(zstd(b"z\n")), Some(Format::Zstd));
        assert_eq!(out, b"z\n");
        assert!(ended.is_ok());
    }

    #[test]
    fn a_fault_ends_decoding_after_the_bytes_before_it() {
        let text: Vec<u8> = (0..200_000)
            .flat_map(|n| format!("line {n}\n").into_bytes())
            .collect();
        let whole = gzip(&text);
        for (out, ended) in decoded_both_ways(&whole[..whole.len() - 4], Format::Gzip) {
            assert!(text.starts_with(&out), "a prefix of the text");
            assert!(out.len() > text.len() / 2, "most of it: {}", out.len());
            assert!(matches!(ended, Err(Failure::Decompressing(_))));
        }
        let mut bad_checksum = whole.clone();
        let crc = bad_checksum.len() - 8;
        bad_checksum[crc] ^= 1;
        for (out, ended) in decoded_both_ways(&bad_checksum, Format::Gzip) {
            assert!(out == text, "every byte, then the checksum fails");
            assert!(reason(ended).contains("checksum"));
        }
        let garbage = [gzip(b"a\n"), b"garbage".to_vec()].concat();
        for (out, ended) in decoded_both_ways(&garbage, Format::Gzip) {
            assert_eq!(out, b"a\n");
            reason(ended);
        }
        let zstd_text = zstd(&text);
        for (out, ended) in decoded_both_ways(&zstd_text[..zstd_text.len() - 3], Format::Zstd) {
            assert!(text.starts_with(&out));
            assert!(out.len() > text.len() / 2, "most of it: {}", out.len());
            assert_eq!(reason(ended), "incomplete frame");
        }
        let mut encoder = zstd::Encoder::new(Vec::new(), 3).unwrap();
        encoder.include_checksum(true).unwrap();
        encoder.write_all(&text).unwrap();
        let mut bad_checksum = encoder.finish().unwrap();
        *bad_checksum.last_mut().unwrap() ^= 1;
        for (out, ended) in decoded_both_ways(&bad_checksum, Format::Zstd) {
            // libzstd checks as it decodes the frame's last piece, and gives none of that piece.
            assert!(text.starts_with(&out));
            assert!(reason(ended).contains("checksum"));
        }
    }

    #[test]
    fn a_reader_that_goes_ends_the_decoder() {
        let text = vec![b'x'; 64 * PIECE];
        for way in [None, Some(Format::Zstd)] {
            // The source stays open: a decoder that went on past its reader's going would wait
            // on it for ever, never telling how it ended.
            let (source, mut writer) = std::io::pipe().unwrap();
            let compressed = zstd(&text);
            let _feeding = thread::spawn(move || writer.write_all(&compressed).map(|()| writer));
            let source = File::from(std::os::fd::OwnedFd::from(source));
            let decoding = match way {
                None => decode(source).unwrap().1,
                Some(format) => {
                    let (mut pieces, decoding) = decode_file(source, format).unwrap();
                    assert_eq!(pieces.read(&mut [0; 10]), 10);
                    decoding
                }
            };
            // The pipe's reader or the pieces dropped: the thread tells how it ended, and ends.
            let told = decoding.ended.recv_timeout(testing::DEADLINE);
            assert!(matches!(told, Ok(Ok(()))), "{way:?}: {told:?}");
        }
    }

    #[test]
    fn a_failed_read_is_the_sources_failure() {
        for way in [None, Some(Format::Gzip)] {
            let dir = File::open(std::env::temp_dir()).unwrap();
            let (out, ended) = decoded(dir, way);
            assert!(out.is_empty());
            match ended {
                Err(Failure::Reading(error)) => assert_eq!(error.raw_os_error(), Some(21)),
                other => panic!("{other:?} instead of a read failure"),
            }
        }
    }

    /// Reads a line of `lines`, on a thread of its own so that a line held back fails the test
    /// instead of hanging it.
    fn next_line(lines: &mut std::sync::mpsc::Receiver<String>) -> Option<String> {
        lines.recv_timeout(std::time::Duration::from_secs(10)).ok()
    }

    /// The lines read from `pipe`, as they come.
    fn lines_of(pipe: File) -> std::sync::mpsc::Receiver<String> {
        let (send, lines) = std::sync::mpsc::channel();
        thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(pipe)) {
                if line.map(|line| send.send(line)).is_err() {
                    break;
                }
            }
        });
        lines
    }

    #[test]
    fn a_slowly_written_stream_comes_out_as_it_decodes() {
        let (reader, writer) = std::io::pipe().unwrap();
        let (pipe, _decoding) = decode(File::from(std::os::fd::OwnedFd::from(reader))).unwrap();
        let mut lines = lines_of(pipe);
        let mut gzip = GzEncoder::new(writer, Compression::default());
        let mut zstd = zstd::Encoder::new(Vec::new(), 3).unwrap();
        let mut flushed = vec![0];
        for line in ["first", "second"] {
            gzip.write_all(format!("{line}\n").as_bytes()).unwrap();
            // A sync flush: the stream so far decodes to the line, and the writer pauses.
            gzip.flush().unwrap();
            assert_eq!(
                next_line(&mut lines).as_deref(),
                Some(line),
                "gzip held it back"
            );
            zstd.write_all(format!("{line}\n").as_bytes()).unwrap();
            zstd.flush().unwrap();
            flushed.push(zstd.get_ref().len());
        }
        let (reader, mut writer) = std::io::pipe().unwrap();
        let (pipe, _decoding) = decode(File::from(std::os::fd::OwnedFd::from(reader))).unwrap();
        let mut lines = lines_of(pipe);
        // The zstd stream in parts, each ending where a flush ended a block holding a line.
        for (n, line) in ["first", "second"].into_iter().enumerate() {
            writer
                .write_all(&zstd.get_ref()[flushed[n]..flushed[n + 1]])
                .unwrap();
            assert_eq!(
                next_line(&mut lines).as_deref(),
                Some(line),
                "zstd held it back"
            );
        }
    }
}
