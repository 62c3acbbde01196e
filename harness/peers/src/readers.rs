//! The readers, each as its crate's documentation shows it, at its best settings on `threads`
//! where it takes a thread count. What each one does not do (read from their sources) is in
//! ../README.md.

use std::fs::File;
use std::io::{self, Read};
use std::num::NonZeroUsize;

use gzp::deflate::Bgzf;
use gzp::par::decompress::ParDecompressBuilder;
use liblzma::stream::MtStreamBuilder;

/// Memory the MT xz decoder may use before it falls back to one thread: 1 GiB, far above what
/// two threads need for `xz -T2`'s blocks (about three times a block each, 24 MiB blocks at -6).
/// Left at liblzma's zeroed default, it is 1 byte, and every block is decoded on one thread.
const XZ_MT_MEMORY: u64 = 1 << 30;

/// A reader of compressed bytes, by the name the harness gives it.
#[derive(Clone, Copy)]
pub enum Peer {
    /// This workspace's `decompressed::Reader`, on the threads given.
    Decompressed,
    /// `decompressed::Reader` on one thread: decoded at each read, no thread started.
    DecompressedOne,
    /// `niffler::get_reader`, the format sniffed from its first bytes.
    Niffler,
    /// `flate2::read::MultiGzDecoder` on zlib-rs.
    Flate2MultiGz,
    /// `noodles_bgzf::io::MultithreadedReader`, BGZF only.
    NoodlesBgzf,
    /// `gzp`'s `ParDecompress` for BGZF.
    Gzp,
    /// `bzip2::read::MultiBzDecoder` on libbz2-rs.
    Bzip2,
    /// `zstd::stream::read::Decoder`.
    Zstd,
    /// `liblzma::read::XzDecoder::new_multi_decoder`, one thread.
    Liblzma,
    /// `liblzma`'s MT stream decoder.
    LiblzmaMt,
    /// `lz4_flex::frame::FrameDecoder`.
    Lz4Flex,
}

impl Peer {
    /// Every reader, in the tables' order.
    pub const ALL: [Peer; 11] = [
        Peer::Decompressed,
        Peer::DecompressedOne,
        Peer::Niffler,
        Peer::Flate2MultiGz,
        Peer::NoodlesBgzf,
        Peer::Gzp,
        Peer::Bzip2,
        Peer::Zstd,
        Peer::Liblzma,
        Peer::LiblzmaMt,
        Peer::Lz4Flex,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Decompressed => "decompressed",
            Peer::DecompressedOne => "decompressed-1",
            Peer::Niffler => "niffler",
            Peer::Flate2MultiGz => "flate2-multigz",
            Peer::NoodlesBgzf => "noodles-bgzf",
            Peer::Gzp => "gzp",
            Peer::Bzip2 => "bzip2",
            Peer::Zstd => "zstd",
            Peer::Liblzma => "liblzma",
            Peer::LiblzmaMt => "liblzma-mt",
            Peer::Lz4Flex => "lz4_flex",
        }
    }

    /// The reader of that name.
    pub fn named(name: &str) -> Option<Peer> {
        Peer::ALL.into_iter().find(|peer| peer.name() == name)
    }

    /// The decoded bytes of `source`, read by this reader; `buffers` is this workspace's only.
    pub fn open(
        self,
        source: File,
        threads: NonZeroUsize,
        buffers: usize,
    ) -> io::Result<Box<dyn Read>> {
        Ok(match self {
            Peer::Decompressed => Box::new(decompressed::Reader::with_buffers(
                source, threads, buffers,
            )?),
            Peer::DecompressedOne => Box::new(decompressed::Reader::with_buffers(
                source,
                NonZeroUsize::MIN,
                buffers,
            )?),
            Peer::Niffler => {
                niffler::get_reader(Box::new(source))
                    .map_err(io::Error::other)?
                    .0
            }
            Peer::Flate2MultiGz => Box::new(flate2::read::MultiGzDecoder::new(source)),
            Peer::NoodlesBgzf => Box::new(
                noodles_bgzf::io::MultithreadedReader::with_worker_count(threads, source),
            ),
            Peer::Gzp => Box::new(
                ParDecompressBuilder::<Bgzf>::new()
                    .num_threads(threads.get())
                    .map_err(io::Error::other)?
                    .from_reader(source),
            ),
            Peer::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(source)),
            Peer::Zstd => Box::new(zstd::stream::read::Decoder::new(source)?),
            Peer::Liblzma => Box::new(liblzma::read::XzDecoder::new_multi_decoder(source)),
            Peer::LiblzmaMt => {
                let threads = u32::try_from(threads.get()).unwrap_or(u32::MAX);
                // The builder has no setter for the decoder's flags, so no LZMA_CONCATENATED:
                // it decodes one stream. No memory stop: the single-threaded reader has none.
                let stream = MtStreamBuilder::new()
                    .threads(threads)
                    .memlimit_threading(XZ_MT_MEMORY)
                    .memlimit_stop(u64::MAX)
                    .decoder()
                    .map_err(io::Error::other)?;
                Box::new(liblzma::read::XzDecoder::new_stream(source, stream))
            }
            Peer::Lz4Flex => Box::new(lz4_flex::frame::FrameDecoder::new(source)),
        })
    }
}
