//! How trials reach the driver ([`Runner`]): through the scheduler's worker processes, or in this
//! process's test threads (a lane's trials one at a time, an `alone` one by itself, a crash case in
//! a child of its own); and [`run_again`], one more run in a fresh child, for `--rerun-failed`.

use crate::driver::deadline::Deadline;
use crate::driver::departures::Policy;
use crate::harness::child::{run_child_for, Role};
use crate::harness::execute::execute;
use crate::harness::verdict::judge;
use crate::harness::{Case, Env, Raw, Record};
use crate::run::clock::since_start;
use crate::run::scheduler::Scheduler;
use crate::run::stop::Stop;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// In-process mode: a crash case runs in a fresh child of this binary (role `case:TRIAL`), within
/// `timeout` (the child handed the run's `deadline`).
fn run_isolated(case: &Case, deadline: Deadline, timeout: Duration) -> Raw {
    let start = Instant::now();
    match run_child_for(&Role::Case(case.trial_name()), &[], deadline, timeout) {
        Err(e) => Raw::Broken(e),
        Ok(out) => {
            let secs = start.elapsed().as_secs_f64();
            if out.timed_out {
                return Raw::Hung {
                    secs,
                    inside: out.inside,
                    log: out.stderr,
                };
            }
            match (out.signal(), out.last_json()) {
                (None, Some(line)) => match crate::harness::outcome::from_line(line) {
                    Ok(a) => Raw::Answer(Box::new(a)),
                    Err(e) => Raw::Broken(e),
                },
                (sig, _) => Raw::Died {
                    how: out.describe(),
                    signal: sig,
                    inside: out.inside,
                    last: out.last,
                    log: String::new(),
                    secs,
                },
            }
        }
    }
}

/// Run `case` once more in a fresh child of its own and judge it (under `policy`): `--rerun-failed`,
/// after the run, whichever runner ran it first; within `deadline`'s trial deadline.
pub fn run_again(case: &Case, deadline: Deadline, policy: &Policy) -> Record {
    let timeout = if case.crash.is_some() {
        deadline.crash()
    } else {
        deadline.trial()
    };
    let begin = since_start();
    let mut r = judge(case, run_isolated(case, deadline, timeout), policy);
    r.span = (begin, since_start());
    r
}

/// How trials reach the driver.
pub enum Runner {
    /// In worker processes (the default): see `scheduler.rs`.
    Workers(Arc<Scheduler>),
    /// In this process's test threads (under nextest, which gives each trial its own process, or
    /// with CONFORMANCE_WORKERS=0). Crash cases still run in a child.
    InProcess { env: Arc<Env>, stop: Arc<Stop> },
}

type LaneLocks = Mutex<std::collections::BTreeMap<&'static str, Arc<Mutex<()>>>>;
static LANES: OnceLock<LaneLocks> = OnceLock::new();
static ALONE: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn lane_lock(lane: &'static str) -> Arc<Mutex<()>> {
    LANES
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(lane)
        .or_default()
        .clone()
}

impl Runner {
    /// Run one case and judge what came back.
    pub fn run(&self, case: &Case) -> Record {
        match self {
            Runner::Workers(s) => s.wait(&case.trial_name()),
            Runner::InProcess { env, stop } => {
                if let Some(r) = stop.skipped(case) {
                    return r;
                }
                let begin = since_start();
                let raw = if case.crash.is_some() {
                    let _shared = ALONE.read().unwrap_or_else(|p| p.into_inner());
                    run_isolated(case, env.deadline(), env.deadline().crash())
                } else {
                    let lane = case.placement.lane().map(lane_lock);
                    let _lane = lane.as_ref().map(|l| l.lock().unwrap_or_else(|p| p.into_inner()));
                    let (_alone, _shared);
                    if case.placement.alone() {
                        _alone = ALONE.write().unwrap_or_else(|p| p.into_inner());
                    } else {
                        _shared = ALONE.read().unwrap_or_else(|p| p.into_inner());
                    }
                    if case.placement.child_in_process() {
                        run_isolated(case, env.deadline(), env.deadline().trial())
                    } else {
                        Raw::Answer(Box::new(execute(case, env)))
                    }
                };
                let cut = stop.interrupted(case).filter(|_| !matches!(raw, Raw::Answer(_)));
                let mut r = cut.unwrap_or_else(|| judge(case, raw, &env.policy()));
                r.span = (begin, since_start());
                stop.note(&r);
                r
            }
        }
    }
}
