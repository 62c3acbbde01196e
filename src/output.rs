//! Output: large writes to stdout, and the rule for when held-back output goes out.
//!
//! Output is gathered in one buffer and written in large pieces, except that whenever the input
//! has nothing more waiting, whatever is gathered is written at once: batching for throughput
//! never holds a live line back (`tail -f app.log | std-baseline` shows each line as it comes).

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;

use crate::exit::{Context, Error};
use crate::input::Input;

/// Stdout with a gathering buffer.
#[derive(Debug)]
pub struct Output {
    /// Stdout, duplicated into a plain `File` so writes bypass std's line buffering.
    stdout: File,
    /// Rendered bytes not yet written.
    pending: Vec<u8>,
    /// Once `pending` holds this many bytes, it is written.
    write_size: usize,
    /// Bytes written so far.
    bytes_written: u64,
}

impl Output {
    /// Stdout, written in pieces of about `write_size` bytes.
    pub fn stdout(write_size: usize) -> Result<Self, Error> {
        Ok(Output {
            stdout: open_stdout()?,
            pending: Vec::with_capacity(write_size),
            write_size,
            bytes_written: 0,
        })
    }

    /// The buffer to render into.
    pub fn pending(&mut self) -> &mut Vec<u8> {
        &mut self.pending
    }

    /// Writes whatever is pending.
    pub fn flush(&mut self) -> Result<(), Error> {
        if !self.pending.is_empty() {
            self.stdout
                .write_all(&self.pending)
                .context("writing stdout")?;
            self.bytes_written += self.pending.len() as u64;
            self.pending.clear();
        }
        Ok(())
    }

    /// Writes `bytes` at once, in one piece, after anything pending: for strategies that render
    /// whole chunks into buffers of their own.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.flush()?;
        self.stdout.write_all(bytes).context("writing stdout")?;
        self.bytes_written += bytes.len() as u64;
        Ok(())
    }

    /// Writes what is pending once it has reached the write size.
    pub fn flush_if_full(&mut self) -> Result<(), Error> {
        if self.pending.len() >= self.write_size {
            self.flush()
        } else {
            Ok(())
        }
    }

    /// Writes what is pending if the next read of `input` would wait: call before each read.
    pub fn flush_if_idle(&mut self, input: &Input) -> Result<(), Error> {
        if !self.pending.is_empty() && !input.has_waiting() {
            self.flush()
        } else {
            Ok(())
        }
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }
}

/// Stdout, duplicated into a plain `File`: writes go straight to the descriptor, bypassing std's
/// line buffering, in the sizes the caller gathers.
pub fn open_stdout() -> Result<File, Error> {
    io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map(File::from)
        .context("opening stdout")
}
