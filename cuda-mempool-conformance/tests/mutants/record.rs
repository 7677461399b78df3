//! The verdicts as data: what one run under a mutant showed ([`Verdict`]), every verdict so far
//! ([`VERDICTS`]) and the mutants declared equivalent ([`EQUIVALENT`]). The kill rule (`verdict`)
//! writes them, the report (`report`) shows them, an earlier part's mutants.json gives them back
//! (`resume`).

use std::collections::BTreeMap;
use std::sync::Mutex;

/// Mutants that no program can tell from the real driver, with the reason. A listed mutant that
/// is killed fails (the reason was wrong: remove it from the list).
pub const EQUIVALENT: &[(&str, &str)] = &[];

/// What one run under a mutant showed.
#[derive(Clone, Debug, Default)]
pub struct Verdict {
    /// Trials that passed in the baseline and failed here, with their messages.
    pub killers: Vec<(String, String)>,
    /// Trials whose declared driver departure stopped reproducing (noticed, not failed).
    pub changed: Vec<String>,
    pub wall: f64,
    pub status: String,
    /// How its trials were chosen: `calls`, `all`, or `beside` (the whole suite under `calls`: it
    /// acts outside its API's hooks).
    pub select: &'static str,
    /// How many trials its run ran (the suite's own included).
    pub ran: usize,
    /// How many it did not, having stopped at the first kill (CONFORMANCE_MUTANTS_STOP=first).
    pub stopped: usize,
    /// Why it was not run at all, if it was not (no trial reached its API).
    pub unreached: Option<String>,
}

/// Every verdict so far, by mutant (an error where its run could not be judged).
pub static VERDICTS: Mutex<BTreeMap<String, Result<Verdict, String>>> = Mutex::new(BTreeMap::new());
