//! `batched`: OS threads. `threads` workers render chunks of lines in parallel; the calling thread
//! reads the input and hands the chunks out; whichever thread finishes the rendering that is next
//! in input order writes it.
//!
//! Under load, chunks go round in slots: the calling thread fills one with whole lines (or, for a
//! regular file, names a range of it, which the worker reads itself at its offset), a worker
//! renders it and writes it when its turn comes, and the slot goes back to the calling thread to
//! be filled again. Only `threads + queue` slots exist and their buffers are reused, so memory is
//! bounded by the settings and the longest line, the steady state allocates nothing, and a slow
//! output holds reading back. Slots are numbered as handed out; [`Reorder`] puts them back in that
//! order, under a lock that is held only to queue and to take renderings: the writing itself is
//! done outside it, by one thread at a time, which writes the others' renderings too as their
//! turns come. So the calling thread reads while the output is written, and no thread is woken
//! just to write.
//!
//! When the input goes idle (lines have come and no more is waiting), the calling thread renders
//! the lines it holds itself and writes them, unless a worker is writing, which then writes them
//! after its own: a live line passes through one thread, as in a one-thread filter, with no
//! hand-off to wait for.

use std::io::{self, Write};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};

use crate::error::Error;
use crate::frame::Chunk;
use crate::io::gather::is_due;
use crate::io::ranges::Range;
use crate::io::{Output, Piece, RangedInput};
use crate::parallel::{OnPanic, Reorder, Slots, join, spawn};
use crate::stats::{StageClock, Stats};
use crate::strategy::render_chunk_in_memory;

/// The most bytes the reading thread renders itself when the input goes idle: input arriving a
/// little at a time, for which a hand-off to a worker would cost more than the rendering. More
/// is the end of a burst, and goes to a worker like a full chunk.
const MOST_RENDERED_HERE: usize = 64 * 1024;

/// How long the reading thread waits for more input, with renderings still out, before it waits
/// for them to be written: the workers write them themselves, so this holds nothing back, but a
/// write that failed must end the run even while the input idles (`> /dev/full`).
const BURST_GAP: Duration = Duration::from_millis(1);

/// The knobs.
#[derive(Debug, Clone)]
pub struct Knobs {
    /// Worker threads rendering chunks.
    pub threads: usize,
    /// Bytes read into a chunk before it goes to a worker; a longer line grows its chunk.
    pub chunk_size: usize,
    /// Chunks read ahead beyond one per worker.
    pub queue: usize,
    /// Whether each thread's clock runs, for `--stats`.
    pub clocks: bool,
}

/// A chunk on its round: its number in input order, its lines, their rendering.
struct Slot {
    number: u64,
    input: Chunk,
    output: Vec<u8>,
    lines: u64,
    /// The range of a regular file the worker is to read into `input` itself.
    range: Option<Range>,
    /// Reading the range failed: the writer reports it when the slot's turn comes.
    read_error: Option<io::Error>,
}

impl Slot {
    fn new(chunk_size: usize) -> Self {
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
    fn render(&mut self) -> Result<(), Error> {
        self.output.clear();
        self.lines = render_chunk_in_memory(&mut self.output, self.input.bytes())?;
        Ok(())
    }

    /// A worker's job: reads the slot's range, if it has one, then renders it. A range that comes
    /// back short (the file shrank) is rendered as far as it goes, its last line ended; a failed
    /// read is kept in the slot, unrendered.
    fn read_and_render(&mut self) -> Result<(), Error> {
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

/// Renders every line of `input` onto `output`.
///
/// The calling thread reads; whichever thread renders the next rendering in input order writes
/// it. When a write fails, the run ends with that error as soon as the calling thread next hands
/// out a chunk or waits. While no write comes, an input that watches the output (as
/// [`FileInput`](crate::io::FileInput) does) notices its reader going away and ends the run.
pub fn run(
    knobs: &Knobs,
    mut input: impl RangedInput,
    output: impl Write + Send,
) -> Result<Stats, Error> {
    let mut stats = Stats::start();
    let slots = knobs.threads + knobs.queue;
    let writing = Writing::new(slots, Output::new(output, 0));
    let bytes_read_here = thread::scope(|scope| {
        // Room for every slot in each, and for one error from each worker, so that no send ever
        // blocks. Made in the scope, so that an early return ends the workers started.
        let (to_workers, jobs) = bounded(slots);
        let (to_reader, freed) = bounded(slots + knobs.threads);
        let mut workers = Vec::with_capacity(knobs.threads);
        for n in 1..=knobs.threads {
            let (jobs, to_reader, writing) = (jobs.clone(), to_reader.clone(), &writing);
            let clock = StageClock::new(format!("worker {n}"), knobs.clocks);
            workers.push(spawn(scope, format!("worker {n}"), move || {
                work(jobs, to_reader, writing, clock)
            })?);
        }
        let mut flight = Flight {
            slots: Slots::new(slots),
            chunk_size: knobs.chunk_size,
            next_number: 0,
            to_workers,
            freed,
            writing: &writing,
            clock: StageClock::new("reader", knobs.clocks),
        };
        let read = read_all(knobs.chunk_size, &mut input, &mut flight);
        let Flight {
            to_workers,
            mut clock,
            ..
        } = flight;
        if read.is_err() {
            // Nothing more is written: the workers only hand their slots back, and end. (A lock
            // poisoned by a worker's panic says as much already.)
            if let Ok(mut state) = writing.lock() {
                state.failed = true;
            }
        }
        // The workers end when their channel closes. Each is joined here, even after one has
        // panicked, so that no panic is left for the scope to raise.
        drop(to_workers);
        let mut fault = None;
        for worker in workers {
            match join(worker) {
                Ok(clock) => stats.stages.push(clock),
                Err(error) => {
                    fault.get_or_insert(error);
                }
            }
        }
        if let Some(error) = fault {
            return Err(error);
        }
        clock.busy();
        stats.stages.insert(0, clock);
        read
    })?;
    let writing = writing.into_inner().map_err(|_| panicked())?;
    stats.lines = writing.lines;
    stats.bytes_in = bytes_read_here + writing.bytes_read_by_workers;
    stats.bytes_out = writing.output.map_or(0, |output| output.bytes_written());
    Ok(stats)
}

/// Reads the whole input: whole lines go to the workers a full chunk at a time, or are rendered
/// here when the input goes idle or ends; the ranges of a regular file that the input hands out
/// go to the workers, which read them themselves. Returns the bytes read on this thread.
fn read_all<W: Write>(
    size: usize,
    input: &mut impl RangedInput,
    flight: &mut Flight<W>,
) -> Result<u64, Error> {
    let mut chunk = Chunk::new(size);
    let mut bytes_in = 0;
    // Whether ranges of a file are out: one that could not be read ends its file's ranges.
    let mut ranged = false;
    loop {
        let piece = match ranged && flight.range_failed()? {
            true => Piece::RangesEnd,
            false => input.next_piece(size, &mut chunk)?,
        };
        match piece {
            Piece::Stream => {}
            Piece::Read(read) => {
                bytes_in += read as u64;
                if chunk.has_lines() {
                    flight.send_lines(&mut chunk)?;
                }
                continue;
            }
            Piece::Range(range) => {
                flight.send_range(range)?;
                ranged = true;
                continue;
            }
            Piece::RangesEnd => {
                // Every range written: a failed one is known (the file's later ranges were
                // dropped unwritten), and no slot holds the file open any longer. The rest is
                // a stream: read on.
                flight.drain()?;
                input.ranges_read(flight.range_failure()?);
                ranged = false;
            }
        }
        let read = input.read(chunk.spare()?)?;
        if read == 0 {
            chunk.finish();
            flight.render_here(&mut chunk)?;
            flight.drain()?;
            return Ok(bytes_in);
        }
        chunk.filled(read);
        bytes_in += read as u64;
        // What is held goes on once a chunk's worth is in, or at once if the next read would
        // wait: `gather`'s rule, as for every batching stage.
        if !is_due(chunk.bytes().len(), size, || input.has_waiting()) {
            continue;
        }
        if chunk.is_full() || chunk.bytes().len() > MOST_RENDERED_HERE {
            // Under load, or the end of a burst: the lines go to a worker, which writes them
            // when their turn comes, and this thread reads on meanwhile.
            if chunk.has_lines() {
                flight.send_lines(&mut chunk)?;
            }
        } else {
            // Input arriving a little at a time: a worker would only add a hand-off to the
            // line's way out.
            flight.render_here(&mut chunk)?;
        }
        // Nothing waits for this thread to be written. But when the input idles, a write that
        // failed meanwhile must still end the run: the workers are waited for first.
        if flight.slots.out() > 0 && !input.waits_within(BURST_GAP) {
            flight.drain()?;
        }
    }
}

/// The error for a thread that panicked, or for a channel whose far end went away with it.
fn panicked() -> Error {
    Error::new("rendering", io::Error::other("a worker thread panicked"))
}

/// The renderings on their way out, shared by every thread that writes: the calling thread for
/// the lines it renders itself, each worker for its own.
struct Writing<W> {
    in_order: Reorder<Slot>,
    /// `None` while a thread is writing, which it does outside the lock: the others leave their
    /// renderings in `in_order` for it, and it writes them too before it puts the output back.
    output: Option<Output<W>>,
    /// A write failed, or the run is ending early: nothing more is written.
    failed: bool,
    lines: u64,
    /// Bytes the workers read themselves, counted as their slots are written.
    bytes_read_by_workers: u64,
    /// The first range that could not be read: the file's later ranges are dropped unwritten.
    read_error: Option<io::Error>,
}

impl<W> Writing<W> {
    /// Before the first rendering, for at most `window` slots out at once.
    fn new(window: usize, output: Output<W>) -> Mutex<Self> {
        Mutex::new(Writing {
            in_order: Reorder::new(window),
            output: Some(output),
            failed: false,
            lines: 0,
            bytes_read_by_workers: 0,
            read_error: None,
        })
    }

    /// Whether `slot`'s rendering is to be written, not dropped after a range of its file failed;
    /// lets go of its file, so that a file is closed once its ranges are written.
    fn admit(&mut self, slot: &mut Slot) -> bool {
        let ranged = slot.range.take().is_some();
        if let Some(error) = slot.read_error.take() {
            self.read_error.get_or_insert(error);
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

fn lock<W>(writing: &Mutex<Writing<W>>) -> Result<MutexGuard<'_, Writing<W>>, Error> {
    writing.lock().map_err(|_| panicked())
}

/// Puts `slot`'s rendering in line and, unless another thread is writing already (that one
/// writes this too when its turn comes), writes every rendering whose turn has come, each outside
/// the lock so that the others queue theirs meanwhile. Each slot written or dropped goes to
/// `free`. A failed write is returned, and ends all writing.
fn submit<W: Write>(
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
        free(slot);
    }
    state.output = Some(output);
    Ok(())
}

/// The calling thread's side of the round: slots free or out, handed to the workers in input
/// order. The slots come back once written, by whichever thread wrote them.
struct Flight<'a, W> {
    slots: Slots<Slot>,
    chunk_size: usize,
    /// The number the next slot handed out takes.
    next_number: u64,
    to_workers: Sender<Slot>,
    /// Slots written, or the error that ended writing.
    freed: Receiver<Result<Slot, Error>>,
    writing: &'a Mutex<Writing<W>>,
    /// The calling thread's clock, reported as the `reader` stage: its reads, the lines it
    /// renders itself and their writing are busy time; waiting for a slot to come back is
    /// waiting to receive.
    clock: StageClock,
}

impl<W: Write> Flight<'_, W> {
    /// A free slot, waiting for one to come back if all are out.
    fn slot(&mut self) -> Result<Slot, Error> {
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
    fn number(&mut self, slot: &mut Slot) {
        slot.number = self.next_number;
        self.next_number += 1;
    }

    /// Hands `slot` to a worker.
    fn send(&mut self, mut slot: Slot) -> Result<(), Error> {
        self.number(&mut slot);
        self.to_workers.send(slot).map_err(|_| panicked())
    }

    /// Hands the whole lines in `chunk` to a worker.
    fn send_lines(&mut self, chunk: &mut Chunk) -> Result<(), Error> {
        let mut slot = self.slot()?;
        chunk.take_lines(&mut slot.input)?;
        self.send(slot)
    }

    /// Hands a range of a file to a worker, to read and render.
    fn send_range(&mut self, range: Range) -> Result<(), Error> {
        let mut slot = self.slot()?;
        slot.range = Some(range);
        self.send(slot)
    }

    /// Renders the whole lines in `chunk` here, and writes them after what the workers hold.
    fn render_here(&mut self, chunk: &mut Chunk) -> Result<(), Error> {
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
    fn drain(&mut self) -> Result<(), Error> {
        while self.slots.out() > 0 {
            self.receive()?;
        }
        Ok(())
    }

    /// Waits for one slot to come back.
    fn receive(&mut self) -> Result<(), Error> {
        self.clock.busy();
        let freed = self.freed.recv();
        self.clock.waited_to_receive();
        // The workers hold their senders until this thread lets them go.
        self.slots.give_back(freed.map_err(|_| panicked())??);
        Ok(())
    }

    /// Whether a range could not be read: the rest of its file is not cut.
    fn range_failed(&self) -> Result<bool, Error> {
        Ok(lock(self.writing)?.read_error.is_some())
    }

    /// The first range that could not be read, once all are written: the next file's ranges
    /// are written again.
    fn range_failure(&self) -> Result<Option<io::Error>, Error> {
        Ok(lock(self.writing)?.read_error.take())
    }
}

/// A worker: reads and renders slots, writes them when their turn comes (or leaves them to the
/// thread writing), and hands them back to the calling thread.
fn work<W: Write>(
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
    use std::fs::File;
    use std::io::{BufRead, BufReader, PipeReader, PipeWriter};
    use std::os::fd::AsRawFd;
    use std::path::PathBuf;
    use std::sync::Arc;
    use std::thread::JoinHandle;

    use super::*;
    use crate::io::FileInput;
    use crate::io::sources::Sources;

    /// `run` on its own thread, reading a pipe and writing another: the pipe's writing end, the
    /// output's reading end, and the run.
    fn run_on_pipes(knobs: Knobs) -> (PipeWriter, PipeReader, JoinHandle<Result<Stats, Error>>) {
        let (reader, writer) = std::io::pipe().unwrap();
        let (output_reader, output_writer) = std::io::pipe().unwrap();
        let path = PathBuf::from(format!("/dev/fd/{}", reader.as_raw_fd()));
        let running = std::thread::spawn(move || {
            let input = FileInput::new(Sources::new(&[path]), None);
            let stats = run(&knobs, input, output_writer);
            drop(reader);
            stats
        });
        (writer, output_reader, running)
    }

    /// A lone line comes out while its chunk is far from full and the input stays open.
    #[test]
    fn a_live_line_is_not_held_for_its_chunk() {
        let knobs = Knobs {
            threads: 2,
            chunk_size: 1 << 20,
            queue: 1,
            clocks: true,
        };
        let (mut writer, output_reader, running) = run_on_pipes(knobs);
        writer.write_all(b"a b\n").unwrap();
        let mut line = String::new();
        BufReader::new(output_reader).read_line(&mut line).unwrap();
        assert_eq!(line, "[spaces: 1]a b\n");
        drop(writer);
        let stats = running.join().unwrap().unwrap();
        assert_eq!((stats.lines, stats.bytes_in, stats.bytes_out), (1, 4, 15));
        assert_eq!(
            stats.stages.len(),
            3,
            "the reader, which writes too, and two workers"
        );
    }

    /// A full chunk goes to a worker, which writes its rendering though the input then waits.
    #[test]
    fn a_full_chunk_is_written_while_the_input_waits() {
        let knobs = Knobs {
            threads: 1,
            chunk_size: 4,
            queue: 1,
            clocks: false,
        };
        let (mut writer, output_reader, running) = run_on_pipes(knobs);
        writer.write_all(b"a b c d e\n").unwrap();
        let (line, read) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            BufReader::new(output_reader).read_line(&mut text).unwrap();
            line.send(text)
        });
        let line = read.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(line.as_deref(), Ok("[spaces: 4]a b c d e\n"), "not held");
        drop(writer);
        running.join().unwrap().unwrap();
    }

    /// A worker reads its slot's range of a file itself, renders it, and writes it in its turn:
    /// handed the later range first, it leaves that one for whoever writes the earlier. A range
    /// the file no longer holds all of comes back short, its last line ended.
    #[test]
    fn a_worker_reads_renders_and_writes_its_ranges_in_order() {
        let path = std::env::temp_dir().join(format!("pipelines-range-{}", std::process::id()));
        std::fs::write(&path, b"skip\na b\nc").unwrap();
        let file = Arc::new(File::open(&path).unwrap());
        std::fs::remove_file(&path).unwrap();
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
