//! What every binary does around its strategy: stdin or FILEs in, stdout out, both pipes
//! enlarged, the strategy run (on a tokio runtime for the async ones), `--stats` printed; and the
//! edge where failures are told and the exit status decided. A binary's `main` is its arguments
//! and one call here.
//!
//! The library below reports nothing: a strategy returns what ended it, and a driver hands on
//! each failure that does not ([`Failures`]). Here each is told in one line on stderr, named as
//! the contract names it (`NAME: what failed: os error text`, the output named `stdout`), and:
//!
//! - success: exit 0;
//! - stdout closed by the reader (`| head`): stop, print nothing, exit 0, as Unix filters do;
//! - any other failure that ends the run: told, exit 1;
//! - an input that could not be opened or read: told as it happens, the rest of the input still
//!   processed, exit 1 at the end;
//! - a panic anywhere (a thread tokio could not start, a worker's assertion) is caught and told in
//!   one line like any other failure, its message included: never a panic message over several
//!   lines or a backtrace, whatever `RUST_BACKTRACE` says.
//!
//! Usage errors never reach here: clap prints them and exits 2.

use std::future::Future;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::async_io::runtime::{self, Flavor};
use crate::async_io::{AsyncFile, AsyncFileInput};
use crate::cli::CommonArgs;
use crate::error::{Context, Error, Failures, panic_message};
use crate::io::sources::Sources;
use crate::io::{FileInput, Stdout, fd};
use crate::stats::Stats;

/// How messages name the output.
const OUTPUT: &str = "stdout";

/// Runs a sync strategy as the binary `program`, from stdin or FILEs to stdout.
pub fn run(
    program: &'static str,
    common: &CommonArgs,
    strategy: impl FnOnce(FileInput, Stdout) -> Result<Stats, Error>,
) -> ExitCode {
    exit_status(program, |failures| {
        enlarge_stdio();
        let stdout = Stdout::open()?;
        let input = FileInput::new(sources(common), Some(watched(&stdout)?));
        let stats = strategy(input.handing_failures_to(failures), stdout)?;
        finish(program, common, &stats);
        Ok(())
    })
}

/// Runs an async strategy as the binary `program` on a runtime of `flavor`, from stdin or FILEs
/// to stdout.
pub fn run_async<F: Future<Output = Result<Stats, Error>>>(
    program: &'static str,
    common: &CommonArgs,
    flavor: Flavor,
    strategy: impl FnOnce(AsyncFileInput, AsyncFile) -> F,
) -> ExitCode {
    exit_status(program, |failures| {
        enlarge_stdio();
        let stdout = Stdout::open()?;
        let input = AsyncFileInput::new(sources(common), Some(watched(&stdout)?))
            .handing_failures_to(failures);
        let stats = runtime::block_on(flavor, || {
            strategy(input, AsyncFile::new(stdout.into_file(), true))
        })?;
        finish(program, common, &stats);
        Ok(())
    })
}

/// The sources the arguments name, decoded with `-z`.
fn sources(common: &CommonArgs) -> Sources {
    let mut sources = Sources::new(&common.files);
    sources.decompress(common.decompress);
    sources
}

/// Writes `text` on stdout as the binary `program` (its `--generate`) under the policy above.
pub fn print(program: &'static str, text: &[u8]) -> ExitCode {
    exit_status(program, |_| {
        io::stdout().lock().write_all(text).map_err(Error::writing)
    })
}

/// Runs `body` as the binary `program` under the policy above, handing it where the failures
/// that do not end the run go, and returns the status to exit with.
fn exit_status(
    program: &'static str,
    body: impl FnOnce(Failures) -> Result<(), Error>,
) -> ExitCode {
    let failed = Arc::new(AtomicBool::new(false));
    let tell = {
        let failed = Arc::clone(&failed);
        move |error: Error| {
            failed.store(true, Ordering::Relaxed);
            let line = format!("{program}: {}\n", error.naming_output(OUTPUT));
            // Nothing is left to tell if stderr itself is gone, and a panic would be worse.
            let _ = io::stderr().lock().write_all(line.as_bytes());
        }
    };
    // The default hook prints the message over several lines, and a backtrace on request. The
    // panic is told below instead, once, as an error; a worker thread's panic reaches the main
    // thread as an error of its own (see `parallel::join`).
    panic::set_hook(Box::new(|_| {}));
    let tell_last = tell.clone();
    match panic::catch_unwind(AssertUnwindSafe(|| body(Failures::handed_to(tell)))) {
        Ok(Ok(())) => {}
        Ok(Err(error)) if error.is_broken_pipe() => {}
        Ok(Err(error)) => tell_last(error),
        Err(panic) => tell_last(Error::new(
            "internal error",
            io::Error::other(panic_message(&*panic)),
        )),
    }
    match failed.load(Ordering::Relaxed) {
        true => ExitCode::FAILURE,
        false => ExitCode::SUCCESS,
    }
}

/// A descriptor of `stdout` for the input to compare its sources with (`cat`'s rule) and to watch
/// for its reader going away.
fn watched(stdout: &Stdout) -> Result<OwnedFd, Error> {
    stdout
        .as_fd()
        .try_clone_to_owned()
        .context("opening stdout")
}

/// Larger pipes on stdin and stdout, where they are pipes.
fn enlarge_stdio() {
    fd::enlarge_pipe(io::stdin().as_fd());
    fd::enlarge_pipe(io::stdout().as_fd());
}

/// Prints the summary, if asked for, after a run that ended normally.
fn finish(program: &str, common: &CommonArgs, stats: &Stats) {
    if common.stats {
        let _ = io::stderr()
            .lock()
            .write_all(stats.summary(program).as_bytes());
    }
}
