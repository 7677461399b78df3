//! The report as a whole: its top-level fields and the tables a run counts (totals, a row per
//! API, per group and per device set, the causes of failures, the declared departures).

use crate::field::{nullable, Extra, Nullable};
use crate::machine::Machine;
use crate::outcome::Answer;
use crate::provenance::Provenance;
use crate::trial::Trial;
use serde::{Deserialize, Serialize};

/// One run's report.json. Every part defaults, so a report of any age (or a hand-made one) reads;
/// what a report lacks stays absent when written back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Report {
    /// Where the report came from (reports since provenance was recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    /// When the run ended ("2026-11-25 18:28:57 UTC").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// The run's wall time in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
    /// Worker processes.
    pub workers: u64,
    /// The suite's own processes on its first device, as NVML listed them over the run (issue 47;
    /// reports since).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub footprint: Option<Footprint>,
    /// Where the library held the probe's first GPU work long (issue 58; reports since): the wait
    /// and how the run planned with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_wait: Option<FirstWait>,
    pub machine: Machine,
    /// cuDriverGetVersion (12090 for CUDA 12.9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<i64>,
    /// What cuInit(0) returned.
    #[serde(rename = "cuInit")]
    pub cu_init: i64,
    pub totals: Totals,
    /// The driver version ("580.159.04"), empty when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Its branch (580); null when unknown.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub driver_branch: Nullable<u64>,
    /// Where the version came from, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_source: Option<String>,
    /// CONFORMANCE_STRICT=documented.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// A precondition of the run that did not hold (null when all held).
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub precondition: Nullable<Precondition>,
    /// Why the library under test was not reached (null when it was).
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub not_reached: Nullable<String>,
    /// Every declared departure of drivers from the documentation and what this run saw of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deviations: Option<Vec<Deviation>>,
    /// One row per API (the PhOS-style table).
    pub apis: Vec<ApiRow>,
    /// One row per group that is no API (the harness's and the suite's own checks).
    pub groups: Vec<GroupRow>,
    /// With devices named: the rows per device, for the pairs and for the multi-device trials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sets: Option<Vec<Set>>,
    /// The failures grouped by cause, most first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub causes: Option<Vec<CauseGroup>>,
    /// The shard this run was (CONFORMANCE_PARTITION); null for a whole run.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub partition: Nullable<Partition>,
    /// Every trial, by name. None: the JSON has no `trials`, and is no report.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trials: Option<Vec<Trial>>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Report {
    /// report.json's text: the report as JSON, each object's keys in order (serde_json's map), two
    /// spaces an indent, and a newline at the end.
    pub fn to_json_text(&self) -> String {
        let value = serde_json::to_value(self).expect("a report is JSON");
        serde_json::to_string_pretty(&value).expect("JSON is text") + "\n"
    }

    /// The shard this run was, as (k, n); None for a whole run.
    pub fn shard(&self) -> Option<(usize, usize)> {
        self.partition.clone().flatten().map(|p| (p.k, p.n))
    }
}

/// Trials by outcome over every row; the later outcomes are absent from older reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Totals {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
    pub changed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_departures: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_failures: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flaky: Option<u64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One API's row of the PhOS-style table (`apis`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ApiRow {
    /// The PhOS index (820–833).
    pub index: Option<u64>,
    pub api: String,
    /// ✓, — or ✗ with why.
    pub supported: String,
    /// ✓, — or ✗.
    pub test_passed: String,
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
    pub changed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_departures: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_failures: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flaky: Option<u64>,
    pub secs: f64,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One row of a group that is no API (`groups`: harness, suite).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GroupRow {
    pub group: String,
    pub test_passed: String,
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
    pub secs: f64,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The rows of one device, of the pairs or of the multi-device trials (`sets`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Set {
    pub title: String,
    pub apis: Vec<SetRow>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One API's row within a [`Set`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SetRow {
    pub index: Option<u64>,
    pub api: String,
    pub test_passed: String,
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
    pub changed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_departures: Option<u64>,
    /// What report.md's row shows beside the counts above; absent from reports before the row sets
    /// were drawn from the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supported: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_failures: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secs: Option<f64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One cause of failures and the trials it explains (`causes`); the cause's fields are null for
/// the failures without one.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CauseGroup {
    pub api: Option<u64>,
    pub call: Option<String>,
    pub answer: Option<Answer>,
    pub value: Option<i64>,
    pub count: u64,
    /// The cause in words.
    pub text: String,
    pub trials: Vec<String>,
    /// Set on the one entry that opens `causes` when the library broke for good
    /// (`report::broken`): its `trials` are then the failures from that point on, each also listed
    /// under its own cause. Absent otherwise, and from reports before it existed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broken: Option<BrokenForGood>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Where the library broke for good (`causes`' opening entry): the first trial of the failures
/// that never stopped, when it started, what they answered, how many failed from it on, and the
/// trial whose process ended just before, when one did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BrokenForGood {
    pub first_trial: String,
    /// Its start, in seconds since the run started.
    pub at_s: f64,
    /// What the failures from it on answered, in words (`CUDA_ERROR_DEVICE_UNAVAILABLE (46)`).
    pub answer: String,
    /// The failed trials from it on (those caught in flight by a crash included, the crash's own
    /// aside).
    pub following: u64,
    /// Those of them that gave `answer` (the others named no answer, or a stray other one).
    pub answering: u64,
    /// The trial whose process died or hung just before it, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<BrokenAfter>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The trial whose process died or hung just before the library broke for good.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BrokenAfter {
    pub trial: String,
    /// Its end (when its process ended), in seconds since the run started.
    pub end_s: f64,
    /// How it ended, in words (`died by SIGSEGV (11) inside cuMemPoolCreate`).
    pub answer: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A declared departure of drivers from the documentation and what this run saw of it
/// (`deviations`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Deviation {
    pub id: String,
    pub api: u64,
    pub documented: String,
    /// The driver's answer.
    pub observed: String,
    pub seen_on: String,
    /// The driver branches it is declared for, first and last.
    pub branches: (u64, u64),
    pub this_run: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A precondition of the run that did not hold, its cause and its fix.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Precondition {
    pub what: String,
    pub cause: String,
    pub fix: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// report.json's record of shard `k` of `n` (CONFORMANCE_PARTITION=k/n, the setting's type
/// `harness::settings::Partition`), cut `by` the trials' count. A record of its own, not that type:
/// the model names nothing beyond serde; `report::build` turns the one into the other, and
/// `Report::shard` back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Partition {
    pub k: usize,
    pub n: usize,
    #[serde(default)]
    pub by: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The suite's own footprint on its first device (issue 47): a sharing layer that counts every
/// process on the GPU counts the suite's workers, lanes and kept importers against the cap it is
/// judged by.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Footprint {
    /// How it was measured, in words ("NVML's per-process memory, 24 samples 250 ms apart").
    pub source: String,
    /// The suite's processes NVML listed on the device over the run.
    pub processes: u64,
    /// The most of them listed at once.
    pub peak_processes: u64,
    /// The most they held together at once, bytes.
    pub peak_bytes: u64,
    /// The least one of them held, bytes: about one bare context.
    pub context_bytes: u64,
    /// Where the probe saw a cap (the reported total below 0.9 of the physical memory), how the run
    /// answered it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap: Option<CapSeen>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A cap the probe saw, and the fewer processes the run used under it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapSeen {
    /// cuDeviceTotalMem's total, bytes.
    pub reported: u64,
    /// NVML's physical memory, bytes.
    pub physical: u64,
    /// The general worker processes the run used.
    pub workers: u64,
    /// Those it would have used without the cap.
    pub default_workers: u64,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The library's wait at each new process's first GPU work, where it was long for the run's trial
/// deadline (`harness::first_work`), and how the run planned with it (`run::first_wait`): the
/// library's behaviour, not a failure.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FirstWait {
    /// The wait, seconds: the probe's first round of stream work beyond its second.
    pub wait_s: f64,
    /// The wait past which it is long for this run (a sixtieth of the trial deadline), seconds.
    pub long_after_s: f64,
    /// The general worker processes the run used.
    pub workers: u64,
    /// Those it would have used without the wait.
    pub default_workers: u64,
    /// CONFORMANCE_TRIAL_TIMEOUT, seconds.
    pub trial_timeout_s: f64,
    /// Each trial's deadline as planned: the timeout and room for the wait of each new process a
    /// trial may start, seconds.
    pub deadline_s: f64,
    /// The new processes the run expected to start (workers, lanes, trials' own processes and
    /// children), each waiting once.
    pub processes: u64,
    /// CONFORMANCE_RUN_BUDGET, seconds, where one was set: no trial starts once it leaves less than
    /// a trial's deadline, and each says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl FirstWait {
    /// The waits the run expected its new processes to add together, seconds.
    pub fn waits_s(&self) -> f64 {
        self.wait_s * self.processes as f64
    }
}
