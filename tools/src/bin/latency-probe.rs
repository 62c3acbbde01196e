//! `latency-probe`: how long a line takes to come through a binary, at a given offered rate.
//!
//! It starts the binary under test, writes numbered lines into its stdin on an absolute schedule
//! (line `n` is due at `start + (n - 1) / rate`, so a late wake-up is made up, not carried
//! forward), and reads its stdout on another thread. Each line's latency is the time from just
//! before the write that carried it to just after the read that brought its output back. Every
//! output line is checked against the line sent: nothing lost, repeated, reordered or altered.
//!
//! One start-up line goes first and the schedule starts only when it is back, so the binary's
//! start-up is not counted as latency.
//!
//! With `--ping-pong`, each line is sent only once the one before it has come back (and its time
//! on the schedule has come, the probe sleeping until then): every line meets a binary with
//! nothing in flight, so its latency is one line's way through, with no queueing behind others.
//!
//! At `--rate max` the writer sends as fast as the binary takes lines. Latency then measures
//! queueing, not responsiveness: each line waits behind everything already in the pipes and the
//! binary's buffers (Little's law: latency is about bytes in flight / throughput). The achieved
//! rate is the figure to read there, and the probe itself shares the CPU with the binary.

use std::ffi::OsString;
use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use clap::Parser;
use memchr::memchr;
use pipelines_tools::latency::{Latencies, Summary, Verifier, push_line};

/// Most lines in one write, so a writer that falls behind catches up in bounded pieces and at
/// `max` each write is about 64 KiB, the size of a Linux pipe.
const BATCH_LINES: u64 = 1024;

/// Measure per-line latency through a binary at an offered rate, checking every line comes back.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Lines per second to offer (suffix k or M allowed); `max` or 0: as fast as it takes them.
    #[arg(long, default_value = "1k", value_parser = parse_rate)]
    rate: Rate,

    /// Stop after this many lines (the start-up line not counted).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    lines: Option<u64>,

    /// Stop sending after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value = "2", value_parser = parse_seconds)]
    duration: Duration,

    /// Send each line only once the one before has come back: one line in flight at a time.
    #[arg(long)]
    ping_pong: bool,

    /// Kill the binary and fail if the whole run takes longer than this many seconds.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_seconds)]
    timeout: Duration,

    /// The name to report the binary under; by default its command line.
    #[arg(long)]
    label: Option<String>,

    /// Also append the result as a row to this TSV file, with a header row if it is new or empty.
    #[arg(long, value_name = "FILE")]
    tsv: Option<PathBuf>,

    /// The binary under test and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// The offered rate.
#[derive(Debug, Clone, Copy)]
enum Rate {
    /// As fast as the binary takes lines.
    Max,
    PerSecond(u64),
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rate::Max => write!(f, "max"),
            Rate::PerSecond(rate) => write!(f, "{rate}"),
        }
    }
}

fn parse_rate(text: &str) -> Result<Rate, String> {
    if text == "max" {
        return Ok(Rate::Max);
    }
    let (number, scale) = match text.strip_suffix(['k', 'K']) {
        Some(number) => (number, 1_000),
        None => match text.strip_suffix('M') {
            Some(number) => (number, 1_000_000),
            None => (text, 1),
        },
    };
    let rate = number
        .parse::<u64>()
        .ok()
        .and_then(|number| number.checked_mul(scale))
        .ok_or_else(|| {
            format!("`{text}` is not a rate: lines per second (1000, 10k, 1M) or max")
        })?;
    Ok(if rate == 0 {
        Rate::Max
    } else {
        Rate::PerSecond(rate)
    })
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .filter(|seconds| *seconds > 0.0)
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .ok_or_else(|| format!("`{text}` is not a positive number of seconds"))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let label = args.label.clone().unwrap_or_else(|| {
        let words: Vec<_> = args.command.iter().map(|w| w.to_string_lossy()).collect();
        words.join(" ")
    });
    match probe(&args).and_then(|report| publish(&args, &label, &report)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // Nothing is left to tell if stderr itself is gone.
            let _ = writeln!(io::stderr(), "latency-probe: {label}: {error}");
            ExitCode::FAILURE
        }
    }
}

/// What a successful run measured.
struct Report {
    rate: Rate,
    summary: Summary,
    /// From the start-up line's return to the last line's.
    elapsed: Duration,
}

impl Report {
    fn achieved(&self) -> f64 {
        self.summary.lines as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The lines the writer has stamped: every sequence number below `end` was handed to a write
/// that began at `at`.
struct Stamp {
    end: u64,
    at: Instant,
}

/// Runs the binary under test once and checks and times every line through it.
fn probe(args: &Args) -> Result<Report, String> {
    let deadline = Instant::now() + args.timeout;
    let (program, program_args) = args.command.split_first().ok_or("no command given")?;
    let mut child = Command::new(program)
        .args(program_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot start it: {error}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("its stdin or stdout was not piped".into());
    };

    let (stamps, stamped) = mpsc::channel();
    let (came_back, returned) = mpsc::channel();
    let (sent_tx, sent_rx) = mpsc::channel();
    let (received_tx, received_rx) = mpsc::channel();
    let schedule = Schedule {
        rate: args.rate,
        lines: args.lines,
        duration: args.duration,
        ping_pong: args.ping_pong,
    };
    thread::spawn(move || {
        let _ = sent_tx.send(send(stdin, schedule, stamps, returned));
    });
    let ping_pong = args.ping_pong;
    thread::spawn(move || {
        let _ = received_tx.send(receive(stdout, stamped, came_back, ping_pong));
    });

    // A failure leaves the binary killed and the threads unjoined: they may be stuck on pipes that
    // a grandchild still holds, and the process exit that follows closes them.
    let outcome = finish(&mut child, deadline, &sent_rx, &received_rx);
    if outcome.is_err() {
        let _ = child.kill();
    }
    let (sent, (latencies, elapsed)) = outcome?;
    let summary = latencies
        .summary()
        .ok_or("no line was measured: give it more --lines or a longer --duration".to_string())?;
    if summary.lines != sent {
        return Err(format!(
            "{sent} lines were sent and {} measured",
            summary.lines
        ));
    }
    Ok(Report {
        rate: schedule.rate,
        summary,
        elapsed,
    })
}

/// Waits, until `deadline`, for the reader, the writer and the binary, in that order; returns
/// the lines sent, and the latencies and time span the reader measured.
fn finish(
    child: &mut Child,
    deadline: Instant,
    sent: &Receiver<Result<u64, String>>,
    received: &Receiver<Result<(Latencies, Duration), String>>,
) -> Result<(u64, (Latencies, Duration)), String> {
    let timed_out = || "it did not finish before --timeout: killed".to_string();
    let wait = |error| match error {
        RecvTimeoutError::Timeout => timed_out(),
        RecvTimeoutError::Disconnected => "a probe thread ended without a result".to_string(),
    };
    // The reader's verdict first: a lost or altered line explains a failing writer or binary.
    let received = received
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .map_err(wait)??;
    let sent = sent
        .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .map_err(wait)??;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(status)) => return Err(format!("it failed: {status}")),
            Ok(None) if Instant::now() >= deadline => return Err(timed_out()),
            Ok(None) => thread::sleep(Duration::from_millis(1)),
            Err(error) => return Err(format!("waiting for it to exit: {error}")),
        }
    }
    Ok((sent, received))
}

/// When the writer sends, and how much.
#[derive(Clone, Copy)]
struct Schedule {
    rate: Rate,
    lines: Option<u64>,
    duration: Duration,
    /// Each line only once the one before it has come back.
    ping_pong: bool,
}

/// The writer: the start-up line, then lines on schedule until `lines` or `duration` runs out.
/// `returned` tells when the start-up line (with `ping_pong`, every line) has come back.
/// Returns how many lines it sent after the start-up line.
fn send(
    mut stdin: ChildStdin,
    schedule: Schedule,
    stamps: Sender<Stamp>,
    returned: Receiver<()>,
) -> Result<u64, String> {
    let Schedule {
        rate,
        lines,
        duration,
        ping_pong,
    } = schedule;
    let most_in_a_write = if ping_pong { 1 } else { BATCH_LINES };
    let mut batch = Vec::new();
    let mut write = |from: u64, to: u64| {
        batch.clear();
        for seq in from..to {
            push_line(&mut batch, seq);
        }
        // Stamped before the write, so that the reader always finds the stamp of a line that
        // came back, and so that time blocked on a full pipe counts as the line's latency.
        if stamps
            .send(Stamp {
                end: to,
                at: Instant::now(),
            })
            .is_err()
        {
            // The reader stopped and says why; writing on would be pointless.
            return Ok(false);
        }
        stdin.write_all(&batch).map(|()| true).map_err(|error| {
            if error.kind() == io::ErrorKind::BrokenPipe {
                format!("it stopped reading its input before line {from}")
            } else {
                format!("writing to it: {error}")
            }
        })
    };

    if !write(0, 1)? || returned.recv().is_err() {
        return Ok(0);
    }
    let start = Instant::now();
    let end = lines.map_or(u64::MAX, |lines| lines + 1);
    let mut next = 1;
    while next < end {
        let now = Instant::now();
        let elapsed = now - start;
        if elapsed >= duration {
            break;
        }
        let due = match rate {
            Rate::Max => u64::MAX,
            // Lines 1 ..= elapsed * rate + 1 are due: line n at (n - 1) / rate seconds.
            Rate::PerSecond(rate) => {
                let behind = elapsed.as_nanos() * u128::from(rate) / 1_000_000_000;
                u64::try_from(behind).unwrap_or(u64::MAX).saturating_add(2)
            }
        };
        let to = due.min(end).min(next + most_in_a_write);
        if to <= next {
            if let Rate::PerSecond(rate) = rate {
                let due_at = start + Duration::from_secs_f64((next - 1) as f64 / rate as f64);
                thread::sleep(due_at.saturating_duration_since(now));
            }
            continue;
        }
        if !write(next, to)? || (ping_pong && returned.recv().is_err()) {
            break;
        }
        next = to;
    }
    // Dropping stdin here is the end of input for the binary.
    Ok(next - 1)
}

/// The reader: checks every output line and records its latency, until the output ends. Tells
/// `came_back` when the start-up line (with `ping_pong`, every line) is back.
/// Returns the latencies and the time from the start-up line's return to the last line's.
fn receive(
    mut stdout: ChildStdout,
    stamps: Receiver<Stamp>,
    came_back: Sender<()>,
    ping_pong: bool,
) -> Result<(Latencies, Duration), String> {
    // Far longer than any probe line; output that runs past it without a `\n` is not theirs.
    const LIMIT: usize = 1 << 20;
    let mut buf = vec![0; LIMIT];
    let (mut start, mut end) = (0, 0);
    let mut verifier = Verifier::new();
    let mut latencies = Latencies::new();
    let mut stamp = Stamp {
        end: 0,
        at: Instant::now(),
    };
    let mut first_back = None;
    let mut last_back = Instant::now();
    loop {
        if end == buf.len() {
            if start == 0 {
                return Err(format!(
                    "more than {LIMIT} bytes came out without a line end after line {}",
                    verifier.passed()
                ));
            }
            buf.copy_within(start..end, 0);
            (start, end) = (0, end - start);
        }
        let read = match stdout.read(&mut buf[end..]) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(format!("reading its output: {error}")),
        };
        let now = Instant::now();
        end += read;
        while let Some(length) = memchr(b'\n', &buf[start..end]) {
            let seq = verifier.check(&buf[start..start + length])?;
            start += length + 1;
            while seq >= stamp.end {
                stamp = stamps
                    .recv()
                    .map_err(|_| format!("line {seq} came out but was never sent"))?;
            }
            if seq == 0 {
                first_back = Some(now);
            } else {
                latencies.record(now - stamp.at);
            }
            if seq == 0 || ping_pong {
                let _ = came_back.send(());
            }
            last_back = now;
        }
    }
    if start < end {
        return Err(format!(
            "its output ended inside a line, after line {}",
            verifier.passed().saturating_sub(1)
        ));
    }
    // Lines the writer sent but that never came out: the verifier saw only the lines before them.
    let sent = stamps.try_iter().last().map_or(stamp.end, |last| last.end);
    if verifier.passed() < sent {
        return Err(format!(
            "{} of {sent} lines were lost: the output ended after line {}",
            sent - verifier.passed(),
            verifier.passed().saturating_sub(1)
        ));
    }
    let first_back = first_back.ok_or("it wrote nothing: not even the start-up line came back")?;
    Ok((latencies, last_back - first_back))
}

/// Prints the human report on stdout and appends the TSV row, if asked.
fn publish(args: &Args, label: &str, report: &Report) -> Result<(), String> {
    let summary = &report.summary;
    let mut offered = match report.rate {
        Rate::Max => "as fast as it takes them".to_string(),
        Rate::PerSecond(rate) => format!("{rate} lines/s offered"),
    };
    if args.ping_pong {
        offered.push_str(", one line in flight (ping-pong)");
    }
    let short = match report.rate {
        Rate::PerSecond(rate) if report.achieved() < 0.95 * rate as f64 => {
            " (short of the offered rate: latency includes queueing)"
        }
        _ => "",
    };
    let micros = |duration: Duration| format!("{:.1} us", duration.as_secs_f64() * 1e6);
    let text = format!(
        "{label}, {offered}\n  \
         lines    {} in {:.2} s, {:.0} lines/s achieved{short}\n  \
         latency  min {}  p50 {}  p99 {}  p99.9 {}  max {}\n  \
         verified every line came back once, in order, with its header\n",
        summary.lines,
        report.elapsed.as_secs_f64(),
        report.achieved(),
        micros(summary.min),
        micros(summary.p50),
        micros(summary.p99),
        micros(summary.p999),
        micros(summary.max),
    );
    io::stdout()
        .write_all(text.as_bytes())
        .map_err(|error| format!("writing the report: {error}"))?;
    if let Some(path) = &args.tsv {
        append_row(path, label, report)
            .map_err(|error| format!("appending to {}: {error}", path.display()))?;
    }
    Ok(())
}

/// Appends one TSV row (latencies in microseconds), after a header row if the file is empty.
fn append_row(path: &Path, label: &str, report: &Report) -> io::Result<()> {
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    let mut text = String::new();
    if file.metadata()?.len() == 0 {
        text.push_str(
            "label\toffered\tlines\tseconds\tachieved\tmin_us\tp50_us\tp99_us\tp999_us\tmax_us\n",
        );
    }
    let summary = &report.summary;
    let micros = |duration: Duration| format!("{:.1}", duration.as_secs_f64() * 1e6);
    text.push_str(&format!(
        "{label}\t{}\t{}\t{:.3}\t{:.0}\t{}\t{}\t{}\t{}\t{}\n",
        report.rate,
        summary.lines,
        report.elapsed.as_secs_f64(),
        report.achieved(),
        micros(summary.min),
        micros(summary.p50),
        micros(summary.p99),
        micros(summary.p999),
        micros(summary.max),
    ));
    file.write_all(text.as_bytes())
}
