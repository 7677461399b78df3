//! `conformance --diff OLD.json NEW.json`: what changed between two reports, API by API — each
//! trial's outcome and each checked call's observed answer — as a PhOS-style table and the details.
//! A failing trial is counted against the API it blames (the one whose answer was wrong), as in the
//! report.
//! Exits 1 when anything regressed: a trial that did not fail in OLD and fails in NEW (or is new and
//! fails), and 0 otherwise.
//!
//! Typical uses: a driver upgrade (the report of the old driver against the new one's), and a real
//! driver against an interposer (the same suite run twice, the second time with `LD_PRELOAD`).

use conformance_model::{Outcome, Report};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::ExitCode;

#[derive(Clone, Debug, Default)]
struct Trial {
    api: Option<u64>,
    /// The API a failure counts against, when not the trial's own.
    blame: Option<u64>,
    group: String,
    outcome: Outcome,
    message: String,
    /// (call, observed) in the order checked.
    calls: Vec<(String, String)>,
}

fn load(path: &str) -> Result<(Report, BTreeMap<String, Trial>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--diff: cannot read {path}: {e}"))?;
    let r: Report = serde_json::from_str(&text).map_err(|e| format!("--diff: {path} is not a report ({e})"))?;
    let trials = r
        .trials
        .as_deref()
        .ok_or_else(|| format!("--diff: {path} has no trials (is it a conformance report.json?)"))?;
    let m = trials
        .iter()
        .map(|t| {
            let trial = Trial {
                api: t.api,
                blame: t.blame,
                group: t.group.clone(),
                outcome: t.outcome,
                message: t.message.clone(),
                calls: t
                    .observations
                    .iter()
                    .flatten()
                    .map(|o| (o.call.clone(), o.observed.clone()))
                    .collect(),
            };
            (t.trial.clone(), trial)
        })
        .collect();
    Ok((r, m))
}

fn failing(o: &str) -> bool {
    o == Outcome::Failed.as_str()
}

/// One line per machine: driver and devices, to say what is compared with what.
fn header(r: &Report) -> String {
    let devices: Vec<&str> = r.machine.devices.iter().map(|d| d.name.as_str()).collect();
    format!(
        "driver {} ({}), {}, entry {}, {}",
        r.driver.as_deref().filter(|s| !s.is_empty()).unwrap_or("?"),
        r.machine.libcuda.as_deref().unwrap_or("?"),
        if devices.is_empty() {
            "no device".to_string()
        } else {
            devices.join(" + ")
        },
        r.machine.entry.as_deref().unwrap_or("?"),
        r.date.as_deref().unwrap_or("?")
    )
}

/// The text of a diff, and whether anything regressed.
pub fn diff(old_path: &str, new_path: &str) -> Result<(String, bool), String> {
    let (oj, old) = load(old_path)?;
    let (nj, new) = load(new_path)?;
    let mut s = String::new();
    writeln!(s, "OLD {old_path}: {}", header(&oj)).unwrap();
    writeln!(s, "NEW {new_path}: {}\n", header(&nj)).unwrap();
    // Per group: (regressed, fixed, other outcome changes, answers changed, trials).
    let mut rows: BTreeMap<String, [usize; 5]> = BTreeMap::new();
    let mut details: Vec<String> = Vec::new();
    let names: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let mut regressed_any = false;
    for name in names {
        let (o, n) = (old.get(name), new.get(name));
        let t = n.or(o).unwrap();
        // A failure counts against the API whose answer was wrong, as in the report.
        let api = if t.outcome == Outcome::Failed {
            t.blame.or(t.api)
        } else {
            t.api
        };
        let group = match api {
            Some(a) => format!("{a} {}", crate::driver::api_name(a as u32)),
            None => t.group.clone(),
        };
        let row = rows.entry(group).or_default();
        row[4] += 1;
        let (oo, no) = (
            o.map_or("absent", |t| t.outcome.as_str()),
            n.map_or("absent", |t| t.outcome.as_str()),
        );
        let regressed = failing(no) && !failing(oo);
        let fixed = failing(oo) && !failing(no) && no != "absent";
        let mut lines = Vec::new();
        if oo != no {
            if regressed {
                row[0] += 1;
                regressed_any = true;
            } else if fixed {
                row[1] += 1;
            } else {
                row[2] += 1;
            }
            let why = n.filter(|t| t.outcome == Outcome::Failed).map_or(String::new(), |t| {
                format!(": {}", t.message.lines().next().unwrap_or(""))
            });
            lines.push(format!("  outcome {oo} → {no}{why}"));
        }
        if let (Some(o), Some(n)) = (o, n) {
            let mut changed = false;
            for (i, (call, obs)) in n.calls.iter().enumerate() {
                let before = o.calls.get(i).filter(|c| &c.0 == call).map(|c| c.1.as_str());
                match before {
                    Some(b) if b != obs => {
                        changed = true;
                        lines.push(format!("  {call}: {b} → {obs}"));
                    }
                    None if o.calls.iter().all(|c| &c.0 != call) && !o.calls.is_empty() => {
                        changed = true;
                        lines.push(format!("  {call}: (not called) → {obs}"));
                    }
                    _ => {}
                }
            }
            if changed {
                row[3] += 1;
            }
        }
        if !lines.is_empty() {
            details.push(format!(
                "{}{name}\n{}",
                if regressed { "REGRESSED " } else { "" },
                lines.join("\n")
            ));
        }
    }
    writeln!(
        s,
        "| API | trials | regressed | fixed | other outcome changes | answers changed |"
    )
    .unwrap();
    writeln!(s, "|---|---|---|---|---|---|").unwrap();
    for (g, r) in &rows {
        let mark = if r[0] > 0 { " ✗" } else { "" };
        writeln!(
            s,
            "| {g}{mark} | {} | {} | {} | {} | {} |",
            r[4], r[0], r[1], r[2], r[3]
        )
        .unwrap();
    }
    let total = rows.values().fold([0; 5], |mut a, r| {
        for i in 0..5 {
            a[i] += r[i];
        }
        a
    });
    writeln!(
        s,
        "\n{} regressed, {} fixed, {} other outcome changes, {} trials with changed answers.",
        total[0], total[1], total[2], total[3]
    )
    .unwrap();
    if !details.is_empty() {
        writeln!(s, "\n## What changed\n").unwrap();
        for d in details {
            writeln!(s, "{d}").unwrap();
        }
    }
    Ok((s, regressed_any))
}

/// `--diff OLD NEW` as a program: print the diff, exit 1 if anything regressed, 2 on bad input.
pub fn main(args: &[String]) -> ExitCode {
    let [old, new] = args else {
        eprintln!("conformance: usage: --diff OLD.json NEW.json (two report.json files)");
        return ExitCode::from(2);
    };
    match diff(old, new) {
        Ok((text, regressed)) => {
            print!("{text}");
            if regressed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("conformance: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(outcome: &str, observed: &str) -> String {
        serde_json::json!({"date": "d", "machine": {"devices": []}, "trials": [
            {"trial": "833_cuMemPoolTrimTo::a", "api": 833, "group": "833_cuMemPoolTrimTo", "outcome": outcome,
             "message": "m", "observations": [{"call": "cuMemPoolTrimTo(NULL)", "observed": observed}]},
            {"trial": "suite::no_leaks", "api": null, "group": "suite", "outcome": "passed", "message": "",
             "observations": []}]})
        .to_string()
    }

    #[test]
    fn regressions_fail_and_changes_are_named() {
        let dir = std::env::temp_dir().join(format!("cump-diff-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.json"), dir.join("b.json"));
        std::fs::write(&a, report("passed", "CUDA_ERROR_INVALID_VALUE (1)")).unwrap();
        std::fs::write(&b, report("failed", "CUDA_SUCCESS (0)")).unwrap();
        let (text, regressed) = diff(a.to_str().unwrap(), b.to_str().unwrap()).unwrap();
        assert!(regressed, "{text}");
        assert!(
            text.contains("cuMemPoolTrimTo(NULL): CUDA_ERROR_INVALID_VALUE (1) → CUDA_SUCCESS (0)"),
            "{text}"
        );
        assert!(text.contains("| 833 cuMemPoolTrimTo ✗ | 1 | 1 | 0 | 0 | 1 |"), "{text}");
        let (_, back) = diff(b.to_str().unwrap(), a.to_str().unwrap()).unwrap();
        assert!(!back, "a fix is no regression");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
