//! One part of a regular file decoded into pieces, by one decoder of the pool
//! ([`pool`](super::pool)) or by the one thread of a file of BGZF members: a zstd frame by
//! libzstd's raw decoder, or a run of BGZF members. A member with `bgzip`'s own header is decoded
//! whole by libdeflate ([`SizedMember`]), into the piece, when it decodes whole and exactly; from
//! the first one that does not, flate2's `GzDecoder`, the decoder inside the one-decoder path's
//! `MultiGzDecoder`, decodes the run's members, so faults read the same. A part that ends
//! elsewhere than the walk found (a member whose deflate data ends elsewhere than its `BC` size
//! says, a frame libzstd ends elsewhere) is decoded to where it ends, as one decoder would, and
//! the rest is left to one decoder from there.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::ops::Range;
use std::os::unix::fs::FileExt;

use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

use super::bgzf::bgzip_member;
use super::gzip::GzipMembers;
use super::handoff::Out;
use super::sized::SizedMember;
use super::{Failure, incomplete_frame};
use fd_facts::read_at;

/// How a run of members, or a frame, ended short of a fault.
pub(super) enum RunEnded {
    /// At its end, as the walk found.
    Whole,
    /// Elsewhere, at this offset: the rest of the file is the one decoder's.
    Rest(u64),
    /// The reader has gone.
    ReaderGone,
}

/// Decodes the zstd frame in `frame` of the file into `out`, the bytes before a failure too.
/// `input` is room to read into. Where libzstd ends the frame elsewhere than the walk found, the
/// frame is decoded to libzstd's end, reading past the walk's if it wants more, and the rest is
/// the one decoder's from there: the bytes and the words are then the one decoder's, which
/// decodes the same frame from the same start.
pub(super) fn decode_frame(
    source: &File,
    frame: Range<u64>,
    decoder: &mut Decoder<'static>,
    input: &mut [u8],
    out: &mut impl Out,
) -> Result<RunEnded, Failure> {
    decoder.reinit().map_err(Failure::Decompressing)?;
    let (mut at, mut read, mut used) = (frame.start, 0, 0);
    // libzstd took every byte read and made nothing of them: it wants more.
    let mut starved = false;
    loop {
        if used == read && (at < frame.end || starved) {
            let wanted = match at < frame.end {
                true => input.len().min((frame.end - at) as usize),
                false => input.len(),
            };
            read = read_at(source, &mut input[..wanted], at).map_err(Failure::Reading)?;
            if read == 0 {
                // The file ends inside the frame (it shrank after the walk, or the frame is longer
                // than the walk found), as the one decoder finds it.
                return Err(Failure::Decompressing(incomplete_frame()));
            }
            (at, used) = (at + read as u64, 0);
        }
        let Some(room) = out.room() else {
            return Ok(RunEnded::ReaderGone);
        };
        let mut from = InBuffer::around(&input[used..read]);
        let mut into = OutBuffer::around(room);
        let hint = decoder.run(&mut from, &mut into);
        let made = into.pos();
        used += from.pos();
        let ended = match hint {
            Err(error) => Some(Err(Failure::Decompressing(error))),
            Ok(0) => {
                let end = at - (read - used) as u64;
                Some(Ok(match end == frame.end {
                    true => RunEnded::Whole,
                    false => RunEnded::Rest(end),
                }))
            }
            Ok(_) => {
                starved = made == 0 && from.pos() == 0 && used == read;
                None
            }
        };
        if !out.filled(made) {
            return Ok(RunEnded::ReaderGone);
        }
        if let Some(ended) = ended {
            return ended;
        }
    }
}

/// Decodes the gzip members in `members` of the file into `out`, the bytes before a failure too,
/// member after member from where the last ended, as the one decoder would decode them there;
/// says where the last ended if elsewhere than `members`' end, for the one decoder to go on from.
///
/// Members with `bgzip`'s own header are decoded by `sized` (where there is one) from `input`,
/// which the members are read into, straight into `out`'s room; from the first member it does
/// not decode whole (another header, a size or trailer that does not hold, damage) flate2's
/// `GzDecoder` decodes them, so that what is wrong reads as the one decoder would say it.
pub(super) fn decode_members(
    source: &File,
    members: Range<u64>,
    sized: Option<&mut SizedMember>,
    input: &mut Vec<u8>,
    out: &mut impl Out,
) -> Result<RunEnded, Failure> {
    let mut at = members.start;
    input.resize((members.end - members.start) as usize, 0);
    // A read that fails, or finds the file shrunk, is left to `GzDecoder`'s reads to tell.
    if let Some(sized) = sized
        && source.read_exact_at(input, members.start).is_ok()
    {
        let mut rest = &input[..];
        while let Some((member, size)) = bgzip_member(rest) {
            // A member whole in one piece: the piece is handed on short where it does not fit,
            // and the next has room for a member, [`MOST_CARRIED`] less than a [`BUFFER`].
            let Some(room) = out.room_for(size) else {
                return Ok(RunEnded::ReaderGone);
            };
            if !sized.decode(member, &mut room[..size]) {
                break;
            }
            if !out.filled(size) {
                return Ok(RunEnded::ReaderGone);
            }
            at += member.len() as u64;
            rest = &rest[member.len()..];
        }
    }
    if at < members.end {
        let from = FileAt {
            source,
            at,
            failed: None,
        };
        // The members' bytes in one read; a member longer than its size says reads on.
        let mut reader = BufReader::with_capacity((members.end - at) as usize, from);
        while at < members.end {
            let mut member = GzipMembers::one(&mut reader, out.spares());
            loop {
                let Some(room) = out.room() else {
                    return Ok(RunEnded::ReaderGone);
                };
                match member.read(room) {
                    Ok(0) => break,
                    Ok(read) if out.filled(read) => {}
                    Ok(_) => return Ok(RunEnded::ReaderGone),
                    Err(error) => {
                        let from = member.get_mut().get_mut();
                        return Err(match from.failed.take() {
                            Some(failed) => Failure::Reading(failed),
                            None => Failure::Decompressing(error),
                        });
                    }
                }
            }
            drop(member);
            at = reader.get_ref().at - reader.buffer().len() as u64;
        }
    }
    Ok(match at == members.end {
        true => RunEnded::Whole,
        false => RunEnded::Rest(at),
    })
}

/// The file read from an offset on, a failed read kept, so that it is told as the source's
/// failure rather than the decoder's.
struct FileAt<'a> {
    source: &'a File,
    at: u64,
    failed: Option<io::Error>,
}

impl Read for FileAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = read_at(self.source, buf, self.at).map_err(|error| {
            let kind = error.kind();
            self.failed = Some(error);
            io::Error::from(kind)
        })?;
        self.at += read as u64;
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::super::format::Format;
    use super::super::handoff::{Filling, Kept};
    use super::super::spares::SpareBuffers;
    use super::super::tests::{
        bgzf_member, decoded_file, file_of, frame, random, reason, streamed, text,
    };
    use super::super::{BUFFER, ONE};
    use super::*;
    use pipelines_testing::{counting_reads, within};

    /// What [`decode_frame`] makes of the frame the walk found at `frame` in a file of `bytes`:
    /// the bytes it hands on, and how it ends.
    fn frame_decoded(bytes: &[u8], frame: Range<u64>) -> (Vec<u8>, String) {
        let source = file_of(bytes);
        within("a frame's decoding", move || {
            frame_decoded_from(&source, frame, 1000)
        })
    }

    /// [`frame_decoded`] from a file open already, read into `room` bytes at a time.
    fn frame_decoded_from(source: &File, frame: Range<u64>, room: usize) -> (Vec<u8>, String) {
        let mut decoder = Decoder::new().unwrap();
        let mut out = Filling::new(Kept::new(usize::MAX, SpareBuffers::default()));
        let ended = decode_frame(source, frame, &mut decoder, &mut vec![0; room], &mut out);
        out.flush();
        let decoded = out
            .buffers
            .buffers
            .iter()
            .flat_map(|buffer| buffer.held())
            .copied();
        let ended = match ended {
            Ok(RunEnded::Whole) => "whole".to_owned(),
            Ok(RunEnded::Rest(at)) => format!("rest at {at}"),
            Ok(RunEnded::ReaderGone) => "reader gone".to_owned(),
            Err(failure) => reason(Err(failure)),
        };
        (decoded.collect(), ended)
    }

    /// CONTRACT §12.3: a zstd frame that libzstd ends elsewhere than the walk found, earlier or
    /// later, is decoded to libzstd's end, and the rest is the one decoder's from there: the
    /// bytes and words are the one decoder's. Both were failures of words of their own.
    #[test]
    fn a_frame_libzstd_ends_elsewhere_than_the_walk_leaves_the_rest_to_one_decoder() {
        let (first, second) = (text(0..3000), text(3000..4000));
        // With a checksum: a walk that ends before it leaves libzstd wanting more after a call
        // that took the last bytes walked and made bytes of them.
        let frames = [
            frame(&first, |encoder| encoder.include_checksum(true).unwrap()),
            zstd::encode_all(&second[..], 3).unwrap(),
        ];
        let bytes = frames.concat();
        let end = frames[0].len() as u64;
        let rest = format!("rest at {end}");
        for walked in [end, end - 3, end - 4, end + 5, 1] {
            let (out, ended) = frame_decoded(&bytes, 0..walked);
            assert!(out == first, "walked to {walked}: not the frame's bytes");
            let want = if walked == end {
                "whole".to_owned()
            } else {
                rest.clone()
            };
            assert_eq!(ended, want, "walked to {walked}");
        }
        // The file ends inside the frame, past the walk's end: as the one decoder says it.
        let cut = &frames[0][..frames[0].len() - 2];
        let (out, ended) = frame_decoded(cut, 0..end - 5);
        let (one_out, one_ended) = decoded_file(file_of(cut), Format::Zstd, ONE);
        assert!(out == one_out);
        assert_eq!(ended, reason(one_ended));
    }

    /// That `read`, a count of [`counting_reads`], is `want` bytes: or one more, as glibc's
    /// `malloc` reads a byte of `/proc/sys/vm/overcommit_memory` once a process, on the thread
    /// that first gives back memory of a heap of its own (seen in a quarter of runs).
    fn assert_read(read: u64, want: u64, what: &str) {
        let glibcs = 1;
        let ours = want..=want + glibcs;
        assert!(ours.contains(&read), "{what}: {read} bytes read of {want}");
    }

    /// A frame the walk found whole is read to its end and no further: the part's bytes alone,
    /// the next frame being another decoder's to read, whether libzstd has taken every byte
    /// read while it still has decoded bytes to hand on (a frame that shrinks well) or not. A
    /// frame that decodes past a piece is decoded whole: libzstd stops where a piece's room is
    /// full, and what it left of the input is kept for the next.
    #[test]
    fn a_frame_is_read_to_the_walks_end_and_no_further() {
        for (n, first) in [random(700_000), text(0..200_000)].into_iter().enumerate() {
            let frames = [
                zstd::encode_all(&first[..], 3).unwrap(),
                zstd::encode_all(&text(0..1000)[..], 3).unwrap(),
            ];
            let end = frames[0].len() as u64;
            let source = file_of(&frames.concat());
            // Read as the pool reads, a piece's worth at a time, and in small reads.
            for room in [BUFFER, 1000] {
                let source = source.try_clone().unwrap();
                let ((out, ended), read) = within("a frame's decoding", move || {
                    counting_reads(|| frame_decoded_from(&source, 0..end, room))
                });
                assert!(out == first, "{n}, {room}: {} bytes", out.len());
                assert_eq!(ended, "whole", "{n}, {room}");
                let what = format!("frame {n}, read {room} bytes at a time");
                assert_read(read, end, &what);
            }
        }
    }

    /// What [`decode_members`] hands on of a run of `members`: the decoded bytes, and the
    /// failure's reason or the offset the rest is left at, if any.
    fn run_decoded(members: &[u8]) -> (Vec<u8>, Option<String>) {
        let ((pieces, ended), _) = run_decoded_in(members, 0..members.len() as u64);
        (pieces.concat(), ended)
    }

    /// What [`decode_members`] hands on of the run of members at `run` in a file of `bytes`,
    /// as [`run_decoded`] tells it, and how many bytes it read.
    fn run_decoded_in(bytes: &[u8], run: Range<u64>) -> ((Vec<Vec<u8>>, Option<String>), u64) {
        let source = file_of(bytes);
        within("a run's decoding", move || {
            counting_reads(|| {
                let mut out = Filling::new(Kept::new(usize::MAX, SpareBuffers::default()));
                let mut sized = SizedMember::new();
                let ended = decode_members(&source, run, sized.as_mut(), &mut Vec::new(), &mut out);
                out.flush();
                let pieces = (out.buffers.buffers.iter()).map(|buffer| buffer.held().to_vec());
                let ended = match ended {
                    Ok(RunEnded::Whole) => None,
                    Ok(RunEnded::Rest(at)) => Some(format!("rest at {at}")),
                    Ok(RunEnded::ReaderGone) => Some("reader gone".to_owned()),
                    Err(failure) => Some(reason(Err(failure))),
                };
                (pieces.collect(), ended)
            })
        })
    }

    /// A run the walk found after other bytes is read once, from its start to its end.
    #[test]
    fn a_run_after_other_bytes_is_read_once() {
        let texts: Vec<Vec<u8>> = (0..3).map(|n| text(n * 1000..n * 1000 + 1000)).collect();
        let members: Vec<u8> = texts.iter().flat_map(|t| bgzf_member(t, 0, None)).collect();
        let before = b"not this run's";
        let bytes = [&before[..], &members].concat();
        let run = before.len() as u64..bytes.len() as u64;
        let ((pieces, ended), read) = run_decoded_in(&bytes, run);
        assert_eq!((pieces.concat(), ended), (texts.concat(), None));
        assert_read(read, members.len() as u64, "the run");
    }

    /// Members decoded whole share a piece while they fit in it, one filling it exactly too;
    /// one that does not fit starts the next.
    #[test]
    fn members_decoded_whole_share_a_piece_while_they_fit() {
        // Lines end where members do: no partial line is carried from a piece to the next.
        let line = [&[b'x'; 63][..], b"\n"].concat();
        let quarter = line.repeat(BUFFER / 4 / line.len());
        let fifth = line.repeat(BUFFER / 5 / line.len());
        for (texts, lengths) in [
            (vec![&quarter[..]; 5], vec![BUFFER, BUFFER / 4]),
            (
                vec![&fifth, &quarter, &quarter, &quarter, &fifth],
                vec![fifth.len() + 3 * quarter.len(), fifth.len()],
            ),
        ] {
            let members: Vec<u8> = texts.iter().flat_map(|t| bgzf_member(t, 0, None)).collect();
            let ((pieces, ended), _) = run_decoded_in(&members, 0..members.len() as u64);
            assert_eq!(ended, None);
            let pieces_lengths: Vec<usize> = pieces.iter().map(Vec::len).collect();
            assert_eq!(pieces_lengths, lengths);
            assert!(pieces.concat() == texts.concat());
        }
    }

    /// A run's members are decoded whole until the first that libdeflate cannot decode whole,
    /// then by `GzDecoder`: a fault in either reads as the one decoder tells it, after the bytes
    /// of every member before it.
    #[test]
    fn a_run_decodes_members_whole_until_one_it_cannot() {
        // More than a piece decoded before the member with a subfield before `BC`.
        let texts: Vec<Vec<u8>> = (0..12).map(|n| random(30_000 + n * 1000)).collect();
        let mut members: Vec<Vec<u8>> = texts.iter().map(|t| bgzf_member(t, 0, None)).collect();
        members[10] = bgzf_member(&texts[10], 3, None);
        assert_eq!(run_decoded(&members.concat()), (texts.concat(), None));
        for n in [0, 4, 11] {
            let mut damaged = members.clone();
            let middle = damaged[n].len() / 2;
            damaged[n][middle] ^= 0x55;
            let damaged = damaged.concat();
            let (one, one_ended) = streamed(&damaged);
            assert!(
                one.starts_with(&texts[..n].concat()),
                "member {n}: {}",
                one.len()
            );
            assert!(
                run_decoded(&damaged) == (one, Some(reason(one_ended))),
                "member {n}"
            );
        }
    }
}
