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

pub mod os;

pub mod driver;

pub mod harness;

pub mod cases;
pub mod report;
pub mod run;

pub mod suite;

pub use suite::main;
