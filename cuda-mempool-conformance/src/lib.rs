//! Conformance suite for CUDA's stream-ordered memory allocator (PhOS indexes 820–833).
//!
//! The library holds the harness and the cases; `tests/conformance.rs` is the libtest-mimic entry
//! point (`cargo test -p conformance`). Trial names are `INDEX_API::case`, so
//! `cargo test -p conformance -- 826` runs one API. See the README for the environment variables.

// The suite exists to hand raw (possibly invalid) driver handles to the driver and judge its answer;
// helpers taking handles are safe to call by design (a bad handle is the case under test).
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod blame;
pub mod cases;
pub mod channel;
pub mod crumb;
pub mod cu;
pub mod deviations;
pub mod devices;
pub mod diff;
pub mod driver;
pub mod expect;
pub mod harness;
pub mod junit;
pub mod leaks;
pub mod ledger;
pub mod observe;
pub mod probe;
pub mod report;
pub mod scheduler;
pub mod suite;
pub mod worker;

/// The 14 APIs by PhOS index.
pub const APIS: &[(u32, &str)] = &[
    (820, "cuMemAllocAsync"),
    (821, "cuMemAllocFromPoolAsync"),
    (822, "cuMemFreeAsync"),
    (823, "cuMemPoolCreate"),
    (824, "cuMemPoolDestroy"),
    (825, "cuMemPoolExportPointer"),
    (826, "cuMemPoolExportToShareableHandle"),
    (827, "cuMemPoolGetAccess"),
    (828, "cuMemPoolGetAttribute"),
    (829, "cuMemPoolImportFromShareableHandle"),
    (830, "cuMemPoolImportPointer"),
    (831, "cuMemPoolSetAccess"),
    (832, "cuMemPoolSetAttribute"),
    (833, "cuMemPoolTrimTo"),
];

pub fn api_name(index: u32) -> &'static str {
    APIS.iter().find(|a| a.0 == index).map(|a| a.1).unwrap_or("unknown")
}
