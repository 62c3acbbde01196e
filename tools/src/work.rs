//! The per-line work `harness/work.sh` adds to the space count: [`Work`], a transform that
//! renders as [`SpaceCount`] does and then spends a set number of nanoseconds of CPU a line,
//! calibrated on the machine ([`calibrate`]), on a chain of multiply-adds whose result goes to
//! `black_box`, so that the compiler can neither drop nor shorten it.

use std::hint::black_box;
use std::time::Duration;

use bytes::{Buf, Bytes};
use linewright::Error;
use linewright::transform::{SpaceCount, Transform};
use rustix::time::{ClockId, clock_gettime};

/// Runs `steps` dependent multiply-adds (a linear congruential step), each through `black_box`:
/// no step can start before the one before it ends, so their time is steady and cannot be
/// folded or vectorised away.
#[inline(never)]
pub fn spend(steps: u64) {
    let mut x = black_box(steps);
    for _ in 0..steps {
        x = black_box(
            x.wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407),
        );
    }
    black_box(x);
}

/// The steps of [`spend`] this machine runs in a microsecond of CPU: the fastest of seven runs of
/// 2^22 steps (a few ms each) on this thread's CPU clock, which time spent waiting for a core does
/// not count; the fastest, as caches and frequency may still differ between runs.
pub fn calibrate() -> f64 {
    const STEPS: u64 = 1 << 22;
    let fastest = (0..7)
        .map(|_| {
            let started = thread_cpu_time();
            spend(STEPS);
            thread_cpu_time().saturating_sub(started)
        })
        .min()
        .unwrap_or_default();
    STEPS as f64 / fastest.as_secs_f64().max(f64::MIN_POSITIVE) / 1e6
}

/// The space count, then `ns` nanoseconds of CPU a line.
#[derive(Debug, Clone, Copy)]
pub struct Work {
    ns: u64,
    steps_a_line: u64,
}

impl Work {
    /// `ns` a line at `steps_per_us` steps a microsecond ([`calibrate`]'s figure).
    pub fn new(ns: u64, steps_per_us: f64) -> Self {
        Work {
            ns,
            steps_a_line: (ns as f64 * steps_per_us / 1000.0).round() as u64,
        }
    }

    /// The work of `lines` lines, in one run: a chunk's lines cost what as many lines alone do.
    #[inline(always)]
    fn spend(&self, lines: u64) {
        if self.steps_a_line > 0 {
            spend(lines.saturating_mul(self.steps_a_line));
        }
    }
}

impl Transform for Work {
    #[inline(always)]
    fn most_added(&self) -> usize {
        SpaceCount.most_added()
    }

    /// The work's own: what it is set to spend, on top of the space count's scan.
    #[inline(always)]
    fn cost_a_line(&self) -> Duration {
        Duration::from_nanos(self.ns)
    }

    #[inline(always)]
    fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
        SpaceCount.render_line(out, line);
        self.spend(1);
    }

    fn render_chunk(&self, out: &mut Vec<u8>, chunk: &[u8]) -> Result<u64, Error> {
        let lines = SpaceCount.render_chunk(out, chunk)?;
        self.spend(lines);
        Ok(lines)
    }

    #[inline(always)]
    fn render_shared(&self, line: Bytes) -> Result<impl Buf, Error> {
        self.spend(1);
        SpaceCount.render_shared(line)
    }
}

/// The CPU time this thread has used.
pub fn thread_cpu_time() -> Duration {
    let now = clock_gettime(ClockId::ThreadCPUTime);
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_as_the_space_count_does() {
        let work = Work::new(100, calibrate());
        let chunk = b"a b\n\n       x\nlast";
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        assert_eq!(work.render_chunk(&mut ours, chunk).unwrap(), 4);
        SpaceCount.render_chunk(&mut theirs, chunk).unwrap();
        assert_eq!(ours, theirs);
        assert_eq!(
            work.cost_a_line(),
            Duration::from_nanos(100),
            "what it says it spends"
        );
    }

    /// 200,000 lines at 1,000 ns take about 0.2 s of CPU: the work is done, not optimised away
    /// (about nothing), nor counted in the wrong unit (a thousand times off). Within a factor of
    /// ten, not of two: a core shared with other processes runs a step at another speed between
    /// the calibration and the work (170 ms and 422 ms were seen, the second failing a CI run).
    /// How close the work comes to what it is asked is the harness's to measure, not a test's.
    #[test]
    fn spends_about_the_cpu_asked() {
        let work = Work::new(1000, calibrate());
        let started = thread_cpu_time();
        work.spend(200_000);
        let spent = thread_cpu_time() - started;
        let asked = Duration::from_millis(200);
        assert!(spent > asked / 10 && spent < asked * 10, "{spent:?}");
    }
}
