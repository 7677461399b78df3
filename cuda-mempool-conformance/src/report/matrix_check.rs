//! The same reports give the same matrix, byte for byte: the committed fleet page
//! (docs/conformance/fleet/2026-11-26/matrix/, `MATRIX`) is what `report::matrix` makes today from
//! the committed reports it was made from (`KINDS`), given as they were given: each run's
//! report.json under the name `KIND-RUN.json` in one folder, in the order of their names (as the
//! shell's glob gave them to `cargo xtask matrix … --out …/matrix`). Every file `Matrix::write`
//! writes (matrix.md, matrix.html, matrix.json) is the committed one, or its `.xz`.

use super::matrix::from_files;
use super::model_check::text_of;
use super::render_check::first_difference;
use std::path::{Path, PathBuf};

/// The fleet's folder, and the folders of its runs the page is made of: the 34 reports of the
/// final code, ae088b3 (the folder's README): 10 default runs on one H100 twice, 10 on one H200,
/// and on two H200s one default run and three of every device.
const FLEET: &str = "docs/conformance/fleet/2026-11-26";
const KINDS: &[&str] = &["h100-ae088b3", "h100-ae088b3-2", "h200-ae088b3", "h200x2-ae088b3"];
const MATRIX: &str = "matrix";

fn fleet() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(FLEET)
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
fn reports_as_given(into: &Path) -> Option<Vec<String>> {
    let mut paths = Vec::new();
    for kind in KINDS {
        let dir = fleet().join(kind);
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

/// The committed file `name` of the page, or its `.xz`; None where neither is there.
fn committed(name: &str) -> Option<String> {
    let dir = fleet().join(MATRIX);
    let plain = dir.join(name);
    if plain.exists() {
        return text_of(&plain);
    }
    let xz = dir.join(format!("{name}.xz"));
    xz.exists().then(|| text_of(&xz)).flatten()
}

/// The names of the files in `dir`, sorted, `.xz` taken off.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().trim_end_matches(".xz").to_string())
        .collect();
    n.sort();
    n
}

#[test]
fn the_committed_fleet_matrix_is_made_again_byte_for_byte() {
    let given = scratch("reports");
    let Some(reports) = reports_as_given(&given) else {
        eprintln!("no `xz` command: the committed matrix not checked");
        return;
    };
    assert_eq!(reports.len(), 34, "the reports of the page: {reports:?}");
    let m = from_files(&reports).unwrap();
    assert_eq!(m.columns.len(), 34, "one column a run");
    let out = scratch("out");
    m.write(&out).unwrap();
    let made = names(&out);
    assert_eq!(
        made,
        names(&fleet().join(MATRIX)),
        "the files written are the files committed"
    );
    let mut wrong = Vec::new();
    for name in &made {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        let Some(was) = committed(name) else {
            eprintln!("no `xz` command: the committed {name} not checked");
            continue;
        };
        if let Some(d) = first_difference(&was, &text) {
            wrong.push(format!("{name} differs at {d}; made now: {}", out.join(name).display()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let _ = std::fs::remove_dir_all(&given);
    let _ = std::fs::remove_dir_all(&out);
    eprintln!(
        "{} committed reports: {} made as committed in {FLEET}/{MATRIX}",
        reports.len(),
        made.join(", ")
    );
}
