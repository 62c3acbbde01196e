//! Running a tokio strategy: the runtime started as an error rather than a panic, and shut down
//! without waiting for what still runs on it.

use std::future::Future;
use std::io;
use std::panic::{self, AssertUnwindSafe};

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
