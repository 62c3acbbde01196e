//! The round's shared state: what every thread of the round reaches through one lock, and the
//! rules for it. Slots are numbered in input order as they are handed out, their renderings put
//! back in that order and written by whichever thread's turn it is, outside the lock, so that
//! the others queue theirs meanwhile; ranges cut ahead wait here for the next slot written.
//!
//! Its rules live here alone:
//! - the output is out of the lock while a thread writes it: whoever finds it out only queues,
//!   and the thread writing writes that too before it puts the output back;
//! - once writing has failed (or the run is ending early), nothing more is written, and no slot
//!   goes back to a worker;
//! - the first range that could not be read is kept: its file's later ranges are dropped
//!   unwritten, and those cut ahead unread.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crossbeam_channel::Sender;

use super::slot::Slot;
use crate::error::Error;
use crate::io::Output;
use crate::io::ranges::Range;
use crate::parallel::Reorder;
use crate::stats::Stats;

/// The round's shared state, under one lock: shared by every thread that hands out slots or
/// writes renderings, the calling thread and each worker.
pub(super) struct RoundState<W>(Mutex<Locked<W>>);

/// The round's shared state as one thread holds it, the lock taken.
pub(super) struct Locked<W> {
    in_order: Reorder<Slot>,
    /// `None` while a thread is writing, which it does outside the lock: the others leave their
    /// renderings in `in_order` for it, and it writes them too before it puts the output back.
    output: Option<Output<W>>,
    /// A write failed, or the run is ending early: nothing more is written.
    failed: bool,
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
    to_workers: Option<Sender<Slot>>,
    /// Ranges of a file cut ahead by the calling thread while every slot is out. A slot written
    /// goes straight back to a worker with the first of them, so that the calling thread wakes
    /// once these run out rather than once a chunk.
    ahead: VecDeque<Range>,
}

impl<W> RoundState<W> {
    /// Before the first rendering, for at most `window` slots out at once.
    pub(super) fn new(window: usize, output: Output<W>) -> Self {
        RoundState(Mutex::new(Locked {
            in_order: Reorder::new(window),
            output: Some(output),
            failed: false,
            lines: 0,
            bytes_read_by_workers: 0,
            read_error: None,
            next_number: 0,
            to_workers: None,
            ahead: VecDeque::new(),
        }))
    }

    /// Takes the lock; fails if a thread panicked holding it.
    pub(super) fn lock(&self) -> Result<MutexGuard<'_, Locked<W>>, Error> {
        self.0.lock().map_err(|_| panicked())
    }

    /// Slots handed out from now on go to `to_workers`.
    pub(super) fn start_workers(&self, to_workers: Sender<Slot>) -> Result<(), Error> {
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

    /// The run is ending early: nothing more is written, and the workers only hand their slots
    /// back. (A lock poisoned by a worker's panic says as much already.)
    pub(super) fn fail(&self) {
        if let Ok(mut state) = self.0.lock() {
            state.failed = true;
        }
    }

    /// Numbers `slot` in input order.
    pub(super) fn number(&self, slot: &mut Slot) -> Result<(), Error> {
        self.lock()?.number(slot);
        Ok(())
    }

    /// Numbers `slot` and hands it to a worker. Fails only if no worker is left (they panicked).
    pub(super) fn send(&self, slot: Slot) -> Result<(), Error> {
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

impl<W: Write> RoundState<W> {
    /// Once the round is over: adds its counts to `stats`, the bytes its workers read to those
    /// read on the calling thread.
    pub(super) fn count_into(self, stats: &mut Stats) -> Result<(), Error> {
        let state = self.0.into_inner().map_err(|_| panicked())?;
        stats.lines = state.lines;
        stats.bytes_in += state.bytes_read_by_workers;
        stats.bytes_out = state.output.map_or(0, |output| output.bytes_written());
        Ok(())
    }

    /// Puts `slot`'s rendering in line and, unless another thread is writing already (that one
    /// writes this too when its turn comes), writes every rendering whose turn has come, each
    /// outside the lock so that the others queue theirs meanwhile. Each slot written or dropped
    /// goes back to a worker with a range cut ahead, if there is one, else to `free`. A failed
    /// write is returned, and ends all writing.
    pub(super) fn submit(&self, slot: Slot, mut free: impl FnMut(Slot)) -> Result<(), Error> {
        let mut state = self.lock()?;
        if state.failed {
            free(slot);
            return Ok(());
        }
        state.in_order.insert(slot.number, slot);
        let Some(mut output) = state.output.take() else {
            return Ok(());
        };
        while let Some(mut slot) = state.in_order.pop() {
            if state.admit(&mut slot) {
                drop(state);
                let wrote = output.write(&slot.output);
                state = self.lock()?;
                if let Err(error) = wrote {
                    // The slot is not handed back, nor those still in line: the calling thread,
                    // waiting for them, gets this error instead.
                    state.failed = true;
                    return Err(error);
                }
                state.lines += slot.lines;
            }
            state.recycle(slot, &mut free)?;
        }
        state.output = Some(output);
        Ok(())
    }
}

impl<W> Locked<W> {
    /// Keeps `range` for the next slot written, or the next free one, to take.
    pub(super) fn cut_ahead(&mut self, range: Range) {
        self.ahead.push_back(range);
    }

    /// The ranges cut ahead that no slot has taken yet.
    pub(super) fn cut_ahead_waiting(&self) -> usize {
        self.ahead.len()
    }

    /// Hands `slot` to a worker with the first range cut ahead, or gives it back if none waits.
    pub(super) fn send_ahead(&mut self, mut slot: Slot) -> Result<Option<Slot>, Error> {
        let Some(range) = self.ahead.pop_front() else {
            return Ok(Some(slot));
        };
        slot.range = Some(range);
        self.send(slot).map(|()| None)
    }

    fn number(&mut self, slot: &mut Slot) {
        slot.number = self.next_number;
        self.next_number += 1;
    }

    fn send(&mut self, mut slot: Slot) -> Result<(), Error> {
        self.number(&mut slot);
        let to_workers = self.to_workers.as_ref().ok_or_else(panicked)?;
        to_workers.send(slot).map_err(|_| panicked())
    }

    /// Hands `slot`, written or dropped, to a worker again with the first range cut ahead while
    /// writing goes on; else to `free`.
    fn recycle(&mut self, slot: Slot, free: &mut impl FnMut(Slot)) -> Result<(), Error> {
        let unsent = if self.failed {
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
    fn admit(&mut self, slot: &mut Slot) -> bool {
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
pub(super) struct EndsWorkers<'a, W>(pub(super) &'a RoundState<W>);

impl<W> Drop for EndsWorkers<'_, W> {
    fn drop(&mut self) {
        self.0.end_workers();
    }
}

/// The error for a thread that panicked, or for a channel whose far end went away with it.
pub(super) fn panicked() -> Error {
    Error::new("rendering", io::Error::other("a worker thread panicked"))
}
