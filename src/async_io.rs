//! Input and output for the tokio strategies, awaited instead of blocked on, with the same
//! sources, rules and error messages as [`input`](crate::input) and [`output`](crate::output);
//! and [`block_on`], which runs a strategy on its runtime under the closed-stdout rule.
//!
//! A pipe (stdin, stdout or a FIFO named as FILE) is read or written without blocking, through
//! tokio's reactor. Anything else (a file, a terminal, `/dev/null`) cannot be waited on that way,
//! so it goes through tokio's blocking-thread pool, one hop per read or write; reads and writes
//! are large to spread the hop's cost.

use std::fs::File;
use std::future::{Future, pending, poll_fn};
use std::io::{self, Write};
use std::mem;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::PathBuf;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, ready};

use bytes::{Buf, BufMut, Bytes};
use futures::future::{Either, select};
use futures::{Sink, Stream};
use rustix::fs::{fcntl_getfl, fcntl_setfl, fstat};
use tokio::io::{AsyncReadExt, AsyncWrite, Interest};
use tokio::net::unix::pipe;
use tokio::runtime::Builder;
use tokio::task::{JoinHandle, spawn_blocking};

use crate::exit::{Context, Error, report};
use crate::input::{Source, is_pipe, is_waiting};
use crate::output::open_stdout;
use crate::shared_lines::SharedLines;

/// Builds the runtime (with I/O enabled) and runs `strategy` on it, then shuts it down. Three
/// things differ from a plain `Runtime::block_on`:
///
/// - When stdout is a pipe whose reader has gone, the strategy is dropped and a broken pipe
///   returned at once, even while it waits for input: `(echo a; sleep 30) | baseline | head -1`
///   exits when `head` does, not 30 s later.
/// - The runtime is shut down without waiting for its blocking threads: a read from a terminal
///   on one of them cannot be cancelled and would hold the exit up until the user typed a line.
/// - Stdin and stdout are left in the mode they came in: reading or writing a pipe through the
///   reactor makes it non-blocking, and that flag is shared with whoever uses the pipe next.
pub fn block_on(
    mut runtime: Builder,
    strategy: impl Future<Output = Result<(), Error>>,
) -> Result<(), Error> {
    let runtime = runtime
        .enable_io()
        .build()
        .context("starting the runtime")?;
    let (stdin, stdout) = (io::stdin(), io::stdout());
    let stdio = [stdin.as_fd(), stdout.as_fd()];
    let modes = stdio.map(|fd| fcntl_getfl(fd).ok());
    let result = runtime.block_on(async {
        match select(pin!(strategy), pin!(stdout_closed())).await {
            Either::Left((result, _)) => result,
            Either::Right((closed, _)) => Err(closed),
        }
    });
    runtime.shutdown_background();
    for (fd, mode) in stdio.into_iter().zip(modes) {
        if let Some(mode) = mode {
            let _ = fcntl_setfl(fd, mode);
        }
    }
    result
}

/// Resolves with a broken-pipe error once stdout is a pipe whose reader has gone; never if it is
/// not a pipe. The kernel flags a pipe's write end with an error the moment its last reader
/// closes, so this needs no write to find out.
async fn stdout_closed() -> Error {
    // Registered only to be watched, never written through, so the pipe's mode is left as is.
    let watch = io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .filter(|fd| is_pipe(fd.as_fd()))
        .and_then(|fd| pipe::Sender::from_owned_fd_unchecked(fd).ok());
    if let Some(watch) = watch
        && watch
            .ready(Interest::ERROR)
            .await
            .is_ok_and(|ready| ready.is_error())
    {
        return Error::stdout_closed();
    }
    pending().await
}

/// One open source: a pipe read through the reactor, or anything else through the blocking pool.
#[derive(Debug)]
enum Reader {
    Pipe(pipe::Receiver),
    Blocking(tokio::fs::File),
}

impl Reader {
    fn open(source: &Source) -> Result<Self, Error> {
        let file = source.open()?;
        if is_pipe(file.as_fd()) {
            pipe::Receiver::from_file(file)
                .map(Reader::Pipe)
                .context(format!("opening {}", source.name()))
        } else {
            Ok(Reader::Blocking(tokio::fs::File::from_std(file)))
        }
    }

    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Reader::Pipe(pipe) => pipe.as_fd(),
            Reader::Blocking(file) => file.as_fd(),
        }
    }
}

/// The sources as one byte stream, read asynchronously: [`Input`](crate::input::Input)'s rules.
/// Must be read on a runtime with I/O enabled.
#[derive(Debug)]
pub struct AsyncInput {
    /// Sources not yet opened, in reverse order, so the next one is popped off the end.
    waiting: Vec<Source>,
    /// The source being read, if any is open.
    current: Option<(Source, Reader)>,
    /// Bytes read so far, from all sources.
    bytes_read: u64,
}

impl AsyncInput {
    pub fn new(files: &[PathBuf]) -> Self {
        let mut waiting = Source::from_args(files);
        waiting.reverse();
        AsyncInput {
            waiting,
            current: None,
            bytes_read: 0,
        }
    }

    /// Reads into `buf` (with room) from the current source, moving on to the next at each end.
    /// Returns 0 only at the end of the last source. Errors are reported and the source skipped.
    pub async fn read_buf(&mut self, buf: &mut impl BufMut) -> usize {
        loop {
            let Some((source, reader)) = &mut self.current else {
                let Some(source) = self.waiting.pop() else {
                    return 0;
                };
                match Reader::open(&source) {
                    Ok(reader) => self.current = Some((source, reader)),
                    Err(error) => report(&error),
                }
                continue;
            };
            let read = match reader {
                Reader::Pipe(pipe) => pipe.read_buf(buf).await,
                Reader::Blocking(file) => file.read_buf(buf).await,
            };
            match read {
                Ok(0) => self.current = None,
                Ok(n) => {
                    self.bytes_read += n as u64;
                    return n;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    report(&Error::new(format!("reading {}", source.name()), error));
                    self.current = None;
                }
            }
        }
    }

    /// [`read_buf`](Self::read_buf) into a slice (not empty).
    pub async fn read(&mut self, mut buf: &mut [u8]) -> usize {
        self.read_buf(&mut buf).await
    }

    /// Whether a read now would return at once: more bytes (or the end) are waiting. When not,
    /// output held back for batching must go out first, or a live line would be stuck.
    pub fn has_waiting(&self) -> bool {
        match &self.current {
            Some((_, reader)) => is_waiting(reader.as_fd()),
            None => !self.waiting.is_empty(),
        }
    }

    /// Bytes read so far, from all sources.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// The input as a stream of lines, each without its `\n`, read `read_size` bytes at a time.
    /// Each line is split off the read buffer, not copied.
    pub fn lines(&mut self, read_size: usize) -> Lines<'_> {
        Lines {
            input: self,
            lines: SharedLines::new(read_size),
        }
    }
}

/// [`AsyncInput::lines`].
#[derive(Debug)]
pub struct Lines<'a> {
    input: &'a mut AsyncInput,
    lines: SharedLines,
}

impl Stream for Lines<'_> {
    type Item = Bytes;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Bytes>> {
        let this = self.get_mut();
        loop {
            if let Some(line) = this.lines.next_line() {
                return Poll::Ready(Some(line));
            }
            // A read is safe to drop while pending and start again: what is under way lives in
            // the source, not in the future.
            let read = ready!(pin!(this.input.read_buf(this.lines.spare())).poll(cx));
            if read == 0 {
                return Poll::Ready(this.lines.take_rest());
            }
        }
    }
}

/// Where stdout's bytes go: a pipe through the reactor, or anything else through the blocking
/// pool, where a write under way holds the pending buffer until it is done.
#[derive(Debug)]
enum Writer {
    Pipe(pipe::Sender),
    Blocking {
        file: Arc<File>,
        writing: Option<JoinHandle<(Vec<u8>, io::Result<()>)>>,
    },
}

/// Stdout with a gathering buffer: [`Output`](crate::output::Output)'s rules, awaited. Also a
/// [`Sink`] of byte buffers, which it gathers the same way.
#[derive(Debug)]
pub struct AsyncOutput {
    writer: Writer,
    /// Rendered bytes not yet written.
    pending: Vec<u8>,
    /// Bytes at the front of `pending` already written: a pipe may take a write in pieces.
    written: usize,
    /// Once `pending` holds this many bytes, it is written.
    write_size: usize,
    /// Bytes written so far.
    bytes_written: u64,
}

impl AsyncOutput {
    /// Stdout, written in pieces of about `write_size` bytes. Must be called on a runtime with
    /// I/O enabled.
    pub fn stdout(write_size: usize) -> Result<Self, Error> {
        let file = open_stdout()?;
        // Non-blocking mode belongs to the pipe, not the descriptor: if stderr writes into the
        // same pipe, a message on it could fail with "try again" while the pipe is full.
        let writer = if is_pipe(file.as_fd()) && !same_file(file.as_fd(), io::stderr().as_fd()) {
            Writer::Pipe(pipe::Sender::from_file(file).context("opening stdout")?)
        } else {
            Writer::Blocking {
                file: Arc::new(file),
                writing: None,
            }
        };
        Ok(AsyncOutput {
            writer,
            pending: Vec::with_capacity(write_size),
            written: 0,
            write_size,
            bytes_written: 0,
        })
    }

    /// The buffer to render into.
    pub fn pending(&mut self) -> &mut Vec<u8> {
        &mut self.pending
    }

    /// Writes whatever is pending.
    pub async fn flush(&mut self) -> Result<(), Error> {
        poll_fn(|cx| self.poll_write_pending(cx)).await
    }

    /// Writes what is pending once it has reached the write size.
    pub async fn flush_if_full(&mut self) -> Result<(), Error> {
        if self.pending.len() >= self.write_size {
            self.flush().await?;
        }
        Ok(())
    }

    /// Writes what is pending if the next read of `input` would wait: call before each read.
    pub async fn flush_if_idle(&mut self, input: &AsyncInput) -> Result<(), Error> {
        if !self.pending.is_empty() && !input.has_waiting() {
            self.flush().await?;
        }
        Ok(())
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    fn poll_write_pending(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), Error>> {
        match &mut self.writer {
            Writer::Pipe(pipe) => {
                while self.written < self.pending.len() {
                    let unwritten = &self.pending[self.written..];
                    match ready!(Pin::new(&mut *pipe).poll_write(cx, unwritten)) {
                        Ok(0) => {
                            let error = io::ErrorKind::WriteZero.into();
                            return Poll::Ready(Err(Error::new("writing stdout", error)));
                        }
                        Ok(n) => self.written += n,
                        Err(error) => return Poll::Ready(Err(Error::new("writing stdout", error))),
                    }
                }
            }
            Writer::Blocking { file, writing } => {
                let write = match writing {
                    Some(write) => write,
                    None if self.pending.is_empty() => return Poll::Ready(Ok(())),
                    None => {
                        let buf = mem::take(&mut self.pending);
                        let file = Arc::clone(file);
                        writing.insert(spawn_blocking(move || {
                            let result = (&*file).write_all(&buf);
                            (buf, result)
                        }))
                    }
                };
                let done = ready!(Pin::new(write).poll(cx));
                *writing = None;
                let (buf, result) = done.map_err(io::Error::other).context("writing stdout")?;
                self.pending = buf;
                result.context("writing stdout")?;
            }
        }
        self.bytes_written += self.pending.len() as u64;
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }

    fn is_writing(&self) -> bool {
        matches!(
            self.writer,
            Writer::Blocking {
                writing: Some(_),
                ..
            }
        )
    }
}

/// Whether two descriptors lead to the same file or pipe.
fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    match (fstat(a), fstat(b)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

impl<B: Buf> Sink<B> for AsyncOutput {
    type Error = Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        // A write under way holds the pending buffer: it must finish before more is gathered.
        if this.is_writing() || this.pending.len() >= this.write_size {
            this.poll_write_pending(cx)
        } else {
            Poll::Ready(Ok(()))
        }
    }

    fn start_send(self: Pin<&mut Self>, item: B) -> Result<(), Error> {
        self.get_mut().pending.put(item);
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Result<(), Error>> {
        self.get_mut().poll_write_pending(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Result<(), Error>> {
        self.get_mut().poll_write_pending(cx)
    }
}
