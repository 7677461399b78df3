//! Reading report files into a matrix (with or without `--expect`'s inventory), writing its three
//! files, and `--matrix` as a program: its arguments and its exit code.

use super::columns::{Matrix, Unreadable};
use super::{expect, fold, origin};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;

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

pub(super) fn matrix_of(reports: Vec<origin::Report>, unreadable: Vec<Unreadable>) -> Matrix {
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
