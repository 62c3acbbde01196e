//! [`AsyncFile`]: one descriptor read or written by a tokio strategy.
//!
//! What can be waited on (a pipe, a terminal) is reopened as a description of its own in
//! non-blocking mode and registered with the reactor: the inherited description, which other
//! processes may share, keeps its mode, also if this process is killed. What cannot (a regular
//! file, `/dev/null`, a socket, or anything where no `/proc` lets it be reopened) is read or
//! written inline, blocking: a regular file or a device never blocks for long, and no thread pool
//! is needed, so none can fail to start.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use fd_facts as fd;

/// A descriptor on the reactor, or one used inline.
#[derive(Debug)]
pub enum AsyncFile {
    /// A private non-blocking description, registered with the reactor and awaited.
    Reactor(AsyncFd<File>),
    /// A descriptor read or written blocking, in place: one the reactor cannot wait on.
    Inline(File),
}

impl AsyncFile {
    /// `file`, for reading or (if `write`) writing. Must be called on a runtime with I/O enabled.
    pub fn new(file: File, write: bool) -> Self {
        if fd::is_regular_file(file.as_fd()) {
            return AsyncFile::Inline(file);
        }
        let Ok(private) = fd::reopen_nonblocking(file.as_fd(), write) else {
            return AsyncFile::Inline(file);
        };
        // SAFETY: a `File` owns its descriptor, which stays open and the same until the `AsyncFd`
        // is dropped; nothing here swaps the file behind it.
        match unsafe { AsyncFd::register(private) } {
            Ok(registered) => AsyncFile::Reactor(registered),
            Err(_) => AsyncFile::Inline(file),
        }
    }

    /// The descriptor read or written.
    pub fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            AsyncFile::Reactor(registered) => registered.get_ref().as_fd(),
            AsyncFile::Inline(file) => file.as_fd(),
        }
    }
}

/// Reads once into `buf`'s unfilled part, without zeroing it first.
fn read_once(file: &File, buf: &mut ReadBuf<'_>) -> io::Result<()> {
    // SAFETY: `read` only writes into the slice, never uninitialises a byte of it, so nothing
    // initialised is de-initialised.
    let n = rustix::io::read(file, unsafe { buf.unfilled_mut() })?
        .0
        .len();
    // SAFETY: `read` returned the first `n` bytes of the unfilled part as filled: exactly those
    // are marked initialised.
    unsafe { buf.assume_init(n) };
    buf.advance(n);
    Ok(())
}

impl AsyncRead for AsyncFile {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            AsyncFile::Reactor(registered) => loop {
                let mut ready = ready!(registered.poll_read_ready(cx))?;
                if let Ok(result) = ready.try_io(|file| read_once(file.get_ref(), buf)) {
                    return Poll::Ready(result);
                }
            },
            AsyncFile::Inline(file) => {
                Poll::Ready(fd::retry(file.as_fd(), false, || read_once(file, buf)))
            }
        }
    }
}

impl AsyncWrite for AsyncFile {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            AsyncFile::Reactor(registered) => loop {
                let mut ready = ready!(registered.poll_write_ready(cx))?;
                if let Ok(result) = ready.try_io(|file| file.get_ref().write(buf)) {
                    return Poll::Ready(result);
                }
            },
            AsyncFile::Inline(file) => Poll::Ready(fd::write(file, buf)),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use rustix::pipe::pipe;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::async_io::on_runtime;

    #[test]
    fn pipes_go_on_the_reactor_and_stay_blocking_for_others() {
        let (reader, writer) = pipe().unwrap();
        on_runtime(async {
            let mut reader = AsyncFile::new(File::from(reader), false);
            let mut writer = AsyncFile::new(File::from(writer), true);
            assert!(matches!(reader, AsyncFile::Reactor(_)));
            assert!(matches!(writer, AsyncFile::Reactor(_)));
            // More than a pipe holds: the writer must wait on the reactor for the reader.
            let sent = vec![7u8; 1 << 20];
            let mut received = Vec::new();
            let write = async {
                writer.write_all(&sent).await.unwrap();
                drop(writer);
            };
            let read = async { reader.read_to_end(&mut received).await.unwrap() };
            futures::future::join(write, read).await;
            assert!(received == sent);
        });
    }

    #[test]
    fn the_inherited_description_keeps_its_mode() {
        let (reader, _writer) = pipe().unwrap();
        let inherited = reader.try_clone().unwrap();
        on_runtime(async {
            let file = AsyncFile::new(File::from(reader), false);
            assert!(fd::is_nonblocking(file.as_fd()), "its own description is");
            assert!(!fd::is_nonblocking(inherited.as_fd()));
        });
    }

    #[test]
    fn regular_files_are_used_inline() {
        let path = crate::io::testing::path("async-file");
        std::fs::write(&path, b"in a file\n").unwrap();
        on_runtime(async {
            let mut file = AsyncFile::new(File::open(&path).unwrap(), false);
            assert!(matches!(file, AsyncFile::Inline(_)));
            let mut read = String::new();
            file.read_to_string(&mut read).await.unwrap();
            assert_eq!(read, "in a file\n");
        });
        std::fs::remove_file(&path).unwrap();
    }
}
