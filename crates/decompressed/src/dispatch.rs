//! Which decoding a source takes once its format is known: a stream's BGZF members and bzip2
//! blocks on several decoders (`members.rs`, `bzip2.rs`), anything else the format's one decoder
//! (`streams.rs`; xz's blocks on liblzma's threads).

use std::io::{Cursor, Read};
use std::num::NonZeroUsize;

use super::Failure;
use super::format::{Format, sniff_stream};
use super::handoff::Out;
use super::source::Undecoded;
use super::streams::one_decoder;

/// The thread's body: sniffs unless `format` is known, then decodes or copies into `out`, a bzip2
/// source's blocks, an xz stream's and BGZF members on up to `threads` threads. A source sniffed
/// here is a stream, which may be live: liblzma's threaded decoder hands on the block its input
/// stops in as far as it has decoded it (`streams.rs`'s `XzStreams` asks it before waiting for
/// more input), a bzip2 block's bytes come at its end with any decoder, and a run of BGZF members
/// goes to a decoder before the stream is waited for (`members.rs`).
pub(super) fn run(
    mut source: Undecoded,
    format: Option<Format>,
    threads: NonZeroUsize,
    out: &mut impl Out,
) -> Result<(), Failure> {
    let (format, start) = match format {
        Some(format) => (format, Vec::new()),
        None => sniff_stream(&mut source)?,
    };
    let input = Cursor::new(start).chain(source);
    match format {
        Format::Gzip if threads.get() > 1 => super::members::decode(input, threads, out),
        Format::Bzip2 if threads.get() > 1 => super::bzip2::decode(input, threads, out),
        format => one_decoder(format, threads, input, out),
    }
}
