//! A [`Slot`]: the buffers a chunk of lines goes round in, reused from one chunk to the next.

use std::io;

use crate::error::Error;
use crate::frame::Chunk;
use crate::io::ranges::Range;
use crate::tally::Tallying;

/// A chunk on its round: its number in input order, its lines, their rendering and the tally of
/// them, `A`.
pub(super) struct Slot<A> {
    pub(super) number: u64,
    pub(super) input: Chunk,
    pub(super) output: Vec<u8>,
    pub(super) lines: u64,
    /// The tally of the lines rendered, taken when the rendering is written.
    pub(super) tally: A,
    /// The range of a regular file the worker is to read into `input` itself.
    pub(super) range: Option<Range>,
    /// Reading the range failed: the writer keeps it when the slot's turn comes, for the calling
    /// thread to hand to the input.
    pub(super) read_error: Option<io::Error>,
}

impl<A: Default> Slot<A> {
    pub(super) fn new(chunk_size: usize) -> Self {
        Slot {
            number: 0,
            input: Chunk::new(chunk_size),
            output: Vec::new(),
            lines: 0,
            tally: A::default(),
            range: None,
            read_error: None,
        }
    }

    /// Renders the lines held into `output` with `transform`, and tallies them afresh, replacing
    /// what each held.
    pub(super) fn render(&mut self, transform: &impl Tallying<Tally = A>) -> Result<(), Error> {
        self.output.clear();
        self.tally = A::default();
        let lines = transform.render_chunk(&mut self.tally, &mut self.output, self.input.bytes());
        self.lines = lines?;
        Ok(())
    }

    /// A worker's job: reads the slot's range, if it has one, then renders it. A range that comes
    /// back short (the file shrank) is rendered as far as it goes, its last line ended; a failed
    /// read is kept in the slot, unrendered.
    pub(super) fn read_and_render(
        &mut self,
        transform: &impl Tallying<Tally = A>,
    ) -> Result<(), Error> {
        if let Some(range) = &self.range {
            let read = self.input.refill(range.len, |buf| range.read(buf))?;
            if let Err(error) = read {
                self.output.clear();
                self.lines = 0;
                self.read_error = Some(error);
                return Ok(());
            }
        }
        self.render(transform)
    }
}
