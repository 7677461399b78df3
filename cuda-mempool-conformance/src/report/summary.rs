//! The report: one row per API (PhOS table style) plus the harness's and the suite's own checks,
//! printed and written as Markdown and JSON.
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
use std::fmt::Write as _;
use std::path::PathBuf;

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
        Group::Api(idx) if !m.exported.iter().any(|(i, e)| *i == idx && *e) => {
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
        known: count(Outcome::Known),
        expected: count(Outcome::Expected),
        interrupted: count(Outcome::Interrupted),
        flaky: count(Outcome::Flaky),
        device_ran,
        secs: own.iter().map(|r| r.secs).sum(),
    }
}

pub fn rows(m: &Machine, records: &[Record]) -> Vec<Row> {
    let mut v: Vec<Row> = crate::driver::APIS
        .iter()
        .map(|(idx, api)| row(m, Group::Api(*idx), api.to_string(), records))
        .collect();
    for (g, name) in [
        (Group::Harness, "harness (fault injection)"),
        (Group::Suite, "suite (whole run)"),
    ] {
        if records.iter().any(|r| r.group == g) {
            v.push(row(m, g, name.to_string(), records));
        }
    }
    v
}

/// CONFORMANCE_REPORT_DIR, else `conformance-report/` under the cargo target dir this binary was
/// built in (found from its own path at run time), else under the current directory.
pub fn report_dir() -> PathBuf {
    if let Some(d) = crate::os::setting_os("CONFORMANCE_REPORT_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let exe = std::env::current_exe().ok();
    let target = exe
        .as_deref()
        .and_then(|e| e.ancestors().find(|a| a.file_name().is_some_and(|n| n == "target")));
    match target {
        Some(t) => t.join("conformance-report"),
        None => PathBuf::from("conformance-report"),
    }
}

fn table(s: &mut String, rows: &[Row]) {
    writeln!(
        s,
        "| Index | API | Supported | Test Passed | passed | failed | ignored | changed | known departures | expected failures | time (s) |"
    )
    .unwrap();
    writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|").unwrap();
    for r in rows {
        let index = r.group.api().map_or("—".to_string(), |i| i.to_string());
        writeln!(
            s,
            "| {index} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} |",
            r.name,
            r.supported,
            r.verdict(),
            r.passed,
            r.failed,
            r.ignored,
            r.changed,
            r.known,
            r.expected,
            r.secs
        )
        .unwrap();
    }
}

/// With devices named (CONFORMANCE_DEVICES), one row set per device for its single-device trials,
/// and one each for the pair and the multi-device trials.
pub fn sets(m: &Machine, records: &[Record]) -> Vec<(String, Vec<Row>)> {
    if !m.selection.explicit {
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
    for &d in &m.selection.devices {
        let name = m.devices.get(d as usize).map_or(String::new(), |x| x.name.clone());
        v.push((
            format!("Device {d} ({name}): single-device trials"),
            api_rows(&|r| r.per == Per::Device && r.dev == Some(d)),
        ));
    }
    v.push((
        "Pair trials (every ordered pair)".into(),
        api_rows(&|r| r.per == Per::Pair),
    ));
    v.push(("Multi-device trials".into(), api_rows(&|r| r.per == Per::Multi)));
    v
}

/// Counts over every row.
pub struct Totals {
    pub passed: usize,
    pub failed: usize,
    pub ignored: usize,
    pub changed: usize,
    pub known: usize,
    pub expected: usize,
    pub interrupted: usize,
    pub flaky: usize,
}

fn totals(rows: &[Row]) -> Totals {
    let sum = |f: fn(&Row) -> usize| rows.iter().map(f).sum();
    Totals {
        passed: sum(|r| r.passed),
        failed: sum(|r| r.failed),
        ignored: sum(|r| r.ignored),
        changed: sum(|r| r.changed),
        known: sum(|r| r.known),
        expected: sum(|r| r.expected),
        interrupted: sum(|r| r.interrupted),
        flaky: sum(|r| r.flaky),
    }
}

impl Totals {
    /// "Total: 215 passed, 0 failed, …" (and how many were interrupted, if any were).
    pub fn line(&self) -> String {
        let interrupted = match self.interrupted {
            0 => String::new(),
            n => format!(", {n} interrupted"),
        };
        format!(
            "Total: {} passed, {} failed, {} ignored, {} changed, {} known departures, {} expected failures, {} flaky{interrupted}.",
            self.passed, self.failed, self.ignored, self.changed, self.known, self.expected, self.flaky
        )
    }
}

pub fn sorted(records: &[Record], o: Outcome) -> Vec<&Record> {
    let mut v: Vec<&Record> = records.iter().filter(|r| r.outcome == o).collect();
    v.sort_by(|a, b| a.trial.cmp(&b.trial));
    v
}

pub fn markdown(m: &Machine, rows: &[Row], records: &[Record], date: &str, wall_s: f64, workers: usize) -> String {
    let mut s = String::new();
    writeln!(s, "# CUDA stream-ordered allocator conformance\n").unwrap();
    writeln!(
        s,
        "Date: {date}. Wall time: {wall_s:.1} s ({workers} worker processes).\n"
    )
    .unwrap();
    provenance_lines(&mut s, m);
    if let Some(b) = crate::harness::precondition::broken(m) {
        writeln!(s, "**{}**\n", b.text()).unwrap();
    }
    if let Some(w) = m.not_reached() {
        writeln!(s, "**The library under test was not reached:** {w}\n").unwrap();
    }
    writeln!(
        s,
        "Departure policy: {}.\n",
        if crate::driver::departures::strict() {
            "CONFORMANCE_STRICT=documented (every departure from the documentation fails)"
        } else {
            "default (a departure verified on this branch is expected; one that reproduces on a branch it was not \
             verified on is a known departure, counted apart, not failing)"
        }
    )
    .unwrap();
    writeln!(s, "```\n{}```\n", m.summary()).unwrap();
    table(&mut s, rows);
    writeln!(s, "\n{}", totals(rows).line()).unwrap();
    for (title, rows) in sets(m, records) {
        writeln!(s, "\n### {title}\n").unwrap();
        table(&mut s, &rows);
    }
    crate::report::causes::markdown(&mut s, records);
    let failed = sorted(records, Outcome::Failed);
    if !failed.is_empty() {
        writeln!(s, "\n## Failed\n").unwrap();
        for r in failed {
            let blame = match r.blame {
                Some(b) => format!(" (counted against {b} {})", crate::driver::api_name(b)),
                None => String::new(),
            };
            writeln!(s, "- `{}`{blame}: {}", r.trial, r.message.replace('\n', " ⏎ ")).unwrap();
        }
    }
    let failed = sorted(records, Outcome::Failed);
    if !failed.is_empty() {
        writeln!(s, "\n## Deviations (expected vs observed)\n").unwrap();
        for r in failed {
            match r.observations.iter().find(|o| !o.ok) {
                Some(o) => {
                    let documented = if o.documented.is_empty() || o.documented == o.expected {
                        String::new()
                    } else {
                        format!(" (documented: {})", o.documented)
                    };
                    writeln!(
                        s,
                        "- `{}`: `{}` — expected {}, observed {}{documented}",
                        r.trial, o.call, o.expected, o.observed
                    )
                    .unwrap()
                }
                None => writeln!(s, "- `{}`: {}", r.trial, r.message.lines().next().unwrap_or("")).unwrap(),
            }
        }
    }
    let known = departures(records);
    if !known.is_empty() {
        writeln!(
            s,
            "\n## Known departures of drivers from the documentation (driver/departures.rs)\n"
        )
        .unwrap();
        writeln!(
            s,
            "| departure | API | documented | the driver's answer | seen on | branches | this run |"
        )
        .unwrap();
        writeln!(s, "|---|---|---|---|---|---|---|").unwrap();
        for d in known {
            writeln!(
                s,
                "| `{}` | {} | {} | {} | {} | {}–{} | {} |",
                d.0, d.1, d.2, d.3, d.4, d.5 .0, d.5 .1, d.6
            )
            .unwrap();
        }
    }
    let known = sorted(records, Outcome::Known);
    if !known.is_empty() {
        writeln!(
            s,
            "\n## Known departures on a branch they were not verified on (not failing; CONFORMANCE_STRICT=documented fails them)\n"
        )
        .unwrap();
        for r in known {
            writeln!(s, "- `{}`: {}", r.trial, r.message.replace('\n', " ⏎ ")).unwrap();
        }
    }
    let expected = sorted(records, Outcome::Expected);
    if !expected.is_empty() {
        writeln!(s, "\n## Expected failures (CONFORMANCE_EXPECT)\n").unwrap();
        for r in expected {
            writeln!(s, "- `{}`: {}", r.trial, r.message.replace('\n', " ⏎ ")).unwrap();
        }
    }
    let flaky = sorted(records, Outcome::Flaky);
    if !flaky.is_empty() {
        writeln!(
            s,
            "\n## Flaky (failed, not failing: listed as flaky, or passed on a rerun)\n"
        )
        .unwrap();
        for r in flaky {
            writeln!(s, "- `{}`: {}", r.trial, r.message.replace('\n', " ⏎ ")).unwrap();
        }
    }
    let changed = sorted(records, Outcome::Changed);
    if !changed.is_empty() {
        writeln!(s, "\n## Changed (a documented crash no longer happens)\n").unwrap();
        for r in changed {
            writeln!(s, "- `{}`: {}", r.trial, r.message).unwrap();
        }
    }
    let mut slow: Vec<&Record> = records.iter().filter(|r| r.outcome != Outcome::Ignored).collect();
    slow.sort_by(|a, b| b.secs.total_cmp(&a.secs));
    if !slow.is_empty() {
        writeln!(s, "\n## Slowest trials\n").unwrap();
        for r in slow.iter().take(10) {
            writeln!(s, "- {:.2} s `{}`", r.secs, r.trial).unwrap();
        }
    }
    let interrupted = sorted(records, Outcome::Interrupted);
    if let Some(first) = interrupted.first() {
        writeln!(s, "\n## Interrupted ({}: not run, or cut short)\n", first.message).unwrap();
        for r in &interrupted {
            writeln!(s, "- `{}`", r.trial).unwrap();
        }
    }
    let ignored = sorted(records, Outcome::Ignored);
    if !ignored.is_empty() {
        writeln!(s, "\n## Ignored (with reasons)\n").unwrap();
        for r in ignored {
            writeln!(s, "- `{}`: {}", r.trial, r.message).unwrap();
        }
    }
    let passed = sorted(records, Outcome::Passed);
    if !passed.is_empty() {
        writeln!(s, "\n## Passed\n").unwrap();
        for r in passed {
            let notes = if r.notes.is_empty() {
                String::new()
            } else {
                format!(" — {}", r.notes.join("; "))
            };
            writeln!(s, "- `{}` ({:.3} s){notes}", r.trial, r.secs).unwrap();
        }
    }
    s
}

/// report.md's provenance lines: what was run where, when, on which library, with which settings.
fn provenance_lines(s: &mut String, m: &Machine) {
    let p = &m.provenance;
    writeln!(
        s,
        "Suite: {}. Host: {} (kernel {}, {}). Started {}, finished {}.\n",
        p.suite(),
        p.host,
        p.kernel,
        p.os,
        p.started,
        finished()
    )
    .unwrap();
    let devices: Vec<String> = m
        .devices
        .iter()
        .map(|d| format!("{} {} (UUID {}, PCI {})", d.ordinal, d.name, d.uuid, d.pci_bus_id))
        .collect();
    if !devices.is_empty() {
        writeln!(s, "Devices: {}.\n", devices.join("; ")).unwrap();
    }
    for l in &m.under_test {
        match &l.file {
            Ok(f) => writeln!(
                s,
                "Library under test ({}): {}, {} bytes, sha256 {}, {} cu* exports.\n",
                l.named_by, f.file, f.size, f.sha256, f.cu_exports
            ),
            Err(e) => writeln!(s, "Library under test ({}): {} ({e}).\n", l.named_by, l.path),
        }
        .unwrap();
    }
    let settings: Vec<String> = p.environment.iter().map(|(k, v)| format!("`{k}={v}`")).collect();
    writeln!(
        s,
        "Settings: {}.\n",
        if settings.is_empty() {
            "no CONFORMANCE_* or CUDA_* variable".to_string()
        } else {
            settings.join(", ")
        }
    )
    .unwrap();
}

/// When the report is written (RFC 3339): the run's end.
fn finished() -> String {
    crate::harness::provenance::rfc3339(std::time::SystemTime::now())
}

pub fn json(
    m: &Machine,
    rows: &[Row],
    records: &[Record],
    date: &str,
    wall_s: f64,
    workers: usize,
) -> serde_json::Value {
    let mut recs: Vec<&Record> = records.iter().collect();
    recs.sort_by(|a, b| a.trial.cmp(&b.trial));
    let t = totals(rows);
    let mut provenance = serde_json::json!(m.provenance);
    provenance["finished"] = serde_json::json!(finished());
    provenance["entry"] = serde_json::json!(m.entry);
    provenance["driver"] = serde_json::json!(m.identity.version);
    provenance["devices"] = serde_json::json!(m
        .devices
        .iter()
        .map(|d| serde_json::json!({"ordinal": d.ordinal, "name": d.name, "uuid": d.uuid, "pci_bus_id": d.pci_bus_id}))
        .collect::<Vec<_>>());
    provenance["libraries"] = serde_json::json!(m
        .under_test
        .iter()
        .map(
            |l| serde_json::json!({"path": l.path, "named_by": l.named_by, "file": l.file.as_ref().ok(),
            "error": l.file.as_ref().err()})
        )
        .collect::<Vec<_>>());
    serde_json::json!({
        "provenance": provenance,
        "date": date,
        "wall_s": wall_s,
        "workers": workers,
        "machine": m.to_json(),
        "driver_version": m.driver_version,
        "cuInit": m.init,
        "totals": {"passed": t.passed, "failed": t.failed, "ignored": t.ignored, "changed": t.changed,
            "known_departures": t.known, "expected_failures": t.expected, "interrupted": t.interrupted, "flaky": t.flaky},
        "driver": crate::driver::departures::driver().0,
        "driver_branch": crate::driver::departures::driver().1,
        "driver_source": m.identity.source,
        "strict": crate::driver::departures::strict(),
        "precondition": crate::harness::precondition::broken(m).map(|b| serde_json::json!({
            "what": b.which.what(), "cause": b.cause, "fix": b.fix})),
        "not_reached": m.not_reached(),
        "deviations": departures(records).iter().map(|d| serde_json::json!({"id": d.0, "api": d.1,
            "documented": d.2, "observed": d.3, "seen_on": d.4, "branches": d.5, "this_run": d.6})).collect::<Vec<_>>(),
        "apis": rows.iter().filter(|r| r.group.api().is_some()).map(|r| serde_json::json!({
            "index": r.group.api(), "api": r.name, "supported": r.supported, "test_passed": r.verdict(),
            "passed": r.passed, "failed": r.failed, "ignored": r.ignored, "changed": r.changed,
            "known_departures": r.known, "expected_failures": r.expected, "flaky": r.flaky, "secs": r.secs,
        })).collect::<Vec<_>>(),
        "groups": rows.iter().filter(|r| r.group.api().is_none()).map(|r| serde_json::json!({
            "group": r.group.label(), "test_passed": r.verdict(),
            "passed": r.passed, "failed": r.failed, "ignored": r.ignored, "secs": r.secs,
        })).collect::<Vec<_>>(),
        "sets": sets(m, records).iter().map(|(title, rows)| serde_json::json!({"title": title,
            "apis": rows.iter().map(|r| serde_json::json!({"index": r.group.api(), "api": r.name,
                "test_passed": r.verdict(), "passed": r.passed, "failed": r.failed, "ignored": r.ignored,
                "changed": r.changed, "known_departures": r.known, "supported": r.supported,
                "expected_failures": r.expected, "secs": r.secs})).collect::<Vec<_>>()})).collect::<Vec<_>>(),
        "causes": crate::report::causes::json(records),
        "trials": recs.iter().map(|r| trial_json(r)).collect::<Vec<_>>(),
    })
}

/// One trial of report.json; `calls` only where the run knows which APIs the trial reached, `cause`
/// only where a failure's cause is known, `timing` only where a worker ran it.
fn trial_json(r: &Record) -> serde_json::Value {
    let mut j = serde_json::json!({
        "trial": r.trial, "api": r.group.api(), "group": r.group.label(), "outcome": r.outcome.as_str(), "kind": r.kind.as_str(),
        "message": r.message, "blame": r.blame, "secs": r.secs, "notes": r.notes,
        "observations": r.observations.iter().map(|o| o.to_json()).collect::<Vec<_>>(),
        "span": [r.span.0, r.span.1], "device": r.dev,
    });
    if let Some(m) = r.calls {
        j["calls"] = serde_json::json!(crate::driver::calls::apis(m));
    }
    if let Some(c) = &r.cause {
        j["cause"] = c.to_json();
    }
    if r.timing != crate::harness::outcome::Timing::default() {
        j["timing"] = serde_json::to_value(&r.timing).unwrap_or_default();
    }
    j
}

/// Every declared departure and what this run saw of it: (id, API, documented, the driver's
/// answer, seen on, branches, this run).
type Departure = (&'static str, u32, String, String, String, (u32, u32), String);

fn departures(records: &[Record]) -> Vec<Departure> {
    crate::driver::departures::ALL
        .iter()
        .map(|d| {
            let seen: Vec<&crate::driver::observe::Observation> = records
                .iter()
                .flat_map(|r| &r.observations)
                .filter(|o| o.deviation.as_deref() == Some(d.id))
                .collect();
            let observed = crate::driver::check::code_name(d.observed);
            let documented = d
                .documented
                .map_or("— (silent)".to_string(), crate::driver::check::code_name);
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
            (
                d.id,
                d.api,
                documented,
                observed,
                d.seen_on.join(", "),
                d.branches,
                this_run,
            )
        })
        .collect()
}

/// UTC date-time without a date crate ("2026-11-25 18:28:57 UTC"): from the system clock.
pub fn now_utc() -> String {
    let (y, mo, d, h, mi, s) = crate::harness::provenance::civil(std::time::SystemTime::now());
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} UTC")
}
