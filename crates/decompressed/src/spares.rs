//! What a decoding has done with, kept for the next instead of freed: ISA-L's states
//! ([`gzip`](super::gzip)) and decoded buffers ([`handoff`](super::handoff)). A directory of small
//! FILEs then makes one of each, not one a FILE. Each pool has room for a set number of bytes,
//! however many decodings end at once, and however large what they hand back has grown.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Things of one kind kept spare, with room for at most `room` bytes among them.
pub(super) struct Spares<T> {
    room: usize,
    kept: Mutex<Kept<T>>,
}

/// The things kept, each with its size, and their sizes' sum.
struct Kept<T> {
    things: Vec<(T, usize)>,
    bytes: usize,
}

impl<T> Spares<T> {
    /// An empty pool with room for `room` bytes.
    pub(super) const fn new(room: usize) -> Self {
        Spares {
            room,
            kept: Mutex::new(Kept {
                things: Vec::new(),
                bytes: 0,
            }),
        }
    }

    /// Keeps `thing`, which holds `size` bytes, where room is left for it; drops it where not.
    pub(super) fn keep(&self, thing: T, size: usize) {
        let mut kept = self.kept();
        if let Some(bytes) = kept
            .bytes
            .checked_add(size)
            .filter(|&bytes| bytes <= self.room)
        {
            kept.bytes = bytes;
            kept.things.push((thing, size));
        }
    }

    /// The thing kept last, where one is: the likeliest to be in a cache still.
    pub(super) fn take(&self) -> Option<T> {
        let mut kept = self.kept();
        let (thing, size) = kept.things.pop()?;
        kept.bytes -= size;
        Some(thing)
    }

    /// Whether any thing kept passes `test`.
    #[cfg(test)]
    pub(super) fn any(&self, test: impl Fn(&T) -> bool) -> bool {
        self.kept().things.iter().any(|(thing, _)| test(thing))
    }

    /// The bytes kept.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.kept().bytes
    }

    /// The pool, also after a thread panicked holding it: each change to it is made whole
    /// before the next can panic.
    fn kept(&self) -> MutexGuard<'_, Kept<T>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::Spares;

    /// Things are kept while their sizes fit the room, sizes counted as given, not as things,
    /// and taken back last kept first until none is left.
    #[test]
    fn things_are_kept_while_room_is_left() {
        let spares = Spares::new(10);
        spares.keep('a', 4);
        spares.keep('b', 7);
        spares.keep('c', 6);
        spares.keep('d', 0);
        assert_eq!(spares.bytes(), 10);
        assert!(spares.any(|&thing| thing == 'c') && !spares.any(|&thing| thing == 'b'));
        assert_eq!(spares.take(), Some('d'));
        assert_eq!(spares.take(), Some('c'));
        assert_eq!(spares.bytes(), 4);
        spares.keep('e', 6);
        assert_eq!(spares.take(), Some('e'));
        assert_eq!(spares.take(), Some('a'));
        assert_eq!((spares.take(), spares.bytes()), (None, 0));
    }

    /// A size that would overflow the count is not kept, where it would wrap round to fit.
    #[test]
    fn a_size_past_any_room_is_not_kept() {
        let spares = Spares::new(usize::MAX);
        spares.keep(1, 1);
        spares.keep(2, usize::MAX);
        assert_eq!((spares.take(), spares.take()), (Some(1), None));
    }
}
