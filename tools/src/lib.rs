//! The harness's own programs (`src/bin/`): they drive and feed the pipelines binaries and are not
//! part of them.
//!
//! [`latency`] holds the latency probe's line format, its check of the output and its percentiles,
//! apart from the process plumbing so they are unit-tested. [`text`] generates the text of a chosen
//! mean line length that `harness/linelength.sh` sweeps.

pub mod latency;
pub mod text;
