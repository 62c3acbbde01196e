//! Running a tokio strategy: the runtime started as an error rather than a panic, and the
//! closed-stdout rule.

use std::future::{Future, pending};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::panic::{self, AssertUnwindSafe};
use std::pin::pin;

use futures::future::{Either, select};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::runtime::{Builder, Runtime};

use crate::error::{Error, panic_message};
use crate::io::fd;

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
    let build = || {
        let mut builder = match flavor {
            Flavor::CurrentThread => Builder::new_current_thread(),
            Flavor::MultiThread => Builder::new_multi_thread(),
        };
        builder.enable_io().build()
    };
    let failed = |error| Error::new("starting the runtime", error);
    match panic::catch_unwind(AssertUnwindSafe(build)) {
        Ok(built) => built.map_err(failed),
        Err(panic) => Err(failed(io::Error::other(panic_message(&*panic)))),
    }
}

/// Runs the future `strategy` makes on a runtime of `flavor`, made on it so that it can register
/// descriptors with the reactor. Two things differ from a plain `Runtime::block_on`:
///
/// - When `watched` is a pipe whose reader has gone, the strategy is dropped and a broken pipe
///   returned at once, even while it waits for input: `(echo a; sleep 30) | baseline | head -1`
///   exits when `head` does, not 30 s later.
/// - The runtime is shut down without waiting for anything still running on it: a read on it
///   that never ends must not hold the exit up.
pub fn block_on<T, F: Future<Output = Result<T, Error>>>(
    flavor: Flavor,
    watched: Option<OwnedFd>,
    strategy: impl FnOnce() -> F,
) -> Result<T, Error> {
    let runtime = start(flavor)?;
    let result = runtime.block_on(async {
        match select(pin!(strategy()), pin!(reader_gone(watched))).await {
            Either::Left((result, _)) => result,
            Either::Right((gone, _)) => Err(gone),
        }
    });
    runtime.shutdown_background();
    result
}

/// Resolves with a broken-pipe error once `output` is a pipe whose reader has gone; never if it
/// is none or no pipe. Registering a descriptor with the reactor does not change its mode, and
/// this one is only watched, never written through.
async fn reader_gone(output: Option<OwnedFd>) -> Error {
    let watch = output
        .filter(|output| fd::is_pipe(output.as_fd()))
        .and_then(|output| {
            // SAFETY: an `OwnedFd` owns its descriptor, which stays open and the same until the
            // `AsyncFd` is dropped.
            unsafe { AsyncFd::register_with_interest(output, Interest::ERROR) }.ok()
        });
    if let Some(watch) = watch
        && watch
            .ready(Interest::ERROR)
            .await
            .is_ok_and(|ready| ready.ready().is_error())
    {
        return Error::stdout_closed();
    }
    pending().await
}

#[cfg(test)]
mod tests {
    use rustix::pipe::pipe;

    use super::*;

    #[test]
    fn runs_the_strategy_to_its_end() {
        for flavor in [Flavor::CurrentThread, Flavor::MultiThread] {
            let result = block_on(flavor, None, || async { Ok(7) });
            assert_eq!(result.unwrap(), 7);
        }
    }

    #[test]
    fn stops_a_waiting_strategy_when_the_reader_goes() {
        let (reader, writer) = pipe().unwrap();
        drop(reader);
        let result: Result<(), Error> = block_on(Flavor::CurrentThread, Some(writer), pending);
        assert!(result.unwrap_err().is_broken_pipe());
    }
}
