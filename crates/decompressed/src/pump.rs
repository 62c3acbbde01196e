//! A decoder as its reader pulls it, and the one loop that reads it into the hand-off: what
//! decoded before a fault is handed on before the fault is told, and a failed read of the source
//! is told as the source's failure.

use std::io::Read;

use super::Failure;
use super::handoff::Out;
use super::source::{Sniffed, reading};

/// A decoder (or the source itself, passed through) and where its source is inside it: each read
/// gives decoded bytes, or a failure told as the source's or the decoder's.
pub(super) struct Pulled(Box<dyn Decoder>);

/// A decoder that can tell its source's failed read from its own fault.
trait Decoder: Send {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize>;
    fn source(&mut self) -> &mut Sniffed;
}

/// `from` and the way to its source.
struct Within<R> {
    from: R,
    source: fn(&mut R) -> &mut Sniffed,
}

impl<R: Read + Send> Decoder for Within<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.from.read(buf)
    }

    fn source(&mut self) -> &mut Sniffed {
        (self.source)(&mut self.from)
    }
}

impl Pulled {
    /// `from` (a decoder, or the source itself), whose source `source` finds inside it.
    pub(super) fn new<R: Read + Send + 'static>(
        from: R,
        source: fn(&mut R) -> &mut Sniffed,
    ) -> Self {
        Pulled(Box::new(Within { from, source }))
    }

    /// Decodes into `buf`: how many bytes, 0 at the end.
    pub(super) fn pull(&mut self, buf: &mut [u8]) -> Result<usize, Failure> {
        self.0.read(buf).map_err(|error| {
            let source = &mut self.0.source().get_mut().1;
            match source.failed.is_some() {
                true => reading(source),
                false => Failure::Decompressing(error),
            }
        })
    }
}

/// Reads `from` into `out`'s room until the end, a failure, or `out`'s reader going away.
pub(super) fn pump(mut from: Pulled, out: &mut impl Out) -> Result<(), Failure> {
    loop {
        let Some(room) = out.room() else {
            return Ok(());
        };
        let read = match from.pull(room)? {
            0 => return Ok(()),
            read => read,
        };
        if !out.filled(read) {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Read};

    use super::super::source::Undecoded;
    use super::super::tests::{file_of, text};
    use super::*;
    use pipelines_testing::gzip;

    /// Decoded bytes gathered whole, in rooms of an odd size; the reader goes once `most` bytes
    /// have come, which the pump learns as it hands them on.
    struct Gathered {
        room: Vec<u8>,
        out: Vec<u8>,
        most: usize,
    }

    impl Out for Gathered {
        fn room(&mut self) -> Option<&mut [u8]> {
            Some(&mut self.room)
        }

        fn filled(&mut self, n: usize) -> bool {
            self.out.extend_from_slice(&self.room[..n]);
            self.out.len() < self.most
        }

        fn flush(&mut self) {}
    }

    /// What [`pump`] hands on of `file` read through a gzip decoder, up to `most` bytes, and how
    /// it ends.
    fn pumped(file: std::fs::File, most: usize) -> (Vec<u8>, Result<(), Failure>) {
        let mut out = Gathered {
            room: vec![0; 1001],
            out: Vec::new(),
            most,
        };
        let sniffed = Cursor::new(Vec::new()).chain(Undecoded::new(file));
        let decoder = flate2::read::GzDecoder::new(sniffed);
        let ended = pump(Pulled::new(decoder, |decoder| decoder.get_mut()), &mut out);
        (out.out, ended)
    }

    /// The bytes before a fault come out, then the fault, as the decoder's; a source that cannot
    /// be read is the source's failure; a reader that goes ends the loop without a failure.
    #[test]
    fn the_bytes_before_a_fault_come_out_and_the_fault_is_told_as_whose_it_is() {
        let text = text(0..20_000);
        let member = gzip(&text);
        let (out, ended) = pumped(file_of(&member), usize::MAX);
        assert!(out == text && ended.is_ok(), "{ended:?}");
        let cut = &member[..member.len() - 4];
        let (out, ended) = pumped(file_of(cut), usize::MAX);
        assert!(
            text.starts_with(&out) && out.len() > text.len() / 2,
            "{}",
            out.len()
        );
        assert!(matches!(ended, Err(Failure::Decompressing(_))), "{ended:?}");
        let directory = std::fs::File::open(std::env::temp_dir()).unwrap();
        let (out, ended) = pumped(directory, usize::MAX);
        assert!(out.is_empty(), "{} bytes", out.len());
        let Err(Failure::Reading(error)) = ended else {
            panic!("{ended:?} instead of the source's failure");
        };
        assert_eq!(error.raw_os_error(), Some(21));
        let (out, ended) = pumped(file_of(&member), 5000);
        assert!(out.len() < text.len() && ended.is_ok(), "{ended:?}");
    }
}
