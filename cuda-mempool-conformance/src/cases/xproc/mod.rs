//! IPC across processes (825, 826, 829, 830 and the rules of imported pools). The exporter is the
//! test thread; each importer is this binary re-executed in the `ipc-import`, `ipc-rules`,
//! `ipc-scenario` or `ipc-concurrent` role, reached over a `channel::Peer` (SCM_RIGHTS for the pool's fd, JSON for
//! export data and the IPC event handle). Every wait is bounded; a child that dies or hangs fails
//! the trial with its stderr and is reaped.
//!
//! A worker keeps its `ipc-import`, `ipc-scenario` and `ipc-concurrent` importers between trials
//! (`harness::kept_children`), checked clean after each; fresh importers still serve the trials that
//! need one: the fault trials (they kill or hang it, with a fault switch in its environment), the
//! ones that start it in another environment (another device, devices reordered, grants),
//! `exporter_leaks_no_fd` (it counts the exporter's fds), the large imports (R580 kills most of
//! their importers, and one that mapped GiB ends with its process), and the rules (one importer
//! run answers all of them, and a step that kills it must cost only that step).
//!
//! Test-only fault switch: CONFORMANCE_IPC_FAULT=die:STEP or hang:STEP makes the importer abort or
//! hang at STEP (start, import, verify, write, free); the `fault_*` trials use it.

mod all;
mod common;
mod concurrent;
mod faults;
mod kept;
mod messages;
mod roundtrip;
mod rules;
mod scenario_child;
mod scenarios;

pub use all::cases;
pub(crate) use common::{check_pattern, pattern};
pub use common::{importer_device, FAULT_VAR, IMPORTER_DEVICE_VAR, IPC_LANE};
pub use concurrent::concurrent_main;
pub use kept::kept_main;
pub use roundtrip::import_main;
pub use rules::rules_main;
pub use scenario_child::scenario_main;
