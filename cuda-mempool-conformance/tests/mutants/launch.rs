//! The suite as a child of this test binary, under the mutation library as it ships (every path
//! to the driver hooked): the one command the mutants' list and every run start from, and the
//! switch that makes this binary the suite. The tests' shared `common` and `shimlib` are declared
//! here, the only place of the runner that reads them.

use std::process::Command;

#[path = "../common/mod.rs"]
pub mod common;
#[path = "../common/shimlib.rs"]
mod shimlib;
pub use common::run_suite_if_asked;

/// The suite in a child with a clean environment (`common::suite`), the mutation library on
/// LD_PRELOAD.
pub fn suite_under_library() -> Result<Command, String> {
    let mut cmd = common::suite()?;
    cmd.env("LD_PRELOAD", shimlib::path(shimlib::Variant::EveryPath)?);
    Ok(cmd)
}
