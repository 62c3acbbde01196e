//! One decoder for a whole source, of each format, reading it as a stream: what decodes a pipe
//! on one thread, a file of one frame or member, and whatever the walk of a file's parts or a
//! stream's decoders on several threads leave.

use std::io::{self, BufRead, BufReader, Read};
use std::num::NonZeroUsize;

use super::Failure;
use super::format::Format;
use super::gzip::GzipMembers;
use super::handoff::Out;
use super::lz4::{Lz4Frames, Lz4Legacy};
use super::pump::{Pulled, pump};
use super::source::{Sniffed, sniffed_left};
use super::spares::SpareBuffers;

/// The most memory liblzma may take for an xz stream: a 128 MiB dictionary, as zstd's window is
/// bounded (CONTRACT §10), and the decoder's own state beside it. `xz -9` uses 64 MiB.
const XZ_MEMORY_LIMIT: u64 = (128 + 1) << 20;

/// Decodes `input`, `format` from its start, with the format's one decoder (xz's on up to
/// `threads` of liblzma's): a whole source, or what a decoding of its parts on several threads
/// leaves to one decoder (the bytes it holds put first,
/// [`held_first`](super::source::held_first)).
pub(super) fn one_decoder(
    format: Format,
    threads: NonZeroUsize,
    input: Sniffed,
    out: &mut impl Out,
) -> Result<(), Failure> {
    pump(decoder_of(format, threads, input, out.spares())?, out)
}

/// The format's one decoder of `input` (xz's on up to `threads` of liblzma's), its decoded bytes
/// as [`Pulled`] reads give them; gzip's takes its state from `spares` where given.
pub(super) fn decoder_of(
    format: Format,
    threads: NonZeroUsize,
    input: Sniffed,
    spares: Option<&SpareBuffers>,
) -> Result<Pulled, Failure> {
    let most = input.get_ref().1.most;
    let buffered = |input| BufReader::with_capacity(most, input);
    let decompressing = |error: io::Error| Failure::Decompressing(error);
    Ok(match format {
        Format::Gzip => Pulled::new(GzipMembers::all(buffered(input), spares), |decoder| {
            decoder.get_mut().get_mut()
        }),
        Format::Zstd => {
            let decoder = zstd::stream::read::Decoder::with_buffer(buffered(input));
            Pulled::new(decoder.map_err(decompressing)?, |decoder| {
                decoder.get_mut().get_mut()
            })
        }
        Format::Xz | Format::Lzma => {
            let kind = match format {
                Format::Xz => XzKind::xz(threads),
                _ => XzKind::Lzma,
            };
            let decoder = XzStreams::new(buffered(input), kind).map_err(decompressing)?;
            Pulled::new(decoder, |decoder| decoder.input.get_mut())
        }
        Format::Bzip2 => Pulled::new(
            bzip2::bufread::MultiBzDecoder::new(buffered(input)),
            |decoder| decoder.get_mut().get_mut(),
        ),
        Format::Lz4 => Pulled::new(Lz4Frames::new(buffered(input)), Lz4Frames::source),
        Format::Lz4Legacy => Pulled::new(Lz4Legacy::new(buffered(input)), Lz4Legacy::source),
        Format::Compress => {
            return Err(decompressing(io::Error::new(
                io::ErrorKind::Unsupported,
                "compress's .Z data is not decoded here: pipe it through zcat",
            )));
        }
        Format::Plain => Pulled::new(input, |input| input),
    })
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
    /// liblzma has handed on all it can of the input it was given: reading may wait for the
    /// source. Its threads decode apart from the calls that give them input, so after a call that
    /// gave input or took output they may hold decoded bytes that a wait for a live stream's next
    /// bytes would hold back.
    drained: bool,
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
            drained: true,
        })
    }

    /// A decoder of every stream to the end, or, with threads, of one stream. Its memory is
    /// bounded as one decoder's is ([`XZ_MEMORY_LIMIT`]); within that bound liblzma starts as
    /// many of the threads as fit (its default bound for threads, 0, starts one).
    fn decoder(kind: XzKind) -> io::Result<liblzma::stream::Stream> {
        use liblzma::stream::{CONCATENATED, MtStreamBuilder, Stream};
        let decoder = match kind {
            XzKind::Streams => Stream::new_stream_decoder(XZ_MEMORY_LIMIT, CONCATENATED),
            XzKind::Threaded(threads) => MtStreamBuilder::new()
                .threads(threads)
                .memlimit_threading(XZ_MEMORY_LIMIT)
                .memlimit_stop(XZ_MEMORY_LIMIT)
                .decoder(),
            XzKind::Lzma => Stream::new_lzma_decoder(XZ_MEMORY_LIMIT),
        };
        Ok(decoder?)
    }

    /// Whether reading more input now would wait for the source's writer.
    fn input_would_wait(&self) -> bool {
        let input = self.input.get_ref();
        self.input.buffer().is_empty() && !sniffed_left(input) && !input.get_ref().1.is_ready()
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
            (self.between_streams, self.later, self.drained) = (false, true, true);
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
            // Before waiting for a stream's input, what the threads have decoded of the input they
            // hold: a call with none waits for them until they have no more (liblzma allows one
            // such call without progress; the next has input, or is the last, as a source at its
            // end never waits). Only then: a call that waits for the threads also keeps this one
            // from reading ahead for them.
            let asking = matches!(self.kind, XzKind::Threaded(_))
                && !self.drained
                && self.input_would_wait();
            let input = match asking {
                true => &[][..],
                false => self.input.fill_buf()?,
            };
            let ended = !asking && input.is_empty();
            let (read_before, decoded_before) = (self.stream.total_in(), self.stream.total_out());
            let action = if ended { Action::Finish } else { Action::Run };
            let status = self.stream.process(input, buf, action);
            let read = (self.stream.total_in() - read_before) as usize;
            let decoded = (self.stream.total_out() - decoded_before) as usize;
            self.input.consume(read);
            self.drained = asking && decoded == 0;
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
                // liblzma took input and made nothing of it yet, or its threads had nothing.
                Ok(_) if read > 0 || asking => {}
                Ok(_) => return Err(io::Error::from(io::ErrorKind::InvalidData)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Write};

    use super::super::dispatch::run;
    use super::super::source::Undecoded;
    use super::super::tests::{bzip2, file_of, input, lz4, lz4_legacy, read_all, text, xz, zstd};
    use super::*;
    use pipelines_testing::{IN_MEMORY, gzip, within, within_for};

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

    /// What [`run`] makes of a regular file of `bytes`, sniffed here, under the deadline: the
    /// bytes and the end.
    fn ran(bytes: &[u8], threads: usize) -> (Vec<u8>, Result<(), Failure>) {
        let (source, threads) = (file_of(bytes), NonZeroUsize::new(threads).unwrap());
        within("running a decoder", move || {
            let mut out = Gathered {
                room: vec![0; 10_007],
                out: Vec::new(),
            };
            let ended = run(Undecoded::new(source), None, threads, &mut out);
            (out.out, ended)
        })
    }

    /// `bytes` as xz's legacy `.lzma`, made by liblzma as `xz --format=lzma` makes it.
    fn lzma(bytes: &[u8]) -> Vec<u8> {
        let options = liblzma::stream::LzmaOptions::new_preset(6).unwrap();
        let stream = liblzma::stream::Stream::new_lzma_encoder(&options).unwrap();
        let mut encoder = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
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
            // 2000 bytes of padding fill whole reads of `input`'s 1000-byte buffer.
            for padding in [0, 4, 12, 2000] {
                let decoder = XzStreams::new(input(&streams(padding)), kind).unwrap();
                let (out, ended) = read_all(decoder);
                assert_eq!(ended, None, "{kind:?}, {padding} bytes of padding");
                assert!(out == [&first[..], &second].concat(), "{kind:?}, {padding}");
                let last = [xz(&first), vec![0; padding]].concat();
                let (out, ended) = read_all(XzStreams::new(input(&last), kind).unwrap());
                assert_eq!(
                    ended, None,
                    "{kind:?}, {padding} bytes of padding at the end"
                );
                assert!(out == first, "{kind:?}, {padding} at the end");
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

    /// What does not begin with a stream is told as liblzma tells it, not as corrupt data, which
    /// is what follows a stream; a read into no room ends at once instead of asking liblzma
    /// for ever.
    #[test]
    fn not_xz_and_no_room_are_told_not_waited_on() {
        let format = Some(io::Error::from(liblzma::stream::Error::Format).to_string());
        let stream = xz(&text(0..5000));
        for kind in [XzKind::Streams, XzKind::Threaded(2)] {
            let not_xz = XzStreams::new(input(b"plain text, not xz at all"), kind).unwrap();
            assert_eq!(read_all(not_xz), (Vec::new(), format.clone()), "{kind:?}");
            let read = within_for(IN_MEMORY, "reading into no room", {
                let stream = stream.clone();
                move || {
                    let mut decoder = XzStreams::new(input(&stream), kind).unwrap();
                    decoder.read(&mut []).map_err(|error| error.kind())
                }
            });
            assert!(
                matches!(read, Ok(0) | Err(io::ErrorKind::InvalidData)),
                "{read:?}"
            );
        }
    }

    /// Only a stream with nothing to read yet makes the reader ask liblzma's threads first: not a
    /// regular file, nor a stream whose bytes have come, nor bytes the sniffing or the read buffer
    /// still hold (asked there, the reader would wait for the threads instead of feeding them).
    #[test]
    fn only_a_read_that_would_wait_for_the_writer_asks_the_threads_first() {
        use std::fs::File;
        let waits = |sniffed: &[u8], source: File, buffered: bool| {
            let input = Cursor::new(sniffed.to_vec()).chain(Undecoded::new(source));
            let mut decoder = XzStreams::new(BufReader::new(input), XzKind::Threaded(2)).unwrap();
            if buffered {
                decoder.input.fill_buf().unwrap();
            }
            decoder.input_would_wait()
        };
        let stream = || {
            let (reader, writer) = io::pipe().unwrap();
            (File::from(std::os::fd::OwnedFd::from(reader)), writer)
        };
        assert!(!waits(b"", file_of(b"xz"), false), "a regular file");
        let (idle, _writer) = stream();
        assert!(waits(b"", idle, false), "a stream with nothing written");
        let (idle, _writer) = stream();
        assert!(!waits(b"\xfd7z", idle, false), "sniffed bytes not yet read");
        let (written, mut writer) = stream();
        writer.write_all(b"xz").unwrap();
        assert!(!waits(b"", written, false), "a stream with bytes written");
        let (written, mut writer) = stream();
        writer.write_all(b"xz").unwrap();
        assert!(!waits(b"", written, true), "bytes in the read buffer");
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
}
