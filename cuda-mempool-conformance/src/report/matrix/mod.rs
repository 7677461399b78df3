//! `--matrix REPORT.json… [--out DIR] [--expect FILE]` (and `cargo xtask matrix`): many reports as
//! one matrix, written as matrix.md, matrix.json and one self-contained matrix.html
//! (templates/matrix.html). This file: the matrix's types and the program; the parts, one job each:
//! - `origin`: a report as the matrix reads it (through `report::model`, reports of any age): what it
//!   was run on and with (GPU models, driver, library under test, entry mode, settings);
//! - `fold`: reports into runs (the shards of one run merged back into one, as they always were)
//!   and runs into columns (every run of one origin: a fleet's hosts of one GPU model, driver and
//!   library fold into one column, with a host count and the hosts that differ named);
//! - `verdict`: an API's Test Passed in a column, ✓ only when every trial of it was judged;
//! - `expect`: `--expect FILE`, a fleet's inventory, and its `missing` columns;
//! - `markdown` and `html`: the two drawings (the page opens with the API × column grid).

mod expect;
mod fold;
mod html;
mod markdown;
mod origin;
#[cfg(test)]
mod tests;
mod verdict;

pub use expect::Expected;
pub use origin::Origin;

use crate::report::model;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;

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

/// Read and merge report files; any unreadable one is an error.
pub fn from_files(paths: &[String]) -> Result<Matrix, String> {
    if paths.is_empty() {
        return Err("--matrix: no report given".into());
    }
    let reports: Vec<origin::Report> = paths.iter().map(|p| origin::load(p)).collect::<Result<_, _>>()?;
    Ok(matrix_of(named_from_shared_folder(reports, paths), Vec::new()))
}

/// Read and merge report files against a fleet's inventory (`--expect FILE`): a report that cannot
/// be read is named on the page, not an error, and every expected host or GPU model that no readable
/// report has is a `missing` column.
pub fn from_files_expecting(paths: &[String], expect_file: &str) -> Result<Matrix, String> {
    let entries = expect::read(expect_file)?;
    let (mut reports, mut unreadable) = (Vec::new(), Vec::new());
    for p in paths {
        match origin::load(p) {
            Ok(r) => reports.push(r),
            Err(why) => unreadable.push(Unreadable { path: p.clone(), why }),
        }
    }
    let mut m = matrix_of(named_from_shared_folder(reports, paths), unreadable);
    expect::apply(&mut m, &entries);
    Ok(m)
}

/// The reports named from the folder all `paths` share: a page built on one machine names none of
/// its paths.
fn named_from_shared_folder(mut reports: Vec<origin::Report>, paths: &[String]) -> Vec<origin::Report> {
    if let Some(shared) = common_dir(paths) {
        for r in &mut reports {
            if let Ok(rest) = Path::new(&r.path).strip_prefix(&shared) {
                r.path = rest.to_string_lossy().into_owned();
            }
        }
    }
    reports
}

fn matrix_of(reports: Vec<origin::Report>, unreadable: Vec<Unreadable>) -> Matrix {
    let columns = fold::columns(reports);
    let trials: BTreeSet<String> = columns.iter().flat_map(|c| c.trials.keys().cloned()).collect();
    Matrix {
        columns,
        trials: trials.into_iter().collect(),
        expected: Vec::new(),
        unreadable,
    }
}

/// The longest folder every path lies in.
fn common_dir(paths: &[String]) -> Option<std::path::PathBuf> {
    let mut shared = Path::new(paths.first()?)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    while !paths.iter().all(|p| Path::new(p).starts_with(&shared)) {
        if !shared.pop() {
            break;
        }
    }
    Some(shared)
}

impl Matrix {
    /// The `--expect` entries no readable report has.
    pub fn missing(&self) -> Vec<&str> {
        self.columns.iter().filter_map(|c| c.missing.as_deref()).collect()
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

/// The exit code of a matrix written with expected hosts or GPU models missing, or reports unreadable.
pub const INCOMPLETE: u8 = 1;

const USAGE: &str = "--matrix REPORT.json… [--out DIR] [--expect FILE]";

/// `--matrix REPORT.json… [--out DIR] [--expect FILE]` as a program: 0 when written, 1 when written
/// but `--expect` names a host or GPU model without a readable report (or a report could not be
/// read), 2 on bad input.
pub fn main(args: &[String]) -> ExitCode {
    let made = parse_args(args).and_then(|a| {
        let m = match &a.expect {
            Some(file) => from_files_expecting(&a.reports, file)?,
            None => from_files(&a.reports)?,
        };
        m.write(Path::new(&a.out))?;
        Ok((m, a))
    });
    match made {
        Ok((m, a)) => {
            println!(
                "conformance: matrix of {} column(s) from {} report(s) written to {} (matrix.md, matrix.json, matrix.html)",
                m.columns.len(),
                a.reports.len(),
                a.out
            );
            for u in &m.unreadable {
                eprintln!("conformance: --matrix: unreadable report {}: {}", u.path, u.why);
            }
            let missing = m.missing();
            if !missing.is_empty() {
                eprintln!(
                    "conformance: --matrix: expected, but no readable report has it: {}",
                    missing.join(", ")
                );
            }
            if missing.is_empty() && m.unreadable.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(INCOMPLETE)
            }
        }
        Err(e) => {
            eprintln!("conformance: {e}\nconformance: usage: {USAGE}");
            ExitCode::from(2)
        }
    }
}

/// The program's arguments.
struct Args {
    reports: Vec<String>,
    out: String,
    expect: Option<String>,
}

/// The reports, the output folder and the inventory; flags other than `--out` and `--expect`
/// (libtest's own, passed along by cargo or a runner) are skipped.
fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        reports: Vec::new(),
        out: DEFAULT_OUT.to_string(),
        expect: None,
    };
    let mut it = args.iter();
    while let Some(x) = it.next() {
        match x.as_str() {
            "--out" => a.out = it.next().ok_or("--matrix: --out needs a folder")?.clone(),
            "--expect" => {
                let f = it.next().ok_or("--matrix: --expect needs a file")?;
                if a.expect.replace(f.clone()).is_some() {
                    return Err("--matrix: --expect given twice".into());
                }
            }
            f if f.starts_with("--") => {}
            _ => a.reports.push(x.clone()),
        }
    }
    if a.reports.is_empty() && a.expect.is_none() {
        return Err("--matrix: no report given".into());
    }
    Ok(a)
}
