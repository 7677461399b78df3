//! One run of the suite under the mutation library, in a child (this test binary as the suite,
//! with a clean environment): with one mutant switched on or none (the baseline), against the whole
//! suite or a chosen list of trials (CONFORMANCE_TRIALS_FILE), stopping at the first failure or
//! not, with the same trial deadline, required capabilities and load settings every time; a run
//! past its limit is killed. What comes back is its report.json, read into each trial's outcome
//! and the APIs it reached; the run's scratch folder goes afterwards, or is kept under the
//! report's runs/ (CONFORMANCE_MUTANTS_KEEP=1).

use super::launch::common::report::{self, Trials};
use super::launch::suite_under_library;
use super::library::required;
use super::order::{lead, LEAD_VAR};
use super::settings::{report_dir, suite_threads, DEADLINE};
use conformance_model::{Outcome, Report};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Where the runs write their reports and stderr, one folder per mutant (and the baseline).
pub fn scratch() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| std::env::temp_dir().join(format!("cump-mutants-{}", std::process::id())))
}

/// Longest a whole suite may take under a mutant (about 5 s on an H100 without one): past it the
/// run is killed (its workers go with it) and the mutant's verdict is an error.
const SUITE_LIMIT: Duration = Duration::from_secs(300);
/// The load trials' settings for every run, the same in the baseline and under each mutant.
const STRESS: [(&str, &str); 2] = [
    ("CONFORMANCE_STRESS_SECS", "1"),
    ("CONFORMANCE_STRESS_SEED", "20261122"),
];

/// The suite under the library, with `mutant` switched on (None: the baseline): the whole suite, or
/// only `trials` (and the `suite::` trials).
pub fn run(mutant: Option<&str>, trials: Option<&[String]>, fail_fast: bool) -> Result<(Report, f64, String), String> {
    use wait_timeout::ChildExt;
    let tag = mutant.unwrap_or("baseline");
    let dir = scratch().join(tag);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let chosen = dir.join("trials");
    if let Some(t) = trials {
        std::fs::write(&chosen, t.join("\n") + "\n").map_err(|e| format!("{}: {e}", chosen.display()))?;
    }
    let err_path = dir.join("stderr");
    let err = std::fs::File::create(&err_path).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut cmd = suite_under_library()?;
    cmd.env("CONFORMANCE_REPORT_DIR", &dir)
        .env("CONFORMANCE_TRIAL_TIMEOUT", DEADLINE.as_secs().to_string())
        .env("CONFORMANCE_REQUIRE", required())
        .envs(STRESS)
        .stdout(std::process::Stdio::null())
        .stderr(err);
    if trials.is_some() {
        cmd.env("CONFORMANCE_TRIALS_FILE", &chosen);
    }
    if fail_fast {
        cmd.env("CONFORMANCE_FAIL_FAST", "1");
        cmd.env(LEAD_VAR, lead(mutant, trials)?.to_string());
    } else {
        cmd.env_remove("CONFORMANCE_FAIL_FAST");
        cmd.env_remove(LEAD_VAR);
    }
    match mutant {
        Some(m) => cmd.env("CONFORMANCE_MUTANT", m),
        None => cmd.env_remove("CONFORMANCE_MUTANT"),
    };
    if let Some(n) = suite_threads()? {
        cmd.arg(format!("--test-threads={n}"));
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot run the suite: {e}"))?;
    let status = match child.wait_timeout(SUITE_LIMIT).map_err(|e| e.to_string())? {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "the suite under {tag} ran past {} s and was killed",
                SUITE_LIMIT.as_secs()
            ));
        }
    };
    let wall = start.elapsed().as_secs_f64();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let tail: String = stderr
        .lines()
        .rev()
        .take(15)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n");
    if status.code().is_none() {
        return Err(format!(
            "the suite under {tag} did not exit normally ({status}); the report is the suite's promise whatever \
             the library does. Its stderr ends:\n{tail}"
        ));
    }
    let read = report::try_read(&dir.join("report.json"))
        .map_err(|e| format!("the suite under {tag} wrote no report ({e}), exit {status}; its stderr ends:\n{tail}"));
    keep_or_remove(&dir, tag);
    Ok((read?, wall, status.to_string()))
}

/// CONFORMANCE_MUTANTS_KEEP=1 keeps each run's report.json, stderr and trial list under
/// REPORT_DIR/runs/<mutant> (to see why and when a trial killed a mutant); otherwise they go.
fn keep_or_remove(dir: &std::path::Path, tag: &str) {
    let keep = std::env::var("CONFORMANCE_MUTANTS_KEEP").is_ok_and(|v| v == "1");
    if let Some(to) = report_dir().filter(|_| keep).map(|r| r.join("runs").join(tag)) {
        let _ = std::fs::remove_dir_all(&to);
        if std::fs::create_dir_all(&to).is_ok() {
            for f in ["report.json", "stderr", "trials"] {
                let _ = std::fs::copy(dir.join(f), to.join(f));
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Each trial's `"calls"` in a report, where it has them.
pub fn calls(j: &Report) -> BTreeMap<String, Vec<u32>> {
    (j.trials().iter())
        .filter_map(|t| Some((t.trial.clone(), t.calls.as_ref()?.iter().map(|a| *a as u32).collect())))
        .collect()
}

/// Each trial's outcome and message.
pub fn outcomes(j: &Report) -> BTreeMap<String, (Outcome, String)> {
    (j.trials().iter())
        .map(|t| (t.trial.clone(), (t.outcome, t.message.clone())))
        .collect()
}
