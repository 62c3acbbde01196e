//! Short scheduling slices for every thread of the process, asked for once decoders run beside the
//! reader (CONTRACT §12.6).
//!
//! With decoders on every core, more threads want a core than there are cores, and the reader,
//! the rendering and the writer are a chain of threads that wake each other. A thread woken with
//! work waits for the running one's slice to end (1.4 ms on the 2-core machine here) before it
//! runs, at every link of the chain; the decoders ahead then wait for a reader that is itself
//! waiting for a core. Linux's EEVDF scheduler (6.12 on) takes `sched_attr.sched_runtime` of a
//! normal thread as the slice it asks for: a thread with a shorter slice runs sooner when woken,
//! and its share of the CPU is unchanged, so neither our threads nor anyone else's starve. On 2
//! cores a `pzstd` file on two decoders went from 0.87-0.91x one frame's time to 0.72-0.75x, and
//! with two busy loops beside it from 0.82-0.97x to 0.41x. Lowering the decoders' priority (`nice`)
//! gained as much on an idle machine but took 2.7x as long beside busy loops of the same session;
//! a process-wide short slice from the start cost `cat F | batched | cat` 1.18x, so it is asked for
//! only where decoders run beside the reader.
//!
//! A hint, not a rule: where it cannot be given (an older kernel ignores it, a sandbox refuses the
//! call, no `/proc`), every thread keeps the slice it had.

use std::sync::Once;

/// Asks, once, that every thread of the process, and every thread they start after, be given a
/// short slice.
pub(crate) fn ask_short() {
    static ASKED: Once = Once::new();
    ASKED.call_once(|| {
        #[cfg(target_os = "linux")]
        linux::ask_every_thread(linux::SLICE);
    });
}

/// The process's threads, by the numbers the kernel knows them by (none without `/proc`): a
/// thread started while they are read may be missed.
#[cfg(target_os = "linux")]
pub(super) fn process_threads() -> impl Iterator<Item = libc::pid_t> {
    let threads = std::fs::read_dir("/proc/self/task").into_iter().flatten();
    threads.filter_map(|thread| thread.ok()?.file_name().to_str()?.parse().ok())
}

#[cfg(target_os = "linux")]
mod linux {
    use std::mem;

    /// The slice asked for: the shortest EEVDF grants (0.1 ms).
    pub(super) const SLICE: u64 = 100_000;

    /// Gives each thread of the process `slice` nanoseconds, keeping its policy and nice value. A
    /// thread started while this runs may be missed; one started after takes its starter's.
    pub(super) fn ask_every_thread(slice: u64) {
        super::process_threads().for_each(|tid| ask(tid, slice));
    }

    /// Gives thread `tid` `slice` nanoseconds if it is scheduled fairly (a real-time thread has no
    /// slice to change); a refusal changes nothing.
    fn ask(tid: libc::pid_t, slice: u64) {
        let Some(mut attr) = attributes(tid) else {
            return;
        };
        let fair = [libc::SCHED_OTHER, libc::SCHED_BATCH, libc::SCHED_IDLE];
        if !fair.contains(&(attr.sched_policy as libc::c_int)) {
            return;
        }
        attr.sched_runtime = slice;
        // SAFETY: `attr` is a whole `sched_attr` whose `size` says so; the kernel only reads it.
        unsafe { libc::syscall(libc::SYS_sched_setattr, tid, &raw const attr, 0) };
    }

    /// Thread `tid`'s scheduling attributes, as the kernel tells them.
    fn attributes(tid: libc::pid_t) -> Option<libc::sched_attr> {
        // SAFETY: `sched_attr` is plain integers, for which all zeroes is a value.
        let mut attr: libc::sched_attr = unsafe { mem::zeroed() };
        let size = mem::size_of::<libc::sched_attr>() as libc::c_uint;
        // SAFETY: the kernel writes at most `size` bytes into `attr`, which has that many.
        let got = unsafe { libc::syscall(libc::SYS_sched_getattr, tid, &raw mut attr, size, 0) };
        (got == 0).then_some(attr)
    }

    #[cfg(test)]
    mod tests {
        use std::sync::mpsc;
        use std::thread;

        use super::*;

        /// The calling thread's slice and nice value.
        fn own() -> Option<(u64, i32)> {
            attributes(0).map(|attr| (attr.sched_runtime, attr.sched_nice))
        }

        /// Every thread there before, this one and one started after, gets the slice, and keeps
        /// its nice value. Kernels before 6.12 have no slice to ask for, and tell none (0).
        #[test]
        fn every_thread_and_those_they_start_get_the_slice() {
            let (slice, nice) = own().unwrap();
            let (asked, wait) = mpsc::channel::<()>();
            let before = thread::spawn(move || {
                let _ = wait.recv();
                (own(), thread::spawn(own).join().unwrap())
            });
            ask_every_thread(SLICE);
            asked.send(()).unwrap();
            let (before, after) = before.join().unwrap();
            if slice == 0 {
                return;
            }
            let wanted = Some((SLICE, nice));
            assert_eq!([own(), before, after], [wanted; 3]);
        }
    }
}
