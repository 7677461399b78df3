//! mutants.json, declared once: report.rs writes it from these types, and a later run reads them
//! back: an earlier part's verdicts (resume.rs) and a hint's killers (order.rs), as typed values
//! rather than keys. Every field defaults, so a file of an older runner, or a hand-made one, still
//! reads; what is missing is said by the reader that needs it.

use conformance_model::Outcome;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A mutation run's mutants.json.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MutantsJson {
    /// CONFORMANCE_MUTANTS_SELECT and _STOP of the run that wrote it.
    pub select: Option<String>,
    pub stop: Option<String>,
    pub machine: SavedMachine,
    /// The run's wall, its parts' summed.
    pub wall_s: Option<f64>,
    /// How many parts it was (1 where not said).
    pub parts: Option<u64>,
    /// The baseline run's wall.
    pub baseline_wall_s: Option<f64>,
    /// How many mutants were judged, killed, survived.
    pub judged: Option<u64>,
    pub killed: Option<u64>,
    pub survived: Option<u64>,
    /// The trials that failed with no mutant on.
    pub baseline_failed: Vec<String>,
    /// None: the file has no `mutants` list, and is no mutants.json.
    pub mutants: Option<Vec<SavedMutant>>,
    /// Each trial that killed a mutant, and the mutants it killed.
    pub trials: BTreeMap<String, BTreeSet<String>>,
    /// With STOP=never, the trials that killed none (null with STOP=first: not known).
    pub trials_killing_none: Option<Vec<KillsNone>>,
}

/// The device and driver the run judged on.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SavedMachine {
    /// How many devices.
    pub devices: Option<u64>,
    pub device: Option<String>,
    pub driver: Option<String>,
    /// The baseline report's date.
    pub date: Option<String>,
}

/// One mutant's verdict as written.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SavedMutant {
    pub name: Option<String>,
    /// The API it mutates, where it acts, what kind of change, what it breaks (the library's list).
    pub api: Option<u32>,
    pub needs: Option<String>,
    pub kind: Option<String>,
    pub what: Option<String>,
    /// `killed`, `SURVIVED…`, `equivalent…`, `not run: …`, `not judged …`, `ERROR: …`.
    pub status: Option<String>,
    pub killed_by: Vec<String>,
    pub changed: Vec<String>,
    pub wall_s: f64,
    /// The run's exit status, in words.
    pub exit: String,
    /// all, beside or calls (null where it did not run).
    pub select: Option<String>,
    /// Trials run and trials not run because it stopped at its first kill (null where it did not run).
    pub trials_run: Option<u64>,
    pub trials_stopped: Option<u64>,
}

/// A trial that killed no mutant: its baseline outcome and why it exists (none for an ignored one).
#[derive(Debug, Serialize, Deserialize)]
pub struct KillsNone {
    pub trial: String,
    pub baseline: Outcome,
    pub reason: Option<String>,
}

/// The mutants.json at `path`, named by the variable `var` (CONFORMANCE_MUTANTS_RESUME, _HINT): read
/// and parsed, or an error naming both.
pub fn read(var: &str, path: &Path) -> Result<MutantsJson, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{var}={shown}: cannot read it ({e}); expected the mutants.json of an earlier run"))?;
    serde_json::from_str(&text).map_err(|e| format!("{var}={shown}: not JSON ({e})"))
}

/// mutants.json's text as written: pretty JSON with each object's keys in order of name.
pub fn text(j: &MutantsJson) -> String {
    // Through a `Value`, whose objects keep their keys sorted, so that the file reads as it always
    // has, whatever the order of the fields above.
    let v = serde_json::to_value(j).expect("mutants.json is plain data");
    serde_json::to_string_pretty(&v).expect("mutants.json is plain data")
}

/// The check (no run of the suite): the committed docs/conformance/mutants.json reads into these
/// types and, written again, is the same text: the format is the one declared here.
pub fn check_committed() -> Result<(), String> {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/conformance/mutants.json"));
    let j = read("the committed file", path)?;
    let was = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    if j.mutants.as_ref().is_none_or(Vec::is_empty) {
        return Err(format!("{}: no mutants read", path.display()));
    }
    if text(&j).trim_end() == was.trim_end() {
        Ok(())
    } else {
        Err(format!(
            "{}: written again from its typed values, it is another text: a field the file has is not declared in saved.rs",
            path.display()
        ))
    }
}
