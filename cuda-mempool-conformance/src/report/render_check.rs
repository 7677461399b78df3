//! The same report gives the same outputs, byte for byte:
//! - a made-up run (`report::fixture`): its report.json, report.md, JUnit file and last screen
//!   (plain and CONFORMANCE_VERBOSE=1) are those committed under tests/data/report-fixture/ (made
//!   by the writer before the outputs were drawn from the model, but for the row sets' three
//!   fields and JUnit's order of names), and drawn again from that report.json read back, the same;
//! - committed runs: report.md drawn from their report.json is their report.md (`COMMITTED`).

use super::fixture;
use super::model_check::text_of;
use crate::report::{build, junit, markdown, screen, timeline};
use conformance_model::Report;
use std::path::{Path, PathBuf};

/// Committed runs (a run's folder, or a folder of runs) whose report.md the code of today draws
/// byte for byte from their report.json: the 10 default runs of b1f6b88 on one H200, the newest
/// (nothing that report.json or report.md hold changed since), and those of the code before
/// whose report.md reads the same: 780ca49's 10 on one H100, ae088b3's 30 on one H100 (twice)
/// and one H200, its default run on two H200s, and the early-graphs experiment's run that failed
/// (failures by cause, failed trials and their deviations). Left out: runs of older code, whose
/// report.md lacks lines of today's (the host's GPUs, the devices' PCI IDs), and ae088b3's
/// all-device runs on two H200s, whose row sets predate `supported`, `expected_failures` and `secs`
/// (and whose first run's report.md read the clock a second after its report.json had).
const COMMITTED: &[&str] = &[
    "docs/conformance/issue46/h200-b1f6b88",
    "docs/conformance/issue46/h100-780ca49",
    "docs/conformance/fleet/2026-11-26/h100-ae088b3",
    "docs/conformance/fleet/2026-11-26/h100-ae088b3-2",
    "docs/conformance/fleet/2026-11-26/h200-ae088b3",
    "docs/conformance/fleet/2026-11-26/h200x2-ae088b3/default-1",
    "docs/conformance/fleet/2026-11-26/experiment-early-graphs/h100-default-09",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/report-fixture")
}

/// Where `a` and `b` first differ: the line, and both lines.
pub(super) fn first_difference(a: &str, b: &str) -> Option<String> {
    if a == b {
        return None;
    }
    let (x, y): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let i = (0..x.len().max(y.len()))
        .find(|&i| x.get(i) != y.get(i))
        .unwrap_or(x.len());
    Some(format!(
        "line {}: {:?} vs {:?}",
        i + 1,
        x.get(i).copied().unwrap_or("(end, or a different last newline)"),
        y.get(i).copied().unwrap_or("(end, or a different last newline)")
    ))
}

/// `text` is the committed `name`; where it is not, it is left in the temporary directory to
/// compare (and to commit, where the change is meant).
fn same_as_committed(name: &str, text: &str) -> Result<(), String> {
    let committed = std::fs::read_to_string(golden_dir().join(name)).unwrap_or_default();
    let Some(d) = first_difference(&committed, text) else {
        return Ok(());
    };
    let out = std::env::temp_dir().join(format!("report-fixture-{}-{name}", std::process::id()));
    std::fs::write(&out, text).unwrap();
    Err(format!(
        "{name} differs from the committed one at {d}; this run's is {}",
        out.display()
    ))
}

/// A report's outputs beside report.json: (file name, text).
fn drawn(r: &Report) -> Vec<(&'static str, String)> {
    let screen = |verbose: bool| {
        let mut lines = screen::tables(r);
        lines.extend(screen::last_screen(r, verbose));
        let bars = timeline::of_report(r).unwrap();
        lines.extend(screen::time_lines(&bars, r.wall_s));
        lines.join("\n") + "\n"
    };
    vec![
        ("report.md", markdown::render(r)),
        ("junit.xml", junit::render(r)),
        ("screen.txt", screen(false)),
        ("screen-verbose.txt", screen(true)),
    ]
}

#[test]
fn the_fixture_run_renders_as_committed() {
    let report = build::report(&fixture::machine(), &fixture::records(), &fixture::facts());
    let json = report.to_json_text();
    let mut wrong: Vec<String> = [("report.json", json.clone())]
        .into_iter()
        .chain(drawn(&report))
        .filter_map(|(name, text)| same_as_committed(name, &text).err())
        .collect();
    // What report.json holds is all they are drawn from.
    let read: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(read.to_json_text(), json);
    for ((name, a), (_, b)) in drawn(&report).into_iter().zip(drawn(&read)) {
        if let Some(d) = first_difference(&a, &b) {
            wrong.push(format!("{name} drawn from report.json read back differs at {d}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The file `name` in `dir`, or its `.xz`; None where neither is there (or `xz` cannot run).
fn committed_text(dir: &Path, name: &str) -> Option<String> {
    let plain = dir.join(name);
    if plain.exists() {
        return text_of(&plain);
    }
    let xz = dir.join(format!("{name}.xz"));
    xz.exists().then(|| text_of(&xz)).flatten()
}

/// Whether `dir` holds `name`, or its `.xz`.
fn holds(dir: &Path, name: &str) -> bool {
    dir.join(name).exists() || dir.join(format!("{name}.xz")).exists()
}

/// The run folders of `COMMITTED`: each that holds a report.md, or each of its folders that does.
fn committed_runs() -> Vec<PathBuf> {
    let mut runs = Vec::new();
    for entry in COMMITTED.iter().map(|e| root().join(e)) {
        if holds(&entry, "report.md") {
            runs.push(entry);
            continue;
        }
        let mut inner: Vec<PathBuf> = std::fs::read_dir(&entry)
            .unwrap_or_else(|e| panic!("{}: {e}", entry.display()))
            .flatten()
            .map(|e| e.path())
            .filter(|p| holds(p, "report.md"))
            .collect();
        inner.sort();
        runs.extend(inner);
    }
    runs
}

#[test]
fn committed_reports_render_as_committed() {
    let (mut checked, mut unread, mut wrong) = (0, 0, Vec::new());
    for dir in committed_runs() {
        let (Some(json), Some(md)) = (committed_text(&dir, "report.json"), committed_text(&dir, "report.md")) else {
            unread += 1;
            continue;
        };
        let report: Report = serde_json::from_str(&json).unwrap();
        checked += 1;
        if let Some(d) = first_difference(&md, &markdown::render(&report)) {
            wrong.push(format!("{}/report.md differs at {d}", dir.display()));
        }
        if let Some(junit) = committed_text(&dir, "junit.xml") {
            if let Some(d) = first_difference(&junit, &junit::render(&report)) {
                wrong.push(format!("{}/junit.xml differs at {d}", dir.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    if checked == 0 && std::process::Command::new("xz").arg("--version").output().is_err() {
        // As `model_check`: their report.json are compressed.
        eprintln!("no `xz` command: {unread} committed runs not checked");
        return;
    }
    assert!(
        checked >= 52 && unread == 0,
        "committed runs checked: {checked}, without a report.json and a report.md: {unread}"
    );
    eprintln!("{checked} committed runs: report.md drawn from report.json as committed");
}
