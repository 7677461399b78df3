//! The baseline: one run of the whole suite under the library with no mutant switched on, made
//! once (before any mutant's run) and shared by every verdict. Its outcomes decide which trials can
//! kill (only those that passed), its per-trial `"calls"` which trials a mutant is run against, and
//! its per-trial times the order they run in.

use super::resume;
use super::suite::{calls, outcomes, run};
use conformance_model::{Outcome, Report};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The baseline: the suite under the library with no mutant. A library that forwards everything
/// is the real driver, so its failures are the driver's own: a trial failing here cannot judge a
/// mutant (kills count only trials that passed here) and is listed in mutants.md as such. The
/// baseline's capabilities decide which mutants can be judged.
pub struct Baseline {
    pub report: Report,
    pub outcomes: BTreeMap<String, (Outcome, String)>,
    /// Each trial's APIs reached (`"calls"`), where the report has them.
    pub calls: BTreeMap<String, Vec<u32>>,
    /// Each trial's time.
    pub secs: BTreeMap<String, f64>,
    pub wall: f64,
}

impl Baseline {
    /// The trials that passed (only they can kill).
    pub fn passed(&self) -> Vec<String> {
        self.outcomes
            .iter()
            .filter(|(_, (o, _))| *o == Outcome::Passed)
            .map(|(t, _)| t.clone())
            .collect()
    }
}

pub fn baseline() -> Result<&'static Baseline, String> {
    static B: OnceLock<Result<Baseline, String>> = OnceLock::new();
    B.get_or_init(|| {
        let (report, wall, status) = run(None, None, false)?;
        let outcomes = outcomes(&report);
        let calls = calls(&report);
        let secs = (report.trials.iter().flatten())
            .map(|t| (t.trial.clone(), t.secs))
            .collect();
        let failed: Vec<&String> = outcomes
            .iter()
            .filter(|(_, (o, _))| *o == Outcome::Failed)
            .map(|(t, _)| t)
            .collect();
        if !failed.is_empty() {
            eprintln!(
                "mutants: {} trial(s) fail on this driver with no mutant switched on ({status}); they judge no \
                 mutant: {failed:?}",
                failed.len()
            );
        }
        Ok(Baseline {
            report,
            outcomes,
            calls,
            secs,
            wall,
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The baseline, run before any mutant's (a failed baseline is said here, and each mutant's verdict
/// then says it again); an error when the earlier parts of the run (`earlier`) ran on another
/// device or driver than this one.
pub fn first(earlier: &resume::Earlier) -> Result<(), String> {
    match baseline() {
        Err(e) => eprintln!("mutants: the baseline run failed: {e}"),
        Ok(b) => {
            let here = (
                (b.report.machine.devices.first())
                    .map_or("no GPU", |d| d.name.as_str())
                    .to_string(),
                b.report.driver.as_deref().unwrap_or("?").to_string(),
            );
            if let Some(there) = earlier.machine.as_ref().filter(|m| **m != here) {
                return Err(format!(
                    "{}: the earlier parts ran on {there:?}, this one on {here:?}: resume a run on the machine it \
                     started on, or start it anew",
                    resume::RESUME_VAR
                ));
            }
        }
    }
    Ok(())
}
