//! LZ4's frames and its legacy frames (`lz4 -l`): their magics, and the readers that decode
//! them as `lz4 -dc` does around lz4_flex.

use std::io::{self, BufRead, BufReader, Read};

use super::incomplete_frame;
use super::source::Sniffed;

/// An LZ4 frame's magic, little-endian.
pub(super) const FRAME_MAGIC: u32 = 0x184d_2204;

/// LZ4 frames one after another, skippable frames skipped, as `lz4 -dc` reads them. lz4_flex's
/// `FrameDecoder` decodes frames but needs three things done around it: it stops with an error
/// at a skippable frame (skipped here), it takes the input's end at a frame's start for the end of
/// the frame before (so a frame starts only where input is left), and it ends a frame that the
/// input ends inside, between blocks, as if it were whole (so any end of input it meets fails).
pub(super) struct Lz4Frames {
    decoder: lz4_flex::frame::FrameDecoder<EndSeen<BufReader<Sniffed>>>,
    /// The last frame ended whole (or none has begun): the next may start.
    between_frames: bool,
}

impl Lz4Frames {
    pub(super) fn new(input: BufReader<Sniffed>) -> Self {
        let input = EndSeen { input, seen: false };
        Lz4Frames {
            decoder: lz4_flex::frame::FrameDecoder::new(input),
            between_frames: true,
        }
    }

    pub(super) fn source(&mut self) -> &mut Sniffed {
        self.decoder.get_mut().input.get_mut()
    }

    fn input(&mut self) -> &mut BufReader<Sniffed> {
        &mut self.decoder.get_mut().input
    }
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
pub(super) struct Lz4Legacy {
    input: BufReader<Sniffed>,
    /// The block read, compressed.
    block: Vec<u8>,
    /// The block decoded, and how much of it has been read.
    decoded: Vec<u8>,
    at: usize,
}

/// The most a legacy block decodes to.
const LEGACY_BLOCK: usize = 8 << 20;

/// The legacy frame's magic, little-endian.
pub(super) const LEGACY_MAGIC: u32 = 0x184c_2102;

impl Lz4Legacy {
    pub(super) fn new(input: BufReader<Sniffed>) -> Self {
        Lz4Legacy {
            input,
            block: Vec::new(),
            decoded: Vec::new(),
            at: 0,
        }
    }

    pub(super) fn source(&mut self) -> &mut Sniffed {
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
    use super::super::tests::{input, lz4, lz4_legacy, read_all, skippable, text};
    use super::*;

    /// LZ4 frames follow one another with skippable frames among them; input that ends inside
    /// a frame (its header, a block, between its blocks) or inside a skippable frame is an
    /// incomplete frame.
    #[test]
    fn lz4_frames_pass_skippable_frames_and_tell_a_cut_frame() {
        let (first, second) = (text(0..5000), text(5000..10_000));
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
        // Inside the first frame's header, and inside its first block, which lz4_flex tells as
        // an end it did not expect.
        let in_header = &frames[..skippable(b"first").len() + 5];
        let in_block = &frames[..skippable(b"first").len() + 100];
        for cut in [between_blocks, in_skippable, in_header, in_block] {
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
