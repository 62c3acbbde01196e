//! [`FileInput`]: stdin or FILEs, read synchronously as one stream, or a regular file in ranges:
//! the driver that carries out what [`Sources`] and [`Cuts`] say, blocking. What it does as the
//! async driver does is [`Driver`]'s.

use std::fs::File;
use std::io::{self, Seek, SeekFrom};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, Failures};
use crate::frame::Chunk;
use crate::io::driver::{Driver, Left, Reading};
use crate::io::ranges::{Cut, Cuts, Range, complete_line, line_end_after, read_through, size_hint};
use crate::io::sources::{How, Sources};
use crate::io::{Input, Piece, RangedInput};
use decompressed::DecodedFile;
use fd_facts as fd;

/// The sources as one byte stream, read synchronously.
#[derive(Debug)]
pub struct FileInput {
    /// The sources and the one open; a file is shared with threads reading it at offsets.
    driver: Driver<Arc<File>>,
    /// The open source's reading in ranges, while it lasts.
    cuts: Option<Cuts>,
    /// Where line ends are looked for.
    scratch: Vec<u8>,
}

impl FileInput {
    /// The FILEs `files` read one after another as a filter reads them (docs/CONTRACT.md §4.1,
    /// §9: `-` is stdin; one that cannot be read is told and skipped), while writing to `output`
    /// where given: a FILE that is `output` itself is refused (§8.3), and a wait for input ends
    /// when `output`'s reader has gone away.
    pub fn of(files: &[PathBuf], output: Option<OwnedFd>) -> Self {
        Self::new(Sources::new(files), output)
    }

    /// `sources`, read while writing to `output`.
    pub(crate) fn new(sources: Sources, output: Option<OwnedFd>) -> Self {
        FileInput {
            driver: Driver::new(sources, output, Arc::new),
            cuts: None,
            scratch: Vec::new(),
        }
    }

    /// The input, handing each failure that does not stop it to `failures` as it happens: they
    /// are kept in the input otherwise.
    pub(crate) fn handing_failures_to(mut self, failures: Failures) -> Self {
        self.driver.hand_failures_to(failures);
        self
    }

    /// Carries out what [`Sources`] says until it says to wait (when `wait` is false), read, or
    /// stop: the source to read, or `None` at the end.
    fn until_read(&mut self, wait: bool) -> Result<Option<&mut Reading<Arc<File>>>, Error> {
        loop {
            match self.driver.proceed()? {
                Left::Wait if wait => {
                    let gone = match (self.driver.current(), self.driver.output()) {
                        (Some(Reading::Handle(file)), Some(output)) => {
                            !fd::wait_readable_unless_reader_gone(file.as_fd(), output)
                        }
                        // Nothing to watch: the read waits by itself.
                        _ => false,
                    };
                    self.driver.waited(gone);
                }
                Left::Wait | Left::Read => return Ok(self.driver.current_mut()),
                Left::End => return Ok(None),
            }
        }
    }
}

impl Input for FileInput {
    /// Moves on to the next source at each end; a failure is handed to the input's `Failures`
    /// and its source skipped.
    /// Fails only when the output is a pipe whose reader went away while this waited for input:
    /// a broken pipe, which the caller stops on as it would on a failed write.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        while let Some(reading) = self.until_read(true)? {
            let read = match reading {
                Reading::Handle(file) => fd::read(file, buf),
                Reading::Decoded(pieces) => Ok(pieces.read(buf)),
            };
            if let Some(n) = self.driver.tell_read(read) {
                return Ok(n);
            }
        }
        Ok(0)
    }

    fn is_ready_within(&mut self, timeout: Duration) -> bool {
        self.driver
            .is_ready(|file| fd::is_ready_within(file.as_fd(), timeout))
    }

    fn is_ready(&mut self) -> bool {
        self.is_ready_within(Duration::ZERO)
    }
}

impl RangedInput for FileInput {
    /// A regular file with two chunks' worth or more left is read in ranges, as its `Cuts`
    /// say; anything else as a stream.
    fn next_piece(&mut self, size: usize, held: &mut Chunk) -> Result<Piece, Error> {
        if self.cuts.is_none() {
            let reading = self.until_read(false)?;
            if let Some(Reading::Decoded(decoded)) = reading {
                let piece = adopt_decoded(decoded, size, held);
                if let Piece::Decoded(read @ 1.., _) = piece {
                    self.driver.tell_read(Ok(read));
                }
                return Ok(piece);
            }
            let Some(file) = reading.and_then(|reading| reading.handle()).map(Arc::clone) else {
                return Ok(Piece::Stream);
            };
            if self.driver.how() != Some(How::File) {
                return Ok(Piece::Stream);
            }
            let Ok(start) = (&*file).stream_position() else {
                return Ok(Piece::Stream);
            };
            self.cuts = Cuts::new(start, size_hint(&file), size, !held.bytes().is_empty());
        }
        let file = self.driver.current().and_then(Reading::handle);
        let (Some(cuts), Some(file)) = (&mut self.cuts, file) else {
            return Ok(Piece::Stream);
        };
        loop {
            match cuts.next_cut() {
                Cut::CompleteLine { at } => match complete_line(file, at, held)? {
                    Ok((end, ended)) => {
                        cuts.completed(end, ended);
                        return Ok(Piece::Read((end - at) as usize));
                    }
                    Err(error) => cuts.failed(error),
                },
                Cut::FindEnd { from, within } => {
                    match line_end_after(file, from, &mut self.scratch, within) {
                        Ok(end) => cuts.found(end),
                        Err(error) => cuts.failed(error),
                    }
                }
                Cut::Range { at, len } => {
                    let file = Arc::clone(file);
                    return Ok(Piece::Range(Range { file, at, len }));
                }
                Cut::ReadThrough { at, size } => {
                    // Only whole lines are ever held here: the lines before were handed on.
                    debug_assert!(held.bytes().is_empty(), "a read through into a held line");
                    match held.refill(size, |buf| read_through(file, buf, size, at))? {
                        Ok(()) => {
                            let kept = held.bytes().len();
                            cuts.read_through(kept);
                            return Ok(Piece::Read(kept));
                        }
                        Err(error) => cuts.failed(error),
                    }
                }
                Cut::Stream { .. } => return Ok(Piece::RangesEnd),
            }
        }
    }

    fn ranges_read(&mut self, failure: Option<io::Error>) {
        let Some(cuts) = self.cuts.take() else {
            debug_assert!(false, "ranges read with none handed out");
            return;
        };
        let file = self.driver.current().and_then(Reading::handle);
        let went_on = cuts.finish(failure).and_then(|at| match file {
            Some(file) => (&**file).seek(SeekFrom::Start(at)).map(drop),
            None => Ok(()),
        });
        if let Err(error) = went_on {
            self.driver.tell_read(Err(error));
        }
    }
}

/// A decoder's next buffer taken as the chunk itself, without a copy, when it is about a chunk's
/// bytes (half `size` to `size`) and the chunk holds nothing; the chunk's storage goes to the
/// decoder instead. Whole lines held are handed on first; a partial line is completed by reading
/// on as a stream, as is a buffer too small or too large. The decoder cuts its buffers after
/// their last line end, so that once a buffer is taken the chunk holds no partial line, and the
/// next is taken too: the reading thread then moves no decoded bytes. Copying them all was about
/// a third of its time, on the core it shares with the workers while the decoder has the other.
fn adopt_decoded(decoded: &mut DecodedFile, size: usize, held: &mut Chunk) -> Piece {
    let Some(len) = decoded.unread_buffer() else {
        return Piece::Stream;
    };
    if len < size / 2 || len > size {
        return Piece::Stream;
    }
    if !held.bytes().is_empty() {
        return if held.ends_at_line_end() {
            Piece::Read(0)
        } else {
            Piece::Stream
        };
    }
    decoded.exchange(|bytes, len| held.adopt(bytes, len));
    Piece::Decoded(len, decoded.is_behind())
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::mpsc;

    use super::*;
    use crate::io::testing::{self, within};
    use decompressed::BUFFER;

    #[test]
    fn says_whether_a_read_is_ready_and_reads_across_sources() {
        let (path, _reader, mut writer) = testing::pipe_as_file();
        let file = testing::path("input");
        std::fs::write(&file, b"from a file\n").unwrap();
        let mut input = FileInput::new(Sources::new(&[file.clone(), path]), None);
        assert!(input.is_ready(), "a source is yet to be opened");
        let mut buf = [0; 64];
        assert_eq!(input.read(&mut buf).unwrap(), 12);
        assert!(input.is_ready(), "the file's end, then the pipe");
        writer.write_all(b"piped").unwrap();
        // Each read returns at once: input is there, or its end.
        let (read, mut input) = within("a read of waiting input", move || {
            (input.read(&mut buf).unwrap(), input)
        });
        assert_eq!(read, 5, "the file ended, the pipe is read");
        assert!(!input.is_ready(), "the pipe is open and empty");
        drop(writer);
        assert!(input.is_ready(), "the end is there");
        let end = within("a read of the end", move || {
            input.read(&mut [0; 64]).unwrap()
        });
        assert_eq!(end, 0);
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn a_waiting_read_stops_when_the_outputs_reader_goes() {
        let (path, _reader, _writer) = testing::pipe_as_file();
        let (output_reader, output_writer) = std::io::pipe().unwrap();
        let (reader_id, id) = mpsc::channel();
        let reading = std::thread::spawn(move || {
            reader_id.send(testing::thread_id()).unwrap();
            let mut input = FileInput::new(Sources::new(&[path]), Some(output_writer.into()));
            input.read(&mut [0; 8])
        });
        testing::until_polling(id.recv().unwrap());
        drop(output_reader);
        let error = within("the waiting read", move || reading.join().unwrap()).unwrap_err();
        assert!(error.is_broken_pipe(), "{error}");
    }

    /// Reads `input` as `batched` does, `chunk` holding `held` first: the lines handed on, and
    /// how many of the decoder's buffers were taken whole as chunks.
    fn read_in_pieces(mut input: FileInput, held: &[u8]) -> (Vec<u8>, usize) {
        let (mut chunk, mut handed, mut lines, mut taken) =
            (Chunk::new(BUFFER), Chunk::new(1), vec![], 0);
        chunk.spare().unwrap()[..held.len()].copy_from_slice(held);
        chunk.filled(held.len());
        loop {
            match input.next_piece(BUFFER, &mut chunk).unwrap() {
                Piece::Read(_) => {}
                Piece::Decoded(..) => taken += 1,
                Piece::Stream => {
                    let read = input.read(chunk.spare().unwrap()).unwrap();
                    if read == 0 {
                        chunk.finish();
                        lines.extend_from_slice(chunk.bytes());
                        return (lines, taken);
                    }
                    chunk.filled(read);
                    if !chunk.is_full() {
                        continue;
                    }
                }
                other => panic!("a decoded file read as {other:?}"),
            }
            if chunk.has_lines() {
                chunk.take_lines(&mut handed).unwrap();
                lines.extend_from_slice(handed.bytes());
            }
        }
    }

    /// A decoded FILE's buffers become chunks whole, without a copy: at once into an empty
    /// chunk, after the whole lines held are handed on, and after a partial line held is
    /// completed by reading on as a stream.
    #[test]
    fn a_decoded_files_buffers_become_chunks_whole() {
        let text: Vec<u8> = (0..300_000)
            .flat_map(|n| format!("line {n}\n").into_bytes())
            .collect();
        let path = testing::path("taken-whole.gz");
        std::fs::write(&path, testing::gzip(&text)).unwrap();
        let buffers = text.len() / BUFFER;
        for held in [&b""[..], b"whole\n", b"part"] {
            let mut sources = Sources::new(std::slice::from_ref(&path));
            sources.decompress(true);
            let input = FileInput::new(sources, None);
            let (lines, taken) = within("reading a decoded FILE in pieces", move || {
                read_in_pieces(input, held)
            });
            assert!(
                lines == [held, &text].concat(),
                "{held:?}: the lines as decoded"
            );
            assert!(
                taken + 2 >= buffers,
                "{held:?}: {taken} of {buffers} buffers taken whole"
            );
        }
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn an_output_that_is_no_pipe_is_never_taken_for_a_gone_reader() {
        let (path, _reader, mut writer) = testing::pipe_as_file();
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .unwrap();
        let mut input = FileInput::new(Sources::new(&[path]), Some(null.into()));
        writer.write_all(b"x").unwrap();
        let read = within("a read of waiting input", move || {
            input.read(&mut [0; 8]).unwrap()
        });
        assert_eq!(read, 1);
    }
}
