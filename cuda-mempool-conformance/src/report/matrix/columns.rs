//! The matrix as data (what matrix.json is): its columns, each column's runs, API rows, causes and
//! trial cells, the runs that differ, and the reports that could not be read.

use super::expect::Expected;
use super::origin::Origin;
use conformance_model as model;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One API's row of the PhOS-style table in a column (from report.json's `apis`: [`model::ApiRow`]),
/// summed over the column's runs; `test_passed` is the matrix's own verdict (`verdict`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ApiRow {
    pub index: Option<u64>,
    pub api: String,
    pub supported: String,
    /// ✓ (every trial that applies judged, none failed), ✗, ◐ k/n judged, or —.
    pub test_passed: String,
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
    pub changed: u64,
    pub known_departures: u64,
    pub expected_failures: u64,
    /// The column's trials of this API that apply (not ignored), and how many of them were judged.
    pub trials: u64,
    pub judged: u64,
}

/// One cause of failures and the trials it explains in a column (from report.json's `causes`:
/// [`model::CauseGroup`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CauseRow {
    pub text: String,
    pub count: usize,
    pub trials: Vec<String>,
}

/// One trial's outcome in one column (the worst of its runs'), with its message.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub outcome: String,
    pub message: String,
    /// The trial's API (report.json's `api`); None for the suite's and the harness's checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<u64>,
    /// How many runs of the column lack the trial: it was not judged there.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_in: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One run of a column: one report, or the shards of one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub reports: Vec<String>,
    /// The shards merged here (k of n), when the reports were shards.
    pub shards: Option<(Vec<usize>, usize)>,
    /// The host the report names (`provenance.host`), "?" where it names none.
    pub host: String,
    /// The devices' UUIDs, where the report has them: two hosts of one name are told apart.
    pub uuids: Vec<String>,
    pub date: String,
}

/// A run whose trials came to something else than in most runs of its column.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// The host and the run's reports, in words.
    pub run: String,
    /// `trial: outcome` where the run differs (`absent` where it lacks the trial).
    pub trials: Vec<String>,
}

/// One column: every run of one origin, or an expected host or GPU model with no readable report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub label: String,
    pub origin: Origin,
    pub runs: Vec<Run>,
    /// Every report of the column.
    pub reports: Vec<String>,
    /// Distinct hosts among the runs (host name and device UUIDs).
    pub hosts: usize,
    pub differs: Vec<Difference>,
    pub date: String,
    /// Trials by outcome.
    pub totals: BTreeMap<String, usize>,
    pub apis: Vec<ApiRow>,
    pub causes: Vec<CauseRow>,
    pub trials: BTreeMap<String, Cell>,
    /// The `--expect` entry this column stands for, when no readable report has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// A report file that could not be read (with `--expect`: kept going, named on the page).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Unreadable {
    pub path: String,
    pub why: String,
}

/// The columns, and every trial any of them has (sorted).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    pub columns: Vec<Column>,
    pub trials: Vec<String>,
    /// `--expect`'s entries, each with the columns that have it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected: Vec<Expected>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<Unreadable>,
}

impl From<&model::ApiRow> for ApiRow {
    fn from(a: &model::ApiRow) -> ApiRow {
        ApiRow {
            index: a.index,
            api: a.api.clone(),
            supported: a.supported.clone(),
            test_passed: a.test_passed.clone(),
            passed: a.passed,
            failed: a.failed,
            ignored: a.ignored,
            changed: a.changed,
            known_departures: a.known_departures.unwrap_or(0),
            expected_failures: a.expected_failures.unwrap_or(0),
            trials: 0,
            judged: 0,
        }
    }
}
