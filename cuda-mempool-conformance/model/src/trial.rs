//! One trial of the report (`trials`): its outcome and message, its checked calls, the cause of its
//! failure, and where its time went.

use crate::field::{nullable, Extra, Nullable};
use crate::outcome::{Answer, Kind, Outcome};
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
    pub outcome: Outcome,
    /// How it ended (returned, panicked, died, hung, …); absent from older reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
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
    /// The expectation file's entry that made it an expected failure or flaky, where one did
    /// (absent otherwise, and from reports before it existed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_by: Option<ExpectedBy>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// An entry of an expectation file (CONFORMANCE_EXPECT): the file as the run named it, and the line
/// of the entry's `trial` key.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExpectedBy {
    pub file: String,
    pub line: u64,
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
    pub answer: Answer,
    /// The code or the signal.
    pub value: Option<i64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Where a trial's time went beside its body, for the timeline: which worker ran it, how long it
/// waited for its turn at the device and which turn, the settle wait at its end, its child
/// processes, its worker's start. A worker's answer carries it too (times since the trial started;
/// the coordinator moves them into the run's, `shifted`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Timing {
    /// `general 0`, `general 1`, … (the shared queue's dispatchers), or the lane's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// Seconds it waited for its turn at the device, just before its span began.
    pub wait_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<Turn>,
    /// Seconds, at the end of its span, spent waiting for the device's memory to come back (after
    /// an exclusive trial).
    pub settle_s: f64,
    pub children: Vec<ChildSpan>,
    /// Where the run waited, before it, for its lane's worker to come up and for the children its
    /// lane starts ahead (a lane's first trial), when that was, in run seconds: a process start is
    /// the run's time too (one context at a time machine-wide; 12 s and more each under
    /// compute-sanitizer). A general worker's start-up falls in its first trial's span instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker_start: Option<(f64, f64)>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Timing {
    /// The same, its children's spans moved by `by` seconds (a worker's answer into the run's time).
    pub fn shifted(mut self, by: f64) -> Timing {
        for c in &mut self.children {
            c.span = (c.span.0 + by, c.span.1 + by);
        }
        self
    }
}

/// A trial's turn at the device (by what it needs): none needed (it needs no device), shared within
/// the memory budget, beside no memory holder (a request beyond the device), or the device alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Turn {
    Free,
    Shared,
    Beyond,
    Exclusive,
}

/// A child process a trial started: its role, and when it started and ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChildSpan {
    pub role: String,
    /// Start and end in seconds: since the trial started in a worker's answer, since the run
    /// started in a record and in report.json.
    pub span: (f64, f64),
    #[serde(flatten)]
    pub extra: Extra,
}
