//! Conformance suite for CUDA's stream-ordered memory allocator (PhOS indexes 820–833).
//!
//! `tests/conformance.rs` calls [`main`] (`cargo test -p conformance`). Trial names are
//! `INDEX_API::case`, so `cargo test -p conformance -- 826` runs one API. The README lists the
//! environment variables and has a map of where things are.
//!
//! Layers, each a folder, every import running downward:
//! 1. [`driver`]: the driver API as the suite sees it (over [`os`], the few OS calls);
//! 2. [`harness`]: the machine, the case model, the typed results, child processes, the verdict;
//! 3. [`cases`], [`report`] and [`run`], beside each other, never importing one another;
//! 4. [`suite`]: `main`, the child roles and the only libtest-mimic code.

// The suite exists to hand raw (possibly invalid) driver handles to the driver and judge its answer;
// helpers taking handles are safe to call by design (a bad handle is the case under test).
#![allow(clippy::not_unsafe_ptr_arg_deref)]

// Linux only (fork, LD_PRELOAD, SCM_RIGHTS, /proc): elsewhere one sentence instead of a page of
// errors. Not in the crate's own unit-test build, so that `cargo test` says it once.
#[cfg(all(not(target_os = "linux"), not(test)))]
compile_error!(
    "the conformance suite (package `conformance`) runs on Linux only: it drives libcuda.so.1 with fork, \
     LD_PRELOAD and fd passing. Elsewhere, test the bindings with `cargo test -p cuda-mempool-sys`."
);

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
