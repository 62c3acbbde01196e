//! Larger pipes on stdin and stdout.
//!
//! A Linux pipe holds 64 KiB by default, so every read from it returns at most that and the writer
//! on the other side blocks whenever it is full: many small hand-offs and context switches between
//! the processes of a shell pipeline. Asking for the largest size an unprivileged process may set
//! (`/proc/sys/fs/pipe-max-size`, 1 MiB by default) lets both sides move data in large pieces.

use std::fs;
use std::io;
use std::os::fd::AsFd;

use rustix::pipe::fcntl_setpipe_size;

/// The most this asks for even where the system allows more: past this, measurements showed no
/// gain, only memory held in the kernel.
const LARGEST: usize = 1 << 20;

/// Enlarges stdin and stdout where they are pipes. Anything else (a file, a terminal, /dev/null)
/// refuses the request, and that is fine: the size only matters for pipes.
pub fn enlarge_stdio() {
    let size = fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|max| max.trim().parse::<usize>().ok())
        .map_or(LARGEST, |max| max.min(LARGEST));
    let _ = fcntl_setpipe_size(io::stdin().as_fd(), size);
    let _ = fcntl_setpipe_size(io::stdout().as_fd(), size);
}
