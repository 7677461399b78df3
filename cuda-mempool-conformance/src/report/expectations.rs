//! `--expectations-from REPORT.json`: an expectation file (`CONFORMANCE_EXPECT`) written from a
//! report, accepting each of its failures as it is: a start for a library's list of known deviations.
//! The file's format is `harness::expect`'s: each entry is written by `expect::deviation_entry`.

use crate::harness::expect;
use conformance_model::{Outcome, Report};

/// An expectation file that accepts every failure of a report as it is (each with the first
/// failed call's observed answer): a start for a library's list of known deviations.
pub fn from_report(path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let r: Report = serde_json::from_str(&text).map_err(|e| format!("{path} is not a report: {e}"))?;
    let mut out = format!(
        "# Known deviations, from {path} ({}). Give each a real reason.\n",
        r.date.as_deref().unwrap_or("?")
    );
    for t in r.trials.as_deref().ok_or_else(|| format!("{path} has no trials"))? {
        if t.outcome != Outcome::Failed {
            continue;
        }
        let observed = t
            .observations
            .iter()
            .flatten()
            .find(|o| !o.ok)
            .and_then(|o| o.observed.split(" (").next());
        let first = t.message.lines().next().unwrap_or("");
        out.push_str(&expect::deviation_entry(&t.trial, observed, &format!("TODO: {first}")));
    }
    Ok(out)
}
