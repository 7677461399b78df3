//! The same reports give the same matrix, byte for byte: each committed fleet page (`PAGES`) is what
//! `report::matrix` makes today from the committed reports it was made from, given as they were
//! given. Every file `Matrix::write` writes (matrix.md, matrix.html, matrix.json) is the committed
//! one, or its `.xz`; and no API of a page is ✓ in a column where a trial of it was interrupted.
//!
//! - docs/conformance/fleet/2026-11-26: the 34 reports of the final code, ae088b3 (the folder's
//!   README): 10 default runs on one H100 twice, 10 on one H200, and on two H200s one default run
//!   and three of every device; each run's report.json under the name `KIND-RUN.json` in one
//!   folder, in the order of their names (as the shell's glob gave them to `cargo xtask matrix …
//!   --out …/matrix`). Four columns: one a GPU model and settings.
//! - docs/conformance/fleet/h100-r580-2026-11-25: its 9 reports, `*/report.json` (`cargo xtask
//!   matrix --out matrix */report.json`), among them a run cut short by SIGTERM. Six columns.

use super::matrix::{from_files, Matrix};
use super::model_check::text_of;
use super::render_check::first_difference;
use std::path::{Path, PathBuf};

/// A committed page: its fleet folder, how its reports were given, how many, and its columns.
struct Page {
    fleet: &'static str,
    given: fn(&Path, &Path) -> Option<Vec<String>>,
    reports: usize,
    columns: usize,
}

const PAGES: &[Page] = &[
    Page {
        fleet: "docs/conformance/fleet/2026-11-26",
        given: renamed_from_runs,
        reports: 34,
        columns: 4,
    },
    Page {
        fleet: "docs/conformance/fleet/h100-r580-2026-11-25",
        given: in_place,
        reports: 9,
        columns: 6,
    },
];

/// The page's folder in each fleet folder.
const MATRIX: &str = "matrix";

/// The 2026-11-26 page's runs: the folders of the final code.
const KINDS: &[&str] = &["h100-ae088b3", "h100-ae088b3-2", "h200-ae088b3", "h200x2-ae088b3"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A folder of this test's own under the temporary directory, empty.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cump-matrix-check-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Each run's report.json (from its `.xz`) as `KIND-RUN.json` in `into`, the paths in the order of
/// their names; None where `xz` cannot run.
fn renamed_from_runs(fleet: &Path, into: &Path) -> Option<Vec<String>> {
    let mut paths = Vec::new();
    for kind in KINDS {
        let dir = fleet.join(kind);
        let runs = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for run in runs.flatten().map(|e| e.path()) {
            let xz = run.join("report.json.xz");
            if !xz.exists() {
                continue;
            }
            let name = format!("{kind}-{}.json", run.file_name().unwrap().to_string_lossy());
            let p = into.join(name);
            std::fs::write(&p, text_of(&xz)?).unwrap();
            paths.push(p.to_string_lossy().into_owned());
        }
    }
    paths.sort();
    Some(paths)
}

/// `*/report.json` of the fleet folder, in the order of their names.
fn in_place(fleet: &Path, _: &Path) -> Option<Vec<String>> {
    let mut paths: Vec<String> = std::fs::read_dir(fleet)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("report.json"))
        .filter(|p| p.exists())
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    paths.sort();
    Some(paths)
}

/// The committed file `name` of the page in `dir`, or its `.xz`; None where neither is there.
fn committed(dir: &Path, name: &str) -> Option<String> {
    let plain = dir.join(name);
    if plain.exists() {
        return text_of(&plain);
    }
    let xz = dir.join(format!("{name}.xz"));
    xz.exists().then(|| text_of(&xz)).flatten()
}

/// The names of the files `Matrix::write` writes that are in `dir`, sorted, `.xz` taken off.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().trim_end_matches(".xz").to_string())
        .filter(|n| n.starts_with("matrix.") && !n.ends_with(".png"))
        .collect();
    n.sort();
    n
}

/// The APIs ✓ in a column where a trial of them was interrupted or absent from a run.
fn misleading(m: &Matrix) -> Vec<String> {
    let mut wrong = Vec::new();
    for c in &m.columns {
        for a in c.apis.iter().filter(|a| a.test_passed == "✓") {
            let cut = c
                .trials
                .values()
                .any(|t| t.api.is_some() && t.api == a.index && (t.outcome == "interrupted" || t.not_in > 0));
            if cut {
                wrong.push(format!("{}: {}", c.label, a.api));
            }
        }
    }
    wrong
}

/// The page of `p`, made again and compared; the differences in words.
fn check(p: &Page) -> Vec<String> {
    let fleet = root().join(p.fleet);
    let given = scratch("reports");
    let Some(reports) = (p.given)(&fleet, &given) else {
        eprintln!("no `xz` command: the committed matrix of {} not checked", p.fleet);
        return Vec::new();
    };
    assert_eq!(reports.len(), p.reports, "the reports of {}: {reports:?}", p.fleet);
    let m = from_files(&reports).unwrap();
    assert_eq!(
        m.columns.len(),
        p.columns,
        "{}: one column a GPU model, library and settings",
        p.fleet
    );
    let mut wrong: Vec<String> = misleading(&m)
        .into_iter()
        .map(|w| format!("{}: ✓ with a trial interrupted: {w}", p.fleet))
        .collect();
    let out = scratch(&p.fleet.replace('/', "-"));
    m.write(&out).unwrap();
    let made = names(&out);
    let page = fleet.join(MATRIX);
    assert_eq!(
        made,
        names(&page),
        "{}: the files written are the files committed",
        p.fleet
    );
    for name in &made {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        let Some(was) = committed(&page, name) else {
            eprintln!("no `xz` command: the committed {name} not checked");
            continue;
        };
        if let Some(d) = first_difference(&was, &text) {
            wrong.push(format!(
                "{}/{MATRIX}/{name} differs at {d}; made now: {}",
                p.fleet,
                out.join(name).display()
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&given);
    if wrong.is_empty() {
        let _ = std::fs::remove_dir_all(&out);
        eprintln!(
            "{} committed reports: {} made as committed in {}/{MATRIX}",
            reports.len(),
            made.join(", "),
            p.fleet
        );
    }
    wrong
}

#[test]
fn the_committed_fleet_matrices_are_made_again_byte_for_byte() {
    let wrong: Vec<String> = PAGES.iter().flat_map(check).collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
