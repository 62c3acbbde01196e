//! One decoder for a whole source, of each format, reading it as a stream: what decodes a pipe,
//! a file of one frame or member, and whatever the walk of a file's parts leaves.

use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::num::NonZeroUsize;

use super::format::{Format, sniff_stream};
use super::gzip::GzipMembers;
use super::handoff::Out;
use super::pump::pump;
use super::source::{Sniffed, Undecoded};
use super::{Failure, slices};

/// The most memory liblzma may take for an xz stream: a 128 MiB dictionary, as zstd's window is
/// bounded (CONTRACT §10), and the decoder's own state beside it. `xz -9` uses 64 MiB.
const XZ_MEMORY_LIMIT: u64 = (128 + 1) << 20;

/// The thread's body: sniffs unless `format` is known, then decodes or copies into `out`, a bzip2
/// source's blocks on up to `threads` threads, and a regular file's xz blocks. A source sniffed
/// here is a stream, which may be live: its xz blocks have one decoder, as liblzma's threaded
/// decoder holds each block's bytes back until the block ends, where one decoder hands them on as
/// they come; a bzip2 block's bytes come at its end with any decoder.
pub(super) fn run(
    mut source: Undecoded,
    format: Option<Format>,
    threads: NonZeroUsize,
    out: &mut impl Out,
) -> Result<(), Failure> {
    let (format, start, xz_threads) = match format {
        Some(format) => (format, Vec::new(), threads),
        None => {
            let (format, start) = sniff_stream(&mut source)?;
            (format, start, NonZeroUsize::MIN)
        }
    };
    let most = source.most;
    let input = Cursor::new(start).chain(source);
    let buffered = |input| BufReader::with_capacity(most, input);
    let decompressing = |error: io::Error| Failure::Decompressing(error);
    match format {
        Format::Gzip => {
            let decoder = GzipMembers::all(buffered(input));
            pump(decoder, |decoder| decoder.get_mut().get_mut(), out)
        }
        Format::Zstd => {
            let decoder = zstd::stream::read::Decoder::with_buffer(buffered(input));
            let decoder = decoder.map_err(decompressing)?;
            pump(decoder, |decoder| decoder.get_mut().get_mut(), out)
        }
        Format::Xz => {
            let decoder = XzStreams::new(buffered(input), XzKind::xz(xz_threads));
            pump(
                decoder.map_err(decompressing)?,
                |decoder| decoder.input.get_mut(),
                out,
            )
        }
        Format::Lzma => {
            let decoder = XzStreams::new(buffered(input), XzKind::Lzma);
            pump(
                decoder.map_err(decompressing)?,
                |decoder| decoder.input.get_mut(),
                out,
            )
        }
        Format::Bzip2 if threads.get() > 1 => super::bzip2::decode(input, threads, out),
        Format::Bzip2 => {
            let decoder = bzip2::bufread::MultiBzDecoder::new(buffered(input));
            pump(decoder, |decoder| decoder.get_mut().get_mut(), out)
        }
        Format::Lz4 => pump(Lz4Frames::new(buffered(input)), Lz4Frames::source, out),
        Format::Lz4Legacy => pump(Lz4Legacy::new(buffered(input)), Lz4Legacy::source, out),
        Format::Compress => Err(decompressing(io::Error::new(
            io::ErrorKind::Unsupported,
            "compress's .Z data is not decoded here: pipe it through zcat",
        ))),
        Format::Plain => pump(input, |input| input, out),
    }
}

/// xz streams one after another, stream padding between them, read as liblzma's own `XzDecoder`
/// reads them but for two things: the bytes decoded by the call that finds a fault are handed on
/// before the fault is told, so that every byte of a stream comes out before the garbage after it;
/// and with more than one thread, each stream is decoded by liblzma's threaded decoder, which
/// decodes a stream's blocks at once where the encoder recorded their sizes (`xz -T2` does) and
/// ends at the stream's end (the crate sets no `CONCATENATED` for it), so the next stream is
/// begun here, past the padding. xz's legacy `.lzma` (LZMA-alone) is read here too: one stream,
/// with nothing after it, as `xz -dc` reads it.
struct XzStreams {
    stream: liblzma::stream::Stream,
    input: BufReader<Sniffed>,
    /// The fault found by a call that also decoded bytes, told at the next read.
    fault: Option<liblzma::stream::Error>,
    kind: XzKind,
    /// A stream has ended: the next, if any, is to be begun.
    between_streams: bool,
    /// The stream being decoded is not the first.
    later: bool,
}

/// What an [`XzStreams`] decodes, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum XzKind {
    /// xz streams, every one by one decoder.
    Streams,
    /// xz streams, one at a time, each by liblzma's decoder on up to this many threads.
    Threaded(u32),
    /// One LZMA-alone stream (`.lzma`).
    Lzma,
}

impl XzKind {
    /// xz streams on up to `threads` threads.
    fn xz(threads: NonZeroUsize) -> Self {
        match u32::try_from(threads.get()) {
            Ok(threads) if threads > 1 => XzKind::Threaded(threads),
            _ => XzKind::Streams,
        }
    }
}

impl XzStreams {
    fn new(input: BufReader<Sniffed>, kind: XzKind) -> io::Result<Self> {
        Ok(XzStreams {
            stream: Self::decoder(kind)?,
            input,
            fault: None,
            kind,
            between_streams: false,
            later: false,
        })
    }

    /// A decoder of every stream to the end, or, with threads, of one stream. Its memory is
    /// bounded as one decoder's is ([`XZ_MEMORY_LIMIT`]); within that bound liblzma starts as
    /// many of the threads as fit (its default bound for threads, 0, starts one). Its threads
    /// decode beside the reader, so the process's threads take the short slice first
    /// (CONTRACT §12.6), and liblzma's inherit it.
    fn decoder(kind: XzKind) -> io::Result<liblzma::stream::Stream> {
        use liblzma::stream::{CONCATENATED, MtStreamBuilder, Stream};
        let decoder = match kind {
            XzKind::Streams => Stream::new_stream_decoder(XZ_MEMORY_LIMIT, CONCATENATED),
            XzKind::Threaded(threads) => {
                slices::ask_short();
                MtStreamBuilder::new()
                    .threads(threads)
                    .memlimit_threading(XZ_MEMORY_LIMIT)
                    .memlimit_stop(XZ_MEMORY_LIMIT)
                    .decoder()
            }
            XzKind::Lzma => Stream::new_lzma_decoder(XZ_MEMORY_LIMIT),
        };
        Ok(decoder?)
    }

    /// Passes over the stream padding after a stream (zero bytes, four at a time) and begins the
    /// next stream's decoder: false at the input's end. After an LZMA-alone stream anything is
    /// corrupt data, as `xz -dc` says of it.
    fn next_stream(&mut self) -> io::Result<bool> {
        if self.kind == XzKind::Lzma {
            return match self.input.fill_buf()?.is_empty() {
                true => Ok(false),
                false => Err(liblzma::stream::Error::Data.into()),
            };
        }
        let mut padding = 0;
        let ended = loop {
            let input = self.input.fill_buf()?;
            let zeros = input.iter().take_while(|&&byte| byte == 0).count();
            let (ended, more) = (input.is_empty(), zeros < input.len());
            self.input.consume(zeros);
            padding += zeros;
            if ended || more {
                break ended;
            }
        };
        if padding % 4 != 0 {
            // What liblzma's own concatenated decoding says of it.
            return Err(liblzma::stream::Error::Data.into());
        }
        if !ended {
            self.stream = Self::decoder(self.kind)?;
            (self.between_streams, self.later) = (false, true);
        }
        Ok(!ended)
    }
}

impl Read for XzStreams {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use liblzma::stream::{Action, Status};
        if let Some(fault) = self.fault.take() {
            return Err(fault.into());
        }
        loop {
            if self.between_streams && !self.next_stream()? {
                return Ok(0);
            }
            let input = self.input.fill_buf()?;
            let ended = input.is_empty();
            let (read_before, decoded_before) = (self.stream.total_in(), self.stream.total_out());
            let action = if ended { Action::Finish } else { Action::Run };
            let status = self.stream.process(input, buf, action);
            let read = (self.stream.total_in() - read_before) as usize;
            let decoded = (self.stream.total_out() - decoded_before) as usize;
            self.input.consume(read);
            match status {
                // What does not begin a stream after a stream is, to liblzma's own
                // concatenated decoding, corrupt data.
                Err(liblzma::stream::Error::Format) if self.later => {
                    return Err(liblzma::stream::Error::Data.into());
                }
                Err(fault) if decoded > 0 => {
                    self.fault = Some(fault);
                    return Ok(decoded);
                }
                Err(fault) => return Err(fault.into()),
                Ok(Status::StreamEnd) if self.kind != XzKind::Streams => {
                    self.between_streams = true;
                    if decoded > 0 {
                        return Ok(decoded);
                    }
                }
                Ok(Status::StreamEnd) => return Ok(decoded),
                Ok(_) if decoded > 0 => return Ok(decoded),
                Ok(_) if ended => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "premature eof",
                    ));
                }
                // liblzma took input and made nothing of it yet.
                Ok(_) if read > 0 => {}
                Ok(_) => return Err(io::Error::from(io::ErrorKind::InvalidData)),
            }
        }
    }
}

/// LZ4 frames one after another, skippable frames skipped, as `lz4 -dc` reads them. lz4_flex's
/// `FrameDecoder` decodes frames but needs three things done around it: it stops with an error
/// at a skippable frame (skipped here), it takes the input's end at a frame's start for the end of
/// the frame before (so a frame starts only where input is left), and it ends a frame that the
/// input ends inside, between blocks, as if it were whole (so any end of input it meets fails).
struct Lz4Frames {
    decoder: lz4_flex::frame::FrameDecoder<EndSeen<BufReader<Sniffed>>>,
    /// The last frame ended whole (or none has begun): the next may start.
    between_frames: bool,
}

impl Lz4Frames {
    fn new(input: BufReader<Sniffed>) -> Self {
        let input = EndSeen { input, seen: false };
        Lz4Frames {
            decoder: lz4_flex::frame::FrameDecoder::new(input),
            between_frames: true,
        }
    }

    fn source(&mut self) -> &mut Sniffed {
        self.decoder.get_mut().input.get_mut()
    }

    fn input(&mut self) -> &mut BufReader<Sniffed> {
        &mut self.decoder.get_mut().input
    }
}

/// The end of a frame that the input ended inside.
pub(super) fn incomplete_frame() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "incomplete frame")
}

impl Read for Lz4Frames {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.between_frames {
                if self.input().fill_buf()?.is_empty() {
                    return Ok(0);
                }
                self.between_frames = false;
            }
            let error = match self.decoder.read(buf) {
                Ok(0) if self.decoder.get_ref().seen => return Err(incomplete_frame()),
                Ok(0) => {
                    self.between_frames = true;
                    continue;
                }
                Ok(read) => return Ok(read),
                // A block or a header cut short.
                Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => {
                    return Err(incomplete_frame());
                }
                Err(error) => error,
            };
            let skippable = error
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<lz4_flex::frame::Error>());
            let Some(&lz4_flex::frame::Error::SkippableFrame(length)) = skippable else {
                return Err(error);
            };
            let length = u64::from(length);
            if io::copy(&mut self.input().take(length), &mut io::sink())? < length {
                return Err(incomplete_frame());
            }
            self.between_frames = true;
        }
    }
}

/// A reader that notes when it has met the end of its input.
struct EndSeen<R> {
    input: R,
    seen: bool,
}

impl<R: Read> Read for EndSeen<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.input.read(buf)?;
        self.seen |= read == 0 && !buf.is_empty();
        Ok(read)
    }
}

/// LZ4's legacy frames (`lz4 -l`) one after another, read as `lz4 -dc` reads them: after the
/// magic, blocks of at most 8 MiB each, each its compressed size (4 bytes, little-endian) and
/// its bytes, compressed apart; a frame ends at the input's end or at the next magic. lz4_flex's
/// `FrameDecoder` reads a legacy frame too, but not exactly: it takes a cut size for the end, and
/// calls the next frame's magic a block too big, so only its block decoder is used.
///
/// The format has no end mark and no checksum: input cut between two blocks cannot be told from
/// whole input (CONTRACT §12.1), as `lz4 -dc` cannot tell it; cut anywhere else, it is a failure.
struct Lz4Legacy {
    input: BufReader<Sniffed>,
    /// The block read, compressed.
    block: Vec<u8>,
    /// The block decoded, and how much of it has been read.
    decoded: Vec<u8>,
    at: usize,
}

/// The most a legacy block decodes to.
const LEGACY_BLOCK: usize = 8 << 20;

/// The legacy magic, little-endian.
const LEGACY_MAGIC: u32 = 0x184c_2102;

impl Lz4Legacy {
    fn new(input: BufReader<Sniffed>) -> Self {
        Lz4Legacy {
            input,
            block: Vec::new(),
            decoded: Vec::new(),
            at: 0,
        }
    }

    fn source(&mut self) -> &mut Sniffed {
        self.input.get_mut()
    }

    /// Reads the next block's size, passing over a frame's magic: `None` at the input's end.
    fn next_size(&mut self) -> io::Result<Option<usize>> {
        loop {
            let mut word = [0; 4];
            if self.input.fill_buf()?.is_empty() {
                return Ok(None);
            }
            self.input
                .read_exact(&mut word)
                .map_err(|_| incomplete_frame())?;
            match u32::from_le_bytes(word) {
                LEGACY_MAGIC => {}
                size if size as usize <= lz4_flex::block::get_maximum_output_size(LEGACY_BLOCK) => {
                    return Ok(Some(size as usize));
                }
                // Another format's frame after the legacy ones: one source holds one format.
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "no LZ4 legacy block or frame",
                    ));
                }
            }
        }
    }
}

impl Read for Lz4Legacy {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // A block may decode to nothing: the next is read then.
        while self.at == self.decoded.len() {
            let Some(size) = self.next_size()? else {
                return Ok(0);
            };
            self.block.resize(size, 0);
            self.input
                .read_exact(&mut self.block)
                .map_err(|_| incomplete_frame())?;
            self.decoded.resize(LEGACY_BLOCK, 0);
            let decoded = lz4_flex::block::decompress_into(&self.block, &mut self.decoded);
            let decoded =
                decoded.map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))?;
            self.decoded.truncate(decoded);
            self.at = 0;
        }
        let n = buf.len().min(self.decoded.len() - self.at);
        buf[..n].copy_from_slice(&self.decoded[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::super::tests::{bzip2, file_of, lz4, text, xz, zstd};
    use super::*;
    use crate::io::testing::gzip;

    /// Decoded bytes gathered whole, in rooms of an odd size so that reads straddle blocks.
    struct Gathered {
        room: Vec<u8>,
        out: Vec<u8>,
    }

    impl Out for Gathered {
        fn room(&mut self) -> Option<&mut [u8]> {
            Some(&mut self.room)
        }

        fn filled(&mut self, n: usize) -> bool {
            self.out.extend_from_slice(&self.room[..n]);
            true
        }

        fn flush(&mut self) {}
    }

    /// What [`run`] makes of a regular file of `bytes`, sniffed here: the bytes and the end.
    fn ran(bytes: &[u8], threads: usize) -> (Vec<u8>, Result<(), Failure>) {
        let mut out = Gathered {
            room: vec![0; 10_007],
            out: Vec::new(),
        };
        let threads = NonZeroUsize::new(threads).unwrap();
        let ended = run(Undecoded::new(file_of(bytes)), None, threads, &mut out);
        (out.out, ended)
    }

    /// `bytes` as a sniffed source, read through a buffer as each adapter reads it.
    fn input(bytes: &[u8]) -> BufReader<Sniffed> {
        let sniffed = Cursor::new(Vec::new()).chain(Undecoded::new(file_of(bytes)));
        BufReader::with_capacity(1000, sniffed)
    }

    /// Everything `reader` reads, and the failure it ends with, if any, as words.
    fn read_all(mut reader: impl Read) -> (Vec<u8>, Option<String>) {
        let mut out = Vec::new();
        let ended = reader.read_to_end(&mut out).err();
        (out, ended.map(|error| error.to_string()))
    }

    /// `bytes` as xz's legacy `.lzma`, made by liblzma as `xz --format=lzma` makes it.
    fn lzma(bytes: &[u8]) -> Vec<u8> {
        let options = liblzma::stream::LzmaOptions::new_preset(6).unwrap();
        let stream = liblzma::stream::Stream::new_lzma_encoder(&options).unwrap();
        let mut encoder = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// `bytes` as one LZ4 legacy frame, as `lz4 -l` writes it: the magic, then each block of
    /// `block` bytes compressed apart, after its compressed size.
    fn lz4_legacy(bytes: &[u8], block: usize) -> Vec<u8> {
        let mut frame = LEGACY_MAGIC.to_le_bytes().to_vec();
        for chunk in bytes.chunks(block) {
            let compressed = lz4_flex::block::compress(chunk);
            frame.extend_from_slice(&(compressed.len() as u32).to_le_bytes());
            frame.extend_from_slice(&compressed);
        }
        frame
    }

    /// Each format, told by its first bytes, goes to its own decoder; compress's `.Z` is refused.
    #[test]
    fn each_format_goes_to_its_decoder() {
        let text = text(0..20_000);
        let encoded = [
            gzip(&text),
            zstd(&text),
            xz(&text),
            lzma(&text),
            bzip2(&text),
            lz4(&text),
            lz4_legacy(&text, 100_000),
            text.clone(),
        ];
        for (n, bytes) in encoded.iter().enumerate() {
            for threads in [1, 2] {
                let (out, ended) = ran(bytes, threads);
                assert!(ended.is_ok(), "format {n} on {threads}: {ended:?}");
                assert!(out == text, "format {n} on {threads}: {} bytes", out.len());
            }
        }
        let (out, ended) = ran(b"\x1f\x9d\x90rest", 1);
        let Err(Failure::Decompressing(error)) = ended else {
            panic!("{ended:?}");
        };
        assert_eq!((out.len(), error.kind()), (0, io::ErrorKind::Unsupported));
    }

    /// xz streams follow one another with padding in fours between, on one decoder and on
    /// liblzma's threaded one; padding not in fours, or what is not a stream after one, is
    /// corrupt data, as `xz -dc` says.
    #[test]
    fn xz_streams_follow_one_another_past_padding() {
        let (first, second) = (text(0..5000), text(5000..6000));
        let streams = |padding: usize| [xz(&first), vec![0; padding], xz(&second)].concat();
        let corrupt = Some(io::Error::from(liblzma::stream::Error::Data).to_string());
        for kind in [XzKind::Streams, XzKind::Threaded(2)] {
            for padding in [0, 4, 12] {
                let decoder = XzStreams::new(input(&streams(padding)), kind).unwrap();
                let (out, ended) = read_all(decoder);
                assert_eq!(ended, None, "{kind:?}, {padding} bytes of padding");
                assert!(out == [&first[..], &second].concat(), "{kind:?}, {padding}");
            }
            for after in [
                streams(3),
                [xz(&first), b"garbage after the stream".to_vec()].concat(),
            ] {
                let (out, ended) = read_all(XzStreams::new(input(&after), kind).unwrap());
                assert_eq!(ended, corrupt, "{kind:?}");
                assert!(out == first, "{kind:?}: {} bytes", out.len());
            }
        }
    }

    /// The number of threads picks liblzma's decoder: one is the plain decoder.
    #[test]
    fn one_thread_decodes_xz_without_liblzmas_threads() {
        let kinds = [1, 2, 5].map(|threads| XzKind::xz(NonZeroUsize::new(threads).unwrap()));
        assert_eq!(
            kinds,
            [XzKind::Streams, XzKind::Threaded(2), XzKind::Threaded(5)]
        );
    }

    /// A `.lzma` stream is one stream: its bytes come out, and anything after them is corrupt
    /// data, as `xz -dc` says; cut short, it is a failure after the bytes before the cut.
    #[test]
    fn an_lzma_stream_ends_the_input() {
        let text = text(0..5000);
        let whole = lzma(&text);
        let (out, ended) = read_all(XzStreams::new(input(&whole), XzKind::Lzma).unwrap());
        assert!(out == text && ended.is_none(), "{ended:?}");
        let corrupt = io::Error::from(liblzma::stream::Error::Data).to_string();
        for after in [&b"x"[..], &[0; 4], &whole] {
            let bytes = [&whole[..], after].concat();
            let (out, ended) = read_all(XzStreams::new(input(&bytes), XzKind::Lzma).unwrap());
            assert!(out == text, "{} bytes", out.len());
            assert_eq!(ended.as_deref(), Some(&corrupt[..]));
        }
        let cut = &whole[..whole.len() - 10];
        let (out, ended) = read_all(XzStreams::new(input(cut), XzKind::Lzma).unwrap());
        assert!(ended.is_some() && text.starts_with(&out) && out.len() < text.len());
    }

    /// LZ4 frames follow one another with skippable frames among them; input that ends inside
    /// a frame, between its blocks or inside a skippable frame, is an incomplete frame.
    #[test]
    fn lz4_frames_pass_skippable_frames_and_tell_a_cut_frame() {
        let (first, second) = (text(0..5000), text(5000..10_000));
        let skippable = |bytes: &[u8]| {
            let mut frame = vec![0x5a, 0x2a, 0x4d, 0x18];
            frame.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            frame.extend_from_slice(bytes);
            frame
        };
        let frames = [
            skippable(b"first"),
            lz4(&first),
            skippable(&[7; 3000]),
            lz4(&second),
        ]
        .concat();
        let (out, ended) = read_all(Lz4Frames::new(input(&frames)));
        assert!(
            out == [&first[..], &second].concat() && ended.is_none(),
            "{ended:?}"
        );
        // Its end mark gone, the last frame ends between blocks (64 KiB each).
        let between_blocks = &frames[..frames.len() - 4];
        let in_skippable = &frames[..skippable(b"first").len() - 2];
        for cut in [between_blocks, in_skippable] {
            let (out, ended) = read_all(Lz4Frames::new(input(cut)));
            assert_eq!(ended.as_deref(), Some("incomplete frame"));
            assert!(out.len() <= first.len() + second.len());
        }
        assert_eq!(read_all(Lz4Frames::new(input(b""))), (Vec::new(), None));
    }

    /// Legacy frames follow one another, each block decoded apart; a block or a size cut short
    /// is an incomplete frame, and what is neither a block nor a frame after them is refused.
    /// A cut between blocks cannot be told from the end (CONTRACT §12.1).
    #[test]
    fn lz4_legacy_frames_follow_one_another_block_by_block() {
        let (first, second) = (text(0..10_000), text(10_000..12_000));
        let one = lz4_legacy(&first, 100_000);
        let frames = [&one[..], &lz4_legacy(&second, 30_000)].concat();
        let (out, ended) = read_all(Lz4Legacy::new(input(&frames)));
        assert!(
            out == [&first[..], &second].concat() && ended.is_none(),
            "{ended:?}"
        );
        // A block that decodes to nothing, then the next.
        let empty = lz4_flex::block::compress(b"");
        let empty = [&(empty.len() as u32).to_le_bytes()[..], &empty].concat();
        let with_empty = [&one[..], &empty, &lz4_legacy(&second, 30_000)[4..]].concat();
        let (out, ended) = read_all(Lz4Legacy::new(input(&with_empty)));
        assert!(
            out == [&first[..], &second].concat() && ended.is_none(),
            "{ended:?}"
        );
        for cut in [&one[..one.len() - 1], &one[..one.len() - 3]] {
            let (_, ended) = read_all(Lz4Legacy::new(input(cut)));
            assert_eq!(ended.as_deref(), Some("incomplete frame"));
        }
        let other = [&one[..], &lz4(&second)].concat();
        let (out, ended) = read_all(Lz4Legacy::new(input(&other)));
        assert_eq!(ended.as_deref(), Some("no LZ4 legacy block or frame"));
        assert!(out == first, "{} bytes", out.len());
    }
}
