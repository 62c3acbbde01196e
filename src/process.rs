//! What every binary does around its strategy: stdin or FILEs in, stdout out, both pipes
//! enlarged, the strategy run (on a tokio runtime for the async ones), `--stats` printed, and the
//! exit status by [`error`](crate::error)'s policy. A binary's `main` is its arguments and one call
//! here.

use std::future::Future;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::process::ExitCode;

use crate::async_io::runtime::{self, Flavor};
use crate::async_io::{AsyncFile, AsyncFileInput};
use crate::cli::CommonArgs;
use crate::error::{self, Context, Error};
use crate::io::sources::Sources;
use crate::io::{FileInput, Stdout, fd};
use crate::stats::Stats;

/// Runs a sync strategy as the binary `program`, from stdin or FILEs to stdout.
pub fn run(
    program: &'static str,
    common: &CommonArgs,
    strategy: impl FnOnce(FileInput, Stdout) -> Result<Stats, Error>,
) -> ExitCode {
    error::exit_status(program, || {
        enlarge_stdio();
        let stdout = Stdout::open()?;
        let input = FileInput::new(sources(common), Some(watched(&stdout)?));
        let stats = strategy(input, stdout)?;
        finish(common, &stats);
        Ok(())
    })
}

/// Runs an async strategy as the binary `program` on a runtime of `flavor`, from stdin or FILEs
/// to stdout.
pub fn run_async<F: Future<Output = Result<Stats, Error>>>(
    program: &'static str,
    common: &CommonArgs,
    flavor: Flavor,
    strategy: impl FnOnce(AsyncFileInput, AsyncFile) -> F,
) -> ExitCode {
    error::exit_status(program, || {
        enlarge_stdio();
        let stdout = Stdout::open()?;
        let input = AsyncFileInput::new(sources(common), Some(watched(&stdout)?));
        let stats = runtime::block_on(flavor, || {
            strategy(input, AsyncFile::new(stdout.into_file(), true))
        })?;
        finish(common, &stats);
        Ok(())
    })
}

/// The sources the arguments name, decoded with `-z`.
fn sources(common: &CommonArgs) -> Sources {
    let mut sources = Sources::new(&common.files);
    sources.decompress(common.decompress);
    sources
}

/// A descriptor of `stdout` for the input to compare its sources with (`cat`'s rule) and to watch
/// for its reader going away.
fn watched(stdout: &Stdout) -> Result<OwnedFd, Error> {
    stdout
        .as_fd()
        .try_clone_to_owned()
        .context("opening stdout")
}

/// Larger pipes on stdin and stdout, where they are pipes.
fn enlarge_stdio() {
    fd::enlarge_pipe(io::stdin().as_fd());
    fd::enlarge_pipe(io::stdout().as_fd());
}

/// Prints the summary, if asked for, after a run that ended normally.
fn finish(common: &CommonArgs, stats: &Stats) {
    if common.stats {
        stats.print();
    }
}
