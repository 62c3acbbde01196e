//! `-z` with more than one decoder (`--decoders`): the compressed regular FILEs after the one
//! read are decoded ahead while the one read is rendered, and each is handed to the driver at its
//! turn, in input order (docs/CONTRACT.md §12.5): a large one on a thread of its own; small ones
//! ([`decode::DECODED_HERE`]), for which a thread each costs more than their decoding, whole, on
//! one thread in input order, the `Queue`'s, with the reader's help. Which sources may be
//! decoded ahead is [`Sources::ahead`](crate::io::sources::Sources::ahead); this is the I/O that
//! finds which of them are, and keeps their decodings until their turn.
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
use std::fs::Metadata;
use std::num::NonZeroUsize;
use std::os::unix::fs::MetadataExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;

use crate::io::open::{self, Opening};
use crate::io::sources::Source;
use decompressed::{self as decode, DecodedFile, Decoding, Format, Regular, SpareBuffers};
use fd_facts as fd;

/// The decodings ahead, in input order, one entry for each source after the one open that has
/// been looked at.
#[derive(Debug)]
pub struct Ahead {
    /// `Some` for each source decoded ahead, `None` for one that is not (stdin, a stream, a plain
    /// or unopenable file).
    looked: VecDeque<Option<Started>>,
    /// The next source to look at, a regular file found waiting for a decoder or for room on the
    /// queue: looked at by name once, not at every read.
    waiting: Option<Metadata>,
    /// The most decodings under way on threads of their own at once, the one read's among them
    /// (`--decoders`).
    decoders: usize,
    /// The most buffers each decoder ahead holds.
    buffers: usize,
    /// The most compressed bytes of a file decoded whole, on the queue.
    decoded_here: u64,
    /// The thread small files are decoded ahead on, one after another.
    queue: Queue,
    /// Where every decoding ahead makes its buffers from and keeps them.
    spares: SpareBuffers,
    /// The last regular FILE read was compressed (or none has been read): small FILEs are
    /// decoded ahead. After a plain one they are not, until a compressed one is read: on a
    /// thousand small plain FILEs under `-z`, giving each to the queue's thread, which only found
    /// it plain, took `std-baseline` 1.5 times as long.
    small_ahead: bool,
}

impl Ahead {
    /// Decodings ahead with up to `decoders` decoding at once on threads of their own.
    ///
    /// Each holds `1 / decoders` of [`decode::DECODED_HELD`], and never less than a FILE decoded
    /// at its turn ([`decode::BUFFERS`]). A decoder ahead overlaps its FILE with the one read only
    /// as far as it may hold: on two cores, 16 MiB each, most of a rotated log of tens of MB.
    /// A compressed file of up to `decoded_here` bytes costs less than a thread: up to
    /// [`decode::QUEUED`] of them are decoded ahead, whole, on one thread, the queue's. Their
    /// buffers come from, and go back to, `spares`.
    pub fn new(decoders: NonZeroUsize, decoded_here: u64, spares: SpareBuffers) -> Self {
        let each = decode::DECODED_HELD / decode::BUFFER / decoders.get();
        Ahead {
            looked: VecDeque::new(),
            waiting: None,
            decoders: decoders.get(),
            buffers: each.max(decode::BUFFERS),
            decoded_here,
            queue: Queue::default(),
            spares,
            small_ahead: true,
        }
    }

    /// The FILE whose turn it is, a regular file, was found `compressed` or plain.
    pub fn turn_found(&mut self, compressed: bool) {
        self.small_ahead = compressed;
    }

    /// How many sources have been looked at ahead, for the driver's tests.
    #[cfg(test)]
    pub(super) fn looked_at(&self) -> usize {
        self.looked.len()
    }

    /// The next source's turn has come: its decoding ahead, if it has one.
    pub fn take_turn(&mut self) -> Option<Started> {
        if self.looked.is_empty() {
            // What waited was the source whose turn it is.
            self.waiting = None;
        }
        self.looked.pop_front().flatten()
    }

    /// Looks at the sources in `window` (those after the one open that may be decoded ahead, in
    /// order) not yet looked at, and starts decoding each that is a compressed regular file and
    /// not the output: a small one on the queue while it holds fewer than [`decode::QUEUED`],
    /// any other among the next `decoders` while fewer than `decoders` decodings are under way on
    /// threads of their own, the one read's among them if `read_decoding`. Called at each turn
    /// and after each read, so that a decoder that has ended leaves its core to the next FILE at
    /// once: on two cores a FILE decoded whole ahead was otherwise rendered at its turn beside
    /// one decoder, and the other core idled.
    pub fn look<'a>(
        &mut self,
        window: impl Iterator<Item = &'a Source>,
        output: Option<&fd::Output>,
        read_decoding: bool,
    ) {
        let started = || self.looked.iter().flatten();
        let mut decoding = usize::from(read_decoding)
            + started()
                .filter(|started| started.under_way_alone())
                .count();
        let mut queued = started().filter(|started| started.is_queued()).count();
        for (at, source) in window.enumerate().skip(self.looked.len()) {
            let Source::File(path) = source else {
                self.looked.push_back(None);
                continue;
            };
            // Looked at before it is opened: opening a FIFO for reading, even without waiting,
            // would let a writer that waits for a reader go on, and closing it would then break
            // the writer's pipe.
            let metadata = self.waiting.take().or_else(|| std::fs::metadata(path).ok());
            let Some(metadata) = metadata.filter(|metadata| Identity::of(metadata).is_some())
            else {
                self.looked.push_back(None);
                continue;
            };
            let started = match metadata.len() <= self.decoded_here {
                true if !self.small_ahead => None,
                true if queued < decode::QUEUED => self.queue.decode(path, output, &self.spares),
                false if at < self.decoders && decoding < self.decoders => {
                    start_alone(path, output, self.buffers, &self.spares)
                }
                _ => {
                    self.waiting = Some(metadata);
                    return;
                }
            };
            // Under way, just started, even if it has already ended.
            decoding += usize::from(matches!(started, Some(Started::Alone(_))));
            queued += usize::from(started.as_ref().is_some_and(Started::is_queued));
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
    /// A file's, from its `metadata`, if it is a regular file that holds something: a `/proc`
    /// file says it holds nothing, and is read only at its turn.
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
pub enum Started {
    /// On a thread of its own.
    Alone(Found),
    /// On the queue's thread, after the small files before it.
    Queued(Queued),
}

/// A file opened, sniffed and decoding ahead.
#[derive(Debug)]
pub struct Found {
    identity: Identity,
    format: Format,
    decoded: DecodedFile,
    decoding: Decoding,
}

impl Started {
    /// The decoded bytes and the decoding, if the file opened at its turn, whose `metadata` this
    /// is, sniffed as `format`, is the file decoded ahead, unchanged since: the same device,
    /// inode, size and modification time. Else `None`, and the decoding ahead is dropped (its
    /// thread ends). A file on the queue is waited for; `None` too where the queue did not
    /// decode it (it decodes to more than the queue keeps), and it is decoded at its turn.
    pub fn if_still(self, metadata: &Metadata, format: Format) -> Option<(DecodedFile, Decoding)> {
        let found = match self {
            Started::Alone(found) => found,
            Started::Queued(queued) => queued.take()?,
        };
        let same = format == found.format && Identity::of(metadata) == Some(found.identity);
        same.then_some((found.decoded, found.decoding))
    }

    /// Whether it decodes on a thread of its own that has not ended.
    fn under_way_alone(&self) -> bool {
        matches!(self, Started::Alone(found) if !found.decoding.has_ended())
    }

    fn is_queued(&self) -> bool {
        matches!(self, Started::Queued(_))
    }
}

/// Opens `path` (never waiting: the name may now lead to a FIFO) and sniffs it, if it is a
/// compressed regular file and not the output: the file, what it was, and its format.
fn open(path: &Path, output: Option<(u64, u64)>) -> Option<(Regular, Identity, Format)> {
    let source = Source::File(path.to_path_buf());
    let Opening::Regular(file, metadata, format) = open::open(&source, true, true).ok()? else {
        return None;
    };
    let identity = Identity::of(&metadata)?;
    let is_output = output == Some((identity.device, identity.inode));
    (format != Format::Plain && !is_output).then_some((file, identity, format))
}

/// Starts decoding `path` ahead on a thread of its own, holding up to `buffers` made from
/// `spares`, if it is a compressed regular file and not the output; else `None`, whatever failed.
fn start_alone(
    path: &Path,
    output: Option<&fd::Output>,
    buffers: usize,
    spares: &SpareBuffers,
) -> Option<Started> {
    let (file, identity, format) = open(path, output.and_then(fd::Output::file))?;
    let (decoded, decoding) =
        decode::decode_file(file, format, buffers, NonZeroUsize::MIN, 0, spares).ok()?;
    Some(Started::Alone(Found {
        identity,
        format,
        decoded,
        decoding,
    }))
}

/// Small FILEs decoded ahead, whole, by two hands: a thread of the queue's own, which takes them
/// in input order, and the reader, which at a FILE's turn decodes it itself if the thread has not
/// begun it, and while the thread decodes it, decodes the next one the thread has not begun. A
/// thread each cost more than their decoding; decoded at their turns on the reader's thread they
/// kept the other core idle; and a reader that only waited for the thread, faster than the
/// decoding, waited for every FILE and was woken for each.
#[derive(Debug, Default)]
struct Queue {
    /// Shared with the thread once it is started.
    shared: Option<Arc<Shared>>,
}

/// What the queue's thread and the reader share.
#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// The thread waits here for a FILE to decode.
    given: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// The FILEs given, in input order, that nobody has begun.
    pending: VecDeque<Arc<Slot>>,
    /// The thread waits for a FILE: tell it.
    idle: bool,
    /// The queue is dropped: the thread ends.
    closed: bool,
}

/// One FILE given to the queue, and where its decoding stands.
#[derive(Debug)]
struct Slot {
    path: PathBuf,
    /// The output's file (device, inode): not decoded ahead.
    output: Option<(u64, u64)>,
    /// Where its buffers come from.
    spares: SpareBuffers,
    stands: Mutex<Stands>,
    /// The reader waits here for the thread to finish this FILE.
    finished: Condvar,
}

#[derive(Debug)]
enum Stands {
    /// Nobody has begun it.
    Pending,
    /// The thread decodes it; `waited` when the reader waits for it.
    Begun { waited: bool },
    /// Decoded ahead (or found not to be decodable ahead: `None`).
    Done(Option<Found>),
    /// Taken at its turn.
    Taken,
}

impl Slot {
    /// Begins this FILE if nobody has: whether it was begun here.
    fn begin(&self, by_thread: bool) -> bool {
        let mut stands = lock(&self.stands);
        let pending = matches!(*stands, Stands::Pending);
        if pending {
            *stands = match by_thread {
                true => Stands::Begun { waited: false },
                false => Stands::Taken,
            };
        }
        pending
    }

    /// Decodes this FILE, begun by the thread, and tells the reader if it waits: whole, or where
    /// it decodes to more than a FILE decoded whole may hold, from its start on a thread of its
    /// own, as at its turn (without that, such a FILE was decoded whole up to that bound twice,
    /// ahead and at its turn, before its thread). A panic is caught: the FILE is then decoded at
    /// its turn, where its failure is told.
    fn decode(&self) {
        let found = catch_unwind(AssertUnwindSafe(|| {
            let (file, identity, format) = open(&self.path, self.output)?;
            let (decoded, decoding) = decode::decode_file(
                file,
                format,
                decode::BUFFERS,
                NonZeroUsize::MIN,
                u64::MAX,
                &self.spares,
            )
            .ok()?;
            Some(Found {
                identity,
                format,
                decoded,
                decoding,
            })
        }));
        let mut stands = lock(&self.stands);
        let waited = matches!(*stands, Stands::Begun { waited: true });
        *stands = Stands::Done(found.ok().flatten());
        drop(stands);
        if waited {
            self.finished.notify_one();
        }
    }
}

/// A FILE's decoding on the queue, taken at its turn.
#[derive(Debug)]
pub struct Queued {
    slot: Arc<Slot>,
    shared: Arc<Shared>,
}

impl Queued {
    /// What the queue found and decoded of the FILE, waiting while the thread decodes it and
    /// meanwhile decoding the next FILE nobody has begun; `None` where nobody had begun it (it is
    /// then decoded at its turn, on this thread, as any small FILE) or it could not be decoded
    /// ahead.
    fn take(self) -> Option<Found> {
        if self.slot.begin(false) {
            return None;
        }
        loop {
            let mut stands = lock(&self.slot.stands);
            match std::mem::replace(&mut *stands, Stands::Taken) {
                Stands::Done(found) => return found,
                Stands::Begun { .. } => {
                    *stands = Stands::Begun { waited: true };
                    drop(stands);
                    // Help rather than wait, while there is a FILE nobody has begun.
                    if let Some(next) = self.shared.next_pending() {
                        next.decode();
                        continue;
                    }
                    let stands = lock(&self.slot.stands);
                    let _finished = self
                        .slot
                        .finished
                        .wait_while(stands, |stands| matches!(stands, Stands::Begun { .. }))
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                }
                other => {
                    *stands = other;
                    return None;
                }
            }
        }
    }
}

impl Drop for Queued {
    /// A FILE dropped at its turn (not compressed after all, or gone) is not begun after.
    fn drop(&mut self) {
        self.slot.begin(false);
    }
}

impl State {
    /// The first FILE given that nobody has begun, begun as by the thread; those taken at their
    /// turns meanwhile are passed over.
    fn begin_next(&mut self) -> Option<Arc<Slot>> {
        std::iter::from_fn(|| self.pending.pop_front()).find(|slot| slot.begin(true))
    }
}

impl Shared {
    /// Gives `path` to the thread, after what it was given before, its buffers from `spares`.
    fn give(
        shared: &Arc<Shared>,
        path: &Path,
        output: Option<(u64, u64)>,
        spares: &SpareBuffers,
    ) -> Queued {
        let slot = Arc::new(Slot {
            path: path.to_owned(),
            output,
            spares: spares.clone(),
            stands: Mutex::new(Stands::Pending),
            finished: Condvar::new(),
        });
        let mut state = lock(&shared.state);
        state.pending.push_back(slot.clone());
        // One wake for the FILEs given while it waits.
        let idle = std::mem::replace(&mut state.idle, false);
        drop(state);
        if idle {
            shared.given.notify_one();
        }
        Queued {
            slot,
            shared: shared.clone(),
        }
    }

    /// The first FILE nobody has begun, begun for the reader to decode as the thread would.
    fn next_pending(&self) -> Option<Arc<Slot>> {
        lock(&self.state).begin_next()
    }

    /// The thread: decodes each FILE given that nobody has begun, in order, until the queue is
    /// dropped.
    fn decode_given(&self) {
        loop {
            let mut state = lock(&self.state);
            let slot = loop {
                if state.closed {
                    return;
                }
                if let Some(slot) = state.begin_next() {
                    break slot;
                }
                state.idle = true;
                state = self
                    .given
                    .wait_while(state, |state| state.pending.is_empty() && !state.closed)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                state.idle = false;
            };
            drop(state);
            slot.decode();
        }
    }
}

/// `mutex`'s guard, poisoned or not: a panic while it was held left nothing half done that
/// matters here (a FILE it was decoding is then decoded at its turn).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Queue {
    /// Gives `path` to the queue to open and decode, if it is a compressed regular file and not
    /// the output, its buffers from `spares`; `None` where the queue's thread cannot be started.
    fn decode(
        &mut self,
        path: &Path,
        output: Option<&fd::Output>,
        spares: &SpareBuffers,
    ) -> Option<Started> {
        let shared = match &self.shared {
            Some(shared) => shared,
            None => {
                let shared = Arc::new(Shared::default());
                let theirs = shared.clone();
                thread::Builder::new()
                    .name("decode queued".to_owned())
                    .spawn(move || theirs.decode_given())
                    .ok()?;
                self.shared.insert(shared)
            }
        };
        let queued = Shared::give(shared, path, output.and_then(fd::Output::file), spares);
        Some(Started::Queued(queued))
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        if let Some(shared) = &self.shared {
            let mut state = lock(&shared.state);
            state.closed = true;
            // What the reader will never take.
            state.pending.clear();
            drop(state);
            shared.given.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::io::testing::{self, gzip};

    /// Everything `decoded` hands on.
    fn read_all(mut decoded: DecodedFile) -> Vec<u8> {
        // Under the deadline: a decoder that decodes without end fails the test.
        testing::within("reading what was decoded", move || {
            let mut bytes = Vec::new();
            let mut buf = [0; 7];
            loop {
                match decoded.read(&mut buf) {
                    0 => return bytes,
                    n => bytes.extend_from_slice(&buf[..n]),
                }
            }
        })
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
        let mut ahead = Ahead::new(NonZeroUsize::new(9).unwrap(), 0, SpareBuffers::default());
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
            .if_still(&fs::metadata(a).unwrap(), Format::Gzip)
            .expect("the same file, unchanged");
        assert_eq!(read_all(decoded), b"a\n");
        assert!(decoding.finish().is_ok());
        let b = window.last().unwrap();
        let Source::File(b) = b else { unreachable!() };
        // The turns of the six between, none decoded ahead, then b's.
        let started = (1..window.len()).find_map(|_| ahead.take_turn()).unwrap();
        std::fs::write(b, gzip(b"b, rewritten\n")).unwrap();
        let rewritten = fs::metadata(b).unwrap();
        assert!(started.if_still(&rewritten, Format::Gzip).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// FILEs named `0.gz`, `1.gz`, … in a directory of their own, each holding its number.
    fn numbered(dir: &str, count: usize) -> Vec<PathBuf> {
        let dir = testing::path(dir);
        fs::create_dir_all(&dir).unwrap();
        (0..count)
            .map(|k| {
                let path = dir.join(format!("{k}.gz"));
                fs::write(&path, gzip(format!("{k}\n").as_bytes())).unwrap();
                path
            })
            .collect()
    }

    #[test]
    fn a_small_file_nobody_began_is_decoded_at_its_turn_and_the_reader_helps_while_it_waits() {
        let paths = numbered("ahead-queue-hands", 3);
        // No thread: this test plays it.
        let shared = Arc::new(Shared::default());
        let mut given = paths
            .iter()
            .map(|path| Shared::give(&shared, path, None, &SpareBuffers::default()));
        let (zero, one, two) = (
            given.next().unwrap(),
            given.next().unwrap(),
            given.next().unwrap(),
        );
        assert!(zero.take().is_none(), "nobody began 0: decoded at its turn");
        let begun = shared.next_pending().expect("the thread's next");
        assert_eq!(begun.path, paths[1], "0, taken at its turn, is passed over");
        let two_slot = two.slot.clone();
        let reader = thread::spawn(move || one.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !matches!(*lock(&two_slot.stands), Stands::Done(Some(_))) {
            assert!(
                std::time::Instant::now() < deadline,
                "the reader, waiting for 1, decodes 2"
            );
            thread::yield_now();
        }
        begun.decode();
        let found = reader.join().unwrap().expect("1, decoded by the thread");
        assert_eq!(read_all(found.decoded), b"1\n");
        let found = two.take().expect("2, decoded by the reader");
        assert_eq!(read_all(found.decoded), b"2\n");
        assert!(shared.next_pending().is_none(), "nothing left to begin");
        fs::remove_dir_all(paths[0].parent().unwrap()).unwrap();
    }

    #[test]
    fn what_waited_for_a_decoder_is_forgotten_at_its_turn() {
        let dir = testing::path("ahead-waiting");
        fs::create_dir_all(&dir).unwrap();
        // Bytes that do not compress: a large FILE, past what is decoded whole.
        let mut x = 1u32;
        let noise: Vec<u8> = (0..decode::DECODED_HERE + 4096)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (x >> 24) as u8
            })
            .collect();
        let (large, small) = (dir.join("large.gz"), dir.join("small.gz"));
        fs::write(&large, gzip(&noise)).unwrap();
        fs::write(&small, gzip(b"small\n")).unwrap();
        let mut ahead = Ahead::new(
            NonZeroUsize::MIN,
            decode::DECODED_HERE,
            SpareBuffers::default(),
        );
        ahead.look([Source::File(large)].iter(), None, true);
        assert_eq!(
            ahead.looked_at(),
            0,
            "the large one waits: the one read's decoder is busy"
        );
        assert!(ahead.take_turn().is_none(), "its turn");
        ahead.look([Source::File(small)].iter(), None, false);
        let started = ahead
            .take_turn()
            .expect("the small one, looked at by its own name");
        assert!(started.is_queued(), "decoded as the small FILE it is");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_small_file_that_decodes_past_what_is_kept_whole_is_decoded_ahead_on_a_thread() {
        let dir = testing::path("ahead-queue-past");
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("lines.gz");
        let lines = b"the same line\n".repeat((5 << 20) / 14);
        fs::write(&path, gzip(&lines)).unwrap();
        let shared = Arc::new(Shared::default());
        let queued = Shared::give(&shared, &path, None, &SpareBuffers::default());
        let pending = shared.next_pending().expect("the thread's");
        testing::within("decoding on the calling thread", move || pending.decode());
        let found = queued.take().expect("decoded ahead, past 4 MiB");
        assert!(read_all(found.decoded) == lines, "every byte, in order");
        assert!(found.decoding.finish().is_ok());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_small_file_dropped_at_its_turn_is_not_begun_after() {
        let paths = numbered("ahead-queue-dropped", 2);
        let shared = Arc::new(Shared::default());
        let first = Shared::give(&shared, &paths[0], None, &SpareBuffers::default());
        let _second = Shared::give(&shared, &paths[1], None, &SpareBuffers::default());
        drop(first);
        let next = shared.next_pending().expect("the second");
        assert_eq!(next.path, paths[1], "the first, dropped, is passed over");
        fs::remove_dir_all(paths[0].parent().unwrap()).unwrap();
    }

    #[test]
    fn small_files_are_decoded_ahead_on_the_queue_and_a_changed_one_at_its_turn() {
        let paths = numbered("ahead-queue", decode::QUEUED + 2);
        let window: Vec<Source> = paths.iter().cloned().map(Source::File).collect();
        let mut ahead = Ahead::new(
            NonZeroUsize::new(2).unwrap(),
            decode::DECODED_HERE,
            SpareBuffers::default(),
        );
        // Until the queue's thread has decoded every FILE given.
        let wait_for_the_thread = |ahead: &Ahead| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while !ahead.looked.iter().flatten().all(|started| match started {
                Started::Queued(queued) => matches!(*lock(&queued.slot.stands), Stands::Done(_)),
                Started::Alone(_) => false,
            }) {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the queue's thread decodes them"
                );
                thread::yield_now();
            }
        };
        ahead.look(window.iter(), None, true);
        assert_eq!(
            ahead.looked_at(),
            decode::QUEUED,
            "as many as the queue holds"
        );
        wait_for_the_thread(&ahead);
        fs::write(&paths[0], gzip(b"0, rewritten\n")).unwrap();
        let rewritten = fs::metadata(&paths[0]).unwrap();
        let started = ahead.take_turn().unwrap();
        assert!(started.if_still(&rewritten, Format::Gzip).is_none());
        let turn = |ahead: &mut Ahead, k: usize| {
            let (decoded, decoding) = ahead
                .take_turn()
                .unwrap()
                .if_still(&fs::metadata(&paths[k]).unwrap(), Format::Gzip)
                .expect("decoded by the queue's thread, unchanged since");
            assert_eq!(read_all(decoded), format!("{k}\n").as_bytes());
            assert!(decoding.finish().is_ok());
        };
        (1..decode::QUEUED).for_each(|k| turn(&mut ahead, k));
        // The thread, idle now, is woken for the last two.
        ahead.look(window[decode::QUEUED..].iter(), None, false);
        wait_for_the_thread(&ahead);
        (decode::QUEUED..paths.len()).for_each(|k| turn(&mut ahead, k));
        fs::remove_dir_all(paths[0].parent().unwrap()).unwrap();
    }

    #[test]
    fn after_a_plain_file_small_ones_are_decoded_at_their_turn_until_a_compressed_one() {
        let paths = numbered("ahead-queue-plain", 4);
        let window: Vec<Source> = paths.iter().cloned().map(Source::File).collect();
        let mut ahead = Ahead::new(
            NonZeroUsize::new(2).unwrap(),
            decode::DECODED_HERE,
            SpareBuffers::default(),
        );
        ahead.turn_found(false);
        ahead.look(window[..2].iter(), None, false);
        assert_eq!(ahead.looked_at(), 2, "both looked at");
        assert!(
            ahead.looked.iter().all(Option::is_none),
            "neither given to the queue"
        );
        ahead.turn_found(true);
        ahead.look(window.iter(), None, false);
        assert!(
            ahead
                .looked
                .iter()
                .skip(2)
                .flatten()
                .all(Started::is_queued)
        );
        assert_eq!(
            ahead.looked.iter().flatten().count(),
            2,
            "the two after, given"
        );
        fs::remove_dir_all(paths[0].parent().unwrap()).unwrap();
    }

    /// Whether the decoding of the `k`th source looked at ends.
    fn ends(ahead: &Ahead, k: usize) -> bool {
        match ahead.looked[k].as_ref().expect("decoded ahead") {
            Started::Alone(found) => testing::ends(&found.decoding),
            Started::Queued(_) => panic!("decoded on the queue"),
        }
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
        let mut ahead = Ahead::new(NonZeroUsize::new(2).unwrap(), 0, SpareBuffers::default());
        ahead.look(window.iter(), None, true);
        assert_eq!(ahead.looked.len(), 1, "the one read's decoder and a's");
        assert!(ends(&ahead, 0), "a, a few bytes, decodes at once");
        ahead.look(window.iter(), None, true);
        assert_eq!(ahead.looked.len(), 2, "a's has ended: b's starts");
        assert!(ends(&ahead, 1));
        ahead.look(window.iter(), None, false);
        assert_eq!(
            ahead.looked.len(),
            2,
            "the one read's has ended too, but c is not among the next two"
        );
        assert!(ahead.take_turn().is_some(), "a's turn");
        ahead.look(window[1..].iter(), None, false);
        assert_eq!(
            ahead.looked.len(),
            2,
            "b's and, now among the next two, c's"
        );
        assert!(ends(&ahead, 1));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn each_decoder_holds_its_share_and_never_less_than_one_decoded_at_its_turn() {
        let decoders =
            |n| Ahead::new(NonZeroUsize::new(n).unwrap(), 0, SpareBuffers::default()).buffers;
        assert_eq!(decoders(2), 64, "16 MiB each of two");
        assert_eq!(decoders(1000), decode::BUFFERS);
    }
}
