//! Output held back to be written in large pieces, and the rule for when it must go: once it has
//! gathered a write's worth, and whenever the input has nothing more waiting, so batching for
//! throughput never holds a live line back (`tail -f app.log | BIN` shows each line as it comes).
//!
//! Plain state with no I/O: the sync and async outputs, and the readers of the multi-stage
//! strategies that hand on batches, all decide by [`is_due`].

/// Whether `held` bytes (or lines) gathered towards a piece of `size` must go on now, before the
/// next read: yes once the piece is full, and yes when the next read would wait, however little is
/// held. `input_waiting` is only asked when it matters, since asking costs a system call.
pub fn is_due(held: usize, size: usize, input_waiting: impl FnOnce() -> bool) -> bool {
    held > 0 && (held >= size || !input_waiting())
}

/// Rendered bytes gathered until they are [due](is_due).
#[derive(Debug)]
pub struct Gather {
    /// Rendered bytes not yet written.
    pending: Vec<u8>,
    /// A write's worth: once `pending` holds this much, it goes.
    write_size: usize,
}

impl Gather {
    /// Gathering `write_size` bytes a write. The buffer grows as rendering reserves room in it,
    /// where running out of memory is an error (see [`frame::reserve`](crate::frame::reserve)).
    pub fn new(write_size: usize) -> Self {
        Gather {
            pending: Vec::new(),
            write_size,
        }
    }

    /// The buffer to render into.
    pub fn pending(&mut self) -> &mut Vec<u8> {
        &mut self.pending
    }

    /// Whether a write's worth is held.
    pub fn is_full(&self) -> bool {
        self.pending.len() >= self.write_size
    }

    /// Whether what is held must be written before the next read (see [`is_due`]).
    pub fn is_due(&self, input_waiting: impl FnOnce() -> bool) -> bool {
        is_due(self.pending.len(), self.write_size, input_waiting)
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
    }

    #[test]
    fn gather_tells_full_and_due() {
        let mut gather = Gather::new(3);
        assert!(!gather.is_full() && !gather.is_due(|| false));
        gather.pending().extend_from_slice(b"ab");
        assert!(!gather.is_full() && gather.is_due(|| false) && !gather.is_due(|| true));
        gather.pending().push(b'c');
        assert!(gather.is_full() && gather.is_due(|| true));
    }
}
