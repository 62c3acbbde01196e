//! Where a tokio strategy's bytes come from: [`AsyncInput`], [`AsyncFileInput`] (stdin or FILEs
//! by [`Sources`]' rules), and the input as a [`Stream`] of lines.

use std::future::Future;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::{Pin, pin};
use std::task::{Context, Poll, ready};

use bytes::{BufMut, Bytes};
use futures::Stream;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::async_io::AsyncFile;
use crate::error::{Context as _, Error};
use crate::frame::shared::SharedLines;
use crate::io::fd;
use crate::io::sources::Sources;

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
    fn has_waiting(&mut self) -> bool;

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

/// Any async reader is an input whose bytes are always waiting: memory, in tests and benches.
impl<R: AsyncRead + Unpin + Send> AsyncInput for R {
    async fn read_buf<B: BufMut + Send>(&mut self, buf: &mut B) -> Result<usize, Error> {
        AsyncReadExt::read_buf(self, buf)
            .await
            .context("reading input")
    }

    fn has_waiting(&mut self) -> bool {
        true
    }
}

/// The sources as one byte stream, read asynchronously. Must be read on a runtime with I/O
/// enabled.
#[derive(Debug)]
pub struct AsyncFileInput {
    sources: Sources,
    /// The source being read, if one is open.
    current: Option<AsyncFile>,
    /// Where output goes, refused as input (`cat`'s rule).
    output: Option<OwnedFd>,
}

impl AsyncFileInput {
    /// `sources`, read while writing to `output`.
    pub fn new(sources: Sources, output: Option<OwnedFd>) -> Self {
        AsyncFileInput {
            sources,
            current: None,
            output,
        }
    }
}

impl AsyncInput for AsyncFileInput {
    /// Moves on to the next source at each end; errors are reported and the source skipped.
    async fn read_buf<B: BufMut + Send>(&mut self, buf: &mut B) -> Result<usize, Error> {
        loop {
            let Some(file) = &mut self.current else {
                let output = self.output.as_ref().map(AsFd::as_fd);
                let Some(file) = self.sources.open_next(output) else {
                    return Ok(0);
                };
                self.current = Some(AsyncFile::new(file, false));
                continue;
            };
            match self
                .sources
                .read_done(AsyncReadExt::read_buf(file, buf).await)
            {
                Some(n) => return Ok(n),
                None => self.current = None,
            }
        }
    }

    fn has_waiting(&mut self) -> bool {
        match &self.current {
            Some(file) => fd::is_waiting(file.as_fd()),
            None => self.sources.has_more(),
        }
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

impl<I: AsyncInput> Stream for Lines<'_, I> {
    type Item = Result<Bytes, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(line) = this.lines.next_line() {
                return Poll::Ready(Some(Ok(line)));
            }
            let read = match this.lines.spare() {
                Ok(spare) => ready!(pin!(this.input.read_buf(spare)).poll(cx)),
                Err(error) => Err(error),
            };
            match read {
                Ok(0) => return Poll::Ready(this.lines.take_rest().map(Ok)),
                Ok(n) => this.bytes_read += n as u64,
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

    #[test]
    fn reads_files_in_order_skipping_the_unreadable() {
        let dir =
            std::env::temp_dir().join(format!("pipelines-async-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (first, second) = (dir.join("first"), dir.join("second"));
        std::fs::write(&first, b"one\ntw").unwrap();
        std::fs::write(&second, b"o\n").unwrap();
        let files = [first, dir.join("missing"), dir.clone(), second];
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
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn memory_always_has_its_bytes_waiting() {
        let mut input = &b"a\nb"[..];
        assert!(AsyncInput::has_waiting(&mut input));
        let lines: Vec<_> = on_runtime(input.lines(1).map(|line| line.unwrap()).collect());
        assert_eq!(lines, [&b"a"[..], b"b"]);
    }
}
