//! The root of the `mutants` test target. On Linux: tests/mutants.rs (the suite once per mutant). Elsewhere the
//! suite cannot run, and `main` says so in one sentence on stderr and exits with 1, so that
//! `cargo test -p conformance` fails with that sentence rather than with compile errors.

#[cfg(target_os = "linux")]
#[path = "../mutants.rs"]
mod linux;

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    linux::main()
}

#[cfg(not(target_os = "linux"))]
fn main() -> std::process::ExitCode {
    conformance::linux_only()
}
