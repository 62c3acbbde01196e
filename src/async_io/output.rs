//! [`AsyncOutput`]: rendered bytes gathered in front of any `AsyncWrite` and written in large
//! pieces, as [`Gather`] says; also a [`Sink`] of byte buffers, which it gathers the same way.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, BufMut};
use futures::Sink;
use tokio::io::AsyncWrite;

use crate::async_io::AsyncInput;
use crate::error::Error;
use crate::io::gather::{Gather, Next};

/// An async writer with a gathering buffer in front: carries out what its [`Gather`] says.
#[derive(Debug)]
pub struct AsyncOutput<W> {
    sink: W,
    gather: Gather,
}

impl<W: AsyncWrite + Unpin> AsyncOutput<W> {
    /// `sink`, written in pieces of about `write_size` bytes. A failed write is the output's
    /// ([`Error::writing`]): who opened it names it.
    pub fn new(sink: W, write_size: usize) -> Self {
        AsyncOutput {
            sink,
            gather: Gather::new(write_size),
        }
    }

    /// The buffer to render into.
    pub fn pending(&mut self) -> &mut Vec<u8> {
        self.gather.pending()
    }

    /// Writes whatever is pending.
    pub async fn flush(&mut self) -> Result<(), Error> {
        self.gather.flush();
        poll_fn(|cx| self.poll_carry_out(cx)).await
    }

    /// Writes what is pending once it has reached the write size.
    pub async fn flush_if_full(&mut self) -> Result<(), Error> {
        self.gather.flush_if_full();
        poll_fn(|cx| self.poll_carry_out(cx)).await
    }

    /// Writes what is pending if it is due before the next read of `input`: call before each.
    pub async fn flush_if_due(&mut self, input: &mut impl AsyncInput) -> Result<(), Error> {
        self.gather.flush_if_due(|| input.is_ready());
        poll_fn(|cx| self.poll_carry_out(cx)).await
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.gather.bytes_written()
    }

    /// Writes what the gather says is due, as far as the sink takes it now, until nothing is.
    /// Inlined: most calls find nothing due, and a call would cost more than that check.
    #[inline(always)]
    fn poll_carry_out(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let failed = |error| Poll::Ready(Err(Error::writing(error)));
        while let Next::Write(bytes) = self.gather.next() {
            match ready!(Pin::new(&mut self.sink).poll_write(cx, bytes)) {
                Ok(0) => return failed(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.gather.wrote(n),
                Err(error) => return failed(error),
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<B: Buf, W: AsyncWrite + Unpin> Sink<B> for AsyncOutput<W> {
    type Error = Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        this.gather.flush_if_full();
        this.poll_carry_out(cx)
    }

    fn start_send(self: Pin<&mut Self>, item: B) -> Result<(), Error> {
        let pending = self.get_mut().gather.pending();
        crate::frame::reserve(pending, item.remaining())?;
        pending.put(item);
        Ok(())
    }

    /// Writes everything held. A sink is flushed when its stream has no item ready, so the read
    /// behind it would wait (`forward`), or at the end: either way [`gather`]'s rule, asked with
    /// no input waiting, says all that is held is due.
    ///
    /// [`gather`]: crate::io::gather
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let this = self.get_mut();
        this.gather.flush_if_due(|| false);
        this.poll_carry_out(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Sink::<B>::poll_flush(self, cx)
    }
}

#[cfg(test)]
mod tests {
    use futures::SinkExt;

    use super::*;
    use crate::async_io::{AsyncFile, on_runtime};
    use crate::io::Memory;

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

        fn is_ready(&mut self) -> bool {
            false
        }
    }

    #[test]
    fn writes_when_input_has_nothing_waiting() {
        on_runtime(async {
            let mut output = AsyncOutput::new(Vec::new(), 100);
            output.pending().extend_from_slice(b"live");
            // Memory always has bytes waiting: nothing is due yet.
            output
                .flush_if_due(&mut Memory::new(b"more"))
                .await
                .unwrap();
            assert!(output.sink.is_empty());
            output.flush_if_due(&mut Idle).await.unwrap();
            assert_eq!(output.sink, b"live");
        });
    }

    #[test]
    fn a_failed_write_is_the_outputs() {
        on_runtime(async {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            let mut output = AsyncOutput::new(AsyncFile::new(full, true), 1);
            output.pending().push(b'x');
            let error = output.flush().await.unwrap_err().to_string();
            assert!(error.starts_with("writing the output: "), "{error}");
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
