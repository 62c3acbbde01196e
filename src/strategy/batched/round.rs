//! The slot round: a chunk of lines (or a range of a file) in a [`Slot`], handed out by the
//! calling thread's [`Flight`], read and rendered by a worker ([`work`]), written in its turn
//! ([`submit`]), and handed back to be filled again.

use std::io::{self, Write};
use std::sync::Mutex;

use crossbeam_channel::{Receiver, Sender};

use super::panicked;
use super::writing::{Writing, lock, submit};
use crate::error::Error;
use crate::frame::Chunk;
use crate::io::ranges::Range;
use crate::parallel::{OnPanic, Slots};
use crate::stats::StageClock;
use crate::strategy::render_chunk_in_memory;

/// A chunk on its round: its number in input order, its lines, their rendering.
pub(super) struct Slot {
    pub(super) number: u64,
    pub(super) input: Chunk,
    pub(super) output: Vec<u8>,
    pub(super) lines: u64,
    /// The range of a regular file the worker is to read into `input` itself.
    pub(super) range: Option<Range>,
    /// Reading the range failed: the writer keeps it when the slot's turn comes, for the calling
    /// thread to hand to the input.
    pub(super) read_error: Option<io::Error>,
}

impl Slot {
    pub(super) fn new(chunk_size: usize) -> Self {
        Slot {
            number: 0,
            input: Chunk::new(chunk_size),
            output: Vec::new(),
            lines: 0,
            range: None,
            read_error: None,
        }
    }

    /// Renders the lines held into `output`, replacing what it held.
    pub(super) fn render(&mut self) -> Result<(), Error> {
        self.output.clear();
        self.lines = render_chunk_in_memory(&mut self.output, self.input.bytes())?;
        Ok(())
    }

    /// A worker's job: reads the slot's range, if it has one, then renders it. A range that comes
    /// back short (the file shrank) is rendered as far as it goes, its last line ended; a failed
    /// read is kept in the slot, unrendered.
    pub(super) fn read_and_render(&mut self) -> Result<(), Error> {
        if let Some(range) = &self.range {
            let read = self.input.refill(range.len, |buf| range.read(buf))?;
            if let Err(error) = read {
                self.output.clear();
                self.lines = 0;
                self.read_error = Some(error);
                return Ok(());
            }
        }
        self.render()
    }
}

/// The calling thread's side of the round: slots free or out, handed to the workers in input
/// order. The slots come back once written, by whichever thread wrote them.
pub(super) struct Flight<'a, W> {
    pub(super) slots: Slots<Slot>,
    pub(super) chunk_size: usize,
    /// The number the next slot handed out takes.
    pub(super) next_number: u64,
    pub(super) to_workers: Sender<Slot>,
    /// Slots written, or the error that ended writing.
    pub(super) freed: Receiver<Result<Slot, Error>>,
    pub(super) writing: &'a Mutex<Writing<W>>,
    /// The calling thread's clock, reported as the `reader` stage: its reads, the lines it
    /// renders itself and their writing are busy time; waiting for a slot to come back is
    /// waiting to receive.
    pub(super) clock: StageClock,
}

impl<W: Write> Flight<'_, W> {
    /// A free slot, waiting for one to come back if all are out.
    pub(super) fn slot(&mut self) -> Result<Slot, Error> {
        // Slots come back, and a failed write is noticed, without waiting.
        while let Ok(freed) = self.freed.try_recv() {
            self.slots.give_back(freed?);
        }
        loop {
            let size = self.chunk_size;
            if let Some(slot) = self.slots.take(|| Slot::new(size)) {
                return Ok(slot);
            }
            self.receive()?;
        }
    }

    /// Numbers `slot` in input order.
    pub(super) fn number(&mut self, slot: &mut Slot) {
        slot.number = self.next_number;
        self.next_number += 1;
    }

    /// Hands `slot` to a worker.
    pub(super) fn send(&mut self, mut slot: Slot) -> Result<(), Error> {
        self.number(&mut slot);
        self.to_workers.send(slot).map_err(|_| panicked())
    }

    /// Hands the whole lines in `chunk` to a worker.
    pub(super) fn send_lines(&mut self, chunk: &mut Chunk) -> Result<(), Error> {
        let mut slot = self.slot()?;
        chunk.take_lines(&mut slot.input)?;
        self.send(slot)
    }

    /// Hands a range of a file to a worker, to read and render.
    pub(super) fn send_range(&mut self, range: Range) -> Result<(), Error> {
        let mut slot = self.slot()?;
        slot.range = Some(range);
        self.send(slot)
    }

    /// Renders the whole lines in `chunk` here, and writes them after what the workers hold.
    pub(super) fn render_here(&mut self, chunk: &mut Chunk) -> Result<(), Error> {
        if chunk.has_lines() {
            let mut slot = self.slot()?;
            chunk.take_lines(&mut slot.input)?;
            slot.render()?;
            self.number(&mut slot);
            let slots = &mut self.slots;
            submit(self.writing, slot, |slot| slots.give_back(slot))?;
        }
        Ok(())
    }

    /// Waits until every slot out has been written.
    pub(super) fn drain(&mut self) -> Result<(), Error> {
        while self.slots.out() > 0 {
            self.receive()?;
        }
        Ok(())
    }

    /// Waits for one slot to come back.
    pub(super) fn receive(&mut self) -> Result<(), Error> {
        self.clock.busy();
        let freed = self.freed.recv();
        self.clock.waited_to_receive();
        // The workers hold their senders until this thread lets them go.
        self.slots.give_back(freed.map_err(|_| panicked())??);
        Ok(())
    }

    /// Whether a range could not be read: the rest of its file is not cut.
    pub(super) fn range_failed(&self) -> Result<bool, Error> {
        Ok(lock(self.writing)?.read_error.is_some())
    }

    /// The first range that could not be read, once all are written: the next file's ranges
    /// are written again.
    pub(super) fn range_failure(&self) -> Result<Option<io::Error>, Error> {
        Ok(lock(self.writing)?.read_error.take())
    }
}

/// A worker: reads and renders slots, writes them when their turn comes (or leaves them to the
/// thread writing), and hands them back to the calling thread.
pub(super) fn work<W: Write>(
    jobs: Receiver<Slot>,
    freed: Sender<Result<Slot, Error>>,
    writing: &Mutex<Writing<W>>,
    mut clock: StageClock,
) -> StageClock {
    // A panic here would lose a slot, and the calling thread would wait for it forever.
    let _alarm = OnPanic(|| {
        let _ = freed.send(Err(panicked()));
    });
    for mut slot in &jobs {
        clock.waited_to_receive();
        let done = slot.read_and_render().and_then(|()| {
            submit(writing, slot, |slot| {
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

    /// A worker reads its slot's range of a file itself, renders it, and writes it in its turn:
    /// handed the later range first, it leaves that one for whoever writes the earlier. A range
    /// the file no longer holds all of comes back short, its last line ended.
    #[test]
    fn a_worker_reads_renders_and_writes_its_ranges_in_order() {
        let file = Arc::new(testing::file(b"skip\na b\nc"));
        let mut out = Vec::new();
        let writing = Writing::new(2, Output::new(&mut out, 0));
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
        work(jobs, freed, &writing, StageClock::new("worker", false));
        assert_eq!(written.len(), 2, "both slots handed back");
        let writing = writing.into_inner().unwrap();
        assert_eq!((writing.lines, writing.bytes_read_by_workers), (2, 5));
        drop(writing);
        assert_eq!(out, b"[spaces: 1]a b\n[spaces: 0]c\n");
    }
}
