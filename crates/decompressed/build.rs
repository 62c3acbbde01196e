//! `cfg(isal)` where Cargo.toml builds ISA-L (its target-specific `isal-sys`): gzip is then
//! decoded by ISA-L's inflate, elsewhere by flate2's zlib-rs (src/gzip.rs). The two conditions
//! are one: the target's OS and architecture, as Cargo.toml's `cfg(...)` reads them.

use std::env;

fn main() {
    println!("cargo:rustc-check-cfg=cfg(isal)");
    let target = |key| env::var(key).unwrap_or_default();
    let arch = target("CARGO_CFG_TARGET_ARCH");
    if target("CARGO_CFG_TARGET_OS") == "linux" && matches!(arch.as_str(), "x86_64" | "aarch64") {
        println!("cargo:rustc-cfg=isal");
    }
}
