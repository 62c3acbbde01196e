//! The source a decoder reads, compressed: its reads, and its failure kept apart from the
//! decoder's.

use std::fs::File;
use std::io::{self, Chain, Cursor, Read};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::{BUFFER, Failure};
use fd_facts as fd;

/// The source as the decoder reads it: signals and an inherited non-blocking mode waited out, and
/// a failed read kept, so that it is told as the source's failure rather than the decoder's.
pub(super) struct Undecoded {
    source: Source,
    pub(super) failed: Option<io::Error>,
    /// The most read at a time: [`BUFFER`], or less for a small file, whose read buffer is then
    /// as small (a buffer is zeroed before its first read).
    pub(super) most: usize,
}

/// What the compressed bytes are read from.
enum Source {
    /// A descriptor. Shared, so that a small file decoded whole is handed back whole where it is
    /// to be decoded again on a thread (`decode_here`), without a `dup`.
    File(Arc<File>),
    /// A reader of the caller's that is no descriptor of ours: read as it reads, with nothing to
    /// ask whether a read would wait.
    Reader(Box<dyn Read + Send>),
}

impl Undecoded {
    pub(super) fn new(file: File) -> Self {
        Undecoded::reading(Arc::new(file), BUFFER)
    }

    /// `reader`, read [`BUFFER`] bytes at a time.
    pub(super) fn of_reader(reader: Box<dyn Read + Send>) -> Self {
        Undecoded {
            source: Source::Reader(reader),
            failed: None,
            most: BUFFER,
        }
    }

    /// Whether a read now would return at once (a regular file's always does); a stream's may wait
    /// for its writer. A reader of the caller's cannot be asked, and counts as ready: its read
    /// waits, as any reader's does.
    pub(super) fn is_ready(&self) -> bool {
        match &self.source {
            Source::File(file) => fd::is_ready(file.as_fd()),
            Source::Reader(_) => true,
        }
    }

    /// Whether a stream had nothing to read for all of `timeout` (false where that cannot be told:
    /// the read that follows waits instead).
    pub(super) fn stays_idle_for(&self, timeout: Duration) -> bool {
        match &self.source {
            Source::File(file) => fd::stays_idle_for(file.as_fd(), timeout),
            Source::Reader(_) => false,
        }
    }

    /// `file`, read at most `most` bytes (at least one, at most a [`BUFFER`]) at a time.
    pub(super) fn reading(file: Arc<File>, most: usize) -> Self {
        Undecoded {
            source: Source::File(file),
            failed: None,
            most: most.clamp(1, BUFFER),
        }
    }
}

impl Read for Undecoded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = match &mut self.source {
            Source::File(file) => fd::read(file, buf),
            Source::Reader(reader) => loop {
                match reader.read(buf) {
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                    read => break read,
                }
            },
        };
        read.map_err(|error| {
            let kind = error.kind();
            self.failed = Some(error);
            io::Error::from(kind)
        })
    }
}

/// The source with the bytes sniffing read put back in front.
pub(super) type Sniffed = Chain<Cursor<Vec<u8>>, Undecoded>;

/// Whether bytes that sniffing read are still to be given: a read then returns at once, whatever
/// the source does.
pub(super) fn sniffed_left(input: &Sniffed) -> bool {
    let sniffed = input.get_ref().0;
    sniffed.position() < sniffed.get_ref().len() as u64
}

/// `input` with `held` put before what it has not yet given: the bytes a decoding on several
/// threads read and leaves to one decoder.
pub(super) fn held_first(mut held: Vec<u8>, input: Sniffed) -> Sniffed {
    let (sniffed, source) = input.into_inner();
    let position = usize::try_from(sniffed.position()).unwrap_or(usize::MAX);
    held.extend_from_slice(sniffed.get_ref().get(position..).unwrap_or_default());
    Cursor::new(held).chain(source)
}

/// How long a scanner of a stream waits for it before it looks whether it has been told to stop:
/// a fault found in what it sent, or the reader gone, is then acted on while the stream stays
/// open and silent (`tail -f`), not at its next bytes.
const STOP_SEEN: Duration = Duration::from_millis(20);

/// Reads `input` into `buf` as [`Read::read`] does, but waits for a stream in slices of
/// [`STOP_SEEN`]: `None` where `stop` was set while it waited.
pub(super) fn read_unless_stopped(
    input: &mut Sniffed,
    buf: &mut [u8],
    stop: &AtomicBool,
) -> Option<io::Result<usize>> {
    loop {
        if sniffed_left(input) || !input.get_ref().1.stays_idle_for(STOP_SEEN) {
            return Some(input.read(buf));
        }
        if stop.load(Ordering::Relaxed) {
            return None;
        }
    }
}

/// The failure of reading `source`, which its last read kept.
pub(super) fn reading(source: &mut Undecoded) -> Failure {
    Failure::Reading(
        source
            .failed
            .take()
            .unwrap_or_else(|| io::Error::other("read failed")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read that fails is the source's failure, told with the system's own error, where the
    /// decoder reading it sees only the error's kind; none kept reads as a failed read.
    #[test]
    fn a_failed_read_is_kept_as_the_sources_failure() {
        let mut source = Undecoded::new(File::open(std::env::temp_dir()).unwrap());
        let seen = source.read(&mut [0; 16]).unwrap_err();
        assert_eq!(seen.kind(), io::ErrorKind::IsADirectory);
        assert_eq!(seen.raw_os_error(), None);
        match reading(&mut source) {
            Failure::Reading(kept) => assert!(kept.raw_os_error().is_some(), "{kept:?}"),
            other => panic!("{other:?}"),
        }
        match reading(&mut source) {
            Failure::Reading(kept) => assert_eq!(kept.to_string(), "read failed"),
            other => panic!("{other:?}"),
        }
    }

    /// Reads are at least a byte and at most a [`BUFFER`], whatever is asked.
    #[test]
    fn reads_are_a_byte_to_a_buffer() {
        let file = Arc::new(File::open(std::env::temp_dir()).unwrap());
        for (asked, most) in [(0, 1), (7, 7), (usize::MAX, BUFFER)] {
            assert_eq!(Undecoded::reading(file.clone(), asked).most, most);
        }
    }
}
