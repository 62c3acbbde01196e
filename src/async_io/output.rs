//! [`AsyncOutput`]: rendered bytes gathered in front of any `AsyncWrite` and written in large
//! pieces, by the rule in [`gather`](crate::io::gather); also a [`Sink`] of byte buffers, which it
//! gathers the same way.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, BufMut};
use futures::Sink;
use tokio::io::AsyncWrite;

use crate::async_io::AsyncInput;
use crate::error::Error;
use crate::io::gather::Gather;

/// An async writer with a gathering buffer in front.
#[derive(Debug)]
pub struct AsyncOutput<W> {
    sink: W,
    gather: Gather,
    /// Bytes at the front of the pending buffer already written: a pipe may take a write in
    /// pieces.
    written: usize,
    /// Bytes written so far.
    bytes_written: u64,
}

impl<W: AsyncWrite + Unpin> AsyncOutput<W> {
    /// `sink`, written in pieces of about `write_size` bytes.
    pub fn new(sink: W, write_size: usize) -> Self {
        AsyncOutput {
            sink,
            gather: Gather::new(write_size),
            written: 0,
            bytes_written: 0,
        }
    }

    /// The buffer to render into.
    pub fn pending(&mut self) -> &mut Vec<u8> {
        self.gather.pending()
    }

    /// Writes whatever is pending.
    pub async fn flush(&mut self) -> Result<(), Error> {
        poll_fn(|cx| self.poll_write_pending(cx)).await
    }

    /// Writes what is pending once it has reached the write size.
    pub async fn flush_if_full(&mut self) -> Result<(), Error> {
        if self.gather.is_full() {
            self.flush().await?;
        }
        Ok(())
    }

    /// Writes what is pending if it is due before the next read of `input`: call before each.
    pub async fn flush_if_due(&mut self, input: &mut impl AsyncInput) -> Result<(), Error> {
        if self.gather.is_due(|| input.has_waiting()) {
            self.flush().await?;
        }
        Ok(())
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    fn poll_write_pending(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let failed = |error| Poll::Ready(Err(Error::new("writing stdout", error)));
        let pending = self.gather.pending();
        while self.written < pending.len() {
            match ready!(Pin::new(&mut self.sink).poll_write(cx, &pending[self.written..])) {
                Ok(0) => return failed(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.written += n,
                Err(error) => return failed(error),
            }
        }
        self.bytes_written += pending.len() as u64;
        pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<B: Buf, W: AsyncWrite + Unpin> Sink<B> for AsyncOutput<W> {
    type Error = Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        match this.gather.is_full() {
            true => this.poll_write_pending(cx),
            false => Poll::Ready(Ok(())),
        }
    }

    fn start_send(self: Pin<&mut Self>, item: B) -> Result<(), Error> {
        let pending = self.get_mut().gather.pending();
        crate::frame::reserve(pending, item.remaining())?;
        pending.put(item);
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.get_mut().poll_write_pending(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.get_mut().poll_write_pending(cx)
    }
}

#[cfg(test)]
mod tests {
    use futures::SinkExt;

    use super::*;
    use crate::async_io::on_runtime;

    #[test]
    fn gathers_until_full_then_writes() {
        on_runtime(async {
            let mut output = AsyncOutput::new(Vec::new(), 4);
            output.pending().extend_from_slice(b"ab");
            output.flush_if_full().await.unwrap();
            assert!(output.sink.is_empty());
            output.pending().extend_from_slice(b"cd");
            output.flush_if_full().await.unwrap();
            assert_eq!(output.sink, b"abcd");
            assert_eq!(output.bytes_written(), 4);
        });
    }

    /// An input with nothing waiting, as a pipe whose writer is idle.
    struct Idle;

    impl AsyncInput for Idle {
        async fn read_buf<B: BufMut + Send>(&mut self, _: &mut B) -> Result<usize, Error> {
            Ok(0)
        }

        fn has_waiting(&mut self) -> bool {
            false
        }
    }

    #[test]
    fn writes_when_input_has_nothing_waiting() {
        on_runtime(async {
            let mut output = AsyncOutput::new(Vec::new(), 100);
            output.pending().extend_from_slice(b"live");
            // Memory always has bytes waiting: nothing is due yet.
            output.flush_if_due(&mut &b"more"[..]).await.unwrap();
            assert!(output.sink.is_empty());
            output.flush_if_due(&mut Idle).await.unwrap();
            assert_eq!(output.sink, b"live");
        });
    }

    #[test]
    fn as_a_sink_it_gathers_and_flushes() {
        on_runtime(async {
            let mut output = AsyncOutput::new(Vec::new(), 3);
            output.feed(&b"ab"[..]).await.unwrap();
            output.feed(&b"cd"[..]).await.unwrap();
            output.feed(&b"e"[..]).await.unwrap();
            assert_eq!(
                output.sink, b"abcd",
                "written once full, before more is taken"
            );
            SinkExt::<&[u8]>::close(&mut output).await.unwrap();
            assert_eq!(output.sink, b"abcde");
        });
    }
}
