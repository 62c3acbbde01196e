//! # linewright
//!
//! A line filter of one's own, from stdin or FILEs to stdout, with everything a Unix filter
//! should have: write what is done to a line (a [`Transform`]), and one call ([`Filter`]) makes
//! it a program.
//!
//! ```no_run
//! use linewright::{Filter, Transform};
//!
//! /// A line with its ASCII letters upper-cased.
//! struct Upper;
//!
//! impl Transform for Upper {
//!     fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
//!         out.extend(line.iter().map(u8::to_ascii_uppercase));
//!         out.push(b'\n');
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     Filter::new("upper", env!("CARGO_PKG_VERSION"))
//!         .about("Upper-case every line's ASCII letters")
//!         .run(Upper)
//! }
//! ```
//!
//! A filter that counts keeps a [`Tally`] beside its renderings, one a chunk of lines on
//! whichever core renders it, with no lock on a line's way; the toolkit merges them in input
//! order and hands the whole to [`end`](Tallying::end), which writes the summary after the lines
//! and says the exit status (docs/CONTRACT.md §13.4):
//!
//! ```no_run
//! use linewright::{Filter, Tallying, fields};
//! use std::{collections::BTreeMap, process::ExitCode};
//!
//! /// How many lines begin with each first word, as `awk '{c[$1]++} END {...}'` counts them.
//! struct FirstWords;
//!
//! impl Tallying for FirstWords {
//!     type Tally = BTreeMap<Vec<u8>, u64>; // a count a word, merged key by key
//!
//!     fn render_line(&self, counts: &mut Self::Tally, _: &mut Vec<u8>, line: &[u8]) {
//!         let word = fields(line).next().unwrap_or_default();
//!         *counts.entry(word.to_vec()).or_default() += 1; // no line passed on
//!     }
//!
//!     fn end(&self, counts: Self::Tally, out: &mut Vec<u8>) -> ExitCode {
//!         for (word, n) in counts {
//!             out.extend_from_slice(format!("{n} ").as_bytes());
//!             out.extend_from_slice(&word);
//!             out.push(b'\n');
//!         }
//!         ExitCode::SUCCESS
//!     }
//! }
//!
//! fn main() -> ExitCode {
//!     Filter::new("first-words", env!("CARGO_PKG_VERSION")).run(FirstWords)
//! }
//! ```
//!
//! The program it makes reads FILEs as `cat` does (`-` is stdin; one that cannot be read is told
//! and skipped), decodes gzip, zstd, xz, bzip2 and lz4 with `-z` (`--decoders` at once), prints
//! a summary with `--stats`, answers `--help` and `--version` with its own name and texts,
//! prints its manual page and shell completions with `--generate`, stops quietly when its reader
//! goes away (`| head -1`), tells each failure in one line and exits 0, 1 or 2 (a usage error).
//! Lines are rendered in parallel on the machine's cores ([`Batched`], its knobs `--threads`,
//! `--chunk-size` and `--queue`); [`Filter::run_with`] picks another [`Strategy`].
//!
//! A filter's own options and arguments are a clap `Args` of its own, parsed beside the toolkit's
//! and handed to what makes the transform ([`Filter::run_with_args`]): `grep PATTERN [FILE]...`,
//! its positional arguments before the FILEs; a name that clashes with the toolkit's is refused
//! at once. Its manual page is in its own manual, under its name and version.
//!
//! A transform writes how a line is rendered, and how much a rendering adds where it adds more
//! than a `\n` ([`most_added`](Transform::most_added): room made ahead, not a limit); writing
//! nothing drops the line. A chunk's rendering, a line at a time, comes with it (write it too
//! where a chunk has a faster way: a grep searches the chunk whole, [`lines_found`]; a tally by
//! a field finds each line's in the pass that finds its end, [`nth_fields`]). One that
//! spends real work on a line (a microsecond, say) says roughly how much
//! ([`cost_a_line`](Transform::cost_a_line)), so that `batched` shares its lines out between
//! its workers instead of rendering them on its reading thread; one whose filter exits as `grep`
//! does says so in [`exit_status`](Transform::exit_status). `examples/upper.rs`,
//! `examples/grep.rs` (`grep -F`, exit 1 where its tally says nothing matched),
//! `examples/redact.rs` (a fixed string replaced, `--replace WITH PATTERN`),
//! `examples/digest.rs` (a hash stretched over thousands of rounds a line), and the tallies
//! `examples/count-by.rs` (lines counted by a field, as `awk | sort | uniq -c`; `--sum` merges
//! such tallies) and `examples/wc.rs` (`wc`'s newlines, words and bytes) are whole filters.
//!
//! ## The toolkit inside
//!
//! The crate also builds the five binaries of the `pipelines` experiment (`std-baseline`,
//! `baseline`, `streamer`, `pipeline`, `batched`), which run [`SpaceCount`]: every line prefixed
//! with `[spaces: N]`. They differ only in how lines travel from framing to rendering, each a
//! [`strategy`] generic over its transform, so a filter of one's own runs the very code they run:
//!
//! ```text
//! input ──► frame ──► [ strategy: loop | task | stream | channels | threads ] ──► transform ──► output
//! ```
//!
//! A strategy can be driven directly, from any [`Input`] (or [`AsyncInput`]) to any writer, as
//! tests and benches do in memory:
//!
//! ```
//! use linewright::strategy::std_baseline;
//! use linewright::{Memory, SpaceCount, StdBaseline};
//!
//! let knobs = StdBaseline::default().buffer.knobs(); // the binaries' defaults
//! let mut out = Vec::new();
//! std_baseline::run(&knobs, SpaceCount, Memory::new(&b"a b\nc"[..]), &mut out)?;
//! assert_eq!(out, b"[spaces: 1]a b\n[spaces: 0]c\n");
//! # Ok::<(), linewright::Error>(())
//! ```
//!
//! or over real descriptors: [`FileInput`] and [`AsyncFileInput`] read FILEs as a filter reads
//! them, [`AsyncFile`] writes to one from a tokio strategy, and the framers of [`frame`] are the
//! ones the strategies cut lines with.
//!
//! The crate's face: at its root, 7 traits, 18 types, 5 functions and 2 constants; the modules
//! [`strategy`] (five, each its `run` and `Knobs`), [`frame`] (3 framers) and [`transform`]
//! (the same transform items as the root). The binaries' CLI and the edge (`Filter`'s stdio,
//! messages and exit status) are private.

pub mod frame;
pub mod strategy;
pub mod transform;

// The inner parts, each named in its own first lines; the few types a user meets are re-exported
// below. io, async_io: sources with cat's rules,
// gathering and when to write; sync and tokio. parallel: OS-thread machinery. thread_room: room
// for threads checked before they start. process: the edge (stdio, --stats, messages, exit
// status) and `Filter`. error: errors and failures handed on. quote: file names quoted in
// messages. cli: the options every filter shares, each strategy's knobs as options. stats:
// --stats. The kernel, the decoder and the descriptor facts are crates of their own (crates/).
mod async_io;
mod cli;
mod error;
mod io;
mod parallel;
mod process;
mod quote;
mod stats;
mod tally;
mod thread_room;

pub use async_io::{AsyncFile, AsyncFileInput, AsyncInput};
pub use cli::{Baseline, Batched, BufferArgs, Pipeline, StdBaseline, Streamer};
pub use error::Error;
pub use io::ranges::Range;
pub use io::{FileInput, Input, Memory, Piece, RangedInput};
pub use process::{Filter, Strategy};
pub use stats::Stats;
pub use tally::{Counts, INLINE_KEY, Tally, Tallying};
pub use transform::{
    Fields, MOST_ROOM_ADDED, SpaceCount, Transform, fields, lines_found, lines_in, nth_fields,
    words_in,
};
