//! `cargo xtask matrix REPORT.json… [--out DIR] [--expect FILE]` (the suite's `--matrix`, one
//! implementation: conformance's report::matrix; `--expect`'s file: one host name or GPU model a
//! line, `#` comments, each without a readable report a red `missing` column and a non-zero exit)
//! and its CI step: the committed H100 reports as one page, opened in
//! headless Chromium, its drawn counts checked against matrix.json, its screenshot kept.

use conformance_model::Report;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `cargo xtask matrix` writes without `--out`, and where CI writes (under the workspace).
const OUT: &str = "target/matrix";
const CI_OUT: &str = "target/matrix-ci";

const USAGE: &str = "matrix: usage: cargo xtask matrix REPORT.json… [--out DIR] [--expect FILE]";

/// `cargo xtask matrix REPORT.json… [--out DIR] [--expect FILE]`; `cargo xtask matrix --ci`: the CI
/// step alone.
pub fn matrix(root: &Path, args: &[String]) -> Result<(), String> {
    if args == ["--ci"] {
        return ci(root);
    }
    let (mut named, mut out, mut expect) = (Vec::new(), root.join(OUT), None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = PathBuf::from(it.next().ok_or("matrix: --out needs a folder")?),
            "--expect" => {
                let f = it.next().ok_or("matrix: --expect needs a file")?;
                if expect.replace(absolute(Path::new(f))?).is_some() {
                    return Err("matrix: --expect given twice".into());
                }
            }
            _ => named.push(a),
        }
    }
    if named.is_empty() && expect.is_none() {
        return Err(USAGE.into());
    }
    // With an inventory, a report that is not there is the suite's to name (a missing host), not
    // an error here.
    let reports = named
        .iter()
        .map(|a| match expect {
            Some(_) => absolute(Path::new(a)),
            None => std::fs::canonicalize(a).map_err(|e| format!("{a}: {e}")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut extra: Vec<std::ffi::OsString> = Vec::new();
    if let Some(f) = expect {
        extra.extend(["--expect".into(), f.into()]);
    }
    suite_matrix(root, &reports, &absolute(&out)?, &extra)
}

fn absolute(p: &Path) -> Result<PathBuf, String> {
    std::path::absolute(p).map_err(|e| format!("{}: {e}", p.display()))
}

/// The suite's `--matrix` exit code of a page written with expected hosts or GPU models missing
/// (conformance's `report::matrix::INCOMPLETE`).
const INCOMPLETE: i32 = 1;

/// The suite's `--matrix` (its test binary runs from the crate's folder: every path absolute).
fn suite_matrix(root: &Path, reports: &[PathBuf], out: &Path, extra: &[std::ffi::OsString]) -> Result<(), String> {
    let mut args: Vec<std::ffi::OsString> = reports.iter().map(Into::into).collect();
    args.extend(["--out".into(), out.into()]);
    args.extend(extra.iter().cloned());
    let status = crate::exec::suite_mode(root, "--matrix", &args)?;
    match status.code() {
        _ if status.success() => Ok(()),
        Some(INCOMPLETE) => Err(format!(
            "the matrix is written to {}, but an expected host or GPU model has no readable report (its `missing` column)",
            out.display()
        )),
        _ => Err(format!("the matrix could not be made ({status})")),
    }
}

/// The committed reports of H100 runs: every report.json-shaped file (one with `trials`) under
/// docs/conformance whose path names h100.
fn committed_h100_reports(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut dirs = vec![root.join("docs/conformance")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
            let p = e.map_err(|e| e.to_string())?.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "json") && p.to_string_lossy().contains("h100") {
                let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                // A report: it reads as one and has trials (matrix.json's `trials` are names, and
                // mutants.json's a map: neither reads).
                if serde_json::from_str::<Report>(&text).is_ok_and(|r| r.trials.is_some_and(|t| !t.is_empty())) {
                    found.push(p);
                }
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Debian's `chromium` (or `chromium-browser` elsewhere).
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| crate::exec::runs(b, &["--version"]))
}

/// Headless Chromium on `page` with `args`: its stdout. `--no-sandbox`: CI runs as root, where
/// Chromium refuses its sandbox; the page is our own file and fetches nothing.
fn headless(browser: &str, dir: &Path, args: &[&str], page: &Path) -> Result<String, String> {
    let o = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"])
        .arg(format!("--user-data-dir={}", dir.join("chromium-profile").display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .map_err(|e| format!("cannot run {browser}: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "{browser} {args:?} failed ({}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The CI step: the committed H100 reports merged into target/matrix-ci, the page opened in
/// headless Chromium; what its script counted in the grid (`#rendered-counts`) must equal each
/// column's totals in matrix.json, and the screenshot (target/matrix-ci/matrix.png) is the artifact.
pub fn ci(root: &Path) -> Result<(), String> {
    let reports = committed_h100_reports(root)?;
    if reports.is_empty() {
        return Err("matrix: no committed H100 report under docs/conformance".into());
    }
    let dir = root.join(CI_OUT);
    println!(
        "xtask ci: matrix of {} committed H100 reports into {CI_OUT}",
        reports.len()
    );
    suite_matrix(root, &reports, &dir, &[])?;
    let browser =
        chromium().ok_or("matrix: no chromium on PATH; run `sudo bash .ci/install-deps` (Debian: `chromium`)")?;
    let page = dir.join("matrix.html");
    let dom = headless(browser, &dir, &["--dump-dom"], &page)?;
    let shot = dir.join("matrix.png");
    let _ = std::fs::remove_file(&shot);
    headless(
        browser,
        &dir,
        &[&format!("--screenshot={}", shot.display()), "--window-size=1600,1200"],
        &page,
    )?;
    if std::fs::metadata(&shot).map_or(0, |m| m.len()) == 0 {
        return Err(format!("matrix: {browser} wrote no screenshot at {}", shot.display()));
    }
    let said = counts_from_json(&std::fs::read_to_string(dir.join("matrix.json")).map_err(|e| e.to_string())?)?;
    let drawn = drawn_counts(&dom)?;
    if drawn != said {
        return Err(format!(
            "matrix: the page Chromium drew counts {drawn} per column, matrix.json says {said}"
        ));
    }
    println!(
        "xtask ci: matrix page drawn by {browser}: {} columns, counts equal to matrix.json; screenshot {CI_OUT}/matrix.png",
        said.as_array().map_or(0, Vec::len)
    );
    Ok(())
}

/// matrix.json as the suite's report::matrix writes it: the part read here.
#[derive(Deserialize)]
struct MatrixJson {
    columns: Vec<Column>,
}

/// A column of matrix.json: its count of each outcome.
#[derive(Deserialize)]
struct Column {
    totals: BTreeMap<String, u64>,
}

/// Each column's totals in matrix.json's text, as the page's script writes them:
/// `[{outcome: count}, …]`.
fn counts_from_json(text: &str) -> Result<Value, String> {
    let page: MatrixJson = serde_json::from_str(text).map_err(|e| format!("matrix.json: {e}"))?;
    let totals: Vec<_> = page.columns.into_iter().map(|c| c.totals).collect();
    serde_json::to_value(totals).map_err(|e| format!("matrix.json: {e}"))
}

/// What the page's script counted, from the DOM Chromium dumped (its `#rendered-counts`); absent
/// when the page did not render or its script did not run.
fn drawn_counts(dom: &str) -> Result<Value, String> {
    let start = dom
        .find("id=\"rendered-counts\"")
        .and_then(|i| dom[i..].find('>').map(|j| i + j + 1))
        .ok_or("matrix: the dumped page has no #rendered-counts: it did not render")?;
    let end = dom[start..]
        .find("</pre>")
        .ok_or("matrix: #rendered-counts is not closed")?
        + start;
    let text = dom[start..end]
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">");
    serde_json::from_str(&text)
        .map_err(|e| format!("matrix: #rendered-counts {text:?}: {e} (did the page's script run?)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_counts_are_read_from_the_dom() {
        let dom = r#"<pre id="rendered-counts" hidden="">[{"failed":1,"passed":2}]</pre>"#;
        assert_eq!(
            drawn_counts(dom).unwrap(),
            serde_json::json!([{"passed": 2, "failed": 1}])
        );
        assert!(
            drawn_counts(r#"<pre id="rendered-counts" hidden=""></pre>"#).is_err(),
            "a script that did not run"
        );
        let j = serde_json::json!({"columns": [{"name": "H100", "totals": {"passed": 2, "failed": 1}}]});
        assert_eq!(counts_from_json(&j.to_string()).unwrap(), drawn_counts(dom).unwrap());
        assert!(counts_from_json("{}").unwrap_err().starts_with("matrix.json: "));
    }
}
