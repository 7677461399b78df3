//! The model of report.json (`conformance_model`) loses nothing: every report committed under docs/
//! (the `.json.xz` ones through the `xz` command), and one a run builds now, read into the
//! model and written back is the same JSON; and the model's timing, checked calls and causes read
//! what the harness writes.

use conformance_model::{FailureCause, Report, Timing};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The first place where `a` and `b` differ, as a JSON pointer with both values; None where equal.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x.keys().chain(y.keys()).find_map(|k| match (x.get(k), y.get(k)) {
            (Some(p), Some(q)) => first_difference(p, q, &format!("{at}/{k}")),
            (p, q) => Some(format!("{at}/{k}: {p:?} vs {q:?}")),
        }),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}/{i}"))),
        _ => (a != b).then(|| format!("{at}: {a} vs {b}")),
    }
}

/// `text` read as the model and written back: the first difference from `text` read as JSON.
fn round_trip(text: &str) -> Result<(), String> {
    let plain: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let typed: Report = serde_json::from_str(text).map_err(|e| format!("the model cannot read it: {e}"))?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    match first_difference(&plain, &back, "") {
        Some(d) => Err(format!("written back differs at {d}")),
        None => Ok(()),
    }
}

/// Every `*.json` and `*.json.xz` file under `dir`.
pub(super) fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for p in std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()) {
        let name = p.file_name().unwrap_or_default().to_string_lossy().to_string();
        if p.is_dir() {
            json_files(&p, out);
        } else if name.ends_with(".json") || name.ends_with(".json.xz") {
            out.push(p);
        }
    }
}

/// A file's text, `.xz` ones through `xz -dc`; None where `xz` cannot run.
pub(super) fn text_of(p: &Path) -> Option<String> {
    if p.extension().is_some_and(|x| x == "xz") {
        let o = std::process::Command::new("xz").arg("-dc").arg(p).output().ok()?;
        assert!(o.status.success(), "xz -dc {}: {}", p.display(), o.status);
        Some(String::from_utf8(o.stdout).unwrap())
    } else {
        Some(std::fs::read_to_string(p).unwrap())
    }
}

/// Every committed report (a JSON object whose `trials` are records: a matrix.json's are names, a
/// mutants.json's a map) reads into the model and writes back as it was.
#[test]
fn every_committed_report_reads_and_writes_back_the_same() {
    let mut files = Vec::new();
    json_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs"), &mut files);
    files.sort();
    let (mut reports, mut compressed, mut skipped, mut wrong) = (0, 0, Vec::new(), Vec::new());
    for p in &files {
        let Some(text) = text_of(p) else {
            skipped.push(p.display().to_string());
            continue;
        };
        let Ok(j) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if !j.pointer("/trials/0/trial").is_some_and(Value::is_string) {
            continue;
        }
        reports += 1;
        compressed += usize::from(p.extension().is_some_and(|x| x == "xz"));
        if let Err(e) = round_trip(&text) {
            wrong.push(format!("{}: {e}", p.display()));
        }
    }
    if !skipped.is_empty() {
        eprintln!("no `xz` command: {} compressed reports not checked", skipped.len());
    }
    assert!(
        wrong.is_empty(),
        "reports the model does not keep:\n{}",
        wrong.join("\n")
    );
    assert!(reports >= 30, "committed reports checked: {reports}");
    eprintln!("{reports} committed reports ({compressed} compressed) read and written back unchanged");
}

/// A report a run builds now, with every optional part of a trial filled, reads back as
/// written.
#[test]
fn a_report_written_now_reads_back_the_same() {
    use crate::driver::blame::Cause;
    use crate::harness::case::Group;
    use crate::harness::machine::Machine;
    use crate::harness::outcome::{Kind, Outcome, Record};
    let m = Machine::default();
    let failed = Record::new(
        "820_cuMemAllocAsync::a",
        Group::Api(820),
        Outcome::Failed,
        Kind::Check,
        "m\nn".into(),
    )
    .with(|r| {
        r.blame = Some(821);
        r.set_cause(Some(&Cause::hung(&Some((821, "cuMemAllocFromPoolAsync".into())))));
        r.set_calls(Some(0b11));
        r.set_timing(full_timing());
        r.notes = vec!["a note".into()];
        r.span = (0.5, 1.25);
        r.secs = 0.75;
        r.set_dev(Some(0));
    });
    let passed = Record::new(
        "suite::no_leaks",
        Group::Suite,
        Outcome::Passed,
        Kind::Check,
        String::new(),
    );
    let records = vec![failed, passed];
    let facts = crate::report::build::Facts {
        date: "2026-11-27 00:00:00 UTC".into(),
        wall_s: 1.5,
        workers: 2,
        ..Default::default()
    };
    let written = crate::report::build::report(&m, &records, &facts).to_json_text();
    round_trip(&written).unwrap();
    let r: Report = serde_json::from_str(&written).unwrap();
    let t = &r.trials.as_ref().unwrap()[0];
    assert_eq!((t.blame, t.calls.as_deref()), (Some(821), Some(&[820, 821][..])));
    assert_eq!(t.cause.as_ref().map(|c| c.answer.as_str()), Some("hung"));
}

fn full_timing() -> Timing {
    Timing {
        worker: Some("general 0".into()),
        wait_s: 0.25,
        turn: Some(conformance_model::Turn::Exclusive),
        settle_s: 0.125,
        children: vec![conformance_model::ChildSpan {
            role: "ipc-import".into(),
            span: (0.75, 1.0),
            ..Default::default()
        }],
        worker_start: Some((0.0, 0.5)),
        ..Default::default()
    }
}

/// The harness's timing and causes, as the harness writes them, are what the model reads and writes
/// (its checked calls are the model's own `Observation`), and report.json's `cause` keeps its shape.
#[test]
fn the_harness_parts_read_as_the_model() {
    let timing = serde_json::to_value(full_timing()).unwrap();
    let typed: Timing = serde_json::from_value(timing.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), timing);
    assert_eq!(typed, full_timing(), "as the timeline reads it");
    let died = crate::driver::blame::Cause::died(Some(11), &Some((833, "cuMemPoolTrimTo".into())));
    let c: FailureCause = died.to_model();
    assert_eq!((c.answer.as_str(), c.value), ("signal", Some(11)));
    assert_eq!(
        serde_json::to_value(&c).unwrap(),
        serde_json::json!({"api": 833, "call": "cuMemPoolTrimTo", "answer": "signal", "value": 11})
    );
    assert_eq!(crate::driver::blame::Cause::from_model(&c), Some(died));
}
