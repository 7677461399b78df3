//! The report's outputs for a made-up run (`report::fixture`) are those committed under
//! tests/data/report-fixture/: report.json, report.md, the JUnit file and the terminal's last
//! screen (plain and CONFORMANCE_VERBOSE=1), byte for byte.

use super::fixture;
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/report-fixture")
}

/// `text` is the committed `name`; where it is not, it is left in the temporary directory to
/// compare (and to commit, where the change is meant).
fn same_as_committed(name: &str, text: &str) -> Result<(), String> {
    let committed = std::fs::read_to_string(golden_dir().join(name)).unwrap_or_default();
    if committed == text {
        return Ok(());
    }
    let out = std::env::temp_dir().join(format!("report-fixture-{}-{name}", std::process::id()));
    std::fs::write(&out, text).unwrap();
    let line = committed
        .lines()
        .zip(text.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(committed.lines().count().min(text.lines().count()));
    Err(format!(
        "{name} differs from the committed one from line {} on; this run's is {}",
        line + 1,
        out.display()
    ))
}

/// The fixture's outputs as the run writes them: (file name, text).
fn outputs() -> Vec<(&'static str, String)> {
    use crate::report::{junit, screen, summary, timeline};
    let (m, records) = (fixture::machine(), fixture::records());
    let rows = summary::rows(&m, &records);
    let mut md = summary::markdown(&m, &rows, &records, fixture::DATE, fixture::WALL_S, fixture::WORKERS);
    // When it was written: now, in this version.
    let at = md.find(", finished ").unwrap() + ", finished ".len();
    md.replace_range(at..at + fixture::FINISHED.len(), fixture::FINISHED);
    let mut j = summary::json(&m, &rows, &records, fixture::DATE, fixture::WALL_S, fixture::WORKERS);
    j["provenance"]["finished"] = fixture::FINISHED.into();
    j["driver"] = "580.159.04".into();
    j["driver_branch"] = 580.into();
    j["partition"] = serde_json::json!({"k": 2, "n": 3, "by": "count"});
    let json = serde_json::to_string_pretty(&j).unwrap() + "\n";
    let screen = |verbose: bool| {
        let mut lines = Vec::new();
        let mut departures = false;
        for line in md.lines() {
            if line.starts_with('#') {
                departures = line.starts_with("## Known departures of drivers");
            } else if (line.starts_with('|') && !departures) || line.starts_with("Total:") {
                lines.push(line.to_string());
            }
        }
        lines.extend(screen::last_screen(&records, verbose));
        lines.extend(screen::time_lines(
            &timeline::of_records(&records),
            Some(fixture::WALL_S),
        ));
        lines.join("\n") + "\n"
    };
    vec![
        ("report.json", json),
        ("report.md", md.clone()),
        ("junit.xml", junit::render(&records, fixture::WALL_S)),
        ("screen.txt", screen(false)),
        ("screen-verbose.txt", screen(true)),
    ]
}

#[test]
fn the_fixture_run_renders_as_committed() {
    let wrong: Vec<String> = outputs()
        .iter()
        .filter_map(|(name, text)| same_as_committed(name, text).err())
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
