//! The sources of input in order, with `cat`'s rules: FILE arguments one after another as one
//! stream (`-` is stdin, none at all means stdin); a source that cannot be opened or read is
//! [`report`]ed (so the exit status becomes 1) and skipped, the rest still read; a source that is
//! the output itself is refused. Both the sync and the async input read through this, so each
//! rule is written once.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use crate::error::{Error, report};
use crate::io::fd;
use crate::quote::quote;

/// Where input comes from: one of these per FILE argument, or stdin alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Standard input: no FILE given, or `-`.
    Stdin,
    /// A FILE argument, opened when its turn comes.
    File(PathBuf),
}

impl Source {
    /// How messages name this source: `stdin`, or the FILE quoted so it stays on one line.
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "stdin".to_owned(),
            Source::File(path) => quote(path.as_os_str()),
        }
    }

    /// Opens the source for reading, unless it is `output` itself (see [`fd::is_output`]). Stdin
    /// is duplicated into a plain `File`, so reads go straight to the descriptor, unbuffered, in
    /// the sizes the caller asks for.
    fn open(&self, output: Option<BorrowedFd<'_>>) -> Result<File, Error> {
        let file = match self {
            Source::Stdin => io::stdin().as_fd().try_clone_to_owned().map(File::from),
            Source::File(path) => File::open(path),
        }
        .map_err(|error| Error::new(format!("opening {}", self.name()), error))?;
        if output.is_some_and(|output| fd::is_output(file.as_fd(), output)) {
            let error = io::Error::other("input file is output file");
            return Err(Error::new(self.name(), error));
        }
        Ok(file)
    }
}

/// The sources not yet read, and the one being read: plain state, but for opening a file.
#[derive(Debug)]
pub struct Sources {
    /// Sources not yet opened, in reverse order, so the next one is popped off the end.
    waiting: Vec<Source>,
    /// The source being read, if one is open.
    current: Option<Source>,
}

impl Sources {
    /// The sources named by FILE arguments; no arguments means stdin.
    pub fn new(files: &[PathBuf]) -> Self {
        let mut waiting: Vec<Source> = files
            .iter()
            .map(|file| match file.as_path() == Path::new("-") {
                true => Source::Stdin,
                false => Source::File(file.clone()),
            })
            .collect();
        if waiting.is_empty() {
            waiting.push(Source::Stdin);
        }
        waiting.reverse();
        Sources {
            waiting,
            current: None,
        }
    }

    /// Opens the next source that can be opened, reporting and skipping those that cannot (or
    /// that are `output` itself); `None` once none is left.
    pub fn open_next(&mut self, output: Option<BorrowedFd<'_>>) -> Option<File> {
        while let Some(source) = self.waiting.pop() {
            match source.open(output) {
                Ok(file) => {
                    self.current = Some(source);
                    return Some(file);
                }
                Err(error) => report(&error),
            }
        }
        None
    }

    /// Takes what a read of the current source returned: the bytes read, or `None` when it has
    /// ended or failed (a failure is reported), and the next source is to be opened.
    pub fn read_done(&mut self, read: io::Result<usize>) -> Option<usize> {
        match read {
            Ok(n) if n > 0 => return Some(n),
            Ok(_) => {}
            Err(error) => {
                let name = self.current.as_ref().map_or_else(String::new, Source::name);
                report(&Error::new(format!("reading {name}"), error));
            }
        }
        self.current = None;
        None
    }

    /// Whether sources remain to be opened after the current one.
    pub fn has_more(&self) -> bool {
        !self.waiting.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(sources: &Sources) -> Vec<String> {
        sources.waiting.iter().rev().map(Source::name).collect()
    }

    #[test]
    fn no_files_is_stdin_and_dash_is_stdin() {
        assert_eq!(names(&Sources::new(&[])), ["stdin"]);
        let files = ["a", "-", "b"].map(PathBuf::from);
        assert_eq!(names(&Sources::new(&files)), ["a", "stdin", "b"]);
    }

    #[test]
    fn unopenable_sources_are_skipped_and_reads_move_on() {
        let dir = std::env::temp_dir().join(format!("pipelines-sources-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let present = dir.join("present");
        std::fs::write(&present, b"x").unwrap();
        let files = [dir.join("missing"), present.clone()];
        let mut sources = Sources::new(&files);
        assert!(sources.has_more());
        assert!(
            sources.open_next(None).is_some(),
            "the missing one is skipped"
        );
        assert!(!sources.has_more());
        assert_eq!(sources.read_done(Ok(3)), Some(3));
        assert_eq!(sources.read_done(Ok(0)), None, "the end moves on");
        assert!(sources.open_next(None).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_source_that_is_the_output_is_refused() {
        let path = std::env::temp_dir().join(format!("pipelines-self-{}", std::process::id()));
        std::fs::write(&path, b"line\n").unwrap();
        let output = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        let source = Source::File(path.clone());
        let error = source.open(Some(output.as_fd())).unwrap_err();
        assert!(
            error.to_string().ends_with(": input file is output file"),
            "{error}"
        );
        assert!(source.open(None).is_ok());
        std::fs::remove_file(&path).unwrap();
    }
}
