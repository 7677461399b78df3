//! What the tests that run the whole suite as a child share: the switch that makes a test binary
//! be the suite, and a clean environment for it (none of the suite's settings leaks in from the
//! environment the test runs in; nextest's variables least of all, or the child would think each
//! trial is its own process).

use std::process::Command;

pub mod report;

/// Set in a child: this test binary runs `conformance::suite::main` instead of its own trials.
pub const RUN_SUITE: &str = "CONFORMANCE_TEST_RUN_SUITE";

/// The variables a run of the suite reads, cleared for the child so that only what a test sets
/// applies.
const SUITE_VARS: &[&str] = &[
    "NEXTEST",
    "NEXTEST_RUN_ID",
    "CONFORMANCE_REQUIRE",
    "CONFORMANCE_EXPECT",
    "CONFORMANCE_RERUN_FAILED",
    "CONFORMANCE_JUNIT",
    "CONFORMANCE_PLANT_LEAK",
    "CONFORMANCE_CRASH_TRIAL",
    "CONFORMANCE_WORKERS",
    "CONFORMANCE_DEVICES",
    "CONFORMANCE_STRESS_SECS",
    "CONFORMANCE_STRESS_SEED",
    "CONFORMANCE_MUTANT",
    "CONFORMANCE_SHIM_FAULTS",
    "CONFORMANCE_SHIM_DELAY_MS",
    "CONFORMANCE_SHIM_FIRST_WAIT_MS",
    "CONFORMANCE_FIRST_WAIT_MS",
    "CONFORMANCE_STRICT",
    "CONFORMANCE_NVML",
    "CONFORMANCE_TRIAL_TIMEOUT",
    "CONFORMANCE_ENTRY",
    "CONFORMANCE_TRIALS_FILE",
    "CONFORMANCE_PARTITION",
    "CONFORMANCE_SHIM_CALLS_FILE",
    "CONFORMANCE_RUN_BUDGET",
    "CONFORMANCE_VERBOSE",
    "LD_PRELOAD",
];

/// This test binary, as the suite, with a clean environment.
pub fn suite() -> Result<Command, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut c = Command::new(exe);
    c.env(RUN_SUITE, "1");
    for v in SUITE_VARS {
        c.env_remove(v);
    }
    Ok(c)
}

/// The start of a test binary's `main`: be the suite when asked to.
pub fn run_suite_if_asked() -> Option<std::process::ExitCode> {
    std::env::var_os(RUN_SUITE).map(|_| conformance::suite::main())
}

/// One suite at a time, for every trial of a test binary that runs one: suites side by side on one
/// GPU starve each other's importers and crash cases, and since issue 34 the caps trials hold most
/// of the device (libtest-mimic runs a binary's trials on parallel threads). Found 2026-11-24 in
/// tests/shim.rs (its "dlsym-mode stall"), 2026-11-25 in tests/reports.rs (88 OUT_OF_MEMORY failures).
#[allow(dead_code)] // tests/mutants.rs and tests/travel.rs run one suite at a time anyway
pub fn one_suite_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|p| p.into_inner())
}
