//! A column's rows (matrix.json's, and what one report gives the matrix): an API's row, a cause of
//! failures and the trials it explains, a trial's cell.

use conformance_model as model;
use serde::{Deserialize, Serialize};

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
