//! `--matrix REPORT.json… [--out DIR]` (and `cargo xtask matrix`): many reports as one matrix, written
//! as matrix.md, matrix.json and one self-contained matrix.html (templates/matrix.html).
//!
//! A column is one run: one report, or the shards of one run (reports with a `partition`, the same
//! devices, driver, library, entry mode, suite commit and host where the reports name them, the same
//! n, each k once) merged back into one. Reports of any age are read (through `report::model`): a
//! field a report lacks is left out, never an error.

use crate::report::model;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

/// The HTML page's template: inline CSS and JavaScript, no external asset.
const PAGE: &str = include_str!("../../templates/matrix.html");

/// One API's row of the PhOS-style table in a column (from report.json's `apis`: [`model::ApiRow`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ApiRow {
    pub index: Option<u64>,
    pub api: String,
    pub supported: String,
    pub test_passed: String,
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
    pub changed: u64,
    pub known_departures: u64,
    pub expected_failures: u64,
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

/// One trial's outcome in one column, with its message (the failure's words).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub outcome: String,
    pub message: String,
}

/// Where a report came from: what tells columns apart.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Origin {
    pub devices: String,
    pub driver: String,
    pub library: String,
    pub entry: String,
    pub commit: Option<String>,
    pub host: Option<String>,
}

/// One column: one run, whole or put back together from its shards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub label: String,
    pub origin: Origin,
    pub reports: Vec<String>,
    /// The shards merged here (k of n), when the reports were shards.
    pub shards: Option<(Vec<usize>, usize)>,
    pub date: String,
    /// Trials by outcome.
    pub totals: BTreeMap<String, usize>,
    pub apis: Vec<ApiRow>,
    pub causes: Vec<CauseRow>,
    pub trials: BTreeMap<String, Cell>,
}

/// The columns, and every trial any of them has (sorted).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    pub columns: Vec<Column>,
    pub trials: Vec<String>,
}

fn file_name(p: &str) -> String {
    Path::new(p)
        .file_name()
        .map_or(p.to_string(), |f| f.to_string_lossy().into_owned())
}

impl Origin {
    fn of(r: &model::Report) -> Origin {
        let m = &r.machine;
        let names: Vec<&str> = m.devices.iter().map(|d| d.name.as_str()).collect();
        let under_test: Vec<String> = m.under_test.iter().flatten().map(|l| file_name(&l.path)).collect();
        let library = (!under_test.is_empty())
            .then(|| under_test.join(" + "))
            .or_else(|| m.libcuda.as_deref().map(file_name))
            .unwrap_or_else(|| "?".into());
        let known = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let driver = r
            .driver
            .as_deref()
            .and_then(known)
            .or_else(|| m.identity.as_ref().and_then(|i| known(&i.version)))
            .or_else(|| {
                r.driver_version
                    .and_then(|v| u64::try_from(v).ok())
                    .map(|v| format!("CUDA {v}"))
            })
            .unwrap_or_else(|| "?".into());
        let entry = m.entry.as_deref().unwrap_or("?");
        Origin {
            devices: if names.is_empty() {
                "no device".into()
            } else {
                names.join(" + ")
            },
            driver,
            library,
            entry: entry.split(" (").next().unwrap_or(entry).to_string(),
            // The matrix has always looked for the suite commit and the host where no report has
            // them (report.json keeps them in `provenance`): a column's origin names neither.
            commit: None,
            host: None,
        }
    }

    fn label(&self) -> String {
        format!("{} · {} · {} · {}", self.devices, self.driver, self.library, self.entry)
    }
}

/// A report as the matrix reads it.
struct Report {
    path: String,
    origin: Origin,
    partition: Option<(usize, usize)>,
    date: String,
    apis: Vec<ApiRow>,
    causes: Vec<CauseRow>,
    trials: BTreeMap<String, Cell>,
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
        }
    }
}

fn load(path: &str) -> Result<Report, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--matrix: cannot read {path}: {e}"))?;
    let r: model::Report = serde_json::from_str(&text).map_err(|e| format!("--matrix: {path} is not JSON ({e})"))?;
    let trials = r
        .trials
        .as_deref()
        .ok_or_else(|| format!("--matrix: {path} has no trials (is it a conformance report.json?)"))?;
    Ok(Report {
        path: path.to_string(),
        origin: Origin::of(&r),
        partition: r.shard(),
        date: r.date.clone().unwrap_or_default(),
        apis: r.apis.iter().map(ApiRow::from).collect(),
        causes: r
            .causes
            .iter()
            .flatten()
            .map(|c| CauseRow {
                text: c.text.clone(),
                count: c.count as usize,
                trials: c.trials.clone(),
            })
            .collect(),
        trials: trials
            .iter()
            .map(|t| {
                let cell = Cell {
                    outcome: t.outcome.clone(),
                    message: t.message.clone(),
                };
                (t.trial.clone(), cell)
            })
            .collect(),
    })
}

/// Worst first: of a trial that several shards ran (the `suite::` trials), the worst outcome stands.
const SEVERITY: &[&str] = &[
    "failed",
    "interrupted",
    "flaky",
    "changed",
    "expected-failure",
    "known-departure",
    "passed",
    "ignored",
];

fn severity(outcome: &str) -> usize {
    SEVERITY.iter().position(|o| *o == outcome).unwrap_or(1)
}

/// ✗ over ✓ over —: a shard that failed an API fails it for the run.
fn worse_mark(a: &str, b: &str) -> String {
    let rank = |m: &str| ["✗", "✓", "—"].iter().position(|x| *x == m).unwrap_or(3);
    if rank(b) < rank(a) { b } else { a }.to_string()
}

/// One column from one report or the shards of one run.
fn column(reports: &[Report]) -> Column {
    let first = &reports[0];
    let mut apis: Vec<ApiRow> = Vec::new();
    let mut causes: BTreeMap<String, CauseRow> = BTreeMap::new();
    let mut trials: BTreeMap<String, Cell> = BTreeMap::new();
    for r in reports {
        for a in &r.apis {
            match apis.iter_mut().find(|x| x.index == a.index && x.api == a.api) {
                None => apis.push(a.clone()),
                Some(x) => {
                    x.supported = worse_mark(&x.supported, &a.supported);
                    x.test_passed = worse_mark(&x.test_passed, &a.test_passed);
                    x.passed += a.passed;
                    x.failed += a.failed;
                    x.ignored += a.ignored;
                    x.changed += a.changed;
                    x.known_departures += a.known_departures;
                    x.expected_failures += a.expected_failures;
                }
            }
        }
        for c in &r.causes {
            let e = causes.entry(c.text.clone()).or_insert_with(|| CauseRow {
                text: c.text.clone(),
                ..CauseRow::default()
            });
            e.count += c.count;
            e.trials.extend(c.trials.iter().cloned());
        }
        for (name, cell) in &r.trials {
            match trials.get(name) {
                Some(had) if severity(&had.outcome) <= severity(&cell.outcome) => {}
                _ => {
                    trials.insert(name.clone(), cell.clone());
                }
            }
        }
    }
    let mut causes: Vec<CauseRow> = causes.into_values().collect();
    causes.sort_by_key(|c| std::cmp::Reverse(c.count));
    let mut totals = BTreeMap::new();
    for c in trials.values() {
        *totals.entry(c.outcome.clone()).or_insert(0) += 1;
    }
    let shards = first.partition.map(|(_, n)| {
        let mut ks: Vec<usize> = reports.iter().filter_map(|r| r.partition.map(|p| p.0)).collect();
        ks.sort_unstable();
        (ks, n)
    });
    Column {
        label: first.origin.label(),
        origin: first.origin.clone(),
        reports: reports.iter().map(|r| r.path.clone()).collect(),
        shards,
        date: first.date.clone(),
        totals,
        apis,
        causes,
        trials,
    }
}

/// Merge reports into columns: shards of one run into one, every other report a column of its own,
/// in the order the reports were given. Labels that would repeat say their shards, then their date,
/// then their place.
fn merge(reports: Vec<Report>) -> Matrix {
    // The runs: a shard joins the first run of its origin and n that lacks its k.
    let mut runs: Vec<Vec<Report>> = Vec::new();
    for r in reports {
        let home = r.partition.and_then(|(k, n)| {
            runs.iter().position(|run| {
                run[0].origin == r.origin
                    && run[0].partition.is_some_and(|p| p.1 == n)
                    && run.iter().all(|x| x.partition.map(|p| p.0) != Some(k))
            })
        });
        match home {
            Some(i) => runs[i].push(r),
            None => runs.push(vec![r]),
        }
    }
    let mut columns: Vec<Column> = runs.iter().map(|run| column(run)).collect();
    let count = |cols: &[Column], l: &str| cols.iter().filter(|c| c.label == l).count();
    let steps: [&dyn Fn(&Column) -> String; 3] = [
        &|c| match &c.shards {
            Some((ks, n)) => format!(
                " · shards {}/{n}",
                ks.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(",")
            ),
            None => String::new(),
        },
        &|c| format!(" · {}", c.date),
        &|_| String::new(),
    ];
    for (step, add) in steps.iter().enumerate() {
        let before = columns.clone();
        for (i, c) in columns.iter_mut().enumerate() {
            if count(&before, &c.label) > 1 {
                c.label += &add(c);
                if step == 2 {
                    c.label += &format!(" #{}", i + 1);
                }
            }
        }
    }
    let trials: BTreeSet<String> = columns.iter().flat_map(|c| c.trials.keys().cloned()).collect();
    Matrix {
        columns,
        trials: trials.into_iter().collect(),
    }
}

/// Read and merge report files.
pub fn from_files(paths: &[String]) -> Result<Matrix, String> {
    if paths.is_empty() {
        return Err("--matrix: no report given".into());
    }
    let mut reports: Vec<Report> = paths.iter().map(|p| load(p)).collect::<Result<_, _>>()?;
    // Named from the folder they share: a page built on one machine names none of its paths.
    let shared = common_dir(paths);
    for r in &mut reports {
        if let Ok(rest) = Path::new(&r.path).strip_prefix(&shared) {
            r.path = rest.to_string_lossy().into_owned();
        }
    }
    Ok(merge(reports))
}

/// The longest folder every path lies in.
fn common_dir(paths: &[String]) -> std::path::PathBuf {
    let mut shared = Path::new(&paths[0]).parent().map(Path::to_path_buf).unwrap_or_default();
    while !paths.iter().all(|p| Path::new(p).starts_with(&shared)) {
        if !shared.pop() {
            break;
        }
    }
    shared
}

/// The outcome as a CSS class name (letters and dashes only).
fn class(outcome: &str) -> String {
    outcome
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

impl Matrix {
    /// The trials whose outcome is not the same in every column, or that failed somewhere.
    fn notable(&self) -> Vec<&String> {
        self.trials
            .iter()
            .filter(|t| {
                let o: BTreeSet<Option<&str>> = self
                    .columns
                    .iter()
                    .map(|c| c.trials.get(*t).map(|x| x.outcome.as_str()))
                    .collect();
                o.len() > 1 || o.contains(&Some("failed"))
            })
            .collect()
    }

    /// Every API index any column has, in order, with its name.
    fn api_index(&self) -> Vec<(Option<u64>, String)> {
        let s: BTreeSet<(Option<u64>, String)> = self
            .columns
            .iter()
            .flat_map(|c| c.apis.iter().map(|a| (a.index, a.api.clone())))
            .collect();
        s.into_iter().collect()
    }

    /// matrix.md: the columns, the PhOS-style table per column side by side, the causes per column,
    /// and the trials that differ or fail.
    pub fn markdown(&self) -> String {
        let mut s = String::from("# Conformance matrix\n\n## Columns\n\n");
        for (i, c) in self.columns.iter().enumerate() {
            let totals: Vec<String> = c.totals.iter().map(|(o, n)| format!("{n} {o}")).collect();
            writeln!(
                s,
                "- **c{}**: {} ({}): {}; from {}",
                i + 1,
                c.label,
                c.date,
                totals.join(", "),
                c.reports.join(", ")
            )
            .unwrap();
        }
        s += "\n## APIs: Supported / Test Passed\n\n| Index | API |";
        for i in 1..=self.columns.len() {
            write!(s, " c{i} Supported | c{i} Test Passed |").unwrap();
        }
        s += "\n|---|---|";
        s += &"---|---|".repeat(self.columns.len());
        s += "\n";
        for (index, api) in self.api_index() {
            write!(s, "| {} | {api} |", index.map_or("—".into(), |i| i.to_string())).unwrap();
            for c in &self.columns {
                let a = c.apis.iter().find(|a| a.index == index && a.api == api);
                let (sup, pass) = a.map_or(("", ""), |a| (a.supported.as_str(), a.test_passed.as_str()));
                write!(s, " {sup} | {pass} |").unwrap();
            }
            s += "\n";
        }
        s += "\n## Causes of failures\n";
        for (i, c) in self.columns.iter().enumerate() {
            writeln!(s, "\n### c{}: {}\n", i + 1, c.label).unwrap();
            if c.causes.is_empty() {
                s += "none\n";
            }
            for cause in &c.causes {
                writeln!(s, "- {} × {}", cause.count, cause.text).unwrap();
            }
        }
        let notable = self.notable();
        writeln!(
            s,
            "\n## Trials that differ between columns or fail ({})\n",
            notable.len()
        )
        .unwrap();
        s += "| Trial |";
        for i in 1..=self.columns.len() {
            write!(s, " c{i} |").unwrap();
        }
        s += "\n|---|";
        s += &"---|".repeat(self.columns.len());
        s += "\n";
        for t in notable {
            write!(s, "| `{t}` |").unwrap();
            for c in &self.columns {
                write!(s, " {} |", c.trials.get(t).map_or("absent", |x| x.outcome.as_str())).unwrap();
            }
            s += "\n";
        }
        s
    }

    /// matrix.html: one page, everything inline (templates/matrix.html).
    pub fn html(&self) -> Result<String, String> {
        let mut env = minijinja::Environment::new();
        env.add_template("matrix.html", PAGE)
            .map_err(|e| format!("matrix template: {e}"))?;
        let apis: Vec<Value> = self
            .api_index()
            .into_iter()
            .map(|(index, api)| {
                let cells: Vec<Value> = self
                    .columns
                    .iter()
                    .map(|c| serde_json::to_value(c.apis.iter().find(|a| a.index == index && a.api == api)).unwrap())
                    .collect();
                serde_json::json!({"index": index, "api": api, "cells": cells})
            })
            .collect();
        let rows: Vec<Value> = self
            .trials
            .iter()
            .map(|t| {
                let cells: Vec<Value> = self
                    .columns
                    .iter()
                    .map(|c| match c.trials.get(t) {
                        Some(x) => {
                            serde_json::json!({"outcome": x.outcome, "class": class(&x.outcome), "message": x.message})
                        }
                        None => serde_json::json!({"outcome": "absent", "class": "absent", "message": ""}),
                    })
                    .collect();
                serde_json::json!({"trial": t, "cells": cells})
            })
            .collect();
        let outcomes: BTreeSet<&String> = self.columns.iter().flat_map(|c| c.totals.keys()).collect();
        let legend: Vec<Value> = outcomes
            .into_iter()
            .map(|o| serde_json::json!({"outcome": o, "class": class(o)}))
            .collect();
        let tmpl = env
            .get_template("matrix.html")
            .map_err(|e| format!("matrix template: {e}"))?;
        tmpl.render(minijinja::context! {
            columns => self.columns, apis => apis, rows => rows, legend => legend,
        })
        .map_err(|e| format!("matrix page: {e}"))
    }

    /// Write matrix.md, matrix.json and matrix.html into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let html = self.html()?;
        let json = serde_json::to_string_pretty(self).map_err(|e| e.to_string())? + "\n";
        std::fs::create_dir_all(dir)
            .and_then(|_| std::fs::write(dir.join("matrix.md"), self.markdown()))
            .and_then(|_| std::fs::write(dir.join("matrix.json"), json))
            .and_then(|_| std::fs::write(dir.join("matrix.html"), html))
            .map_err(|e| format!("--matrix: cannot write into {}: {e}", dir.display()))
    }
}

/// Where the matrix goes without `--out`.
pub const DEFAULT_OUT: &str = "conformance-matrix";

/// `--matrix REPORT.json… [--out DIR]` as a program: 0 when written, 2 on bad input.
pub fn main(args: &[String]) -> ExitCode {
    let made = parse_args(args).and_then(|(reports, out)| {
        let m = from_files(&reports)?;
        m.write(Path::new(&out))?;
        Ok(format!(
            "conformance: matrix of {} column(s) from {} report(s) written to {out} (matrix.md, matrix.json, matrix.html)",
            m.columns.len(),
            reports.len()
        ))
    });
    match made {
        Ok(said) => {
            println!("{said}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("conformance: {e}\nconformance: usage: --matrix REPORT.json… [--out DIR]");
            ExitCode::from(2)
        }
    }
}

/// The reports and the output folder; flags other than `--out` (libtest's own, passed along by
/// cargo or a runner) are skipped.
fn parse_args(args: &[String]) -> Result<(Vec<String>, String), String> {
    let (mut reports, mut out) = (Vec::new(), DEFAULT_OUT.to_string());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = it.next().ok_or("--matrix: --out needs a folder")?.clone(),
            f if f.starts_with("--") => {}
            _ => reports.push(a.clone()),
        }
    }
    Ok((reports, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(k_n: Option<(usize, usize)>, device: &str, trials: &[(&str, &str)]) -> Report {
        let r: model::Report = serde_json::from_value(serde_json::json!({
            "date": "2026-11-26 10:00:00 UTC", "driver": "580.159.04",
            "machine": {"devices": [{"name": device}], "libcuda": "/x/libcuda.so.580.159.04",
                "entry": "proc-address (cuGetProcAddress of libcuda.so.1)"},
            "partition": k_n.map(|(k, n)| serde_json::json!({"k": k, "n": n, "by": "count"})),
        }))
        .unwrap();
        Report {
            path: format!("{device}-{k_n:?}.json"),
            origin: Origin::of(&r),
            partition: r.shard(),
            date: "d".into(),
            apis: vec![],
            causes: vec![],
            trials: trials
                .iter()
                .map(|(t, o)| {
                    (
                        t.to_string(),
                        Cell {
                            outcome: o.to_string(),
                            message: format!("{t} {o}"),
                        },
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn shards_merge_and_machines_stay_apart() {
        let a = report(
            Some((1, 2)),
            "H100",
            &[("820::a", "passed"), ("suite::no_leaks", "passed")],
        );
        let b = report(
            Some((2, 2)),
            "H100",
            &[("821::b", "failed"), ("suite::no_leaks", "failed")],
        );
        let c = report(
            None,
            "H200",
            &[
                ("820::a", "passed"),
                ("821::b", "passed"),
                ("suite::no_leaks", "passed"),
            ],
        );
        let m = merge(vec![a, c, b]);
        assert_eq!(m.columns.len(), 2, "{:?}", m.columns);
        let shards = &m.columns[0];
        assert_eq!(shards.shards, Some((vec![1, 2], 2)));
        assert_eq!(shards.trials.len(), 3);
        assert_eq!(
            shards.trials["suite::no_leaks"].outcome, "failed",
            "the worst shard's outcome stands"
        );
        assert_eq!(shards.totals["failed"], 2);
        assert!(m.columns[1]
            .label
            .starts_with("H200 · 580.159.04 · libcuda.so.580.159.04 · proc-address"));
        assert!(
            m.html().unwrap().contains("821::b failed"),
            "the message is in the page"
        );
        assert!(
            m.markdown().contains("| `821::b` | failed | passed |"),
            "{}",
            m.markdown()
        );
    }
}
