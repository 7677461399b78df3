//! report.md, drawn from the run's report (`model::Report`) alone: where the library broke for
//! good (if it did: `report::broken`), the library's long wait at a new process's first GPU work
//! (if it had one: `report::first_wait`), where it came from, the machine, the table of APIs and
//! groups with the totals, the rows per device set, the failures by cause, then every trial by
//! outcome. The terminal's last screen prints its tables too (`report::screen`).

use crate::report::{broken, causes, first_wait, machine_text, tables};
use conformance_model::Outcome;
use conformance_model::{Report, Set, Totals, Trial};
use std::fmt::Write as _;

/// One row of a table of report.md.
struct Line<'a> {
    index: Option<u64>,
    name: String,
    supported: &'a str,
    verdict: &'a str,
    passed: u64,
    failed: u64,
    ignored: u64,
    changed: u64,
    known: u64,
    expected: u64,
    secs: f64,
}

fn table(lines: &[Line]) -> String {
    let mut s = String::new();
    writeln!(
        s,
        "| Index | API | Supported | Test Passed | passed | failed | ignored | changed | known departures | expected failures | time (s) |"
    )
    .unwrap();
    writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|").unwrap();
    for r in lines {
        let index = r.index.map_or("—".to_string(), |i| i.to_string());
        writeln!(
            s,
            "| {index} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} |",
            r.name, r.supported, r.verdict, r.passed, r.failed, r.ignored, r.changed, r.known, r.expected, r.secs
        )
        .unwrap();
    }
    s
}

/// The trials of `r` that came to `o`, by name.
pub fn with_outcome(r: &Report, o: Outcome) -> Vec<&Trial> {
    let mut v: Vec<&Trial> = r.trials.iter().flatten().filter(|t| t.outcome == o).collect();
    v.sort_by(|a, b| a.trial.cmp(&b.trial));
    v
}

/// The table of every API and of the suite's own checks.
pub fn main_table(r: &Report) -> String {
    // A group's changed, known and expected counts are its trials'.
    let count = |group: &str, o: Outcome| {
        r.trials
            .iter()
            .flatten()
            .filter(|t| t.group == group && t.outcome == o)
            .count() as u64
    };
    let mut lines: Vec<Line> = r
        .apis
        .iter()
        .map(|a| Line {
            index: a.index,
            name: a.api.clone(),
            supported: &a.supported,
            verdict: &a.test_passed,
            passed: a.passed,
            failed: a.failed,
            ignored: a.ignored,
            changed: a.changed,
            known: a.known_departures.unwrap_or(0),
            expected: a.expected_failures.unwrap_or(0),
            secs: a.secs,
        })
        .collect();
    lines.extend(r.groups.iter().map(|g| Line {
        index: None,
        name: tables::group_row_name(&g.group),
        supported: "",
        verdict: &g.test_passed,
        passed: g.passed,
        failed: g.failed,
        ignored: g.ignored,
        changed: count(&g.group, Outcome::Changed),
        known: count(&g.group, Outcome::KnownDeparture),
        expected: count(&g.group, Outcome::ExpectedFailure),
        secs: g.secs,
    }));
    table(&lines)
}

/// A trial of the checkpoint leg (`cases::checkpoint`, and the IPC round trips' `checkpoint::` ones).
pub fn in_checkpoint_leg(t: &Trial) -> bool {
    t.trial.contains("::checkpoint::")
}

/// The checkpoint leg's own table, where the leg ran (some trial of it was not ignored): per API,
/// "Test Passed under checkpoint" and its counts, with the engine the run named. Empty otherwise,
/// so a run without the leg (and every report written before it) renders as before.
pub fn checkpoint_table(r: &Report) -> String {
    let leg: Vec<&Trial> = r.trials.iter().flatten().filter(|t| in_checkpoint_leg(t)).collect();
    if leg.iter().all(|t| t.outcome == Outcome::Ignored) {
        return String::new();
    }
    let engine = r
        .machine
        .provenance
        .iter()
        .flat_map(|p| &p.environment)
        .find(|(k, _)| k == crate::harness::settings::CHECKPOINT_VAR)
        .map_or("unnamed".to_string(), |(_, v)| format!("`{v}`"));
    let mut s = format!(
        "\n## Under checkpoint\n\nEach trial took its process (or the exporter, or the importer) through a checkpoint and \
         restore by the engine {engine}, then judged the state it had set up before.\n\n\
         | API | Test Passed under checkpoint | passed | failed | known departures | ignored |\n|---|---|---|---|---|---|\n"
    );
    let mut groups: Vec<&str> = leg.iter().map(|t| t.group.as_str()).collect();
    groups.dedup();
    groups.sort();
    groups.dedup();
    for g in groups {
        let of = |o: Outcome| leg.iter().filter(|t| t.group == g && t.outcome == o).count();
        let (passed, failed, known, ignored) = (
            of(Outcome::Passed) + of(Outcome::Changed),
            of(Outcome::Failed) + of(Outcome::Interrupted),
            of(Outcome::KnownDeparture) + of(Outcome::ExpectedFailure) + of(Outcome::Flaky),
            of(Outcome::Ignored),
        );
        let verdict = match (failed, passed + known) {
            (0, 0) => "—",
            (0, _) => "✓",
            _ => "✗",
        };
        writeln!(
            s,
            "| {} | {verdict} | {passed} | {failed} | {known} | {ignored} |",
            tables::group_row_name(g)
        )
        .unwrap();
    }
    s
}

/// The table of one device set. A report written before the sets carried `supported`, `expected_failures`
/// and `secs` shows `supported` as its verdict says it, and no expected failures or time.
pub fn set_table(set: &Set) -> String {
    let lines: Vec<Line> = set
        .apis
        .iter()
        .map(|a| Line {
            index: a.index,
            name: a.api.clone(),
            supported: a
                .supported
                .as_deref()
                .unwrap_or(if a.test_passed == "✓" { "✓" } else { "—" }),
            verdict: &a.test_passed,
            passed: a.passed,
            failed: a.failed,
            ignored: a.ignored,
            changed: a.changed,
            known: a.known_departures.unwrap_or(0),
            expected: a.expected_failures.unwrap_or(0),
            secs: a.secs.unwrap_or(0.0),
        })
        .collect();
    table(&lines)
}

/// "Total: 215 passed, 0 failed, …" (and how many were interrupted, if any were).
pub fn totals_line(t: &Totals) -> String {
    let interrupted = match t.interrupted.unwrap_or(0) {
        0 => String::new(),
        n => format!(", {n} interrupted"),
    };
    format!(
        "Total: {} passed, {} failed, {} ignored, {} changed, {} known departures, {} expected failures, {} flaky{interrupted}.",
        t.passed,
        t.failed,
        t.ignored,
        t.changed,
        t.known_departures.unwrap_or(0),
        t.expected_failures.unwrap_or(0),
        t.flaky.unwrap_or(0)
    )
}

/// report.md.
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    writeln!(s, "# CUDA stream-ordered allocator conformance\n").unwrap();
    writeln!(
        s,
        "Date: {}. Wall time: {:.1} s ({} worker processes).\n",
        r.date.as_deref().unwrap_or_default(),
        r.wall_s.unwrap_or(0.0),
        r.workers
    )
    .unwrap();
    if let Some(line) = broken::line(r) {
        writeln!(s, "**{line}.**\n").unwrap();
    }
    if let Some(line) = first_wait::line(r) {
        writeln!(s, "**{line}**\n").unwrap();
    }
    if let Some(f) = &r.footprint {
        writeln!(s, "{}\n", machine_text::footprint(f)).unwrap();
    }
    provenance_lines(&mut s, r);
    if let Some(Some(p)) = &r.precondition {
        writeln!(
            s,
            "**{}**\n",
            crate::harness::precondition::text(&p.what, &p.cause, &p.fix)
        )
        .unwrap();
    }
    if let Some(Some(w)) = &r.not_reached {
        writeln!(s, "**The library under test was not reached:** {w}\n").unwrap();
    }
    writeln!(
        s,
        "Departure policy: {}.\n",
        if r.strict == Some(true) {
            "CONFORMANCE_STRICT=documented (every departure from the documentation fails)"
        } else {
            "default (a departure verified on this branch is expected; one that reproduces on a branch it was not \
             verified on is a known departure, counted apart, not failing)"
        }
    )
    .unwrap();
    writeln!(s, "```\n{}```\n", machine_text::summary(&r.machine)).unwrap();
    s.push_str(&main_table(r));
    writeln!(s, "\n{}", totals_line(&r.totals)).unwrap();
    s.push_str(&checkpoint_table(r));
    for set in r.sets.iter().flatten() {
        writeln!(s, "\n### {}\n", set.title).unwrap();
        s.push_str(&set_table(set));
    }
    if let Some(c) = r.causes.as_deref().filter(|c| !c.is_empty()) {
        writeln!(s, "\n## Failures by cause\n").unwrap();
        s.push_str(&causes::table(c));
    }
    trial_sections(&mut s, r);
    s
}

/// report.md's provenance lines: what was run where, when, on which library, with which settings.
fn provenance_lines(s: &mut String, r: &Report) {
    let Some(p) = &r.provenance else {
        return;
    };
    writeln!(
        s,
        "Suite: {}. Host: {} (kernel {}, {}). Started {}, finished {}.\n",
        crate::harness::provenance::suite(&p.run.suite_version, &p.run.commit, p.run.dirty),
        p.run.host,
        p.run.kernel,
        p.run.os,
        p.run.started,
        p.finished
    )
    .unwrap();
    let devices: Vec<String> = p
        .devices
        .iter()
        .map(|d| format!("{} {} (UUID {}, PCI {})", d.ordinal, d.name, d.uuid, d.pci_bus_id))
        .collect();
    if !devices.is_empty() {
        writeln!(s, "Devices: {}.\n", devices.join("; ")).unwrap();
    }
    for l in &p.libraries {
        match &l.file {
            Some(f) => writeln!(
                s,
                "Library under test ({}): {}, {} bytes, sha256 {}, {} cu* exports.\n",
                l.named_by, f.file, f.size, f.sha256, f.cu_exports
            ),
            None => writeln!(
                s,
                "Library under test ({}): {} ({}).\n",
                l.named_by,
                l.path,
                l.error.as_deref().unwrap_or_default()
            ),
        }
        .unwrap();
    }
    let settings: Vec<String> = p.run.environment.iter().map(|(k, v)| format!("`{k}={v}`")).collect();
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

/// A trial's message on one line.
fn one_line(message: &str) -> String {
    message.replace('\n', " ⏎ ")
}

/// The sections after the tables: the failures, their first wrong answers, the declared
/// departures, then the trials of each other outcome, the slowest first among those that ran.
fn trial_sections(s: &mut String, r: &Report) {
    let failed = with_outcome(r, Outcome::Failed);
    if !failed.is_empty() {
        writeln!(s, "\n## Failed\n").unwrap();
        for t in &failed {
            let blame = match t.blame {
                Some(b) => format!(" (counted against {b} {})", crate::driver::api_name(b as u32)),
                None => String::new(),
            };
            writeln!(s, "- `{}`{blame}: {}", t.trial, one_line(&t.message)).unwrap();
        }
        writeln!(s, "\n## Deviations (expected vs observed)\n").unwrap();
        for t in &failed {
            match t.observations.iter().flatten().find(|o| !o.ok) {
                Some(o) => {
                    let documented = if o.documented.is_empty() || o.documented == o.expected {
                        String::new()
                    } else {
                        format!(" (documented: {})", o.documented)
                    };
                    writeln!(
                        s,
                        "- `{}`: `{}` — expected {}, observed {}{documented}",
                        t.trial, o.call, o.expected, o.observed
                    )
                    .unwrap()
                }
                None => writeln!(s, "- `{}`: {}", t.trial, t.message.lines().next().unwrap_or("")).unwrap(),
            }
        }
    }
    if let Some(known) = r.deviations.as_deref().filter(|d| !d.is_empty()) {
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
                d.id, d.api, d.documented, d.observed, d.seen_on, d.branches.0, d.branches.1, d.this_run
            )
            .unwrap();
        }
    }
    for (o, title) in [
        (
            Outcome::KnownDeparture,
            "Known departures on a branch they were not verified on (not failing; CONFORMANCE_STRICT=documented fails them)",
        ),
        (Outcome::ExpectedFailure, "Expected failures (CONFORMANCE_EXPECT)"),
        (
            Outcome::Flaky,
            "Flaky (failed, not failing: listed as flaky, or passed on a rerun)",
        ),
    ] {
        let trials = with_outcome(r, o);
        if !trials.is_empty() {
            writeln!(s, "\n## {title}\n").unwrap();
            for t in trials {
                writeln!(s, "- `{}`: {}", t.trial, one_line(&t.message)).unwrap();
            }
        }
    }
    let changed = with_outcome(r, Outcome::Changed);
    if !changed.is_empty() {
        writeln!(s, "\n## Changed (a documented crash no longer happens)\n").unwrap();
        for t in changed {
            writeln!(s, "- `{}`: {}", t.trial, t.message).unwrap();
        }
    }
    // Equal times in the order of the names.
    let mut slow: Vec<&Trial> = r
        .trials
        .iter()
        .flatten()
        .filter(|t| t.outcome != Outcome::Ignored)
        .collect();
    slow.sort_by(|a, b| a.trial.cmp(&b.trial));
    slow.sort_by(|a, b| b.secs.total_cmp(&a.secs));
    if !slow.is_empty() {
        writeln!(s, "\n## Slowest trials\n").unwrap();
        for t in slow.iter().take(10) {
            writeln!(s, "- {:.2} s `{}`", t.secs, t.trial).unwrap();
        }
    }
    let interrupted = with_outcome(r, Outcome::Interrupted);
    if let Some(first) = interrupted.first() {
        writeln!(s, "\n## Interrupted ({}: not run, or cut short)\n", first.message).unwrap();
        for t in &interrupted {
            writeln!(s, "- `{}`", t.trial).unwrap();
        }
    }
    let ignored = with_outcome(r, Outcome::Ignored);
    if !ignored.is_empty() {
        writeln!(s, "\n## Ignored (with reasons)\n").unwrap();
        for t in ignored {
            writeln!(s, "- `{}`: {}", t.trial, t.message).unwrap();
        }
    }
    let passed = with_outcome(r, Outcome::Passed);
    if !passed.is_empty() {
        writeln!(s, "\n## Passed\n").unwrap();
        for t in passed {
            let notes = if t.notes.is_empty() {
                String::new()
            } else {
                format!(" — {}", t.notes.join("; "))
            };
            writeln!(s, "- `{}` ({:.3} s){notes}", t.trial, t.secs).unwrap();
        }
    }
}
