//! The harness's own programs (`src/bin/`): they drive and feed the pipelines binaries and are not
//! part of them.
//!
//! [`latency`] holds the latency probe's line format, its check of the output and its percentiles,
//! apart from the process plumbing so they are unit-tested.

pub mod latency;
