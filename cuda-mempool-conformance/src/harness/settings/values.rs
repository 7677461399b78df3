//! The one read of the run's settings: the `CONFORMANCE_*` variables a run takes (the `User` and
//! `TestOnly` rows of the table), read once per process into typed values, each with the error its
//! text was if it was unusable. The coordinator checks them all before anything runs (exit code 2);
//! a child takes the values, whose text its parent has checked. The driver's three are handed down
//! to it here (`driver::given`). Not here: CONFORMANCE_IPC_FAULT (test-only, read by the importer
//! child it breaks); the `Child` rows are a protocol between the suite and its children, read by the
//! role they start.

use super::parse::{self, Partition, Request};
use crate::driver::entry::Entry;
use crate::driver::given::Given;
use crate::harness::cap::Cap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::OnceLock;
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
    /// `var` read and parsed by `parse`; where its text is unusable, the value unset gives.
    fn read(var: &'static str, parse: impl Fn(Option<&str>) -> Result<T, String>) -> Parsed<T> {
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

/// A setting's text (None: unset, or not UTF-8 as `std::env::var` failing).
fn text(var: &str) -> Option<String> {
    crate::os::setting(var)
}

/// A setting that is a path (None: unset or empty).
fn path(var: &str) -> Option<OsString> {
    crate::os::setting_os(var).filter(|v| !v.is_empty())
}

impl Settings {
    /// Read and parse every setting from this process's environment.
    fn read() -> Settings {
        use parse::*;
        let nextest = std::env::var_os("NEXTEST").is_some();
        let own_connections = std::env::var_os(MAX_CONNECTIONS_VAR).is_some();
        Settings {
            devices: Parsed::read(DEVICES_VAR, devices),
            device_lock: path(DEVICE_LOCK_VAR).map(PathBuf::from),
            entry: Parsed::read(ENTRY_VAR, entry),
            expect: text(EXPECT_VAR).filter(|p| !p.trim().is_empty()),
            fail_fast: Parsed::read(FAIL_FAST_VAR, fail_fast),
            fail_fast_lead: Parsed::read(LEAD_VAR, lead),
            helper_connections: Parsed::read(HELPER_CONNECTIONS_VAR, |v| helper_connections(v, own_connections)),
            junit: text(JUNIT_VAR),
            library: Parsed::read(LIBRARY_VAR, library),
            nvml: text(NVML_VAR)
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "libnvidia-ml.so.1".to_string()),
            partition: Parsed::read(PARTITION_VAR, partition),
            report_dir: path(REPORT_DIR_VAR).map(PathBuf::from),
            required: Parsed::read(REQUIRE_VAR, required),
            rerun_failed: Parsed::read(RERUN_VAR, rerun_failed),
            run_budget: Parsed::read(RUN_BUDGET_VAR, run_budget),
            serial: Parsed::read(SCHEDULE_VAR, serial),
            stress_secs: Parsed::read(STRESS_SECS_VAR, stress_secs),
            stress_seed: Parsed::read(STRESS_SEED_VAR, stress_seed),
            strict: Parsed::read(STRICT_VAR, strict),
            trials_file: crate::os::setting_os(TRIALS_FILE_VAR),
            trial_timeout: Parsed::read(TRIAL_TIMEOUT_VAR, trial_timeout),
            verbose: Parsed::read(VERBOSE_VAR, verbose),
            in_process: Parsed::read(WORKERS_VAR, |v| in_process(v, nextest)),
            crash_trial: text(CRASH_VAR),
            plant_leaks: Parsed::read(PLANT_VAR, plants),
            checkpoint: Parsed::read(CHECKPOINT_VAR, checkpoint),
        }
    }

    /// What the driver floor is told.
    fn given(&self) -> Given {
        Given {
            entry: self.entry.value(),
            strict: self.strict.value(),
            trial: self.trial_timeout.value(),
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

/// The settings of this process, read at the first call (which hands the driver its three: every
/// `main` of the crate calls this before its first driver call).
pub fn get() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(|| {
        let s = Settings::read();
        crate::driver::given::hand_down(s.given());
        s
    })
}
