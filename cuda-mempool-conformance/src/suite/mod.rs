//! Layer 4, the suite: `main` (`entry`), shared by `tests/conformance.rs` and any harness that runs
//! the suite under a different libcuda (tests/shim.rs): child roles first (`roles`), then a command
//! (`commands`) or the coordinator — options (`options`), workers, probe, trials (`trials`),
//! `suite::no_leaks`, reruns (`rerun`), the report (`reporting`; also when the run is cut short:
//! `run::interrupt`).

mod commands;
mod entry;
mod options;
mod reporting;
pub mod rerun;
pub mod roles;
pub mod trials;

pub use entry::main;
