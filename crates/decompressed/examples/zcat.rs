//! `zcat -f [FILE]...`: each FILE (stdin where there is none, or for `-`) decoded to stdout,
//! whatever it holds; one that fails is told and the rest go on, exit status 1.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut names: Vec<_> = std::env::args_os().skip(1).collect();
    if names.is_empty() {
        names.push("-".into());
    }
    let threads = std::thread::available_parallelism().unwrap_or(std::num::NonZeroUsize::MIN);
    let mut out = io::stdout().lock();
    let mut status = ExitCode::SUCCESS;
    for name in names {
        let file = match name == "-" {
            true => io::stdin().as_fd().try_clone_to_owned().map(File::from),
            false => File::open(&name),
        };
        let reader = file.and_then(|file| decompressed::Reader::new(file, threads));
        if let Err(error) = reader.and_then(|mut reader| io::copy(&mut reader, &mut out)) {
            let _ = out.flush();
            eprintln!("zcat: {}: {error}", name.to_string_lossy());
            status = ExitCode::FAILURE;
        }
    }
    status
}
