//! The suite's settings: every `CONFORMANCE_*` variable once in a table (its name, who sets it, what
//! it accepts, its default and what it does), what each setting of a run accepts as a typed value,
//! and the one read of them into a [`Settings`] value at each process's entry point
//! (`Settings::at_entry`), handed down from there as a value (as an argument, or a field of the
//! contexts that flow: the case `Env`, the scheduler's inputs, the report writer's): nothing looks
//! the settings up. The driver floor is handed values made from them: the entry mode
//! (`driver::cu::load`), the run's `driver::deadline::Deadline` ([`Settings::deadline`]) and the
//! `driver::departures::Policy` (`harness::case::Env`).

pub mod parse;
pub mod table;
pub mod values;

pub use parse::{
    Engine, Partition, Request, CHECKPOINT_VAR, CRASH_VAR, DEVICES_VAR, DEVICE_LOCK_VAR, ENTRY_VAR, EXPECT_VAR,
    FAIL_FAST_VAR, HELPER_CONNECTIONS_VAR, JUNIT_VAR, LEAD_VAR, LIBRARY_VAR, MAX_CONNECTIONS_VAR, NVML_VAR,
    PARTITION_VAR, PLANTS, PLANT_VAR, REPORT_DIR_VAR, REQUIRE_VAR, RERUN_VAR, RUN_BUDGET_VAR, SCHEDULE_VAR,
    STRESS_SECS_VAR, STRESS_SEED_VAR, STRICT_VAR, TRIALS_FILE_VAR, TRIAL_TIMEOUT_VAR, VERBOSE_VAR, WORKERS_VAR,
};
pub use table::{find, reference_tables, Setting, Who, SETTINGS};
pub use values::{Parsed, SettingError, Settings};
