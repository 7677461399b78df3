//! The conformance suite's result vocabulary: what a run found, as typed values, and report.json
//! as their one serialisation. The suite builds a run's facts in these very types (its trials'
//! outcomes and kinds, their timing and children, the machine, the provenance, the footprint) and
//! writes, draws and reads back report.json through them; xtask's `matrix` and
//! `expectations prune` read reports through them too. Closed sets are enums whose serde names are
//! report.json's strings ([`Outcome`], [`Kind`], [`Turn`], [`Answer`]).
//!
//! The ground floor, floor 0 of the suite's layers (`model` → `os` → `driver` → `harness` → `cases`
//! | `report` | `run` → `suite`): serde and serde_json only, no driver and nothing of the suite, so
//! every layer may import it.
//!
//! The messages between the coordinator and its workers are this vocabulary too ([`protocol`]):
//! a trial's answer travels as the values the report keeps.
//!
//! Reports of any age read: a field some committed report lacks is an `Option` left out when
//! absent; one that may also be null is a [`field::Nullable`]; keys the model does not name are
//! kept in each part's `extra`, so a report read and written back is the same JSON (the suite's
//! `report::model_check` proves it on every committed report).

pub mod field;
pub mod machine;
pub mod outcome;
pub mod protocol;
pub mod provenance;
pub mod report;
pub mod trial;

pub use field::{Extra, Nullable};
pub use machine::{Device, EntryMode, FirstWork, Identity, Machine, P2p, PathAnswer, Selection, UnderTest};
pub use outcome::{Answer, Kind, Outcome};
pub use protocol::{FromWorker, ToWorker, TrialAnswer};
pub use provenance::{Library, LibraryFile, Provenance, ProvenanceDevice, RunProvenance};
pub use report::{
    ApiRow, BrokenAfter, BrokenForGood, CapSeen, CauseGroup, Deviation, FirstWait, Footprint, GroupRow, Partition,
    Precondition, Report, Set, SetRow, Totals,
};
pub use trial::{ChildSpan, ExpectedBy, FailureCause, Observation, Timing, Trial, Turn};
