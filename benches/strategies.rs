//! Each strategy's in-memory core over 64 MiB of log lines: the work between a binary's reads and
//! its writes, with the I/O taken out (a read is a copy out of memory, a write is clearing the
//! output buffer). Each bench is named after the strategy it stands for:
//!
//! - `std-baseline`: one loop, a line at a time: [`LineBuffer`] framing and [`render_line`];
//! - `pipeline`: reader, counter and writer tokio tasks joined by bounded mpsc channels, `N` lines
//!   a message (`--batch N`): the per-line against the per-batch hand-off;
//! - `batched`: whole chunks cut at line ends ([`Chunk`]) and rendered in one pass
//!   ([`render_chunk`]), on this thread alone and handed to `--threads N` worker threads over a
//!   bounded crossbeam channel (the writer's reordering left out).
//!
//! `baseline` and `streamer` share std-baseline's per-line core; what sets them apart is their
//! async I/O, which an in-memory bench cannot show (throughput.sh does).
//!
//! `cargo bench --bench strategies` (criterion's flags after `--`, e.g. `-- --quick` or
//! `-- pipeline`).

use std::hint::black_box;
use std::thread;
use std::time::Duration;

use bytes::Bytes;
use criterion::measurement::WallTime;
use criterion::{
    BenchmarkGroup, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use crossbeam_channel::{Receiver, bounded, unbounded};
use pipelines::frame::{Chunk, LineBuffer};
use pipelines::kernel::{render_chunk, render_line};
use pipelines::shared_lines::SharedLines;
use tokio::runtime::{Builder, Runtime};
use tokio::sync::mpsc::channel;

/// The input every bench gets through.
const DATA_SIZE: usize = 64 << 20;
/// Bytes per read and per write, as the binaries' default buffer size.
const IO_SIZE: usize = 128 << 10;
/// Bytes per chunk, as `batched`'s default `--chunk-size`.
const CHUNK_SIZE: usize = 256 << 10;
/// Messages queued between stages, as pipeline's default `--queue`.
const QUEUE: usize = 32;

/// Log lines of every header, repeated to `DATA_SIZE` bytes (whole lines).
fn log_data() -> Vec<u8> {
    const LINES: &[&str] = &[
        r#"66.164.117.68 - - [01/Jan/2024:00:00:02 -0700] "GET /import/cart/beta/support HTTP/1.0" 304 13745 "https://www.stream.biz/portal/mobile/engine" "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15""#,
        r#"27.90.75.83 - - [01/Jan/2024:00:00:04 -0700] "PATCH /v1/dashboard/files HTTP/1.1" 400 3381"#,
        r#"120.104.5.82 - - [01/Jan/2024:00:00:04 -0700] "GET /dashboard/assets/import.png HTTP/1.0" 200 5967 "-" "Wget/1.21.4""#,
        "assets",
        r#"167.49.161.123 - data [01/Jan/2024:00:00:05 -0700] "POST /v1/admin/logout/status HTTP/2.0" 200 15393"#,
        "session expired",
        "    at worker queue sync",
        r#"9.6.22.55 - - [01/Jan/2024:00:00:12 -0700] "GET /support/edge HTTP/1.1" 200 12932 "https://www.status.com/settings/login/items.html" "curl/8.4.0""#,
        "cache miss for images",
        "index rebuilt in alpha beta cluster",
    ];
    let mut data = Vec::with_capacity(DATA_SIZE + 512);
    for line in LINES.iter().cycle() {
        if data.len() + line.len() + 1 > DATA_SIZE {
            break;
        }
        data.extend_from_slice(line.as_bytes());
        data.push(b'\n');
    }
    data
}

/// A read: copies the next bytes of `input` into `buf`, returning how many (0 at the end).
fn read(input: &mut &[u8], buf: &mut [u8]) -> usize {
    let n = buf.len().min(input.len()).min(IO_SIZE);
    buf[..n].copy_from_slice(&input[..n]);
    *input = &input[n..];
    n
}

/// std-baseline's loop; returns the bytes "written".
fn line_loop(mut input: &[u8]) -> usize {
    let mut lines = LineBuffer::new(IO_SIZE);
    let mut out = Vec::with_capacity(2 * IO_SIZE);
    let mut written = 0;
    loop {
        let n = read(&mut input, lines.spare());
        if n == 0 {
            break;
        }
        lines.filled(n);
        while let Some(line) = lines.next_line() {
            render_line(&mut out, line);
        }
        if out.len() >= IO_SIZE {
            written += black_box(&out).len();
            out.clear();
        }
    }
    if let Some(line) = lines.take_rest() {
        render_line(&mut out, line);
    }
    written + out.len()
}

/// Cuts `input` into chunks of whole lines and passes each to `each`, which gives the chunk back
/// through `recycle` once done with it: buffers go round, as in batched, rather than being made
/// (and zeroed) anew for every chunk.
fn chunks(mut input: &[u8], recycled: &Receiver<Chunk>, mut each: impl FnMut(Chunk)) {
    let mut chunk = Chunk::new(CHUNK_SIZE);
    loop {
        let n = read(&mut input, chunk.spare());
        if n == 0 {
            chunk.finish();
        } else {
            chunk.filled(n);
        }
        if chunk.has_lines() && (n == 0 || chunk.is_full()) {
            let mut full = recycled
                .try_recv()
                .unwrap_or_else(|_| Chunk::new(CHUNK_SIZE));
            chunk.take_lines(&mut full);
            each(full);
        }
        if n == 0 {
            break;
        }
    }
}

/// batched's core on this thread alone: chunks rendered whole.
fn chunk_loop(input: &[u8]) -> usize {
    let (recycle, recycled) = unbounded();
    let mut out = Vec::with_capacity(2 * CHUNK_SIZE);
    let mut written = 0;
    chunks(input, &recycled, |chunk| {
        out.clear();
        render_chunk(&mut out, chunk.bytes());
        written += black_box(&out).len();
        let _ = recycle.send(chunk);
    });
    written
}

/// batched's core across threads: chunks handed over a bounded crossbeam channel to `workers`
/// threads that render them.
fn chunks_to_workers(input: &[u8], workers: usize) -> usize {
    // As batched's default --queue: a chunk waiting per worker.
    let (to_workers, for_workers) = bounded::<Chunk>(workers);
    let (recycle, recycled) = unbounded();
    thread::scope(|scope| {
        let rendering: Vec<_> = (0..workers)
            .map(|_| {
                let (chunks, recycle) = (for_workers.clone(), recycle.clone());
                scope.spawn(move || {
                    let mut out = Vec::with_capacity(2 * CHUNK_SIZE);
                    let mut written = 0;
                    for chunk in chunks {
                        out.clear();
                        render_chunk(&mut out, chunk.bytes());
                        written += black_box(&out).len();
                        let _ = recycle.send(chunk);
                    }
                    written
                })
            })
            .collect();
        chunks(input, &recycled, |chunk| {
            to_workers
                .send(chunk)
                .expect("the workers outlive the sender");
        });
        drop(to_workers);
        rendering
            .into_iter()
            .map(|worker| worker.join().expect("a worker panicked"))
            .sum()
    })
}

/// pipeline's core: a reader task splits `batch` lines at a time off a [`SharedLines`] buffer
/// and sends them over a bounded tokio mpsc channel to a counter task, which renders each batch
/// and sends it on to a writer task, on a multi-thread runtime.
fn tasks_hand_off(runtime: &Runtime, data: &Bytes, batch: usize) -> usize {
    let (lines_in, mut lines_out) = channel::<Bytes>(QUEUE);
    let (rendered_in, mut rendered_out) = channel::<Vec<u8>>(QUEUE);
    let data = data.clone();
    runtime.block_on(async move {
        let reader = tokio::spawn(async move {
            let mut lines = SharedLines::new(IO_SIZE);
            for read in data.chunks(IO_SIZE) {
                lines.spare().extend_from_slice(read);
                while let Some(batch) = lines.next_batch(batch) {
                    if lines_in.send(batch).await.is_err() {
                        return;
                    }
                }
            }
            if let Some(rest) = lines.take_rest() {
                let _ = lines_in.send(rest).await;
            }
        });
        let counter = tokio::spawn(async move {
            while let Some(lines) = lines_out.recv().await {
                let mut out = Vec::new();
                render_chunk(&mut out, &lines);
                if rendered_in.send(out).await.is_err() {
                    break;
                }
            }
        });
        let writer = tokio::spawn(async move {
            let mut pending = Vec::with_capacity(2 * IO_SIZE);
            let mut written = 0;
            while let Some(rendered) = rendered_out.recv().await {
                pending.extend_from_slice(&rendered);
                if pending.len() >= IO_SIZE {
                    written += black_box(&pending).len();
                    pending.clear();
                }
            }
            written + pending.len()
        });
        reader.await.expect("the reader panicked");
        counter.await.expect("the counter panicked");
        writer.await.expect("the writer panicked")
    })
}

fn group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(DATA_SIZE as u64));
    // Each iteration takes tens of milliseconds or more: few, flat samples keep runs short.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    group
}

fn strategies(c: &mut Criterion) {
    let data = log_data();

    let mut std_baseline = group(c, "std-baseline");
    std_baseline.bench_function("line loop", |b| b.iter(|| line_loop(&data)));
    std_baseline.finish();

    let runtime = Builder::new_multi_thread()
        .build()
        .expect("a tokio runtime");
    let shared = Bytes::from(data.clone());
    let mut pipeline = group(c, "pipeline");
    for batch in [1, 16, 256, 4096] {
        pipeline.bench_function(format!("batch {batch}"), |b| {
            b.iter(|| tasks_hand_off(&runtime, &shared, batch))
        });
    }
    pipeline.finish();

    let mut batched = group(c, "batched");
    batched.bench_function("render_chunk, one thread", |b| b.iter(|| chunk_loop(&data)));
    let cores = thread::available_parallelism().map_or(1, usize::from);
    for workers in 1..=cores {
        batched.bench_function(format!("threads {workers}"), |b| {
            b.iter(|| chunks_to_workers(&data, workers))
        });
    }
    batched.finish();
}

criterion_group!(benches, strategies);
criterion_main!(benches);
