//! Errors, their one line on stderr, and the exit status.
//!
//! Every `main` hands its strategy to [`run`], the one place that decides what a failure prints
//! and which status the process ends with:
//!
//! - success: exit 0;
//! - stdout closed by the reader (`| head`): stop, print nothing, exit 0, as Unix filters do;
//! - any other I/O error: `NAME: what failed: os error text` on stderr, exit 1;
//! - an input that could not be opened or read was [`report`]ed where it happened and the rest of
//!   the input still processed: exit 1 at the end.
//!
//! Usage errors never reach here: clap prints them and exits 2.

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// An I/O error and what the program was doing when it happened.
#[derive(Debug)]
pub struct Error {
    what: String,
    source: io::Error,
}

impl Error {
    pub fn new(what: impl Into<String>, source: io::Error) -> Self {
        Error {
            what: what.into(),
            source,
        }
    }

    /// The reader of stdout went away, found before any write failed.
    pub fn stdout_closed() -> Self {
        Error::new("writing stdout", io::ErrorKind::BrokenPipe.into())
    }

    /// Whether the reader of our output went away: the signal to stop quietly.
    pub fn is_broken_pipe(&self) -> bool {
        self.source.kind() == io::ErrorKind::BrokenPipe
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.source)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Names what failed on the error of an `io::Result`.
pub trait Context<T> {
    fn context(self, what: impl Into<String>) -> Result<T, Error>;
}

impl<T> Context<T> for io::Result<T> {
    fn context(self, what: impl Into<String>) -> Result<T, Error> {
        self.map_err(|source| Error::new(what, source))
    }
}

static PROGRAM: OnceLock<&'static str> = OnceLock::new();
static FAILED: AtomicBool = AtomicBool::new(false);

/// The running binary's name, as given to [`run`].
pub fn program() -> &'static str {
    PROGRAM.get().copied().unwrap_or("pipelines")
}

/// Prints `error` as one line on stderr and makes the exit status 1, without stopping.
pub fn report(error: &Error) {
    FAILED.store(true, Ordering::Relaxed);
    // Nothing is left to tell if stderr itself is gone, and a panic would be worse.
    let _ = writeln!(io::stderr().lock(), "{}: {error}", program());
}

/// Runs a binary's strategy under the exit policy above and returns the status to exit with.
/// Every binary starts here, so this is also where its standard pipes are enlarged.
pub fn run(program: &'static str, strategy: impl FnOnce() -> Result<(), Error>) -> ExitCode {
    let _ = PROGRAM.set(program);
    crate::pipe::enlarge_stdio();
    match strategy() {
        Ok(()) => {}
        Err(error) if error.is_broken_pipe() => {}
        Err(error) => report(&error),
    }
    if FAILED.load(Ordering::Relaxed) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
