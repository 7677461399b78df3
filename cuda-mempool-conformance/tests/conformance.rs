//! `cargo test -p conformance [-- FILTER]`: the conformance suite (libtest-mimic, harness = false).
//!
//! Environment:
//!   CONFORMANCE_REQUIRE=gpu,ipc,peer,host-pool,host-numa,cuda13   missing capability = failure
//!   CONFORMANCE_REPORT_DIR=DIR   where report.md / report.json go (default: target/conformance-report)
//!
//! The same binary runs child roles (CONFORMANCE_CHILD) before libtest-mimic reads its arguments.
//! Off Linux it says in one sentence that the suite runs on Linux only, and exits with 1.

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    conformance::suite::main()
}

#[cfg(not(target_os = "linux"))]
fn main() -> std::process::ExitCode {
    conformance::linux_only()
}
