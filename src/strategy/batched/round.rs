//! The slot round: a chunk of lines (or a range of a file) in a [`Slot`], handed out by the
//! calling thread's [`Flight`], read and rendered by a worker ([`work`]), written in its turn
//! ([`RoundState::submit`]), and handed back to be filled again, or straight to a worker again
//! with a range cut ahead.

use std::io::Write;
use std::sync::MutexGuard;

use crossbeam_channel::{Receiver, Sender};

use super::slot::Slot;
use super::state::{Locked, RoundState, panicked};
use crate::error::Error;
use crate::frame::Chunk;
use crate::io::ranges::Range;
use crate::parallel::{OnPanic, Slots};
use crate::stats::StageClock;
use crate::tally::Tallying;

/// The most ranges of a file cut ahead while every slot is out: the calling thread then waits
/// until the slots written have taken them all, so that it wakes once for this many chunks.
/// A range is a few words, and cutting it reads a few KiB.
const CUT_AHEAD: usize = 16;

/// The calling thread's side of the round: slots free or out, handed to the workers in input
/// order. The slots come back once written, by whichever thread wrote them, unless they go
/// straight back to a worker with a range cut ahead.
pub(super) struct Flight<'a, W, T: Tallying> {
    pub(super) slots: Slots<Slot<T::Tally>>,
    /// The workers, which lines held are shared out between.
    pub(super) threads: usize,
    pub(super) chunk_size: usize,
    /// Slots written, or the error that ended writing.
    pub(super) freed: Receiver<Result<Slot<T::Tally>, Error>>,
    pub(super) state: &'a RoundState<W, T::Tally>,
    /// What the lines rendered here are rendered with.
    pub(super) transform: &'a T,
    /// The calling thread's clock, reported as the `reader` stage: its reads, the lines it
    /// renders itself and their writing are busy time; waiting for a slot to come back is
    /// waiting to receive.
    pub(super) clock: StageClock,
}

impl<W: Write, T: Tallying> Flight<'_, W, T> {
    /// Takes back the slots that have come back, and notices a failed write, without waiting.
    fn take_freed(&mut self) -> Result<(), Error> {
        while let Ok(freed) = self.freed.try_recv() {
            self.slots.give_back(freed?);
        }
        Ok(())
    }

    /// A free slot, waiting for one to come back if all are out.
    fn free_slot(&mut self) -> Result<Slot<T::Tally>, Error> {
        self.take_freed()?;
        loop {
            let size = self.chunk_size;
            if let Some(slot) = self.slots.take(|| Slot::new(size)) {
                return Ok(slot);
            }
            self.wait_for_one_back()?;
        }
    }

    /// Hands the whole lines in `chunk` to the workers, in `parts` slots of about as many bytes
    /// each (fewer where its lines are too few or too long to cut so).
    pub(super) fn send_lines(&mut self, chunk: &mut Chunk, parts: usize) -> Result<(), Error> {
        for left in (2..=parts).rev() {
            let mut slot = self.free_slot()?;
            if !chunk.take_lines_past(chunk.bytes().len() / left, &mut slot.input)? {
                self.slots.give_back(slot);
                break;
            }
            self.state.send(slot)?;
        }
        let mut slot = self.free_slot()?;
        chunk.take_lines(&mut slot.input)?;
        self.state.send(slot)
    }

    /// Hands a range of a file to a worker, to read and render: in a free slot, else cut ahead
    /// for the next slot written to take. Past [`CUT_AHEAD`] ranges waiting, waits for slots to
    /// come back, which they do once those are taken.
    pub(super) fn send_range(&mut self, range: Range) -> Result<(), Error> {
        let shared = self.state;
        let mut state = shared.lock()?;
        state.cut_ahead(range);
        // A slot written comes back here only when no range waits for it: taking back, under
        // the lock, those that have, no range is left waiting while a slot is free.
        self.take_freed()?;
        self.fill_slots(&mut state)?;
        let waiting = state.cut_ahead_waiting();
        drop(state);
        if waiting >= CUT_AHEAD {
            self.wait_for_one_back()?;
        }
        Ok(())
    }

    /// Hands the ranges cut ahead to the free slots, in order.
    fn fill_slots(&mut self, state: &mut MutexGuard<'_, Locked<W, T::Tally>>) -> Result<(), Error> {
        while state.cut_ahead_waiting() > 0 {
            let size = self.chunk_size;
            let Some(slot) = self.slots.take(|| Slot::new(size)) else {
                break;
            };
            if let Some(unsent) = state.send_ahead(slot)? {
                self.slots.give_back(unsent);
            }
        }
        Ok(())
    }

    /// Renders the whole lines in `chunk` here, and writes them after what the workers hold.
    pub(super) fn render_here(&mut self, chunk: &mut Chunk) -> Result<(), Error> {
        let mut slot = self.free_slot()?;
        chunk.take_lines(&mut slot.input)?;
        slot.render(self.transform)?;
        self.state.number(&mut slot)?;
        let slots = &mut self.slots;
        self.state.submit(slot, |slot| slots.give_back(slot))
    }

    /// Waits until every slot out has been written.
    pub(super) fn drain(&mut self) -> Result<(), Error> {
        while self.slots.out() > 0 {
            self.wait_for_one_back()?;
        }
        Ok(())
    }

    /// Waits for one slot to come back.
    fn wait_for_one_back(&mut self) -> Result<(), Error> {
        self.clock.busy();
        let freed = self.freed.recv();
        self.clock.waited_to_receive();
        // The workers hold their senders until this thread lets them go.
        self.slots.give_back(freed.map_err(|_| panicked())??);
        Ok(())
    }
}

/// A worker: reads and renders slots with `transform`, writes them when their turn comes (or
/// leaves them to the thread writing), and hands them back to the calling thread.
pub(super) fn work<W: Write, T: Tallying>(
    jobs: Receiver<Slot<T::Tally>>,
    freed: Sender<Result<Slot<T::Tally>, Error>>,
    state: &RoundState<W, T::Tally>,
    transform: &T,
    mut clock: StageClock,
) -> StageClock {
    // A panic here would lose a slot, and the calling thread would wait for it forever.
    let _alarm = OnPanic(|| {
        let _ = freed.send(Err(panicked()));
    });
    for mut slot in &jobs {
        clock.waited_to_receive();
        let done = slot.read_and_render(transform).and_then(|()| {
            state.submit(slot, |slot| {
                let _ = freed.send(Ok(slot));
            })
        });
        clock.busy();
        if let Err(error) = done {
            let _ = freed.send(Err(error));
            break;
        }
    }
    clock
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crossbeam_channel::bounded;

    use super::*;
    use crate::io::{Output, testing};
    use crate::stats::Stats;
    use crate::strategy::batched::state::EndsWorkers;
    use crate::transform::SpaceCount;

    /// A slot written goes straight back to a worker with the next range cut ahead, in order, and
    /// comes back to the calling thread only once none is left.
    #[test]
    fn a_slot_written_takes_the_next_range_cut_ahead() {
        let file = Arc::new(testing::file(b"a\nb c\nd e f\n"));
        let range = |at, len| Range {
            file: Arc::clone(&file),
            at,
            len,
        };
        let mut out = Vec::new();
        let state = RoundState::new(1, Output::new(&mut out, 0));
        let (to_workers, jobs) = bounded(1);
        let (freed, written) = bounded(1);
        state.start_workers(to_workers).unwrap();
        {
            let mut locked = state.lock().unwrap();
            locked.cut_ahead(range(2, 4));
            locked.cut_ahead(range(6, 6));
        }
        let mut slot = Slot::new(4);
        slot.range = Some(range(0, 2));
        state.send(slot).unwrap();
        let came_back = std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                work(
                    jobs,
                    freed,
                    &state,
                    &SpaceCount,
                    StageClock::new("w", false),
                )
            });
            let came_back = written.recv().unwrap();
            drop(EndsWorkers(&state));
            worker.join().unwrap();
            came_back
        });
        assert_eq!(came_back.unwrap().number, 2, "one slot, round three times");
        let mut stats = Stats::start();
        state.end(&SpaceCount, &mut stats).unwrap();
        assert_eq!((stats.lines, stats.bytes_in), (3, 12));
        assert_eq!(out, b"[spaces: 0]a\n[spaces: 1]b c\n[spaces: 2]d e f\n");
    }

    /// A worker reads its slot's range of a file itself, renders it, and writes it in its turn:
    /// handed the later range first, it leaves that one for whoever writes the earlier. A range
    /// the file no longer holds all of comes back short, its last line ended.
    #[test]
    fn a_worker_reads_renders_and_writes_its_ranges_in_order() {
        let file = Arc::new(testing::file(b"skip\na b\nc"));
        let mut out = Vec::new();
        let state = RoundState::new(2, Output::new(&mut out, 0));
        let (to_worker, jobs) = bounded(2);
        let (freed, written) = bounded(2);
        for (number, at, len) in [(1, 9, 8), (0, 5, 4)] {
            let mut slot = Slot::new(4);
            let file = Arc::clone(&file);
            slot.number = number;
            slot.range = Some(Range { file, at, len });
            to_worker.send(slot).unwrap();
        }
        drop(to_worker);
        let clock = StageClock::new("worker", false);
        work(jobs, freed, &state, &SpaceCount, clock);
        assert_eq!(written.len(), 2, "both slots handed back");
        let mut stats = Stats::start();
        state.end(&SpaceCount, &mut stats).unwrap();
        assert_eq!((stats.lines, stats.bytes_in), (2, 5));
        assert_eq!(out, b"[spaces: 1]a b\n[spaces: 0]c\n");
    }
}
