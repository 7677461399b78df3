//! The matrix as data (what matrix.json is): its columns, each column's runs and rows (`rows`), the
//! runs that differ, `--expect`'s entries, and the reports that could not be read.

use super::origin::Origin;
use super::rows::{ApiRow, CauseRow, Cell};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

/// An `--expect` entry and the columns (1-based) that have it; none: it is missing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Expected {
    pub entry: String,
    /// Its line in the file.
    pub line: usize,
    pub columns: Vec<usize>,
}
