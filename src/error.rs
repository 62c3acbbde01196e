//! Errors: what failed and the operating system's text, and [`Failures`], where a driver puts
//! those that do not stop the run. The library reports nothing and decides no exit status: it
//! returns or hands on what failed, and [`process`](crate::process), the edge every binary runs
//! through, tells it on stderr and decides the status.

use std::any::Any;
use std::fmt;
use std::io;

/// A failure and what the program was doing when it happened.
#[derive(Debug)]
pub struct Error {
    what: What,
    source: io::Error,
}

/// What was being done.
#[derive(Debug)]
enum What {
    /// Said in words, e.g. "reading stdin".
    Doing(String),
    /// Writing the output, which only the edge that opened it can name
    /// ([`Error::naming_output`]).
    WritingOutput,
}

impl Error {
    /// `source`, the failure of `what` (e.g. "reading stdin").
    pub fn new(what: impl Into<String>, source: io::Error) -> Self {
        Error {
            what: What::Doing(what.into()),
            source,
        }
    }

    /// `source`, the failure of a write to the output: named by whoever opened it.
    pub fn writing(source: io::Error) -> Self {
        Error {
            what: What::WritingOutput,
            source,
        }
    }

    /// The reader of the output went away, found before any write failed.
    pub fn reader_gone() -> Self {
        Error::writing(io::ErrorKind::BrokenPipe.into())
    }

    /// The error with its output, if it failed writing it, named `name` (e.g. "stdout").
    pub fn naming_output(self, name: &str) -> Self {
        match self.what {
            What::WritingOutput => Error::new(format!("writing {name}"), self.source),
            What::Doing(_) => self,
        }
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
        match &self.what {
            What::Doing(what) => write!(f, "{what}: {}", self.source),
            What::WritingOutput => write!(f, "writing the output: {}", self.source),
        }
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

/// Where a driver puts the failures that do not stop the run (a source that cannot be opened or
/// read is skipped, and the rest read on): kept, to be looked at, or handed at once to whoever runs
/// the strategy, which tells them (in the binaries, `process`).
pub enum Failures {
    /// Kept here, in order.
    Kept(Vec<Error>),
    /// Handed on as each happens.
    HandedOn(Box<dyn FnMut(Error) + Send>),
}

impl Failures {
    /// Each failure handed to `tell` as it happens.
    pub fn handed_to(tell: impl FnMut(Error) + Send + 'static) -> Self {
        Failures::HandedOn(Box::new(tell))
    }

    /// One more.
    pub fn add(&mut self, error: Error) {
        match self {
            Failures::Kept(kept) => kept.push(error),
            Failures::HandedOn(tell) => tell(error),
        }
    }
}

/// Kept.
impl Default for Failures {
    fn default() -> Self {
        Failures::Kept(Vec::new())
    }
}

impl fmt::Debug for Failures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failures::Kept(kept) => f.debug_tuple("Kept").field(kept).finish(),
            Failures::HandedOn(_) => f.write_str("HandedOn"),
        }
    }
}

/// A panic's message, on one line.
pub fn panic_message(panic: &(dyn Any + Send)) -> String {
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
        assert!(Error::reader_gone().is_broken_pipe());
    }

    #[test]
    fn only_the_edge_names_the_output() {
        let error = Error::writing(io::Error::from_raw_os_error(28));
        assert_eq!(
            error.to_string(),
            "writing the output: No space left on device (os error 28)"
        );
        let named = error.naming_output("stdout").to_string();
        assert_eq!(
            named,
            "writing stdout: No space left on device (os error 28)"
        );
        let reading = Error::new("reading x", io::Error::from_raw_os_error(21));
        assert_eq!(
            reading.naming_output("stdout").to_string(),
            "reading x: Is a directory (os error 21)"
        );
    }

    #[test]
    fn failures_are_kept_or_handed_on() {
        let mut kept = Failures::default();
        kept.add(Error::new("opening a", io::ErrorKind::NotFound.into()));
        assert!(matches!(&kept, Failures::Kept(errors) if errors.len() == 1));
        let (tell, told) = std::sync::mpsc::channel();
        let mut handed = Failures::handed_to(move |error| tell.send(error.to_string()).unwrap());
        handed.add(Error::new("opening b", io::Error::from_raw_os_error(2)));
        let told = told.try_recv().unwrap();
        assert_eq!(told, "opening b: No such file or directory (os error 2)");
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
