//! The order a mutant's run takes its trials in when it stops at the first kill, and which of them
//! lead it: the trials that killed the mutant in an earlier run's mutants.json
//! (CONFORMANCE_MUTANTS_HINT, read once), then its API's own trials, then the rest, each group
//! quickest first by the baseline's times; the quickest hinted killer runs before any other trial
//! starts (the suite's CONFORMANCE_FAIL_FAST_LEAD). The order decides only how soon a kill comes,
//! never the verdict.

use super::saved;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// CONFORMANCE_MUTANTS_HINT=mutants.json: a previous run's report. With STOP=first, the trials that
/// killed a mutant there run first against it (the order changes no verdict, only how soon a kill
/// comes).
const HINT_VAR: &str = "CONFORMANCE_MUTANTS_HINT";

/// Each mutant's killers in the hint file (empty without one).
pub fn hint() -> Result<&'static BTreeMap<String, Vec<String>>, String> {
    static H: OnceLock<Result<BTreeMap<String, Vec<String>>, String>> = OnceLock::new();
    H.get_or_init(|| {
        let Some(path) = std::env::var_os(HINT_VAR).filter(|p| !p.is_empty()) else {
            return Ok(BTreeMap::new());
        };
        let j = saved::read(HINT_VAR, std::path::Path::new(&path))?;
        let mutants = j.mutants.ok_or_else(|| {
            format!(
                "{HINT_VAR}={}: no \"mutants\" list; expected the mutants.json a mutation run writes",
                path.to_string_lossy()
            )
        })?;
        Ok(mutants
            .into_iter()
            .filter_map(|m| Some((m.name?, m.killed_by)))
            .collect())
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The order a fail-fast run takes `chosen` in for a mutant of API `api`: the trials that killed it
/// in the hint's run (`hinted`), then its API's own trials (`820_...`), then the rest; each group by
/// the baseline's time, quickest first. (The suite runs its exclusive trials last whatever this says.)
pub fn first_kill_order(
    mut chosen: Vec<String>,
    api: u32,
    secs: &BTreeMap<String, f64>,
    hinted: &[String],
) -> Vec<String> {
    let own = format!("{api}_");
    let key = |t: &String| {
        let class = if hinted.contains(t) {
            0
        } else if t.starts_with(&own) {
            1
        } else {
            2
        };
        (class, (secs.get(t).copied().unwrap_or(f64::MAX) * 1e6) as u64)
    };
    chosen.sort_by_key(key);
    chosen
}

/// The suite's CONFORMANCE_FAIL_FAST_LEAD: its first trials that run before any other starts.
pub const LEAD_VAR: &str = "CONFORMANCE_FAIL_FAST_LEAD";
/// How many of a mutant's known killers lead its run: the quickest one. A kill there ends the run
/// with one worker started (H100, R580, 2026-11-25: 0.24 s a mutant, median of 246, against 1.4 s
/// when the lanes' workers and children started beside the killer; the whole library 200.6 s,
/// was 438.6 s); without one the run goes on as before.
const LEAD: usize = 1;

/// How many of `trials` (in [`first_kill_order`]) lead `mutant`'s run: its hinted killers at the
/// front, at most [`LEAD`].
pub fn lead(mutant: Option<&str>, trials: Option<&[String]>) -> Result<usize, String> {
    let (Some(m), Some(t)) = (mutant, trials) else {
        return Ok(0);
    };
    let hinted = hint()?.get(m).map_or(&[][..], Vec::as_slice);
    Ok(t.iter().take_while(|x| hinted.contains(x)).take(LEAD).count())
}
