//! The kill rule and the verdicts: a mutant is killed when a trial that passed in the baseline
//! fails under it, and its trial here passes when it is killed or declared [`EQUIVALENT`] and
//! fails when it survives (or is declared equivalent and killed). Each verdict goes into
//! [`VERDICTS`], beside those an earlier part of the run gave (CONFORMANCE_MUTANTS_RESUME, read
//! once), and the report is rewritten as it comes in. Also the check that stopping at the first
//! kill gives the verdict a whole run gives.

use super::baseline::baseline;
use super::launch::common::report::Trials;
use super::library::Mutant;
use super::record::{Verdict, EQUIVALENT, VERDICTS};
use super::report::rewrite_report;
use super::selection::trials_for;
use super::settings::{Select, Stop};
use super::suite::{outcomes, run};
use conformance_model::{Kind, Outcome};
use libtest_mimic::{Failed, Trial};

pub fn judge(m: &Mutant, mode: Select, stop: Stop) -> Result<(), Failed> {
    let b = baseline()?;
    let result = (|| {
        let (trials, select, reached) = trials_for(m, b, mode, stop)?;
        if !reached {
            return Ok(Verdict {
                select,
                unreached: Some(format!("no trial that passed in the baseline calls API {}", m.api)),
                ..Verdict::default()
            });
        }
        let (j, wall, status) = run(Some(&m.name), trials.as_deref(), stop == Stop::First)?;
        let records = j.trials();
        let stopped = records.iter().filter(|t| t.kind == Some(Kind::Stopped)).count();
        let mut v = Verdict {
            wall,
            status,
            select,
            ran: records.len() - stopped,
            stopped,
            ..Verdict::default()
        };
        for (trial, (outcome, msg)) in outcomes(&j) {
            let before = b.outcomes.get(&trial).map(|(o, _)| *o);
            match outcome {
                Outcome::Failed if before == Some(Outcome::Passed) => v.killers.push((trial, msg)),
                Outcome::Changed if before == Some(Outcome::Passed) => v.changed.push(trial),
                _ => {}
            }
        }
        Ok::<Verdict, String>(v)
    })();
    VERDICTS.lock().unwrap().insert(m.name.clone(), result.clone());
    if let Err(e) = rewrite_report() {
        eprintln!("mutants: cannot write the report: {e}");
    }
    conclude(m, &result?)
}

/// A mutant's trial verdict from what its run showed (here, or in an earlier part): killed or
/// declared equivalent passes, a survivor fails.
pub fn conclude(m: &Mutant, v: &Verdict) -> Result<(), Failed> {
    let equivalent = EQUIVALENT.iter().find(|(n, _)| *n == m.name);
    match (v.killers.is_empty(), equivalent) {
        (false, None) => {
            println!(
                "mutant {} killed by {} trial(s), first {}",
                m.name,
                v.killers.len(),
                v.killers[0].0
            );
            Ok(())
        }
        (true, Some((_, why))) => {
            println!("mutant {} survives, declared equivalent: {why}", m.name);
            Ok(())
        }
        (false, Some(_)) => Err(format!(
            "mutant {} is declared equivalent but {} killed it: remove it from EQUIVALENT",
            m.name, v.killers[0].0
        )
        .into()),
        (true, None) => Err(format!(
            "mutant {} SURVIVED ({}: {}): {}{}",
            m.name,
            m.api,
            m.what,
            v.unreached
                .clone()
                .unwrap_or_else(|| "no trial that passes on this driver failed under it".into()),
            if v.changed.is_empty() {
                String::new()
            } else {
                format!(" (noticed only as changed departures: {:?})", v.changed)
            }
        )
        .into()),
    }
}

/// Stopping at the first kill changes no verdict: the first no-device mutant of the library, run
/// both ways (fail-fast and whole), is killed both ways, and the fail-fast run's trials that did
/// not run are recorded `stopped`, naming the failure that stopped them.
pub fn stop_check(mutants: &[Mutant], mode: Select) -> Trial {
    let m = mutants
        .iter()
        .find(|m| m.needs == "none" && m.kind == "mutant")
        .cloned();
    Trial::test("stop::first_kill_gives_the_verdict_of_a_whole_run", move || {
        let m = m.as_ref().ok_or("the library has no no-device mutant")?;
        let b = baseline()?;
        let mut kills = Vec::new();
        for stop in [Stop::First, Stop::Never] {
            let (trials, _, _) = trials_for(m, b, mode, stop)?;
            let (j, _, _) = run(Some(&m.name), trials.as_deref(), stop == Stop::First)?;
            let records = j.trials();
            let killers: Vec<&str> = records
                .iter()
                .filter(|t| t.outcome == Outcome::Failed)
                .map(|t| t.trial.as_str())
                .filter(|t| b.outcomes.get(*t).is_some_and(|(o, _)| *o == Outcome::Passed))
                .collect();
            for t in records.iter().filter(|t| t.kind == Some(Kind::Stopped)) {
                let msg = t.message.as_str();
                if stop == Stop::Never || !killers.iter().any(|k| msg.contains(&format!("`{k}` failed first"))) {
                    return Err(format!(
                        "{:?} run under {}: a stopped trial that names no failure of the run: {t:?}",
                        stop, m.name
                    )
                    .into());
                }
            }
            kills.push(killers.len());
        }
        match kills[..] {
            [first, never] if first > 0 && never > 0 => Ok(()),
            _ => Err(format!(
                "{}: killers stopping at the first kill / running every trial: {kills:?}",
                m.name
            )
            .into()),
        }
    })
}
