//! # pipelines
//!
//! Line transformers that read stdin (or FILEs), prefix every line with `[spaces: N]` (the
//! number of ASCII spaces in it, `>6` from seven up) and write it to stdout, byte for byte
//! otherwise; and the harness that measures which strategy moves lines fastest. The contract is
//! in the README: output format, CLI, errors, live input, memory bounds.
//!
//! Five binaries in `src/bin/` differ only in how lines travel from framing to rendering;
//! everything else lives here, once:
//!
//! ```text
//! input ──► frame ──► [ strategy: loop | task | stream | channels | threads ] ──► kernel ──► output
//! ```
//!
//! | module | holds |
//! | --- | --- |
//! | [`kernel`] | spaces in a line, capped at 7; headers; a line or a chunk rendered (SIMD chosen at run time) |
//! | [`frame`] | complete lines, or chunks cut at line ends, out of reusable buffers |
//! | [`input`] | stdin or FILEs as one stream; the unreadable-FILE rule |
//! | [`output`] | large writes; write out when input goes idle |
//! | [`async_io`] | the same input and output for tokio, awaited; the runtime's closed-stdout rule |
//! | [`shared_lines`] | lines and batches of lines as shared `Bytes`, for streams and channels |
//! | [`parallel`] | OS-thread machinery: recycled buffers, input order restored, thread faults as errors |
//! | [`cli`] | the arguments every binary shares |
//! | [`exit`] | errors, their one line on stderr, exit codes, broken pipe |
//! | [`pipe`] | larger pipes on stdin and stdout |
//! | [`stats`] | `--stats`: counters and per-stage busy/waiting clocks |

pub mod async_io;
pub mod cli;
pub mod exit;
pub mod frame;
pub mod input;
pub mod kernel;
pub mod output;
pub mod parallel;
pub mod pipe;
pub mod shared_lines;
pub mod stats;
