//! Running a tokio strategy: the runtime started as an error rather than a panic or a hang, and
//! shut down without waiting for what still runs on it.

use std::cell::Cell;
use std::future::Future;
use std::io;
use std::panic;
use std::sync::Once;
use std::sync::mpsc::{self, Sender};
use std::thread;

use tokio::runtime::{Builder, Runtime};

use crate::error::{Error, panic_message};
use crate::thread_room::{STACK, threads_can_start};

/// Which of tokio's runtimes a strategy runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Everything on the calling thread: no thread to start.
    CurrentThread,
    /// Worker threads, started with the runtime.
    MultiThread,
}

/// Starts the runtime, I/O enabled. The strategies never use tokio's blocking pool, so no thread
/// is started later.
fn start(flavor: Flavor) -> Result<Runtime, Error> {
    let failed = |error| Error::new("starting the runtime", error);
    match flavor {
        Flavor::CurrentThread => Builder::new_current_thread().enable_io().build(),
        Flavor::MultiThread => {
            let workers = crate::cli::cores();
            // The thread that builds the runtime runs beside its workers.
            threads_can_start(workers + 1).map_err(failed)?;
            let mut builder = Builder::new_multi_thread();
            builder
                .worker_threads(workers)
                .thread_stack_size(STACK)
                .enable_io();
            build_aside(builder)
        }
    }
    .map_err(failed)
}

thread_local! {
    /// On the thread that builds a multi-thread runtime, where its result goes: the panic hook
    /// sends a panic there.
    static BUILT: Cell<Option<Sender<io::Result<Runtime>>>> = const { Cell::new(None) };
}

/// Builds `builder`'s runtime on a thread of its own, and gives that thread up if the build
/// panics. Tokio panics when the system refuses it a worker thread (`ulimit -u`, an `ulimit -v`
/// too tight for a stack), and once one worker runs, that panic never ends: its unwinding joins
/// the running worker, which waits for work for ever (when the worker took its task before the
/// unwinding shut tokio's pool down: now and then). No check beforehand rules that out, as the
/// running workers take address space of their own while the rest start. So the panic hook,
/// which runs before the unwinding, sends the panic back as the failure, and the builder thread
/// is left hanging: the process exits around it.
fn build_aside(builder: Builder) -> io::Result<Runtime> {
    tell_panics_to_builders();
    let (sender, received) = mpsc::channel();
    let mut builder = builder;
    thread::Builder::new()
        .name("runtime builder".to_owned())
        .stack_size(STACK)
        .spawn(move || {
            BUILT.set(Some(sender.clone()));
            let built = builder.build();
            BUILT.take();
            let _ = sender.send(built);
        })?;
    // A panic the hook did not see (a hook set after this one) ends the thread, or hangs it.
    received
        .recv()
        .unwrap_or_else(|_| Err(io::Error::other("tokio panicked building the runtime")))
}

/// Puts a panic hook before the one set now that sends a panic on a thread building a runtime to
/// the thread waiting for it, and then does what the hook before it did. Once a process: the
/// binaries set their hook before they start a runtime (`process`).
fn tell_panics_to_builders() {
    static HOOKED: Once = Once::new();
    HOOKED.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if let Some(sender) = BUILT.try_with(Cell::take).ok().flatten() {
                let _ = sender.send(Err(io::Error::other(panic_message(info.payload()))));
            }
            previous(info);
        }));
    });
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
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::io::testing::{DEADLINE, within};

    #[test]
    fn runs_the_strategy_to_its_end() {
        for flavor in [Flavor::CurrentThread, Flavor::MultiThread] {
            let result = block_on(flavor, || async { Ok(7) });
            assert_eq!(result.unwrap(), 7);
        }
    }

    /// A panic while building, with a worker already running, is the build's failure, told to
    /// the thread waiting for it, whether or not the builder thread gets past the unwinding.
    #[test]
    fn a_panic_building_the_runtime_once_a_worker_runs_is_an_error() {
        let (started, first_started) = mpsc::sync_channel(2);
        let first_started = Mutex::new(first_started);
        let named = AtomicUsize::new(0);
        let mut builder = Builder::new_multi_thread();
        // Tokio names each worker just before it starts it: the second fails as a thread that
        // cannot start does, once the first runs and waits for tokio's lock to take its task.
        builder
            .worker_threads(2)
            .on_thread_start(move || {
                let _ = started.try_send(());
            })
            .thread_name_fn(move || {
                if named.fetch_add(1, Ordering::Relaxed) > 0 {
                    let first_started = first_started.lock().expect("the receiver");
                    first_started
                        .recv_timeout(DEADLINE)
                        .expect("the first worker starts");
                    panic!("no second worker");
                }
                "worker".to_owned()
            });
        let failure = within("the build", || {
            build_aside(builder).expect_err("no runtime")
        });
        assert_eq!(failure.to_string(), "no second worker");
    }
}
