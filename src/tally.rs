//! [`Tallying`]: what every strategy renders lines with, and the [`Tally`] a filter may keep of
//! them. Every [`Transform`] is a `Tallying` whose tally is `()`, so a filter that only changes,
//! drops or keeps lines never meets this module; one that counts (`wc`, `awk '{c[$9]++}'`)
//! writes a `Tallying` itself.
//!
//! A tally is kept per rendering, not per process: each chunk of lines (each line, where a
//! strategy renders one at a time) is folded into a tally of its own on whichever thread renders
//! it, with no lock on a line's way, and the strategy merges those tallies in input order as it
//! writes their renderings, so that a tally that is not commutative (the first and last key
//! seen) holds what a single loop would. Once every line is written, the merged tally goes to
//! [`end`](Tallying::end), which writes the summary after the lines and says the exit status:
//! Beam's `CombineFn` (create, add, merge, extract), as `Default`, the renderings, `merge` and
//! `end` (docs/CONTRACT.md §13.4).

use std::process::ExitCode;
use std::time::Duration;

use bytes::{Buf, Bytes};

use crate::error::Error;
use crate::frame::reserve;
use crate::transform::{MOST_ROOM_ADDED, Transform};

/// What a filter keeps of the lines it has rendered: made empty (`Default`) for each chunk, folded
/// into by its renderings, and merged with the tallies of the chunks after it, in input order.
pub trait Tally: Default + Send {
    /// Folds in `later`, the tally of the lines that came right after this one's.
    fn merge(&mut self, later: Self);
}

/// No tally: what a [`Transform`] keeps.
impl Tally for () {
    #[inline(always)]
    fn merge(&mut self, (): ()) {}
}

/// How each line is rendered and folded into a [`Tally`]: a [`Transform`] with a tally beside
/// it, and the summary written from the tally once every line is. Every `Transform` is one,
/// keeping no tally; a filter that counts implements this instead.
///
/// The methods are [`Transform`]'s, each with the tally of the lines it renders, and the same
/// rules hold: a rendering may change its line, drop it (write nothing) or write several lines;
/// only [`render_line`](Tallying::render_line) and [`end`](Tallying::end) must be written. A
/// strategy hands each rendering a tally of its chunk's own, in no set order across chunks; the
/// tallies are then merged in input order, the renderings written so, and a chunk whose rendering
/// is not written (a range of a file that failed) is not merged either.
///
/// ```
/// use linewright::strategy::std_baseline;
/// use linewright::{Error, Memory, StdBaseline, Tally, Tallying};
/// use std::process::ExitCode;
///
/// /// Counts the lines, and passes none on.
/// struct CountLines;
///
/// #[derive(Default)]
/// struct Lines(u64);
///
/// impl Tally for Lines {
///     fn merge(&mut self, later: Lines) {
///         self.0 += later.0;
///     }
/// }
///
/// impl Tallying for CountLines {
///     type Tally = Lines;
///
///     fn render_line(&self, lines: &mut Lines, _: &mut Vec<u8>, _: &[u8]) {
///         lines.0 += 1;
///     }
///
///     fn end(&self, lines: Lines, out: &mut Vec<u8>) -> ExitCode {
///         out.extend_from_slice(format!("{}\n", lines.0).as_bytes());
///         ExitCode::SUCCESS
///     }
/// }
///
/// let knobs = StdBaseline::default().buffer.knobs();
/// let mut out = Vec::new();
/// std_baseline::run(&knobs, CountLines, Memory::new(&b"a\nb\nc"[..]), &mut out)?;
/// assert_eq!(out, b"3\n");
/// # Ok::<(), Error>(())
/// ```
pub trait Tallying {
    /// What is kept of the lines rendered: `()` for a [`Transform`].
    type Tally: Tally;

    /// As [`Transform::most_added`].
    #[inline(always)]
    fn most_added(&self) -> usize {
        1
    }

    /// As [`Transform::cost_a_line`].
    #[inline(always)]
    fn cost_a_line(&self) -> Duration {
        Duration::ZERO
    }

    /// As [`Transform::render_line`], folding `line` into `tally`. The line comes without its
    /// `\n`, so a last line without one looks like any other here: a tally that must tell them
    /// apart (`wc`'s bytes) counts in [`render_chunk`](Tallying::render_chunk), which `batched`
    /// and `pipeline` render every line with, and says it needs one of them.
    fn render_line(&self, tally: &mut Self::Tally, out: &mut Vec<u8>, line: &[u8]);

    /// As [`Transform::render_chunk`], folding the chunk's lines into `tally`. By default, a line
    /// at a time.
    fn render_chunk(
        &self,
        tally: &mut Self::Tally,
        out: &mut Vec<u8>,
        chunk: &[u8],
    ) -> Result<u64, Error> {
        let mut lines = 0;
        let mut rest = chunk;
        while !rest.is_empty() {
            let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            render_line_in_memory(self, tally, out, &rest[..end])?;
            lines += 1;
            rest = rest.get(end + 1..).unwrap_or_default();
        }
        Ok(lines)
    }

    /// As [`Transform::render_shared`], folding the line into `tally`. By default, a buffer of
    /// its own.
    fn render_shared<'a>(
        &'a self,
        tally: &mut Self::Tally,
        line: Bytes,
    ) -> Result<impl Buf + use<'a, Self>, Error> {
        let mut out = Vec::new();
        render_line_in_memory(self, tally, &mut out, &line)?;
        Ok(Bytes::from(out))
    }

    /// The last step, once every line is rendered and written: appends the summary of `tally`,
    /// every chunk's merged in input order, to `out` (written after the lines), and returns the
    /// status a run that failed nowhere exits with (docs/CONTRACT.md §13.4). For a
    /// [`Transform`], nothing and its [`exit_status`](Transform::exit_status).
    fn end(&self, tally: Self::Tally, out: &mut Vec<u8>) -> ExitCode;
}

impl<T: Transform + ?Sized> Tallying for T {
    type Tally = ();

    #[inline(always)]
    fn most_added(&self) -> usize {
        Transform::most_added(self)
    }

    #[inline(always)]
    fn cost_a_line(&self) -> Duration {
        Transform::cost_a_line(self)
    }

    #[inline(always)]
    fn render_line(&self, (): &mut (), out: &mut Vec<u8>, line: &[u8]) {
        Transform::render_line(self, out, line);
    }

    #[inline(always)]
    fn render_chunk(&self, (): &mut (), out: &mut Vec<u8>, chunk: &[u8]) -> Result<u64, Error> {
        Transform::render_chunk(self, out, chunk)
    }

    #[inline(always)]
    fn render_shared<'a>(
        &'a self,
        (): &mut (),
        line: Bytes,
    ) -> Result<impl Buf + use<'a, T>, Error> {
        Transform::render_shared(self, line)
    }

    fn end(&self, (): (), _: &mut Vec<u8>) -> ExitCode {
        self.exit_status()
    }
}

/// Appends `line`'s rendering to `out` after making room for it, or fails if `out` cannot grow
/// to hold it: the step every strategy that renders a line at a time takes.
#[inline(always)]
pub(crate) fn render_line_in_memory<T: Tallying + ?Sized>(
    tallying: &T,
    tally: &mut T::Tally,
    out: &mut Vec<u8>,
    line: &[u8],
) -> Result<(), Error> {
    reserve(out, line.len() + tallying.most_added().min(MOST_ROOM_ADDED))?;
    tallying.render_line(tally, out, line);
    Ok(())
}
