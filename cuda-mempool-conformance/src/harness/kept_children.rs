//! Long-lived importer children kept by a worker between its trials: taken for a trial, asked
//! after it whether they are clean, kept if they are, replaced when they died, hung or left state.
//!
//! Each child start costs seconds under compute-sanitizer; a worker runs trials one at a time, so
//! the importers one trial used serve the next. Only in a worker process (`Role::Worker`): run in
//! the test threads (nextest, CONFORMANCE_WORKERS=0) every trial starts its own, as a child's
//! parent-death signal follows the thread that started it.
//!
//! The protocol, on the child's side in `cases::xproc::common::serve`: after a trial's exchange
//! the parent either closes its sending side (the child exits 0: a fresh importer's end) or sends
//! `{"op": "check"}`; the child answers `{"op": "clean"}` once its context holds nothing the
//! trial made (the ledger empty, no fd more than after its first trial, its context without a
//! sticky error), or an error naming what is left (the trial fails, the child is replaced).
//!
//! **Started ahead** ([`warm`], a lane's `Case::warm` before its first turn): a lane's worker,
//! once the run's heavy trials are done, starts the children its trials will take, all at once,
//! so that each trial does not pay a start-up (cuInit, a context, which the driver creates one at
//! a time machine-wide) within its span (issue 36). Such
//! a child says `{"op": "ready"}` once its context is made; it has served no trial, so a trial that
//! needs a fresh process ([`Take::Unused`]) may take it as well as one that may reuse; one that
//! counts what a child's start makes ([`Take::New`]) starts its own.

use crate::driver::fail::R;
use crate::harness::channel::Peer;
use crate::harness::child::{Role, CHILD_VAR};
use crate::harness::settings::Settings;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Mutex;
use std::time::Duration;

/// The words between a worker and a child it keeps, both ways (the child's side in
/// `cases::xproc::common::serve` and `cases::xproc::kept`), beside the trial's own exchange.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum KeptWord {
    /// To the child: serve this role (one kept process serves every kept importer role).
    As { role: String },
    /// To the child: is nothing of the trial left?
    Check,
    /// From a child started ahead: its context is made.
    Ready,
    /// From the child, to `Check`: nothing of the trial is left.
    Clean,
}

/// The kept children, idle between trials (and those started ahead, which served none yet).
static IDLE: Mutex<Vec<Peer>> = Mutex::new(Vec::new());

/// CONFORMANCE_CHILD_READY=1: the child says `{"op": "ready"}` once its context is made, and waits
/// for its first trial as long as a kept child waits for its next.
pub const READY_VAR: &str = "CONFORMANCE_CHILD_READY";

impl KeptWord {
    /// `m` as one of these, if it is one (the child's side reads the channel untyped).
    pub fn of(m: &Value) -> Option<KeptWord> {
        KeptWord::deserialize(m).ok()
    }
}

/// How long a kept child waits for its next trial (a worker that ends closes the channel, and
/// one that dies takes it along by the parent-death signal, so this only bounds a stray one).
pub const KEPT_IDLE: Duration = Duration::from_secs(3600);

/// Whether this child was started ahead ([`READY_VAR`]).
pub fn started_ahead() -> bool {
    crate::os::setting(READY_VAR).is_some_and(|v| v == "1")
}

/// Whether this process keeps children between trials: a worker does.
fn keeps() -> bool {
    crate::os::setting(CHILD_VAR).is_some_and(|v| v == Role::Worker.name())
}

/// Which child a trial may take ([`take`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    /// An idle one, kept from an earlier trial or started ahead: its claim is about the calls,
    /// not a fresh process.
    Kept,
    /// One that has served no trial (started ahead, or now): a fresh process, not the trial's own.
    Unused,
    /// One started now, within the trial (it counts the fds or processes the child's start makes).
    New,
}

/// A child in `role` with `envs` for one trial, as `how` allows: an idle one when this process
/// keeps children and one is alive with that role and environment, else a new one. `timeout`
/// bounds each receive (and the wait for a new one's start). A taken child is kept after the
/// trial ([`give_back`]) only when `how` is [`Take::Kept`]. `settings`: the run's (a helper's
/// connections, [`connections`]).
pub fn take(role: &Role, envs: &[(&str, &str)], timeout: Duration, how: Take, settings: &Settings) -> R<Peer> {
    let p = take_process(&process_role(role), envs, timeout, how, settings)?;
    // A kept importer serves the role each trial names first.
    if process_role(role) != *role {
        let serve = KeptWord::As { role: role.name() };
        p.chan.send(&serve, None)?;
    }
    Ok(p)
}

/// The role of the process that serves `role`: one `ipc-kept` process for every kept importer role
/// (each process is a context, which the driver creates one at a time machine-wide: issue 36).
fn process_role(role: &Role) -> Role {
    match role {
        Role::IpcImport | Role::IpcScenario | Role::IpcConcurrent => Role::IpcKept,
        r => r.clone(),
    }
}

/// CUDA_DEVICE_MAX_CONNECTIONS for a child in `role`, as the run's `settings` say
/// (CONFORMANCE_HELPER_CONNECTIONS, for helper roles only: `Role::helper`).
fn connections(role: &Role, settings: &Settings) -> R<Option<u32>> {
    if !role.helper() {
        return Ok(None);
    }
    Ok(settings.helper_connections.checked().map_err(String::from)?)
}

fn take_process(role: &Role, envs: &[(&str, &str)], timeout: Duration, how: Take, settings: &Settings) -> R<Peer> {
    let reuse = how == Take::Kept;
    if keeps() && how != Take::New {
        let key = Peer::key_of(role, envs);
        let mut idle = IDLE.lock().unwrap_or_else(|p| p.into_inner());
        // A kept child that died since is dropped (reaped) here.
        idle.retain_mut(Peer::alive);
        if let Some(i) = idle.iter().position(|p| p.key == key && (reuse || p.fresh)) {
            let mut p = idle.swap_remove(i);
            p.set_wait(timeout)?;
            p.reusable = reuse;
            p.fresh = false;
            return Ok(p);
        }
    }
    let mut p = Peer::spawn(role, envs, timeout, connections(role, settings)?, settings.deadline())?;
    p.reusable = reuse;
    p.fresh = false;
    Ok(p)
}

/// Have `n` children in `role` with `envs` idle ahead of the trials that will [`take`] them
/// (starting those missing), and wait (at most `timeout` for them all) until each has made its
/// context. Only in a process that keeps children.
/// Err: one did not start or say it was ready (it is killed; those ready are kept). `settings`: the
/// run's (a helper's connections).
pub fn warm(role: &Role, envs: &[(&str, &str)], n: usize, timeout: Duration, settings: &Settings) -> R {
    if !keeps() {
        return Ok(());
    }
    let role = &process_role(role);
    // At least `n` idle: those started ahead for another role that one process serves count.
    let idle = {
        let key = Peer::key_of(role, envs);
        let mut idle = IDLE.lock().unwrap_or_else(|p| p.into_inner());
        idle.retain_mut(Peer::alive);
        idle.iter().filter(|p| p.key == key).count()
    };
    let mut with_ready = envs.to_vec();
    with_ready.push((READY_VAR, "1"));
    let helper_connections = connections(role, settings)?;
    let started: Vec<R<Peer>> = (idle..n)
        .map(|_| Peer::spawn(role, &with_ready, timeout, helper_connections, settings.deadline()))
        .collect();
    // One bound for them all (they start side by side), so that the step ends within `timeout`.
    let until = std::time::Instant::now() + timeout;
    let mut first_error = None;
    for p in started {
        let ready = p.and_then(|mut p| {
            p.key = Peer::key_of(role, envs);
            let left = until.saturating_duration_since(std::time::Instant::now());
            p.set_wait(left.max(Duration::from_millis(1)))?;
            match p.chan.recv_as() {
                Ok((KeptWord::Ready, _)) => Ok(p),
                Ok((m, _)) => Err(p
                    .fail(format!("a child started ahead answered {m:?}, not ready"))
                    .into()),
                Err(e) => Err(p.fail(format!("a child started ahead was not ready: {e}")).into()),
            }
        });
        match ready {
            Ok(p) => IDLE.lock().unwrap_or_else(|p| p.into_inner()).push(p),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// The trial is done with `p`: a reusable child in a worker is asked whether it is clean and kept
/// if it is, else killed with a note; any other child is told to end and reaped ([`Peer::finish`]).
/// Err: the child did not end well or did not answer (it is killed, its stderr in the message).
pub fn give_back(p: Peer) -> R {
    if !(p.reusable && keeps()) {
        return p.finish().map(|_| ());
    }
    let answer = p.chan.send(&KeptWord::Check, None).and_then(|()| p.chan.recv_as());
    match answer {
        Ok((KeptWord::Clean, _)) => {
            IDLE.lock().unwrap_or_else(|p| p.into_inner()).push(p);
            Ok(())
        }
        // Left state behind (an import the driver refused to release, say): it is not kept, and
        // the trial is judged by its answers alone, as with a fresh importer (a fresh one ends
        // with the same state and no question asked: the verdict must not depend on the mode).
        Ok((m, _)) => {
            crate::driver::check::note(format!(
                "the kept importer was not clean after this trial ({m:?}); it was replaced"
            ));
            drop(p);
            Ok(())
        }
        Err(e) => Err(p
            .fail(format!("the kept importer is not clean after this trial: {e}"))
            .into()),
    }
}

/// End every kept child (before the worker's leak check, which counts children and fds).
pub fn close_all() {
    let kept: Vec<Peer> = std::mem::take(&mut *IDLE.lock().unwrap_or_else(|p| p.into_inner()));
    for p in kept {
        let _ = p.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each message round-trips, and reads and writes today's text.
    #[test]
    fn kept_messages_keep_their_text() {
        let all = [
            (KeptWord::Ready, json!({"op": "ready"})),
            (
                KeptWord::As {
                    role: "ipc-import".into(),
                },
                json!({"op": "as", "role": "ipc-import"}),
            ),
            (KeptWord::Check, json!({"op": "check"})),
            (KeptWord::Clean, json!({"op": "clean"})),
        ];
        for (m, text) in all {
            assert_eq!(serde_json::to_value(&m).unwrap(), text);
            assert_eq!(KeptWord::of(&text), Some(m.clone()));
            assert_eq!(KeptWord::of(&serde_json::to_value(&m).unwrap()), Some(m));
        }
        let parsed: KeptWord = serde_json::from_str(r#"{"op": "as", "role": "ipc-scenario"}"#).unwrap();
        assert_eq!(
            parsed,
            KeptWord::As {
                role: "ipc-scenario".into()
            }
        );
        assert_eq!(KeptWord::of(&json!({"op": "as"})), None);
        assert_eq!(KeptWord::of(&json!({"op": "verified"})), None);
    }
}
