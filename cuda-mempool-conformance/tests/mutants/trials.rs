//! The runner's trials, in the order libtest-mimic gets them: one per mutant (device mutants
//! first, then those the no-device trials judge, the faults last; ignored with the reason where
//! the machine cannot show it or CONFORMANCE_MUTANTS_NEEDS/_ONLY leave it out; a mutant an earlier
//! part judged gives that verdict again), then the runner's own checks (the selection's, stopping
//! at the first kill, reading an earlier part back), and last a control run of the faithful
//! library beside the mutants.

use super::baseline::baseline;
use super::library::{missing, Mutant};
use super::resume;
use super::saved;
use super::selection::selection_checks;
use super::settings::{not_listed, not_selected, Select, Stop};
use super::suite::{outcomes, run};
use super::verdict::{conclude, judge, stop_check};
use conformance_model::Outcome;
use libtest_mimic::Trial;

/// Every trial of the runner for `mutants`, each mutant judged under `mode` and `stop` unless
/// `earlier` (the parts before this one) has its verdict.
pub fn all(mutants: &[Mutant], earlier: &resume::Earlier, mode: Select, stop: Stop) -> Vec<Trial> {
    // Device mutants first, then those the no-device trials judge, the faults (hangs, aborts) last:
    // a run stopped early has judged the most telling ones.
    let mut order: Vec<&Mutant> = mutants.iter().collect();
    order.sort_by_key(|m| (m.kind != "mutant", m.needs == "none"));
    let mut trials: Vec<Trial> = order
        .into_iter()
        .map(|m| {
            let name = format!("mutant::{}", m.name);
            let ignore = missing(&m.needs)
                .or_else(|| not_selected(&m.needs))
                .or_else(|| not_listed(&m.name));
            let m2 = m.clone();
            let t = match earlier.verdicts.get(&m.name) {
                // Judged in an earlier part: its verdict again, so that this part's exit says the whole run's.
                Some(v) => {
                    let v = v.clone();
                    Trial::test(name, move || conclude(&m2, &v)).with_kind(format!("{}: earlier part", m.kind))
                }
                None => Trial::test(name, move || judge(&m2, mode, stop)).with_kind(m.kind.clone()),
            };
            match ignore {
                Some(why) => t.with_ignored_flag(true).with_kind(format!("{}: {why}", m.kind)),
                None => t,
            }
        })
        .collect();
    trials.extend(selection_checks(mutants));
    trials.push(stop_check(mutants, mode));
    trials.push(Trial::test("resume::an_earlier_part_gives_its_verdicts", || {
        Ok(resume::check()?)
    }));
    trials.push(Trial::test(
        "resume::the_committed_mutants_json_reads_back_as_written",
        || Ok(saved::check_committed()?),
    ));
    // Another faithful run beside the mutants: runs side by side on one GPU do not fail trials by
    // themselves (a kill is the mutant's doing).
    trials.push(Trial::test("control::faithful_library_beside_the_mutants", || {
        let b = baseline()?;
        let (j, _, status) = run(None, None, false)?;
        let failed: Vec<String> = outcomes(&j)
            .into_iter()
            .filter(|(t, (o, _))| {
                *o == Outcome::Failed && b.outcomes.get(t).is_some_and(|(o, _)| *o == Outcome::Passed)
            })
            .map(|(t, (_, m))| format!("{t}: {m}"))
            .collect();
        if failed.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the faithful run beside the mutants failed ({status}):\n{}",
                failed.join("\n")
            )
            .into())
        }
    }));
    trials
}
