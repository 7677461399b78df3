//! The checkpoint leg's engine: taking a process of the run (the trial's own, or a helper it
//! started) through a checkpoint and back with the engine CONFORMANCE_CHECKPOINT names, every step
//! bounded by the trial deadline, and never leaving the process locked or checkpointed.
//!
//! - `driver`: a child of this binary (role `checkpoint`) calls the driver's own engine on the
//!   process, `cuCheckpointProcessLock`, `Checkpoint`, `Restore`, `Unlock` (R570+; NVIDIA's
//!   [checkpoint API](https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__CHECKPOINT.html)).
//!   A process cannot take itself through a checkpoint: another one must call.
//! - `command:TEMPLATE`: an outside tool, run by `sh -c` with `{pid}` replaced, once to checkpoint
//!   and once to restore (`{step}` says which, where the template names it).
//!
//! Whatever the engine did, a `checkpoint` child then reads the process's state with
//! `cuCheckpointProcessGetState` (an engine that answered success yet left the process locked or
//! checkpointed is wrong) and, where it is not running, restores and unlocks it. A process that
//! cannot be brought back is killed (the trial's own process ends itself), so no process of the
//! run is left frozen, whatever failed or hung.

use crate::driver::cu::*;
use crate::driver::deadline::Deadline;
use crate::driver::fail::{Fail, R};
use crate::harness::child::{run_child_for, Role};
use crate::harness::settings::{Engine, CHECKPOINT_VAR};
use std::time::{Duration, Instant};

/// The driver's engine, as the table names its entries.
pub const SYMBOLS: &[&str] = &[
    "cuCheckpointProcessGetState",
    "cuCheckpointProcessLock",
    "cuCheckpointProcessCheckpoint",
    "cuCheckpointProcessRestore",
    "cuCheckpointProcessUnlock",
];

/// The process a `checkpoint` child acts on (a protocol between the suite and that child).
pub const PID_VAR: &str = "CONFORMANCE_CHECKPOINT_PID";
/// What it does there: `toggle` (lock, checkpoint, restore, unlock), `state`, `rescue`, or
/// `lock:MS` (lock with that timeout, then unlock if it locked).
pub const STEP_VAR: &str = "CONFORMANCE_CHECKPOINT_STEP";

/// `cuCheckpointProcessGetState`'s answers (CUprocessState).
pub const RUNNING: i32 = 0;
pub const LOCKED: i32 = 1;
pub const CHECKPOINTED: i32 = 2;

/// A state in words.
pub fn state_name(s: i32) -> String {
    match s {
        RUNNING => "running".into(),
        LOCKED => "locked".into(),
        CHECKPOINTED => "checkpointed".into(),
        3 => "failed".into(),
        4 => "checkpointing".into(),
        5 => "restoring".into(),
        s => format!("state {s}"),
    }
}

/// Why the leg cannot run with `engine` (the run's: `Machine::checkpoint`), if it cannot (the
/// `checkpoint` capability's reason), on a machine whose library has the driver's engine
/// (`checkpoint_api`) or not, at `driver_version`.
pub fn unavailable(engine: &Engine, checkpoint_api: bool, driver_version: i64) -> Option<String> {
    match engine {
        Engine::Off => Some(format!(
            "the checkpoint leg is off: {CHECKPOINT_VAR}=driver takes each trial's process through the driver's \
             checkpoint, {CHECKPOINT_VAR}=command:TEMPLATE through a tool of yours"
        )),
        Engine::Driver if !checkpoint_api => Some(format!(
            "the driver's checkpoint engine is absent: the library lacks cuCheckpointProcess* (driver {driver_version}; \
             R570 and later have it)"
        )),
        Engine::Driver => None,
        Engine::Command(t) => {
            let program = t.split_whitespace().next().unwrap_or_default().to_string();
            match find_program(&program) {
                Some(_) => None,
                None => Some(format!(
                    "the checkpoint command's program {program:?} is not found ({CHECKPOINT_VAR}=command:{t})"
                )),
            }
        }
    }
}

/// `program` as `sh` would find it: a path as given, else on PATH.
pub fn find_program(program: &str) -> Option<std::path::PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let p = std::path::PathBuf::from(program);
        return p.is_file().then_some(p);
    }
    crate::os::path_dirs()
        .into_iter()
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// One step of a round trip: what ran, its answer (a CUresult for the driver's engine, an exit
/// code for a command), and how long it took.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Step {
    pub step: String,
    pub code: i64,
    pub secs: f64,
}

/// What a `checkpoint` child did and the state it left the process in.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Trip {
    pub steps: Vec<Step>,
    /// `cuCheckpointProcessGetState` after the steps (-1: unread).
    pub state: i32,
}

impl Trip {
    /// The first step that did not answer 0, if one did not.
    pub fn failed(&self) -> Option<&Step> {
        self.steps.iter().find(|s| s.code != 0)
    }
    /// The seconds of the step named `step`, summed.
    pub fn secs(&self, step: &str) -> f64 {
        self.steps.iter().filter(|s| s.step == step).map(|s| s.secs).sum()
    }
    /// "lock 0.001 s, checkpoint 0.62 s, …".
    pub fn describe(&self) -> String {
        let steps: Vec<String> = self
            .steps
            .iter()
            .map(|s| match s.code {
                0 => format!("{} {:.3} s", s.step, s.secs),
                c => format!("{} answered {c} after {:.3} s", s.step, s.secs),
            })
            .collect();
        format!("{}; the process then {}", steps.join(", "), state_name(self.state))
    }
}

/// A `checkpoint` child's step on `pid`, bounded by `limit` (the child handed the run's
/// `deadline`): its trip, or why it gave none.
pub fn child_step(pid: i32, step: &str, deadline: Deadline, limit: Duration) -> Result<Trip, String> {
    let pid_text = pid.to_string();
    let out = run_child_for(
        &Role::Checkpoint,
        &[(PID_VAR, &pid_text), (STEP_VAR, step)],
        deadline,
        limit,
    )?;
    match out.last_json().and_then(|j| serde_json::from_str::<Trip>(j).ok()) {
        Some(t) => Ok(t),
        None => Err(format!(
            "the checkpoint child ({step} of process {pid}) gave no answer: {}",
            out.describe()
        )),
    }
}

/// Run the command engine's template for `step` on `pid`, bounded; its exit code (-1: killed at
/// the bound, or not started).
fn command_step(template: &str, pid: i32, step: &str, limit: Duration) -> Step {
    use wait_timeout::ChildExt;
    let line = template.replace("{pid}", &pid.to_string()).replace("{step}", step);
    let start = Instant::now();
    let code = match std::process::Command::new("sh")
        .arg("-c")
        .arg(&line)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
    {
        Err(_) => -1,
        Ok(mut child) => match child.wait_timeout(limit) {
            Ok(Some(status)) => status.code().map_or(-1, i64::from),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                -1
            }
        },
    };
    Step {
        step: format!("command {step}"),
        code,
        secs: start.elapsed().as_secs_f64(),
    }
}

/// What the run's engine did to `pid` and the state it left it in, unjudged and not brought back:
/// for a trial that judges the engine itself (`round_trip` judges and brings back). Each step is
/// bounded by `deadline`'s trial deadline (a slow but correct engine is not a failure).
pub fn trip(engine: &Engine, pid: i32, deadline: Deadline) -> R<Trip> {
    let limit = deadline.trial();
    match engine {
        Engine::Off => Err(Fail::Ignore(format!(
            "the checkpoint leg is off ({CHECKPOINT_VAR} unset)"
        ))),
        Engine::Driver => child_step(pid, "toggle", deadline, limit * 4).map_err(Fail::Wrong),
        Engine::Command(t) => {
            let mut steps = vec![command_step(t, pid, "checkpoint", limit)];
            if steps[0].code == 0 {
                steps.push(command_step(t, pid, "restore", limit));
            }
            child_step(pid, "state", deadline, limit)
                .map(|s| Trip { steps, state: s.state })
                .map_err(Fail::Wrong)
        }
    }
}

/// Take `pid` through a checkpoint and back with the run's engine. Ok when every step answered
/// success and the process runs again; otherwise the trial fails, saying what the engine did, after
/// the process was brought back (or, where it could not be, killed: this process itself ends).
pub fn round_trip(engine: &Engine, pid: i32, deadline: Deadline) -> R<Trip> {
    match trip(engine, pid, deadline) {
        Err(Fail::Ignore(why)) => Err(Fail::Ignore(why)),
        Ok(t) if t.failed().is_none() && t.state == RUNNING => Ok(t),
        Ok(t) => {
            let rescued = rescue(pid, deadline);
            Err(Fail::Wrong(format!(
                "the checkpoint engine on process {pid}: {}; {rescued}",
                t.describe()
            )))
        }
        Err(e) => {
            let rescued = rescue(pid, deadline);
            Err(Fail::Wrong(format!("{}; {rescued}", e.message())))
        }
    }
}

/// Bring `pid` back to running (restore, unlock), or kill it where that fails: what was done, in
/// words. For this process itself, killing means ending now (the worker that ran it reports the
/// trial as its process's death, and starts another). Bounded by twice `deadline`'s trial deadline.
pub fn rescue(pid: i32, deadline: Deadline) -> String {
    match child_step(pid, "rescue", deadline, deadline.trial() * 2) {
        Ok(t) if t.state == RUNNING => format!("the suite brought it back ({})", t.describe()),
        other => {
            let why = match other {
                Ok(t) => t.describe(),
                Err(e) => e,
            };
            if pid == std::process::id() as i32 {
                eprintln!("checkpoint: this process could not be brought back ({why}); it ends now");
                crate::harness::bounded::exit_now(70);
            }
            // SAFETY: kill takes a pid and a signal number.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            format!("the suite could not bring it back ({why}) and killed it")
        }
    }
}

/// One driver call of the engine, timed.
fn timed(step: &str, f: impl FnOnce() -> CUresult) -> Step {
    let start = Instant::now();
    let r = f();
    Step {
        step: step.to_string(),
        code: i64::from(r.0),
        secs: start.elapsed().as_secs_f64(),
    }
}

fn get_state(pid: i32) -> i32 {
    let mut s = CUprocessState(u32::MAX);
    // SAFETY: an out-pointer to a live local.
    let r = unsafe { cuCheckpointProcessGetState(pid, &mut s) };
    if r.0 == 0 {
        s.0 as i32
    } else {
        -1
    }
}

/// Restore and unlock `pid` as far as its state needs, recording each step in `steps`.
fn bring_back(pid: i32, steps: &mut Vec<Step>) {
    if get_state(pid) == CHECKPOINTED {
        // SAFETY: null args are the defaults.
        steps.push(timed("restore", || unsafe {
            cuCheckpointProcessRestore(pid, std::ptr::null_mut())
        }));
    }
    if get_state(pid) == LOCKED {
        steps.push(timed("unlock", || unsafe {
            cuCheckpointProcessUnlock(pid, std::ptr::null_mut())
        }));
    }
}

/// The `checkpoint` child: the driver's engine on the process PID_VAR names, the step STEP_VAR
/// names; prints its trip as one JSON line.
pub fn child_main() -> i32 {
    let pid: i32 = match crate::os::setting(PID_VAR).and_then(|p| p.parse().ok()) {
        Some(p) => p,
        None => {
            eprintln!("{PID_VAR} is not a process id");
            return 2;
        }
    };
    let step = crate::os::setting(STEP_VAR).unwrap_or_default();
    // SAFETY: cuInit takes a flags word; 0 is the only defined value.
    let _ = unsafe { cuInit(0) };
    let mut steps = Vec::new();
    match step.as_str() {
        "toggle" => {
            // SAFETY (every call below): a process id and null args, the engine's defaults.
            type Call = fn(i32) -> CUresult;
            let calls: [(&str, Call); 4] = [
                ("lock", |p| unsafe { cuCheckpointProcessLock(p, std::ptr::null_mut()) }),
                ("checkpoint", |p| unsafe {
                    cuCheckpointProcessCheckpoint(p, std::ptr::null_mut())
                }),
                ("restore", |p| unsafe {
                    cuCheckpointProcessRestore(p, std::ptr::null_mut())
                }),
                ("unlock", |p| unsafe {
                    cuCheckpointProcessUnlock(p, std::ptr::null_mut())
                }),
            ];
            for (name, call) in calls {
                let s = timed(name, || call(pid));
                let failed = s.code != 0;
                steps.push(s);
                if failed {
                    break;
                }
            }
        }
        "rescue" => bring_back(pid, &mut steps),
        "state" => {}
        lock if lock.starts_with("lock:") => {
            let ms: u32 = lock[5..].parse().unwrap_or(0);
            let mut args = CUcheckpointLockArgs {
                timeoutMs: ms,
                ..Default::default()
            };
            // SAFETY: a process id and a live args struct.
            let s = timed("lock", || unsafe { cuCheckpointProcessLock(pid, &mut args) });
            steps.push(s);
            bring_back(pid, &mut steps);
        }
        other => {
            eprintln!("{STEP_VAR}={other:?}: expected toggle, state, rescue or lock:MS");
            return 2;
        }
    }
    let trip = Trip {
        steps,
        state: get_state(pid),
    };
    println!("{}", serde_json::to_string(&trip).unwrap_or_default());
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trip_says_what_failed_and_where_the_process_was_left() {
        let t = Trip {
            steps: vec![
                Step {
                    step: "lock".into(),
                    code: 0,
                    secs: 0.001,
                },
                Step {
                    step: "checkpoint".into(),
                    code: 304,
                    secs: 0.5,
                },
            ],
            state: LOCKED,
        };
        assert_eq!(t.failed().map(|s| s.step.as_str()), Some("checkpoint"));
        assert_eq!(
            t.describe(),
            "lock 0.001 s, checkpoint answered 304 after 0.500 s; the process then locked"
        );
        assert_eq!(t.secs("checkpoint"), 0.5);
    }

    #[test]
    fn a_program_is_found_as_sh_would() {
        assert!(find_program("sh").is_some());
        assert!(find_program("/bin/sh").is_some());
        assert!(find_program("no-such-checkpoint-tool-here").is_none());
        assert!(find_program("").is_none());
    }
}
