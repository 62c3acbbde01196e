//! [`Output`]: rendered bytes gathered in front of any writer and written in large pieces, as
//! [`Gather`] says; and [`Stdout`], the writer the binaries use.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;

use crate::error::{Context, Error};
use crate::io::Input;
use crate::io::gather::{Gather, Next};
use fd_facts as fd;

/// A writer with a gathering buffer in front: carries out what its [`Gather`] says.
#[derive(Debug)]
pub struct Output<W> {
    sink: W,
    gather: Gather,
}

impl<W: Write> Output<W> {
    /// `sink`, written in pieces of about `write_size` bytes. A failed write is the output's
    /// ([`Error::writing`]): who opened it names it.
    pub fn new(sink: W, write_size: usize) -> Self {
        Output {
            sink,
            gather: Gather::new(write_size),
        }
    }

    /// The buffer to render into.
    pub fn pending(&mut self) -> &mut Vec<u8> {
        self.gather.pending()
    }

    /// Writes whatever is pending.
    pub fn flush(&mut self) -> Result<(), Error> {
        self.gather.flush();
        self.carry_out()
    }

    /// Writes `bytes` at once, in one piece, after anything pending: for strategies that render
    /// whole chunks into buffers of their own.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.flush()?;
        self.sink.write_all(bytes).map_err(Error::writing)?;
        self.gather.wrote_around(bytes.len());
        Ok(())
    }

    /// Writes what is pending once it has reached the write size.
    pub fn flush_if_full(&mut self) -> Result<(), Error> {
        self.gather.flush_if_full();
        self.carry_out()
    }

    /// Writes what is pending if it is due before the next read of `input`: call before each.
    pub fn flush_if_due(&mut self, input: &mut impl Input) -> Result<(), Error> {
        self.gather.flush_if_due(|| input.is_ready());
        self.carry_out()
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.gather.bytes_written()
    }

    /// Writes what the gather says is due, until nothing is. Most calls find nothing due: that
    /// check is inlined, the writing is not, so that the render loop around stays as tight.
    #[inline(always)]
    fn carry_out(&mut self) -> Result<(), Error> {
        match self.gather.next() {
            Next::Nothing => Ok(()),
            Next::Write(_) => self.write_due(),
        }
    }

    /// Carries out [`carry_out`](Self::carry_out) when something is due.
    #[inline(never)]
    fn write_due(&mut self) -> Result<(), Error> {
        while let Next::Write(bytes) = self.gather.next() {
            self.sink.write_all(bytes).map_err(Error::writing)?;
            let written = bytes.len();
            self.gather.wrote(written);
        }
        Ok(())
    }
}

/// Stdout, duplicated into a plain `File`: writes go straight to the descriptor, bypassing std's
/// line buffering, in the sizes the caller gathers; a descriptor handed over non-blocking is
/// waited on rather than failing.
#[derive(Debug)]
pub struct Stdout(File);

impl Stdout {
    /// This process's stdout, duplicated.
    pub fn open() -> Result<Self, Error> {
        io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map(|fd| Stdout(File::from(fd)))
            .context("opening stdout")
    }

    /// The descriptor, as a plain file: for the async layer to wrap.
    pub fn into_file(self) -> File {
        self.0
    }
}

impl AsFd for Stdout {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.0.as_fd()
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        fd::write(&self.0, buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An input that says whether it has bytes waiting, and counts how often it was asked.
    struct Idle {
        waiting: bool,
        asked: usize,
    }

    impl Input for Idle {
        fn read(&mut self, _: &mut [u8]) -> Result<usize, Error> {
            Ok(0)
        }

        fn is_ready(&mut self) -> bool {
            self.asked += 1;
            self.waiting
        }
    }

    #[test]
    fn gathers_until_full_or_due() {
        let mut output = Output::new(Vec::new(), 4);
        output.pending().extend_from_slice(b"ab");
        output.flush_if_full().unwrap();
        let mut busy = Idle {
            waiting: true,
            asked: 0,
        };
        output.flush_if_due(&mut busy).unwrap();
        assert!(output.sink.is_empty() && busy.asked == 1);
        let mut idle = Idle {
            waiting: false,
            asked: 0,
        };
        output.flush_if_due(&mut idle).unwrap();
        assert_eq!(output.sink, b"ab");
        output.pending().extend_from_slice(b"cdef");
        output.flush_if_full().unwrap();
        output.write(b"gh").unwrap();
        assert_eq!(output.sink, b"abcdefgh");
        assert_eq!(output.bytes_written(), 8);
    }

    #[test]
    fn a_failed_write_is_the_outputs() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let mut gathered = Output::new(full.try_clone().unwrap(), 1);
        gathered.pending().push(b'x');
        let mut direct = Output::new(full, 1);
        for error in [gathered.flush_if_full(), direct.write(b"y")] {
            let error = error.unwrap_err().to_string();
            assert!(error.starts_with("writing the output: "), "{error}");
        }
    }
}
