//! A core of its own for a lone decoder (CONTRACT §12.6): while one thread decodes a FILE and
//! the reader keeps up with it, every other thread of the process keeps off the core it runs on.
//!
//! The kernel puts a thread that the decoder wakes beside the decoder (a producer and its
//! consumer look best on one core), and there the reader and the rendering take turns with the
//! decoder they wait on. `batched -z` of a 64 MiB gzip file on 2 cores waited for its reader up
//! to 64 times a run, at every fourth buffer of 256, and took 1.08-1.15x `igzip -dc`'s time; with
//! the others kept off the decoder's core, 0-2 times and 1.05-1.07x (docs/DECOMPRESS.md). The
//! decoder itself stays free to move, away from another process's busy loop.
//!
//! Kept only where the machine has a core to spare: beside another process's busy loop on 2
//! cores, the others shared the loop's core until the decoder's first wait, and a run took up to
//! a quarter longer. Given back at the decoder's first wait for its reader under way (`ToReader`),
//! where the rendering is the slower (LZ4, or a machine that became busy), and at its end.
//!
//! A hint, as the short slice (`slices.rs`) is: where it cannot be given (one core allowed, no
//! `/proc`, a sandbox refusing the call), nothing changes and nothing is said. One decoder keeps a
//! core at a time, so that each thread's own mask is what it gets back.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a decoder keeps its core now.
static KEEPING: AtomicBool = AtomicBool::new(false);

/// The calling thread's core, kept from the process's other threads between [`keep`](Self::keep)
/// and [`give_back`](Self::give_back) (or the drop).
#[derive(Debug, Default)]
pub(super) struct OwnCore(State);

#[derive(Debug, Default)]
enum State {
    /// Not kept yet: [`OwnCore::keep`] may keep it.
    #[default]
    Unasked,
    Kept(platform::Kept),
    /// Asked for once already: kept and given back, or not kept.
    Done,
}

impl OwnCore {
    /// Keeps the calling thread's core from every other thread of the process, once: not where
    /// another decoder keeps one, or the machine has no core to spare ([`core_to_spare`]).
    pub(super) fn keep(&mut self) {
        if !matches!(self.0, State::Unasked) || !may_keep() {
            return;
        }
        self.0 = State::Done;
        if KEEPING.swap(true, Ordering::Acquire) {
            return;
        }
        match platform::keep() {
            Some(kept) => self.0 = State::Kept(kept),
            None => KEEPING.store(false, Ordering::Release),
        }
    }

    /// Whether the core is kept now.
    #[cfg(test)]
    pub(super) fn is_kept(&self) -> bool {
        matches!(self.0, State::Kept(_))
    }

    /// Lets the other threads back on the core, for good: each gets its own mask back, and a
    /// thread started since gets the core added to its own.
    pub(super) fn give_back(&mut self) {
        if let State::Kept(kept) = std::mem::replace(&mut self.0, State::Done) {
            platform::give_back(kept);
            KEEPING.store(false, Ordering::Release);
        }
    }
}

impl Drop for OwnCore {
    fn drop(&mut self) {
        self.give_back();
    }
}

/// Whether the machine has a core to spare for a decoder alone, where `others` threads of other
/// processes are running or waiting to and the process may run on `cores`: one for the decoder,
/// and one at least for the process's other threads beside the others'.
fn core_to_spare(others: usize, cores: usize) -> bool {
    others + 2 <= cores
}

/// Whether this thread may keep a core: any may, but in the library's tests only a thread that
/// asks to, as the tests run side by side in one process, where a keeper moves other tests'
/// threads.
#[cfg(not(test))]
fn may_keep() -> bool {
    true
}

#[cfg(test)]
fn may_keep() -> bool {
    tests::MAY_KEEP.get()
}

#[cfg(target_os = "linux")]
mod platform {
    use rustix::thread::{CpuSet, Pid, gettid, sched_getaffinity, sched_getcpu, sched_setaffinity};

    use super::super::slices::process_threads;

    /// What keeping a core changed.
    #[derive(Debug)]
    pub(super) struct Kept {
        core: usize,
        /// The threads there when it was kept.
        seen: Vec<Pid>,
        /// Those whose mask lost the core, with the mask they had and the one they were given.
        moved: Vec<(Pid, CpuSet, CpuSet)>,
    }

    /// Takes the calling thread's core out of every other thread's mask that has another core,
    /// where the machine has a core to spare.
    pub(super) fn keep() -> Option<Kept> {
        let core = sched_getcpu();
        let masks: Vec<(Pid, CpuSet)> = others(gettid())
            .filter_map(|thread| Some((thread, sched_getaffinity(Some(thread)).ok()?)))
            .collect();
        // The cores the process may run on: those of any of its threads.
        let mut cores = sched_getaffinity(None).ok()?;
        for (_, mask) in &masks {
            (0..CpuSet::MAX_CPU)
                .filter(|&n| mask.is_set(n))
                .for_each(|n| cores.set(n));
        }
        let ours = 1 + masks
            .iter()
            .filter(|(thread, _)| is_running(*thread))
            .count();
        let others = running_on_the_machine()?.saturating_sub(ours);
        if !super::core_to_spare(others, cores.count() as usize) {
            return None;
        }
        let seen = masks.iter().map(|&(thread, _)| thread).collect();
        let moved = (masks.into_iter())
            .filter_map(|(thread, mask)| {
                let mut off = mask;
                off.unset(core);
                let moved = mask.is_set(core) && off.count() > 0;
                (moved && sched_setaffinity(Some(thread), &off).is_ok())
                    .then_some((thread, mask, off))
            })
            .collect::<Vec<_>>();
        (!moved.is_empty()).then_some(Kept { core, seen, moved })
    }

    /// Gives each thread moved its mask back, unless it has set one of its own since, and a
    /// thread started since, which took its starter's mask without the core, the core; a thread
    /// gone is passed over, so that a number the kernel has given to another process's thread is
    /// never touched.
    pub(super) fn give_back(kept: Kept) {
        for thread in others(gettid()) {
            let Ok(mut mask) = sched_getaffinity(Some(thread)) else {
                continue;
            };
            match kept.moved.iter().find(|(moved, ..)| *moved == thread) {
                Some((_, own, given)) if mask == *given => mask = *own,
                Some(_) => continue,
                None if kept.seen.contains(&thread) => continue,
                None => mask.set(kept.core),
            }
            let _ = sched_setaffinity(Some(thread), &mask);
        }
    }

    /// Whether this process's thread `thread` is running or waiting to (state `R`).
    fn is_running(thread: Pid) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{}/stat", thread.as_raw_pid()));
        // The state follows the name, which may hold anything, in parentheses.
        stat.is_ok_and(|stat| {
            stat.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('R'))
        })
    }

    /// How many threads of the whole machine are running or waiting to, as the kernel counts them
    /// (`/proc/loadavg`'s fourth field, before the slash).
    fn running_on_the_machine() -> Option<usize> {
        let loadavg = std::fs::read_to_string("/proc/loadavg").ok()?;
        let (running, _) = loadavg.split_whitespace().nth(3)?.split_once('/')?;
        running.parse().ok()
    }

    /// The process's threads but `this`.
    fn others(this: Pid) -> impl Iterator<Item = Pid> {
        process_threads()
            .filter_map(Pid::from_raw)
            .filter(move |&thread| thread != this)
    }
}

#[cfg(not(target_os = "linux"))]
mod platform {
    /// Nothing: other systems keep no core.
    #[derive(Debug)]
    pub(super) struct Kept;

    pub(super) fn keep() -> Option<Kept> {
        None
    }

    pub(super) fn give_back(_: Kept) {}
}

#[cfg(test)]
pub(super) mod tests {
    use std::cell::Cell;
    use std::sync::{Mutex, MutexGuard, PoisonError};

    thread_local! {
        /// [`may_keep`](super::may_keep).
        pub(super) static MAY_KEEP: Cell<bool> = const { Cell::new(false) };
    }

    /// Lets this thread keep a core, one test at a time: returns the turn, held to its end, and
    /// the cores the process may run on, as the first turn found them, before any was kept (a
    /// thread's own mask may lack one where a core was not given back).
    #[cfg(target_os = "linux")]
    pub(in super::super) fn may_keep_a_core() -> (MutexGuard<'static, ()>, rustix::thread::CpuSet) {
        static TURN: Mutex<()> = Mutex::new(());
        static EVERY: std::sync::OnceLock<rustix::thread::CpuSet> = std::sync::OnceLock::new();
        let turn = TURN.lock().unwrap_or_else(PoisonError::into_inner);
        let every = *EVERY.get_or_init(|| mask(rustix::thread::gettid()));
        MAY_KEEP.set(true);
        (turn, every)
    }

    /// A core is spare where the other processes' running threads leave one beside the
    /// decoder's: on 2 cores, none may run.
    #[test]
    fn a_core_is_spare_where_others_leave_one_beside_the_decoders() {
        let cases = [(0, 1), (0, 2), (1, 2), (2, 4), (14, 16), (15, 16)];
        let spare = cases.map(|(others, cores)| super::core_to_spare(others, cores));
        assert_eq!(spare, [false, true, false, true, true, false]);
    }

    /// Keeps trying `keep` until it keeps a core, for 10 s: the machine has none to spare while
    /// other processes run, but not for long while tests run.
    #[cfg(target_os = "linux")]
    pub(in super::super) fn until_kept(mut keep: impl FnMut() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !keep() {
            assert!(std::time::Instant::now() < deadline, "no core kept in 10 s");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Thread `thread`'s mask.
    #[cfg(target_os = "linux")]
    pub(in super::super) fn mask(thread: rustix::thread::Pid) -> rustix::thread::CpuSet {
        rustix::thread::sched_getaffinity(Some(thread)).unwrap()
    }

    #[cfg(target_os = "linux")]
    mod linux {
        use std::process::{Command, Stdio};
        use std::sync::mpsc;
        use std::thread;

        use rustix::thread::{CpuSet, gettid, sched_setaffinity};

        use super::super::*;
        use super::{mask, may_keep_a_core, until_kept};

        /// A core kept by this thread, which may keep one, once the machine has one to spare.
        fn kept() -> OwnCore {
            let mut core = OwnCore::default();
            until_kept(|| {
                core = OwnCore::default();
                core.keep();
                core.is_kept()
            });
            core
        }

        /// A thread that runs `body` on what is sent, in turn, and sends back what it returns.
        fn helper<T: Send + 'static, R: Send + 'static>(
            body: impl Fn(T) -> R + Send + 'static,
        ) -> (mpsc::Sender<T>, mpsc::Receiver<R>) {
            let (tell, told) = mpsc::channel();
            let (answer, answers) = mpsc::channel();
            thread::spawn(move || {
                for asked in told {
                    if answer.send(body(asked)).is_err() {
                        return;
                    }
                }
            });
            (tell, answers)
        }

        /// Every other thread loses the keeper's core, and one they start while it is kept
        /// starts without it; given back, each has its mask again, and the one started since
        /// has the core added to its own. Where the process may run on one core, nothing is kept.
        #[test]
        fn the_other_threads_keep_off_the_core_until_it_is_given_back() {
            let (_turn, every) = may_keep_a_core();
            // The helper's number, and a thread it starts when asked, waiting until dropped.
            let (ask, told) = helper(|start: bool| {
                let started = start.then(|| {
                    let (started, tid) = mpsc::channel();
                    let (end, ended) = mpsc::channel::<()>();
                    thread::spawn(move || {
                        started.send(gettid()).unwrap();
                        let _ = ended.recv();
                    });
                    (tid.recv().unwrap(), end)
                });
                (gettid(), started)
            });
            ask.send(false).unwrap();
            let (helper, _) = told.recv().unwrap();
            if every.count() < 2 {
                let mut core = OwnCore::default();
                core.keep();
                assert!(!core.is_kept(), "one core: nothing to keep");
                return;
            }
            let mut core = kept();
            let off = mask(helper);
            assert_eq!(off.count() + 1, every.count(), "one core taken out");
            ask.send(true).unwrap();
            let (_, started) = told.recv().unwrap();
            let (child, _end) = started.unwrap();
            assert_eq!(mask(child), off, "started without the core");
            core.give_back();
            assert_eq!((mask(helper), mask(child)), (every, every));
        }

        /// Kept from one core: a thread whose mask is that core alone, or lacks it, keeps its
        /// mask throughout, as does one that sets its own while the core is kept.
        #[test]
        fn a_thread_that_has_or_sets_a_mask_of_its_own_keeps_it() {
            let (_turn, every) = may_keep_a_core();
            let cores: Vec<usize> = (0..CpuSet::MAX_CPU).filter(|&n| every.is_set(n)).collect();
            let [kept_core, other, ..] = cores[..] else {
                return;
            };
            let only = |core| {
                let mut mask = CpuSet::new();
                mask.set(core);
                mask
            };
            // Threads that set their mask to what they are sent and tell their number.
            let setting = || {
                helper(|wanted: CpuSet| {
                    sched_setaffinity(None, &wanted).unwrap();
                    gettid()
                })
            };
            let [
                (alone, alone_is),
                (without, without_is),
                (setting, setting_is),
            ] = [setting(), setting(), setting()];
            alone.send(only(kept_core)).unwrap();
            without.send(only(other)).unwrap();
            setting.send(every).unwrap();
            let alone = alone_is.recv().unwrap();
            let without = without_is.recv().unwrap();
            let sets = setting_is.recv().unwrap();
            // The keeper on that one core, so that it keeps that one.
            sched_setaffinity(None, &only(kept_core)).unwrap();
            let mut core = kept();
            let during = (mask(alone), mask(without));
            setting.send(only(kept_core)).unwrap();
            setting_is.recv().unwrap();
            core.give_back();
            sched_setaffinity(None, &every).unwrap();
            assert_eq!(during, (only(kept_core), only(other)), "while kept");
            assert_eq!((mask(alone), mask(without)), during, "given back");
            assert_eq!(mask(sets), only(kept_core), "its own, set while kept");
        }

        /// Beside other processes' busy loops, one for each core but one, no core is kept; once
        /// they end, one is.
        #[test]
        fn no_core_is_kept_beside_busy_loops_on_every_core_but_one() {
            let (_turn, every) = may_keep_a_core();
            let cores = every.count() as usize;
            let mut loops: Vec<_> = (1..cores)
                .map(|_| {
                    let mut busy = Command::new("sh");
                    busy.args(["-c", "while :; do :; done"])
                        .stdin(Stdio::null());
                    busy.spawn().unwrap()
                })
                .collect();
            let mut core = OwnCore::default();
            core.keep();
            let beside = core.is_kept();
            drop(core);
            for busy in &mut loops {
                busy.kill().unwrap();
                busy.wait().unwrap();
            }
            assert!(!beside, "kept beside {} busy loops", cores - 1);
            if cores > 1 {
                drop(kept());
            }
        }

        /// This process's own running threads are not counted as other processes': beside busy
        /// threads of its own, one for each core but one, a core is kept.
        #[test]
        fn busy_threads_of_the_process_leave_a_core_to_spare() {
            use std::sync::Arc;
            use std::sync::atomic::AtomicBool;

            /// Stops the busy threads however the test ends.
            struct Stop(Arc<AtomicBool>);
            impl Drop for Stop {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::Relaxed);
                }
            }
            let (_turn, every) = may_keep_a_core();
            let stop = Stop(Arc::new(AtomicBool::new(false)));
            for _ in 1..every.count() {
                let stop = stop.0.clone();
                thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                });
            }
            if every.count() > 1 {
                drop(kept());
            }
        }

        /// One decoder keeps a core at a time: a second keeps none until the first gives its
        /// back, and a core given back is not kept again.
        #[test]
        fn one_keeper_at_a_time_and_a_core_given_back_is_not_kept_again() {
            let (_turn, every) = may_keep_a_core();
            if every.count() < 2 {
                return;
            }
            let mut first = kept();
            // Tries once, or until the machine has a core to spare.
            let (keep, kept_there) = helper(|until_kept: bool| {
                super::MAY_KEEP.set(true);
                if until_kept {
                    return kept().is_kept();
                }
                let mut second = OwnCore::default();
                second.keep();
                second.is_kept()
            });
            keep.send(false).unwrap();
            assert!(!kept_there.recv().unwrap(), "two kept at once");
            first.give_back();
            first.keep();
            assert!(matches!(first.0, State::Done), "kept again");
            keep.send(true).unwrap();
            assert!(
                kept_there.recv().unwrap(),
                "none kept once the first is given back"
            );
            assert!(
                !KEEPING.load(Ordering::Acquire),
                "a dropped keeper gives its core back"
            );
        }
    }
}
