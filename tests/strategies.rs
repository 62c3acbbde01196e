//! Every strategy and every framer of the library, driven in process, checked byte for byte
//! against the one reference model: on padded inputs whose line ends and spaces fall on every
//! buffer, chunk and batch edge, and on property-generated input, at the smallest knob values.
//! One macro, instantiated once for each, as memchr tests its implementations; each strategy also
//! with a transform of the test's own against its own reference, so that each is seen to render
//! with the transform it is given. Then each strategy over real descriptors: pipes, a socket pair,
//! a file.

mod common;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::thread;
use std::thread::LocalKey;
use std::time::Duration;

use common::{line_soup, lines_of, padded_inputs, reference};
use fd_facts as fd;
use linewright::Stats;
use linewright::frame::shared::SharedLines;
use linewright::frame::{Chunk, LineBuffer};
use linewright::strategy;
use linewright::transform::{SpaceCount, Transform};
use linewright::{AsyncFile, AsyncFileInput, FileInput, Input, Memory};
use linewright::{Error, Tally, Tallying};
use proptest::prelude::*;
use space_kernel::{render_chunk, render_line};
use tokio::io::AsyncWrite;
use tokio::runtime::{Builder, Runtime};

/// An async sink that keeps what is written where the test can read it after the strategy, which
/// needs a sink it can own, has finished.
#[derive(Clone, Default)]
struct Collected(Arc<Mutex<Vec<u8>>>);

impl Collected {
    fn bytes(&self) -> Vec<u8> {
        self.0.lock().expect("not poisoned").clone()
    }
}

impl AsyncWrite for Collected {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.0.lock().expect("not poisoned").extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn runtime(builder: &mut Builder) -> Runtime {
    builder.enable_io().build().expect("a runtime")
}

thread_local! {
    static CURRENT_THREAD: Runtime = runtime(&mut Builder::new_current_thread());
    static MULTI_THREAD: Runtime = runtime(Builder::new_multi_thread().worker_threads(2));
}

/// A transform of the test's own, whose reference is plain: each line's bytes reversed, between
/// `<` and `>`. It asks for more room than the space count does, and checks that it got it; and it
/// says a line costs 20 µs (it does not), so that `batched`, when a pipe idles, shares out the
/// lines it holds between its workers, cut at line ends ([`sync_strategies_over_pipes`]).
#[derive(Clone, Copy)]
struct Reversed;

impl Transform for Reversed {
    fn most_added(&self) -> usize {
        40
    }

    fn cost_a_line(&self) -> Duration {
        Duration::from_micros(20)
    }

    fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
        let room = out.capacity() - out.len();
        assert!(
            room >= line.len() + Transform::most_added(self),
            "room for {line:?}"
        );
        out.push(b'<');
        out.extend(line.iter().rev());
        out.extend_from_slice(b">\n");
    }
}

/// [`Reversed`]'s reference, on the reference model's lines.
fn reversed_reference(input: &[u8]) -> Vec<u8> {
    let mut output = Vec::new();
    for line in lines_of(input) {
        output.push(b'<');
        output.extend(line.iter().rev());
        output.extend_from_slice(b">\n");
    }
    output
}

/// A tally of the test's own that holds only in input order: the first and the last line, and
/// how many there were, written after the lines, each passed on as it is between `(` and `)`.
/// Merged out of order, or merged where a chunk was not written, its summary would differ from
/// [`ends_reference`]'s (docs/CONTRACT.md §13.4).
#[derive(Clone, Copy)]
struct Ends;

/// The first and last line of a run of lines, and how many.
#[derive(Default)]
struct FirstAndLast {
    first: Option<Vec<u8>>,
    last: Option<Vec<u8>>,
    lines: u64,
}

impl Tally for FirstAndLast {
    fn merge(&mut self, later: FirstAndLast) {
        self.first = self.first.take().or(later.first);
        self.last = later.last.or(self.last.take());
        self.lines += later.lines;
    }
}

impl Tallying for Ends {
    type Tally = FirstAndLast;

    fn most_added(&self) -> usize {
        3
    }

    fn render_line(&self, tally: &mut FirstAndLast, out: &mut Vec<u8>, line: &[u8]) {
        tally.first.get_or_insert_with(|| line.to_vec());
        tally.last = Some(line.to_vec());
        tally.lines += 1;
        out.push(b'(');
        out.extend_from_slice(line);
        out.extend_from_slice(b")\n");
    }

    fn end(&self, tally: FirstAndLast, out: &mut Vec<u8>) -> std::process::ExitCode {
        for (name, line) in [("first", tally.first), ("last", tally.last)] {
            out.extend_from_slice(format!("{name}: ").as_bytes());
            out.extend_from_slice(&line.unwrap_or_default());
            out.push(b'\n');
        }
        out.extend_from_slice(format!("lines: {}\n", tally.lines).as_bytes());
        std::process::ExitCode::SUCCESS
    }
}

/// [`Ends`]'s reference, on the reference model's lines: the lines, then the summary.
fn ends_reference(input: &[u8]) -> Vec<u8> {
    let lines: Vec<&[u8]> = lines_of(input).collect();
    let mut output = Vec::new();
    for line in &lines {
        output.push(b'(');
        output.extend_from_slice(line);
        output.extend_from_slice(b")\n");
    }
    for (name, line) in [("first", lines.first()), ("last", lines.last())] {
        output.extend_from_slice(format!("{name}: ").as_bytes());
        output.extend_from_slice(line.map_or(&[][..], |line| &line[..]));
        output.push(b'\n');
    }
    output.extend_from_slice(format!("lines: {}\n", lines.len()).as_bytes());
    output
}

/// Each strategy with `transform`, and each framer with the kernel, at size `knob` (1 upwards:
/// the smallest sizes it allows), over `input` in memory, returning what it wrote.
fn std_baseline(transform: impl Tallying, input: &[u8], knob: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let knobs = strategy::std_baseline::Knobs { buffer_size: knob };
    strategy::std_baseline::run(&knobs, transform, Memory::new(input), &mut out)
        .expect("in memory, nothing fails");
    out
}

/// Runs an async strategy to its end on this thread's current-thread runtime.
fn on_current_thread(run: impl Future<Output = Result<Stats, Error>>) {
    CURRENT_THREAD
        .with(|runtime| runtime.block_on(run))
        .expect("in memory, nothing fails");
}

fn baseline(transform: impl Tallying, input: &[u8], knob: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let knobs = strategy::baseline::Knobs { buffer_size: knob };
    on_current_thread(strategy::baseline::run(
        &knobs,
        transform,
        Memory::new(input),
        &mut out,
    ));
    out
}

fn streamer(transform: impl Tallying, input: &[u8], knob: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let knobs = strategy::streamer::Knobs { buffer_size: knob };
    on_current_thread(strategy::streamer::run(
        &knobs,
        transform,
        Memory::new(input),
        &mut out,
    ));
    out
}

fn pipeline(transform: impl Tallying + Send + 'static, input: &[u8], knob: usize) -> Vec<u8> {
    let out = Collected::default();
    let knobs = strategy::pipeline::Knobs {
        batch: knob,
        queue: 1 + knob % 2,
        clocks: knob.is_multiple_of(3),
    };
    let input = Memory::new(input.to_vec());
    let run = strategy::pipeline::run(&knobs, transform, input, out.clone());
    MULTI_THREAD
        .with(|runtime| runtime.block_on(run))
        .expect("in memory, nothing fails");
    out.bytes()
}

fn batched(transform: impl Tallying + Sync, input: &[u8], knob: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let knobs = strategy::batched::Knobs {
        threads: 1 + knob % 3,
        chunk_size: knob,
        queue: 1 + knob % 2,
        clocks: knob.is_multiple_of(3),
    };
    strategy::batched::run(&knobs, transform, Memory::new(input), &mut out)
        .expect("in memory, nothing fails");
    out
}

/// Feeds `input` to a framer in pieces of at most `size` bytes, as reads would.
fn pieces(input: &[u8], size: usize) -> impl Iterator<Item = &[u8]> {
    input.chunks(size.max(1))
}

/// Copies as much of `piece` into `spare` as fits, as a read would, and moves `piece` past it.
fn read_into(spare: &mut [u8], piece: &mut &[u8]) -> usize {
    let n = spare.len().min(piece.len());
    spare[..n].copy_from_slice(&piece[..n]);
    *piece = &piece[n..];
    n
}

fn line_buffer(input: &[u8], knob: usize) -> Vec<u8> {
    let mut framer = LineBuffer::new(knob);
    let mut out = Vec::new();
    for mut piece in pieces(input, knob + 1) {
        while !piece.is_empty() {
            let n = read_into(framer.spare().expect("memory for a short line"), &mut piece);
            framer.filled(n);
            while let Some(line) = framer.next_line() {
                render_line(&mut out, line);
            }
        }
    }
    if let Some(line) = framer.take_rest() {
        render_line(&mut out, line);
    }
    out
}

fn chunk(input: &[u8], knob: usize) -> Vec<u8> {
    let (mut framer, mut handed) = (Chunk::new(knob), Chunk::new(knob));
    let mut out = Vec::new();
    for mut piece in pieces(input, knob + 2) {
        while !piece.is_empty() {
            let n = read_into(framer.spare().expect("memory for a short line"), &mut piece);
            framer.filled(n);
            // Hand on when full, and now and then as if input had gone idle.
            if framer.has_lines() && (framer.is_full() || n.is_multiple_of(3)) {
                framer.take_lines(&mut handed).expect("memory");
                render_chunk(&mut out, handed.bytes());
            }
        }
    }
    framer.finish();
    if framer.has_lines() {
        framer.take_lines(&mut handed).expect("memory");
        render_chunk(&mut out, handed.bytes());
    }
    out
}

fn shared_lines(input: &[u8], knob: usize) -> Vec<u8> {
    let mut framer = SharedLines::new(knob);
    let mut out = Vec::new();
    for piece in pieces(input, knob) {
        framer.spare().expect("memory").extend_from_slice(piece);
        while let Some(batch) = framer.next_batch(knob) {
            render_chunk(&mut out, &batch);
        }
        if piece.len() % 2 == 0
            && let Some(short) = framer.take_complete()
        {
            render_chunk(&mut out, &short);
        }
    }
    if let Some(rest) = framer.take_rest() {
        render_chunk(&mut out, &rest);
    }
    out
}

/// The tests of `$run(input, knob)` against `$reference(input)`, in a module `$module`: padded
/// inputs of up to `$longest` bytes at knobs 1 to 3, and generated input of up to 400 bytes at
/// knobs 1 to 9.
macro_rules! against_the_reference {
    ($module:ident, $run:expr, $reference:expr, $longest:expr) => {
        mod $module {
            use super::*;

            #[test]
            fn padded_inputs_at_the_smallest_knobs() {
                for input in padded_inputs($longest) {
                    for knob in 1..=3 {
                        let got = $run(&input, knob);
                        assert!(got == $reference(&input), "knob {knob}, input {input:?}");
                    }
                }
            }

            proptest! {
                #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

                #[test]
                fn generated_input(input in line_soup(400), knob in 1usize..10) {
                    prop_assert!($run(&input, knob) == $reference(&input));
                }
            }
        }
    };
}

/// A strategy's tests, `crate::$name(transform, input, knob)`: with the space count against the
/// reference model, and with [`Reversed`] and the tally [`Ends`] against their own.
macro_rules! strategy_against_the_references {
    ($name:ident, $longest:expr) => {
        mod $name {
            use super::*;

            against_the_reference!(
                space_count,
                |input, knob| crate::$name(SpaceCount, input, knob),
                reference,
                $longest
            );
            against_the_reference!(
                reversed,
                |input, knob| crate::$name(Reversed, input, knob),
                reversed_reference,
                $longest
            );
            against_the_reference!(
                ends,
                |input, knob| crate::$name(Ends, input, knob),
                ends_reference,
                $longest
            );
        }
    };
}

strategy_against_the_references!(std_baseline, 40);
strategy_against_the_references!(baseline, 40);
strategy_against_the_references!(streamer, 40);
strategy_against_the_references!(pipeline, 24);
strategy_against_the_references!(batched, 24);
against_the_reference!(line_buffer, crate::line_buffer, reference, 40);
against_the_reference!(chunk, crate::chunk, reference, 40);
against_the_reference!(shared_lines, crate::shared_lines, reference, 40);

/// Real descriptors: input through a pipe named as a FILE (`/dev/fd/N`, as a shell's process
/// substitution gives), output into a pipe, each end served by a thread of its own.
fn through_pipes(input: &[u8], run: impl FnOnce(&[PathBuf], File)) -> Vec<u8> {
    let (input_reader, mut input_writer) = std::io::pipe().expect("a pipe");
    let (mut output_reader, output_writer) = std::io::pipe().expect("a pipe");
    let sent = input.to_vec();
    let feeding = thread::spawn(move || input_writer.write_all(&sent));
    let collecting = thread::spawn(move || {
        let mut received = Vec::new();
        output_reader.read_to_end(&mut received).map(|_| received)
    });
    let input_fd = OwnedFd::from(input_reader);
    let path = PathBuf::from(format!(
        "/dev/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&input_fd)
    ));
    run(&[path], File::from(OwnedFd::from(output_writer)));
    drop(input_fd);
    feeding.join().expect("no panic").expect("fed");
    collecting.join().expect("no panic").expect("collected")
}

/// A few thousand lines of every header: more than a pipe holds, so both sides wait on each other.
fn many_lines() -> Vec<u8> {
    (0..20_000)
        .flat_map(|n: usize| {
            let mut line = vec![b'x'; n % 50];
            for space in line.iter_mut().step_by(3).take(n % 9) {
                *space = b' ';
            }
            line.push(b'\n');
            line
        })
        .collect()
}

#[test]
fn sync_strategies_over_pipes() {
    let input = many_lines();
    let output = through_pipes(&input, |files, output| {
        let knobs = strategy::std_baseline::Knobs { buffer_size: 1000 };
        let input = FileInput::of(files, None);
        strategy::std_baseline::run(&knobs, SpaceCount, input, output).expect("runs");
    });
    assert!(output == reference(&input));
    let output = through_pipes(&input, |files, output| {
        let knobs = strategy::batched::Knobs {
            threads: 2,
            chunk_size: 1000,
            queue: 1,
            clocks: false,
        };
        let input = FileInput::of(files, None);
        strategy::batched::run(&knobs, SpaceCount, input, output).expect("runs");
    });
    assert!(output == reference(&input));
    let output = through_pipes(&input, |files, output| {
        let knobs = strategy::batched::Knobs {
            threads: 3,
            chunk_size: 100_000,
            queue: 1,
            clocks: false,
        };
        let input = FileInput::of(files, None);
        strategy::batched::run(&knobs, Reversed, input, output).expect("runs");
    });
    assert!(
        output == reversed_reference(&input),
        "costly lines shared out"
    );
}

#[test]
fn async_strategies_over_pipes() {
    /// Runs an async strategy over pipes on `runtime`, its output a reactor-driven `AsyncFile`.
    fn over_pipes<F: Future<Output = Result<Stats, Error>>>(
        input: &[u8],
        runtime: &'static LocalKey<Runtime>,
        run: impl FnOnce(AsyncFileInput, AsyncFile) -> F,
    ) -> Vec<u8> {
        through_pipes(input, |files, output| {
            runtime
                .with(|runtime| {
                    runtime.block_on(async {
                        let output = AsyncFile::new(output, true);
                        run(AsyncFileInput::of(files, None), output).await
                    })
                })
                .expect("runs");
        })
    }

    let input = many_lines();
    let knobs = strategy::baseline::Knobs { buffer_size: 1000 };
    let output = over_pipes(&input, &CURRENT_THREAD, |input, output| {
        strategy::baseline::run(&knobs, SpaceCount, input, output)
    });
    assert!(output == reference(&input));
    let output = over_pipes(&input, &CURRENT_THREAD, |input, output| {
        strategy::streamer::run(&knobs, SpaceCount, input, output)
    });
    assert!(output == reference(&input));
    let knobs = strategy::pipeline::Knobs {
        batch: 7,
        queue: 2,
        clocks: true,
    };
    let output = over_pipes(&input, &MULTI_THREAD, |input, output| {
        strategy::pipeline::run(&knobs, SpaceCount, input, output)
    });
    assert!(output == reference(&input));
}

#[test]
fn a_socket_pair_and_a_file() {
    let input = many_lines();
    let (mut ours, theirs) = UnixStream::pair().expect("a socket pair");
    let sent = input.clone();
    let feeding = thread::spawn(move || {
        ours.write_all(&sent)?;
        ours.shutdown(std::net::Shutdown::Write)
    });
    let path = std::env::temp_dir().join(format!("pipelines-strategies-{}", std::process::id()));
    let file = File::create(&path).expect("a scratch file");
    /// A socket read as it comes, its input waiting when a poll finds it.
    struct Socket(UnixStream);
    impl Input for Socket {
        fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
            Read::read(&mut self.0, buf).map_err(|error| Error::new("reading", error))
        }
        fn is_ready(&mut self) -> bool {
            fd::is_ready(self.0.as_fd())
        }
    }
    let knobs = strategy::std_baseline::Knobs { buffer_size: 4096 };
    let output = file.try_clone().expect("dup");
    let stats =
        strategy::std_baseline::run(&knobs, SpaceCount, Socket(theirs), output).expect("runs");
    feeding.join().expect("no panic").expect("fed");
    assert_eq!(stats.bytes_in, input.len() as u64);
    assert!(std::fs::read(&path).expect("written") == reference(&input));
    // The file just written, as a FILE argument, read by the async side.
    let knobs = strategy::baseline::Knobs { buffer_size: 4096 };
    let out = Collected::default();
    let watched = file.as_fd().try_clone_to_owned().ok();
    let from_file = AsyncFileInput::of(std::slice::from_ref(&path), watched);
    let run = strategy::baseline::run(&knobs, SpaceCount, from_file, out.clone());
    CURRENT_THREAD
        .with(|runtime| runtime.block_on(run))
        .expect("runs");
    assert!(out.bytes() == reference(&reference(&input)));
    std::fs::remove_file(&path).expect("removed");
}
