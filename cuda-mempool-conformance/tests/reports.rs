//! Reports a CI can act on, end to end: the report, and every report committed under docs/,
//! validates against its documented schema (a JSON Schema validator), with its provenance,
//! `--diff` names what a misbehaving library changed and fails on it, an expectation file turns
//! known deviations into expected failures while an extra one still fails (and a listed trial that
//! passes fails as unexpectedly passing), a bad expectation file stops the run naming its line,
//! CONFORMANCE_JUNIT writes JUnit whose skipped trials carry their reasons, and failures are grouped
//! by cause (one line per call and answer, with its count) before the per-trial list.
//!
//! The misbehaving library is shim/ (built by build.rs, LD_PRELOAD), as in tests/shim.rs;
//! CONFORMANCE_SHIM_SO=path uses a prebuilt one. CONFORMANCE_REPORTS_KEEP=DIR keeps the reports,
//! diffs and expectation files under DIR.

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Output};
use std::sync::OnceLock;

mod common;
use common::report::{read as read_report, Trials};
use conformance_model::Answer;
#[path = "common/shimlib.rs"]
mod shimlib;
const SCHEMA: &str = include_str!("../../docs/conformance/report-schema.json");

fn dir() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let d = std::env::var_os("CONFORMANCE_REPORTS_KEEP")
            .map(PathBuf::from)
            .unwrap_or_else(|| std::env::temp_dir().join(format!("cump-reports-{}", std::process::id())));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

/// Run the suite (or one of its modes) with `envs` and `args`; its output.
fn suite(envs: &[(&str, &Path)], more: &[(&str, &str)], args: &[&str]) -> Result<Output, String> {
    let _one = common::one_suite_at_a_time();
    common::suite()?
        .envs(envs.iter().map(|(k, v)| (*k, v.as_os_str())))
        .envs(more.iter().copied())
        .args(args)
        .output()
        .map_err(|e| format!("cannot run the suite: {e}"))
}

/// A plain run and a shimmed run (`faults`), each once; their report paths.
fn report(tag: &str, faults: Option<&str>, expect: Option<&Path>) -> Result<(PathBuf, Output), String> {
    let d = dir().join(tag);
    let mut envs: Vec<(&str, &Path)> = vec![("CONFORMANCE_REPORT_DIR", &d)];
    let so;
    if faults.is_some() {
        so = shimlib::path(shimlib::Variant::EveryPath)?;
        envs.push(("LD_PRELOAD", &so));
    }
    if let Some(e) = expect {
        envs.push(("CONFORMANCE_EXPECT", e));
    }
    let junit = d.join("junit.xml");
    envs.push(("CONFORMANCE_JUNIT", &junit));
    let out = suite(&envs, &[("CONFORMANCE_SHIM_FAULTS", faults.unwrap_or(""))], &[])?;
    let p = d.join("report.json");
    if !p.exists() {
        return Err(format!(
            "{tag}: no report; stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok((p, out))
}

fn plain() -> Result<&'static PathBuf, String> {
    static P: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    P.get_or_init(|| report("plain", None, None).map(|r| r.0))
        .as_ref()
        .map_err(Clone::clone)
}

/// docs/conformance/report-schema.json, compiled once by a JSON Schema validator (`jsonschema`,
/// draft 2020-12 as the schema declares).
fn validator() -> Result<&'static jsonschema::Validator, String> {
    static V: OnceLock<Result<jsonschema::Validator, String>> = OnceLock::new();
    V.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA).map_err(|e| format!("the schema is not JSON: {e}"))?;
        jsonschema::validator_for(&schema).map_err(|e| format!("the schema is not a valid JSON Schema: {e}"))
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The errors of `report` (a report.json) against docs/conformance/report-schema.json, if any.
/// Raw JSON on purpose: the schema validator reads a `Value`, not the typed model.
fn schema_errors(report: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(report).map_err(|e| format!("{}: {e}", report.display()))?;
    let j: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", report.display()))?;
    let errors: Vec<String> = validator()?
        .iter_errors(&j)
        .map(|e| format!("at {:?}: {e}", e.instance_path().as_str()))
        .collect();
    if !errors.is_empty() {
        return Err(format!(
            "{} departs from docs/conformance/report-schema.json:\n{}",
            report.display(),
            errors.join("\n")
        ));
    }
    Ok(())
}

/// A fresh report validates, and carries its provenance (optional in the schema, for the reports
/// written before it): suite commit, host, kernel, OS, settings, start and end, devices.
fn report_matches_schema() -> Result<(), Failed> {
    schema_errors(plain()?)?;
    // Raw JSON on purpose: which keys the provenance has is the schema's question, and the broken
    // copies below are fixtures for the validator, which reads a `Value`.
    let j: Value = serde_json::from_str(&std::fs::read_to_string(plain()?).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    let p = &j["provenance"];
    let missing: Vec<&str> = [
        "suite_version",
        "commit",
        "host",
        "kernel",
        "os",
        "environment",
        "started",
        "finished",
    ]
    .into_iter()
    .filter(|k| p.get(k).is_none())
    .collect();
    if !missing.is_empty() || p["host"] == "" {
        return Err(format!("report.json's provenance lacks {missing:?}: {p}").into());
    }
    // The validator is live: the same report without its host, or with a date that is not RFC
    // 3339, departs from the schema.
    for (key, value) in [("host", None), ("started", Some(Value::from("25/11/2026")))] {
        let mut broken = j.clone();
        let o = broken["provenance"]
            .as_object_mut()
            .ok_or("report.json's provenance is no object")?;
        match value {
            None => o.remove(key),
            Some(v) => o.insert(key.into(), v),
        };
        if validator()?.is_valid(&broken) {
            return Err(format!("a report whose provenance.{key} is broken still validates").into());
        }
    }
    println!(
        "reports: report.json matches its schema ({} trials)",
        read_report(plain()?).trials().len()
    );
    Ok(())
}

/// Every report.json committed under docs/ (`*report.json`: the reports of earlier versions,
/// without provenance) validates against the schema: the schema stays true to what was published.
fn committed_reports_match_schema() -> Result<(), Failed> {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
    let mut reports = Vec::new();
    let mut dirs = vec![docs.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
            let p = e.map_err(|e| e.to_string())?.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("report.json"))
            {
                reports.push(p);
            }
        }
    }
    reports.sort();
    if reports.is_empty() {
        return Err(format!("no report.json under {}", docs.display()).into());
    }
    let errors: Vec<String> = reports.iter().filter_map(|r| schema_errors(r).err()).collect();
    if !errors.is_empty() {
        return Err(errors.join("\n").into());
    }
    println!("reports: {} committed reports match the schema", reports.len());
    Ok(())
}

fn diff_names_the_regression() -> Result<(), Failed> {
    let (shimmed, _) = report("noop-833", Some("noop-833"), None)?;
    let out = suite(
        &[],
        &[],
        &["--diff", plain()?.to_str().unwrap(), shimmed.to_str().unwrap()],
    )?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    std::fs::write(dir().join("diff-plain-noop-833.txt"), &text).map_err(|e| e.to_string())?;
    if out.status.code() != Some(1) {
        return Err(format!(
            "--diff exited {:?}, expected 1 (a regression):\n{text}",
            out.status.code()
        )
        .into());
    }
    if !text.contains("| 833 cuMemPoolTrimTo ✗") || !text.contains("REGRESSED 833_cuMemPoolTrimTo::") {
        return Err(format!("--diff does not name the 833 regressions:\n{text}").into());
    }
    let same = suite(
        &[],
        &[],
        &["--diff", plain()?.to_str().unwrap(), plain()?.to_str().unwrap()],
    )?;
    if same.status.code() != Some(0) {
        return Err("--diff of a report with itself does not exit 0".into());
    }
    println!("reports: --diff marks 833 and exits 1; a report against itself exits 0");
    Ok(())
}

fn expectation_files_work() -> Result<(), Failed> {
    let (shimmed, _) = report("noop-833-for-expect", Some("noop-833"), None)?;
    // Accept the shim's deviations as known, from its own report.
    let gen = suite(&[], &[], &["--expectations-from", shimmed.to_str().unwrap()])?;
    let mut toml = String::from_utf8_lossy(&gen.stdout).into_owned();
    if !toml.contains("[[deviation]]") {
        return Err(format!("--expectations-from wrote no entry:\n{toml}").into());
    }
    let file = dir().join("expect-noop-833.toml");
    std::fs::write(&file, &toml).map_err(|e| e.to_string())?;
    let (_, green) = report("noop-833-expected", Some("noop-833"), Some(&file))?;
    if !green.status.success() {
        return Err(format!(
            "with the deviations listed the run still fails:\n{}",
            String::from_utf8_lossy(&green.stderr)
        )
        .into());
    }
    // An extra deviation, not listed, still fails.
    let (extra, red) = report("noop-833-and-824", Some("noop-833,wrong-codes-824"), Some(&file))?;
    let failing: Vec<u64> = (read_report(&extra).apis.iter())
        .filter(|a| a.test_passed == "✗")
        .filter_map(|a| a.index)
        .collect();
    if red.status.success() || failing != vec![824] {
        return Err(format!("an unlisted deviation (824) must still fail; failing: {failing:?}").into());
    }
    // A listed trial that passes is unexpectedly passing.
    toml.push_str("\n[[deviation]]\ntrial = \"suite::no_leaks\"\nreason = \"listed on purpose\"\n");
    let file2 = dir().join("expect-with-a-passing-trial.toml");
    std::fs::write(&file2, &toml).map_err(|e| e.to_string())?;
    let (_, up) = report("unexpected-pass", Some("noop-833"), Some(&file2))?;
    let err = String::from_utf8_lossy(&up.stderr);
    if up.status.success() || !err.contains("unexpectedly passing") {
        return Err(format!("a listed trial that passes must fail as unexpectedly passing:\n{err}").into());
    }
    // A bad file stops the run before any trial, naming the line.
    let bad = dir().join("bad.toml");
    std::fs::write(&bad, "[[deviation]]\ntrial = \"no::such::trial\"\nreason = \"x\"\n").unwrap();
    let out = suite(&[("CONFORMANCE_EXPECT", &bad)], &[], &[])?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(2) || !err.contains("line 2") {
        return Err(format!("a bad expectation file: exit {:?}, stderr:\n{err}", out.status.code()).into());
    }
    println!("reports: listed deviations pass, an extra one (824) fails, a listed pass fails, a bad file names line 2");
    Ok(())
}

fn junit_carries_skip_reasons() -> Result<(), Failed> {
    plain()?;
    let x = std::fs::read_to_string(dir().join("plain").join("junit.xml")).map_err(|e| e.to_string())?;
    if !x.contains("<testsuites") || !x.contains("suite::no_leaks") {
        return Err(format!("the JUnit file lacks the run:\n{}", &x[..x.len().min(400)]).into());
    }
    let skipped = x.matches("<skipped message=\"").count();
    let ignored = read_report(plain()?).totals.ignored as usize;
    if skipped != ignored || x.contains("<skipped message=\"\"") {
        return Err(format!("{skipped} skipped entries with reasons for {ignored} ignored trials").into());
    }
    println!("reports: JUnit has {skipped} skipped trials, each with its reason");
    Ok(())
}

/// Two faults, each failing two trials with one call's answer (833 and 824 answer SUCCESS before
/// cuInit and with no device): two causes of two trials each, in report.json (all of a cause's
/// trials, counts adding up to the failures), in report.md before the per-trial list, on the
/// terminal, and in JUnit's failure type.
fn failures_grouped_by_cause() -> Result<(), Failed> {
    let (path, out) = report("causes", Some("noop-833,wrong-codes-824"), None)?;
    schema_errors(&path)?;
    let r = read_report(&path);
    let causes = r.causes.as_deref().ok_or("report.json has no causes")?;
    // With a GPU more trials fail under the two faults than without (the device trials), so the
    // counts are read from the report; what must hold everywhere: each fault is one line of its own
    // (its API, its call, SUCCESS as the answer), every failed trial is in exactly one line, and
    // the lines add up to the failures.
    let failed = r.totals.failed;
    let line = |call: &str| {
        causes
            .iter()
            .find(|c| c.call.as_deref() == Some(call) && c.answer == Some(Answer::Code) && c.value == Some(0))
            .map(|c| c.count)
    };
    let (destroy, trim) = (line("cuMemPoolDestroy"), line("cuMemPoolTrimTo"));
    let mut trials: Vec<&str> = causes.iter().flat_map(|c| &c.trials).map(String::as_str).collect();
    let listed = trials.len() as u64;
    trials.sort_unstable();
    trials.dedup();
    let counted: u64 = causes.iter().map(|c| c.count).sum();
    let (Some(destroy), Some(trim)) = (destroy, trim) else {
        return Err(format!("expected a cause line each for 824 and 833 returning SUCCESS:\n{causes:#?}").into());
    };
    if destroy < 2 || trim < 2 || counted != failed || listed != failed || trials.len() as u64 != failed {
        return Err(format!(
            "expected every one of the {failed} failures in exactly one cause line, 824's and 833's of at least two \
             trials each:\n{causes:#?}"
        )
        .into());
    }
    let md = std::fs::read_to_string(path.with_file_name("report.md")).map_err(|e| e.to_string())?;
    let row = format!("| {trim} | 833 cuMemPoolTrimTo | `cuMemPoolTrimTo` | CUDA_SUCCESS (0) |");
    match (md.find("## Failures by cause"), md.find(&row), md.find("## Failed")) {
        (Some(c), Some(r), Some(f)) if c < r && r < f => {}
        _ => return Err(format!("report.md lacks the cause section before the failed trials:\n{md}").into()),
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !stdout.contains(&row) {
        return Err(format!("the terminal summary lacks the cause line `{row}`:\n{stdout}").into());
    }
    let x = std::fs::read_to_string(path.with_file_name("junit.xml")).map_err(|e| e.to_string())?;
    if !x.contains(&format!(
        "cause: cuMemPoolDestroy returned CUDA_SUCCESS (0) ({destroy} failed trials)"
    )) {
        return Err("JUnit's failures do not name their cause".into());
    }
    println!(
        "reports: {failed} failures in {} causes, before the per-trial list in report.md, on the terminal and in JUnit",
        causes.len()
    );
    Ok(())
}

pub fn main() -> ExitCode {
    if let Some(code) = common::run_suite_if_asked() {
        return code;
    }
    let args = Arguments::from_args();
    let trials = vec![
        Trial::test("reports::report_matches_schema", report_matches_schema),
        Trial::test(
            "reports::committed_reports_match_schema",
            committed_reports_match_schema,
        ),
        Trial::test("reports::diff_names_the_regression", diff_names_the_regression),
        Trial::test("reports::expectation_files_work", expectation_files_work),
        Trial::test("reports::junit_carries_skip_reasons", junit_carries_skip_reasons),
        Trial::test("reports::failures_grouped_by_cause", failures_grouped_by_cause),
    ];
    let c = libtest_mimic::run(&args, trials);
    if std::env::var_os("CONFORMANCE_REPORTS_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(dir());
    }
    c.exit_code()
}
