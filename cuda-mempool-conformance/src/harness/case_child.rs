//! A case's own process (`Case::own_process`, role `case:TRIAL`): the machine file it reads instead
//! of probing again, and the children started ahead (`Case::ahead`): made before the run's heavy
//! trials by their lane's worker, each waits with its context made until its trial tells it to go,
//! so that its start-up (cuInit, a context: 0.3-0.4 s on the H100 and H200, R580) is out of the
//! trial's span while the trial has the device alone.

use crate::driver::fail::R;
use crate::harness::case::Case;
use crate::harness::channel::{Channel, CHILD_FD};
use crate::harness::child::{start_piped, watch_from_now, ChildOut, Role, Running};
use crate::harness::Machine;
use serde_json::json;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// The variable naming a file that holds the machine a `case:TRIAL` child runs on (the parent's
/// probe, as JSON): the child reads it instead of probing again.
pub const MACHINE_FILE_VAR: &str = "CONFORMANCE_CHILD_MACHINE";

/// A file holding `m` for a child to read (this process's only), or None where it cannot be made
/// (the child then probes: a probe costs about 0.25 s, on the critical path of the graph caps trials).
pub fn machine_file(m: &Machine) -> Option<PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::env::temp_dir().join(format!(
        "cump-machine-{}-{}",
        std::process::id(),
        crate::harness::child::starts()
    ));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&file)
        .and_then(|mut f| f.write_all(m.to_json().to_string().as_bytes()))
        .ok()
        .map(|_| file)
}

/// A case's process started ahead, waiting for its trial.
pub struct Ahead {
    trial: String,
    chan: Channel,
    run: Running,
}

/// The children started ahead in this process and not yet taken, by trial.
static AHEAD: Mutex<Vec<Ahead>> = Mutex::new(Vec::new());

/// Start `case`'s own process now and wait (at most `timeout`) until it has made its context; it is
/// kept for [`take`]. Err: it did not start or say it was ready (it is killed).
pub fn start(case: &Case, m: &Machine, timeout: Duration) -> R {
    let (chan, theirs) = Channel::pair(timeout)?;
    let file = machine_file(m);
    let path = file.as_ref().map(|f| f.to_string_lossy().into_owned());
    let mut envs = vec![(crate::harness::helpers::READY_VAR, "1")];
    envs.extend(path.as_deref().map(|p| (MACHINE_FILE_VAR, p)));
    let role = Role::Case(case.trial_name());
    let run = start_piped(&role, &envs, &[(theirs.as_raw_fd(), CHILD_FD)]);
    drop(theirs);
    let ready = run.and_then(|run| match chan.recv() {
        Ok((m, _)) if m["op"] == "ready" => Ok(run),
        got => {
            let why = got.map_or_else(|e| e.to_string(), |(m, _)| format!("it answered {m}"));
            run.kill();
            Err(format!(
                "{}'s process started ahead was not ready: {why}",
                case.trial_name()
            ))
        }
    });
    // Read by now (or never to be).
    if let Some(f) = file {
        let _ = std::fs::remove_file(f);
    }
    let run = ready?;
    AHEAD.lock().unwrap_or_else(|p| p.into_inner()).push(Ahead {
        trial: case.trial_name(),
        chan,
        run,
    });
    Ok(())
}

/// The process started ahead for `trial`, if one is waiting.
pub fn take(trial: &str) -> Option<Ahead> {
    let mut ahead = AHEAD.lock().unwrap_or_else(|p| p.into_inner());
    let i = ahead.iter().position(|a| a.trial == trial)?;
    Some(ahead.swap_remove(i))
}

impl Ahead {
    /// Tell it to run its trial and wait (at most `timeout`) for it to end. Err: it could not be
    /// told (it died while it waited: it is reaped, and the trial starts another).
    pub fn go(self, role: &Role, timeout: Duration) -> Result<Result<ChildOut, String>, String> {
        if let Err(e) = self.chan.send(&json!({"op": "go"}), None) {
            self.run.kill();
            return Err(format!("the process started ahead for it had ended ({e})"));
        }
        watch_from_now(role, self.run.id());
        Ok(self.run.wait(timeout))
    }
}

/// End every child started ahead that no trial took (before the worker's leak check).
pub fn close_all() {
    let ahead: Vec<Ahead> = std::mem::take(&mut *AHEAD.lock().unwrap_or_else(|p| p.into_inner()));
    for a in ahead {
        a.chan.close_write();
        let _ = a.run.wait(Duration::from_secs(5));
    }
}

/// In a `case:TRIAL` child started ahead: say it is ready (its context made) and wait for the word
/// to go. False: the parent closed the channel instead (or it cannot be reached): end without
/// running the trial.
pub fn ready_then_wait() -> bool {
    let Ok(chan) = Channel::from_inherited() else {
        return false;
    };
    if chan.send(&json!({"op": "ready"}), None).is_err()
        || chan.set_timeout(crate::harness::helpers::KEPT_IDLE).is_err()
    {
        return false;
    }
    matches!(chan.recv(), Ok((m, _)) if m["op"] == "go")
}
