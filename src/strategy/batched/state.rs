//! The round's shared state: what every thread of the round reaches through one lock, and the
//! rules for it. Slots are numbered in input order as they are handed out, their renderings put
//! back in that order and written by whichever thread's turn it is, outside the lock, so that
//! the others queue theirs meanwhile; ranges cut ahead wait here for the next slot written.
//!
//! Its rules live here alone:
//! - the output is out of the lock while a thread writes it: whoever finds it out only queues,
//!   and the thread writing writes that too before it puts the output back;
//! - once writing has ended (a write failed, or the run is ending early), a rendering submitted
//!   is handed back unwritten, and no slot written goes back to a worker;
//! - the first range that could not be read is kept: its file's later ranges are dropped
//!   unwritten, and those cut ahead unread.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::mem;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crossbeam_channel::Sender;

use super::slot::Slot;
use crate::error::Error;
use crate::io::Output;
use crate::io::ranges::Range;
use crate::parallel::Reorder;
use crate::stats::Stats;
use crate::tally::{Tally, Tallying};

/// The round's shared state, under one lock: shared by every thread that hands out slots or
/// writes renderings, the calling thread and each worker.
pub(super) struct RoundState<W, A>(Mutex<Locked<W, A>>);

/// The round's shared state as one thread holds it, the lock taken.
pub(super) struct Locked<W, A> {
    in_order: Reorder<Slot<A>>,
    /// `None` while a thread is writing, which it does outside the lock: the others leave their
    /// renderings in `in_order` for it, and it writes them too before it puts the output back.
    output: Option<Written<W, A>>,
    /// A write failed, or the run is ending early: renderings submitted from now on are handed
    /// back unwritten.
    writing_ended: bool,
    lines: u64,
    /// Bytes the workers read themselves, counted as their slots are written.
    bytes_read_by_workers: u64,
    /// The first range that could not be read: the file's later ranges are dropped unwritten,
    /// and those cut ahead unread.
    read_error: Option<io::Error>,
    /// The number the next slot handed out takes: slots are numbered in input order as they
    /// are handed out, by whichever thread hands them.
    next_number: u64,
    /// Where slots go to be rendered, once the workers have started; `None` again ends them.
    to_workers: Option<Sender<Slot<A>>>,
    /// Ranges of a file cut ahead by the calling thread while every slot is out. A slot written
    /// goes straight back to a worker with the first of them, so that the calling thread wakes
    /// once these run out rather than once a chunk.
    ahead: VecDeque<Range>,
}

/// The output and the tally of what it has been written, merged in input order: whoever writes
/// holds both.
struct Written<W, A> {
    output: Output<W>,
    tally: A,
}

impl<W, A> RoundState<W, A> {
    /// Before the first rendering, for at most `window` slots out at once.
    pub(super) fn new(window: usize, output: Output<W>) -> Self
    where
        A: Default,
    {
        RoundState(Mutex::new(Locked {
            in_order: Reorder::new(window),
            output: Some(Written {
                output,
                tally: A::default(),
            }),
            writing_ended: false,
            lines: 0,
            bytes_read_by_workers: 0,
            read_error: None,
            next_number: 0,
            to_workers: None,
            ahead: VecDeque::new(),
        }))
    }

    /// Takes the lock; fails if a thread panicked holding it.
    pub(super) fn lock(&self) -> Result<MutexGuard<'_, Locked<W, A>>, Error> {
        self.0.lock().map_err(|_| panicked())
    }

    /// Slots handed out from now on go to `to_workers`.
    pub(super) fn start_workers(&self, to_workers: Sender<Slot<A>>) -> Result<(), Error> {
        self.lock()?.to_workers = Some(to_workers);
        Ok(())
    }

    /// Hands nothing more out, so that the workers' channel closes once its last slots are
    /// taken; and drops the ranges cut ahead. Also after a panic.
    pub(super) fn end_workers(&self) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.ahead.clear();
        state.to_workers = None;
    }

    /// The run is ending early: renderings submitted from now on are handed back unwritten, and the
    /// workers only hand their slots back. (A lock poisoned by a worker's panic says as much
    /// already.)
    pub(super) fn end_writing(&self) {
        if let Ok(mut state) = self.0.lock() {
            state.writing_ended = true;
        }
    }

    /// Numbers `slot` in input order.
    pub(super) fn number(&self, slot: &mut Slot<A>) -> Result<(), Error> {
        self.lock()?.number(slot);
        Ok(())
    }

    /// Numbers `slot` and hands it to a worker. Fails only if no worker is left (they panicked).
    pub(super) fn send(&self, slot: Slot<A>) -> Result<(), Error> {
        self.lock()?.send(slot)
    }

    /// Whether a range could not be read.
    pub(super) fn read_failed(&self) -> Result<bool, Error> {
        Ok(self.lock()?.read_error.is_some())
    }

    /// The first range that could not be read, if one could not, taken: the next file's ranges
    /// are written again.
    pub(super) fn take_read_error(&self) -> Result<Option<io::Error>, Error> {
        Ok(self.lock()?.read_error.take())
    }
}

impl<W: Write, A: Tally> RoundState<W, A> {
    /// Once the round is over: writes the summary of the tally with `transform` after the lines
    /// and adds the round's counts to `stats`, the bytes its workers read to those read on the
    /// calling thread.
    pub(super) fn end(
        self,
        transform: &impl Tallying<Tally = A>,
        stats: &mut Stats,
    ) -> Result<(), Error> {
        let state = self.0.into_inner().map_err(|_| panicked())?;
        stats.lines = state.lines;
        stats.bytes_in += state.bytes_read_by_workers;
        // A write that failed kept the output: the run fails with it, and no summary follows.
        let Some(Written { mut output, tally }) = state.output else {
            return Ok(());
        };
        let mut summary = Vec::new();
        stats.status = transform.end(tally, &mut summary);
        output.write(&summary)?;
        stats.bytes_out = output.bytes_written();
        Ok(())
    }

    /// Puts `slot`'s rendering in line and, unless another thread is writing already (that one
    /// writes this too when its turn comes), writes every rendering whose turn has come, each
    /// outside the lock so that the others queue theirs meanwhile. Each slot written or dropped
    /// goes back to a worker with a range cut ahead, if there is one, else to `free`. A failed
    /// write is returned, and ends all writing.
    pub(super) fn submit(&self, slot: Slot<A>, mut free: impl FnMut(Slot<A>)) -> Result<(), Error> {
        let mut state = self.lock()?;
        if state.writing_ended {
            free(slot);
            return Ok(());
        }
        state.in_order.insert(slot.number, slot);
        let Some(mut written) = state.output.take() else {
            return Ok(());
        };
        while let Some(mut slot) = state.in_order.pop() {
            if state.admit(&mut slot) {
                drop(state);
                let wrote = written.output.write(&slot.output);
                written.tally.merge(mem::take(&mut slot.tally));
                state = self.lock()?;
                if let Err(error) = wrote {
                    // The slot is not handed back, nor those still in line: the calling thread,
                    // waiting for them, gets this error instead.
                    state.writing_ended = true;
                    return Err(error);
                }
                state.lines += slot.lines;
            }
            state.recycle(slot, &mut free)?;
        }
        state.output = Some(written);
        Ok(())
    }
}

impl<W, A> Locked<W, A> {
    /// Keeps `range` for the next slot written, or the next free one, to take.
    pub(super) fn cut_ahead(&mut self, range: Range) {
        self.ahead.push_back(range);
    }

    /// The ranges cut ahead that no slot has taken yet.
    pub(super) fn cut_ahead_waiting(&self) -> usize {
        self.ahead.len()
    }

    /// Hands `slot` to a worker with the first range cut ahead, or gives it back if none waits.
    pub(super) fn send_ahead(&mut self, mut slot: Slot<A>) -> Result<Option<Slot<A>>, Error> {
        let Some(range) = self.ahead.pop_front() else {
            return Ok(Some(slot));
        };
        slot.range = Some(range);
        self.send(slot).map(|()| None)
    }

    fn number(&mut self, slot: &mut Slot<A>) {
        slot.number = self.next_number;
        self.next_number += 1;
    }

    fn send(&mut self, mut slot: Slot<A>) -> Result<(), Error> {
        self.number(&mut slot);
        let to_workers = self.to_workers.as_ref().ok_or_else(panicked)?;
        to_workers.send(slot).map_err(|_| panicked())
    }

    /// Hands `slot`, written or dropped, to a worker again with the first range cut ahead while
    /// writing goes on; else to `free`.
    fn recycle(&mut self, slot: Slot<A>, free: &mut impl FnMut(Slot<A>)) -> Result<(), Error> {
        let unsent = if self.writing_ended {
            Some(slot)
        } else {
            self.send_ahead(slot)?
        };
        if let Some(slot) = unsent {
            free(slot);
        }
        Ok(())
    }

    /// Whether `slot`'s rendering is to be written, not dropped after a range of its file failed;
    /// lets go of its file, so that a file is closed once its ranges are written.
    fn admit(&mut self, slot: &mut Slot<A>) -> bool {
        let ranged = slot.range.take().is_some();
        if let Some(error) = slot.read_error.take() {
            self.read_error.get_or_insert(error);
            self.ahead.clear();
            return false;
        }
        if ranged {
            if self.read_error.is_some() {
                return false;
            }
            self.bytes_read_by_workers += slot.input.bytes().len() as u64;
        }
        true
    }
}

/// Ends the workers when dropped, on every way out of the run, a panic's included.
pub(super) struct EndsWorkers<'a, W, A>(pub(super) &'a RoundState<W, A>);

impl<W, A> Drop for EndsWorkers<'_, W, A> {
    fn drop(&mut self) {
        self.0.end_workers();
    }
}

/// The error for a thread that panicked, or for a channel whose far end went away with it.
pub(super) fn panicked() -> Error {
    Error::new("rendering", io::Error::other("a worker thread panicked"))
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::os::unix::fs::FileExt;
    use std::sync::Arc;
    use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

    use crossbeam_channel::{TryRecvError, bounded};

    use super::*;
    use crate::io::testing::{self, DEADLINE};
    use crate::transform::SpaceCount;

    /// A slot holding `text`, read and rendered by the calling thread, numbered next by `state`.
    fn read_here<W>(state: &RoundState<W, ()>, text: &[u8]) -> Slot<()> {
        let mut slot = Slot::new(text.len());
        let fill = |buf: &mut Vec<u8>| {
            buf.extend_from_slice(text);
            Ok(text.len())
        };
        slot.input.refill(text.len(), fill).unwrap().unwrap();
        slot.render(&SpaceCount).unwrap();
        state.number(&mut slot).unwrap();
        slot
    }

    /// A slot a worker read `range` into and rendered (or failed to read), numbered next by
    /// `state`.
    fn read_by_worker<W>(state: &RoundState<W, ()>, range: Range) -> Slot<()> {
        let mut slot = Slot::new(range.len);
        slot.range = Some(range);
        slot.read_and_render(&SpaceCount).unwrap();
        state.number(&mut slot).unwrap();
        slot
    }

    fn range(file: &Arc<File>, at: u64, len: usize) -> Range {
        let file = Arc::clone(file);
        Range { file, at, len }
    }

    /// A file that cannot be read: open for writing only.
    fn unreadable() -> Arc<File> {
        let path = testing::path("write-only");
        let file = File::create(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        Arc::new(file)
    }

    /// What `file` holds, read at its start whatever its offset.
    fn written(file: &File) -> Vec<u8> {
        let mut bytes = vec![0; file.metadata().unwrap().len() as usize];
        file.read_exact_at(&mut bytes, 0).unwrap();
        bytes
    }

    /// What the round counted, once over: lines written, bytes read in all (1,000 of them on the
    /// calling thread), bytes written.
    fn counts<W: Write>(state: RoundState<W, ()>) -> (u64, u64, u64) {
        let mut stats = Stats::start();
        stats.bytes_in = 1000;
        state.end(&SpaceCount, &mut stats).unwrap();
        (stats.lines, stats.bytes_in, stats.bytes_out)
    }

    /// A file whose first write says it has begun (`true`) and then waits to be let go: the
    /// output out of the lock, with a thread writing it, for as long as a test likes.
    struct Paused<'a> {
        file: &'a File,
        began: SyncSender<bool>,
        go: Option<Receiver<()>>,
    }

    /// The test's side of a [`Paused`] file.
    struct Pause {
        /// `true` once its first write has begun; `false` if the thread writing returned first.
        has_begun: Receiver<bool>,
        returned: SyncSender<bool>,
        go: SyncSender<()>,
    }

    fn paused(file: &File) -> (Paused<'_>, Pause) {
        let (began, has_begun) = sync_channel(2);
        let (go, goes) = sync_channel(1);
        let returned = began.clone();
        let go_on = Some(goes);
        let pause = Pause {
            has_begun,
            returned,
            go,
        };
        (
            Paused {
                file,
                began,
                go: go_on,
            },
            pause,
        )
    }

    impl Write for Paused<'_> {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            if let Some(go) = self.go.take() {
                self.began.send(true).unwrap();
                go.recv_timeout(DEADLINE).unwrap();
            }
            self.file.write(bytes)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Submits `slot` on a thread of its own, which takes the output out and begins to write it;
    /// runs `meanwhile` while that write waits, then lets it go. Returns the numbers of the
    /// slots that thread handed back.
    fn while_writing(
        state: &RoundState<Paused<'_>, ()>,
        slot: Slot<()>,
        pause: Pause,
        meanwhile: impl FnOnce(),
    ) -> Vec<u64> {
        std::thread::scope(|scope| {
            // Moved in, so that a failure here drops `go` and the writer is not left waiting.
            let Pause {
                has_begun,
                returned,
                go,
            } = pause;
            let writer = scope.spawn(move || {
                let mut freed = Vec::new();
                let submitted = state.submit(slot, |slot| freed.push(slot.number));
                let _ = returned.send(false);
                submitted.unwrap();
                freed
            });
            let begun = has_begun.recv_timeout(DEADLINE).unwrap();
            assert!(begun, "the writer returned without writing");
            meanwhile();
            go.send(()).unwrap();
            writer.join().unwrap()
        })
    }

    /// A rendering submitted before its turn waits, unwritten and not handed back, until the
    /// one before it comes; then both are written in order, and the lines and the bytes the
    /// workers read are counted.
    #[test]
    fn a_rendering_early_waits_for_its_turn_and_the_counts_add_up() {
        let file = Arc::new(testing::file(b"a b\nc\n"));
        let out = testing::file(b"");
        let state = RoundState::new(3, Output::new(&out, 0));
        let first = read_here(&state, b"x\n");
        let second = read_by_worker(&state, range(&file, 0, 6));
        let mut freed = Vec::new();
        state
            .submit(second, |slot| freed.push(slot.number))
            .unwrap();
        assert_eq!((freed.len(), written(&out)), (0, Vec::new()), "held");
        state.submit(first, |slot| freed.push(slot.number)).unwrap();
        assert_eq!(freed, [0, 1], "both written and handed back, in order");
        let expected = b"[spaces: 0]x\n[spaces: 1]a b\n[spaces: 0]c\n";
        assert_eq!(written(&out), expected);
        assert_eq!(counts(state), (3, 1006, expected.len() as u64));
    }

    /// While one thread writes, outside the lock, another's rendering is only queued: the thread
    /// writing writes it after its own and hands it back.
    #[test]
    fn a_rendering_submitted_while_another_is_written_is_only_queued() {
        let out = testing::file(b"");
        let (paused, pause) = paused(&out);
        let state = RoundState::new(2, Output::new(paused, 0));
        let (first, second) = (read_here(&state, b"a\n"), read_here(&state, b"b\n"));
        let freed_by_writer = while_writing(&state, first, pause, || {
            let submitted = state.submit(second, |_| panic!("handed back unwritten"));
            submitted.unwrap();
            assert_eq!(written(&out), b"", "the first write not done yet");
        });
        assert_eq!(freed_by_writer, [0, 1]);
        assert_eq!(written(&out), b"[spaces: 0]a\n[spaces: 0]b\n");
    }

    /// A failed write is returned; neither its slot nor those queued behind it are handed back
    /// (the calling thread, waiting for them, gets the error instead); the renderings submitted
    /// after it are handed back at once, unwritten, and nothing is counted.
    #[test]
    fn a_failed_write_is_returned_and_ends_writing() {
        let full = File::options().write(true).open("/dev/full").unwrap();
        let state = RoundState::new(3, Output::new(&full, 0));
        let slots = [b"a\n", b"b\n", b"c\n"].map(|text| read_here(&state, text));
        let [first, queued, later] = slots;
        let mut freed = Vec::new();
        state
            .submit(queued, |slot| freed.push(slot.number))
            .unwrap();
        let error = state.submit(first, |slot| freed.push(slot.number));
        let error = error.unwrap_err().to_string();
        assert!(error.starts_with("writing the output: "), "{error}");
        assert!(freed.is_empty(), "{freed:?} handed back");
        state.submit(later, |slot| freed.push(slot.number)).unwrap();
        assert_eq!(freed, [2], "handed back at once: a write would fail");
        assert_eq!(counts(state), (0, 1000, 0));
    }

    /// The first range that could not be read is kept, until taken: the renderings after it
    /// are dropped unwritten (though handed back), and the ranges cut ahead dropped unread.
    /// Once it is taken, ranges are written again.
    #[test]
    fn the_first_read_error_is_kept_and_drops_the_ranges_after_it() {
        let (file, unreadable) = (Arc::new(testing::file(b"a\nb\n")), unreadable());
        let out = testing::file(b"");
        let state = RoundState::new(4, Output::new(&out, 0));
        let (to_workers, jobs) = bounded(4);
        state.start_workers(to_workers).unwrap();
        let first_error = range(&unreadable, 0, 2).read(&mut Vec::new()).unwrap_err();
        let failed = read_by_worker(&state, range(&unreadable, 0, 2));
        let mut failed_too = read_by_worker(&state, range(&file, 0, 2));
        failed_too.read_error = Some(io::Error::other("the second"));
        let after = read_by_worker(&state, range(&file, 0, 2));
        state.lock().unwrap().cut_ahead(range(&file, 2, 2));
        let mut freed = Vec::new();
        for slot in [failed, failed_too, after] {
            state.submit(slot, |slot| freed.push(slot.number)).unwrap();
        }
        assert_eq!(freed, [0, 1, 2]);
        assert_eq!(written(&out), b"");
        assert_eq!(state.lock().unwrap().cut_ahead_waiting(), 0);
        assert!(jobs.is_empty(), "no worker given the range cut ahead");
        assert!(state.read_failed().unwrap());
        let error = state.take_read_error().unwrap().expect("the error kept");
        assert_eq!(error.raw_os_error(), first_error.raw_os_error());
        assert!(!state.read_failed().unwrap(), "taken");
        let again = read_by_worker(&state, range(&file, 2, 2));
        state.submit(again, |slot| freed.push(slot.number)).unwrap();
        assert_eq!(written(&out), b"[spaces: 0]b\n");
        assert_eq!(counts(state), (1, 1002, 13));
    }

    /// Slots are numbered in the order they are handed out, to a worker or not; a slot written
    /// goes straight back to a worker with the first range cut ahead, numbered, while one waits.
    #[test]
    fn slots_are_numbered_as_handed_out_and_a_slot_written_takes_a_range_cut_ahead() {
        let file = Arc::new(testing::file(b"a\nb\n"));
        let out = testing::file(b"");
        let state = RoundState::new(4, Output::new(&out, 0));
        let (to_workers, jobs) = bounded(4);
        state.start_workers(to_workers).unwrap();
        let here = read_here(&state, b"x\n");
        state.send(Slot::new(1)).unwrap();
        let mut locked = state.lock().unwrap();
        let unsent = locked.send_ahead(Slot::new(1)).unwrap();
        assert!(unsent.is_some(), "given back: no range cut ahead");
        locked.cut_ahead(range(&file, 0, 2));
        locked.cut_ahead(range(&file, 2, 2));
        assert_eq!(locked.cut_ahead_waiting(), 2);
        assert!(locked.send_ahead(Slot::new(1)).unwrap().is_none());
        drop(locked);
        state
            .submit(here, |_| panic!("not to the calling thread"))
            .unwrap();
        let sent: Vec<_> = jobs.try_iter().collect();
        let numbers: Vec<_> = sent.iter().map(|slot| slot.number).collect();
        let starts: Vec<_> = sent
            .iter()
            .map(|slot| slot.range.as_ref().map(|r| r.at))
            .collect();
        assert_eq!(numbers, [1, 2, 3]);
        assert_eq!(starts, [None, Some(0), Some(2)]);
        assert_eq!(state.lock().unwrap().cut_ahead_waiting(), 0);
    }

    /// A slot written after the run began to end early is handed back, not given the range
    /// cut ahead.
    #[test]
    fn a_slot_written_once_writing_has_ended_is_handed_back() {
        let file = Arc::new(testing::file(b"a\n"));
        let out = testing::file(b"");
        let (paused, pause) = paused(&out);
        let state = RoundState::new(2, Output::new(paused, 0));
        let (to_workers, jobs) = bounded(2);
        state.start_workers(to_workers).unwrap();
        let slot = read_here(&state, b"x\n");
        state.lock().unwrap().cut_ahead(range(&file, 0, 2));
        let freed = while_writing(&state, slot, pause, || state.end_writing());
        assert_eq!(freed, [0]);
        assert!(jobs.is_empty());
        assert_eq!(written(&out), b"[spaces: 0]x\n");
    }

    /// Ending the workers closes their channel once its slots are taken, and drops the ranges
    /// cut ahead: on any way out, as `EndsWorkers` is dropped.
    #[test]
    fn ending_the_workers_closes_their_channel() {
        let file = Arc::new(testing::file(b"a\n"));
        let out = testing::file(b"");
        let state = RoundState::<_, ()>::new(1, Output::new(&out, 0));
        let (to_workers, jobs) = bounded(1);
        state.start_workers(to_workers).unwrap();
        state.send(Slot::new(1)).unwrap();
        state.lock().unwrap().cut_ahead(range(&file, 0, 2));
        drop(EndsWorkers(&state));
        assert_eq!(state.lock().unwrap().cut_ahead_waiting(), 0);
        assert!(state.send(Slot::new(1)).is_err(), "nothing more handed out");
        assert!(
            jobs.try_recv().is_ok(),
            "the slot sent before is still taken"
        );
        assert!(matches!(jobs.try_recv(), Err(TryRecvError::Disconnected)));
    }

    /// The message of the error `result` must be.
    fn error<T>(result: Result<T, Error>) -> String {
        match result {
            Ok(_) => panic!("no error"),
            Err(error) => error.to_string(),
        }
    }

    /// A thread that panicked holding the lock leaves every operation failing with the panic's
    /// error rather than panicking in turn; the workers are still ended.
    #[test]
    fn a_poisoned_lock_is_an_error() {
        let out = testing::file(b"");
        let state = RoundState::new(1, Output::new(&out, 0));
        let (to_workers, jobs) = bounded(1);
        state.start_workers(to_workers).unwrap();
        let mut slot = read_here(&state, b"x\n");
        std::thread::scope(|scope| {
            let holds = scope.spawn(|| {
                let _locked = state.lock().unwrap();
                panic!("a worker panics holding the lock");
            });
            assert!(holds.join().is_err());
        });
        let expected = panicked().to_string();
        assert_eq!(error(state.number(&mut slot)), expected);
        assert_eq!(error(state.send(Slot::new(1))), expected);
        assert_eq!(error(state.read_failed()), expected);
        assert_eq!(error(state.take_read_error()), expected);
        assert_eq!(error(state.start_workers(bounded(1).0)), expected);
        let submitted = state.submit(slot, |_| panic!("handed back"));
        assert_eq!(error(submitted), expected);
        state.end_writing();
        state.end_workers();
        assert!(matches!(jobs.try_recv(), Err(TryRecvError::Disconnected)));
        assert_eq!(error(state.end(&SpaceCount, &mut Stats::start())), expected);
        assert_eq!(written(&out), b"");
    }
}
