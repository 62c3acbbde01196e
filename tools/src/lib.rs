//! The harness's own programs (`src/bin/`): they drive and feed the pipelines binaries and are not
//! part of them.
//!
//! [`latency`] holds the latency probe's line format, its check of the output and its percentiles,
//! apart from the process plumbing so they are unit-tested. [`text`] generates the text of a chosen
//! mean line length that `harness/linelength.sh` sweeps. [`work`] is the transform that
//! `harness/work.sh` runs the strategies with: the space count and a set CPU time a line.

pub mod latency;
pub mod text;
pub mod work;
