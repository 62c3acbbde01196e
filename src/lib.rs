//! # pipelines
//!
//! Line transformers that read stdin (or FILEs), prefix every line with `[spaces: N]` (the
//! number of ASCII spaces in it, `>6` from seven up) and write it to stdout, byte for byte
//! otherwise; and the harness that measures which strategy moves lines fastest. The contract is
//! docs/CONTRACT.md: output format, CLI, errors, live input, memory bounds, hostile environments.
//!
//! Five binaries in `src/bin/` differ only in how lines travel from framing to rendering; each
//! strategy is library code here, generic over where its bytes come from and go to, and
//! everything else lives here once:
//!
//! ```text
//! input ──► frame ──► [ strategy: loop | task | stream | channels | threads ] ──► kernel ──► output
//! ```
//!
//! | module | holds |
//! | --- | --- |
//! | [`kernel`] | spaces in a line, capped at 7; headers; a line or a chunk rendered (SIMD chosen at run time) |
//! | [`frame`] | complete lines, chunks cut at line ends, or shared batches, out of reusable buffers |
//! | [`strategy`] | the five strategies, one file each, knobs as plain structs |
//! | [`io`] | sources with `cat`'s rules, gathering and when to write, descriptors, sync I/O |
//! | [`async_io`] | the same for tokio, split by role: runtime, file, input, output |
//! | [`parallel`] | OS-thread machinery: recycled buffers, input order restored, thread faults as errors |
//! | [`process`] | what every binary does around its strategy: stdio, `--stats`; the edge that tells failures and decides the exit status |
//! | [`error`] | errors: what failed and the OS text, the output named only by the edge; failures that do not stop a run, handed on |
//! | [`quote`] | file names quoted so every message stays one line |
//! | [`cli`] | the arguments every binary shares, sizes with suffixes, bounds on knobs |
//! | [`stats`] | `--stats`: counters and per-stage busy/waiting clocks |

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
