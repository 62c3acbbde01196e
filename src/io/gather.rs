//! Output held back to be written in large pieces, and the rule for when it must go: once it has
//! gathered a write's worth, and whenever the input has nothing more waiting, so batching for
//! throughput never holds a live line back (`tail -f app.log | BIN` shows each line as it comes).
//!
//! Plain state with no I/O. [`Gather`] is the output side of every strategy that writes through
//! one buffer: told what happened (rendered bytes, a decision point, a write that took `n`
//! bytes), it says what to do next ([`Next`]), and the sync [`Output`](crate::io::Output) and
//! async [`AsyncOutput`](crate::async_io::AsyncOutput) only carry that out. The readers of the
//! multi-stage strategies, which hand on batches rather than write, decide by [`is_due`] and
//! [`is_due_idle`] alone. Every strategy asks this file; none decides for itself.

/// Whether `held` bytes (or lines) gathered towards a piece of `size` must go on now, before the
/// next read: yes once the piece is full, and yes when the next read would wait, however little is
/// held ([`is_due_idle`]). `input_waiting` is only asked when it matters, since asking costs a
/// system call.
pub fn is_due(held: usize, size: usize, input_waiting: impl FnOnce() -> bool) -> bool {
    held > 0 && (held >= size || is_due_idle(true, input_waiting))
}

/// Whether anything `held` back must go on now because the next read would wait: the live-input
/// half of [`is_due`], alone, for a stage that hands full pieces on as they fill and so holds less
/// than a piece whenever it asks (`pipeline`'s reader).
pub fn is_due_idle(held: bool, input_waiting: impl FnOnce() -> bool) -> bool {
    held && !input_waiting()
}

/// What the driver of a [`Gather`] must do next.
#[derive(Debug, PartialEq, Eq)]
pub enum Next<'a> {
    /// Write (a first part of) these bytes, then report how many went with [`Gather::wrote`].
    Write(&'a [u8]),
    /// Nothing is due: go on reading and rendering.
    Nothing,
}

/// Rendered bytes gathered until they are [due](is_due), and the flush under way, if any.
///
/// A flush, once started, runs until every byte gathered has been written: a write that takes
/// part of the bytes, or a driver that must wait for room, never makes the rule be asked again
/// half-way, so the input is asked at most once a decision.
#[derive(Debug)]
pub struct Gather {
    /// Rendered bytes not yet written, the front part of them perhaps written already.
    pending: Vec<u8>,
    /// While a flush is under way, how many bytes at the front of `pending` it has written;
    /// `None` when none is.
    flushed: Option<usize>,
    /// A write's worth: once `pending` holds this much, it goes.
    write_size: usize,
    /// Bytes written so far, through `pending` or around it.
    bytes_written: u64,
}

impl Gather {
    /// Gathering `write_size` bytes a write. The buffer grows as rendering reserves room in it,
    /// where running out of memory is an error (see [`frame::reserve`](crate::frame::reserve)).
    pub fn new(write_size: usize) -> Self {
        Gather {
            pending: Vec::new(),
            flushed: None,
            write_size,
            bytes_written: 0,
        }
    }

    /// The buffer to render into. Bytes appended while a flush is under way go with it.
    pub fn pending(&mut self) -> &mut Vec<u8> {
        &mut self.pending
    }

    /// Everything pending is to be written: at the end, or when the caller knows it is due.
    pub fn flush(&mut self) {
        if !self.pending.is_empty() && self.flushed.is_none() {
            self.flushed = Some(0);
        }
    }

    /// What is pending is to be written once it holds a write's worth: after rendering.
    pub fn flush_if_full(&mut self) {
        if self.pending.len() >= self.write_size {
            self.flush();
        }
    }

    /// What is pending is to be written if it is [due](is_due) before the next read: call before
    /// each. `input_waiting` is not asked while a flush is under way.
    pub fn flush_if_due(&mut self, input_waiting: impl FnOnce() -> bool) {
        if self.flushed.is_none() && is_due(self.pending.len(), self.write_size, input_waiting) {
            self.flush();
        }
    }

    /// What the driver must do now: the rest of the flush under way, or nothing.
    pub fn next(&self) -> Next<'_> {
        match self.flushed {
            Some(flushed) => Next::Write(&self.pending[flushed..]),
            None => Next::Nothing,
        }
    }

    /// The driver wrote the first `n` bytes of [`Next::Write`]'s. Once all are written the
    /// buffer is empty again and the flush is over.
    pub fn wrote(&mut self, n: usize) {
        let Some(flushed) = &mut self.flushed else {
            debug_assert_eq!(n, 0, "wrote with no flush under way");
            return;
        };
        *flushed += n;
        self.bytes_written += n as u64;
        if *flushed >= self.pending.len() {
            self.pending.clear();
            self.flushed = None;
        }
    }

    /// The driver wrote `n` bytes of the caller's own straight to the sink, with nothing pending
    /// before them: they count as written.
    pub fn wrote_around(&mut self, n: usize) {
        debug_assert!(self.pending.is_empty(), "bytes written around pending ones");
        self.bytes_written += n as u64;
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_held_is_never_due_and_input_is_not_asked() {
        assert!(!is_due(0, 1, || panic!("not asked")));
    }

    #[test]
    fn a_full_piece_is_due_without_asking() {
        assert!(is_due(4, 4, || panic!("not asked")));
    }

    #[test]
    fn a_short_piece_is_due_only_when_input_is_idle() {
        assert!(is_due(1, 4, || false));
        assert!(!is_due(1, 4, || true));
        assert!(is_due_idle(true, || false));
        assert!(!is_due_idle(true, || true));
        assert!(!is_due_idle(false, || panic!("nothing held: not asked")));
    }

    #[test]
    fn nothing_is_written_until_full_or_due() {
        let mut gather = Gather::new(3);
        gather.flush_if_full();
        gather.flush_if_due(|| panic!("nothing held: not asked"));
        gather.flush();
        assert_eq!(gather.next(), Next::Nothing, "nothing held");
        gather.pending().extend_from_slice(b"ab");
        gather.flush_if_full();
        gather.flush_if_due(|| true);
        assert_eq!(
            gather.next(),
            Next::Nothing,
            "short, and more input waiting"
        );
        gather.flush_if_due(|| false);
        assert_eq!(gather.next(), Next::Write(b"ab"), "input idle");
    }

    #[test]
    fn a_full_buffer_goes_and_the_count_follows_the_writes() {
        let mut gather = Gather::new(3);
        gather.pending().extend_from_slice(b"abc");
        gather.flush_if_full();
        assert_eq!(gather.next(), Next::Write(b"abc"));
        gather.wrote(3);
        assert_eq!(gather.next(), Next::Nothing);
        assert!(gather.pending().is_empty());
        gather.wrote_around(5);
        assert_eq!(gather.bytes_written(), 8);
    }

    #[test]
    fn a_flush_under_way_runs_to_its_end_without_asking_again() {
        let mut gather = Gather::new(10);
        gather.pending().extend_from_slice(b"abcd");
        gather.flush_if_due(|| false);
        gather.wrote(1);
        assert_eq!(gather.next(), Next::Write(b"bcd"));
        // Waiting for room: the rule is asked again, but the flush under way goes on.
        gather.flush_if_due(|| panic!("not asked while under way"));
        gather.flush_if_full();
        gather.flush();
        assert_eq!(gather.next(), Next::Write(b"bcd"));
        gather.pending().push(b'e');
        gather.wrote(2);
        assert_eq!(gather.next(), Next::Write(b"de"), "bytes added go with it");
        gather.wrote(2);
        assert_eq!(gather.next(), Next::Nothing);
        assert_eq!(gather.bytes_written(), 5);
    }
}
