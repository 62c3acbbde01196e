//! Running a tokio strategy: the runtime started as an error rather than a panic or a hang, and
//! shut down without waiting for what still runs on it.

use std::cell::Cell;
use std::ffi::c_void;
use std::future::Future;
use std::io;
use std::mem::MaybeUninit;
use std::panic;
use std::ptr;
use std::sync::mpsc::{self, Sender};
use std::sync::{Once, RwLock};
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

/// Starts the runtime, I/O enabled. The strategies never use tokio's blocking pool, so no thread
/// is started later.
fn start(flavor: Flavor) -> Result<Runtime, Error> {
    let failed = |error| Error::new("starting the runtime", error);
    match flavor {
        Flavor::CurrentThread => Builder::new_current_thread().enable_io().build(),
        Flavor::MultiThread => {
            let workers = thread::available_parallelism().map_or(1, usize::from);
            // The thread that builds the runtime runs beside its workers.
            threads_can_start(workers + 1).map_err(failed)?;
            let mut builder = Builder::new_multi_thread();
            builder
                .worker_threads(workers)
                .thread_stack_size(WORKER_STACK)
                .enable_io();
            build_aside(builder)
        }
    }
    .map_err(failed)
}

/// The stack of tokio's worker threads and of the thread that builds the runtime, set rather
/// than left to the defaults so that [`threads_can_start`] knows what they will ask for.
const WORKER_STACK: usize = 2 << 20;

/// The heap [`threads_can_start`] asks to be free a thread: a new thread's first allocations
/// map memory of their own when the address space has no room for a malloc arena, and a thread
/// the standard library starts maps its signal stack (a few pages) as it begins.
const HEAP_ROOM: usize = 1 << 20;

/// Whether `count` threads can start and run at once now, with room to spare: a [`HEAP_ROOM`]
/// each is reserved, and as many threads with twice a worker's stack are started, all held until
/// the last has started, then let go; their stacks stay in the C library's cache, where the
/// threads of the runtime find them. Where there is not room enough, the run fails here, as an
/// error, rather than in an allocation of those threads, which aborts. Tokio's workers may still
/// not start (see [`build_aside`]).
///
/// The threads are the C library's own ([`start_held`]): one the standard library starts maps a
/// signal stack and registers thread-local destructors once it runs, and where the address space
/// has room for its stack but not for those, the process aborts. The runtime's threads, started
/// after these, find the room they need in what these leave: a cached stack, and the heap room,
/// given back, for the signal stack and the rest.
fn threads_can_start(count: usize) -> io::Result<()> {
    let out_of_memory = |_| io::Error::from(io::ErrorKind::OutOfMemory);
    let mut room = Vec::<u8>::new();
    room.try_reserve_exact(count * HEAP_ROOM)
        .map_err(out_of_memory)?;
    let mut started = Vec::new();
    started.try_reserve_exact(count).map_err(out_of_memory)?;
    let hold = RwLock::new(());
    let held = hold.write();
    let starting = (0..count).try_for_each(|_| {
        // SAFETY: every thread started is joined below, before `hold` goes.
        unsafe { start_held(&hold, 2 * WORKER_STACK) }.map(|thread| started.push(thread))
    });
    drop(held);
    for thread in started {
        // SAFETY: `thread` was started joinable, and is joined once.
        unsafe { libc::pthread_join(thread, ptr::null_mut()) };
    }
    starting
}

/// Starts a thread of the C library, with a stack of `stack` bytes, that takes `hold` to read
/// and ends. Nothing in it allocates or maps memory: it can only fail to start, as an error.
///
/// # Safety
///
/// The thread, joinable, must be joined before `hold` goes.
unsafe fn start_held(hold: &RwLock<()>, stack: usize) -> io::Result<libc::pthread_t> {
    extern "C" fn wait_for_release(hold: *mut c_void) -> *mut c_void {
        // SAFETY: `start_held` passes its lock, which outlives this thread.
        let hold = unsafe { &*hold.cast::<RwLock<()>>() };
        drop(hold.read());
        ptr::null_mut()
    }
    let mut attributes = MaybeUninit::<libc::pthread_attr_t>::uninit();
    let attributes = attributes.as_mut_ptr();
    let mut thread = MaybeUninit::<libc::pthread_t>::uninit();
    // SAFETY: the attributes are initialized before they are set or used, and destroyed after
    // `pthread_create`, which copies what it needs of them. `wait_for_release` is given `hold` as
    // the lock it is, and the caller keeps it until the thread is joined.
    let code = unsafe {
        let mut code = libc::pthread_attr_init(attributes);
        if code == 0 {
            code = libc::pthread_attr_setstacksize(attributes, stack);
            if code == 0 {
                let hold = ptr::from_ref(hold).cast_mut().cast();
                code =
                    libc::pthread_create(thread.as_mut_ptr(), attributes, wait_for_release, hold);
            }
            libc::pthread_attr_destroy(attributes);
        }
        code
    };
    match code {
        // SAFETY: `pthread_create` wrote the thread's id, as it succeeded.
        0 => Ok(unsafe { thread.assume_init() }),
        code => Err(io::Error::from_raw_os_error(code)),
    }
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
        .stack_size(WORKER_STACK)
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
