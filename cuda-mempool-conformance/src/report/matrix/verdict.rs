//! An API's Test Passed in a column, which cannot mislead: ✓ only when every trial of that API in the
//! column that applies (not ignored: the run found it does not apply to the machine) was judged in
//! every run of the column (not interrupted, not cut short, not absent from a run) and the API is
//! not held responsible for a failure (the report's ✗: `report::tables`); ✗ when it is; an API
//! partly judged shows how much (`◐ 3/35 judged`); — as the report says otherwise (no trial of it
//! could ask a device).

use super::{ApiRow, Cell};
use conformance_model::Outcome;
use std::collections::BTreeMap;

/// Whether a trial's outcome in a column is a verdict: an outcome the suite knows that is neither
/// interrupted nor ignored, in every run of the column.
pub(super) fn judged(c: &Cell) -> bool {
    c.not_in == 0 && Outcome::parse(&c.outcome).is_some_and(|o| !matches!(o, Outcome::Interrupted | Outcome::Ignored))
}

fn applies(c: &Cell) -> bool {
    Outcome::parse(&c.outcome) != Some(Outcome::Ignored)
}

/// The mark: `merged` is the runs' own marks merged (✗ over ✓ over —).
pub(super) fn mark(merged: &str, failed: u64, judged: u64, trials: u64) -> String {
    if failed > 0 || merged.starts_with('✗') {
        "✗".into()
    } else if judged < trials {
        format!("◐ {judged}/{trials} judged")
    } else {
        merged.to_string()
    }
}

/// Count each API's trials in the column and set its Test Passed.
pub(super) fn judge(apis: &mut [ApiRow], trials: &BTreeMap<String, Cell>) {
    for a in apis {
        let own: Vec<&Cell> = trials
            .values()
            .filter(|c| c.api.is_some() && c.api == a.index)
            .collect();
        a.trials = own.iter().filter(|c| applies(c)).count() as u64;
        a.judged = own.iter().filter(|c| judged(c)).count() as u64;
        a.test_passed = mark(&a.test_passed, a.failed, a.judged, a.trials);
    }
}

/// The CSS class of a mark.
pub(super) fn class(mark: &str) -> &'static str {
    match mark.chars().next() {
        Some('✓') => "pass",
        Some('✗') => "fail",
        Some('◐') => "partial",
        _ => "none",
    }
}
