//! The crate in one call: a file or a stream's decoded bytes as any reader reads them, its
//! failure told after the bytes decoded before it.

use std::fs::File;
use std::io::{self, BufRead, Read, Seek};
use std::num::NonZeroUsize;
use std::path::Path;

use crate::format::{Format, sniff_file};
use crate::handoff::DecodedFile;
use crate::spares::SpareBuffers;
use crate::{BUFFERS, DECODED_HERE, Decoding, Failure, Regular, decode_file, decode_stream};

/// The decoded bytes of a file or stream, whatever it holds: gzip members, zstd frames, xz
/// streams, an `.lzma` stream, bzip2 streams, LZ4 frames, each told by its first bytes and decoded
/// to the source's end; anything else passes through as it is (`zcat -f`), and compress's `.Z`
/// is refused. A regular file is decoded on up to `threads` threads where its layout allows
/// (zstd frames, BGZF members, xz blocks, bzip2 blocks); a stream (a pipe, a terminal, a socket)
/// on a thread of its own (its BGZF members, xz and bzip2 blocks on up to `threads`), its bytes
/// handed on as they come (a live stream's lines as they are written). Either way the decoded
/// bytes come over in memory, in buffers the reader recycles.
///
/// Once the decoded bytes end, a read tells how decoding ended: `Ok(0)` where the source was
/// whole, else the error, after every byte decoded before the fault, saying where it is
/// (`decompressing: …, after N decoded bytes`). A source cut short inside a member, frame or
/// stream is never read as its end (one cut between two members is a whole file of fewer).
///
/// ```
/// use std::io::{Read, Write};
///
/// let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
/// gzip.write_all(b"one\ntwo\n")?;
/// let path = std::env::temp_dir().join(format!("decompressed-doc-{}.gz", std::process::id()));
/// std::fs::write(&path, gzip.finish()?)?;
///
/// let mut text = String::new();
/// decompressed::Reader::open(&path)?.read_to_string(&mut text)?;
/// assert_eq!(text, "one\ntwo\n");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Reader {
    bytes: DecodedFile,
    /// How decoding ends, taken once the bytes have ended.
    decoding: Option<Decoding>,
    /// The decoded bytes read so far: where a fault is, as its error tells it.
    read: u64,
}

impl Reader {
    /// The file at `path` decoded, on as many threads as the machine has cores.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Reader> {
        let threads = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
        Reader::new(File::open(path)?, threads)
    }

    /// `file` decoded from where its offset is, on up to `threads` threads. The reader owns
    /// `file`; a stream's descriptor is read, never changed (no flag is set on it).
    pub fn new(file: File, threads: NonZeroUsize) -> io::Result<Reader> {
        Reader::with_buffers(file, threads, BUFFERS)
    }

    /// [`new`](Self::new), holding at most `buffers` decoded buffers of [`BUFFER`](crate::BUFFER)
    /// bytes that the reader has not taken (at least one; [`BUFFERS`] unless told): the memory
    /// bound the caller sets, a file's or a stream's alike, beside what each decoder holds of its
    /// own (a frame's or block's window, docs/CONTRACT.md §12.4).
    pub fn with_buffers(
        mut file: File,
        threads: NonZeroUsize,
        buffers: usize,
    ) -> io::Result<Reader> {
        let metadata = file.metadata()?;
        let spares = SpareBuffers::default();
        let (bytes, decoding) = match metadata.is_file() {
            true => {
                let offset = file.stream_position()?;
                let source = Regular::at(file, offset, metadata.len());
                let format = sniff_file(&source)?;
                // A reader takes bytes, not lines: a large file's BGZF members on several threads
                // go on in the storage each run decoded into, as a stream's do (`members.rs`),
                // where the pool cuts pieces at line ends for linewright's chunks: 0.74 of the
                // pool's time (results/runs/2026-12-03T1349Z-a445924-2-cores-bgzf-file).
                match format == Format::Gzip && threads.get() > 1 && source.len > DECODED_HERE {
                    true => decode_stream(source.file, threads, buffers, &spares)?,
                    false => decode_file(source, format, buffers, threads, DECODED_HERE, &spares)?,
                }
            }
            false => decode_stream(file, threads, buffers, &spares)?,
        };
        Ok(Reader {
            bytes,
            decoding: Some(decoding),
            read: 0,
        })
    }

    /// At the end of the decoded bytes: how decoding ended, told once (later reads find the end).
    /// A fault says where it is in the decoded bytes, the one offset every format has.
    fn ended(&mut self) -> io::Result<()> {
        match self.decoding.take().map(Decoding::finish) {
            None | Some(Ok(())) => Ok(()),
            Some(Err(Failure::Reading(error))) => Err(error),
            Some(Err(Failure::Decompressing(error))) => Err(io::Error::new(
                error.kind(),
                format!("decompressing: {error}, after {} decoded bytes", self.read),
            )),
        }
    }
}

impl Read for Reader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let unread = self.fill_buf()?;
        let n = unread.len().min(buf.len());
        buf[..n].copy_from_slice(&unread[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Reader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.bytes.unread().is_empty() {
            self.ended()?;
        }
        Ok(self.bytes.unread())
    }

    fn consume(&mut self, n: usize) {
        self.read += n as u64;
        self.bytes.consume(n);
    }
}
