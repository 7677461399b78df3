//! mutants.json as a later run reads it back (report.rs writes it): an earlier part's verdicts
//! (resume.rs) and a hint's killers (order.rs), as typed values rather than keys. Every field
//! defaults, so a file of an older runner, or a hand-made one, still reads; what is missing is
//! said by the reader that needs it.

use serde::Deserialize;
use std::path::Path;

/// A mutation run's mutants.json: the fields a later run reads.
#[derive(Debug, Default, Deserialize)]
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
    /// None: the file has no `mutants` list, and is no mutants.json.
    pub mutants: Option<Vec<SavedMutant>>,
}

/// The device and driver the run judged on.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SavedMachine {
    pub device: Option<String>,
    pub driver: Option<String>,
}

/// One mutant's verdict as written.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SavedMutant {
    pub name: Option<String>,
    /// `killed`, `SURVIVED…`, `equivalent…`, `not run: …`, `not judged …`, `ERROR: …`.
    pub status: Option<String>,
    pub killed_by: Vec<String>,
    pub changed: Vec<String>,
    pub wall_s: f64,
    /// The run's exit status, in words.
    pub exit: String,
    /// all, beside or calls.
    pub select: Option<String>,
    pub trials_run: u64,
    pub trials_stopped: u64,
}

/// The mutants.json at `path`, named by the variable `var` (CONFORMANCE_MUTANTS_RESUME, _HINT): read
/// and parsed, or an error naming both.
pub fn read(var: &str, path: &Path) -> Result<MutantsJson, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{var}={shown}: cannot read it ({e}); expected the mutants.json of an earlier run"))?;
    serde_json::from_str(&text).map_err(|e| format!("{var}={shown}: not JSON ({e})"))
}
