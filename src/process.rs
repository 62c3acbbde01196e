//! What every binary does around its strategy: stdin or FILEs in, stdout out, both pipes
//! enlarged, the strategy run (on a tokio runtime for the async ones), `--stats` printed, and the
//! exit status by [`error`](crate::error)'s policy. A binary's `main` is its arguments and one call
//! here.

use std::future::Future;
use std::io;
use std::os::fd::AsFd;
use std::process::ExitCode;

use crate::async_io::runtime::{self, Flavor};
use crate::async_io::{AsyncFile, AsyncFileInput};
use crate::cli::CommonArgs;
use crate::error::{self, Error};
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
        let stats = strategy(FileInput::stdin_or_files(&common.files), Stdout::open()?)?;
        finish(common, &stats);
        Ok(())
    })
}

/// Runs an async strategy as the binary `program` on a runtime of `flavor`, from stdin or FILEs
/// to stdout, stopping when stdout's reader goes away even while input is idle.
pub fn run_async<F: Future<Output = Result<Stats, Error>>>(
    program: &'static str,
    common: &CommonArgs,
    flavor: Flavor,
    strategy: impl FnOnce(AsyncFileInput, AsyncFile) -> F,
) -> ExitCode {
    error::exit_status(program, || {
        enlarge_stdio();
        let watched = io::stdout().as_fd().try_clone_to_owned().ok();
        let stats = runtime::block_on(flavor, watched, || {
            let input = AsyncFileInput::stdin_or_files(&common.files);
            let output = Stdout::open().map(|stdout| AsyncFile::new(stdout.into_file(), true));
            async move { strategy(input, output?).await }
        })?;
        finish(common, &stats);
        Ok(())
    })
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
