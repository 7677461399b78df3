//! The run's options, read from its environment (the variables of `harness::settings`), all checked
//! before anything runs: a bad value is an error (exit code 2) before any trial starts.

use crate::harness::devices::{request, Request};
use crate::harness::leaks;
use crate::harness::{probe, Cap};
use crate::suite::trials;
use std::time::Duration;

/// Default test threads (and so general worker processes, besides one per lane): the driver
/// creates contexts one at a time (H100, R580: 4 processes start in 0.6 s, 16 in 3.0 s), so more
/// workers cost more start-up than they save. Full runs on the H100 took 6.0 s with 3 workers,
/// 6.3 s with 4, 6.5 s with 6 and 7.0 s with 8 (docs/reliability.md).
const DEFAULT_PARALLEL: usize = 4;

pub(super) fn default_parallel() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(DEFAULT_PARALLEL)
}

/// CONFORMANCE_WORKERS=0 runs every trial in this process (crash cases still in children), the way
/// nextest's one-process-per-trial runs do; any other value is an error.
fn in_process_mode() -> Result<bool, String> {
    if std::env::var_os("NEXTEST").is_some() {
        return Ok(true);
    }
    match crate::os::setting("CONFORMANCE_WORKERS").as_deref() {
        None => Ok(false),
        Some("0") => Ok(true),
        Some("1") => Ok(false),
        Some(v) => Err(format!(
            "CONFORMANCE_WORKERS={v:?}: expected 0 (run trials in this process) or 1 (worker processes, the default); \
             the number of workers is --test-threads"
        )),
    }
}

/// Environment variables, checked before anything runs.
pub(super) struct Settings {
    pub(super) devices: Request,
    pub(super) required: Vec<Cap>,
    pub(super) timeout: Duration,
    pub(super) in_process: bool,
    /// CONFORMANCE_TRIALS_FILE's trials (None: all), and their order (a fail-fast run's).
    pub(super) chosen: Option<trials::Chosen>,
    /// CONFORMANCE_FAIL_FAST: stop at the first failure (`run::stop`).
    pub(super) fail_fast: bool,
    /// CONFORMANCE_FAIL_FAST_LEAD: how many of the chosen trials run before the rest (`run::stop`).
    pub(super) lead: usize,
    /// CONFORMANCE_RUN_BUDGET: the whole run's budget (`run::interrupt`).
    pub(super) budget: Option<Duration>,
    /// CONFORMANCE_VERBOSE: the last screen lists every ignored trial and failure.
    pub(super) verbose: bool,
    /// CONFORMANCE_PARTITION: this runner's shard of the run (None: all of it).
    pub(super) partition: Option<trials::Partition>,
}
pub(super) fn settings() -> Result<Settings, String> {
    leaks::plants()?;
    crate::driver::cu::Entry::from_env()?;
    probe::library_from_env()?;
    crate::harness::expect::load()?;
    let timeout = crate::harness::config::trial_timeout()?;
    crate::driver::departures::strict_from_env()?;
    crate::cases::load::settings(timeout)?;
    crate::run::serial_schedule()?;
    crate::harness::config::helper_connections()?;
    Ok(Settings {
        devices: request()?,
        required: crate::harness::config::required_caps()?,
        timeout,
        in_process: in_process_mode()?,
        chosen: trials::chosen()?,
        fail_fast: crate::run::stop::fail_fast_from_env()?,
        lead: crate::run::stop::lead_from_env()?,
        budget: crate::harness::config::run_budget()?,
        verbose: crate::harness::config::verbose()?,
        partition: trials::Partition::from_env()?,
    })
}
