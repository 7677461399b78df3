//! The report's tables, counted from the run's records: one row per API (PhOS table style) and per
//! group of the harness's and the suite's own checks, the rows per device set when devices are
//! named, the totals, and each declared departure with what this run saw of it.
//!
//! Columns:
//! - **Supported**: ✓ the entry point exists and answered a trial on a device; — it exists but no
//!   trial could ask a device (none, or every such trial ignored); ✗ it does not exist, or every
//!   device trial of it died or hung.
//! - **Test Passed**: ✗ any trial failed with this API held responsible (a failure counts against
//!   the API whose answer was wrong: see `blame.rs`); — no trial that needs a device ran; ✓ else.

use crate::harness::case::{Group, Per};
use crate::harness::machine::Machine;
use crate::harness::outcome::{Outcome, Record};
use conformance_model as model;

pub struct Row {
    pub group: Group,
    pub name: String,
    pub supported: String,
    pub passed: usize,
    pub failed: usize,
    pub ignored: usize,
    pub changed: usize,
    /// Departures that reproduced on a branch they were not verified on (`known-departure`).
    pub known: usize,
    /// Failures the user's expectation file lists.
    pub expected: usize,
    /// Trials not run, or cut short: the run was interrupted (`run::interrupt`).
    pub interrupted: usize,
    /// Failures of trials listed as flaky, or that passed when rerun: not failing.
    pub flaky: usize,
    /// Trials of this row that needed a device and ran (not ignored).
    pub device_ran: usize,
    pub secs: f64,
}
impl Row {
    pub fn verdict(&self) -> &'static str {
        if self.failed > 0 {
            "✗"
        } else if self.device_ran == 0 && matches!(self.group, Group::Api(_)) {
            "—"
        } else if self.passed + self.changed + self.known + self.flaky > 0 {
            "✓"
        } else {
            "—"
        }
    }
}

fn row(m: &Machine, group: Group, name: String, records: &[Record]) -> Row {
    let own: Vec<&Record> = records.iter().filter(|r| r.group == group).collect();
    let count = |o: Outcome| own.iter().filter(|r| r.outcome == o).count();
    // A failure counts against the API held responsible, whichever trial found it.
    let failed = match group {
        Group::Api(_) => records
            .iter()
            .filter(|r| r.outcome == Outcome::Failed && r.counted_api() == group.api())
            .count(),
        _ => count(Outcome::Failed),
    };
    let passed = count(Outcome::Passed);
    let device_ran = own
        .iter()
        .filter(|r| r.outcome != Outcome::Ignored && r.device_answer)
        .count();
    let supported = match group {
        Group::Api(idx) if !m.exported.iter().any(|(i, e)| *i == u64::from(idx) && *e) => {
            let name = crate::driver::api_name(idx);
            let lacking: Vec<&str> = m
                .missing
                .iter()
                .filter(|s| s.as_str() == name || s.strip_suffix("_ptsz") == Some(name))
                .map(String::as_str)
                .collect();
            if lacking.is_empty() {
                "✗ (no driver library)".to_string()
            } else {
                format!("✗ ({} missing)", lacking.join(", "))
            }
        }
        Group::Api(_) if device_ran > 0 => "✓".to_string(),
        Group::Api(_) => "—".to_string(),
        _ => String::new(),
    };
    Row {
        group,
        name,
        supported,
        passed,
        failed,
        ignored: count(Outcome::Ignored),
        changed: count(Outcome::Changed),
        known: count(Outcome::KnownDeparture),
        expected: count(Outcome::ExpectedFailure),
        interrupted: count(Outcome::Interrupted),
        flaky: count(Outcome::Flaky),
        device_ran,
        secs: own.iter().map(|r| r.secs).sum(),
    }
}

/// The groups that are no API, each with its row's name in report.md.
const GROUP_ROWS: [(Group, &str); 2] = [
    (Group::Harness, "harness (fault injection)"),
    (Group::Suite, "suite (whole run)"),
];

/// The name of the row of the group labelled `label` (`Group::label`): "suite (whole run)".
pub fn group_row_name(label: &str) -> String {
    GROUP_ROWS
        .iter()
        .find(|(g, _)| g.label() == label)
        .map_or(label.to_string(), |(_, name)| name.to_string())
}

/// A row per API, then one per group of the suite's own checks that has a record.
pub fn rows(m: &Machine, records: &[Record]) -> Vec<Row> {
    let mut v: Vec<Row> = crate::driver::APIS
        .iter()
        .map(|(idx, api)| row(m, Group::Api(*idx), api.to_string(), records))
        .collect();
    for (g, name) in GROUP_ROWS {
        if records.iter().any(|r| r.group == g) {
            v.push(row(m, g, name.to_string(), records));
        }
    }
    v
}

/// With devices named (CONFORMANCE_DEVICES), one row set per device for its single-device trials,
/// and one each for the pair and the multi-device trials.
pub fn sets(m: &Machine, records: &[Record]) -> Vec<(String, Vec<Row>)> {
    if !m.selection().explicit {
        return Vec::new();
    }
    let api_rows = |f: &dyn Fn(&Record) -> bool| -> Vec<Row> {
        let rs: Vec<Record> = records.iter().filter(|r| f(r)).cloned().collect();
        crate::driver::APIS
            .iter()
            .map(|(idx, api)| row(m, Group::Api(*idx), api.to_string(), &rs))
            .filter(|r| r.passed + r.failed + r.ignored + r.changed + r.known + r.flaky > 0)
            .collect()
    };
    let mut v = Vec::new();
    for &d in &m.selection().devices {
        let name = m.devices.get(d as usize).map_or(String::new(), |x| x.name.clone());
        v.push((
            format!("Device {d} ({name}): single-device trials"),
            api_rows(&|r| r.per == Per::Device && r.dev() == Some(d)),
        ));
    }
    v.push((
        "Pair trials (every ordered pair)".into(),
        api_rows(&|r| r.per == Per::Pair),
    ));
    v.push(("Multi-device trials".into(), api_rows(&|r| r.per == Per::Multi)));
    v
}

/// Trials by outcome over every row.
pub fn totals(rows: &[Row]) -> model::Totals {
    let sum = |f: fn(&Row) -> usize| rows.iter().map(f).sum::<usize>() as u64;
    model::Totals {
        passed: sum(|r| r.passed),
        failed: sum(|r| r.failed),
        ignored: sum(|r| r.ignored),
        changed: sum(|r| r.changed),
        known_departures: Some(sum(|r| r.known)),
        expected_failures: Some(sum(|r| r.expected)),
        interrupted: Some(sum(|r| r.interrupted)),
        flaky: Some(sum(|r| r.flaky)),
        extra: model::Extra::new(),
    }
}

/// Every declared departure (`driver::departures`) and what this run's checks saw of it.
pub fn departures(records: &[Record]) -> Vec<model::Deviation> {
    crate::driver::departures::ALL
        .iter()
        .map(|d| {
            let seen: Vec<&crate::driver::observe::Observation> = records
                .iter()
                .flat_map(|r| r.observations())
                .filter(|o| o.deviation.as_deref() == Some(d.id))
                .collect();
            let observed = d.observed_text();
            let documented = match d.documented {
                None if d.shows.is_none() => "— (silent)".to_string(),
                _ => d.documented_text(),
            };
            let this_run = if seen.is_empty() {
                "not checked".to_string()
            } else if seen.iter().all(|o| o.observed == observed) {
                format!("reproduced ({} checks)", seen.len())
            } else if seen.iter().all(|o| o.observed == documented) {
                "documented answer: no longer reproduces".to_string()
            } else {
                let mut v: Vec<&str> = seen.iter().map(|o| o.observed.as_str()).collect();
                v.sort_unstable();
                v.dedup();
                format!("answered {}", v.join(", "))
            };
            model::Deviation {
                id: d.id.to_string(),
                api: d.api.into(),
                documented,
                observed,
                seen_on: d.seen_on.join(", "),
                branches: (d.branches.0.into(), d.branches.1.into()),
                this_run,
                extra: model::Extra::new(),
            }
        })
        .collect()
}
