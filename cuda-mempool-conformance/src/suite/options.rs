//! The run's options, read from its environment (the variables of `harness::settings`), all checked
//! before anything runs: a bad value is an error (exit code 2) before any trial starts.

use crate::harness::settings::{Partition, Request};
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
    pub(super) partition: Option<Partition>,
}
/// The run's settings (`harness::settings`, as the entry point read them), each checked in this
/// order, with what only a file or the library tells (the expectation file, the library under test,
/// the trials file).
pub(super) fn settings(s: &crate::harness::settings::Settings) -> Result<Settings, String> {
    s.plant_leaks.checked()?;
    s.entry.checked()?;
    probe::library_from_env(s)?;
    crate::harness::expect::load(s)?;
    let timeout = s.trial_timeout.checked()?;
    s.first_wait.checked()?;
    s.strict.checked()?;
    s.stress_checked()?;
    s.serial.checked()?;
    s.helper_connections.checked()?;
    s.checkpoint.checked()?;
    Ok(Settings {
        devices: s.devices.checked()?,
        required: s.required.checked()?,
        timeout,
        in_process: s.in_process.checked()?,
        chosen: trials::chosen(s)?,
        fail_fast: s.fail_fast.checked()?,
        lead: s.fail_fast_lead.checked()?,
        budget: s.run_budget.checked()?,
        verbose: s.verbose.checked()?,
        partition: s.partition.checked()?,
    })
}

/// `settings` with the `[[verified]]` entries of the expectation file they name, loaded now
/// (`harness::expect::load`): what an entry point hands down, the departure policy included
/// (`Settings::policy`). A file that cannot be read adds none: the coordinator refused the run
/// with its error first.
pub(super) fn with_expectations(
    settings: &crate::harness::settings::Settings,
) -> std::sync::Arc<crate::harness::settings::Settings> {
    let loaded = crate::harness::expect::load(settings).ok().flatten();
    std::sync::Arc::new(settings.with_verified(loaded.map(|e| e.verified.clone()).unwrap_or_default()))
}
