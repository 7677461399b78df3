//! IPC across processes (825, 826, 829, 830 and the rules of imported pools). The exporter is the
//! test thread; each importer is this binary re-executed in the `ipc-import`, `ipc-rules`,
//! `ipc-scenario` or `ipc-concurrent` role, reached over a `channel::Peer` (SCM_RIGHTS for the pool's fd, JSON for
//! export data and the IPC event handle). Every wait is bounded; a child that dies or hangs fails
//! the trial with its stderr and is reaped.
//!
//! A worker keeps its `ipc-import`, `ipc-scenario` and `ipc-concurrent` importers between trials
//! (`harness::helpers`), checked clean after each; fresh importers still serve the trials that
//! need one: the fault trials (they kill or hang it, with a fault switch in its environment), the
//! ones that start it in another environment (another device, devices reordered, grants),
//! `exporter_leaks_no_fd` (it counts the exporter's fds), the large imports (R580 kills most of
//! their importers, and one that mapped GiB ends with its process), and the rules (one importer
//! run answers all of them, and a step that kills it must cost only that step).
//!
//! Test-only fault switch: CONFORMANCE_IPC_FAULT=die:STEP or hang:STEP makes the importer abort or
//! hang at STEP (start, import, verify, write, free); the `fault_*` trials use it.

mod common;
mod concurrent;
mod faults;
mod roundtrip;
mod rules;
mod scenarios;

use crate::cases::prelude::*;

pub use common::{importer_device, FAULT_VAR, IMPORTER_DEVICE_VAR, IPC_LANE};
pub use concurrent::concurrent_main;
pub use roundtrip::import_main;
pub use rules::rules_main;
pub use scenarios::scenario_main;

/// Every IPC case: round trips, the harness's fault trials, the imported-pool rules, the
/// scenarios.
pub fn cases() -> Vec<Case> {
    let mut v = roundtrip::cases();
    v.extend(faults::cases());
    v.extend(rules::cases());
    v.extend(scenarios::cases());
    v.extend(concurrent::cases());
    // Each lane's worker starts its importers before its first trial (`harness::helpers::warm`):
    // the IPC lane two kept importers (one trial takes two at once) and the rules' importer, the
    // large imports' lane its first importer.
    v.into_iter()
        .map(|c| match c.lane {
            Some(common::IPC_LANE) => c.warmed_by(|e| {
                common::warm(e, Role::IpcKept, 2)?;
                common::warm(e, Role::IpcRules, 1)
            }),
            Some(common::LARGE_LANE) => c.warmed_by(|e| common::warm(e, Role::IpcScenario, 1)),
            _ => c,
        })
        .collect()
}

/// Child role `ipc-kept`: one importer process serving every kept role, the role each trial
/// takes named by its first message (`{"op": "as", "role": ...}`, sent by `harness::helpers`).
pub fn kept_main(env: &Env) -> i32 {
    common::serve("kept", env, |env, chan| {
        let (m, _) = chan.recv()?;
        common::expect_op(&m, "as")?;
        match m["role"].as_str() {
            Some("ipc-import") => roundtrip::importer(env, chan),
            Some("ipc-scenario") => scenarios::scenario_trial(env, chan),
            Some("ipc-concurrent") => concurrent::concurrent_trial(env, chan),
            r => Err(format!("a kept importer cannot take the role {r:?}").into()),
        }
    })
}
