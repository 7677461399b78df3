//! The one read of the run's settings: the `CONFORMANCE_*` variables a run takes (the `User` and
//! `TestOnly` rows of the table), read at each process's entry point ([`Settings::at_entry`]) into
//! one typed value, each setting with the error its text was if it was unusable, and handed down
//! from there as a value (no global holds it). The coordinator checks them all before anything runs
//! (exit code 2); a child reads its own at its entry point, from the environment its parent gave it,
//! and takes the values, whose text its parent has checked. The driver floor gets what it needs as
//! values made from them: the entry mode (`driver::cu::load`), the run's [`Deadline`]
//! ([`Settings::deadline`]) and the departure policy (`harness::case::Env`). Not here:
//! CONFORMANCE_IPC_FAULT (test-only, read by the importer child it breaks); the `Child` rows are a
//! protocol between the suite and its children, read by the role they start, but for the planned
//! wait (CONFORMANCE_FIRST_WAIT_MS), which every process's deadline takes.

use super::parse::{self, Partition, Request};
use crate::driver::deadline::{Deadline, FIRST_WAIT_VAR};
use crate::driver::departures::Policy;
use crate::driver::entry::Entry;
use crate::harness::cap::Cap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A setting whose text is not one it accepts: the message names the variable, the value and what
/// it accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingError {
    /// The variable.
    pub var: &'static str,
    pub message: String,
}

impl std::fmt::Display for SettingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SettingError {}

impl From<SettingError> for String {
    fn from(e: SettingError) -> String {
        e.message
    }
}

/// One setting's typed value: what its text says, or its default where the text is unusable (and
/// then the error, for the coordinator to refuse the run with).
#[derive(Clone, Debug)]
pub struct Parsed<T> {
    value: T,
    error: Option<SettingError>,
}

impl<T> Parsed<T> {
    /// `var`'s text (as `text` reads it) parsed by `parse`; where it is unusable, the value unset gives.
    fn read(
        var: &'static str,
        text: &impl Fn(&str) -> Option<String>,
        parse: impl Fn(Option<&str>) -> Result<T, String>,
    ) -> Parsed<T> {
        match parse(text(var).as_deref()) {
            Ok(value) => Parsed { value, error: None },
            Err(message) => Parsed {
                value: parse(None).expect("every setting accepts being unset"),
                error: Some(SettingError { var, message }),
            },
        }
    }
}

impl<T: Clone> Parsed<T> {
    /// The value (the default where the text was unusable: a child, whose parent checked it).
    pub fn value(&self) -> T {
        self.value.clone()
    }

    /// The value, or the error its text was (the coordinator's check).
    pub fn checked(&self) -> Result<T, SettingError> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(self.value.clone()),
        }
    }
}

/// Every setting of a run, typed. Paths and names the suite takes as they are have no error.
#[derive(Clone, Debug)]
pub struct Settings {
    pub devices: Parsed<Request>,
    /// CONFORMANCE_DEVICE_LOCK (None: unset or empty).
    pub device_lock: Option<PathBuf>,
    pub entry: Parsed<Entry>,
    /// CONFORMANCE_EXPECT, the file's path (None: unset or blank); `harness::expect` reads it.
    pub expect: Option<String>,
    pub fail_fast: Parsed<bool>,
    pub fail_fast_lead: Parsed<usize>,
    pub helper_connections: Parsed<Option<u32>>,
    /// CONFORMANCE_JUNIT, the file to write.
    pub junit: Option<String>,
    /// CONFORMANCE_LIBRARY, the library under test (a readable ELF file).
    pub library: Parsed<Option<String>>,
    /// CONFORMANCE_NVML, else the system's NVML.
    pub nvml: String,
    pub partition: Parsed<Option<Partition>>,
    /// CONFORMANCE_REPORT_DIR (None: unset or empty, the default folder).
    pub report_dir: Option<PathBuf>,
    pub required: Parsed<Vec<Cap>>,
    pub rerun_failed: Parsed<u32>,
    pub run_budget: Parsed<Option<Duration>>,
    /// CONFORMANCE_SCHEDULE=serial.
    pub serial: Parsed<bool>,
    pub stress_secs: Parsed<Duration>,
    /// None: the clock's, at each trial.
    pub stress_seed: Parsed<Option<u64>>,
    pub strict: Parsed<bool>,
    /// CONFORMANCE_TRIALS_FILE, the file's path; `suite::trials` reads it.
    pub trials_file: Option<OsString>,
    pub trial_timeout: Parsed<Duration>,
    /// CONFORMANCE_FIRST_WAIT_MS (a `Child` row): the wait at each new process's first GPU work that
    /// the run plans with, as the coordinator handed it down (zero: none, or the coordinator before
    /// it planned: [`Settings::with_first_wait`]).
    pub first_wait: Parsed<Duration>,
    /// The `[[verified]]` entries of the expectation file CONFORMANCE_EXPECT names ((departure id or
    /// `*`, driver branch)): empty as read, filled once the entry point has loaded the file
    /// ([`Settings::with_verified`]).
    pub verified: Vec<(String, u32)>,
    pub verbose: Parsed<bool>,
    /// CONFORMANCE_WORKERS=0, or a run under nextest: trials in this process.
    pub in_process: Parsed<bool>,
    /// CONFORMANCE_CRASH_TRIAL (test-only): the trial that crashes its process.
    pub crash_trial: Option<String>,
    /// CONFORMANCE_PLANT_LEAK (test-only): the leaks to plant.
    pub plant_leaks: Parsed<Vec<&'static str>>,
    /// CONFORMANCE_CHECKPOINT: the checkpoint leg's engine (`Engine::Off`: no leg).
    pub checkpoint: Parsed<parse::Engine>,
}

impl Settings {
    /// Read at a process's entry point (`suite::main`, which child roles go through too; a test
    /// binary that runs trials; the mutation runner's setup): every setting from this process's
    /// environment. Called once per process; the value is handed down.
    pub fn at_entry() -> Arc<Settings> {
        Arc::new(Settings::from_env())
    }

    /// Every setting from this process's environment (`os::setting`, the one read of it).
    pub fn from_env() -> Settings {
        use parse::MAX_CONNECTIONS_VAR;
        let nextest = std::env::var_os("NEXTEST").is_some();
        let own_connections = std::env::var_os(MAX_CONNECTIONS_VAR).is_some();
        Settings::read_with(crate::os::setting_os, nextest, own_connections)
    }

    /// The settings `vars` give (`(name, text)`; any other unset), as in a process outside nextest
    /// with no CUDA_DEVICE_MAX_CONNECTIONS of its own: for tests, which build their own.
    pub fn from_vars(vars: &[(&str, &str)]) -> Settings {
        let vars: Vec<(String, OsString)> = vars.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        Settings::read_with(
            |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            false,
            false,
        )
    }

    /// The settings an unset environment gives: for tests, and for a stand-in `Env` whose rows are
    /// only listed, never run (`cases::edges`).
    pub fn unset() -> Settings {
        Settings::from_vars(&[])
    }

    /// Read and parse every setting, each variable's text as `lookup` gives it (None: unset); under
    /// nextest (`nextest`) or not, with a CUDA_DEVICE_MAX_CONNECTIONS of the run's own
    /// (`own_connections`) or not.
    fn read_with(lookup: impl Fn(&str) -> Option<OsString>, nextest: bool, own_connections: bool) -> Settings {
        use parse::*;
        // A setting's text (None: unset, or not UTF-8 as `std::env::var` failing).
        let text = |var: &str| lookup(var).and_then(|v| v.into_string().ok());
        // A setting that is a path (None: unset or empty).
        let path = |var: &str| lookup(var).filter(|v| !v.is_empty());
        Settings {
            devices: Parsed::read(DEVICES_VAR, &text, devices),
            device_lock: path(DEVICE_LOCK_VAR).map(PathBuf::from),
            entry: Parsed::read(ENTRY_VAR, &text, entry),
            expect: text(EXPECT_VAR).filter(|p| !p.trim().is_empty()),
            fail_fast: Parsed::read(FAIL_FAST_VAR, &text, fail_fast),
            fail_fast_lead: Parsed::read(LEAD_VAR, &text, lead),
            helper_connections: Parsed::read(HELPER_CONNECTIONS_VAR, &text, |v| {
                helper_connections(v, own_connections)
            }),
            junit: text(JUNIT_VAR),
            library: Parsed::read(LIBRARY_VAR, &text, library),
            nvml: text(NVML_VAR)
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "libnvidia-ml.so.1".to_string()),
            partition: Parsed::read(PARTITION_VAR, &text, partition),
            report_dir: path(REPORT_DIR_VAR).map(PathBuf::from),
            required: Parsed::read(REQUIRE_VAR, &text, required),
            rerun_failed: Parsed::read(RERUN_VAR, &text, rerun_failed),
            run_budget: Parsed::read(RUN_BUDGET_VAR, &text, run_budget),
            serial: Parsed::read(SCHEDULE_VAR, &text, serial),
            stress_secs: Parsed::read(STRESS_SECS_VAR, &text, stress_secs),
            stress_seed: Parsed::read(STRESS_SEED_VAR, &text, stress_seed),
            strict: Parsed::read(STRICT_VAR, &text, strict),
            trials_file: lookup(TRIALS_FILE_VAR),
            trial_timeout: Parsed::read(TRIAL_TIMEOUT_VAR, &text, trial_timeout),
            first_wait: Parsed::read(FIRST_WAIT_VAR, &text, first_wait),
            verified: Vec::new(),
            verbose: Parsed::read(VERBOSE_VAR, &text, verbose),
            in_process: Parsed::read(WORKERS_VAR, &text, |v| in_process(v, nextest)),
            crash_trial: text(CRASH_VAR),
            plant_leaks: Parsed::read(PLANT_VAR, &text, plants),
            checkpoint: Parsed::read(CHECKPOINT_VAR, &text, checkpoint),
        }
    }

    /// The run's deadline as this process knows it: the user's trial deadline and the planned wait
    /// handed down (`driver::deadline`, where every wait of the suite is derived from it).
    pub fn deadline(&self) -> Deadline {
        Deadline::new(self.trial_timeout.value(), self.first_wait.value())
    }

    /// How this run judges a declared departure, crash or hang: CONFORMANCE_STRICT and the
    /// expectation file's `[[verified]]` entries (handed to every check: `harness::case::Env`).
    pub fn policy(&self) -> Policy {
        Policy {
            strict: self.strict.value(),
            verified: self.verified.clone(),
        }
    }

    /// These settings with the `[[verified]]` entries of the expectation file the entry point loaded
    /// (`harness::expect::load`).
    pub fn with_verified(&self, verified: Vec<(String, u32)>) -> Settings {
        Settings {
            verified,
            ..self.clone()
        }
    }

    /// These settings, planning with `wait` at each new process's first GPU work: what the
    /// coordinator hands down once the probe measured it (issue 58), to its own trials and, through
    /// every child's CONFORMANCE_FIRST_WAIT_MS (`harness::child::command`), to each process it starts.
    pub fn with_first_wait(&self, wait: Duration) -> Settings {
        Settings {
            first_wait: Parsed {
                value: wait,
                error: None,
            },
            ..self.clone()
        }
    }

    /// The load trials' settings, checked: their seconds and seed, and that the run fits in the
    /// trial deadline with time to spare for the start and the final checks.
    pub fn stress_checked(&self) -> Result<(), SettingError> {
        let secs = self.stress_secs.checked()?;
        self.stress_seed.checked()?;
        parse::stress_fits(secs, self.trial_timeout.value()).map_err(|message| SettingError {
            var: parse::STRESS_SECS_VAR,
            message,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_come_from_the_vars_given() {
        let s = Settings::from_vars(&[(parse::TRIAL_TIMEOUT_VAR, "120"), (parse::STRICT_VAR, "documented")]);
        assert_eq!(s.trial_timeout.checked(), Ok(Duration::from_secs(120)));
        assert!(s.strict.value());
        assert_eq!(s.deadline(), Deadline::new(Duration::from_secs(120), Duration::ZERO));
        let d = Settings::unset();
        assert!(!d.strict.value());
        assert_eq!(d.entry.value(), Entry::ProcAddress);
        assert_eq!(
            d.deadline(),
            Deadline::new(crate::driver::deadline::DEFAULT_TRIAL_TIMEOUT, Duration::ZERO)
        );
        let handed = Settings::from_vars(&[(FIRST_WAIT_VAR, "2500")]);
        assert_eq!(handed.deadline().first_wait(), Duration::from_millis(2500));
        let garbled = Settings::from_vars(&[(FIRST_WAIT_VAR, "3 s")]);
        assert_eq!(garbled.first_wait.checked().unwrap_err().var, FIRST_WAIT_VAR);
        assert_eq!(
            garbled.deadline().first_wait(),
            Duration::ZERO,
            "refused by the coordinator first"
        );
        assert_eq!(
            d.with_first_wait(Duration::from_secs(3)).deadline().first_wait(),
            Duration::from_secs(3)
        );
        assert_eq!(d.policy(), Policy::default());
        let verified = vec![("*".to_string(), 590)];
        let p = s.with_verified(verified.clone()).policy();
        assert_eq!((p.strict, p.verified), (true, verified));
        let bad = Settings::from_vars(&[(parse::TRIAL_TIMEOUT_VAR, "soon")]);
        let e = bad.trial_timeout.checked().unwrap_err();
        assert_eq!(e.var, parse::TRIAL_TIMEOUT_VAR);
        assert_eq!(
            bad.trial_timeout.value(),
            d.trial_timeout.value(),
            "the default stands in for a child"
        );
    }
}
