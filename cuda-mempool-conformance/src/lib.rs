//! Conformance suite for CUDA's stream-ordered memory allocator (PhOS indexes 820–833).
//!
//! `tests/conformance.rs` calls [`main`] (`cargo test -p conformance`). Trial names are
//! `INDEX_API::case`, so `cargo test -p conformance -- 826` runs one API. The settings are one
//! table, [`harness::settings`]; docs/guide/ has the map of where things are.
//!
//! Layers, each a folder, every import running downward:
//! 0. the ground floor, a crate of its own: [`conformance_model`], the result vocabulary
//!    (report.json as typed values: outcomes, kinds, timing, the machine, provenance), serde only,
//!    which every layer may import;
//! 1. [`driver`]: the driver API as the suite sees it (over [`os`], the few OS calls);
//! 2. [`harness`]: the machine, the case model, the typed results, child processes, the verdict;
//! 3. [`cases`], [`report`] and [`run`], beside each other, never importing one another;
//! 4. [`suite`]: `main`, the child roles and the only libtest-mimic code.

// The suite exists to hand raw (possibly invalid) driver handles to the driver and judge its answer;
// helpers taking handles are safe to call by design (a bad handle is the case under test).
#![allow(clippy::not_unsafe_ptr_arg_deref)]

// Linux only (fork, LD_PRELOAD, SCM_RIGHTS, /proc). Elsewhere the crate is [`LINUX_ONLY`] and
// [`linux_only`], every test and bench target's `main` is `linux_only`, and the unit tests are one
// test that fails with the sentence: `cargo test -p conformance` compiles, and fails at once saying
// why, instead of a page of compile errors.

/// What every test and bench target says off Linux, on stderr, before it exits with 1.
pub const LINUX_ONLY: &str = "conformance: the conformance suite runs on Linux only (it drives libcuda.so.1 \
                              with fork, LD_PRELOAD and POSIX fd passing), so nothing was tested on this \
                              target; test the bindings with `cargo test -p cuda-mempool-sys`.";

/// Off Linux, the `main` of every test and bench target: prints [`LINUX_ONLY`] on stderr and
/// returns exit code 1.
#[cfg(not(target_os = "linux"))]
pub fn linux_only() -> std::process::ExitCode {
    eprintln!("{LINUX_ONLY}");
    std::process::ExitCode::FAILURE
}

#[cfg(all(test, not(target_os = "linux")))]
mod not_linux {
    #[test]
    fn linux_only() {
        panic!("{}", super::LINUX_ONLY);
    }
}

#[cfg(target_os = "linux")]
pub mod os;

#[cfg(target_os = "linux")]
pub mod driver;

#[cfg(target_os = "linux")]
pub mod harness;

#[cfg(target_os = "linux")]
pub mod cases;
#[cfg(target_os = "linux")]
pub mod report;
#[cfg(target_os = "linux")]
pub mod run;

#[cfg(target_os = "linux")]
pub mod suite;

#[cfg(target_os = "linux")]
pub use suite::main;
