//! Reading a run's report.json into the result vocabulary (`conformance_model::Report`): the one
//! way the tests read a report, so that they assert on its typed fields and enums, never on keys.

use conformance_model::{Report, Trial};
use std::path::Path;

/// The report at `path`, or why it cannot be read (naming the file).
#[allow(dead_code)] // each test binary uses what it needs
pub fn try_read(path: &Path) -> Result<Report, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read the report {}: {e}", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// The report at `path`; panics, naming the file, where it cannot be read.
#[allow(dead_code)] // each test binary uses what it needs
pub fn read(path: &Path) -> Report {
    try_read(path).unwrap_or_else(|e| panic!("{e}"))
}

/// A report's text, read from `from` (a file, or what printed it), or why it is no report.
#[allow(dead_code)] // each test binary uses what it needs
pub fn parse(text: &str, from: &str) -> Result<Report, String> {
    serde_json::from_str(text).map_err(|e| format!("the report {from} is no report.json: {e}"))
}

/// What the tests ask of a report beside its fields: its trials, and one of them by name.
#[allow(dead_code)] // each test binary uses what it needs
pub trait Trials {
    /// Every trial (none where the report lists none).
    fn trials(&self) -> &[Trial];
    /// The trial named `name`.
    fn trial(&self, name: &str) -> Option<&Trial> {
        self.trials().iter().find(|t| t.trial == name)
    }
}

impl Trials for Report {
    fn trials(&self) -> &[Trial] {
        self.trials.as_deref().unwrap_or(&[])
    }
}
