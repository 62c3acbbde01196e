//! The kernel over line shapes, as the original experiment's string bench: how fast spaces are
//! counted, and a line rendered, for short, long, indented and space-free lines; and a whole chunk
//! rendered by each implementation this CPU runs (the portable one being the per-line loop the
//! others replaced).
//!
//! `cargo bench -p space-kernel --bench kernel` (criterion's flags after `--`, e.g. `-- --quick` or
//! `-- render_chunk`).
//!
//! `KERNEL_FILES=a.txt:b.txt cargo bench -p space-kernel --bench kernel` instead renders each file,
//! in `batched`'s 256 KiB chunks, with each block implementation this CPU runs, in interleaved
//! rounds (`KERNEL_ROUNDS`, default 21), and prints each one's median and least CPU time of the
//! thread and its ratio to AVX2's: on a machine that others load, CPU time taken in alternation
//! compares implementations where criterion's one-after-the-other wall time cannot.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use space_kernel::{Implementation, count_spaces, render_line};

/// One line of each shape, without its `\n`.
fn shapes() -> Vec<(&'static str, Vec<u8>)> {
    let long_word = "x".repeat(40);
    vec![
        ("a b c", b"a b c".to_vec()),
        ("long words", [long_word.as_str(); 5].join(" ").into_bytes()),
        ("leading spaces", [&[b' '; 12][..], b"indented text"].concat()),
        ("no spaces", vec![b'x'; 200]),
        (
            "access log",
            br#"66.164.117.68 - - [01/Jan/2024:00:00:02 -0700] "GET /import/cart/beta/support HTTP/1.0" 304 13745 "https://www.stream.biz/portal/mobile" "curl/8.4.0""#
                .to_vec(),
        ),
    ]
}

fn kernel(c: &mut Criterion) {
    let mut group = c.benchmark_group("count_spaces");
    for (shape, line) in shapes() {
        group.throughput(Throughput::Bytes(line.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(shape), &line, |b, line| {
            b.iter(|| count_spaces(black_box(line)))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("render_line");
    for (shape, line) in shapes() {
        group.throughput(Throughput::Bytes(line.len() as u64));
        let mut out = Vec::with_capacity(line.len() + 16);
        group.bench_with_input(BenchmarkId::from_parameter(shape), &line, |b, line| {
            b.iter(|| {
                out.clear();
                render_line(&mut out, black_box(line));
                black_box(&out);
            })
        });
    }
    group.finish();
}

/// The first lines of `gen-logs --seed 1` (the harness's log data), a mix of access-log lines
/// and short ones, 142 bytes a line on average (the whole data set: 134).
const LOG_LINES: &str = r#"66.164.117.68 - - [01/Jan/2024:00:00:02 -0700] "GET /import/cart/beta/support HTTP/1.0" 304 13745 "https://www.stream.biz/portal/mobile/engine" "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15"
114.146.138.250 - - [01/Jan/2024:00:00:02 -0700] "GET /files/network?id=44202 HTTP/2.0" 401 12101 "https://www.cluster.info/v1/profile/report/cache" "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.43 Mobile Safari/537.36"
61.211.236.145 - - [01/Jan/2024:00:00:02 -0700] "GET /beta/dashboard HTTP/1.1" 201 45203 "-" "curl/8.4.0"
219.233.238.22 - - [01/Jan/2024:00:00:04 -0700] "GET /mobile/search/cache.html HTTP/2.0" 201 26175 "https://www.network.com/settings/orders/search/batch" "curl/8.4.0"
29.174.1.247 - - [01/Jan/2024:00:00:04 -0700] "HEAD /auth/alpha HTTP/1.1" 404 25231 "https://www.docs.info/widgets/beta.php" "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.43 Mobile Safari/537.36"
27.90.75.83 - - [01/Jan/2024:00:00:04 -0700] "PATCH /v1/dashboard/files HTTP/1.1" 400 3381
120.104.5.82 - - [01/Jan/2024:00:00:04 -0700] "GET /dashboard/assets/import.png HTTP/1.0" 200 5967 "-" "Wget/1.21.4"
63.220.161.38 - - [01/Jan/2024:00:00:05 -0700] "GET /engine/status/billing/alpha HTTP/2.0" 200 24272
167.49.161.123 - data [01/Jan/2024:00:00:05 -0700] "POST /v1/admin/logout/status HTTP/2.0" 200 15393
106.104.69.186 - - [01/Jan/2024:00:00:05 -0700] "PATCH /widgets/status/profile?id=58828 HTTP/2.0" 500 12110 "https://www.content.info/users/batch" "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1"
    assets
246.245.123.248 - - [01/Jan/2024:00:00:07 -0700] "GET /content/widgets/mobile/alpha HTTP/1.1" 204 28191
47.165.39.100 - - [01/Jan/2024:00:00:08 -0700] "GET /images HTTP/1.0" 200 23232
231.157.83.129 - - [01/Jan/2024:00:00:10 -0700] "HEAD /status/profile/stream/config HTTP/1.0" 200 25748
154.246.120.235 - - [01/Jan/2024:00:00:10 -0700] "GET /network/billing/login/config.html HTTP/1.1" 200 5572 "-" "Wget/1.21.4"
240.6.51.55 - - [01/Jan/2024:00:00:12 -0700] "PATCH /v2/queue/items/dashboard HTTP/1.1" 200 18164
"#;

/// The line of the original experiment's `yes` pipe (scripts/common.sh).
const KARAMAZOV: &str = "Above all, don't lie to yourself. The man who lies to himself and listens to his own lie comes to a point that he cannot distinguish the truth within him, or around him, and so loses all respect for himself and for others.";

/// Short lines in the shape of a manual page's source, 20 bytes a line on average, as much text
/// is: several end in each 64-byte block.
const SHORT_LINES: &str = r#".TH RENDER 1 "November 2026"
.SH NAME
render \- prefix lines with a count
.SH SYNOPSIS
.B render
[\fIOPTION\fR]... [\fIFILE\fR]...
.SH DESCRIPTION
.PP
Each line is written after a header
that says how many spaces it holds.

.TP
\fB\-\-chunk-size\fR \fISIZE\fR
read this much at a time
.TP
\fB\-\-batch\fR \fIN\fR
lines per message
"#;

/// The size of `batched`'s chunks by default: what each call renders there.
const CHUNK: usize = 256 << 10;

/// `lines` repeated to fill a chunk, cut at a line end.
fn chunk_of(lines: &str) -> Vec<u8> {
    let mut chunk = Vec::with_capacity(CHUNK + lines.len());
    while chunk.len() < CHUNK {
        chunk.extend_from_slice(lines.as_bytes());
    }
    chunk
}

/// A group per implementation this CPU runs, each over a chunk of log lines, of Karamazov lines
/// and of short lines. The portable implementation is the per-line loop the block kernels
/// replaced (a `memchr` a line), so its group is the "before" of every comparison.
fn chunks(c: &mut Criterion) {
    let inputs = [
        ("logs", chunk_of(LOG_LINES)),
        ("karamazov", chunk_of(&format!("{KARAMAZOV}\n"))),
        ("short lines", chunk_of(SHORT_LINES)),
    ];
    type Render = Box<dyn Fn(&mut Vec<u8>, &[u8]) -> u64>;
    let mut renderers: Vec<(String, Render)> = Vec::new();
    for implementation in Implementation::available() {
        renderers.push((
            format!("{implementation:?}").to_lowercase(),
            Box::new(move |out: &mut Vec<u8>, chunk: &[u8]| {
                implementation.render_chunk(out, chunk)
            }),
        ));
    }
    for (name, render) in renderers {
        let mut group = c.benchmark_group(format!("render_chunk/{name}"));
        for (input, chunk) in &inputs {
            group.throughput(Throughput::Bytes(chunk.len() as u64));
            let mut out = Vec::with_capacity(2 * chunk.len());
            group.bench_with_input(BenchmarkId::from_parameter(input), chunk, |b, chunk| {
                b.iter(|| {
                    out.clear();
                    black_box(render(&mut out, black_box(chunk)));
                })
            });
        }
        group.finish();
    }
}

/// `path` in chunks of [`CHUNK`] bytes or a little less, each cut after a line's end as
/// `batched` cuts them (a line longer than a chunk is one chunk).
fn file_chunks(path: &Path) -> Vec<Vec<u8>> {
    let text = std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut chunks = Vec::new();
    let mut rest = &text[..];
    while !rest.is_empty() {
        let window = &rest[..rest.len().min(CHUNK)];
        let cut = match window.iter().rposition(|&byte| byte == b'\n') {
            Some(newline) if window.len() == CHUNK => newline + 1,
            _ if window.len() < CHUNK => rest.len(),
            _ => rest
                .iter()
                .position(|&byte| byte == b'\n')
                .map_or(rest.len(), |newline| newline + 1),
        };
        let (chunk, after) = rest.split_at(cut);
        chunks.push(chunk.to_vec());
        rest = after;
    }
    chunks
}

/// The CPU time this thread has run.
fn thread_cpu_time() -> Duration {
    let time = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(time.tv_sec as u64, time.tv_nsec as u32)
}

/// The `KERNEL_FILES` comparison (see the top of this file).
fn compare_files(files: &std::ffi::OsStr) {
    let rounds: usize = std::env::var("KERNEL_ROUNDS").map_or(21, |rounds| {
        rounds.parse().expect("KERNEL_ROUNDS: a number of rounds")
    });
    // The portable implementation, a line at a time, is the criterion groups' "before"; here
    // only the block scans are compared.
    let implementations: Vec<Implementation> = Implementation::available()
        .into_iter()
        .filter(|&implementation| implementation != Implementation::Portable)
        .collect();
    for path in std::env::split_paths(files) {
        let chunks = file_chunks(&path);
        let bytes: usize = chunks.iter().map(Vec::len).sum();
        let mut out = Vec::new();
        let mut times = vec![Vec::new(); implementations.len()];
        for round in 0..rounds {
            // Each round starts with the next implementation, so none is always first.
            for turn in 0..implementations.len() {
                let index = (round + turn) % implementations.len();
                let start = thread_cpu_time();
                for chunk in &chunks {
                    out.clear();
                    black_box(implementations[index].render_chunk(&mut out, black_box(chunk)));
                }
                times[index].push(thread_cpu_time() - start);
            }
        }
        println!(
            "{}: {bytes} bytes in {} chunks, {rounds} rounds, thread CPU time a pass",
            path.display(),
            chunks.len()
        );
        let median = |times: &mut Vec<Duration>| {
            times.sort();
            times[times.len() / 2]
        };
        let medians: Vec<Duration> = times.iter_mut().map(median).collect();
        // AVX2's is the time to beat: the dispatch's choice where AVX-512 is missing.
        let baseline = implementations
            .iter()
            .position(|&implementation| implementation == Implementation::Avx2)
            .unwrap_or(0);
        for ((implementation, times), median) in implementations.iter().zip(&times).zip(&medians) {
            println!(
                "  {:<8} median {:>8.2} ms  least {:>8.2} ms  {:>6.2} GB/s  median / {:?}'s {:.3}",
                format!("{implementation:?}"),
                median.as_secs_f64() * 1e3,
                times[0].as_secs_f64() * 1e3,
                bytes as f64 / median.as_secs_f64() / 1e9,
                implementations[baseline],
                median.as_secs_f64() / medians[baseline].as_secs_f64(),
            );
        }
    }
}

criterion_group! {
    name = benches;
    // Nanosecond-scale work settles fast: short runs keep `cargo bench` modest.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = kernel, chunks
}

/// criterion's groups, or the `KERNEL_FILES` comparison where that is set.
fn main() {
    if let Some(files) = std::env::var_os("KERNEL_FILES") {
        compare_files(&files);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
