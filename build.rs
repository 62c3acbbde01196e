//! Puts the commit the binaries are built from into their `--version`: `PIPELINES_VERSION` is
//! the crate's version and, in a git checkout of this crate, `git describe --always --dirty`
//! (e.g. `0.1.0 (commit 1c3678c-dirty)`); without git, or outside a checkout of this crate (a
//! `cargo install` from a packaged crate), the crate's version alone.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let version = env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let crate_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let text = match describe(&crate_dir) {
        Some(commit) => format!("{version} (commit {commit})"),
        None => version,
    };
    println!("cargo:rustc-env=PIPELINES_VERSION={text}");
}

/// `git describe --always --dirty` of the checkout holding `crate_dir`, if it is one whose top is
/// `crate_dir` (a packaged crate unpacked inside some other repository is not); and the
/// rerun-if-changed lines that keep it current: HEAD (a checkout) and the branch it names (a
/// commit), and the sources (what `--dirty` says of them). Not the index, which `git status`
/// rewrites, nor other branches' refs, which other worktrees move: each would rebuild everything.
fn describe(crate_dir: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        let output = Command::new("git")
            .args(args)
            .current_dir(crate_dir)
            .output()
            .ok()?;
        let text = String::from_utf8(output.stdout).ok()?;
        (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
    };
    let top = git(&["rev-parse", "--show-toplevel"])?;
    if Path::new(&top).canonicalize().ok()? != crate_dir.canonicalize().ok()? {
        return None;
    }
    let git_dir = PathBuf::from(git(&["rev-parse", "--absolute-git-dir"])?);
    let common_dir = crate_dir.join(git(&["rev-parse", "--git-common-dir"])?);
    // A detached HEAD holds the commit itself: HEAD is then the only ref to watch.
    let branch = git(&["symbolic-ref", "-q", "HEAD"]).map(|branch| common_dir.join(branch));
    let packed = common_dir.join("packed-refs");
    for watched in [
        git_dir.join("HEAD"),
        crate_dir.join("src"),
        crate_dir.join("crates"),
        crate_dir.join("Cargo.toml"),
        crate_dir.join("build.rs"),
    ]
    .into_iter()
    .chain(branch.into_iter().chain([packed]))
    // Cargo counts a path that does not exist as changed, every build: packed-refs may not.
    .filter(|watched| watched.exists())
    {
        println!("cargo:rerun-if-changed={}", watched.display());
    }
    git(&["describe", "--always", "--dirty"])
}
