//! A source opened and, where its bytes may be compressed, a regular file's first bytes sniffed:
//! what the driver does at each source's turn and what decoding ahead does before it, alike.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Seek};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;

use rustix::fs::OFlags;

use crate::io::sources::Source;
use decompressed::{self as decode, Format, Regular};

/// A source just opened, with its metadata (one `fstat`): a regular file sniffed keeps what was
/// found of it for its decoder, and to tell whether a decoding ahead is of it.
#[derive(Debug)]
pub(crate) enum Opening {
    File(File, Metadata),
    Regular(Regular, Metadata, Format),
}

/// Opens `source` and, with `sniff`, sniffs it if it is a regular file. Stdin is duplicated into
/// a plain `File`, so reads go straight to the descriptor, unbuffered, in the sizes the caller
/// asks for. `never_wait`: a FILE is opened non-blocking, as a name that now leads to a FIFO
/// would wait for a writer.
pub(crate) fn open(source: &Source, sniff: bool, never_wait: bool) -> io::Result<Opening> {
    let file = match source {
        Source::Stdin => io::stdin().as_fd().try_clone_to_owned().map(File::from)?,
        Source::File(path) if never_wait => OpenOptions::new()
            .read(true)
            .custom_flags(OFlags::NONBLOCK.bits() as i32)
            .open(path)?,
        Source::File(path) => File::open(path)?,
    };
    let metadata = file.metadata()?;
    if !(sniff && metadata.is_file()) {
        return Ok(Opening::File(file, metadata));
    }
    // A FILE opened by name is at its start; stdin may be a file that something before read
    // part of, and reading goes on from where it stopped.
    let offset = match source {
        Source::Stdin => (&file).stream_position()?,
        Source::File(_) => 0,
    };
    let regular = Regular::at(file, offset, metadata.len());
    let format = decode::sniff_file(&regular)?;
    Ok(Opening::Regular(regular, metadata, format))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::testing::{self, within};

    /// A FILE's format, or `None` where it came back unsniffed.
    fn format_of(path: &std::path::Path, sniff: bool) -> Option<Format> {
        let source = Source::File(path.to_path_buf());
        match open(&source, sniff, true).unwrap() {
            Opening::File(..) => None,
            Opening::Regular(regular, metadata, format) => {
                assert_eq!((regular.offset, regular.len), (0, metadata.len()));
                Some(format)
            }
        }
    }

    /// A regular FILE is sniffed where asked, from its start; a FIFO is opened without waiting
    /// for a writer where never to wait, and is never sniffed; a FILE that is not there fails.
    #[test]
    fn a_regular_file_is_sniffed_and_a_fifo_never_waits() {
        let (gz, plain) = (testing::path("gz"), testing::path("plain"));
        std::fs::write(&gz, testing::gzip(b"line\n")).unwrap();
        std::fs::write(&plain, b"line\n").unwrap();
        assert_eq!(format_of(&gz, true), Some(Format::Gzip));
        assert_eq!(format_of(&plain, true), Some(Format::Plain));
        assert_eq!(format_of(&gz, false), None, "unsniffed");
        let fifo = testing::path("fifo");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
        )
        .unwrap();
        let opening = fifo.clone();
        let opened = within("a FIFO's open", move || format_of(&opening, true));
        assert_eq!(opened, None);
        let gone = open(&Source::File(testing::path("not there")), true, true);
        assert_eq!(gone.unwrap_err().kind(), io::ErrorKind::NotFound);
        // Left behind, a FIFO met a later run of the same process id (mkfifo: file exists).
        [gz, plain, fifo]
            .iter()
            .for_each(|path| std::fs::remove_file(path).unwrap());
    }
}
