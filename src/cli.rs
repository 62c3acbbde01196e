//! The arguments every filter shares, flattened into each filter's command line; each
//! strategy's knobs as options ([`StdBaseline`], [`Baseline`], [`Streamer`], [`Pipeline`],
//! [`Batched`]), with the binaries' defaults and bounds; the parsers for counts and sizes; and
//! [`parse`]: what a command line asks for, its arguments or its manual page or a shell's
//! completions (`--generate`, [`generated`] from the same `clap` definitions as `--help` so that
//! none can drift from the others). Nothing here writes or ends the process: that is
//! [`process`](crate::process)'s, the edge.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;

use clap::builder::{RangedU64ValueParser, StringValueParser, TypedValueParser};
use clap::{ArgAction, Command, FromArgMatches, ValueEnum};
use clap_complete::Shell;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};

use crate::strategy::{batched, pipeline, std_baseline};

/// What every binary's `--help` says of the space count, after its options, and its manual page's
/// DESCRIPTION.
pub const TRANSFORM_HELP: &str = "Each line comes out as [spaces: N] and the line's bytes, \
then a newline. N counts the byte 0x20 (the ASCII space) only: tabs, \\r and other white \
space do not count. N is 0 to 6, and >6 for 7 or more. Every other byte passes through \
unchanged; a last line without a newline gets one.";

/// What every binary's `--version` says: the crate's version and, when built from a git
/// checkout, the commit (`git describe --always --dirty`, from build.rs).
pub const VERSION: &str = env!("PIPELINES_VERSION");

/// Input files, `--stats` and `--generate`: the same for every binary.
#[derive(Debug, clap::Args)]
pub struct CommonArgs {
    /// Files to read in order, as one stream, as `cat` does; `-` is stdin. None: stdin.
    pub files: Vec<PathBuf>,

    /// Decode each source that begins as gzip, zstd, xz, bzip2, LZ4 or .lzma does (every member,
    /// frame or stream); refuse compress's .Z; read any other as it is, as `zcat -f` does.
    #[arg(short = 'z', long)]
    pub decompress: bool,

    /// With -z, decode on up to N threads at once: the FILE read, and the next compressed
    /// regular FILEs ahead of their turn, each still read in order. 1 decodes one FILE at a time.
    /// Default: the number of cores.
    #[arg(long, value_name = "N", value_parser = positive_up_to(MOST_DECODERS))]
    pub decoders: Option<usize>,

    /// At exit, print lines, bytes in and out, wall time and throughput on stderr.
    #[arg(long)]
    pub stats: bool,

    /// Print the manual page (man) or a shell's completion script on stdout, and exit
    /// without reading input.
    #[arg(long, value_name = "WHAT", value_enum, exclusive = true)]
    pub generate: Option<Generate>,
}

/// The most `--decoders`: past the cores there is nothing to gain, and a typo must not start
/// thousands of threads.
pub const MOST_DECODERS: u64 = 1024;

impl CommonArgs {
    /// How many decoders `-z` may run at once: `--decoders`, or else the machine's cores (one
    /// where they cannot be told). Not a clap default, so that the manual page and completions
    /// are the same whatever machine made them.
    pub fn decoders(&self) -> usize {
        self.decoders.unwrap_or_else(cores)
    }
}

/// The machine's cores, or one where they cannot be told: the default of `--decoders` and
/// `--threads`, and `pipeline`'s runtime's workers. Asked once: the standard library reads the
/// cgroup's CPU quota files each time.
pub(crate) fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
}

/// What `--generate` prints: a manual page, or a shell's completion script.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Generate {
    /// The manual page, roff for man(1), which man -l reads from a file or a pipe.
    Man,
    /// bash's completions, for bash-completion's folder.
    CompleteBash,
    /// zsh's completions, for a file in a folder of $fpath, named _ and the program's name.
    CompleteZsh,
    /// fish's completions, for ~/.config/fish/completions/, named the program's name and .fish.
    CompleteFish,
    /// elvish's completions.
    CompleteElvish,
    /// PowerShell's completions.
    CompletePowershell,
}

/// The manual page's EXIT STATUS section: docs/CONTRACT.md §5, which `--help` has no room for.
const EXIT_STATUSES: [(&str, &str); 3] = [
    (
        "0",
        "All input read and written; also when the reader of stdout went away before the end \
         (as head -n 1 does once it has its line): the lines nobody reads are not an error.",
    ),
    (
        "1",
        "A failure, told in one line on stderr: the program's name, what failed, and why. An input FILE that \
         cannot be opened or read is reported and skipped, the others are still read.",
    ),
    (
        "2",
        "A usage error: an unknown option or a bad value, told on stderr; no input is read.",
    ),
];

/// What a binary's command line asks for.
#[derive(Debug)]
pub enum Request<A> {
    /// A run, with these arguments.
    Run(A),
    /// An answer, and no input read.
    Answer(Answer),
}

/// What a command line asks for instead of a run.
#[derive(Debug)]
pub enum Answer {
    /// `--generate WHAT`: [`generated`], printed on stdout.
    Generate(Generate),
    /// `--help`, `--version` or a usage error, as clap prints them (exit 0, or 2 for an error).
    Clap(clap::Error),
}

/// What the command line asks of the filter whose options `command` defines: its arguments, or
/// something else to answer.
pub fn parse<A: FromArgMatches>(command: &mut Command) -> Request<A> {
    let matches = match command.try_get_matches_from_mut(std::env::args_os()) {
        Ok(matches) => matches,
        Err(told) => return Request::Answer(Answer::Clap(told)),
    };
    if let Ok(Some(&what)) = matches.try_get_one::<Generate>("generate") {
        return Request::Answer(Answer::Generate(what));
    }
    match A::from_arg_matches(&matches) {
        Ok(args) => Request::Run(args),
        Err(told) => Request::Answer(Answer::Clap(told)),
    }
}

/// `what` for `command` (a filter's whole command line, its page in the manual `manual`), whole,
/// in memory: clap_complete panics on a failed write, so nothing is written until all of it is
/// made.
pub fn generated(what: Generate, mut command: clap::Command, manual: &str) -> Vec<u8> {
    let shell = match what {
        Generate::Man => return manual_page(command, manual),
        Generate::CompleteBash => Shell::Bash,
        Generate::CompleteZsh => Shell::Zsh,
        Generate::CompleteFish => Shell::Fish,
        Generate::CompleteElvish => Shell::Elvish,
        Generate::CompletePowershell => Shell::PowerShell,
    };
    let mut text = Vec::new();
    let name = command.get_name().to_owned();
    clap_complete::generate(shell, &mut command, name, &mut text);
    text
}

/// The manual page: clap_mangen's sections from the `--help` text (the transform, said after the
/// options in `--help`, is the page's DESCRIPTION), then EXIT STATUS; in ASCII, every other
/// character as groff's `\[uXXXX]`, since groff reads UTF-8 only through a preprocessor. Its
/// `.TH` names the program and its version as the page's source, and `manual` as its manual.
fn manual_page(command: clap::Command, manual: &str) -> Vec<u8> {
    let command = match command.get_after_help().cloned() {
        Some(description) => command.long_about(description).after_help(None::<&str>),
        None => command,
    };
    let mut page = Vec::new();
    // Into memory: a Vec takes every write.
    let _ = Man::new(command).manual(manual).render(&mut page);
    let mut exit_status = Roff::new();
    exit_status.control("SH", ["EXIT STATUS"]);
    for (status, meaning) in EXIT_STATUSES {
        exit_status
            .control("TP", [])
            .text([bold(status)])
            .text([roman(meaning)]);
    }
    page.extend_from_slice(exit_status.to_roff().as_bytes());
    let mut ascii = String::with_capacity(page.len());
    for c in String::from_utf8_lossy(&page).chars() {
        if c.is_ascii() {
            ascii.push(c);
        } else {
            let _ = write!(ascii, "\\[u{:04X}]", u32::from(c));
        }
    }
    ascii.into_bytes()
}

/// The largest buffer or chunk size any binary accepts, so that a typo is a usage error rather
/// than an allocation failure.
pub const LARGEST_SIZE: u64 = 1 << 30;

/// `--buffer-size`: the knob of the strategies that read and write through one buffer each.
#[derive(Debug, Clone, clap::Args)]
pub struct BufferArgs {
    /// Bytes per read, and output bytes gathered before a write, at most 1G; a longer line grows
    /// the buffer. Takes suffixes as dd does: K, M, G (×1024), KB, MB, GB (×1000).
    #[arg(long = "buffer-size", value_name = "BYTES", default_value = "128K",
          value_parser = size_up_to(LARGEST_SIZE))]
    pub size: usize,
}

impl BufferArgs {
    /// The knobs these options set.
    pub fn knobs(&self) -> std_baseline::Knobs {
        std_baseline::Knobs {
            buffer_size: self.size,
        }
    }
}

/// [`std_baseline`] as a filter runs it: one thread, one loop, a line at a time, synchronous
/// I/O; `--buffer-size`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StdBaseline {
    /// Its one knob.
    #[command(flatten)]
    pub buffer: BufferArgs,
}

/// [`baseline`](crate::strategy::baseline) as a filter runs it: the same loop as one tokio task;
/// `--buffer-size`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Baseline {
    /// Its one knob.
    #[command(flatten)]
    pub buffer: BufferArgs,
}

/// [`streamer`](crate::strategy::streamer) as a filter runs it: a stream of lines forwarded into
/// a sink; `--buffer-size`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Streamer {
    /// Its one knob.
    #[command(flatten)]
    pub buffer: BufferArgs,
}

/// The most lines per message, or messages per channel, of `pipeline`: past it they only hold
/// memory, and tokio's channels refuse capacities near `usize::MAX` by panicking.
const MOST_IN_PIPELINE: u64 = 1 << 20;

/// [`pipeline`] as a filter runs it: reader, renderer and writer tasks joined by channels;
/// `--batch` and `--queue`.
#[derive(Debug, Clone, clap::Args)]
pub struct Pipeline {
    /// Lines per message between tasks, at most 1048576. 1 hands each line on alone, as the
    /// original experiment did: the slowest setting, tens of MiB/s on short lines. For speed use
    /// 1000: the sweep (harness/sweep.sh) found 100 to 2000 lines a message fastest, about 5
    /// times --batch 1's rate on logs.
    #[arg(long, value_name = "LINES", default_value_t = 1,
          value_parser = positive_up_to(MOST_IN_PIPELINE))]
    pub batch: usize,
    /// Messages a channel holds before its sender waits, at most 1048576.
    // 32 by measurement: at --batch 1, throughput rises to about 16 and is flat up to 4096 but
    // noisy; at --batch 1000, smaller queues did slightly better. More only hold memory.
    #[arg(long, value_name = "N", default_value_t = 32,
          value_parser = positive_up_to(MOST_IN_PIPELINE))]
    pub queue: usize,
}

impl Pipeline {
    /// The knobs these options set; `clocks` for `--stats`.
    pub fn knobs(&self, clocks: bool) -> pipeline::Knobs {
        pipeline::Knobs {
            batch: self.batch,
            queue: self.queue,
            clocks,
        }
    }
}

/// The most threads, or queued chunks, of `batched`: past it they only cost memory, and soon
/// fail.
const MOST_IN_BATCHED: u64 = 1024;

/// [`batched`] as a filter runs it: chunks of lines rendered in parallel on OS threads;
/// `--threads`, `--chunk-size` and `--queue`. What [`Filter::run`](crate::Filter::run) runs.
#[derive(Debug, Clone, clap::Args)]
pub struct Batched {
    /// Worker threads rendering chunks, at most 1024 [default: the available cores]
    #[arg(long, value_name = "N", value_parser = positive_up_to(MOST_IN_BATCHED))]
    pub threads: Option<usize>,
    /// Bytes read into a chunk before it goes to a worker, at most 1G; a longer line grows its
    /// chunk. Takes suffixes as dd does: K, M, G (×1024), KB, MB, GB (×1000).
    #[arg(long, value_name = "BYTES", default_value = "256K",
          value_parser = size_up_to(LARGEST_SIZE))]
    pub chunk_size: usize,
    /// Chunks read ahead beyond one per worker, at most 1024 [default: the number of threads]
    #[arg(long, value_name = "N", value_parser = positive_up_to(MOST_IN_BATCHED))]
    pub queue: Option<usize>,
}

impl Batched {
    /// The knobs these options set, threads the machine's cores unless told; `clocks` for
    /// `--stats`.
    pub fn knobs(&self, clocks: bool) -> batched::Knobs {
        let threads = self.threads.unwrap_or_else(cores);
        batched::Knobs {
            threads,
            chunk_size: self.chunk_size,
            queue: self.queue.unwrap_or(threads),
            clocks,
        }
    }
}

/// The binaries' defaults: what a command line that gives none of these options sets, so that
/// each default is said once, in its option.
fn defaults<A: clap::Args>() -> A {
    let matches = A::augment_args(Command::new("defaults")).try_get_matches_from(["defaults"]);
    let defaults = matches.and_then(|matches| A::from_arg_matches(&matches));
    defaults.expect("every option has a default or is optional")
}

impl Default for BufferArgs {
    fn default() -> Self {
        defaults()
    }
}

impl Default for Pipeline {
    fn default() -> Self {
        defaults()
    }
}

impl Default for Batched {
    fn default() -> Self {
        defaults()
    }
}

/// A filter's command line: its own arguments `A` (none for the five binaries, `()`), then the
/// options every filter shares, then its strategy's. Its own come first so that its positional
/// arguments come before the FILEs, which take the rest.
#[derive(Debug, clap::Args)]
pub struct FilterArgs<S: clap::Args, A: clap::Args> {
    /// The filter's own options and arguments.
    #[command(flatten)]
    pub own: A,
    /// FILEs, `-z`, `--stats`, `--generate`.
    #[command(flatten)]
    pub common: CommonArgs,
    /// The strategy's knobs.
    #[command(flatten)]
    pub strategy: S,
}

/// Why a filter's own arguments (`own`'s) cannot stand beside the toolkit's (`toolkit`'s, built so
/// that `--help` and `--version` are among them): the first name an argument of `own` shares with
/// one of `toolkit` (an id, a short or a long name, aliases included), or a positional argument
/// of `own` that takes more than one value, which would leave the FILEs none. `None` where they
/// can.
pub fn clash(own: &Command, toolkit: &Command) -> Option<String> {
    let theirs: Vec<(String, &clap::Arg)> = toolkit
        .get_arguments()
        .flat_map(|arg| names(arg).into_iter().map(move |name| (name, arg)))
        .collect();
    own.get_arguments().find_map(|arg| {
        let takes_many = arg.is_positional()
            && (matches!(arg.get_action(), ArgAction::Append)
                || arg
                    .get_num_args()
                    .is_some_and(|values| values.max_values() > 1));
        if takes_many {
            return Some(format!(
                "its {} takes more than one value, which would leave the FILEs none",
                shown(arg)
            ));
        }
        let mine = names(arg);
        theirs.iter().find_map(|(name, toolkits)| {
            mine.contains(name).then(|| {
                format!(
                    "its {} is the toolkit's {} ({name})",
                    shown(arg),
                    shown(toolkits)
                )
            })
        })
    })
}

/// Every name `arg` answers to or is known by: its short and long names and their aliases, then
/// its id, as `-z`, `--decompress`, `id decompress`.
fn names(arg: &clap::Arg) -> Vec<String> {
    let shorts = arg
        .get_short()
        .into_iter()
        .chain(arg.get_all_short_aliases().into_iter().flatten());
    let longs = arg
        .get_long()
        .into_iter()
        .chain(arg.get_all_aliases().into_iter().flatten());
    let mut names: Vec<String> = shorts.map(|short| format!("-{short}")).collect();
    names.extend(longs.map(|long| format!("--{long}")));
    names.push(format!("id {}", arg.get_id()));
    names
}

/// `arg` as a message names it: its long name, or its short one, or its value's name.
fn shown(arg: &clap::Arg) -> String {
    match (arg.get_long(), arg.get_short()) {
        (Some(long), _) => format!("option --{long}"),
        (None, Some(short)) => format!("option -{short}"),
        (None, None) => format!("argument {}", arg.get_id().as_str().to_uppercase()),
    }
}

/// A parser for a count from 1 to `most`: 0, more, or a non-number is a usage error.
pub fn positive_up_to(most: u64) -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..=most)
}

/// A parser for a size in bytes from 1 to `most`, with an optional suffix as dd and head take
/// them: `K`, `M`, `G` (or `KiB`, `MiB`, `GiB`) for powers of 1024, `KB`, `MB`, `GB` for powers
/// of 1000. 0, more than `most`, or anything else is a usage error.
pub fn size_up_to(most: u64) -> impl TypedValueParser<Value = usize> {
    StringValueParser::new().try_map(move |text| match parse_size(&text) {
        Some(bytes) if (1..=most).contains(&bytes) => Ok(bytes as usize),
        Some(_) => Err(format!("{text} is not in 1..={most} bytes")),
        None => Err(format!(
            "'{text}' is not a size: a number, optionally followed by K, M, G, KB, MB or GB"
        )),
    })
}

/// `text` as a number of bytes, by the suffixes of [`size_up_to`]; `None` if it is not one, or
/// overflows.
fn parse_size(text: &str) -> Option<u64> {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(digits);
    let power: u32 = match suffix.chars().next() {
        None => 0,
        Some('K' | 'k') => 1,
        Some('M') => 2,
        Some('G') => 3,
        Some(_) => return None,
    };
    let base: u64 = match suffix.get(1..).unwrap_or("") {
        "" | "iB" => 1024,
        "B" => 1000,
        _ => return None,
    };
    number
        .parse::<u64>()
        .ok()?
        .checked_mul(base.checked_pow(power)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_dd_suffixes() {
        assert_eq!(parse_size("7"), Some(7));
        assert_eq!(parse_size("1K"), Some(1024));
        assert_eq!(parse_size("1k"), Some(1024));
        assert_eq!(parse_size("1KiB"), Some(1024));
        assert_eq!(parse_size("1KB"), Some(1000));
        assert_eq!(parse_size("256K"), Some(256 * 1024));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("2MB"), Some(2_000_000));
        assert_eq!(parse_size("1G"), Some(1 << 30));
    }

    #[test]
    fn anything_else_is_not_a_size() {
        for text in [
            "",
            "K",
            "1.5M",
            "-1",
            "1T",
            "1Mb",
            "1 M",
            "99999999999999999999G",
            "1Kx",
        ] {
            assert_eq!(parse_size(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_strategys_defaults_are_its_options_defaults() {
        assert_eq!(BufferArgs::default().size, 128 << 10);
        assert_eq!(StdBaseline::default().buffer.knobs().buffer_size, 128 << 10);
        let pipeline = Pipeline::default().knobs(true);
        assert_eq!(
            (pipeline.batch, pipeline.queue, pipeline.clocks),
            (1, 32, true)
        );
        let batched = Batched::default();
        assert_eq!((batched.threads, batched.chunk_size), (None, 256 << 10));
        let knobs = batched.knobs(false);
        assert_eq!((knobs.threads, knobs.queue), (cores(), cores()));
        let three = Batched {
            threads: Some(3),
            ..Batched::default()
        };
        assert_eq!(three.knobs(false).queue, 3);
    }

    /// The toolkit's command line with `batched`'s knobs, built, as a filter's own arguments
    /// are checked against it.
    fn clash_with_the_toolkit<A: clap::Args>() -> Option<String> {
        use clap::Args as _;
        let mut toolkit = FilterArgs::<Batched, ()>::augment_args(Command::new("filter"));
        toolkit.build();
        clash(&A::augment_args(Command::new("filter")), &toolkit)
    }

    /// A grep's own arguments, and a redactor's: none the toolkit has.
    #[derive(clap::Args)]
    struct Own {
        pattern: String,
        #[arg(short = 'r', long)]
        replace: Option<String>,
        #[arg(short = 'i', long, alias = "ignore")]
        ignore_case: bool,
    }

    #[derive(clap::Args)]
    struct ShortZ {
        #[arg(short = 'z')]
        zero_terminated: bool,
    }

    #[derive(clap::Args)]
    struct LongThreads {
        #[arg(long)]
        threads: usize,
    }

    #[derive(clap::Args)]
    struct AliasStats {
        #[arg(long, alias = "stats")]
        statistics: bool,
    }

    #[derive(clap::Args)]
    struct ShortH {
        #[arg(short = 'H')]
        heading: bool,
        #[arg(short = 'h')]
        header: bool,
    }

    #[derive(clap::Args)]
    struct Files {
        #[arg(long = "list")]
        files: String,
    }

    #[derive(clap::Args)]
    struct Patterns {
        patterns: Vec<String>,
    }

    /// docs/CONTRACT.md §13.1: a filter's own name that is the toolkit's too, or a positional
    /// argument of its own that would take the FILEs', is refused, named.
    #[test]
    fn a_filters_own_arguments_may_not_take_the_toolkits_names() {
        assert_eq!(clash_with_the_toolkit::<Own>(), None);
        assert_eq!(clash_with_the_toolkit::<()>(), None);
        for (clash, told) in [
            (
                clash_with_the_toolkit::<ShortZ>(),
                "its option -z is the toolkit's option --decompress (-z)",
            ),
            (
                clash_with_the_toolkit::<LongThreads>(),
                "its option --threads is the toolkit's option --threads (--threads)",
            ),
            (
                clash_with_the_toolkit::<AliasStats>(),
                "its option --statistics is the toolkit's option --stats (--stats)",
            ),
            (
                clash_with_the_toolkit::<ShortH>(),
                "its option -h is the toolkit's option --help (-h)",
            ),
            (
                clash_with_the_toolkit::<Files>(),
                "its option --list is the toolkit's argument FILES (id files)",
            ),
            (
                clash_with_the_toolkit::<Patterns>(),
                "its argument PATTERNS takes more than one value, which would leave the FILEs none",
            ),
        ] {
            assert_eq!(clash.as_deref(), Some(told));
        }
    }

    #[derive(Debug, clap::Parser)]
    struct Sized {
        #[arg(long, value_parser = size_up_to(LARGEST_SIZE))]
        size: usize,
    }

    #[test]
    fn sizes_are_bounded() {
        use clap::Parser;
        let size = |text: &str| Sized::try_parse_from(["x", "--size", text]).map(|s| s.size);
        assert_eq!(size("1M").unwrap(), 1 << 20);
        assert_eq!(size("1G").unwrap(), 1 << 30);
        assert!(size("0").is_err());
        assert!(size("2G").is_err());
        assert!(size("lots").is_err());
    }
}
