//! Each strategy, as the library runs it for its binary, over 64 MiB of log lines in memory: the
//! input a reader of bytes in memory, the output a sink that drops them. What is left is each
//! strategy's whole per-line and per-batch cost, framing, hand-offs, rendering and reordering
//! included, at the binaries' defaults (and `pipeline` at `--batch` 1 and 256).
//!
//! `cargo bench --bench strategies` (criterion's flags after `--`, e.g. `-- --quick` or
//! `-- pipeline`).

use std::thread;
use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use linewright::Memory;
use linewright::strategy::{baseline, batched, pipeline, std_baseline, streamer};
use linewright::transform::SpaceCount;
use tokio::runtime::{Builder, Runtime};

/// The input every bench gets through.
const DATA_SIZE: usize = 64 << 20;
/// The binaries' default `--buffer-size`.
const BUFFER_SIZE: usize = 128 << 10;

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

/// The data as a reader that each run starts from the beginning, without copying it first.
fn input(data: &Bytes) -> Memory<Bytes> {
    Memory::new(data.clone())
}

fn runtime(mut builder: Builder) -> Runtime {
    builder.enable_io().build().expect("a runtime")
}

fn strategies(c: &mut Criterion) {
    let data = Bytes::from(log_data());
    let mut group = c.benchmark_group("strategies");
    group
        .throughput(Throughput::Bytes(data.len() as u64))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));

    let buffer = std_baseline::Knobs {
        buffer_size: BUFFER_SIZE,
    };
    group.bench_function("std-baseline", |b| {
        b.iter(|| std_baseline::run(&buffer, SpaceCount, input(&data), std::io::sink()))
    });

    let current_thread = runtime(Builder::new_current_thread());
    group.bench_function("baseline", |b| {
        b.iter(|| {
            current_thread.block_on(baseline::run(
                &buffer,
                SpaceCount,
                input(&data),
                tokio::io::sink(),
            ))
        })
    });
    group.bench_function("streamer", |b| {
        b.iter(|| {
            current_thread.block_on(streamer::run(
                &buffer,
                SpaceCount,
                input(&data),
                tokio::io::sink(),
            ))
        })
    });

    let multi_thread = runtime(Builder::new_multi_thread());
    for batch in [1, 256] {
        let knobs = pipeline::Knobs {
            batch,
            queue: 32,
            clocks: false,
        };
        group.bench_function(format!("pipeline --batch {batch}"), |b| {
            b.iter(|| {
                multi_thread.block_on(pipeline::run(
                    &knobs,
                    SpaceCount,
                    input(&data),
                    tokio::io::sink(),
                ))
            })
        });
    }

    let threads = thread::available_parallelism().map_or(1, usize::from);
    let knobs = batched::Knobs {
        threads,
        chunk_size: 256 << 10,
        queue: threads,
        clocks: false,
    };
    group.bench_function("batched", |b| {
        b.iter(|| batched::run(&knobs, SpaceCount, input(&data), std::io::sink()))
    });
    group.finish();
}

criterion_group!(benches, strategies);
criterion_main!(benches);
