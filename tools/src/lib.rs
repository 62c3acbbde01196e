//! The harness's own programs (`src/bin/`): they drive and feed the pipelines binaries and are not
//! part of them.
