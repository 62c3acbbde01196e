//! What a source holds, told by its first bytes: a regular file's read where it stands
//! ([`sniff_file`]), a stream's as the decoder reads them ([`sniff_stream`]).

use std::io::{self, Read};

use super::source::{Undecoded, reading};
use super::zstd::{self, SKIPPABLE_HEADER};
use super::{Failure, Regular, bzip2, gzip, lz4};
use fd_facts as fd;

/// What a source holds, by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// gzip members, one after another.
    Gzip,
    /// zstd frames, one after another, skippable frames among them.
    Zstd,
    /// xz streams, one after another, stream padding among them.
    Xz,
    /// bzip2 streams, one after another.
    Bzip2,
    /// LZ4 frames, one after another, skippable frames among them.
    Lz4,
    /// LZ4's legacy frames (`lz4 -l`), one after another.
    Lz4Legacy,
    /// One LZMA-alone stream, xz's legacy `.lzma`.
    Lzma,
    /// compress's LZW (`.Z`): known, and refused (CONTRACT §12.1).
    Compress,
    /// Anything else: read as it is.
    Plain,
}

/// What a source's first bytes begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// A stream of this format.
    Format(Format),
    /// A skippable frame whose content is this many bytes long: what follows it tells the format.
    Skippable(u32),
}

/// A magic number: the bytes at a source's start, each between its `low` and `high` byte, and
/// where a header has no magic of its own, its fields as its decoder checks them.
struct Magic {
    low: &'static [u8],
    high: &'static [u8],
    /// Whether the header's fields agree as far as the bytes so far go.
    fields: Option<fn(&[u8]) -> bool>,
    start: Start,
}

impl Magic {
    const fn exact(bytes: &'static [u8], format: Format) -> Magic {
        Magic::between(bytes, bytes, Start::Format(format))
    }

    const fn between(low: &'static [u8], high: &'static [u8], start: Start) -> Magic {
        Magic {
            low,
            high,
            fields: None,
            start,
        }
    }

    /// Whether `start` agrees with the magic as far as both go.
    fn agrees(&self, start: &[u8]) -> bool {
        let bounds = self.low.iter().zip(self.high);
        let bytes = start
            .iter()
            .zip(bounds)
            .all(|(byte, (low, high))| (low..=high).contains(&byte));
        bytes && self.fields.is_none_or(|fields| fields(start))
    }
}

/// An LZMA-alone header's length: the properties byte, the dictionary's size (4 bytes) and the
/// decoded size (8), little-endian.
const LZMA_HEADER: usize = 13;

/// Whether `start` may begin an LZMA-alone header, as xz tells one when it looks for a format
/// (liblzma's picky LZMA-alone decoder): properties with `lc + lp` at most 4, a dictionary of
/// `2^n` or `2^n + 2^(n-1)` bytes (or the largest), and a decoded size below 256 GiB or unknown.
/// Text never agrees: such a dictionary size has at least two zero bytes.
fn lzma_fields(start: &[u8]) -> bool {
    let properties = start.first().is_none_or(|&byte| {
        let (pb, rest) = (byte / 45, byte % 45);
        pb <= 4 && rest / 9 + rest % 9 <= 4
    });
    // The dictionary's bytes read so far, the rest taken as zero: a fitting size has at most two
    // bits set, side by side, and so has any part of it.
    let mut dictionary = [0; 4];
    let known = start.get(1..).unwrap_or_default();
    let known = &known[..known.len().min(4)];
    dictionary[..known.len()].copy_from_slice(known);
    let dictionary = u32::from_le_bytes(dictionary);
    let fits = |size: u32| size.count_ones() == 1 || size >> size.trailing_zeros() == 0b11;
    let dictionary = dictionary == 0 || fits(dictionary) || known.iter().all(|&byte| byte == 0xff);
    let size = start.get(5..LZMA_HEADER).unwrap_or_default();
    let below_256_gib = |high: &[u8]| high[0] < 0x40 && high[1..].iter().all(|&byte| byte == 0);
    let size = size.iter().all(|&byte| byte == 0xff) || size.get(4..).is_none_or(below_256_gib);
    properties && dictionary && size
}

/// The first `N` bytes of `number`, little-endian: a magic as it lies at a stream's start.
const fn le_bytes<const N: usize>(number: u64) -> [u8; N] {
    let bytes = number.to_le_bytes();
    let mut first = [0; N];
    let mut at = 0;
    while at < N {
        first[at] = bytes[at];
        at += 1;
    }
    first
}

/// A skippable frame's header with the `magic` given and every byte of its length `fill`.
const fn skippable(magic: u64, fill: u8) -> [u8; SKIPPABLE_HEADER] {
    let magic: [u8; 4] = le_bytes(magic);
    [
        magic[0], magic[1], magic[2], magic[3], fill, fill, fill, fill,
    ]
}

/// Every magic [`sniff`] knows, each from its format's own file (xz's and compress's but for
/// those, which only this file knows). No two formats' magics agree on their common length, so
/// the first bytes that tell one from the others decide. bzip2's `BZh` and level digit are
/// followed by its first block's magic or, for an empty stream, its end-of-stream magic: 10 bytes
/// that plain text beginning `BZh` is unlikely to hold.
const MAGICS: &[Magic] = &[
    Magic::exact(&gzip::MAGIC, Format::Gzip),
    Magic::exact(&le_bytes::<4>(zstd::MAGIC), Format::Zstd),
    Magic::exact(&[0xfd, b'7', b'z', b'X', b'Z', 0x00], Format::Xz),
    Magic::between(
        &bzip2::stream_start(b'1', bzip2::BLOCK),
        &bzip2::stream_start(b'9', bzip2::BLOCK),
        Start::Format(Format::Bzip2),
    ),
    Magic::between(
        &bzip2::stream_start(b'1', bzip2::END),
        &bzip2::stream_start(b'9', bzip2::END),
        Start::Format(Format::Bzip2),
    ),
    Magic::exact(&le_bytes::<4>(lz4::FRAME_MAGIC as u64), Format::Lz4),
    Magic::exact(&le_bytes::<4>(lz4::LEGACY_MAGIC as u64), Format::Lz4Legacy),
    // Any length: `sniff` reads it from the header.
    Magic::between(
        &skippable(zstd::SKIPPABLE.start, 0x00),
        &skippable(zstd::SKIPPABLE.end - 1, 0xff),
        Start::Skippable(0),
    ),
    Magic::exact(&[0x1f, 0x9d], Format::Compress),
    Magic {
        low: &[0; LZMA_HEADER],
        high: &[0xff; LZMA_HEADER],
        fields: Some(lzma_fields),
        start: Start::Format(Format::Lzma),
    },
];

/// The most bytes [`sniff`] needs.
const LONGEST_MAGIC: usize = LZMA_HEADER;

/// What a source whose first bytes are `start` begins; `None` while `start` could still begin a
/// magic and more bytes may come (`ended` false). Decided on the fewest bytes, so that a live plain
/// line is never held back waiting for bytes that would not change the answer.
fn sniff(start: &[u8], ended: bool) -> Option<Start> {
    let mut undecided = false;
    for magic in MAGICS.iter().filter(|magic| magic.agrees(start)) {
        if start.len() < magic.low.len() {
            undecided = !ended;
            continue;
        }
        return Some(match magic.start {
            Start::Skippable(_) => {
                let length = start[4..SKIPPABLE_HEADER]
                    .try_into()
                    .map(u32::from_le_bytes);
                Start::Skippable(length.unwrap_or_default())
            }
            format => format,
        });
    }
    (!undecided).then_some(Start::Format(Format::Plain))
}

/// The format of what follows one or more skippable frames: LZ4 frames, or else zstd frames, even
/// where no zstd frame follows. A skippable frame is itself a zstd (and LZ4) frame, so such a
/// source is decoded as `zstd -dc` decodes it: skippable frames alone are empty, anything else
/// after them a failure.
fn past_skippable(format: Format) -> Format {
    match format {
        Format::Lz4 | Format::Lz4Legacy => format,
        _ => Format::Zstd,
    }
}

/// What a regular file holds from its offset on, read there without moving the offset.
/// Skippable frames at its start are passed over with their lengths, unread.
pub fn sniff_file(source: &Regular) -> io::Result<Format> {
    let (file, mut at) = (&source.file, source.offset);
    let mut skipped = false;
    loop {
        let mut start = [0; LONGEST_MAGIC];
        let mut read = 0;
        while read < start.len() {
            match fd::read_at(file, &mut start[read..], at + read as u64)? {
                0 => break,
                n => read += n,
            }
        }
        let format = match sniff(&start[..read], true) {
            Some(Start::Skippable(length)) => {
                at += (SKIPPABLE_HEADER as u64) + u64::from(length);
                skipped = true;
                continue;
            }
            Some(Start::Format(format)) => format,
            None => Format::Plain,
        };
        return Ok(match skipped {
            true => past_skippable(format),
            false => format,
        });
    }
}

/// Reads a stream's first bytes until they tell what it holds: the format, and the bytes read
/// that the decoder is to read first. Skippable frames at the start are read and dropped (the
/// decoder would skip them) and what follows them decides; the header of one that the stream
/// ends inside is kept, for the decoder to find it incomplete.
pub(super) fn sniff_stream(source: &mut Undecoded) -> Result<(Format, Vec<u8>), Failure> {
    let mut start = Vec::with_capacity(LONGEST_MAGIC);
    let mut skipped = false;
    loop {
        let mut more = [0; LONGEST_MAGIC];
        let read = source.read(&mut more[..LONGEST_MAGIC - start.len()]);
        let read = read.map_err(|_| reading(source))?;
        start.extend_from_slice(&more[..read]);
        let format = match sniff(&start, read == 0) {
            None => continue,
            Some(Start::Format(format)) => format,
            Some(Start::Skippable(length)) => {
                // The bytes read after the header are the content's first, or the next frame's.
                let length = u64::from(length);
                let read_of_content = (start.len() - SKIPPABLE_HEADER).min(length as usize);
                let header = start[..SKIPPABLE_HEADER].to_vec();
                start.drain(..SKIPPABLE_HEADER + read_of_content);
                let rest = length - read_of_content as u64;
                let dropped = io::copy(&mut source.by_ref().take(rest), &mut io::sink());
                if dropped.map_err(|_| reading(source))? < rest {
                    return Ok((Format::Zstd, header));
                }
                skipped = true;
                continue;
            }
        };
        // Nothing after the skippable frames is empty, which zstd's decoder, given nothing, would
        // call an incomplete frame.
        return Ok(match skipped && !start.is_empty() {
            true => (past_skippable(format), start),
            false => (format, start),
        });
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::{Read, Seek};

    use super::*;
    use pipelines_testing::{self as testing, IN_MEMORY, gzip, within_for};

    /// What `sniff` says of `start`, the format it begins, if a format.
    fn format(start: &[u8], ended: bool) -> Option<Format> {
        match sniff(start, ended)? {
            Start::Format(format) => Some(format),
            Start::Skippable(length) => panic!("a skippable frame of {length} bytes"),
        }
    }

    #[test]
    fn sniffing_decides_on_the_fewest_bytes() {
        assert_eq!(format(b"\x1f\x8b\x08", false), Some(Format::Gzip));
        assert_eq!(format(b"\x28\xb5\x2f\xfd", false), Some(Format::Zstd));
        assert_eq!(format(b"\xfd7zXZ\x00", false), Some(Format::Xz));
        assert_eq!(format(b"BZh91AY&SY", false), Some(Format::Bzip2));
        assert_eq!(
            format(b"BZh1\x17\x72\x45\x38\x50\x90", false),
            Some(Format::Bzip2),
            "an empty bzip2 stream"
        );
        assert_eq!(format(b"\x04\x22\x4d\x18", false), Some(Format::Lz4));
        assert_eq!(format(b"\x02\x21\x4c\x18", false), Some(Format::Lz4Legacy));
        assert_eq!(format(b"\x1f\x9d\x90", false), Some(Format::Compress));
        // `xz --format=lzma`'s header: its presets' properties, an 8 MiB dictionary, no size.
        let lzma = b"\x5d\x00\x00\x80\x00\xff\xff\xff\xff\xff\xff\xff\xff";
        assert_eq!(format(lzma, false), Some(Format::Lzma));
        // A 12 MiB dictionary (2^23 + 2^22), a size given, other properties (lc 0, lp 2, pb 0).
        let sized = b"\x12\x00\x00\xc0\x00\x10\x00\x00\x00\x3f\x00\x00\x00";
        assert_eq!(format(sized, false), Some(Format::Lzma));
        assert_eq!(
            sniff(b"\x5f\x2a\x4d\x18\x03\x01\x00\x00", false),
            Some(Start::Skippable(259))
        );
        assert_eq!(
            format(b"a", false),
            Some(Format::Plain),
            "no magic begins so"
        );
        for plain in [
            &b"\x1f\x8c"[..],
            b"BZh0",
            b"BZh9 is plain text",
            b"\xfd7zXZ\x01",
            b"\x60\x2a\x4d\x18",
            b"\x1f\x9e",
            b"\x02\x21\x4c\x19",
            // LZMA-alone's fields out of their bounds, one at a time: lc + lp over 4, past the
            // last properties, a dictionary of three bits, a size of 256 GiB.
            b"\x15\x00\x00\x80\x00\xff\xff\xff\xff\xff\xff\xff\xff",
            b"\xe1\x00\x00\x80\x00\xff\xff\xff\xff\xff\xff\xff\xff",
            b"\x5d\x00\x00\xe0\x00\xff\xff\xff\xff\xff\xff\xff\xff",
            b"\x5d\x00\x00\x80\x00\x00\x00\x00\x00\x40\x00\x00\x00",
            b"-- a line",
            b"\n\n",
        ] {
            assert_eq!(format(plain, false), Some(Format::Plain), "{plain:?}");
        }
        let starts = [
            &b""[..],
            b"\x1f",
            b"\x28\xb5\x2f",
            b"\xfd7zXZ",
            b"BZh",
            b"BZh51AY&S",
            b"\x04\x22",
            b"\x50\x2a\x4d\x18\x00\x00\x00",
            b"\x02\x21\x4c",
            b"\x1f",
            b"\x5d\x00\x00\x80\x00\xff\xff\xff\xff\xff\xff\xff",
        ];
        for start in starts {
            assert_eq!(sniff(start, false), None, "{start:?} may begin a magic");
            assert_eq!(
                format(start, true),
                Some(Format::Plain),
                "but the source ended"
            );
        }
    }

    #[test]
    fn a_file_is_sniffed_where_it_stands() {
        let path = testing::path("sniff");
        std::fs::write(&path, gzip(b"x\n")).unwrap();
        let regular = |file: &File| super::super::tests::regular(file.try_clone().unwrap());
        let file = File::open(&path).unwrap();
        assert_eq!(sniff_file(&regular(&file)).unwrap(), Format::Gzip);
        let mut all = Vec::new();
        (&file).read_to_end(&mut all).unwrap();
        assert_eq!(all, gzip(b"x\n"), "the offset did not move");
        std::fs::write(&path, b"\x1f").unwrap();
        let file = File::open(&path).unwrap();
        assert_eq!(sniff_file(&regular(&file)).unwrap(), Format::Plain);
        std::fs::write(
            &path,
            [
                &b"plain\n"[..],
                &::zstd::encode_all(&b"z\n"[..], 3).unwrap(),
            ]
            .concat(),
        )
        .unwrap();
        let mut file = File::open(&path).unwrap();
        assert_eq!(sniff_file(&regular(&file)).unwrap(), Format::Plain);
        file.seek(io::SeekFrom::Start(6)).unwrap();
        assert_eq!(
            sniff_file(&regular(&file)).unwrap(),
            Format::Zstd,
            "from the offset on"
        );
        assert_eq!(file.stream_position().unwrap(), 6, "which did not move");
        std::fs::remove_file(&path).unwrap();
    }

    /// A FILE's skippable frames are passed over by their lengths, from the FILE's offset on,
    /// to the frame after them: LZ4's, here, where a FILE of skippable frames alone is zstd's.
    #[test]
    fn a_files_skippable_frames_are_passed_over_to_the_frame_after_them() {
        let frames = [
            super::super::tests::skippable(b"first"),
            super::super::tests::skippable(&[0; 300]),
            super::super::tests::lz4(b"line\n"),
        ]
        .concat();
        for before in [&b""[..], b"plain\n"] {
            let mut file = super::super::tests::file_of(&[before, &frames].concat());
            file.seek(io::SeekFrom::Start(before.len() as u64)).unwrap();
            let regular = super::super::tests::regular(file);
            let sniffed = within_for(IN_MEMORY, "sniffing", move || sniff_file(&regular));
            assert_eq!(
                sniffed.unwrap(),
                Format::Lz4,
                "{} bytes before",
                before.len()
            );
        }
    }

    /// A FILE shorter than a magic from its offset on is sniffed on what it holds, read to its
    /// end: here an LZMA-alone header that lacks its last byte, plain.
    #[test]
    fn a_file_shorter_than_a_magic_is_sniffed_on_what_it_holds() {
        let header_less_one = b"\x5d\x00\x00\x80\x00\xff\xff\xff\xff\xff\xff\xff";
        let mut file = super::super::tests::file_of(&[&b"p"[..], header_less_one].concat());
        file.seek(io::SeekFrom::Start(1)).unwrap();
        let regular = super::super::tests::regular(file);
        assert_eq!(sniff_file(&regular).unwrap(), Format::Plain);
    }
}
