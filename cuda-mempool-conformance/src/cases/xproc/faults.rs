//! The harness against importers that die or hang on purpose (CONFORMANCE_IPC_FAULT): a failed
//! round trip must fail its trial quickly, with the importer's stderr, and leave no fd behind.

use super::common::*;
use super::roundtrip::{round_trip, Spec};
use crate::cases::prelude::*;
use crate::os::{fd_diff, fd_table};
use std::time::Instant;

/// (case, fault, what the failure message must mention): the harness against importers that die
/// or hang on purpose (CONFORMANCE_IPC_FAULT). These test the harness, not an API. The hang first:
/// it waits out its bound (1.5 s on the H200), and queued after the others it was the last general
/// trial to end (issue 45).
pub(super) const FAULTS: &[(&str, &str, &str)] = &[
    (
        "ipc_importer_hangs_at_write_fails_trial",
        "hang:write",
        "fault injected, hanging at step write",
    ),
    (
        "ipc_importer_dies_at_import_fails_trial",
        "die:import",
        "fault injected, aborting at step import",
    ),
    (
        "ipc_importer_dies_at_verify_fails_trial",
        "die:verify",
        "fault injected, aborting at step verify",
    ),
];

/// The harness's fault cases.
pub(super) fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for &(name, fault, mention) in FAULTS {
        v.push(
            Case::of(Group::Harness, name, &[Cap::Gpu, Cap::Ipc], move |e| {
                warm_up_ipc_events(e.deadline())?;
                let before = fd_table();
                let t = Instant::now();
                // Short waits: a hung importer must fail the trial in seconds.
                let spec = Spec {
                    fault: Some(fault),
                    timeout: Some(e.deadline().hung_step(e.m.startup_secs())),
                    ..Spec::new(vec![vec![MIB]], 1)
                };
                let r = round_trip(e, &spec);
                let secs = t.elapsed().as_secs_f64();
                let after = fd_table();
                let msg = match r {
                    Ok(_) => {
                        return Err(format!("round trip succeeded although the importer was told to {fault}").into())
                    }
                    Err(m) => m,
                };
                blame::reset();
                let msg = msg.to_string();
                ensure!(
                    msg.contains(mention),
                    "failure message does not carry the importer's stderr: {msg}"
                );
                // The importer's start-up (cuInit, a context) has its own bound, the first wait's
                // (`Deadline::importer_step`): a loaded device slows it, not the hang's detection.
                ensure!(
                    t.elapsed() < e.deadline().importer_step() + 4 * spec.step(e.deadline()),
                    "took {secs:.1} s to fail"
                );
                ensure!(
                    before == after,
                    "fds differ after the failed round trip: {}",
                    fd_diff(&before, &after)
                );
                note(format!("failed as it must in {secs:.1} s"));
                Ok(())
            })
            .alone()
            .slow(),
        );
    }
    v
}
