//! report.json as one typed model: what a run builds once (`report::build`), writes as report.json
//! and draws report.md, JUnit and its last screen from, and what every reader reads
//! back (`--matrix`, `--diff`, `--timeline`, `--expectations-from`, and xtask's `matrix` and
//! `expectations prune`), of any age. A field some committed report lacks is an `Option` left out
//! when absent; one that may also be null is a [`field::Nullable`]; keys the model does not name
//! are kept in each part's `extra`, so a report read and written back is the same JSON
//! (`report::model_check` proves it on every committed report).
//!
//! Only serde and serde_json: xtask compiles these files too (`#[path]`), so one model serves both.

pub mod field;
pub mod machine;
pub mod provenance;
pub mod report;
pub mod trial;

pub use field::{Extra, Nullable};
pub use machine::{Device, FirstWork, Identity, Machine, P2p, PathAnswer, Selection, UnderTest};
pub use provenance::{Library, LibraryFile, Provenance, ProvenanceDevice, RunProvenance};
pub use report::{
    ApiRow, BrokenAfter, BrokenForGood, CapSeen, CauseGroup, Deviation, FirstWait, Footprint, GroupRow, Partition,
    Precondition, Report, Set, SetRow, Totals,
};
pub use trial::{ChildSpan, FailureCause, Observation, Timing, Trial, Turn};
