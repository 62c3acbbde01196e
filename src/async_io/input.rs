//! Where a tokio strategy's bytes come from: [`AsyncInput`], [`AsyncFileInput`] (stdin or FILEs,
//! the driver that carries out what [`Sources`] says, awaiting), and the input as a [`Stream`] of
//! lines.

use std::fs::File;
use std::future::{Future, poll_fn};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, ready};

use bytes::{BufMut, Bytes};
use futures::Stream;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, Interest};

use crate::async_io::AsyncFile;
use crate::error::{Error, Failures};
use crate::frame::shared::SharedLines;
use crate::io::Memory;
use crate::io::driver::{Driver, Left, Reading};
use crate::io::sources::Sources;
use fd_facts as fd;

/// Where a tokio strategy's bytes come from.
pub trait AsyncInput: Send {
    /// Reads into `buf` (with room). Returns 0 only at the end of all input. Safe to drop while
    /// pending and start again: what is under way lives in the input, not in the future.
    fn read_buf<B: BufMut + Send>(
        &mut self,
        buf: &mut B,
    ) -> impl Future<Output = Result<usize, Error>> + Send;

    /// Whether a read now would return at once. When not, output held back for batching must go
    /// out first, or a live line would be stuck.
    fn is_ready(&mut self) -> bool;

    /// The input as a stream of lines, each without its `\n`, read `read_size` bytes at a time.
    /// Each line is split off the read buffer, not copied.
    fn lines(&mut self, read_size: usize) -> Lines<'_, Self>
    where
        Self: Sized,
    {
        Lines {
            input: self,
            lines: SharedLines::new(read_size),
            bytes_read: 0,
        }
    }
}

/// Memory, as for the sync strategies.
impl<B: AsRef<[u8]> + Send> AsyncInput for Memory<B> {
    async fn read_buf<BM: BufMut + Send>(&mut self, buf: &mut BM) -> Result<usize, Error> {
        self.read_with(|unread| Ok(put_fitting(buf, unread)))
    }

    fn is_ready(&mut self) -> bool {
        true
    }
}

/// Copies into `buf` what its room takes of `bytes`, as a read would: without growing it. Returns
/// how many.
fn put_fitting(buf: &mut impl BufMut, bytes: &[u8]) -> usize {
    let n = if buf.has_remaining_mut() {
        bytes.len().min(buf.chunk_mut().len())
    } else {
        0
    };
    buf.put_slice(&bytes[..n]);
    n
}

/// The sources as one byte stream, read asynchronously. Must be read on a runtime with I/O
/// enabled.
#[derive(Debug)]
pub struct AsyncFileInput {
    /// The sources and the one open.
    driver: Driver<AsyncFile>,
    /// The output on the reactor, for its reader going away.
    watch: Watch,
}

/// The output's registration with the reactor, made at the first wait: the runtime the input is
/// read on may not exist yet when it is made.
#[derive(Debug)]
enum Watch {
    /// No wait yet.
    Unregistered,
    /// A duplicate of the output, registered to be waited on, never written through: the kernel
    /// flags a pipe's write end as closed the moment its last reader closes. Registering leaves
    /// the descriptor's mode alone.
    Registered(AsyncFd<OwnedFd>),
    /// The output could not be registered: a wait is then only for input.
    Unavailable,
}

impl AsyncFileInput {
    /// The FILEs `files`, as [`FileInput::of`](crate::FileInput::of) reads them.
    pub fn of(files: &[PathBuf], output: Option<OwnedFd>) -> Self {
        Self::new(Sources::new(files), output)
    }

    /// `sources`, read while writing to `output`.
    pub(crate) fn new(sources: Sources, output: Option<OwnedFd>) -> Self {
        AsyncFileInput {
            driver: Driver::new(sources, output, |file| AsyncFile::new(file, false)),
            watch: Watch::Unregistered,
        }
    }

    /// The input, handing each failure that does not stop it to `failures` as it happens: they
    /// are kept in the input otherwise.
    pub(crate) fn handing_failures_to(mut self, failures: Failures) -> Self {
        self.driver.hand_failures_to(failures);
        self
    }

    /// Waits until the open source has input, or the output's reader has gone first: returns
    /// whether it has.
    async fn wait(&mut self) -> bool {
        if let (Watch::Unregistered, Some(output)) = (&self.watch, self.driver.output()) {
            let registered = output.try_clone_to_owned().ok().and_then(|output| {
                // SAFETY: an `OwnedFd` owns its descriptor, which stays open and the same until
                // the `AsyncFd` is dropped.
                unsafe { AsyncFd::register_with_interest(output, Interest::WRITABLE) }.ok()
            });
            self.watch = registered.map_or(Watch::Unavailable, Watch::Registered);
        }
        match (self.driver.current(), &self.watch, self.driver.output()) {
            (Some(Reading::Handle(AsyncFile::Reactor(file))), Watch::Registered(watch), _) => {
                poll_fn(|cx| poll_wait(file, watch, cx)).await
            }
            // A descriptor the reactor cannot wait on is read blocking anyway: so is its wait.
            (Some(Reading::Handle(file @ AsyncFile::Inline(_))), _, Some(output)) => {
                !fd::wait_readable_unless_reader_gone(file.as_fd(), output)
            }
            // Nothing to watch with: the read waits by itself.
            _ => false,
        }
    }
}

/// Polls for input on `file` or the reader of `watch`, a pipe's write end, going away: ready with
/// whether it went. Only the `poll_*_ready` calls keep their wakers when a read is dropped and
/// started again, as [`Lines`] does at every poll, so the wait is built from them alone.
///
/// The reactor's readiness is remembered from the last event, and may be stale: input it reports
/// is checked with a poll, and forgotten if none is there. A pipe with room is writable most of
/// the time: that readiness is forgotten too, and only the pipe closing ends the wait.
fn poll_wait(file: &AsyncFd<File>, watch: &AsyncFd<OwnedFd>, cx: &mut Context<'_>) -> Poll<bool> {
    loop {
        match file.poll_read_ready(cx) {
            Poll::Ready(Ok(mut ready)) => match fd::is_ready(file.as_fd()) {
                true => return Poll::Ready(false),
                false => ready.clear_ready(),
            },
            // A failure is left to the read to find.
            Poll::Ready(Err(_)) => return Poll::Ready(false),
            Poll::Pending => break,
        }
    }
    loop {
        match ready!(watch.poll_write_ready(cx)) {
            Ok(ready) if ready.ready().is_write_closed() => return Poll::Ready(true),
            Ok(mut ready) => ready.clear_ready(),
            // The watch is lost: the input's readiness alone ends the wait.
            Err(_) => return Poll::Pending,
        }
    }
}

impl AsyncInput for AsyncFileInput {
    /// Moves on to the next source at each end; a failure is handed to the input's `Failures`
    /// and its source skipped.
    /// Fails only when the output is a pipe whose reader went away while this waited for input.
    async fn read_buf<B: BufMut + Send>(&mut self, buf: &mut B) -> Result<usize, Error> {
        loop {
            match self.driver.proceed()? {
                Left::Wait => {
                    let gone = self.wait().await;
                    self.driver.waited(gone);
                }
                Left::Read => {
                    let read = match self.driver.current_mut() {
                        None => return Ok(0),
                        Some(Reading::Handle(file)) => AsyncReadExt::read_buf(file, buf).await,
                        // Taken inline, as a regular file is read: the decoder's next piece is
                        // never long in coming.
                        Some(Reading::Decoded(pieces)) => {
                            let n = put_fitting(buf, pieces.unread());
                            pieces.consume(n);
                            Ok(n)
                        }
                    };
                    if let Some(n) = self.driver.tell_read(read) {
                        return Ok(n);
                    }
                }
                Left::End => return Ok(0),
            }
        }
    }

    fn is_ready(&mut self) -> bool {
        self.driver.is_ready(|file| fd::is_ready(file.as_fd()))
    }
}

/// [`AsyncInput::lines`].
#[derive(Debug)]
pub struct Lines<'a, I> {
    input: &'a mut I,
    lines: SharedLines,
    /// Bytes read so far.
    bytes_read: u64,
}

impl<I> Lines<'_, I> {
    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }
}

impl<I: AsyncInput> Lines<'_, I> {
    /// Reads more input into the lines, counting it: how many bytes, 0 at the end. Out of line: a
    /// read is rare beside the lines it brings, and inlined, the reads' driver (grown by 3321c94's
    /// look after every read) made [`poll_next`](Stream::poll_next), `streamer`'s once-a-line
    /// call, too large to inline: 8 % more instructions on man pages.
    #[inline(never)]
    fn poll_read(&mut self, cx: &mut Context<'_>) -> Poll<Result<usize, Error>> {
        let read = match self.lines.spare() {
            Ok(spare) => ready!(pin!(self.input.read_buf(spare)).poll(cx)),
            Err(error) => Err(error),
        };
        if let Ok(n) = read {
            self.bytes_read += n as u64;
        }
        Poll::Ready(read)
    }
}

impl<I: AsyncInput> Stream for Lines<'_, I> {
    type Item = Result<Bytes, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(line) = this.lines.next_line() {
                return Poll::Ready(Some(Ok(line)));
            }
            match ready!(this.poll_read(cx)) {
                Ok(0) => return Poll::Ready(this.lines.take_rest().map(Ok)),
                Ok(_) => {}
                Err(error) => return Poll::Ready(Some(Err(error))),
            }
        }
    }
}

#[cfg(test)]
mod tests {

    use futures::StreamExt;

    use super::*;
    use crate::async_io::on_runtime;
    use crate::io::testing::{self, within};

    #[test]
    fn reads_files_in_order_skipping_the_unreadable() {
        let files = testing::files_and_failures("async-input");
        let mut input = AsyncFileInput::new(Sources::new(&files), None);
        let (lines, read) = on_runtime(async {
            let mut lines = input.lines(3);
            let collected: Vec<_> = (&mut lines).map(|line| line.unwrap()).collect().await;
            (collected, lines.bytes_read())
        });
        assert_eq!(
            lines,
            [&b"one"[..], b"two"],
            "a line runs on into the next file"
        );
        assert_eq!(read, 8);
        std::fs::remove_dir_all(&files[2]).unwrap();
    }

    #[test]
    fn a_waiting_read_stops_when_the_outputs_reader_goes() {
        let (path, reader, _writer) = testing::pipe_as_file();
        let (output_reader, output_writer) = std::io::pipe().unwrap();
        let mut input = AsyncFileInput::new(Sources::new(&[path]), Some(output_writer.into()));
        let error = within("the waiting read", move || {
            on_runtime(async move {
                let mut buf = Vec::with_capacity(8);
                let mut read = pin!(input.read_buf(&mut buf));
                // Pending: the read waits, on the reactor. Only then does the reader go.
                let first = poll_fn(|cx| Poll::Ready(read.as_mut().poll(cx))).await;
                assert!(first.is_pending(), "nothing to read yet");
                drop(output_reader);
                read.await
            })
        });
        assert!(error.unwrap_err().is_broken_pipe());
        drop(reader);
    }

    #[test]
    fn memory_is_always_ready() {
        let mut input = Memory::new(&b"a\nb"[..]);
        assert!(AsyncInput::is_ready(&mut input));
        let lines: Vec<_> = on_runtime(input.lines(1).map(|line| line.unwrap()).collect());
        assert_eq!(lines, [&b"a"[..], b"b"]);
    }
}
