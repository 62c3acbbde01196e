//! # pipelines
//!
//! Line transformers that read stdin (or FILEs), prefix every line with `[spaces: N]` (the
//! number of ASCII spaces in it, `>6` from seven up) and write it to stdout, byte for byte
//! otherwise; and the harness that measures which strategy moves lines fastest. The contract is
//! docs/CONTRACT.md: output format, CLI, errors, live input, memory bounds, hostile environments.
//!
//! Five binaries in `src/bin/` differ only in how lines travel from framing to rendering; each
//! strategy is library code here, generic over the transform it renders lines with and over where
//! its bytes come from and go to, and everything else lives here once:
//!
//! ```text
//! input ──► frame ──► [ strategy: loop | task | stream | channels | threads ] ──► transform ──► output
//! ```
//!
//! | module | holds |
//! | --- | --- |
//! | [`transform`] | what is done to each line: the [`Transform`](transform::Transform) trait every strategy is generic over, and the space count |
//! | [`kernel`] | spaces in a line, capped at 7; headers; a line or a chunk rendered (SIMD chosen at run time) |
//! | [`frame`] | complete lines, chunks cut at line ends, or shared batches, out of reusable buffers |
//! | [`strategy`] | the five strategies, one file each, knobs as plain structs |
//! | [`io`] | sources with `cat`'s rules, gathering and when to write, descriptors, sync I/O |
//! | [`async_io`] | the same for tokio, split by role: runtime, file, input, output |
//! | [`parallel`] | OS-thread machinery: recycled buffers, input order restored, thread faults as errors |
//! | `thread_room` | room for threads checked before they start, so that `ulimit -v` is an error, not an abort |
//! | [`process`] | what every binary does around its strategy: stdio, `--stats`; the edge that tells failures and decides the exit status |
//! | [`error`] | errors: what failed and the OS text, the output named only by the edge; failures that do not stop a run, handed on |
//! | [`quote`] | file names quoted so every message stays one line |
//! | [`cli`] | the arguments every binary shares, sizes with suffixes, bounds on knobs |
//! | [`stats`] | `--stats`: counters and per-stage busy/waiting clocks |
//!
//! ## A transform of one's own
//!
//! The binaries run [`SpaceCount`](transform::SpaceCount). Any other [`Transform`] runs through
//! the same strategies: write how much a line's rendering adds at most and how a line is
//! rendered (a chunk's rendering, a line at a time, comes with them; write it too where a chunk
//! has a faster way), and hand it to a strategy's `run` in the space count's place. Generic, so
//! each strategy is compiled for it and a line's rendering is inlined where lines are framed.
//! A transform that spends real work on a line (a microsecond, say) should say roughly how much
//! ([`cost_a_line`](transform::Transform::cost_a_line)): `batched` then shares out between its
//! workers the lines its reading thread would otherwise render alone.
//!
//! ```
//! use pipelines::io::Memory;
//! use pipelines::strategy::std_baseline;
//! use pipelines::transform::Transform;
//!
//! /// A line with its ASCII letters upper-cased.
//! struct Upper;
//!
//! impl Transform for Upper {
//!     fn most_added(&self) -> usize {
//!         1 // the `\n`
//!     }
//!
//!     fn render_line(&self, out: &mut Vec<u8>, line: &[u8]) {
//!         out.extend(line.iter().map(u8::to_ascii_uppercase));
//!         out.push(b'\n');
//!     }
//! }
//!
//! let knobs = std_baseline::Knobs { buffer_size: 4096 };
//! let mut out = Vec::new();
//! std_baseline::run(&knobs, Upper, Memory::new(&b"a b\nc"[..]), &mut out)?;
//! assert_eq!(out, b"A B\nC\n");
//! # Ok::<(), pipelines::error::Error>(())
//! ```
//!
//! `examples/upper.rs` runs it from stdin (or FILEs) to stdout as the binaries do, with their
//! edge ([`process::filter`]: `cat`'s rules, `-z`, `--stats`, messages and exit statuses), through
//! `std-baseline` or, with `--batched`, `batched`:
//!
//! ```sh
//! printf 'a b\nc\n' | cargo run --example upper -- --batched
//! ```
//!
//! [`Transform`]: transform::Transform

pub mod async_io;
pub mod cli;
pub mod error;
pub mod frame;
pub mod io;
pub mod kernel;
pub mod parallel;
pub mod process;
pub mod quote;
pub mod stats;
pub mod strategy;
mod thread_room;
pub mod transform;
