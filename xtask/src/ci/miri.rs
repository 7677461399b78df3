//! The bindings under Miri: `tests/uninit.rs` builds every generated value safe code can make and
//! reads it through `Debug`, `==` and `Hash`; Miri stops at the first read of an uninitialised
//! byte, which a native run would not notice. The nightly is pinned so the check means the same on
//! every run; installing it is idempotent.

use crate::exec::run_in;
use std::path::Path;

/// The nightly Miri runs on (a dated one: an undated nightly changes under the check).
pub const NIGHTLY: &str = "nightly-2026-05-20";

/// `cargo +NIGHTLY miri test -p cuda-mempool-sys --test uninit`, every major enabled.
pub fn uninit(root: &Path) -> Result<(), String> {
    run_in(
        root,
        "installing the nightly Miri runs on",
        "rustup",
        &[
            "toolchain",
            "install",
            NIGHTLY,
            "--profile",
            "minimal",
            "--component",
            "miri,rust-src",
            "--no-self-update",
        ],
        &[],
    )?;
    run_in(
        root,
        "Miri: no uninitialised read through a generated type",
        // rustup's proxy, which reads `+NIGHTLY` (`$CARGO` is the stable toolchain's own binary).
        "cargo",
        &[
            &format!("+{NIGHTLY}"),
            "miri",
            "test",
            "-p",
            "cuda-mempool-sys",
            "--locked",
            "--features",
            "cuda-11,cuda-12,cuda-13",
            "--test",
            "uninit",
        ],
        &[],
    )
}
