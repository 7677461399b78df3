//! Expectation files that travel, end to end without a GPU: an entry applies only where its
//! selectors match (branch "999" nowhere, no selector everywhere), a `[[flaky]]` trial's failure
//! is reported as flaky and does not fail the run, `--rerun-failed N` reruns a real failure and
//! keeps it failed (saying so), and a bad key stops the run naming its line.
//!
//! Failures without a GPU come from the mutation library's `noop-833` fault (shim/, LD_PRELOAD), as
//! in tests/reports.rs: cuMemPoolTrimTo answers SUCCESS before cuInit, which two trials catch.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::PathBuf;
use std::process::{ExitCode, Output};
use std::sync::OnceLock;

mod common;
use common::report::{self, Trials};
use conformance_model::{Outcome, Report};
#[path = "common/shimlib.rs"]
mod shimlib;

/// The two trials `noop-833` fails without a GPU.
const BEFORE: &str = "833_cuMemPoolTrimTo::before_cuInit_not_initialized";
const AFTER: &str = "833_cuMemPoolTrimTo::after_cuInit_no_device_not_initialized";

const FLAKY: &str =
    "[[flaky]]\ntrial = \"BEFORE\"\nurl = \"https://example.org/issues/1\"\nrate = \"1/20\"\nfirst_seen = 2026-11-25\n";

fn dir() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("cump-expect-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

/// The suite under `noop-833` with the expectation file `toml` and `args`: its output and report.
fn run(tag: &str, toml: &str, args: &[&str]) -> Result<(Output, Report), String> {
    let d = dir().join(tag);
    let file = dir().join(format!("{tag}.toml"));
    std::fs::write(&file, toml.replace("BEFORE", BEFORE).replace("AFTER", AFTER)).map_err(|e| e.to_string())?;
    let so = shimlib::path(shimlib::Variant::EveryPath)?;
    let _one = common::one_suite_at_a_time();
    let out = common::suite()?
        .env("CONFORMANCE_REPORT_DIR", &d)
        .env("CONFORMANCE_JUNIT", d.join("junit.xml"))
        .env("CONFORMANCE_EXPECT", &file)
        .env("LD_PRELOAD", &so)
        .env("CONFORMANCE_SHIM_FAULTS", "noop-833")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run the suite: {e}"))?;
    // No report (an empty one, of no trials) where the run stopped before any trial (a bad file).
    let path = d.join("report.json");
    let r = if path.exists() {
        report::try_read(&path)?
    } else {
        Report::default()
    };
    Ok((out, r))
}

/// The outcome of the trial `name` of `r`, if it has one.
fn outcome(r: &Report, name: &str) -> Option<Outcome> {
    r.trial(name).map(|t| t.outcome)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A deviation scoped to branch 999 does not apply here (its trial fails, and a rerun keeps it
/// failed, saying so); the flaky trial is flaky, counted apart.
fn selectors_scope_and_reruns_keep_real_failures() -> Result<(), Failed> {
    let toml = format!("{FLAKY}\n[[deviation]]\ntrial = \"AFTER\"\nreason = \"elsewhere\"\nbranch = \"999\"\n");
    let (out, j) = run("branch-999", &toml, &["--rerun-failed", "2"])?;
    let after = j.trial(AFTER);
    if out.status.success() || outcome(&j, AFTER) != Some(Outcome::Failed) {
        return Err(format!("a branch-999 entry applied here ({after:?}):\n{}", stderr(&out)).into());
    }
    let notes = format!("{:?}", after.map(|t| &t.notes));
    if !notes.contains("failed again on each of 2 rerun(s)") || !stderr(&out).contains("FAILED AGAIN") {
        return Err(format!("a failure that fails every rerun must say so: notes {notes}").into());
    }
    if outcome(&j, BEFORE) != Some(Outcome::Flaky) || j.totals.flaky != Some(1) || j.totals.failed != 1 {
        return Err(format!("the flaky trial is not counted apart: totals {:?}", j.totals).into());
    }
    println!("expect: a branch-999 deviation applies nowhere; a real failure stays failed after 2 reruns");
    Ok(())
}

/// With the deviation unscoped, the listed failure is expected and the flaky one flaky: the run
/// passes, and the Markdown, JSON and JUnit reports say which trials were flaky.
fn a_flaky_failure_does_not_fail_the_run() -> Result<(), Failed> {
    let toml = format!("{FLAKY}\n[[deviation]]\ntrial = \"AFTER\"\nreason = \"everywhere\"\n");
    let (out, j) = run("flaky", &toml, &[])?;
    if !out.status.success() {
        return Err(format!("a flaky and an expected failure failed the run:\n{}", stderr(&out)).into());
    }
    let (before, after) = (outcome(&j, BEFORE), outcome(&j, AFTER));
    if before != Some(Outcome::Flaky) || after != Some(Outcome::ExpectedFailure) {
        return Err(format!("outcomes: {before:?} and {after:?}").into());
    }
    let d = dir().join("flaky");
    let md = std::fs::read_to_string(d.join("report.md")).map_err(|e| e.to_string())?;
    let x = std::fs::read_to_string(d.join("junit.xml")).map_err(|e| e.to_string())?;
    if !md.contains("## Flaky") || !md.contains("1 flaky.") || !x.contains("flaky: flaky (") {
        return Err("report.md or JUnit does not show the flaky trial".into());
    }
    println!("expect: a flaky failure and an unscoped deviation leave the run green, counted apart");
    Ok(())
}

/// An unknown key stops the run before any trial, naming the file, the line and the key.
fn a_bad_key_is_refused_with_its_line() -> Result<(), Failed> {
    let (out, _) = run("bad-key", "[[flaky]]\ntrial = \"BEFORE\"\nplatform = \"linux\"\n", &[])?;
    let err = stderr(&out);
    if out.status.code() != Some(2)
        || !err.contains("bad-key.toml")
        || !err.contains("line 3")
        || !err.contains("platform")
    {
        return Err(format!("a bad key: exit {:?}, stderr:\n{err}", out.status.code()).into());
    }
    println!("expect: an unknown key is refused naming its line");
    Ok(())
}

pub fn main() -> ExitCode {
    if let Some(code) = common::run_suite_if_asked() {
        return code;
    }
    let args = Arguments::from_args();
    let trials = vec![
        Trial::test(
            "expect::selectors_scope_and_reruns_keep_real_failures",
            selectors_scope_and_reruns_keep_real_failures,
        ),
        Trial::test(
            "expect::a_flaky_failure_does_not_fail_the_run",
            a_flaky_failure_does_not_fail_the_run,
        ),
        Trial::test(
            "expect::a_bad_key_is_refused_with_its_line",
            a_bad_key_is_refused_with_its_line,
        ),
    ];
    let c = libtest_mimic::run(&args, trials);
    let _ = std::fs::remove_dir_all(dir());
    c.exit_code()
}
