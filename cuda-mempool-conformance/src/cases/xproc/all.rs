//! The list of IPC cases: round trips, the harness's fault trials, the imported-pool rules, the
//! scenarios and the concurrent imports, each lane with the importers its worker starts ahead.

use super::common;
use crate::cases::prelude::*;

/// Every IPC case, in that order, its lane's warm-up step set.
pub fn cases() -> Vec<Case> {
    let mut v = super::roundtrip::cases();
    v.extend(super::faults::cases());
    v.extend(super::rules::cases());
    v.extend(super::scenarios::cases());
    v.extend(super::concurrent::cases());
    // Each lane's worker starts its importers before its first trial (`harness::kept_children::warm`):
    // the IPC lane two kept importers (one trial takes two at once) and the rules' importer, the
    // large imports' lane its first importer.
    v.into_iter()
        .map(|c| match c.placement.lane() {
            Some(common::IPC_LANE) => c.warmed_by(|e| {
                common::warm(e, Role::IpcKept, 2)?;
                common::warm(e, Role::IpcRules, 1)
            }),
            Some(common::LARGE_LANE) => c.warmed_by(|e| common::warm(e, Role::IpcScenario, 1)),
            _ => c,
        })
        .collect()
}
