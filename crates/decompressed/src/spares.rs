//! What a decoding has done with, kept for the next instead of freed: decoded buffers
//! ([`handoff`](super::handoff)) and ISA-L's states ([`gzip`](super::gzip)), in a pool the caller
//! owns ([`SpareBuffers`]) and frees by dropping it. A directory of small FILEs then makes one of
//! each, not one a FILE. Each pool has room for a set number of bytes, however many decodings end
//! at once, and however large what they hand back has grown.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::{BUFFER, DECODED_HELD};

/// Buffers whose decoding has ended, kept for the next decoding of the caller's run instead of
/// freed, room for at most [`DECODED_HELD`] bytes among them, counted by capacity: counting
/// buffers alone let the spares hold twice that, as a buffer handed back may have grown to twice
/// a [`BUFFER`]. A buffer made afresh costs a page fault for each of its pages: with eight FILEs
/// decoded ahead on two cores, each decoder ahead making its share of buffers anew took
/// 0.06-0.08 s of system time beside 0.18 s of decoding (27,000 page faults against 2,600), more
/// than decoding ahead gained. Beside them, the states of ISA-L's gzip decoders that have ended
/// (66 KB each, most of it their window), at most eight.
///
/// The caller's own: made for a run of decodings and given to each
/// ([`decode_file`](super::decode_file)), its buffers and states freed once it and every
/// decoding given it have been dropped. Nothing is kept between runs.
#[derive(Clone)]
pub struct SpareBuffers(Arc<Pools>);

/// The two pools behind a [`SpareBuffers`].
struct Pools {
    buffers: Spares<Vec<u8>>,
    #[cfg(isal)]
    states: Spares<KeptState>,
}

/// Not the buffers' bytes: a megabyte of them in a debug print says nothing.
impl std::fmt::Debug for SpareBuffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpareBuffers").finish_non_exhaustive()
    }
}

impl Default for SpareBuffers {
    fn default() -> Self {
        SpareBuffers(Arc::new(Pools {
            buffers: Spares::new(DECODED_HELD),
            #[cfg(isal)]
            states: Spares::new(STATES_KEPT * STATE_SIZE),
        }))
    }
}

impl SpareBuffers {
    /// Keeps `buffer` for the next decoding, if it is one of ours and room is left.
    pub(super) fn keep(&self, buffer: Vec<u8>) {
        let size = buffer.capacity();
        if size >= BUFFER {
            self.0.buffers.keep(buffer, size);
        }
    }

    /// A buffer kept, or a new one, empty.
    pub(super) fn take_buffer(&self) -> Vec<u8> {
        self.0.buffers.take().unwrap_or_default()
    }

    /// Keeps an ended decoder's state for the next, if room is left.
    #[cfg(isal)]
    pub(super) fn keep_state(&self, state: KeptState) {
        self.0.states.keep(state, STATE_SIZE);
    }

    /// A state kept, if there is one.
    #[cfg(isal)]
    pub(super) fn take_state(&self) -> Option<KeptState> {
        self.0.states.take()
    }

    /// The states kept.
    #[cfg(all(isal, test))]
    pub(super) fn states(&self) -> &Spares<KeptState> {
        &self.0.states
    }
}

/// The most ISA-L states kept: more than the decoders that run at once on the machines here.
#[cfg(isal)]
pub(super) const STATES_KEPT: usize = 8;

/// The bytes an ISA-L state holds.
#[cfg(isal)]
pub(super) const STATE_SIZE: usize = size_of::<isal_sys::igzip_lib::inflate_state>();

/// An ISA-L state kept between decoders.
#[cfg(isal)]
pub(super) struct KeptState(pub(super) Box<isal_sys::igzip_lib::inflate_state>);

// SAFETY: a kept state's pointers point at nothing: gzip.rs clears each call's when it returns
// (its `InCall`), and only a state between calls is kept.
#[cfg(isal)]
unsafe impl Send for KeptState {}

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
    use super::super::handoff::MOST_KEPT;
    use super::*;

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

    /// A debug print names the spares and not their bytes.
    #[test]
    fn the_spares_print_their_name_alone() {
        let spares = SpareBuffers::default();
        spares.keep(vec![7; BUFFER]);
        assert_eq!(format!("{spares:?}"), "SpareBuffers { .. }");
    }

    /// A size that would overflow the count is not kept, where it would wrap round to fit.
    #[test]
    fn a_size_past_any_room_is_not_kept() {
        let spares = Spares::new(usize::MAX);
        spares.keep(1, 1);
        spares.keep(2, usize::MAX);
        assert_eq!((spares.take(), spares.take()), (Some(1), None));
    }

    /// DECOMPRESS.md (spare buffers): the spares have room for at most [`DECODED_HELD`] bytes,
    /// whatever their buffers' sizes: counted, buffers grown to [`MOST_KEPT`] held twice that.
    /// Each is taken back empty.
    #[test]
    fn the_spares_hold_at_most_decoded_held() {
        let (spares, size) = (SpareBuffers::default(), MOST_KEPT - 1);
        for _ in 0..2 * DECODED_HELD / BUFFER {
            spares.keep(Vec::with_capacity(size));
        }
        // Taken until a new buffer comes, and never more than were kept: each empty.
        let kept = std::iter::from_fn(|| Some(spares.take_buffer()))
            .take(2 * DECODED_HELD / BUFFER + 1)
            .inspect(|taken| assert!(taken.is_empty(), "{} bytes in a spare", taken.len()))
            .take_while(|taken| taken.capacity() > 0)
            .count();
        assert!(kept > 0, "none kept");
        assert!(kept * size <= DECODED_HELD, "{kept} kept");
    }

    /// The spare buffers are the caller's run's: a FILE decoded on a thread and one decoded on
    /// the caller's leave theirs (buffers, and ISA-L's states) there for the next, and all are
    /// freed once the caller drops its handle and every decoding given it has ended; none
    /// outlives the run.
    #[test]
    fn spare_buffers_are_kept_for_the_run_and_freed_with_it() {
        use super::super::tests::{regular_of, text};
        use super::super::{BUFFERS, DECODED_HERE, Format, ONE, decode_file};

        let bytes = pipelines_testing::gzip(&text(0..20_000));
        let spares = SpareBuffers::default();
        let freed = std::sync::Arc::downgrade(&spares.0);
        for here in [0, DECODED_HERE] {
            let source = regular_of(&bytes);
            let (mut decoded, decoding) =
                decode_file(source, Format::Gzip, BUFFERS, ONE, here, &spares).unwrap();
            while decoded.read(&mut [0; 65_536]) > 0 {}
            decoding.finish().unwrap();
            drop(decoded);
            assert!(
                spares.0.buffers.bytes() > 0,
                "none kept (decoded here: {here})"
            );
            #[cfg(isal)]
            assert!(
                spares.0.states.bytes() > 0,
                "no state kept (decoded here: {here})"
            );
        }
        drop(spares);
        let deadline = pipelines_testing::IN_MEMORY;
        pipelines_testing::within_for(deadline, "the decoder's thread ending", move || {
            while freed.upgrade().is_some() {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        });
    }
}
