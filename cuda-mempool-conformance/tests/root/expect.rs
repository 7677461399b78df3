//! The root of the `expect` test target. On Linux: tests/expect.rs (scoped expectations, flaky
//! trials, reruns). Elsewhere the suite cannot run, and `main` says so in one sentence on stderr and
//! exits with 1, so that `cargo test -p conformance` fails with that sentence rather than with
//! compile errors.

#[cfg(target_os = "linux")]
#[path = "../expect.rs"]
mod linux;

#[cfg(target_os = "linux")]
fn main() -> std::process::ExitCode {
    linux::main()
}

#[cfg(not(target_os = "linux"))]
fn main() -> std::process::ExitCode {
    conformance::linux_only()
}
