//! `--stats`: what a run did and, for the multi-stage binaries, where each stage spent its time.
//!
//! A stage's time splits into busy (its own work) and waiting (to receive from the queue before
//! it, or to send into the queue after it). That split is the measured answer to the question of
//! this project: does per-line hand-off cost more than the work itself?

use std::fmt::Write as _;
use std::io::{self, Write};
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use tokio::io::AsyncWrite;

/// Busy and waiting time of one stage (a thread or task), measured only when `--stats` asks.
#[derive(Debug, Clone)]
pub struct StageClock {
    name: String,
    /// When the current stretch began; `None` when not measuring, so clocks cost nothing.
    mark: Option<Instant>,
    busy: Duration,
    waiting_to_receive: Duration,
    waiting_to_send: Duration,
}

impl StageClock {
    /// A clock for the stage `name`; when not `enabled`, it measures nothing and costs nothing.
    pub fn new(name: impl Into<String>, enabled: bool) -> Self {
        StageClock {
            name: name.into(),
            mark: enabled.then(Instant::now),
            busy: Duration::ZERO,
            waiting_to_receive: Duration::ZERO,
            waiting_to_send: Duration::ZERO,
        }
    }

    fn lap(&mut self) -> Duration {
        match &mut self.mark {
            Some(mark) => {
                let now = Instant::now();
                let lap = now - *mark;
                *mark = now;
                lap
            }
            None => Duration::ZERO,
        }
    }

    /// The time since the last mark was spent working.
    pub fn busy(&mut self) {
        let lap = self.lap();
        self.busy += lap;
    }

    /// The time since the last mark was spent waiting to receive.
    pub fn waited_to_receive(&mut self) {
        let lap = self.lap();
        self.waiting_to_receive += lap;
    }

    /// The time since the last mark was spent waiting to send.
    pub fn waited_to_send(&mut self) {
        let lap = self.lap();
        self.waiting_to_send += lap;
    }
}

/// The counters of one run.
#[derive(Debug)]
pub struct Stats {
    started: Instant,
    /// Lines read (a last line without a newline counts).
    pub lines: u64,
    /// Lines written: the newlines in the output, which a transform may make fewer (dropping
    /// lines) or more. Counted by a [`Filter`](crate::Filter)'s run where `--stats` asks, as
    /// `--stats` prints it; a strategy leaves it 0.
    pub lines_written: u64,
    /// Bytes read from all sources.
    pub bytes_in: u64,
    /// Bytes written to the output.
    pub bytes_out: u64,
    /// One clock per stage of the strategy, in the order the stages run.
    pub stages: Vec<StageClock>,
    /// The status the run's last step gave ([`Tallying::end`](crate::Tallying::end)), once
    /// every line was written: what a [`Filter`](crate::Filter) exits with where it failed
    /// nowhere.
    pub status: ExitCode,
}

impl Stats {
    /// Starts the wall clock.
    pub fn start() -> Self {
        Stats {
            started: Instant::now(),
            lines: 0,
            lines_written: 0,
            bytes_in: 0,
            bytes_out: 0,
            stages: Vec::new(),
            status: ExitCode::SUCCESS,
        }
    }

    /// The summary, as the binary `program` prints it on stderr.
    pub fn summary(&self, program: &str) -> String {
        let wall = self.started.elapsed();
        let seconds = wall.as_secs_f64();
        let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
        let mut text = format!(
            "{program}: {lines} lines in, {lines_written} lines out, {bytes_in} bytes in, \
             {bytes_out} bytes out, {seconds:.3} s, {rate:.1} MiB/s in\n",
            lines = self.lines,
            lines_written = self.lines_written,
            bytes_in = self.bytes_in,
            bytes_out = self.bytes_out,
            rate = if seconds > 0.0 {
                mib(self.bytes_in) / seconds
            } else {
                0.0
            },
        );
        for stage in &self.stages {
            let _ = writeln!(
                text,
                "{program}: stage {name}: busy {busy:.3} s, waiting to receive {receive:.3} s, \
                 waiting to send {send:.3} s",
                name = stage.name,
                busy = stage.busy.as_secs_f64(),
                receive = stage.waiting_to_receive.as_secs_f64(),
                send = stage.waiting_to_send.as_secs_f64(),
            );
        }
        text
    }
}

/// A run's output, the newlines of what it writes counted where `--stats` asks: counted at each
/// write, whatever rendered the bytes, so that a run without `--stats` pays a test a write, not
/// one a line, and every byte written (the renderings, a tally's summary) is counted once.
#[derive(Debug)]
pub(crate) struct LinesWritten<W> {
    output: W,
    /// Where the newlines written are added up, when they are counted.
    counted: Option<Arc<AtomicU64>>,
}

impl<W> LinesWritten<W> {
    /// `output`, its newlines added to `counted` where given.
    pub(crate) fn new(output: W, counted: Option<Arc<AtomicU64>>) -> Self {
        LinesWritten { output, counted }
    }

    fn count(&self, written: &[u8]) {
        if let Some(counted) = &self.counted {
            let lines = memchr::memchr_iter(b'\n', written).count();
            counted.fetch_add(lines as u64, Ordering::Relaxed);
        }
    }
}

impl<W: Write> Write for LinesWritten<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.output.write(buf)?;
        self.count(&buf[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.output.flush()
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for LinesWritten<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = ready!(Pin::new(&mut this.output).poll_write(cx, buf))?;
        this.count(&buf[..written]);
        Poll::Ready(Ok(written))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().output).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().output).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_has_the_counts_then_a_line_a_stage() {
        let mut stats = Stats::start();
        stats.lines = 3;
        stats.lines_written = 2;
        stats.bytes_in = 10;
        stats.bytes_out = 43;
        stats.stages.push(StageClock::new("reader", true));
        let summary = stats.summary("name");
        let lines: Vec<_> = summary.lines().collect();
        assert_eq!(lines.len(), 2, "{summary}");
        assert!(
            lines[0].starts_with("name: 3 lines in, 2 lines out, 10 bytes in, 43 bytes out, "),
            "{summary}"
        );
        assert!(lines[0].ends_with(" MiB/s in"), "{summary}");
        assert!(
            lines[1].starts_with("name: stage reader: busy "),
            "{summary}"
        );
    }

    #[test]
    fn clocks_split_time_into_busy_and_waiting_and_cost_nothing_when_off() {
        let mut clock = StageClock::new("on", true);
        std::thread::sleep(Duration::from_millis(2));
        clock.busy();
        std::thread::sleep(Duration::from_millis(2));
        clock.waited_to_receive();
        clock.waited_to_send();
        assert!(clock.busy >= Duration::from_millis(2));
        assert!(clock.waiting_to_receive >= Duration::from_millis(2));
        let mut off = StageClock::new("off", false);
        std::thread::sleep(Duration::from_millis(1));
        off.busy();
        assert_eq!(off.busy, Duration::ZERO);
    }

    /// A writer that takes at most three bytes a write.
    struct Short(Vec<u8>);

    impl Write for Short {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let taken = buf.len().min(3);
            self.0.extend_from_slice(&buf[..taken]);
            Ok(taken)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A writer whose flushes and shutdown fail: what is asked of the counted writer reaches it.
    struct Unflushable;

    impl Write for Unflushable {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::other("flush"))
        }
    }

    impl AsyncWrite for Unflushable {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Err(io::Error::other("flush")))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Err(io::Error::other("shutdown")))
        }
    }

    /// Flushing and shutting down are the output's own, through either face.
    #[test]
    fn lines_written_flushes_and_shuts_down_the_output() {
        let mut output = LinesWritten::new(Unflushable, None);
        assert!(output.flush().is_err());
        crate::async_io::on_runtime(async {
            use tokio::io::AsyncWriteExt;
            let flushed = AsyncWriteExt::flush(&mut output).await;
            assert_eq!(flushed.unwrap_err().to_string(), "flush");
            let shut = output.shutdown().await;
            assert_eq!(shut.unwrap_err().to_string(), "shutdown");
        });
    }

    /// docs/CONTRACT.md §13.3: the newlines a write took are counted, the rest of a short write's
    /// once it is written; nothing where they are not counted. The same through the async face.
    #[test]
    fn lines_written_are_the_newlines_each_write_took() {
        let counted = Arc::new(AtomicU64::new(0));
        let mut output = LinesWritten::new(Short(Vec::new()), Some(Arc::clone(&counted)));
        assert_eq!(output.write(b"a\n\nbc\n").unwrap(), 3);
        assert_eq!(counted.load(Ordering::Relaxed), 2);
        output.write_all(b"bc\nd").unwrap();
        assert_eq!(counted.load(Ordering::Relaxed), 3);
        assert_eq!(output.output.0, b"a\n\nbc\nd");

        let mut uncounted = LinesWritten::new(Short(Vec::new()), None);
        uncounted.write_all(b"a\n").unwrap();
        assert_eq!(uncounted.output.0, b"a\n");

        let counted = Arc::new(AtomicU64::new(0));
        let mut output = LinesWritten::new(Vec::new(), Some(Arc::clone(&counted)));
        crate::async_io::on_runtime(async {
            tokio::io::AsyncWriteExt::write_all(&mut output, b"one\ntwo\n").await
        })
        .unwrap();
        assert_eq!(counted.load(Ordering::Relaxed), 2);
    }
}
