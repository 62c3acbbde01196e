//! The walk through a regular file's zstd frames or BGZF members: where each ends, found
//! without decoding it, a few `pread`s of a few bytes each, so that decoders can take them apart.
//! Where a part ends is its format's own knowledge, asked of [`zstd`] and [`bgzf`]; the walk reads
//! the file for them and groups BGZF members into runs.

use std::fs::File;
use std::io::{self, Seek};
use std::ops::Range;
use std::os::unix::fs::FileExt;

use super::BUFFER;
use super::bgzf::{self, GZIP};
use super::format::Format;
use super::zstd;

/// The compressed bytes of BGZF members a decoder takes at a time, whole members: `bgzip`'s are
/// at most 64 KiB, which would hand on a piece for each 64 KiB decoded.
pub(super) const RUN: u64 = BUFFER as u64;

/// The formats whose parts the walk can find without decoding.
#[derive(Debug, Clone, Copy)]
pub(super) enum Parts {
    /// zstd frames, skippable frames among them.
    Zstd,
    /// gzip members with BGZF's `BC` subfield.
    Bgzf,
}

impl Parts {
    /// The parts a file of `format` may hold.
    pub(super) fn of(format: Format) -> Option<Parts> {
        match format {
            Format::Zstd => Some(Parts::Zstd),
            Format::Gzip => Some(Parts::Bgzf),
            _ => None,
        }
    }

    /// The format the one decoder decodes what the walk cannot follow as.
    pub(super) fn format(self) -> Format {
        match self {
            Parts::Zstd => Format::Zstd,
            Parts::Bgzf => Format::Gzip,
        }
    }
}

/// What comes next in the file, walked to without decoding.
#[derive(Debug)]
pub(super) enum Part {
    /// A zstd frame (skippable frames before it passed over) or a run of BGZF members: these
    /// bytes of the file.
    Frame(Range<u64>),
    /// Something the walk cannot make sense of, from this offset on.
    Rest(u64),
    /// The file's end, at this offset.
    End(u64),
}

/// Where the walk through a file's frames or members stands.
#[derive(Debug)]
pub(super) struct Walk {
    /// What the parts are.
    parts: Parts,
    /// Where the next frame (or skippable frame) begins.
    pub(super) at: u64,
    /// The file's size when last looked at.
    size: u64,
}

impl Walk {
    /// A walk from `source`'s offset on.
    pub(super) fn new(source: &File, parts: Parts) -> io::Result<Self> {
        Ok(Walk {
            parts,
            at: (&*source).stream_position()?,
            size: source.metadata()?.len(),
        })
    }

    /// The next part to decode: a zstd frame, or BGZF members one after another, [`RUN`] bytes
    /// or a few more; else what [`next_part`](Self::next_part) found.
    pub(super) fn next(&mut self, source: &File) -> Part {
        match (self.parts, self.next_part(source)) {
            (Parts::Bgzf, Part::Frame(mut members)) => {
                // What the walk cannot follow stays where it is, for the next call to find.
                while members.end - members.start < RUN
                    && let Part::Frame(member) = self.next_part(source)
                {
                    members.end = member.end;
                }
                Part::Frame(members)
            }
            (_, part) => part,
        }
    }

    /// The next zstd frame (skippable frames passed over) or BGZF member; the rest of the file,
    /// when what is next is not a part whose end can be found within the file; or the file's end.
    fn next_part(&mut self, source: &File) -> Part {
        loop {
            if self.at >= self.size {
                // A file still being written may have grown, as a reader's next read would find.
                match source.metadata() {
                    Ok(metadata) if metadata.len() > self.size => self.size = metadata.len(),
                    _ => return Part::End(self.at),
                }
            }
            let number = |at, length| self.number(source, at, length);
            let Some(magic) = number(self.at, 4) else {
                return Part::Rest(self.at);
            };
            let (end, skipped) = match (self.parts, magic) {
                (Parts::Zstd, zstd::MAGIC) => (zstd::frame_end(self.at, number), false),
                (Parts::Zstd, magic) if zstd::SKIPPABLE.contains(&magic) => {
                    (zstd::skippable_end(self.at, number), true)
                }
                (Parts::Bgzf, magic) if magic & 0xff_ffff == GZIP => {
                    let read = |at, bytes: &mut [u8]| self.read(source, at, bytes);
                    (
                        bgzf::member_end(self.at, self.size.saturating_sub(self.at), read),
                        false,
                    )
                }
                _ => (None, false),
            };
            let Some(end) = end.filter(|&end| end <= self.size) else {
                return Part::Rest(self.at);
            };
            let start = std::mem::replace(&mut self.at, end);
            if !skipped {
                return Part::Frame(start..end);
            }
        }
    }

    /// The little-endian number in the `length` bytes (at most 8) at `at`, or `None` where the
    /// file ends before them or cannot be read.
    fn number(&self, source: &File, at: u64, length: usize) -> Option<u64> {
        let mut bytes = [0; 8];
        self.read(source, at, &mut bytes[..length])?;
        Some(u64::from_le_bytes(bytes))
    }

    /// Fills `bytes` from the file at `at`, or `None` where the file ends before them or cannot
    /// be read.
    fn read(&self, source: &File, at: u64, bytes: &mut [u8]) -> Option<()> {
        let within = at.checked_add(bytes.len() as u64)? <= self.size;
        (within && source.read_exact_at(bytes, at).is_ok()).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bgzf_member, file_of, frame, random, skippable, text};
    use super::*;
    use pipelines_testing::{IN_MEMORY, gzip, within_for};

    /// A file that grows while it is walked is walked to its new end, as a reader's next read
    /// would find it.
    #[test]
    fn a_file_that_grows_is_walked_to_its_new_end() {
        use std::os::unix::fs::FileExt;
        let (first, second) = (frame(b"first\n", |_| {}), frame(b"second\n", |_| {}));
        let (one, both) = (first.len() as u64, (first.len() + second.len()) as u64);
        let file = file_of(&first);
        let mut walk = Walk::new(&file, Parts::Zstd).unwrap();
        assert!(matches!(walk.next(&file), Part::Frame(frame) if frame == (0..one)));
        file.write_all_at(&second, one).unwrap();
        assert!(matches!(walk.next(&file), Part::Frame(frame) if frame == (one..both)));
        assert!(matches!(walk.next(&file), Part::End(end) if end == both));
    }

    /// A gzip file is walked for BGZF members (where it has none, the walk leaves it to one
    /// decoder), a zstd file for frames; no other format is walked, each being one decoder's.
    #[test]
    fn gzip_and_zstd_files_alone_are_walked() {
        assert!(matches!(Parts::of(Format::Gzip), Some(Parts::Bgzf)));
        assert!(matches!(Parts::of(Format::Zstd), Some(Parts::Zstd)));
        assert_eq!(Parts::Bgzf.format(), Format::Gzip);
        assert_eq!(Parts::Zstd.format(), Format::Zstd);
        use Format::{Bzip2, Compress, Lz4, Lz4Legacy, Lzma, Plain, Xz};
        for format in [Xz, Lzma, Bzip2, Lz4, Lz4Legacy, Compress, Plain] {
            assert!(Parts::of(format).is_none(), "{format:?}");
        }
    }

    /// Every part of `bytes`, walked.
    fn walked(bytes: &[u8]) -> Vec<String> {
        walked_as(bytes, Parts::Zstd)
    }

    /// Every part of `bytes` holding `parts`, walked, under the deadline: a walk that does not
    /// move on fails its test.
    fn walked_as(bytes: &[u8], parts: Parts) -> Vec<String> {
        let file = file_of(bytes);
        within_for(IN_MEMORY, "walking", move || {
            let mut walk = Walk::new(&file, parts).unwrap();
            let mut parts = Vec::new();
            loop {
                let part = walk.next(&file);
                parts.push(format!("{part:?}"));
                if !matches!(part, Part::Frame(_)) {
                    return parts;
                }
            }
        })
    }

    /// Each kind of frame header and block ends where the encoder ended it: a single segment's
    /// content size in fields of 1, 2 and 4 bytes, a window descriptor with no content size, a
    /// checksum, raw, RLE and compressed blocks, an empty frame, skippable frames between.
    #[test]
    fn the_walk_finds_where_each_frame_ends() {
        let random: Vec<u8> = (0..300_000u32)
            .map(|n| (n.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let sized = |bytes: &[u8], checksum: bool| {
            frame(bytes, |encoder| {
                encoder
                    .set_pledged_src_size(Some(bytes.len() as u64))
                    .unwrap();
                encoder.include_checksum(checksum).unwrap();
            })
        };
        let frames = [
            sized(b"", false),
            sized(&text(0..100), false),
            sized(&text(0..20_000), true),
            frame(&[b'a'; 300_000], |_| {}),
            sized(&random, true),
            frame(&random, |encoder| {
                encoder.include_checksum(true).unwrap();
            }),
        ];
        let mut bytes = skippable(b"first");
        let mut expected = Vec::new();
        for frame in &frames {
            let start = bytes.len() as u64;
            bytes.extend_from_slice(frame);
            expected.push(format!("Frame({start}..{})", bytes.len()));
            bytes.extend_from_slice(&skippable(&[7; 9]));
        }
        expected.push(format!("End({})", bytes.len()));
        assert_eq!(walked(&bytes), expected);
        // The descriptors the cases were made to have.
        let descriptors: Vec<u8> = frames.iter().map(|frame| frame[4]).collect();
        assert_eq!(descriptors, [0x20, 0x60, 0xa4, 0x00, 0xa4, 0x04]);
    }

    /// What a decoder of its own could not decode alone, or the walk cannot find the end of, is
    /// left to the one decoder from there on.
    #[test]
    fn the_walk_leaves_the_rest_where_it_cannot_go_on() {
        let whole = frame(&text(0..1000), |_| {});
        let at = whole.len();
        // A frame that names a dictionary: its descriptor says a one-byte ID follows.
        let mut with_dictionary = whole.clone();
        with_dictionary[4] |= 1;
        let wide = frame(&text(0..1000), |encoder| {
            encoder.include_contentsize(false).unwrap();
            encoder.window_log(24).unwrap();
        });
        let cases = [
            [&whole[..], &whole[..whole.len() - 1]].concat(),
            [&whole[..], b"garbage"].concat(),
            [&whole[..], &with_dictionary].concat(),
            [&whole[..], &wide].concat(),
            [&whole[..], &skippable(b"cut")[..10]].concat(),
            [&whole[..], &whole[..3]].concat(),
            // Neither a frame's magic nor a skippable frame's, with a length after it that would
            // end within the file.
            [&whole[..], b"ABCD", &[0; 4]].concat(),
        ];
        for (n, bytes) in cases.iter().enumerate() {
            let expected = [format!("Frame(0..{at})"), format!("Rest({at})")];
            assert_eq!(walked(bytes), expected, "case {n}");
        }
    }

    /// Members are found by their `BC` fields, another field before it or not, and walked in runs
    /// of [`RUN`] bytes or a few more.
    #[test]
    fn the_walk_finds_bgzf_members_in_runs() {
        // Random bytes: members of about 60 KiB, more than four to a run.
        let members: Vec<Vec<u8>> = (0..6)
            .map(|n| bgzf_member(&random(60_000 + n), n % 2 * 5, None))
            .collect();
        let sizes: Vec<usize> = members.iter().map(Vec::len).collect();
        assert!(sizes.iter().all(|&size| size > 60_000), "{sizes:?}");
        let run: usize = sizes[..5].iter().sum();
        let bytes = members.concat();
        let expected = [
            format!("Frame(0..{run})"),
            format!("Frame({run}..{})", bytes.len()),
            format!("End({})", bytes.len()),
        ];
        assert_eq!(walked_as(&bytes, Parts::Bgzf), expected);
        // bgzip's last member, empty: a run of its own at the end.
        let empty = bgzf_member(b"", 0, None);
        let with_empty = [&bytes[..], &empty].concat();
        let expected = [
            format!("Frame(0..{run})"),
            format!("Frame({run}..{})", with_empty.len()),
            format!("End({})", with_empty.len()),
        ];
        assert_eq!(walked_as(&with_empty, Parts::Bgzf), expected);
    }

    /// A run that reaches [`RUN`] bytes exactly ends there: the next member starts the next run,
    /// which members join until it reaches [`RUN`] bytes counted from its own start.
    #[test]
    fn a_run_of_exactly_run_bytes_ends_there() {
        let members: Vec<Vec<u8>> = (0..4)
            .map(|n| bgzf_member(&random(60_000 + n), 0, None))
            .collect();
        let short = RUN as usize - members.iter().map(Vec::len).sum::<usize>();
        // The last member made up to `RUN` by a subfield before `BC`: 4 bytes and `before`.
        let last = bgzf_member(&random(10_000), 0, None);
        let before = short - last.len() - 4;
        let last = bgzf_member(&random(10_000), before, None);
        let run = [members.concat(), last].concat();
        assert_eq!(run.len() as u64, RUN);
        // Three small members after it: the next run's, all of them.
        let next: Vec<u8> = (0..3)
            .flat_map(|n| bgzf_member(&text(n..n + 9), 0, None))
            .collect();
        let bytes = [run, next].concat();
        let expected = [
            format!("Frame(0..{RUN})"),
            format!("Frame({RUN}..{})", bytes.len()),
            format!("End({})", bytes.len()),
        ];
        assert_eq!(walked_as(&bytes, Parts::Bgzf), expected);
    }

    /// A member whose end the walk cannot find within the file is left to the one decoder, from
    /// there on: one without a `BC` field, cut, garbage, a size shorter than a member can be.
    #[test]
    fn the_walk_leaves_the_rest_at_a_member_without_its_size() {
        let text = text(0..1000);
        let whole = bgzf_member(&text, 0, None);
        let at = whole.len();
        let mut wrong_length = bgzf_member(&text, 0, None);
        // The `BC` field's length, 2, made 3.
        wrong_length[14] = 3;
        let cases = [
            [&whole[..], &gzip(&text)].concat(),
            [&whole[..], &whole[..whole.len() - 1]].concat(),
            [&whole[..], b"garbage"].concat(),
            [&whole[..], &bgzf_member(&text, 0, Some(20))].concat(),
            [&whole[..], &wrong_length].concat(),
            // Cut inside the header's fixed part, and inside its extra field.
            [&whole[..], &whole[..8]].concat(),
            [&whole[..], &whole[..15]].concat(),
            // A member's header and `BC` field whole after another magic.
            [&whole[..], b"\x1e", &whole[1..]].concat(),
        ];
        for (n, bytes) in cases.iter().enumerate() {
            let expected = [format!("Frame(0..{at})"), format!("Rest({at})")];
            assert_eq!(walked_as(bytes, Parts::Bgzf), expected, "case {n}");
        }
        assert_eq!(walked_as(&gzip(&text), Parts::Bgzf), ["Rest(0)"]);
    }
}
