//! Errors, their one line on stderr, and the exit status.
//!
//! Every binary ends through [`exit_status`], the one place that decides what a failure prints
//! and which status the process ends with:
//!
//! - success: exit 0;
//! - stdout closed by the reader (`| head`): stop, print nothing, exit 0, as Unix filters do;
//! - any other failure: `NAME: what failed: os error text` on stderr, exit 1;
//! - an input that could not be opened or read was [`report`]ed where it happened and the rest of
//!   the input still processed: exit 1 at the end;
//! - a panic anywhere (a thread tokio could not start, say) is caught and told in one line like
//!   any other failure: never a panic message or a backtrace, whatever `RUST_BACKTRACE` says.
//!
//! Usage errors never reach here: clap prints them and exits 2.

use std::any::Any;
use std::fmt;
use std::io::{self, Write};
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// A failure and what the program was doing when it happened.
#[derive(Debug)]
pub struct Error {
    what: String,
    source: io::Error,
}

impl Error {
    /// `source`, the failure of `what` (e.g. "reading stdin").
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

    /// A buffer could not grow to hold one line: the line is longer than the memory available.
    pub fn line_too_long(what: impl Into<String>) -> Self {
        let source = io::Error::new(
            io::ErrorKind::OutOfMemory,
            "line too long for the memory available",
        );
        Error::new(what, source)
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
    /// The error, if any, named as the failure of `what`.
    fn context(self, what: impl Into<String>) -> Result<T, Error>;
}

impl<T> Context<T> for io::Result<T> {
    fn context(self, what: impl Into<String>) -> Result<T, Error> {
        self.map_err(|source| Error::new(what, source))
    }
}

static PROGRAM: OnceLock<&'static str> = OnceLock::new();
static FAILED: AtomicBool = AtomicBool::new(false);

/// The running binary's name, as given to [`exit_status`].
pub fn program() -> &'static str {
    PROGRAM.get().copied().unwrap_or("pipelines")
}

/// Prints `error` as one line on stderr and makes the exit status 1, without stopping.
pub fn report(error: &Error) {
    FAILED.store(true, Ordering::Relaxed);
    // Nothing is left to tell if stderr itself is gone, and a panic would be worse.
    let _ = writeln!(io::stderr().lock(), "{}: {error}", program());
}

/// Runs `body` as the binary `program` under the exit policy above and returns the status to
/// exit with.
pub fn exit_status(program: &'static str, body: impl FnOnce() -> Result<(), Error>) -> ExitCode {
    let _ = PROGRAM.set(program);
    // The default hook prints the message over several lines, and a backtrace on request. The
    // panic is told below instead, once, as an error; a worker thread's panic reaches the main
    // thread as an error of its own (see `parallel::OnPanic`).
    panic::set_hook(Box::new(|_| {}));
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => {}
        Ok(Err(error)) if error.is_broken_pipe() => {}
        Ok(Err(error)) => report(&error),
        Err(panic) => report(&Error::new(
            "internal error",
            io::Error::other(panic_message(&*panic)),
        )),
    }
    if FAILED.load(Ordering::Relaxed) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// A panic's message, on one line.
pub(crate) fn panic_message(panic: &(dyn Any + Send)) -> String {
    let text = match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(text), _) => text,
        (_, Some(text)) => text.as_str(),
        _ => "a panic",
    };
    text.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_what_then_the_os_text() {
        let error = Error::new("reading x", io::Error::from_raw_os_error(21));
        assert_eq!(error.to_string(), "reading x: Is a directory (os error 21)");
        assert!(!error.is_broken_pipe());
        assert!(Error::stdout_closed().is_broken_pipe());
    }

    #[test]
    fn context_names_the_failure() {
        let failed: io::Result<()> = Err(io::ErrorKind::BrokenPipe.into());
        let error = failed.context("writing stdout").unwrap_err();
        assert!(error.is_broken_pipe());
        assert_eq!(
            Error::line_too_long("reading stdin").to_string(),
            "reading stdin: line too long for the memory available"
        );
    }

    #[test]
    fn panic_messages_become_one_line() {
        assert_eq!(panic_message(&"a\nb"), "a b");
        assert_eq!(panic_message(&String::from("x\r\ny")), "x  y");
        assert_eq!(panic_message(&7), "a panic");
    }
}
