//! The renderings on their way out: put back in input order, and written by whichever thread's
//! turn it is, outside the lock, so that the others queue theirs meanwhile.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crossbeam_channel::Sender;

use super::panicked;
use super::round::Slot;
use crate::error::Error;
use crate::io::Output;
use crate::io::ranges::Range;
use crate::parallel::Reorder;

/// The renderings on their way out, shared by every thread that writes: the calling thread for
/// the lines it renders itself, each worker for its own.
pub(super) struct Writing<W> {
    pub(super) in_order: Reorder<Slot>,
    /// `None` while a thread is writing, which it does outside the lock: the others leave their
    /// renderings in `in_order` for it, and it writes them too before it puts the output back.
    pub(super) output: Option<Output<W>>,
    /// A write failed, or the run is ending early: nothing more is written.
    pub(super) failed: bool,
    pub(super) lines: u64,
    /// Bytes the workers read themselves, counted as their slots are written.
    pub(super) bytes_read_by_workers: u64,
    /// The first range that could not be read: the file's later ranges are dropped unwritten,
    /// and those cut ahead unread.
    pub(super) read_error: Option<io::Error>,
    /// The number the next slot handed out takes: slots are numbered in input order as they
    /// are handed out, by whichever thread hands them.
    pub(super) next_number: u64,
    /// Where slots go to be rendered, once the workers have started; `None` again ends them.
    pub(super) to_workers: Option<Sender<Slot>>,
    /// Ranges of a file cut ahead by the calling thread while every slot is out. A slot written
    /// goes straight back to a worker with the first of them, so that the calling thread wakes
    /// once these run out rather than once a chunk.
    pub(super) ahead: VecDeque<Range>,
}

impl<W> Writing<W> {
    /// Before the first rendering, for at most `window` slots out at once.
    pub(super) fn new(window: usize, output: Output<W>) -> Mutex<Self> {
        Mutex::new(Writing {
            in_order: Reorder::new(window),
            output: Some(output),
            failed: false,
            lines: 0,
            bytes_read_by_workers: 0,
            read_error: None,
            next_number: 0,
            to_workers: None,
            ahead: VecDeque::new(),
        })
    }

    /// Numbers `slot` in input order.
    pub(super) fn number(&mut self, slot: &mut Slot) {
        slot.number = self.next_number;
        self.next_number += 1;
    }

    /// Numbers `slot` and hands it to a worker. Fails only if no worker is left (they panicked).
    pub(super) fn send(&mut self, mut slot: Slot) -> Result<(), Error> {
        self.number(&mut slot);
        let to_workers = self.to_workers.as_ref().ok_or_else(panicked)?;
        to_workers.send(slot).map_err(|_| panicked())
    }

    /// Hands `slot` to a worker with the first range cut ahead, or gives it back if none waits.
    pub(super) fn send_ahead(&mut self, mut slot: Slot) -> Result<Option<Slot>, Error> {
        let Some(range) = self.ahead.pop_front() else {
            return Ok(Some(slot));
        };
        slot.range = Some(range);
        self.send(slot).map(|()| None)
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
    pub(super) fn admit(&mut self, slot: &mut Slot) -> bool {
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

pub(super) fn lock<W>(writing: &Mutex<Writing<W>>) -> Result<MutexGuard<'_, Writing<W>>, Error> {
    writing.lock().map_err(|_| panicked())
}

/// Ends the workers when dropped, on every way out of the run, a panic's included: nothing more
/// is handed out, and their channel closes once its last slots are taken.
pub(super) struct EndsWorkers<'a, W>(pub(super) &'a Mutex<Writing<W>>);

impl<W> Drop for EndsWorkers<'_, W> {
    fn drop(&mut self) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.ahead.clear();
        state.to_workers = None;
    }
}

/// Puts `slot`'s rendering in line and, unless another thread is writing already (that one
/// writes this too when its turn comes), writes every rendering whose turn has come, each outside
/// the lock so that the others queue theirs meanwhile. Each slot written or dropped goes back to
/// a worker with a range cut ahead, if there is one, else to `free`. A failed write is returned,
/// and ends all writing.
pub(super) fn submit<W: Write>(
    writing: &Mutex<Writing<W>>,
    slot: Slot,
    mut free: impl FnMut(Slot),
) -> Result<(), Error> {
    let mut state = lock(writing)?;
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
            state = lock(writing)?;
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
