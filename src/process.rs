//! What every binary does around its strategy: stdin or FILEs in, stdout out, both pipes
//! enlarged, the strategy run (on a tokio runtime for the async ones), `--stats` printed; and the
//! edge where failures are told and the exit status decided.
//!
//! The library below reports nothing: a strategy returns what ended it, and a driver hands on
//! each failure that does not ([`Failures`]). Here each is told in one line on stderr, named as
//! the contract names it (`NAME: what failed: os error text`, the output named `stdout`), and:
//!
//! - success: exit 0;
//! - stdout closed by the reader (`| head`): stop, print nothing, exit 0, as Unix filters do;
//! - any other failure that ends the run: told, exit 1;
//! - an input that could not be opened or read: told as it happens, the rest of the input still
//!   processed, exit 1 at the end;
//! - a panic anywhere (a thread tokio could not start, a worker's assertion) is caught and told in
//!   one line like any other failure, its message included: never a panic message over several
//!   lines or a backtrace, whatever `RUST_BACKTRACE` says.
//!
//! [`Filter`] is all of it in one call: the command line ([`cli::parse`]) made from the filter's
//! name and texts, its own arguments, the shared options and its [`Strategy`]'s knobs, and what
//! it asks for: a run, its transform observed (the lines it writes counted for `--stats`, its
//! exit status asked at the end), or an [`answer`] without one (`--generate`; and `--help`,
//! `--version` and usage errors, which clap prints, exiting 0 or 2).

use std::future::Future;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, PoisonError};
use std::thread;

use clap::{Args as _, Command};

use crate::async_io::runtime::{self, Flavor};
use crate::async_io::{AsyncFile, AsyncFileInput};
use crate::cli::{
    self, Answer, Baseline, Batched, CommonArgs, FilterArgs, Pipeline, Request, StdBaseline,
    Streamer, TRANSFORM_HELP, VERSION,
};
use crate::error::{Context, Error, Failures, panic_message};
use crate::io::sources::Sources;
use crate::io::{FileInput, Stdout};
use crate::stats::{LinesWritten, Stats};
use crate::strategy::{baseline, batched, pipeline, std_baseline, streamer};
use crate::tally::Tallying;
use fd_facts as fd;

/// How messages name the output.
const OUTPUT: &str = "stdout";

/// A line filter of one's own, whole: its [`Transform`](crate::Transform), or a
/// [`Tallying`] that counts, run from stdin or FILEs to stdout with
/// everything the toolkit's binaries have. FILEs read in order as `cat` reads them (`-` is stdin, a
/// missing one told and skipped), `-z` and `--decoders` for gzip, zstd and the other formats,
/// `--stats`, `--help` and `--version` with the filter's own name and texts, `--generate` for its
/// manual page and shell completions, the strategy's knobs as options with the binaries' defaults
/// and bounds, and the binaries' messages and exit statuses (0, 1 after a failure, 2 for a usage
/// error; a reader gone away, as in `| head -1`, is no failure). Its own options and arguments
/// stand beside them ([`run_with_args`](Filter::run_with_args)), and its transform may give a run
/// that failed nowhere another status ([`Transform::exit_status`](crate::Transform::exit_status),
/// [`Tallying::end`]).
///
/// The crate's front page makes one of a transform of its own; this one runs the binaries' space
/// count in one loop on one thread ([`StdBaseline`], its knob `--buffer-size`):
///
/// ```no_run
/// use linewright::{Filter, SpaceCount, StdBaseline};
///
/// fn main() -> std::process::ExitCode {
///     Filter::new("spaces", env!("CARGO_PKG_VERSION"))
///         .about("Prefix every line with [spaces: N]")
///         .run_with::<StdBaseline, _>(SpaceCount)
/// }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Filter {
    name: &'static str,
    version: &'static str,
    about: Option<&'static str>,
    description: Option<&'static str>,
    /// The manual its page belongs to, `.TH`'s last field: the filter's name, or the toolkit's
    /// for its five binaries.
    manual: &'static str,
}

impl Filter {
    /// The experiment's binary `name` (`std-baseline`, `batched`, ...), what `about` says: the
    /// space count ([`SpaceCount`](crate::SpaceCount)), with the version, description and
    /// manual (`pipelines`) every one of the five has.
    pub const fn space_count(name: &'static str, about: &'static str) -> Filter {
        Filter {
            manual: TOOLKIT_MANUAL,
            ..Filter::new(name, VERSION)
                .about(about)
                .description(TRANSFORM_HELP)
        }
    }

    /// The filter `name`, as its messages, `--help`, `--version` and manual page call it, at
    /// `version` (its crate's, `env!("CARGO_PKG_VERSION")`, for one).
    pub const fn new(name: &'static str, version: &'static str) -> Self {
        Filter {
            name,
            version,
            about: None,
            description: None,
            manual: name,
        }
    }

    /// What the filter is, in a line: the top of `--help`, the NAME of its manual page.
    pub const fn about(self, about: &'static str) -> Self {
        Filter {
            about: Some(about),
            ..self
        }
    }

    /// What the filter does to a line, at length: the end of `--help`, after the options, and
    /// the DESCRIPTION of its manual page.
    pub const fn description(self, description: &'static str) -> Self {
        Filter {
            description: Some(description),
            ..self
        }
    }

    /// Runs the filter with `transform` through [`Batched`]: chunks of lines rendered in parallel
    /// on worker threads, `--threads` the machine's cores unless told. Returns the status to exit
    /// with.
    ///
    /// It acts for the program on the program's own process, as a Unix filter does: the panic
    /// hook is replaced, once and for good, by one that prints nothing (a panic is told in one
    /// line as the run's failure instead); stdin and stdout, where they are pipes, are enlarged
    /// to what `/proc/sys/fs/pipe-max-size` allows, at most 1 MiB, for larger reads and writes;
    /// and messages go to stderr. The same holds for every `run_*` method.
    pub fn run<T>(self, transform: T) -> ExitCode
    where
        Batched: Strategy<T>,
    {
        self.run_with::<Batched, T>(transform)
    }

    /// Runs the filter with `transform` through the strategy `S`, its knobs the options of
    /// `S` (as [`StdBaseline`]'s `--buffer-size`). Returns the status to exit with.
    pub fn run_with<S: Strategy<T>, T>(self, transform: T) -> ExitCode {
        self.run_with_args_through::<S, (), T>(|()| transform)
    }

    /// Runs the filter with the transform `make` makes of the filter's own arguments `A`
    /// (`clap::Args`, derived), through [`Batched`]. `A`'s options and positional arguments
    /// stand beside the toolkit's in the same command line, its `--help`, manual page and
    /// completions, its positional ones before the FILEs (`grep PATTERN [FILE]...`):
    ///
    /// ```no_run
    /// # use linewright::{Filter, SpaceCount};
    /// #[derive(clap::Args)]
    /// struct Own {
    ///     /// Prefix every line with this too
    ///     #[arg(long, default_value = "")]
    ///     prefix: String,
    /// }
    /// # fn prefixed(prefix: String) -> SpaceCount { SpaceCount }
    /// # fn main() -> std::process::ExitCode {
    /// Filter::new("spaces", "1.0").run_with_args(|own: Own| prefixed(own.prefix))
    /// # }
    /// ```
    ///
    /// A name of `A`'s that is the toolkit's too (an option's long or short name, as `--threads`
    /// or `-z`, or an argument's id, as `files`), or a positional argument of `A`'s that takes
    /// more than one value (the FILEs would get none), is refused before the command line is
    /// read: one line on stderr, exit 1, the filter's own definition being at fault.
    pub fn run_with_args<A: clap::Args, T>(self, make: impl FnOnce(A) -> T) -> ExitCode
    where
        Batched: Strategy<T>,
    {
        self.run_with_args_through::<Batched, A, T>(make)
    }

    /// [`run_with_args`](Filter::run_with_args) through the strategy `S`, as
    /// [`run_with`](Filter::run_with) picks it.
    pub fn run_with_args_through<S: Strategy<T>, A: clap::Args, T>(
        self,
        make: impl FnOnce(A) -> T,
    ) -> ExitCode {
        let mut command = match self.command::<S, A>() {
            Ok(command) => command,
            Err(clash) => {
                let definition = Error::new("defining its options", io::Error::other(clash));
                return exit_status(self.name, io::stderr(), |_| Err(definition));
            }
        };
        match cli::parse::<FilterArgs<S, A>>(&mut command) {
            Request::Run(args) => args
                .strategy
                .filter(self.name, &args.common, make(args.own)),
            Request::Answer(told) => answer(told, command, self.manual),
        }
    }

    /// The filter's command line, its own arguments `A` first and then the toolkit's with `S`'s
    /// knobs; or why `A` cannot stand beside them.
    fn command<S: clap::Args, A: clap::Args>(&self) -> Result<Command, String> {
        let own = A::augment_args(Command::new(self.name));
        // Only arguments of its own can clash: the toolkit's command is built twice only where
        // there are some, not at each start of the five binaries.
        if own.get_arguments().next().is_some() {
            let mut toolkit = FilterArgs::<S, ()>::augment_args(Command::new(self.name));
            // Built, so that `--help` and `--version`, which clap adds then, are among its options.
            toolkit.build();
            if let Some(clash) = cli::clash(&own, &toolkit) {
                return Err(clash);
            }
        }
        Ok(FilterArgs::<S, A>::augment_args(Command::new(self.name))
            .version(self.version)
            .about(self.about)
            .after_help(self.description))
    }
}

/// The manual the five binaries' pages belong to: the experiment's name.
pub const TOOLKIT_MANUAL: &str = "pipelines";

/// A strategy as a [`Filter`] runs it with the transform `T`: its knobs as command-line options
/// (`clap`'s [`Args`](clap::Args)), and the run from stdin or FILEs to stdout. The five
/// strategies have one each: [`StdBaseline`], [`Baseline`], [`Streamer`], [`Pipeline`] and
/// [`Batched`]; each asks of `T` what its strategy's `run` does.
pub trait Strategy<T>: clap::Args {
    /// Runs `transform` with these knobs as the filter `program`, with the options every filter
    /// shares (`common`), and returns the status to exit with.
    fn filter(&self, program: &'static str, common: &CommonArgs, transform: T) -> ExitCode;
}

impl<T: Tallying> Strategy<T> for StdBaseline {
    fn filter(&self, program: &'static str, common: &CommonArgs, transform: T) -> ExitCode {
        let knobs = self.buffer.knobs();
        filter(program, common, transform, |transform, input, output| {
            std_baseline::run(&knobs, transform, input, output)
        })
    }
}

impl<T: Tallying> Strategy<T> for Baseline {
    fn filter(&self, program: &'static str, common: &CommonArgs, transform: T) -> ExitCode {
        let knobs = self.buffer.knobs();
        // The current-thread runtime, by measurement: a single task has nothing to run in
        // parallel, and the multi-thread runtime only moves the reactor onto another thread, so
        // every wake-up crosses threads. 1.1 GB of logs through pipes, median of 9:
        // current-thread 687 ms, multi-thread 697 ms.
        filter_async(
            program,
            common,
            Flavor::CurrentThread,
            transform,
            |transform, input, output| async move {
                baseline::run(&knobs, transform, input, output).await
            },
        )
    }
}

impl<T: Tallying> Strategy<T> for Streamer {
    fn filter(&self, program: &'static str, common: &CommonArgs, transform: T) -> ExitCode {
        let knobs = self.buffer.knobs();
        // The current-thread runtime, by measurement: 1.1 GB of logs through pipes, median of 9:
        // current-thread 1285 ms, multi-thread 1489 ms.
        filter_async(
            program,
            common,
            Flavor::CurrentThread,
            transform,
            |transform, input, output| async move {
                streamer::run(&knobs, transform, input, output).await
            },
        )
    }
}

impl<T: Tallying + Send + 'static> Strategy<T> for Pipeline {
    fn filter(&self, program: &'static str, common: &CommonArgs, transform: T) -> ExitCode {
        let knobs = self.knobs(common.stats);
        filter_async(
            program,
            common,
            Flavor::MultiThread,
            transform,
            |transform, input, output| async move {
                pipeline::run(&knobs, transform, input, output).await
            },
        )
    }
}

impl<T: Tallying + Sync> Strategy<T> for Batched {
    fn filter(&self, program: &'static str, common: &CommonArgs, transform: T) -> ExitCode {
        let knobs = self.knobs(common.stats);
        filter(program, common, transform, |transform, input, output| {
            batched::run(&knobs, transform, input, output)
        })
    }
}

/// Runs a sync strategy with `transform` as the binary `program`, a filter from stdin or FILEs to
/// stdout.
fn filter<T: Tallying>(
    program: &'static str,
    common: &CommonArgs,
    transform: T,
    strategy: impl FnOnce(T, FileInput, LinesWritten<Stdout>) -> Result<Stats, Error>,
) -> ExitCode {
    observed_run(program, common, |counted, failures| {
        let stdout = Stdout::open()?;
        let input = FileInput::new(sources(common), Some(watched(&stdout)?));
        let output = LinesWritten::new(stdout, counted);
        strategy(transform, input.handing_failures_to(failures), output)
    })
}

/// Runs an async strategy with `transform` as the binary `program` on a runtime of `flavor`, a
/// filter from stdin or FILEs to stdout.
fn filter_async<T: Tallying, F: Future<Output = Result<Stats, Error>>>(
    program: &'static str,
    common: &CommonArgs,
    flavor: Flavor,
    transform: T,
    strategy: impl FnOnce(T, AsyncFileInput, LinesWritten<AsyncFile>) -> F,
) -> ExitCode {
    observed_run(program, common, |counted, failures| {
        let stdout = Stdout::open()?;
        let input = AsyncFileInput::new(sources(common), Some(watched(&stdout)?))
            .handing_failures_to(failures);
        runtime::block_on(flavor, || {
            let output = LinesWritten::new(AsyncFile::new(stdout.into_file(), true), counted);
            strategy(transform, input, output)
        })
    })
}

/// Runs `run` as the binary `program`, under the policy above, handing it where the newlines
/// it writes are counted (for `--stats`, and only then), and returns the status to exit with: a
/// failure's, or else the one the run ended with.
fn observed_run(
    program: &'static str,
    common: &CommonArgs,
    run: impl FnOnce(Option<Arc<AtomicU64>>, Failures) -> Result<Stats, Error>,
) -> ExitCode {
    quiet_panics();
    let lines_written = Arc::new(AtomicU64::new(0));
    let counted = common.stats.then(|| Arc::clone(&lines_written));
    let mut status = ExitCode::SUCCESS;
    let ran = exit_status(program, io::stderr(), |failures| {
        enlarge_stdio();
        let mut stats = run(counted, failures)?;
        stats.lines_written = lines_written.load(Ordering::Relaxed);
        status = stats.status;
        Ok(summary(program, common, &stats))
    });
    if ran == ExitCode::SUCCESS {
        status
    } else {
        ran
    }
}

/// Answers a command line, of the filter whose options `command` defines and whose manual page
/// belongs to `manual`, that asks for no run: `--generate`'s text written on stdout under the
/// policy above, or clap's answer.
pub fn answer(answer: Answer, command: Command, manual: &str) -> ExitCode {
    match answer {
        Answer::Generate(what) => {
            let program = command.get_name().to_owned();
            let text = cli::generated(what, command, manual);
            exit_status(&program, io::stderr(), |_| {
                let mut stdout = io::stdout().lock();
                let written = stdout.write_all(&text).and_then(|()| stdout.flush());
                written.map(|()| None).map_err(Error::writing)
            })
        }
        Answer::Clap(told) => told.exit(),
    }
}

/// The sources the arguments name, decoded with `-z`.
fn sources(common: &CommonArgs) -> Sources {
    let mut sources = Sources::new(&common.files);
    sources.decompress(common.decompress);
    sources.decoders(common.decoders());
    sources
}

/// Silences the panic hook, once for the whole process: the hook is the process's, not this
/// thread's, and is never put back, since the process ends here. The default hook prints the
/// message over several lines, and a backtrace on request; [`exit_status`] tells the panic
/// instead, once, as an error, and a worker thread's panic reaches it as an error of its own (see
/// `parallel::join`).
fn quiet_panics() {
    static QUIET: Once = Once::new();
    QUIET.call_once(|| panic::set_hook(Box::new(|_| {})));
}

/// Runs `body` as the binary `program` under the policy above, handing it where the failures
/// that do not end the run go, and returns the status to exit with. Failures are told on
/// `stderr`, and the summary `body` ends with, if any, printed there after them.
fn exit_status<W: Write + Send + 'static>(
    program: &str,
    stderr: W,
    body: impl FnOnce(Failures) -> Result<Option<String>, Error>,
) -> ExitCode {
    let teller = Arc::new(Teller {
        program: program.to_owned(),
        stderr: Mutex::new(stderr),
        told: AtomicBool::new(false),
    });
    let failures = {
        let teller = Arc::clone(&teller);
        Failures::handed_to(move |error| teller.tell(error))
    };
    let ended = panic::catch_unwind(AssertUnwindSafe(|| body(failures)));
    teller.status(ended)
}

/// Where a run's failures are told, and whether one was.
struct Teller<W> {
    program: String,
    stderr: Mutex<W>,
    told: AtomicBool,
}

impl<W: Write> Teller<W> {
    /// Tells `error` in one line.
    fn tell(&self, error: Error) {
        self.told.store(true, Ordering::Relaxed);
        self.print(&format!(
            "{}: {}\n",
            self.program,
            error.naming_output(OUTPUT)
        ));
    }

    /// Prints `text` on stderr.
    fn print(&self, text: &str) {
        let mut stderr = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
        // Nothing is left to tell if stderr itself is gone, and a panic would be worse.
        let _ = stderr.write_all(text.as_bytes());
    }

    /// The status to exit with, once the run has `ended` (or panicked), its end told if it is a
    /// failure, its summary printed if it has one.
    fn status(&self, ended: thread::Result<Result<Option<String>, Error>>) -> ExitCode {
        match ended {
            Ok(Ok(Some(summary))) => self.print(&summary),
            Ok(Ok(None)) => {}
            Ok(Err(error)) if error.is_broken_pipe() => {}
            Ok(Err(error)) => self.tell(error),
            Err(panic) => self.tell(Error::new(
                "internal error",
                io::Error::other(panic_message(&*panic)),
            )),
        }
        if self.told.load(Ordering::Relaxed) {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        }
    }
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

/// The summary to print after a run that ended normally, if asked for.
fn summary(program: &str, common: &CommonArgs, stats: &Stats) -> Option<String> {
    common.stats.then(|| stats.summary(program))
}

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;

    use super::*;

    /// Stderr in memory, shared with the teller.
    #[derive(Clone, Default)]
    struct Told(Arc<Mutex<Vec<u8>>>);

    impl Write for Told {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// The status `body` exits with, run as `prog`, and what it told on stderr.
    fn ran(body: impl FnOnce(Failures) -> Result<Option<String>, Error>) -> (ExitCode, String) {
        let told = Told::default();
        let status = exit_status("prog", told.clone(), body);
        let stderr = String::from_utf8(told.0.lock().unwrap().clone()).unwrap();
        (status, stderr)
    }

    /// A write of `bytes` to `output` as the output is written: a failure names no file.
    fn write_to(mut output: impl Write, bytes: &[u8]) -> Result<Option<String>, Error> {
        output
            .write_all(bytes)
            .map(|()| None)
            .map_err(Error::writing)
    }

    fn dev_full() -> std::fs::File {
        OpenOptions::new().write(true).open("/dev/full").unwrap()
    }

    /// A grep's own arguments.
    #[derive(Debug, clap::Args)]
    struct Own {
        pattern: String,
        #[arg(long, default_value = "")]
        replace: String,
    }

    /// docs/CONTRACT.md §13.1: a filter's own arguments in one command line with the toolkit's,
    /// in any order but its positional ones first; one that clashes refused before any is read.
    #[test]
    fn a_filters_own_arguments_stand_beside_the_toolkits_its_positional_ones_first() {
        use clap::FromArgMatches;
        let filter = Filter::new("f", "1.0");
        let command = filter.command::<Batched, Own>().unwrap();
        let line = [
            "f",
            "--replace",
            "x",
            "-z",
            "pat",
            "a",
            "-",
            "b",
            "--threads",
            "2",
        ];
        let matches = command.try_get_matches_from(line).unwrap();
        let args = FilterArgs::<Batched, Own>::from_arg_matches(&matches).unwrap();
        assert_eq!((&*args.own.pattern, &*args.own.replace), ("pat", "x"));
        assert_eq!(
            args.common.files,
            ["a", "-", "b"].map(std::path::PathBuf::from)
        );
        assert!(args.common.decompress);
        assert_eq!(args.strategy.threads, Some(2));
        #[derive(Debug, clap::Args)]
        struct Decoders {
            #[arg(long)]
            decoders: bool,
        }
        assert_eq!(
            filter.command::<StdBaseline, Decoders>().unwrap_err(),
            "its option --decoders is the toolkit's option --decoders (--decoders)"
        );
    }

    #[test]
    fn success_exits_0_telling_nothing() {
        assert_eq!(ran(|_| Ok(None)), (ExitCode::SUCCESS, String::new()));
    }

    #[test]
    fn a_summary_is_printed_after_the_failures_told() {
        let (status, stderr) = ran(|mut failures| {
            failures.add(write_to(dev_full(), b"x").unwrap_err());
            Ok(Some("summary\n".to_owned()))
        });
        assert_eq!(status, ExitCode::FAILURE);
        assert_eq!(
            stderr,
            "prog: writing stdout: No space left on device (os error 28)\nsummary\n"
        );
        let stats = Stats::start();
        let common = |stats| CommonArgs {
            files: Vec::new(),
            decompress: false,
            decoders: None,
            stats,
            generate: None,
        };
        assert_eq!(summary("prog", &common(false), &stats), None);
        let asked = summary("prog", &common(true), &stats).unwrap();
        assert!(asked.starts_with("prog: 0 lines in, 0 lines out, 0 bytes in, 0 bytes out, "));
    }

    #[test]
    fn a_failure_told_earlier_makes_it_exit_1() {
        let missing = "/nonexistent/pipelines-process-test";
        let (status, stderr) = ran(|mut failures| {
            let error = std::fs::File::open(missing).context(format!("opening {missing}"));
            failures.add(error.unwrap_err());
            Ok(None)
        });
        assert_eq!(status, ExitCode::FAILURE);
        assert_eq!(
            stderr,
            format!("prog: opening {missing}: No such file or directory (os error 2)\n")
        );
    }

    #[test]
    fn a_broken_pipe_exits_0_silently() {
        let (reader, writer) = io::pipe().unwrap();
        drop(reader);
        assert_eq!(
            ran(|_| write_to(writer, b"x")),
            (ExitCode::SUCCESS, String::new())
        );
        assert_eq!(
            ran(|_| Err(Error::reader_gone())),
            (ExitCode::SUCCESS, String::new())
        );
    }

    #[test]
    fn a_broken_pipe_after_a_failure_still_exits_1() {
        let (status, stderr) = ran(|mut failures| {
            failures.add(write_to(dev_full(), b"x").unwrap_err());
            Err(Error::reader_gone())
        });
        assert_eq!(status, ExitCode::FAILURE);
        assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    }

    #[test]
    fn any_other_failure_is_one_line_naming_stdout() {
        assert_eq!(
            ran(|_| write_to(dev_full(), b"x")),
            (
                ExitCode::FAILURE,
                "prog: writing stdout: No space left on device (os error 28)\n".to_owned()
            )
        );
    }

    #[test]
    fn a_panic_is_one_line_whatever_it_holds() {
        let line = |panicking: fn() -> Result<Option<String>, Error>| {
            let (status, stderr) = ran(|_| panicking());
            assert_eq!(status, ExitCode::FAILURE);
            stderr
        };
        assert_eq!(
            line(|| panic::panic_any("a &str")),
            "prog: internal error: a &str\n"
        );
        assert_eq!(
            line(|| panic::panic_any(String::from("a String"))),
            "prog: internal error: a String\n"
        );
        assert_eq!(
            line(|| panic::panic_any(7_u8)),
            "prog: internal error: a panic\n"
        );
        assert_eq!(
            line(|| panic!("two\nlines, {}", 2)),
            "prog: internal error: two lines, 2\n"
        );
    }
}
