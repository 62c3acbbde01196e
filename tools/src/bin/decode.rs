//! `decode`: a gzip or zstd file decoded to stdout with the same decoders (ISA-L's inflate where
//! the binaries have it, else zlib-rs; libzstd), buffers and loop as the binaries' `-z`, and
//! nothing else: the in-process decoder's own time, the floor `X -z F` is measured against
//! (harness/throughput.sh).

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use decompressed::gzip::GzipMembers;

/// Compressed bytes read, and decoded bytes written, at a time: as `-z` does.
const PIECE: usize = 256 * 1024;

/// Decode a gzip file (every member) or a zstd file (every frame) to stdout.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// The file; which format it is is told by its first bytes.
    file: PathBuf,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match decode(&args.file) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("decode: {}: {error}", args.file.display());
            ExitCode::FAILURE
        }
    }
}

fn decode(path: &PathBuf) -> io::Result<()> {
    let mut file = BufReader::with_capacity(PIECE, File::open(path)?);
    let gzip = io::BufRead::fill_buf(&mut file)?.starts_with(&[0x1f, 0x8b]);
    let mut decoder: Box<dyn Read> = match gzip {
        true => Box::new(GzipMembers::all(file, None)),
        false => Box::new(zstd::stream::read::Decoder::with_buffer(file)?),
    };
    let mut stdout = io::stdout().lock();
    let mut buf = vec![0; PIECE];
    loop {
        match decoder.read(&mut buf)? {
            0 => return Ok(()),
            n => stdout.write_all(&buf[..n])?,
        }
    }
}
