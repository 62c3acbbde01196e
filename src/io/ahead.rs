//! `-z` with more than one decoder (`--decoders`): the compressed regular FILEs after the one
//! read are decoded ahead, each on a thread of its own, while the one read is rendered, and each
//! is handed to the driver at its turn, in input order (docs/CONTRACT.md §12.5). Which sources
//! may be decoded ahead is [`Sources::ahead`](crate::io::sources::Sources::ahead); this is the
//! I/O that finds which of them are, and keeps their decodings until their turn.
//!
//! Why only compressed regular files: their bytes are there whenever they are read, so reading
//! them early reads what their turn would read, and a failure found early can wait for its turn.
//! Stdin, pipes, FIFOs, terminals and `/proc` files are read when their turn comes, as `cat`
//! reads them; a plain file gains nothing from a thread.
//!
//! Nothing found ahead is reported: each source is opened again at its turn and reported from
//! there exactly as without decoding ahead, and a decoding's failure travels with its decoded
//! bytes, told when they end.

use std::collections::VecDeque;
use std::fs::{File, Metadata, OpenOptions};
use std::num::NonZeroUsize;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use rustix::fs::OFlags;

use crate::io::decode::{self, DecodedFile, Decoding, Format, Regular};
use crate::io::fd;
use crate::io::sources::Source;

/// The decodings ahead, in input order, one entry for each source after the one open that has
/// been looked at.
#[derive(Debug)]
pub struct Ahead {
    /// `Some` for each source decoded ahead, `None` for one that is not (stdin, a stream, a plain
    /// or unopenable file).
    looked: VecDeque<Option<Started>>,
    /// The most decodings under way at once, the one read's among them (`--decoders`).
    decoders: usize,
    /// The most buffers each decoder ahead holds.
    buffers: usize,
    /// The most compressed bytes of a file decoded at its turn on the reader's thread.
    decoded_here: u64,
}

impl Ahead {
    /// Decodings ahead with up to `decoders` decoding at once.
    ///
    /// Each holds `1 / decoders` of [`decode::DECODED_HELD`], and never less than a FILE decoded
    /// at its turn ([`decode::BUFFERS`]). A decoder ahead overlaps its FILE with the one read only
    /// as far as it may hold: on two cores, 16 MiB each, most of a rotated log of tens of MB.
    /// A compressed file of up to `decoded_here` bytes is not decoded ahead: it costs less on the
    /// reader's thread at its turn ([`decode::DECODED_HERE`]).
    pub fn new(decoders: NonZeroUsize, decoded_here: u64) -> Self {
        let each = decode::DECODED_HELD / decode::BUFFER / decoders.get();
        Ahead {
            looked: VecDeque::new(),
            decoders: decoders.get(),
            buffers: each.max(decode::BUFFERS),
            decoded_here,
        }
    }

    /// How many sources have been looked at ahead, for the driver's tests.
    #[cfg(test)]
    pub(super) fn looked_at(&self) -> usize {
        self.looked.len()
    }

    /// The next source's turn has come: its decoding ahead, if it has one.
    pub fn take_turn(&mut self) -> Option<Started> {
        self.looked.pop_front().flatten()
    }

    /// Looks at the sources in `window` (those after the one open that may be decoded ahead, in
    /// order) not yet looked at, and starts decoding each that is a compressed regular file and
    /// not the output, while fewer than `decoders` decodings are under way, the one read's among
    /// them if `read_decoding`. Called at each turn and after each read, so that a decoder that
    /// has ended leaves its core to the next FILE at once: on two cores a FILE decoded whole
    /// ahead was otherwise rendered at its turn beside one decoder, and the other core idled.
    pub fn look<'a>(
        &mut self,
        window: impl Iterator<Item = &'a Source>,
        output: Option<&fd::Output>,
        read_decoding: bool,
    ) {
        let under_way = self.looked.iter().flatten();
        let mut decoding = usize::from(read_decoding)
            + under_way
                .filter(|started| !started.decoding.has_ended())
                .count();
        for source in window.skip(self.looked.len()) {
            if decoding >= self.decoders {
                return;
            }
            let started = match source {
                Source::File(path) => start(path, output, self.buffers, self.decoded_here),
                Source::Stdin => None,
            };
            decoding += usize::from(started.is_some());
            self.looked.push_back(started);
        }
    }
}

/// What the file decoded ahead was: at its turn, a name that leads to another file, or to this
/// one changed, drops the decoding ahead.
#[derive(Debug, PartialEq, Eq)]
struct Identity {
    device: u64,
    inode: u64,
    size: u64,
    modified: (i64, i64),
}

impl Identity {
    /// `file`'s, if it is a regular file that holds something: a `/proc` file says it holds
    /// nothing, and is read only at its turn.
    fn of(metadata: &Metadata) -> Option<Identity> {
        (metadata.is_file() && metadata.size() > 0).then(|| Identity {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
        })
    }
}

/// A file's decoding, started ahead of its turn.
#[derive(Debug)]
pub struct Started {
    identity: Identity,
    format: Format,
    decoded: DecodedFile,
    decoding: Decoding,
}

impl Started {
    /// The decoded bytes and the decoding, if `file`, opened at its turn and sniffed as
    /// `format`, is the file decoded ahead, unchanged since: the same device, inode, size and
    /// modification time. Else `None`, and the decoding ahead is dropped (its thread ends).
    pub fn if_still(self, file: &File, format: Format) -> Option<(DecodedFile, Decoding)> {
        let same = format == self.format
            && file
                .metadata()
                .ok()
                .and_then(|metadata| Identity::of(&metadata))
                == Some(self.identity);
        same.then_some((self.decoded, self.decoding))
    }
}

/// Starts decoding `path` ahead, holding up to `buffers`, if it is a compressed regular file and
/// not the output; else `None`, whatever failed.
fn start(
    path: &Path,
    output: Option<&fd::Output>,
    buffers: usize,
    decoded_here: u64,
) -> Option<Started> {
    // Looked at before it is opened: opening a FIFO for reading, even without waiting, would let
    // a writer that waits for a reader go on, and closing it would then break the writer's pipe.
    let metadata = std::fs::metadata(path).ok()?;
    // A small file is decoded at its turn on the reader's thread, at less than a thread's cost.
    if !metadata.is_file() || metadata.len() <= decoded_here {
        return None;
    }
    // Non-blocking, in case the name now leads to a FIFO: the open must never wait.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .ok()?;
    let metadata = file.metadata().ok()?;
    let identity = Identity::of(&metadata)?;
    if output.is_some_and(|output| output.is_read_by(&metadata)) {
        return None;
    }
    // Opened by name: read from its start.
    let file = Regular::at(file, 0, metadata.len());
    let format = decode::sniff_file(&file).ok()?;
    if format == Format::Plain {
        return None;
    }
    decode::slices::ask_short();
    let (decoded, decoding) =
        decode::decode_file(file, format, buffers, NonZeroUsize::MIN, 0).ok()?;
    Some(Started {
        identity,
        format,
        decoded,
        decoding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::testing::{self, gzip};

    /// Everything `decoded` hands on.
    fn read_all(mut decoded: DecodedFile) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut buf = [0; 7];
        loop {
            match decoded.read(&mut buf) {
                0 => return bytes,
                n => bytes.extend_from_slice(&buf[..n]),
            }
        }
    }

    #[test]
    fn only_compressed_regular_files_are_decoded_ahead_each_at_its_turn() {
        let dir = testing::path("ahead");
        std::fs::create_dir_all(&dir).unwrap();
        let named = |name: &str, bytes: &[u8]| {
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            Source::File(path)
        };
        let (pipe, _reader, _writer) = testing::pipe_as_file();
        let window = [
            named("a.gz", &gzip(b"a\n")),
            named("plain", b"plain\n"),
            named("empty", b""),
            Source::File(dir.clone()),
            Source::File(dir.join("missing")),
            Source::File(pipe),
            Source::Stdin,
            named("b.gz", &gzip(b"b\n")),
        ];
        let mut ahead = Ahead::new(NonZeroUsize::new(9).unwrap(), 0);
        assert_eq!(ahead.buffers, 14, "32 MiB shared by nine: 3.5 MiB each");
        ahead.look(window.iter().take(3), None, true);
        ahead.look(window.iter(), None, true);
        let decoded_ahead: Vec<bool> = window.iter().map(|_| ahead.take_turn().is_some()).collect();
        assert_eq!(
            decoded_ahead,
            [true, false, false, false, false, false, false, true],
            "each looked at once, in order"
        );
        assert!(ahead.take_turn().is_none(), "none past the window");

        ahead.look(window.iter(), None, true);
        let Source::File(a) = &window[0] else {
            unreachable!()
        };
        let (decoded, decoding) = ahead
            .take_turn()
            .unwrap()
            .if_still(&File::open(a).unwrap(), Format::Gzip)
            .expect("the same file, unchanged");
        assert_eq!(read_all(decoded), b"a\n");
        assert!(decoding.finish().is_ok());
        let b = window.last().unwrap();
        let Source::File(b) = b else { unreachable!() };
        // The turns of the six between, none decoded ahead, then b's.
        let started = (1..window.len()).find_map(|_| ahead.take_turn()).unwrap();
        std::fs::write(b, gzip(b"b, rewritten\n")).unwrap();
        let rewritten = File::open(b).unwrap();
        assert!(started.if_still(&rewritten, Format::Gzip).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Whether the decoding of the `k`th source looked at ends.
    fn ends(ahead: &Ahead, k: usize) -> bool {
        testing::ends(&ahead.looked[k].as_ref().expect("decoded ahead").decoding)
    }

    #[test]
    fn another_starts_only_while_fewer_than_the_decoders_are_under_way() {
        let dir = testing::path("ahead-under-way");
        std::fs::create_dir_all(&dir).unwrap();
        let window: Vec<Source> = ["a.gz", "b.gz", "c.gz"]
            .iter()
            .map(|name| {
                std::fs::write(dir.join(name), gzip(name.as_bytes())).unwrap();
                Source::File(dir.join(name))
            })
            .collect();
        let mut ahead = Ahead::new(NonZeroUsize::new(2).unwrap(), 0);
        ahead.look(window.iter(), None, true);
        assert_eq!(ahead.looked.len(), 1, "the one read's decoder and a's");
        assert!(ends(&ahead, 0), "a, a few bytes, decodes at once");
        ahead.look(window.iter(), None, true);
        assert_eq!(ahead.looked.len(), 2, "a's has ended: b's starts");
        assert!(ends(&ahead, 1));
        ahead.look(window.iter(), None, false);
        assert_eq!(ahead.looked.len(), 3, "the one read's has ended too");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn each_decoder_holds_its_share_and_never_less_than_one_decoded_at_its_turn() {
        let decoders = |n| Ahead::new(NonZeroUsize::new(n).unwrap(), 0).buffers;
        assert_eq!(decoders(2), 64, "16 MiB each of two");
        assert_eq!(decoders(1000), decode::BUFFERS);
    }
}
