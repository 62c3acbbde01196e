//! `batched`: OS threads. `threads` workers render chunks of lines in parallel; the calling thread
//! reads the input and hands the chunks out; whichever thread finishes the rendering that is next
//! in input order writes it.
//!
//! Under load, chunks go round in slots: the calling thread fills one with whole lines (or, for a
//! regular file, names a range of it, which the worker reads itself at its offset), a worker
//! renders it and writes it when its turn comes, and the slot goes back to the calling thread to
//! be filled again; or, while ranges the calling thread has cut ahead wait, straight back to a
//! worker with the next, so that the calling thread wakes once for many ranges. Only
//! `threads + queue` slots exist and their buffers are reused, so memory is bounded by the settings
//! and the longest line, the steady state allocates nothing, and a slow output holds reading back.
//! Slots are numbered as handed out; [`Reorder`](crate::parallel::Reorder) puts them back in that
//! order, under a lock that is held only to queue and to take renderings: the writing itself is
//! done outside it, by one thread at a time, which writes the others' renderings too as their
//! turns come. So the calling thread reads while the output is written, and no thread is woken
//! just to write.
//!
//! When the input goes idle (lines have come and no more is waiting), the calling thread renders
//! the lines it holds itself and writes them, unless a worker is writing, which then writes them
//! after its own: a live line passes through one thread, as in a one-thread filter, with no
//! hand-off to wait for.
//!
//! Each module uses only those below it:
//!
//! | module | holds |
//! | --- | --- |
//! | here | the knobs, [`run`], and the calling thread's reading: what goes to a worker, what is rendered here |
//! | `round` | the slot round: the calling thread's `Flight`, a worker's `work` |
//! | `state` | the round's shared state and its rules, under one lock: slots numbered, renderings put back in order and written by whichever thread's turn it is, ranges cut ahead: `RoundState` |
//! | `slot` | a chunk's buffers on their round, and its reading and rendering: `Slot` |

mod round;
mod slot;
mod state;

use std::io::Write;
use std::thread::{self, Scope, ScopedJoinHandle};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};

use crate::error::Error;
use crate::frame::Chunk;
use crate::io::gather::is_due;
use crate::io::{Output, Piece, RangedInput};
use crate::parallel::{Slots, join, spawn};
use crate::stats::{StageClock, Stats};
use crate::thread_room::threads_can_start;
use crate::transform::Transform;

use round::{Flight, work};
use slot::Slot;
use state::{EndsWorkers, RoundState};

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

/// Renders every line of `input` onto `output` with `transform`, which the workers share.
///
/// The calling thread reads; whichever thread renders the next rendering in input order writes
/// it. When a write fails, the run ends with that error as soon as the calling thread next hands
/// out a chunk or waits. While no write comes, an input that watches the output (as
/// [`FileInput`](crate::io::FileInput) does) notices its reader going away and ends the run.
pub fn run(
    knobs: &Knobs,
    transform: impl Transform + Sync,
    mut input: impl RangedInput,
    output: impl Write + Send,
) -> Result<Stats, Error> {
    let mut stats = Stats::start();
    let slots = knobs.threads + knobs.queue;
    let state = RoundState::new(slots, Output::new(output, 0));
    stats.bytes_in = thread::scope(|scope| {
        // Room for every slot in each, and for one error from each worker, so that no send ever
        // blocks. Made in the scope, so that an early return ends the workers started; handed
        // to `state` once they all have, which ends them on the way out.
        let (to_workers, jobs) = bounded(slots);
        let (to_reader, freed) = bounded(slots + knobs.threads);
        let workers = start_workers(scope, knobs, &jobs, &to_reader, &state, &transform)?;
        state.start_workers(to_workers)?;
        let ends_workers = EndsWorkers(&state);
        let mut flight = Flight {
            slots: Slots::new(slots),
            chunk_size: knobs.chunk_size,
            freed,
            state: &state,
            transform: &transform,
            clock: StageClock::new("reader", knobs.clocks),
        };
        let read = read_all(knobs.chunk_size, &mut input, &mut flight);
        let Flight { mut clock, .. } = flight;
        if read.is_err() {
            state.end_writing();
        }
        // The workers end when their channel closes.
        drop(ends_workers);
        stats.stages = join_workers(workers)?;
        clock.busy();
        stats.stages.insert(0, clock);
        read
    })?;
    state.count_into(&mut stats)?;
    Ok(stats)
}

/// Starts `knobs.threads` workers, taking slots from `jobs`, rendering them with `transform` and
/// handing them back to `to_reader`.
fn start_workers<'scope, W: Write + Send>(
    scope: &'scope Scope<'scope, '_>,
    knobs: &Knobs,
    jobs: &Receiver<Slot>,
    to_reader: &Sender<Result<Slot, Error>>,
    state: &'scope RoundState<W>,
    transform: &'scope (impl Transform + Sync),
) -> Result<Vec<ScopedJoinHandle<'scope, StageClock>>, Error> {
    threads_can_start(knobs.threads)
        .map_err(|error| Error::new("starting the worker threads", error))?;
    let mut workers = Vec::with_capacity(knobs.threads);
    for n in 1..=knobs.threads {
        let (jobs, to_reader) = (jobs.clone(), to_reader.clone());
        let clock = StageClock::new(format!("worker {n}"), knobs.clocks);
        workers.push(spawn(scope, format!("worker {n}"), move || {
            work(jobs, to_reader, state, transform, clock)
        })?);
    }
    Ok(workers)
}

/// Joins every worker, even after one has panicked, so that no panic is left for the scope to
/// raise: their clocks, or the first worker's panic.
fn join_workers(workers: Vec<ScopedJoinHandle<'_, StageClock>>) -> Result<Vec<StageClock>, Error> {
    let mut clocks = Vec::with_capacity(workers.len() + 1);
    let mut fault = None;
    for worker in workers {
        match join(worker) {
            Ok(clock) => clocks.push(clock),
            Err(error) => {
                fault.get_or_insert(error);
            }
        }
    }
    match fault {
        Some(error) => Err(error),
        None => Ok(clocks),
    }
}

/// Reads the whole input: whole lines go to the workers a full chunk at a time, or are rendered
/// here when the input goes idle or ends; the ranges of a regular file that the input hands out
/// go to the workers, which read them themselves. Returns the bytes read on this thread.
fn read_all<W: Write, T: Transform>(
    size: usize,
    input: &mut impl RangedInput,
    flight: &mut Flight<W, T>,
) -> Result<u64, Error> {
    let mut chunk = Chunk::new(size);
    let mut bytes_read_here = 0;
    // Whether ranges of a file are out: one that could not be read ends its file's ranges.
    let mut ranges_out = false;
    loop {
        let piece = if ranges_out && flight.state.read_failed()? {
            Piece::RangesEnd
        } else {
            input.next_piece(size, &mut chunk)?
        };
        match piece {
            Piece::Stream => {}
            Piece::Read(read) => {
                bytes_read_here += read as u64;
                if chunk.has_lines() {
                    flight.send_lines(&mut chunk)?;
                }
                continue;
            }
            Piece::Range(range) => {
                flight.send_range(range)?;
                ranges_out = true;
                continue;
            }
            Piece::RangesEnd => {
                // Every range written: a failed one is known (the file's later ranges were
                // dropped unwritten), and no slot holds the file open any longer. The rest is
                // a stream: read on.
                flight.drain()?;
                input.ranges_read(flight.state.take_read_error()?);
                ranges_out = false;
            }
        }
        let read = input.read(chunk.spare()?)?;
        if read == 0 {
            chunk.finish();
            flight.render_here(&mut chunk)?;
            flight.drain()?;
            return Ok(bytes_read_here);
        }
        chunk.filled(read);
        bytes_read_here += read as u64;
        hand_on(size, input, &mut chunk, flight)?;
    }
}

/// After a read of a stream, hands on the lines held once they are due: `gather`'s rule, as for
/// every batching stage, says they are once a chunk's worth is in, or at once if the next read
/// would wait.
fn hand_on<W: Write, T: Transform>(
    size: usize,
    input: &mut impl RangedInput,
    chunk: &mut Chunk,
    flight: &mut Flight<W, T>,
) -> Result<(), Error> {
    if !is_due(chunk.bytes().len(), size, || input.is_ready()) {
        return Ok(());
    }
    if chunk.is_full() || chunk.bytes().len() > MOST_RENDERED_HERE {
        // Under load, or the end of a burst: the lines go to a worker, which writes them
        // when their turn comes, and this thread reads on meanwhile.
        if chunk.has_lines() {
            flight.send_lines(chunk)?;
        }
    } else {
        // Input arriving a little at a time: a worker would only add a hand-off to the
        // line's way out.
        flight.render_here(chunk)?;
    }
    // Nothing waits for this thread to be written. But when the input idles, a write that
    // failed meanwhile must still end the run: the workers are waited for first.
    if flight.slots.out() > 0 && idles(input) {
        flight.drain()?;
    }
    Ok(())
}

/// Whether no input comes within [`BURST_GAP`], waiting that long at most.
fn idles(input: &mut impl RangedInput) -> bool {
    !input.is_ready_within(BURST_GAP)
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, PipeReader, PipeWriter};
    use std::os::fd::AsRawFd;
    use std::path::PathBuf;
    use std::thread::JoinHandle;

    use super::*;
    use crate::io::FileInput;
    use crate::io::sources::Sources;
    use crate::io::testing::within;
    use crate::transform::SpaceCount;

    /// `run` on its own thread, reading a pipe and writing another: the pipe's writing end, the
    /// output's reading end, and the run.
    fn run_on_pipes(knobs: Knobs) -> (PipeWriter, PipeReader, JoinHandle<Result<Stats, Error>>) {
        let (reader, writer) = std::io::pipe().unwrap();
        let (output_reader, output_writer) = std::io::pipe().unwrap();
        let path = PathBuf::from(format!("/dev/fd/{}", reader.as_raw_fd()));
        let running = std::thread::spawn(move || {
            let input = FileInput::new(Sources::new(&[path]), None);
            let stats = run(&knobs, SpaceCount, input, output_writer);
            drop(reader);
            stats
        });
        (writer, output_reader, running)
    }

    /// The first line `output` gives, failing past the deadline: a line held back fails the
    /// test rather than hanging it.
    fn first_line(output: PipeReader) -> String {
        within("the first line out", move || {
            let mut line = String::new();
            BufReader::new(output).read_line(&mut line).unwrap();
            line
        })
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
        assert_eq!(first_line(output_reader), "[spaces: 1]a b\n");
        drop(writer);
        let stats = within("the run's end", || running.join().unwrap().unwrap());
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
        assert_eq!(
            first_line(output_reader),
            "[spaces: 4]a b c d e\n",
            "not held"
        );
        drop(writer);
        within("the run's end", || running.join().unwrap().unwrap());
    }
}
