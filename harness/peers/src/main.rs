//! `peers READER FILE [--pipe] [--threads N] [--buffers N] [--digest]`: FILE decoded by one of
//! the readers a Rust program could use, its decoded byte count on stdout. Exit 0 at a clean end,
//! 1 at a decoding error (said on stderr), 101 at a panic ("panic: ..." on stderr), 2 at a bad
//! command line.
//!
//! `--pipe`: FILE is copied into a pipe by a thread of this process, and the reader reads the
//! pipe's read end, as it would read stdin; so a timing needs no shell. `--threads N` (default 2)
//! is given to the readers that take a thread count, and ignored by the others; `--buffers N`
//! (default `decompressed::BUFFERS`) is the decoded buffers this workspace's `Reader` may hold
//! that its reader has not taken (`Reader::with_buffers`). `--digest` adds a hash of the decoded
//! bytes after the count, to tell damaged output from whole (the hash is std's SipHash with fixed
//! keys: the same bytes give the same hash in every run of this binary).

use std::fs::File;
use std::hash::{DefaultHasher, Hasher};
use std::io::{self, Read};
use std::num::NonZeroUsize;
use std::os::fd::OwnedFd;
use std::panic;
use std::process::ExitCode;
use std::thread;

mod readers;

use readers::Peer;

const USAGE: &str = "usage: peers READER FILE [--pipe] [--threads N] [--buffers N] [--digest]";

/// What the command line asks for.
struct Run {
    peer: Peer,
    file: String,
    pipe: bool,
    threads: NonZeroUsize,
    buffers: usize,
    digest: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Run, String> {
    let peer = args.next().ok_or(USAGE)?;
    let peer = Peer::named(&peer).ok_or_else(|| {
        format!(
            "no reader '{peer}': one of {}",
            Peer::ALL.map(Peer::name).join(", ")
        )
    })?;
    let file = args.next().ok_or(USAGE)?;
    let mut run = Run {
        peer,
        file,
        pipe: false,
        threads: NonZeroUsize::new(2).expect("2 is not zero"),
        buffers: decompressed::BUFFERS,
        digest: false,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--pipe" => run.pipe = true,
            "--digest" => run.digest = true,
            "--threads" => {
                let n = args.next().ok_or("--threads needs a count")?;
                run.threads = n
                    .parse()
                    .map_err(|_| format!("--threads {n}: a count of at least 1"))?;
            }
            "--buffers" => {
                let n = args.next().ok_or("--buffers needs a count")?;
                run.buffers = n
                    .parse()
                    .ok()
                    .filter(|&buffers| buffers > 0)
                    .ok_or_else(|| format!("--buffers {n}: a count of at least 1"))?;
            }
            _ => return Err(format!("unknown argument '{arg}'\n{USAGE}")),
        }
    }
    Ok(run)
}

/// FILE, or the read end of a pipe that a thread fills with FILE's bytes.
fn source(path: &str, pipe: bool) -> io::Result<File> {
    let mut file =
        File::open(path).map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))?;
    if !pipe {
        return Ok(file);
    }
    let (reader, mut writer) = io::pipe()?;
    // Not joined: a reader that stops early (an error) closes the pipe, and this copy then fails
    // with a broken pipe, which is nobody's news; the process's exit ends the thread either way.
    thread::spawn(move || io::copy(&mut file, &mut writer));
    Ok(File::from(OwnedFd::from(reader)))
}

/// The decoded bytes counted, and hashed where asked.
fn drain(mut reader: impl Read, digest: Option<&mut DefaultHasher>) -> io::Result<u64> {
    let mut buf = vec![0; 256 * 1024];
    let mut count = 0;
    let mut digest = digest;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => return Ok(count),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        count += n as u64;
        if let Some(hasher) = digest.as_deref_mut() {
            hasher.write(&buf[..n]);
        }
    }
}

fn run(run: &Run) -> io::Result<String> {
    let reader = run
        .peer
        .open(source(&run.file, run.pipe)?, run.threads, run.buffers)?;
    if run.digest {
        let mut hasher = DefaultHasher::new();
        let count = drain(reader, Some(&mut hasher))?;
        Ok(format!("{count} {:016x}", hasher.finish()))
    } else {
        Ok(drain(reader, None)?.to_string())
    }
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("peers: {message}");
            return ExitCode::from(2);
        }
    };
    // Said once, from whichever thread panicked (a peer's worker too); the main thread's panic,
    // or one a peer carries over to it, is then caught below.
    panic::set_hook(Box::new(|info| eprintln!("panic: {info}")));
    match panic::catch_unwind(|| run(&args)) {
        Ok(Ok(count)) => {
            println!("{count}");
            ExitCode::SUCCESS
        }
        Ok(Err(e)) => {
            eprintln!("peers: {}: {e}", args.peer.name());
            ExitCode::FAILURE
        }
        Err(_) => ExitCode::from(101),
    }
}
