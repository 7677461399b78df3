//! One trial of the report (`trials`): its outcome and message, its checked calls, the cause of its
//! failure, and where its time went.

use super::field::{nullable, Extra, Nullable};
use serde::{Deserialize, Serialize};

/// One trial's result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Trial {
    /// `INDEX_API::case` (`suite::…` and `harness::…` for the suite's own checks).
    pub trial: String,
    /// The trial's API (820–833); null for the suite's and the harness's checks.
    pub api: Option<u64>,
    /// The row it counts in: `820_cuMemAllocAsync`, `harness`, `suite`.
    pub group: String,
    /// passed, failed, ignored, changed, known-departure, expected-failure, interrupted, flaky.
    pub outcome: String,
    /// How it ended (returned, panicked, died, hung, …); absent from older reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub message: String,
    /// For a failure: the API held responsible, when it is not the trial's own.
    pub blame: Option<u64>,
    pub secs: f64,
    pub notes: Vec<String>,
    /// Its checked calls in the order checked; absent from older reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observations: Option<Vec<Observation>>,
    /// Start and end, seconds since the run started (0 when not run).
    pub span: (f64, f64),
    /// The device it ran on (null for a trial of no device); absent from older reports.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub device: Nullable<i64>,
    /// The APIs it reached, where the run knows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<Vec<u64>>,
    /// For a failure: the failing call and what it answered, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<FailureCause>,
    /// Where its time went beside its body, where a worker ran it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<Timing>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One checked call: what the documentation says, what the check expected, what the driver answered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Observation {
    pub api: Option<u64>,
    pub call: String,
    pub documented: String,
    pub expected: String,
    pub observed: String,
    pub ok: bool,
    /// The declared departure this check follows, if any.
    pub deviation: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The failing call of a failed trial and what it answered (`cause`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FailureCause {
    pub api: Option<u64>,
    pub call: Option<String>,
    /// code, signal, exited or hung.
    pub answer: String,
    /// The code or the signal.
    pub value: Option<i64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Where a trial's time went beside its body: its worker, its wait for a turn at the device and
/// which turn, the settle wait at its end, its child processes, its worker's start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Timing {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    pub wait_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<Turn>,
    pub settle_s: f64,
    pub children: Vec<ChildSpan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker_start: Option<(f64, f64)>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A trial's turn at the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Turn {
    Free,
    Shared,
    Beyond,
    Exclusive,
}

/// A child process of a trial and when it ran, in run seconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChildSpan {
    pub role: String,
    pub span: (f64, f64),
    #[serde(flatten)]
    pub extra: Extra,
}
