//! Running a tokio strategy: the runtime started as an error rather than a panic, and shut down
//! without waiting for what still runs on it.

use std::future::Future;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::sync::RwLock;
use std::thread;

use tokio::runtime::{Builder, Runtime};

use crate::error::{Error, panic_message};

/// Which of tokio's runtimes a strategy runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Everything on the calling thread: no thread to start.
    CurrentThread,
    /// Worker threads, started with the runtime.
    MultiThread,
}

/// Starts the runtime, I/O enabled. Tokio panics when the system refuses it a thread (`ulimit
/// -u`, no memory for a stack); that panic is caught here and becomes an error like any other.
/// The strategies never use tokio's blocking pool, so no thread is started later.
fn start(flavor: Flavor) -> Result<Runtime, Error> {
    let failed = |error| Error::new("starting the runtime", error);
    let workers = thread::available_parallelism().map_or(1, usize::from);
    if flavor == Flavor::MultiThread {
        threads_can_start(workers).map_err(failed)?;
    }
    let build = || {
        let mut builder = match flavor {
            Flavor::CurrentThread => Builder::new_current_thread(),
            Flavor::MultiThread => Builder::new_multi_thread(),
        };
        builder
            .worker_threads(workers)
            .thread_stack_size(WORKER_STACK)
            .enable_io()
            .build()
    };
    match panic::catch_unwind(AssertUnwindSafe(build)) {
        Ok(built) => built.map_err(failed),
        Err(panic) => Err(failed(io::Error::other(panic_message(&*panic)))),
    }
}

/// The stack of tokio's worker threads, set rather than left to tokio's default so that
/// [`threads_can_start`] knows what tokio will ask for.
const WORKER_STACK: usize = 2 << 20;

/// Whether `count` worker threads can run at once now, with room to spare. Tokio cannot fail to
/// start a worker cleanly once another runs: the panic's unwinding waits for the running worker,
/// which never ends (`ulimit -v` with room for one stack hangs in `build`). So as many threads
/// with twice a worker's stack are started first, all held until the last has started, then let
/// go; their stacks stay in the C library's cache, where tokio's threads find them.
fn threads_can_start(count: usize) -> io::Result<()> {
    let hold = RwLock::new(());
    let held = hold.write();
    thread::scope(|scope| {
        let started = (0..count).try_for_each(|_| {
            thread::Builder::new()
                .stack_size(2 * WORKER_STACK)
                .spawn_scoped(scope, || drop(hold.read()))
                .map(drop)
        });
        drop(held);
        started
    })
}

/// Runs the future `strategy` makes on a runtime of `flavor`, made on it so that it can register
/// descriptors with the reactor. The runtime is then shut down without waiting for anything still
/// running on it: a read on it that never ends must not hold the exit up.
pub fn block_on<T, F: Future<Output = Result<T, Error>>>(
    flavor: Flavor,
    strategy: impl FnOnce() -> F,
) -> Result<T, Error> {
    let runtime = start(flavor)?;
    let result = runtime.block_on(async { strategy().await });
    runtime.shutdown_background();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_the_strategy_to_its_end() {
        for flavor in [Flavor::CurrentThread, Flavor::MultiThread] {
            let result = block_on(flavor, || async { Ok(7) });
            assert_eq!(result.unwrap(), 7);
        }
    }
}
