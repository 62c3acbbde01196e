//! bzip2 on every core: a source's blocks found by their magic and decoded apart, in order.
//!
//! A bzip2 stream is a header (`BZh` and the block size's digit), blocks, and an end. Each block
//! begins with the 48-bit magic `0x314159265359` and its CRC, the end with `0x177245385090` and
//! the stream's CRC, which folds the blocks' CRCs in order; neither is aligned to a byte, and no
//! block refers to another. So a scanner finds the blocks by their magic at any bit, and each is
//! decoded by libbz2 (through the `bzip2` crate, as one decoder decodes a whole source) as a stream
//! of its own: the header, the block's bits, an end and the CRC that one block makes. The block's
//! bits are copied, not shifted: a small block before it ([`Filler`], decoded and dropped) puts
//! its first bit where it lay in its byte. libbz2 checks each block's CRC; the stream's is folded
//! here (`Collector`). `lbzip2` decodes any bzip2 file on every core the same way.
//!
//! A magic can turn up inside a block's compressed bits by chance (once in about 40 million
//! blocks): the block before it then fails to decode, and is decoded again joined with the next
//! candidate (CONTRACT §12.1), so that such a magic never costs a byte. Whatever else fails is told
//! as one decoder tells it: the block that fails is decoded again, its bits followed by the bits
//! after it, and its bytes and its words are libbz2's (CONTRACT §12.3). Anything after a stream's
//! end that is not the next stream's header and first block goes, with the rest of the source, to
//! the one decoder, which says what it says of it.
//!
//! The scanner reads the source and sends each block, as soon as the magic after it is read (live
//! input, CONTRACT §12.2), to the decoders and to the collector, which hands decoded blocks on in
//! order. A block's decoded bytes are held whole until its CRC is checked, as a magic inside it
//! may have cut it: at most `threads + 3` blocks decoding or decoded ([`AHEAD`]), each at most
//! about 46 MB (900 kB of runs of 255 bytes), about 1 MB of text (CONTRACT §12.4).

use std::io::{self, Read};
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::thread;

use crossbeam_channel::{Receiver, Sender, bounded, unbounded};

use super::format::Format;
use super::handoff::Out;
use super::source::{Sniffed, held_first, reading};
use super::streams::one_decoder;
use super::{BUFFER, Failure, ONE};

/// A block's magic, π's digits.
pub(super) const BLOCK: u64 = 0x3141_5926_5359;

/// A stream's end's magic, √π's digits.
pub(super) const END: u64 = 0x1772_4538_5090;

/// Bits in a magic.
const MAGIC_BITS: u64 = 48;

/// Bits of a stream's end: its magic and the stream's CRC.
const END_BITS: u64 = MAGIC_BITS + 32;

/// A stream's header: `BZh`, the digit, then a block's magic.
const HEADER: usize = 4 + MAGIC_BITS as usize / 8;

/// A stream's first bytes, `BZh`, the `level` digit (its blocks' size in 100 kB), and `magic`
/// (a block's, or an empty stream's end's).
pub(super) const fn stream_start(level: u8, magic: u64) -> [u8; HEADER] {
    let magic = magic.to_be_bytes();
    let mut start = [b'B', b'Z', b'h', level, 0, 0, 0, 0, 0, 0];
    let mut at = 0;
    while at < 6 {
        start[4 + at] = magic[2 + at];
        at += 1;
    }
    start
}

/// Whether `bytes` begin as a stream of blocks does: `BZh`, a digit from 1 to 9, a block's magic.
/// An empty stream, its end's magic at once, is left to the one decoder.
fn begins_stream(bytes: &[u8]) -> bool {
    let level = bytes
        .get(3)
        .copied()
        .filter(|level| (b'1'..=b'9').contains(level));
    level.is_some_and(|level| bytes.starts_with(&stream_start(level, BLOCK)))
}

/// The most compressed bytes a block can take (900 kB of symbols, each at most 20 bits, with the
/// tables before them), with room to spare: bits that run on past this without a magic are no
/// block, and are decoded as the block they follow, which fails.
const MOST_COMPRESSED: usize = 4 << 20;

/// Which magic a scan found.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Magic {
    Block,
    End,
}

/// Whether 12 bits can begin the 4 bytes a magic holds whole after the byte it begins in: a magic
/// that begins `shift` bits into a byte holds the next 4 bytes as `magic >> (8 + shift)`, one of
/// 16 words (2 magics, 8 shifts). A scan reads one word a byte and looks closer at one in 256.
const MAY_LEAD: [bool; 4096] = {
    let mut may = [false; 4096];
    let mut shift = 0;
    while shift < 8 {
        may[((BLOCK >> (8 + shift)) >> 20) as usize & 0xfff] = true;
        may[((END >> (8 + shift)) >> 20) as usize & 0xfff] = true;
        shift += 1;
    }
    may
};

/// The first magic beginning at bit `from` of `bytes` or after, and lying whole in them.
fn find_magic(bytes: &[u8], from: u64) -> Option<(u64, Magic)> {
    let end = bytes.len() as u64 * 8;
    let first = usize::try_from(from / 8).ok()?;
    // A magic that begins in byte `at` holds bytes `at + 1..at + 5` whole and ends in the sixth.
    let leads = bytes.get(first..)?.windows(6);
    for (at, window) in (first..).zip(leads) {
        let lead = u32::from_be_bytes([window[1], window[2], window[3], window[4]]);
        // Indexed by 12 bits: never out of the table's bounds.
        if !MAY_LEAD[(lead >> 20) as usize] {
            continue;
        }
        let begins = (0..8).map(|shift| at as u64 * 8 + shift);
        for begins in begins.filter(|&begins| begins >= from && begins + MAGIC_BITS <= end) {
            match bits(bytes, begins, MAGIC_BITS as u32) {
                BLOCK => return Some((begins, Magic::Block)),
                END => return Some((begins, Magic::End)),
                _ => {}
            }
        }
    }
    None
}

/// The `count` (at most 57) bits of `bytes` from bit `at`, zeroes past their end.
fn bits(bytes: &[u8], at: u64, count: u32) -> u64 {
    let first = (at / 8) as usize;
    let mut word = [0u8; 8];
    let available = bytes.len().saturating_sub(first).min(8);
    word[..available].copy_from_slice(&bytes[first..first + available]);
    (u64::from_be_bytes(word) << (at % 8)) >> (64 - count)
}

/// Bits written one after another into bytes, the first in a byte's highest bit.
#[derive(Debug, Default)]
struct Writer {
    bytes: Vec<u8>,
    /// The bits written past the last whole byte, in its lowest `held` bits.
    pending: u64,
    held: u32,
}

impl Writer {
    /// Writes the lowest `count` (at most 56) bits of `value`.
    fn put(&mut self, value: u64, count: u32) {
        self.pending = self.pending << count | (value & ((1 << count) - 1));
        self.held += count;
        while self.held >= 8 {
            self.held -= 8;
            self.bytes.push((self.pending >> self.held) as u8);
        }
        self.pending &= (1 << self.held) - 1;
    }

    /// Writes bits `from` to `to` of `source`: where the writer holds as many bits past a whole
    /// byte as `from` lies past one, every byte between is copied as it is.
    fn copy(&mut self, source: &[u8], mut from: u64, to: u64) {
        let (first, last) = ((from / 8) as usize, (to / 8) as usize);
        if u64::from(self.held) != from % 8 || first == last {
            // Bit by bit, 32 at a time: only where no filler aligns them.
            while from < to {
                let count = (to - from).min(32) as u32;
                self.put(bits(source, from, count), count);
                from += u64::from(count);
            }
            return;
        }
        self.put(u64::from(source[first]), 8 - self.held);
        self.bytes.extend_from_slice(&source[first + 1..last]);
        let tail = (to % 8) as u32;
        if tail > 0 {
            self.put(u64::from(source[last] >> (8 - tail)), tail);
        }
    }

    /// The bytes written, the last padded with zeroes.
    fn finish(mut self) -> Vec<u8> {
        if self.held > 0 {
            self.put(0, 8 - self.held);
        }
        self.bytes
    }
}

/// A block of a few bytes, put before a block decoded apart so that the block's first bit lies
/// where it lay in its byte: its bits (from its magic), their count, its CRC and how many bytes it
/// decodes to.
#[derive(Debug)]
struct Filler {
    bits: &'static [u8],
    len: u64,
    crc: u32,
    decoded: usize,
}

/// A filler for each count of bits past a byte (none for 0): the blocks libbz2 makes at level 1 of
/// the bytes `0, 1, ..., n - 1` for the first `n` that gives each count, which all come by 18
/// bytes. Made once here, not at each run: compressing the 18 texts cost 19 M instructions, 2 % of
/// an 8 MiB file's decoding (`a_filler_for_every_alignment` checks each).
const FILLERS: [Option<Filler>; 8] = [
    None,
    Some(Filler {
        bits: &[
            0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0x92, 0x90, 0xbb, 0xfc, 0x00, 0x00, 0x00, 0x40,
            0x00, 0x7f, 0xe0, 0x20, 0x00, 0x22, 0x01, 0xa6, 0x98, 0x40, 0x0c, 0x15, 0x5e, 0x68,
            0xe3, 0xe9, 0x8b,
        ],
        len: 241,
        crc: 0x9290bbfc,
        decoded: 10,
    }),
    Some(Filler {
        bits: &[
            0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0xb5, 0x35, 0x23, 0xed, 0x00, 0x00, 0x00, 0x40,
            0x00, 0x7f, 0x80, 0x20, 0x00, 0x31, 0x0c, 0x08, 0x19, 0x1a, 0x69, 0x93, 0x35, 0x73,
            0xf9, 0x45,
        ],
        len: 234,
        crc: 0xb53523ed,
        decoded: 8,
    }),
    Some(Filler {
        bits: &[
            0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0xb1, 0xf7, 0x40, 0x4b, 0x00, 0x00, 0x00, 0x40,
            0x00, 0x40, 0x00, 0x20, 0x00, 0x21, 0x18, 0x46, 0x82,
        ],
        len: 179,
        crc: 0xb1f7404b,
        decoded: 1,
    }),
    Some(Filler {
        bits: &[
            0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0xfb, 0x89, 0x86, 0x35, 0x00, 0x00, 0x00, 0x40,
            0x00, 0x60, 0x00, 0x20, 0x00, 0x21, 0x00, 0x82, 0xb1,
        ],
        len: 180,
        crc: 0xfb898635,
        decoded: 2,
    }),
    Some(Filler {
        bits: &[
            0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0x6d, 0x42, 0x55, 0xbd, 0x00, 0x00, 0x00, 0x40,
            0x00, 0x7f, 0xff, 0x20, 0x00, 0x31, 0x4c, 0x00, 0x01, 0x04, 0xc4, 0xc0, 0x1a, 0x5e,
            0x34, 0x5f, 0xb3, 0xc4, 0xd5, 0xe6, 0xf0,
        ],
        len: 277,
        crc: 0x6d4255bd,
        decoded: 15,
    }),
    Some(Filler {
        bits: &[
            0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0x94, 0x92, 0x36, 0xd5, 0x00, 0x00, 0x00, 0x40,
            0x00, 0x78, 0x00, 0x20, 0x00, 0x21, 0x9a, 0x68, 0x33, 0x4d, 0x13, 0x3c,
        ],
        len: 206,
        crc: 0x949236d5,
        decoded: 4,
    }),
    Some(Filler {
        bits: &[
            0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0x6d, 0x73, 0x05, 0x2a, 0x00, 0x00, 0x00, 0x60,
            0x00, 0x7f, 0xff, 0xe0, 0x00, 0x20, 0x00, 0x31, 0x4d, 0x32, 0x31, 0x31, 0x31, 0x08,
            0x13, 0x13, 0x20, 0xd1, 0x94, 0x47, 0x84, 0x56, 0xcb, 0xc6, 0xb7, 0xce, 0xcf, 0xbf,
            0x56,
        ],
        len: 343,
        crc: 0x6d73052a,
        decoded: 18,
    }),
];

/// How a block's bits end.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ends {
    /// Where the next block's magic begins.
    Block,
    /// Where its stream's end begins, which holds the stream's CRC; the span's bytes hold the end.
    Stream(u32),
    /// Where the source ended, before any magic.
    Source,
}

/// A block's compressed bits, from its magic: bits `start..end` of `bytes`.
#[derive(Debug)]
struct Span {
    /// Its stream's block size digit.
    level: u8,
    bytes: Vec<u8>,
    start: u64,
    end: u64,
    ends: Ends,
}

impl Span {
    /// The CRC its block's header gives.
    fn crc(&self) -> u32 {
        bits(&self.bytes, self.start + MAGIC_BITS, 32) as u32
    }

    /// This block's bits, then `next`'s, which begin where this one's end.
    fn joined(&self, next: &Span) -> Span {
        let whole = (self.end / 8) as usize;
        Span {
            level: self.level,
            bytes: [&self.bytes[..whole], &next.bytes[..]].concat(),
            start: self.start,
            end: whole as u64 * 8 + next.end,
            ends: next.ends,
        }
    }

    /// The block as a bzip2 stream of its own, and how many bytes its filler decodes to first.
    /// `ended`: with an end and the CRC that the block makes the stream's; else the bits after it
    /// as they are (a stream's end), for a block that failed. A block the source ended has
    /// nothing after it either way.
    fn as_stream(&self, ended: bool) -> (Vec<u8>, usize) {
        let mut writer = Writer {
            bytes: Vec::with_capacity(self.bytes.len() + 32),
            ..Writer::default()
        };
        writer.bytes.extend_from_slice(b"BZh");
        writer.bytes.push(self.level);
        let (skipped, folded) = match &FILLERS[(self.start % 8) as usize] {
            Some(filler) => {
                writer.copy(filler.bits, 0, filler.len);
                (filler.decoded, filler.crc.rotate_left(1))
            }
            None => (0, 0),
        };
        match (ended, self.ends) {
            (true, Ends::Block | Ends::Stream(_)) => {
                writer.copy(&self.bytes, self.start, self.end);
                writer.put(END, MAGIC_BITS as u32);
                writer.put(u64::from(folded ^ self.crc()), 32);
            }
            (_, Ends::Stream(_)) => writer.copy(&self.bytes, self.start, self.end + END_BITS),
            _ => writer.copy(&self.bytes, self.start, self.bytes.len() as u64 * 8),
        }
        (writer.finish(), skipped)
    }

    /// Decodes the block that ended its stream, its bits then `following`, the source's bytes
    /// after its own, as they are.
    fn followed_by(&self, following: &[u8]) -> Decoded {
        let span = Span {
            level: self.level,
            bytes: [&self.bytes[..], following].concat(),
            start: self.start,
            end: self.end,
            ends: Ends::Source,
        };
        span.decode(false, Vec::new())
    }

    /// Decodes the block (`ended`: as [`as_stream`](Self::as_stream) says) into `into`.
    fn decode(&self, ended: bool, mut into: Vec<u8>) -> Decoded {
        into.clear();
        let (stream, skipped) = self.as_stream(ended);
        let mut decoder = ::bzip2::bufread::BzDecoder::new(&stream[..]);
        let result = decoder
            .read_exact(&mut [0; 32][..skipped])
            .and_then(|()| decoder.read_to_end(&mut into));
        Decoded {
            bytes: into,
            failed: result.err(),
        }
    }
}

/// A block's decoded bytes, and the fault that ended them, if one did.
#[derive(Debug)]
struct Decoded {
    bytes: Vec<u8>,
    failed: Option<io::Error>,
}

/// What the scanner sends the collector, in the source's order.
enum Item {
    /// A block, and where its decoder tells what it decoded to.
    Block(Arc<Span>, Receiver<Decoded>),
    /// The end of the stream last sent was not one: its block failed, and goes on past it.
    NoEnd,
    /// A stream's end was followed by this, and the rest of the source: the one decoder's.
    Rest(Vec<u8>, Sniffed),
    /// Reading the source failed.
    Failed(Failure),
}

/// A block to decode, and where to tell what it decoded to.
type Job = (Arc<Span>, Sender<Decoded>);

/// Blocks decoding or decoded beyond one a decoder and the one being handed on, so that while
/// one decoder is on a long block the others have short ones after it to take: `lbzip2` cuts
/// blocks of a few hundred bytes to 190 kB compressed, and with none beyond, a `Reader` on two
/// threads took 0.63 of the bzip2 crate's time on its file; with two, 0.55, and `bzip2 -9`'s
/// even blocks as before
/// (results/runs/2026-12-07T1145Z-a0cf27d-2-cores-bzip2-ahead). Each holds its decoded bytes
/// until it is handed on (CONTRACT §12.4).
const AHEAD: usize = 2;

/// Blocks sent and not yet taken by the collector on `threads` decoders: with the one it hands
/// on and the one the scanner is sending, `threads + 1 + AHEAD` decoding or decoded.
fn queued(threads: NonZeroUsize) -> usize {
    threads.get() + AHEAD - 1
}

/// Decodes `input`, bzip2 from its start, into `out`, its blocks on `threads` decoders; what it
/// cannot start threads for, as one decoder does.
pub(super) fn decode(
    input: Sniffed,
    threads: NonZeroUsize,
    out: &mut impl Out,
) -> Result<(), Failure> {
    let (jobs, taken) = unbounded::<Job>();
    // Decoded buffers go back to the decoders, so that each is not made anew, its pages faulted in.
    let (spare, spares) = bounded::<Vec<u8>>(threads.get() + 2);
    let decoders = (0..threads.get())
        .filter(|_| {
            let (taken, spares) = (taken.clone(), spares.clone());
            let decoder = move || {
                for (span, tell) in taken {
                    let into = spares.try_recv().unwrap_or_default();
                    let _ = tell.send(span.decode(true, into));
                }
            };
            thread::Builder::new()
                .name("decode bzip2".to_owned())
                .spawn(decoder)
                .is_ok()
        })
        .count();
    let (send, items) = bounded(queued(threads));
    let (give, given) = bounded::<Sniffed>(1);
    let scanning = thread::Builder::new()
        .name("scan bzip2".to_owned())
        .spawn(move || {
            if let Ok(input) = given.recv() {
                Scanner::new(input, jobs, send).scan();
            }
        });
    if decoders == 0 || scanning.is_err() {
        return one_decoder(Format::Bzip2, ONE, input, out);
    }
    let _ = give.send(input);
    Collector {
        items,
        spare,
        next: None,
        folded: 0,
    }
    .collect(out)
}

/// How a stream's scan ended.
enum StreamEnded {
    /// With the next stream, or the source's end, at `bytes[0]`.
    Next,
    /// With bytes from `bytes[from]` on that are no stream: the one decoder's.
    Rest(usize),
    /// With a failure told, or the collector gone.
    Stop,
}

/// Reads the source and sends its blocks, each as soon as the magic after it is read.
struct Scanner {
    input: Sniffed,
    /// The source's bytes not yet sent, from a stream's first byte or a block's first bit's.
    bytes: Vec<u8>,
    ended: bool,
    jobs: Sender<Job>,
    items: Sender<Item>,
}

impl Scanner {
    fn new(input: Sniffed, jobs: Sender<Job>, items: Sender<Item>) -> Self {
        Scanner {
            input,
            bytes: Vec::new(),
            ended: false,
            jobs,
            items,
        }
    }

    /// Scans to the source's end, a stream it cannot follow, a failure, or its collector gone.
    fn scan(mut self) {
        // Each turn begins at a stream's first byte, `bytes[0]`.
        while self.fill(HEADER) && !self.bytes.is_empty() {
            if !begins_stream(&self.bytes) {
                return self.hand_rest(0);
            }
            match self.scan_stream(self.bytes[3]) {
                StreamEnded::Next => {}
                StreamEnded::Rest(from) => return self.hand_rest(from),
                StreamEnded::Stop => return,
            }
        }
    }

    /// Sends the blocks of the stream whose first block begins at bit 32, up to its end, and
    /// leaves the next stream at `bytes[0]`.
    fn scan_stream(&mut self, level: u8) -> StreamEnded {
        let mut start = 32;
        let mut from = start + MAGIC_BITS;
        loop {
            let Some((at, magic)) = find_magic(&self.bytes, from) else {
                if self.ended || self.bytes.len() > MOST_COMPRESSED {
                    self.send(level, start, self.bytes.len() as u64 * 8, Ends::Source);
                    return StreamEnded::Stop;
                }
                from = from.max((self.bytes.len() as u64 * 8).saturating_sub(MAGIC_BITS - 1));
                if !self.fill(self.bytes.len() + 1) {
                    return StreamEnded::Stop;
                }
                continue;
            };
            let after = (at + END_BITS).div_ceil(8) as usize;
            if magic == Magic::Block {
                if !self.send(level, start, at, Ends::Block) {
                    return StreamEnded::Stop;
                }
                self.bytes.drain(..(at / 8) as usize);
                start = at % 8;
                from = start + MAGIC_BITS;
                continue;
            }
            if !self.fill(after) {
                return StreamEnded::Stop;
            }
            if self.bytes.len() < after {
                // The source ends inside what looked like the stream's end.
                self.send(level, start, self.bytes.len() as u64 * 8, Ends::Source);
                return StreamEnded::Stop;
            }
            let crc = bits(&self.bytes, at + MAGIC_BITS, 32) as u32;
            let stream = Arc::new(self.span(level, start, at, Ends::Stream(crc)));
            if !self.send_span(stream.clone()) || !self.fill(after + HEADER) {
                return StreamEnded::Stop;
            }
            let next = &self.bytes[after..];
            if next.is_empty() || begins_stream(next) {
                self.bytes.drain(..after);
                return StreamEnded::Next;
            }
            // Not the next stream: garbage after a stream's end, or an end's magic that turned up
            // inside a block, which then fails.
            if stream.decode(true, Vec::new()).failed.is_none() {
                return StreamEnded::Rest(after);
            }
            if self.items.send(Item::NoEnd).is_err() {
                return StreamEnded::Stop;
            }
            from = at + 1;
        }
    }

    /// The block from bit `start` to `end` of `bytes`, with its stream's end where it has one.
    fn span(&self, level: u8, start: u64, end: u64, ends: Ends) -> Span {
        let first = (start / 8) as usize;
        let last = match ends {
            Ends::Stream(_) => end + END_BITS,
            Ends::Block | Ends::Source => end,
        };
        Span {
            level,
            bytes: self.bytes[first..last.div_ceil(8) as usize].to_vec(),
            start: start % 8,
            end: end - first as u64 * 8,
            ends,
        }
    }

    /// Sends the block from bit `start` to `end` of `bytes`.
    fn send(&mut self, level: u8, start: u64, end: u64, ends: Ends) -> bool {
        let span = self.span(level, start, end, ends);
        self.send_span(Arc::new(span))
    }

    /// Sends `span` to the decoders and to the collector: false when the collector has gone.
    fn send_span(&mut self, span: Arc<Span>) -> bool {
        let (tell, told) = bounded(1);
        let _ = self.jobs.send((span.clone(), tell));
        self.items.send(Item::Block(span, told)).is_ok()
    }

    /// Hands the bytes from `bytes[from]` on, and the rest of the source, to the one decoder.
    fn hand_rest(mut self, from: usize) {
        self.bytes.drain(..from);
        let _ = self.items.send(Item::Rest(self.bytes, self.input));
    }

    /// Reads until `len` bytes are held or the source ends: false where reading failed (told) or
    /// the collector has gone.
    fn fill(&mut self, len: usize) -> bool {
        while self.bytes.len() < len && !self.ended {
            let held = self.bytes.len();
            self.bytes.resize(held + BUFFER, 0);
            let read = self.input.read(&mut self.bytes[held..]);
            self.bytes.truncate(held + *read.as_ref().unwrap_or(&0));
            match read {
                Ok(0) => self.ended = true,
                Ok(_) => {}
                Err(_) => {
                    let failure = reading(self.input.get_mut().1);
                    let _ = self.items.send(Item::Failed(failure));
                    return false;
                }
            }
        }
        true
    }
}

/// Hands decoded blocks on in the source's order, checking each stream's CRC.
struct Collector {
    items: Receiver<Item>,
    spare: Sender<Vec<u8>>,
    /// An item taken to see what follows a failed block, not yet handled.
    next: Option<Item>,
    /// The CRCs of the stream's blocks handed on, folded as its end's CRC folds them.
    folded: u32,
}

/// The most blocks a failed block is joined with before it is told as failed: a magic that turns
/// up by chance inside a block is rare enough (once in about 40 million blocks) that three in one
/// block never are.
const MOST_JOINED: usize = 2;

/// Decoded buffers larger than this are freed, not kept for the decoders: a block of runs decodes
/// to up to 46 MB, a block of text to about 1.
const MOST_SPARE: usize = 8 << 20;

/// What a block that failed to decode turned out to be.
enum Mended {
    /// A stream's end that was none: the block comes again, with its bits past it.
    Resent,
    /// A block and the next, or the next two: a magic between turned up inside it by chance.
    Joined(Arc<Span>, Decoded),
}

impl Collector {
    fn collect(mut self, out: &mut impl Out) -> Result<(), Failure> {
        while let Some(item) = self.next.take().or_else(|| self.items.recv().ok()) {
            let (span, told) = match item {
                Item::Block(span, told) => (span, told),
                Item::NoEnd => continue,
                Item::Rest(start, input) => {
                    return one_decoder(Format::Bzip2, ONE, held_first(start, input), out);
                }
                Item::Failed(failure) => return Err(failure),
            };
            let decoded = told.recv().unwrap_or_else(|_| Decoded {
                bytes: Vec::new(),
                failed: Some(io::Error::other("a bzip2 decoder ended without a word")),
            });
            let (span, decoded) = match decoded.failed {
                None => (span, decoded),
                Some(_) => match self.mend(&span, out)? {
                    Mended::Resent => continue,
                    Mended::Joined(span, decoded) => (span, decoded),
                },
            };
            if !self.hand_on(decoded.bytes, out) {
                return Ok(());
            }
            self.folded = self.folded.rotate_left(1) ^ span.crc();
            if let Ends::Stream(crc) = span.ends
                && std::mem::take(&mut self.folded) != crc
            {
                return Err(Failure::Decompressing(invalid_data()));
            }
        }
        Ok(())
    }

    /// What the failed block `span` is: a stream's end that was none, or a block a magic turned
    /// up inside, joined with the next blocks; else its failure, told as one decoder tells it.
    fn mend(&mut self, span: &Span, out: &mut impl Out) -> Result<Mended, Failure> {
        if span.ends != Ends::Block {
            self.next = self.items.recv().ok();
            if matches!(self.next, Some(Item::NoEnd)) {
                return Ok(Mended::Resent);
            }
            return Err(self.failed(span, out));
        }
        let mut joined: Option<Span> = None;
        for _ in 0..MOST_JOINED {
            let last = joined.as_ref().unwrap_or(span);
            if last.ends != Ends::Block {
                break;
            }
            let next = match self.items.recv() {
                Ok(Item::Block(next, _)) => next,
                other => {
                    self.next = other.ok();
                    break;
                }
            };
            let both = last.joined(&next);
            let decoded = both.decode(true, Vec::new());
            if decoded.failed.is_none() {
                return Ok(Mended::Joined(Arc::new(both), decoded));
            }
            joined = Some(both);
        }
        Err(self.failed(joined.as_ref().unwrap_or(span), out))
    }

    /// The failure of `span`, which no join mends, as one decoder meets it: its bits and those
    /// after it decoded, what they decode to handed on before the fault. Past a stream's end, one
    /// decoder reads on into the next stream's header and block, or the bytes that are none.
    fn failed(&mut self, span: &Span, out: &mut impl Out) -> Failure {
        let next = match span.ends {
            Ends::Stream(_) => self.next.take().or_else(|| self.items.recv().ok()),
            _ => None,
        };
        let mut decoded = match &next {
            Some(Item::Block(next, _)) => {
                let header = [b'B', b'Z', b'h', next.level];
                span.followed_by(&[&header[..], &next.bytes].concat())
            }
            Some(Item::Rest(start, _)) => span.followed_by(start),
            _ => span.decode(false, Vec::new()),
        };
        let failure = decoded.failed.take().unwrap_or_else(invalid_data);
        self.hand_on(decoded.bytes, out);
        Failure::Decompressing(failure)
    }

    /// Hands `bytes` on into `out`, then keeps the storage it gets back for a decoder: false when
    /// the reader has gone.
    fn hand_on(&mut self, bytes: Vec<u8>, out: &mut impl Out) -> bool {
        let len = bytes.len();
        let Some(storage) = out.hand_over(bytes, len) else {
            return false;
        };
        if storage.capacity() <= MOST_SPARE {
            let _ = self.spare.try_send(storage);
        }
        true
    }
}

/// libbz2's words for a bad CRC, as the `bzip2` crate gives them to one decoder.
fn invalid_data() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, ::bzip2::Error::Data)
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Write};

    use proptest::prelude::*;

    use super::super::source::Undecoded;
    use super::*;
    use pipelines_testing as testing;

    /// Where the tests' decoders put what they decode: all of it, in small rooms, so that a
    /// block is handed on over many.
    #[derive(Default)]
    struct Collected {
        bytes: Vec<u8>,
        room: Vec<u8>,
    }

    impl Out for Collected {
        fn room(&mut self) -> Option<&mut [u8]> {
            self.room.resize(1000, 0);
            Some(&mut self.room)
        }

        fn filled(&mut self, n: usize) -> bool {
            self.bytes.extend_from_slice(&self.room[..n]);
            true
        }

        fn flush(&mut self) {}
    }

    /// `text` as bzip2 of 100 kB blocks, in `streams` streams one after another.
    fn bzip2(text: &[u8], streams: usize) -> Vec<u8> {
        let parts = text.chunks(text.len().div_ceil(streams.max(1)).max(1));
        let parts: Vec<&[u8]> = match text.is_empty() {
            true => vec![&[]],
            false => parts.collect(),
        };
        let encode = |part: &[u8]| {
            let mut encoder =
                ::bzip2::write::BzEncoder::new(Vec::new(), ::bzip2::Compression::fast());
            encoder.write_all(part).unwrap();
            encoder.finish().unwrap()
        };
        parts.into_iter().flat_map(encode).collect()
    }

    /// Text of many blocks, that compresses about as text does: numbered lines of words.
    fn text(lines: usize) -> Vec<u8> {
        let words = [
            "alpha", "beta", "gamma", "delta", "pipe", "line", "block", "magic",
        ];
        (0..lines)
            .flat_map(|n| {
                let word = |k: usize| words[(n * 7 + k * 3 + n / 13) % words.len()];
                format!("{n} {} {} {}\n", word(1), word(2), word(n % 5)).into_bytes()
            })
            .collect()
    }

    /// What one decoder makes of `input`: its bytes, and its failure's words.
    fn one(input: &[u8]) -> (Vec<u8>, Option<String>) {
        let mut bytes = Vec::new();
        let failed = ::bzip2::read::MultiBzDecoder::new(input).read_to_end(&mut bytes);
        (bytes, failed.err().map(|error| error.to_string()))
    }

    /// `file` as `decode` is given a source: nothing read in sniffing it put back in front.
    fn sniffed(file: std::fs::File) -> Sniffed {
        Cursor::new(Vec::new()).chain(Undecoded::new(file))
    }

    /// What `decode` makes of `input` on `threads` decoders: its bytes, and its failure's words.
    fn parallel(input: &[u8], threads: usize) -> (Vec<u8>, Option<String>) {
        let source = sniffed(testing::file(input));
        let mut out = Collected::default();
        let threads = NonZeroUsize::new(threads).unwrap();
        let ended = testing::within("bzip2 blocks", move || {
            let ended = decode(source, threads, &mut out);
            (out.bytes, ended)
        });
        let failed = match ended.1 {
            Ok(()) => None,
            Err(Failure::Decompressing(error)) => Some(error.to_string()),
            Err(Failure::Reading(error)) => panic!("reading failed: {error}"),
        };
        (ended.0, failed)
    }

    /// Every bit at which a magic begins in `bytes` from `from` on, bit by bit.
    fn magics_by_bits(bytes: &[u8], from: u64) -> Vec<(u64, Magic)> {
        let end = (bytes.len() as u64 * 8).saturating_sub(MAGIC_BITS - 1);
        (from..end)
            .filter_map(|at| match bits(bytes, at, MAGIC_BITS as u32) {
                BLOCK => Some((at, Magic::Block)),
                END => Some((at, Magic::End)),
                _ => None,
            })
            .collect()
    }

    /// Every magic `find_magic` finds from `from` on, one after another.
    fn magics_found(bytes: &[u8], mut from: u64) -> Vec<(u64, Magic)> {
        let mut found = Vec::new();
        while let Some((at, magic)) = find_magic(bytes, from) {
            // Else the search would go round for ever.
            assert!(at >= from, "a magic at bit {at}, sought from {from}");
            found.push((at, magic));
            from = at + 1;
        }
        found
    }

    /// `noise` with each magic of `magics` written over it at its bit.
    fn with_magics(mut noise: Vec<u8>, magics: &[(u64, bool)]) -> Vec<u8> {
        for &(at, block) in magics {
            let magic = if block { BLOCK } else { END };
            let at = at % (noise.len() as u64 * 8).saturating_sub(MAGIC_BITS).max(1);
            for bit in 0..MAGIC_BITS {
                let (byte, mask) = (((at + bit) / 8) as usize, 0x80u8 >> ((at + bit) % 8));
                if byte < noise.len() {
                    match magic >> (MAGIC_BITS - 1 - bit) & 1 {
                        1 => noise[byte] |= mask,
                        _ => noise[byte] &= !mask,
                    }
                }
            }
        }
        noise
    }

    proptest! {
        /// Magics at any bit, overlapping or not, found as a bit-by-bit search finds them.
        #[test]
        fn magics_are_found_at_every_bit(
            noise in prop::collection::vec(any::<u8>(), 0..64),
            magics in prop::collection::vec((any::<u64>(), any::<bool>()), 0..4),
            from in 0u64..600,
        ) {
            let bytes = with_magics(noise, &magics);
            prop_assert_eq!(magics_found(&bytes, from), magics_by_bits(&bytes, from));
        }

        /// Bits copied from anywhere to any alignment are the bits, as read one at a time.
        #[test]
        fn bits_are_copied_at_any_alignment(
            source in prop::collection::vec(any::<u8>(), 1..40),
            held in 0u32..8,
            from in 0u64..320,
            len in 0u64..320,
        ) {
            let end = source.len() as u64 * 8;
            let (from, to) = (from % end, (from % end + len).min(end));
            let copying = move || copied_as_they_are(&source, held, from, to);
            prop_assert!(testing::within_for(testing::IN_MEMORY, "copying bits", copying));
        }
    }

    /// Whether bits `from..to` of `source`, copied after `held` bits, are written as they are,
    /// the last byte padded with zeroes and no byte more. Its callers run it under a deadline,
    /// as a copy that does not move on goes round for ever.
    fn copied_as_they_are(source: &[u8], held: u32, from: u64, to: u64) -> bool {
        let mut writer = Writer::default();
        writer.put(0b1010101, held);
        writer.copy(source, from, to);
        let written = writer.finish();
        let (start, end) = (u64::from(held), u64::from(held) + to - from);
        let bit = |bytes: &[u8], at: u64| bits(bytes, at, 1);
        written.len() as u64 == end.div_ceil(8)
            && (start..end).all(|at| bit(&written, at) == bit(source, from + at - start))
            && (end..written.len() as u64 * 8).all(|at| bit(&written, at) == 0)
    }

    /// Every short copy, at every alignment: those within a byte, or across one or two, that
    /// random lengths seldom give.
    #[test]
    fn short_copies_at_every_alignment() {
        let source = [0xa5, 0x3c, 0xff, 0x00, 0x96];
        let end = source.len() as u64 * 8;
        testing::within_for(testing::IN_MEMORY, "copying bits", move || {
            for held in 0..8 {
                for from in 0..end {
                    for to in from..end.min(from + 24) + 1 {
                        let copied = copied_as_they_are(&source, held, from, to);
                        assert!(copied, "bits {from}..{to} after {held}");
                    }
                }
            }
        });
    }

    /// A magic in a source's first bytes is found from every bit before it.
    #[test]
    fn a_magic_in_the_first_bytes_is_found_from_any_bit_before_it() {
        for at in 0..16 {
            let bytes = with_magics(vec![0; 12], &[(at, true)]);
            for from in 0..=at {
                assert_eq!(
                    find_magic(&bytes, from),
                    Some((at, Magic::Block)),
                    "from {from}"
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// CONTRACT §12.1: a bzip2 source decodes on every decoder to what one decoder decodes
        /// it to: blocks of one stream, streams of a block each (`pbzip2`'s), streams of many.
        #[test]
        fn blocks_decode_as_one_decoder_decodes_them(
            lines in 0usize..16_000,
            streams in 1usize..6,
            threads in 2usize..4,
        ) {
            let input = bzip2(&text(lines), streams);
            let (bytes, failed) = parallel(&input, threads);
            prop_assert_eq!(failed, None);
            prop_assert!(bytes == text(lines));
        }

        /// CONTRACT §12.3: a damaged source (a bit flipped, cut short, garbage after it) fails
        /// as one decoder fails on it, in its words, after a first part of what it decodes to.
        #[test]
        fn damaged_blocks_fail_as_one_decoder_fails(
            lines in 1usize..12_000,
            streams in 1usize..4,
            at in 0.0..1.0f64,
            damage in 0u8..3,
        ) {
            let mut input = bzip2(&text(lines), streams);
            let at = ((input.len() as f64) * at) as usize;
            match damage {
                0 => input[at] ^= 1 << (at % 8),
                1 => input.truncate(at),
                _ => input.extend_from_slice(&b"garbage"[..at % 8]),
            }
            let (one_bytes, one_failed) = one(&input);
            let (bytes, failed) = parallel(&input, 2);
            prop_assert_eq!(&failed, &one_failed);
            match failed {
                None => prop_assert!(bytes == one_bytes),
                Some(_) => prop_assert!(text(lines).starts_with(&bytes) || damage == 0),
            }
        }
    }

    /// A filler aligns a block to each of the 8 bits of a byte but the first, and decodes, as a
    /// stream of its own, to the text it was made of.
    #[test]
    fn a_filler_for_every_alignment() {
        for (past, filler) in FILLERS.iter().enumerate() {
            let Some(filler) = filler else {
                assert_eq!(past, 0, "no filler {past} bits past a byte");
                continue;
            };
            assert_eq!(filler.len % 8, past as u64);
            let mut writer = Writer::default();
            writer.bytes.extend_from_slice(b"BZh1");
            writer.copy(filler.bits, 0, filler.len);
            writer.put(END, MAGIC_BITS as u32);
            writer.put(u64::from(filler.crc), 32);
            let text: Vec<u8> = (0..filler.decoded as u8).collect();
            assert_eq!(one(&writer.finish()), (text, None));
        }
    }

    /// CONTRACT §12.1: a magic that turns up inside a block by chance costs no byte: the block
    /// cut there fails, and is decoded again joined with the bits after the false magic.
    #[test]
    fn a_magic_inside_a_block_costs_no_byte() {
        let text = text(40_000);
        let input = bzip2(&text, 1);
        let blocks = magics_by_bits(&input, 0);
        let (first, second) = (blocks[0].0, blocks[1].0);
        // False magics 1, then 2, in the first block's bits (after its header).
        for cuts in [vec![first + 500], vec![first + 400, first + 900]] {
            let (send, items) = bounded(blocks.len() + cuts.len());
            let mut starts: Vec<u64> = [first].into_iter().chain(cuts.iter().copied()).collect();
            starts.extend(blocks[1..].iter().map(|&(at, _)| at));
            for pair in starts.windows(2) {
                let ends = match blocks.iter().find(|&&(at, _)| at == pair[1]) {
                    Some((_, Magic::End)) => {
                        Ends::Stream(bits(&input, pair[1] + MAGIC_BITS, 32) as u32)
                    }
                    _ => Ends::Block,
                };
                let last = (pair[1] + END_BITS).div_ceil(8) as usize;
                let span = Arc::new(Span {
                    level: input[3],
                    bytes: input[(pair[0] / 8) as usize..last.min(input.len())].to_vec(),
                    start: pair[0] % 8,
                    end: pair[1] - pair[0] / 8 * 8,
                    ends,
                });
                let (tell, told) = bounded(1);
                tell.send(span.decode(true, Vec::new())).unwrap();
                send.send(Item::Block(span, told)).unwrap();
            }
            drop(send);
            let (spare, _) = bounded(1);
            let mut out = Collected::default();
            let collector = Collector {
                items,
                spare,
                next: None,
                folded: 0,
            };
            assert!(collector.collect(&mut out).is_ok(), "{cuts:?}");
            assert!(out.bytes == text, "{cuts:?}: {} bytes", out.bytes.len());
            assert!(second > first + 900);
        }
    }

    /// CONTRACT §12.1: streams of a few bytes each, as `pbzip2` makes of a small file, follow one
    /// another: a stream's end is found however soon after its header it comes.
    #[test]
    fn streams_of_a_few_bytes_follow_one_another() {
        for lines in [1, 2, 5, 30] {
            for streams in 1..4 {
                let input = bzip2(&text(lines), streams);
                let decoded = parallel(&input, 2);
                assert_eq!(
                    decoded,
                    (text(lines), None),
                    "{lines} lines, {streams} streams"
                );
            }
        }
    }

    /// CONTRACT §12.3: bits that run on past the most a block compresses to without a magic fail
    /// there, as the block they follow, without waiting for the rest of a source that has not
    /// ended (a pipe whose writer is still there).
    #[test]
    fn a_block_with_no_end_in_sight_fails_without_waiting_for_more() {
        let (reader, writer) = std::io::pipe().unwrap();
        let mut writing = writer.try_clone().unwrap();
        // Writes of an odd size, so that no read ends at the bound itself.
        let feeding = thread::spawn(move || {
            let _ = writing.write_all(&stream_start(b'9', BLOCK));
            for _ in 0..(MOST_COMPRESSED + BUFFER) / 997 {
                let _ = writing.write_all(&[0; 997]);
            }
        });
        let source = sniffed(std::os::fd::OwnedFd::from(reader).into());
        let ended = testing::within_for(testing::IN_MEMORY, "a block with no end", move || {
            decode(
                source,
                NonZeroUsize::new(2).unwrap(),
                &mut Collected::default(),
            )
        });
        assert!(matches!(ended, Err(Failure::Decompressing(_))), "{ended:?}");
        drop(writer);
        feeding.join().unwrap();
    }

    /// CONTRACT §12.1: a source of streams alone is sent block by block to its end, however
    /// its reads fall (the first here ends at each byte of the next stream's header): never
    /// handed to the one decoder, which would decode the rest on one core.
    #[test]
    fn streams_are_scanned_in_blocks_whatever_the_reads() {
        let input = bzip2(&text(20_000), 3);
        let magics = magics_by_bits(&input, 0);
        let blocks = magics.iter().filter(|m| m.1 == Magic::Block).count();
        let (end, _) = magics.iter().find(|m| m.1 == Magic::End).copied().unwrap();
        let after = (end + END_BITS).div_ceil(8) as usize;
        for first_read in after..after + HEADER + 1 {
            let source = Undecoded::new(testing::file(&input[first_read..]));
            let source = Cursor::new(input[..first_read].to_vec()).chain(source);
            let (jobs, _) = unbounded();
            let (items, sent) = unbounded();
            let scanned = testing::within_for(testing::IN_MEMORY, "scanning", move || {
                Scanner::new(source, jobs, items).scan();
                sent.try_iter().collect::<Vec<_>>()
            });
            assert_eq!(scanned.len(), blocks, "a first read of {first_read}");
            for item in scanned {
                assert!(
                    matches!(item, Item::Block(..)),
                    "a first read of {first_read}"
                );
            }
        }
    }

    /// CONTRACT §12.4: with nothing taken from it, the scanner of a stream of many blocks sends
    /// `threads + AHEAD` of them to two or three decoders and stops; with the one a collector
    /// would hold, `threads + 1 + AHEAD` decode or wait.
    #[test]
    fn the_scanner_stops_two_blocks_beyond_one_a_decoder() {
        let input = bzip2(&text(40_000), 1);
        let blocks = magics_by_bits(&input, 0).len() - 1;
        for threads in [2, 3] {
            assert!(blocks > threads + AHEAD + 2, "{blocks} blocks");
            let (jobs, sent) = unbounded();
            let (items, queue) = bounded(queued(NonZeroUsize::new(threads).unwrap()));
            let source = Cursor::new(Vec::new()).chain(Undecoded::new(testing::file(&input)));
            let scanning = thread::spawn(move || Scanner::new(source, jobs, items).scan());
            testing::wait_for("blocks sent", || sent.len() >= threads + 2);
            thread::sleep(std::time::Duration::from_millis(50));
            assert_eq!(
                sent.len(),
                threads + 2,
                "blocks sent of {blocks} to {threads}"
            );
            drop(queue);
            scanning.join().unwrap();
        }
    }

    /// CONTRACT §12.3: a stream's end's magic written into a block fails as one decoder fails
    /// on it; the scan goes on past it rather than finding it again.
    #[test]
    fn an_ends_magic_inside_a_block_fails_as_one_decoder_fails() {
        let input = bzip2(&text(30_000), 1);
        let blocks = magics_by_bits(&input, 0);
        let input = with_magics(input, &[(blocks[0].0 + 4_000, false)]);
        let one_failed = one(&input).1;
        assert!(one_failed.is_some());
        assert_eq!(parallel(&input, 2).1, one_failed);
    }

    /// Where a decoding thread's bytes go as they come.
    struct Told(crossbeam_channel::Sender<Vec<u8>>, Vec<u8>);

    impl Out for Told {
        fn room(&mut self) -> Option<&mut [u8]> {
            self.1.resize(1000, 0);
            Some(&mut self.1)
        }

        fn filled(&mut self, n: usize) -> bool {
            self.0.send(self.1[..n].to_vec()).is_ok()
        }

        fn flush(&mut self) {}
    }

    /// CONTRACT §12.1 (live input): a stream's last block is handed on as soon as the stream's
    /// end has come, while the source, a pipe still open, waits for more.
    #[test]
    fn a_streams_last_block_comes_out_while_the_source_waits() {
        let text = text(30_000);
        let input = bzip2(&text, 1);
        let (reader, writer) = std::io::pipe().unwrap();
        let mut writing = writer.try_clone().unwrap();
        let feeding = thread::spawn(move || writing.write_all(&input).unwrap());
        let source = sniffed(std::os::fd::OwnedFd::from(reader).into());
        let (told, bytes) = bounded(1);
        let decoding = thread::spawn(move || {
            decode(
                source,
                NonZeroUsize::new(2).unwrap(),
                &mut Told(told, Vec::new()),
            )
        });
        let mut out = Vec::new();
        let deadline = std::time::Instant::now() + testing::IN_MEMORY;
        while out.len() < text.len() {
            match bytes.recv_deadline(deadline) {
                Ok(piece) => out.extend_from_slice(&piece),
                Err(_) => break,
            }
        }
        let whole = out == text;
        // The source ended, and the rest taken, so that the decoder ends.
        drop(writer);
        feeding.join().unwrap();
        bytes.iter().for_each(drop);
        let ended = testing::within_for(testing::IN_MEMORY, "the decoder's end", move || {
            decoding.join().unwrap()
        });
        assert!(ended.is_ok());
        assert!(
            whole,
            "{} of {} bytes before the source ended",
            out.len(),
            text.len()
        );
    }

    /// `--decoders 1` decodes as before, with one decoder; the words of a stream's CRC that
    /// does not fold its blocks' are one decoder's.
    #[test]
    fn a_bad_stream_crc_is_told_in_one_decoders_words() {
        let text = text(30_000);
        let mut input = bzip2(&text, 1);
        let last = input.len() - 2;
        input[last] ^= 0x10;
        let (one_bytes, one_failed) = one(&input);
        assert!(one_failed.is_some());
        let (bytes, failed) = parallel(&input, 2);
        assert_eq!(failed, one_failed);
        assert!(
            bytes == text,
            "every block's bytes come before the stream's CRC"
        );
        assert!(text.starts_with(&one_bytes));
    }
}
