//! The kernel over line shapes, as the original experiment's string bench: how fast spaces are
//! counted, and a line rendered, for short, long, indented and space-free lines.
//!
//! `cargo bench --bench kernel` (criterion's flags after `--`, e.g. `-- --quick` or
//! `-- count_spaces`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pipelines::kernel::count_spaces;
use pipelines::kernel::render_line;

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

criterion_group! {
    name = benches;
    // Nanosecond-scale work settles fast: short runs keep `cargo bench` modest.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = kernel
}
criterion_main!(benches);
