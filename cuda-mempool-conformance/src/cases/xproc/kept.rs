//! The kept importer (child role `ipc-kept`): one process that serves every kept role in turn.

use super::common;
use crate::cases::messages::recv_one;
use crate::cases::prelude::*;
use crate::harness::kept_children::KeptWord;

/// Child role `ipc-kept`: one importer process serving every kept role, the role each trial
/// takes named by its first message (`{"op": "as", "role": ...}`, sent by `harness::kept_children`).
pub fn kept_main(env: &Env) -> i32 {
    common::serve("kept", env, |env, chan| {
        let (role, _) = recv_one(chan, "as", |m| match m {
            KeptWord::As { role } => Some(role),
            _ => None,
        })?;
        match Role::parse(&role) {
            Some(Role::IpcImport) => super::roundtrip::importer(env, chan),
            Some(Role::IpcScenario) => super::scenario_child::scenario_trial(env, chan),
            Some(Role::IpcConcurrent) => super::concurrent::concurrent_trial(env, chan),
            _ => Err(format!("a kept importer cannot take the role {role:?}").into()),
        }
    })
}
