//! The kept importer (child role `ipc-kept`): one process that serves every kept role in turn.

use super::common;
use crate::cases::prelude::*;

/// Child role `ipc-kept`: one importer process serving every kept role, the role each trial
/// takes named by its first message (`{"op": "as", "role": ...}`, sent by `harness::kept_children`).
pub fn kept_main(env: &Env) -> i32 {
    common::serve("kept", env, |env, chan| {
        let (m, _) = chan.recv()?;
        common::expect_op(&m, "as")?;
        match m["role"].as_str() {
            Some("ipc-import") => super::roundtrip::importer(env, chan),
            Some("ipc-scenario") => super::scenarios::scenario_trial(env, chan),
            Some("ipc-concurrent") => super::concurrent::concurrent_trial(env, chan),
            r => Err(format!("a kept importer cannot take the role {r:?}").into()),
        }
    })
}
