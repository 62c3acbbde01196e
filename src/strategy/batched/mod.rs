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
//! Slots are numbered as handed out; `parallel::Reorder` puts them back in that
//! order, under a lock that is held only to queue and to take renderings: the writing itself is
//! done outside it, by one thread at a time, which writes the others' renderings too as their
//! turns come. So the calling thread reads while the output is written, and no thread is woken
//! just to write.
//!
//! When the input goes idle (lines have come and no more is waiting), the calling thread renders
//! the lines it holds itself and writes them, unless a worker is writing, which then writes them
//! after its own: a live line passes through one thread, as in a one-thread filter, with no
//! hand-off to wait for. Lines whose rendering is more work than a hand-off is worth (by bytes, or
//! by what the transform says a line costs) go to the workers instead, shared out between them.
//! A transform that says its lines cost something has a regular file's ranges sized by that work
//! too, about a millisecond each, so that the workers finish together.
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
use memchr::memchr_iter;

use crate::error::Error;
use crate::frame::Chunk;
use crate::io::gather::is_due;
use crate::io::{Output, Piece, RangedInput};
use crate::parallel::{Slots, join, spawn};
use crate::stats::{StageClock, Stats};
use crate::tally::Tallying;
use crate::thread_room::threads_can_start;

use round::{Flight, work};
use slot::Slot;
use state::{EndsWorkers, RoundState};

/// The most bytes the reading thread renders itself when the input goes idle: input arriving a
/// little at a time, for which a hand-off to a worker would cost more than the rendering. More
/// is the end of a burst, and goes to a worker like a full chunk.
const MOST_RENDERED_HERE: usize = 64 * 1024;

/// The most work, by the transform's [`Transform::cost_a_line`], that the reading thread renders
/// itself when the input goes idle or ends: about what the space count takes over
/// [`MOST_RENDERED_HERE`] bytes. More is shared out between the workers, a part for each this
/// much, up to one a worker, so that the reading thread never keeps a worker's work from it (at
/// 1,000 ns a line, 64 KiB of 30-byte lines would hold the reading thread 2 ms, and a file's last
/// part was rendered on it alone, after the workers had finished).
const MOST_WORK_HERE: Duration = Duration::from_micros(50);

/// Where the whole lines held go when the input idles or ends before a chunk is full.
#[derive(Debug, PartialEq, Eq)]
enum Held {
    /// Rendered on the reading thread.
    Here,
    /// Handed to the workers, in this many parts.
    Workers(usize),
}

/// Where `held`, the lines held when the input idles (or, `at_end`, ends), go: rendered here if
/// they are at most [`MOST_WORK_HERE`] of work at `cost` a line and, while the input goes on, at
/// most [`MOST_RENDERED_HERE`] bytes (at its end, this thread has nothing else to do); else to the
/// workers, in a part for each [`MOST_WORK_HERE`] of work, up to one for each of the `threads`.
/// Lines are counted only for a transform that says a line costs something, and only as far as
/// `threads` parts take: the space count's rule is the bytes alone, as before.
fn place_held(held: &[u8], at_end: bool, cost: Duration, threads: usize) -> Held {
    let few_bytes = at_end || held.len() <= MOST_RENDERED_HERE;
    if cost.is_zero() {
        return if few_bytes {
            Held::Here
        } else {
            Held::Workers(1)
        };
    }
    let lines_a_part = usize::try_from(MOST_WORK_HERE.as_nanos() / cost.as_nanos())
        .unwrap_or(usize::MAX)
        .max(1);
    // One line more than `threads` parts hold tells, at one thread, more than one part's worth.
    let most_counted = lines_a_part.saturating_mul(threads).saturating_add(1);
    let lines = memchr_iter(b'\n', held).take(most_counted).count();
    if few_bytes && lines <= lines_a_part {
        Held::Here
    } else {
        Held::Workers(lines.div_ceil(lines_a_part).clamp(1, threads))
    }
}

/// The work a range of a file is cut to for a costly transform. A worker that takes a range when
/// the other has just taken its last can finish up to a range's work after it, and where the
/// ranges end (the reading thread waits for them all) or the input does, the other waits. Issue
/// 32 counted it at 1,000 ns a line: 256 KiB of manual pages were 8,000-11,600 lines, 8-12 ms of
/// work, in a run of about 100 ms a worker. At 1 ms that wait is about 1 % of such a run, while a
/// range's own cost (a cut's read of 4 KiB, a hand-off) is a few µs, under 1 % of its work.
///
/// Streams keep the byte rule: their chunks are read by the reading thread, and only
/// `threads + queue` of them are out at once, so that chunks of 1-2 ms held the workers only a few
/// ms ahead, and through a pipe (the reading thread and `cat` sharing the 2 cores with them) the
/// workers waited 8-15 ms a run for a chunk, against 1-4 ms with 256 KiB ones.
const WORK_A_RANGE: Duration = Duration::from_millis(1);

/// How many bytes of a regular file a worker is handed at a time, a range: `chunk_size`, the byte
/// rule; or, for a transform whose lines cost something ([`Transform::cost_a_line`]), the bytes
/// of about [`WORK_A_RANGE`] of its lines at the mean length of the lines read so far, if fewer.
/// Lines are counted only for such a transform, and only in the first `chunk_size` bytes read on
/// the reading thread: the space count's ranges are its bytes alone, as before.
#[derive(Debug)]
struct RangeSize {
    chunk_size: usize,
    /// The lines that make [`WORK_A_RANGE`]; none for a transform whose lines cost nothing.
    lines_a_range: Option<u64>,
    /// Bytes read on the reading thread, and the line ends among them, while counted.
    bytes_seen: u64,
    lines_seen: u64,
}

impl RangeSize {
    fn new(chunk_size: usize, cost: Duration) -> Self {
        let lines_a_range = (!cost.is_zero()).then(|| {
            let lines = WORK_A_RANGE.as_nanos() / cost.as_nanos();
            u64::try_from(lines).unwrap_or(u64::MAX).max(1)
        });
        RangeSize {
            chunk_size: chunk_size.max(1),
            lines_a_range,
            bytes_seen: 0,
            lines_seen: 0,
        }
    }

    /// Counts `read`, bytes just read, towards the mean line length, while it is counted.
    fn saw(&mut self, read: &[u8]) {
        if self.lines_a_range.is_some() && self.bytes_seen < self.chunk_size as u64 {
            self.bytes_seen += read.len() as u64;
            self.lines_seen += memchr_iter(b'\n', read).count() as u64;
        }
    }

    /// Whether [`bytes`](Self::bytes) is known: for a costly transform, once a line has ended.
    /// Until then a regular file is read as a stream, not cut into ranges of a guessed size.
    fn is_known(&self) -> bool {
        self.lines_a_range.is_none() || self.lines_seen > 0
    }

    /// The bytes of a range.
    fn bytes(&self) -> usize {
        match self.lines_a_range {
            Some(lines) if self.lines_seen > 0 => {
                let bytes = lines.saturating_mul(self.bytes_seen) / self.lines_seen;
                usize::try_from(bytes)
                    .map_or(self.chunk_size, |bytes| bytes.clamp(1, self.chunk_size))
            }
            _ => self.chunk_size,
        }
    }

    /// How many parts the `held` bytes of lines that the input read into the reading thread's
    /// chunk (the file's start, read before its size was known, and the line completed there)
    /// go to the workers in: one for each whole range's bytes, so each at least a range and
    /// under two. One by the byte rule.
    fn parts(&self, held: usize) -> usize {
        match self.lines_a_range {
            Some(_) => (held / self.bytes()).max(1),
            None => 1,
        }
    }
}

/// How long the reading thread waits for more input, with renderings still out, before it waits
/// for them to be written: the workers write them themselves, so this holds nothing back, but a
/// write that failed must end the run even while the input idles (`> /dev/full`).
const BURST_GAP: Duration = Duration::from_millis(1);

/// The knobs.
#[derive(Debug, Clone)]
pub struct Knobs {
    /// Worker threads rendering chunks.
    pub threads: usize,
    /// Bytes read into a chunk before it goes to a worker; a longer line grows its chunk. For a
    /// transform whose lines cost something, a regular file's ranges are fewer bytes where about
    /// 1 ms of its lines take fewer.
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
    transform: impl Tallying + Sync,
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
            threads: knobs.threads,
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
    state.end(&transform, &mut stats)?;
    Ok(stats)
}

/// Starts `knobs.threads` workers, taking slots from `jobs`, rendering them with `transform` and
/// handing them back to `to_reader`.
fn start_workers<'scope, W: Write + Send, T: Tallying + Sync>(
    scope: &'scope Scope<'scope, '_>,
    knobs: &Knobs,
    jobs: &Receiver<Slot<T::Tally>>,
    to_reader: &Sender<Result<Slot<T::Tally>, Error>>,
    state: &'scope RoundState<W, T::Tally>,
    transform: &'scope T,
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
/// here when the input goes idle or ends; the ranges of a regular file that the input hands out,
/// as [`RangeSize`] sizes them, go to the workers, which read them themselves. Returns the bytes
/// read on this thread.
fn read_all<W: Write, T: Tallying>(
    size: usize,
    input: &mut impl RangedInput,
    flight: &mut Flight<W, T>,
) -> Result<u64, Error> {
    let mut chunk = Chunk::new(size);
    let mut range_size = RangeSize::new(size, flight.transform.cost_a_line());
    let mut bytes_read_here = 0;
    // Whether ranges of a file are out: one that could not be read ends its file's ranges.
    let mut ranges_out = false;
    loop {
        let piece = if ranges_out && flight.state.read_failed()? {
            Piece::RangesEnd
        } else if range_size.is_known() {
            input.next_piece(range_size.bytes(), &mut chunk)?
        } else {
            Piece::Stream
        };
        match piece {
            Piece::Stream => {}
            Piece::Read(read) | Piece::Decoded(read, false) => {
                bytes_read_here += read as u64;
                if chunk.has_lines() {
                    let parts = range_size.parts(chunk.bytes().len());
                    flight.send_lines(&mut chunk, parts)?;
                }
                continue;
            }
            Piece::Decoded(read, true) => {
                // The decoder is behind: rendered here, as at the end, its buffer holds nothing
                // up, where a worker woken for each was most of `batched -z`'s 1,600-1,900
                // context switches on 64 MiB (issue 49).
                bytes_read_here += read as u64;
                place(&mut chunk, true, flight)?;
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
        let held = chunk.bytes().len();
        let read = input.read(chunk.spare()?)?;
        if read == 0 {
            chunk.finish();
            place(&mut chunk, true, flight)?;
            flight.drain()?;
            return Ok(bytes_read_here);
        }
        chunk.filled(read);
        range_size.saw(chunk.bytes().get(held..).unwrap_or_default());
        bytes_read_here += read as u64;
        hand_on(size, input, &mut chunk, flight)?;
    }
}

/// After a read of a stream, hands on the lines held once they are due: `gather`'s rule, as for
/// every batching stage, says they are once a chunk's worth is in, or at once if the next read
/// would wait.
fn hand_on<W: Write, T: Tallying>(
    size: usize,
    input: &mut impl RangedInput,
    chunk: &mut Chunk,
    flight: &mut Flight<W, T>,
) -> Result<(), Error> {
    if !is_due(chunk.bytes().len(), size, || input.is_ready()) {
        return Ok(());
    }
    if chunk.is_full() {
        // Under load: the lines go to a worker, which writes them when their turn comes, and
        // this thread reads on meanwhile.
        if chunk.has_lines() {
            flight.send_lines(chunk, 1)?;
        }
    } else {
        place(chunk, false, flight)?;
    }
    // Nothing waits for this thread to be written. But when the input idles, a write that
    // failed meanwhile must still end the run: the workers are waited for first.
    if flight.slots.out() > 0 && idles(input) {
        flight.drain()?;
    }
    Ok(())
}

/// Renders the whole lines in `chunk` here or hands them to the workers, as [`place_held`] says
/// for an input that idles or, `at_end`, has ended (or has a decoder behind this thread, which
/// would only wait for it meanwhile). Input arriving a little at a time is rendered
/// here, where a worker would only add a hand-off to a line's way out; the end of a burst, or
/// costly lines, go to the workers, which write them when their turn comes.
fn place<W: Write, T: Tallying>(
    chunk: &mut Chunk,
    at_end: bool,
    flight: &mut Flight<W, T>,
) -> Result<(), Error> {
    if !chunk.has_lines() {
        return Ok(());
    }
    let cost = flight.transform.cost_a_line();
    match place_held(chunk.bytes(), at_end, cost, flight.threads) {
        Held::Here => flight.render_here(chunk),
        Held::Workers(parts) => flight.send_lines(chunk, parts),
    }
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
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::thread::JoinHandle;

    use super::*;
    use crate::io::sources::Sources;
    use crate::io::testing::within;
    use crate::io::{FileInput, Input, Memory};
    use crate::transform::{SpaceCount, Transform};

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

    /// A line `[THREAD]` before it, THREAD the name of the thread that rendered it, at a cost
    /// it only says: where the reading thread hands lines on is told by their rendering.
    struct WhoRenders(Duration);

    impl Transform for WhoRenders {
        fn cost_a_line(&self) -> Duration {
            self.0
        }

        fn most_added(&self) -> usize {
            64
        }

        fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
            let current = std::thread::current();
            let name = current.name().unwrap_or_default().split(' ').next();
            out.extend_from_slice(format!("[{}]", name.unwrap_or_default()).as_bytes());
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }

    /// `batched` over a real file of `lines` lines in 64-byte chunks, each line rendered by
    /// [`WhoRenders`] at `cost`: the threads that rendered each line, in input order.
    fn who_renders_a_file(lines: usize, cost: Duration, threads: usize) -> Vec<String> {
        let text: String = (0..lines).map(|n| format!("line {n:3}\n")).collect();
        let file = crate::io::testing::file(text.as_bytes());
        let path = PathBuf::from(format!("/dev/fd/{}", file.as_raw_fd()));
        let input = FileInput::new(Sources::new(&[path]), None);
        let knobs = Knobs {
            threads,
            chunk_size: 64,
            queue: 1,
            clocks: false,
        };
        let mut out = Vec::new();
        run(&knobs, WhoRenders(cost), input, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let rendered: Vec<_> = out
            .lines()
            .map(|line| line.split_once(']').unwrap())
            .collect();
        let expected: Vec<_> = text.lines().collect();
        assert_eq!(
            rendered.iter().map(|(_, line)| *line).collect::<Vec<_>>(),
            expected
        );
        rendered
            .iter()
            .map(|(who, _)| who[1..].to_string())
            .collect()
    }

    /// A file is cut into ranges for the workers but for its last part, under a chunk, read as a
    /// stream once they are done: the reading thread renders that itself when it is little work,
    /// and shares it out between the workers when the transform says its lines cost more
    /// (at 1,000 ns a line, a 256 KiB chunk of short lines was 9 ms on one thread, the others
    /// idle).
    #[test]
    fn a_files_costly_last_part_is_shared_out_between_the_workers() {
        // 9-byte lines: 5 ranges of 8 lines (cut at the first line end past 63 bytes), then 7.
        let reader = std::thread::current().name().unwrap().to_string();
        let cheap = who_renders_a_file(47, Duration::ZERO, 2);
        assert!(cheap[..40].iter().all(|who| who == "worker"), "{cheap:?}");
        assert!(cheap[40..].iter().all(|who| *who == reader), "{cheap:?}");
        let costly = who_renders_a_file(47, Duration::from_micros(20), 2);
        assert!(costly.iter().all(|who| who == "worker"), "{costly:?}");
    }

    /// A decoder's buffers, each taken whole with whether the decoder was behind by then, and a
    /// line read as a stream (first, where a costly transform learns its lines' length): the
    /// input a regular file's decoding is, with the decoder's pace made up.
    struct DecoderBuffers(Memory<&'static [u8]>, std::vec::IntoIter<(Vec<u8>, bool)>);

    impl Input for DecoderBuffers {
        fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
            self.0.read(buf)
        }

        fn is_ready(&mut self) -> bool {
            true
        }
    }

    impl RangedInput for DecoderBuffers {
        fn next_piece(&mut self, _: usize, held: &mut Chunk) -> Result<Piece, Error> {
            if !held.bytes().is_empty() {
                return Ok(Piece::Read(0)); // the lines held go first, as `adopt_decoded`'s do
            }
            let Some((bytes, behind)) = self.1.next() else {
                return Ok(Piece::Stream);
            };
            let len = bytes.len();
            held.adopt(bytes, len);
            Ok(Piece::Decoded(len, behind))
        }

        fn ranges_read(&mut self, _: Option<std::io::Error>) {
            unreachable!("no ranges");
        }
    }

    /// A decoder's buffer is rendered by the reading thread where the decoder is behind it (a
    /// worker woken for it would only add a wake-up: issue 49's context switches), and by the
    /// workers where the decoder is ahead, or where its lines cost more than the reading thread
    /// renders itself.
    #[test]
    fn a_buffer_is_rendered_here_where_its_decoder_is_behind() {
        let reader = std::thread::current().name().unwrap().to_string();
        let by_reader = |cost, behind: [bool; 3]| {
            let buffers = behind.map(|behind| (b"a\nb\n".to_vec(), behind));
            let knobs = Knobs {
                threads: 2,
                chunk_size: 64,
                queue: 1,
                clocks: false,
            };
            let mut out = Vec::new();
            let input = DecoderBuffers(Memory::new(b"s\n"), Vec::from(buffers).into_iter());
            run(&knobs, WhoRenders(cost), input, &mut out).unwrap();
            let out = String::from_utf8(out).unwrap();
            // The line read as a stream comes first where it is read first: for a costly transform.
            let mut lines: Vec<_> = out
                .lines()
                .map(|line| line.split_once(']').unwrap())
                .collect();
            let stream_line = usize::from(cost.is_zero()) * 6;
            assert_eq!(lines.remove(stream_line).1, "s");
            let text: String = lines.iter().map(|(_, line)| *line).collect();
            assert_eq!(text, "ababab");
            let here = |(who, _): &(&str, &str)| who[1..] == reader;
            lines
                .chunks(2)
                .map(|buffer| buffer.iter().all(here))
                .collect::<Vec<_>>()
        };
        let free = Duration::ZERO;
        assert_eq!(by_reader(free, [true, false, true]), [true, false, true]);
        // Two lines at 30 µs are past what the reading thread renders itself.
        let costly = Duration::from_micros(30);
        assert_eq!(by_reader(costly, [true, false, true]), [false; 3]);
    }

    /// Where the lines held when the input idles or ends are rendered: the space count's rule
    /// by bytes alone; a costly transform's by the work its lines say, shared out in parts of
    /// [`MOST_WORK_HERE`] between as many workers as that takes.
    #[test]
    fn lines_held_are_rendered_here_unless_their_bytes_or_work_are_many() {
        let lines = |n: usize| "ab\n".repeat(n).into_bytes();
        let free = Duration::ZERO;
        assert_eq!(place_held(&lines(1), false, free, 2), Held::Here);
        let many_bytes = vec![b'\n'; MOST_RENDERED_HERE + 1];
        assert_eq!(
            place_held(&many_bytes[..MOST_RENDERED_HERE], false, free, 2),
            Held::Here
        );
        assert_eq!(place_held(&many_bytes, false, free, 2), Held::Workers(1));
        assert_eq!(
            place_held(&many_bytes, true, free, 2),
            Held::Here,
            "at the end"
        );
        // MOST_WORK_HERE is 50 lines at 1,000 ns.
        let costly = Duration::from_nanos(1000);
        assert_eq!(place_held(&lines(50), false, costly, 4), Held::Here);
        assert_eq!(place_held(&lines(50), true, costly, 4), Held::Here);
        assert_eq!(place_held(&lines(51), false, costly, 4), Held::Workers(2));
        assert_eq!(place_held(&lines(51), true, costly, 1), Held::Workers(1));
        assert_eq!(place_held(&lines(150), true, costly, 4), Held::Workers(3));
        assert_eq!(place_held(&lines(5000), true, costly, 4), Held::Workers(4));
        let line_a_part = Duration::from_secs(1);
        assert_eq!(
            place_held(&lines(2), true, line_a_part, 8),
            Held::Workers(2)
        );
        assert_eq!(
            place_held(&many_bytes, false, line_a_part, 1),
            Held::Workers(1)
        );
    }

    /// The space count's ranges are its bytes, whatever its lines; a costly transform's are the
    /// bytes of [`WORK_A_RANGE`] of its lines at their mean length, once a line has ended (a
    /// file is not cut before), counted over the first chunk's worth read, and at most a chunk.
    #[test]
    fn a_range_is_its_bytes_or_a_costly_transforms_millisecond_of_lines() {
        let ten_bytes_a_line = "123456789\n".repeat(200).into_bytes();
        let mut free = RangeSize::new(64 << 10, Duration::ZERO);
        free.saw(&ten_bytes_a_line);
        assert!(free.is_known());
        assert_eq!((free.bytes(), free.parts(1 << 20)), (64 << 10, 1));

        // 1,000 lines at 1,000 ns, 100 at 10 µs.
        let mut costly = RangeSize::new(64 << 10, Duration::from_micros(10));
        assert!(!costly.is_known(), "no line has ended");
        costly.saw(b"1234");
        assert!(!costly.is_known());
        costly.saw(b"56789\n");
        assert!(costly.is_known());
        assert_eq!(costly.bytes(), 1000);
        assert_eq!(costly.parts(1000), 1);
        assert_eq!(costly.parts(1999), 1);
        assert_eq!(costly.parts(2000), 2);
        assert_eq!(costly.parts(64 << 10), 65);
        let mut long_lines = RangeSize::new(64 << 10, Duration::from_micros(1));
        long_lines.saw(&[&[b'x'; 999][..], b"\n"].concat());
        assert_eq!(long_lines.bytes(), 64 << 10, "a chunk at most");

        // Past the first chunk's worth, lines are no longer counted.
        let mut first = RangeSize::new(2000, Duration::from_micros(10));
        first.saw(&ten_bytes_a_line[..2000]);
        first.saw(b"\n\n\n\n\n");
        assert_eq!(first.bytes(), 1000);
        let cheap = RangeSize::new(1 << 20, Duration::from_nanos(1));
        assert_eq!(cheap.lines_a_range, Some(1_000_000));
        let dear = RangeSize::new(1 << 20, Duration::from_secs(1));
        assert_eq!(dear.lines_a_range, Some(1), "a line at least");
    }

    /// The space count, recording in `most` the most lines it was handed at once, at a cost it
    /// only says.
    struct MostLines<'a> {
        cost: Duration,
        most: &'a AtomicU64,
    }

    impl Transform for MostLines<'_> {
        fn cost_a_line(&self) -> Duration {
            self.cost
        }

        fn most_added(&self) -> usize {
            Transform::most_added(&SpaceCount)
        }

        fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
            Transform::render_line(&SpaceCount, out, line);
        }

        fn render_chunk(&self, out: &mut Vec<u8>, chunk: &[u8]) -> Result<u64, Error> {
            let lines = Transform::render_chunk(&SpaceCount, out, chunk)?;
            self.most.fetch_max(lines, Ordering::Relaxed);
            Ok(lines)
        }
    }

    /// The most lines `batched` (2 workers, 256 KiB chunks) hands a worker at once, rendering
    /// `input`, which holds `text`, at `cost` a line; checking its output on the way.
    fn most_lines_at_once(input: impl RangedInput, text: &[u8], cost: Duration) -> u64 {
        let knobs = Knobs {
            threads: 2,
            chunk_size: 256 << 10,
            queue: 2,
            clocks: false,
        };
        let most = AtomicU64::new(0);
        let mut out = Vec::new();
        let transform = MostLines { cost, most: &most };
        run(&knobs, transform, input, &mut out).unwrap();
        let mut expected = Vec::new();
        Transform::render_chunk(&SpaceCount, &mut expected, text).unwrap();
        assert!(out == expected, "the output is the space count's");
        most.into_inner()
    }

    /// 20,000 lines of 11 bytes at 10 µs a line, 200 ms of work: from a file, cut into ranges,
    /// they reach the workers 100 to 200 at a time, 1-2 ms of work. By bytes alone they were
    /// 10,000 at a time: the file, under two 256 KiB chunks, was read as a stream and shared out
    /// at its end, half to each worker, as it still is from memory (a stream keeps the byte rule).
    #[test]
    fn a_costly_transforms_file_goes_to_the_workers_a_millisecond_at_a_time() {
        let text: String = (0..20_000).map(|n| format!("line {n:5}\n")).collect();
        let text = text.as_bytes();
        let file = crate::io::testing::file(text);
        let path = PathBuf::from(format!("/dev/fd/{}", file.as_raw_fd()));
        let cost = Duration::from_micros(10);
        let from_file = FileInput::new(Sources::new(&[path]), None);
        let from_file = most_lines_at_once(from_file, text, cost);
        assert!(from_file <= 200, "{from_file} lines at once from a file");
        let from_memory = most_lines_at_once(Memory::new(text), text, cost);
        assert_eq!(from_memory, 10_001, "a stream's lines at once");
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
