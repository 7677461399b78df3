//! How a run plans with the library's long wait at each new process's first GPU work (issue 58;
//! `harness::first_work` measures it, `driver::deadline` puts it on top of every wait a new process's
//! first work can fall in): fewer general workers, and the new processes the run expects to start,
//! each waiting once, which name the time the waits add before the run starts. Under a run budget
//! the room a trial needs is `Stop::with_room`'s.

use crate::harness::case::Case;
use crate::harness::machine::Cap;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// The most general workers a run starts where the library holds each new process: each worker pays
/// the wait once, and a layer that time-slices the GPU between processes runs one process's work at
/// a time, so more workers add waits rather than throughput; two keep one trial running while a
/// new worker waits (a spare still starts beside a trial stuck past half the deadline).
pub const WAITING_WORKERS: usize = 2;

/// The general workers of a run whose library holds each new process: `parallel`, and
/// [`WAITING_WORKERS`] at most.
pub fn workers(parallel: usize) -> usize {
    parallel.min(WAITING_WORKERS)
}

/// Whether `c` starts a process beside its worker, or ends its worker for the next trial to start
/// another: in a process of its own (`placement::Process::Own`), a declared crash (its worker dies with
/// it), an IPC trial (its importers; the kept ones of a lane counted here too).
fn starts_a_process(c: &Case) -> bool {
    c.placement.own_process() || c.crash.is_some() || c.needs.contains(&Cap::Ipc)
}

/// The new processes a run of `jobs` on `workers` general workers is expected to start, each waiting
/// once at its first GPU work: the general workers, a worker per lane, and one per trial that
/// starts a process ([`starts_a_process`]). An estimate: a trial with two importers starts two, a
/// worker that dies unexpectedly is replaced.
pub fn processes(jobs: &[Arc<Case>], workers: usize) -> usize {
    let lanes: BTreeSet<&str> = jobs.iter().filter_map(|c| c.placement.lane()).collect();
    workers + lanes.len() + jobs.iter().filter(|c| starts_a_process(c)).count()
}

/// Why a trial is not started once a run budget leaves less than a trial's `deadline`, the
/// library's `wait` at each new process's first GPU work inside it (`Stop::with_room`'s message,
/// the same for every trial it holds back, so that the last screen groups them).
pub fn no_room(budget: Duration, deadline: Duration, timeout: Duration, wait: Duration) -> String {
    format!(
        "not run: the run budget of {} s left less than a trial's deadline of {:.1} s ({} s, and {} × {:.1} s for the \
         wait the library under test holds each new process at its first GPU work)",
        budget.as_secs_f64(),
        deadline.as_secs_f64(),
        timeout.as_secs_f64(),
        crate::driver::deadline::PROCESSES_PER_TRIAL,
        wait.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::case::Group;

    fn case(name: &str, f: fn(Case) -> Case) -> Arc<Case> {
        Arc::new(f(Case::of(Group::Harness, name, &[Cap::Gpu], |_| Ok(()))))
    }

    /// Two general workers at most, fewer where the run asked for fewer.
    #[test]
    fn two_workers_at_most() {
        assert_eq!(workers(4), 2);
        assert_eq!(workers(1), 1);
    }

    /// The workers, one per lane, and one per trial that starts a process: its own, a crash case's
    /// successor, an importer.
    #[test]
    fn processes_count_workers_lanes_and_trials_that_start_one() {
        let jobs = [
            case("plain", |c| c),
            case("own", |c| c.own_process()),
            case("ipc", |c| c.needs(Cap::Ipc).lane("ipc")),
            case("serial", |c| c.serial()),
            case("crash", |c| {
                c.crashes(
                    crate::harness::SIGSEGV,
                    crate::driver::cu::CUresult::CUDA_ERROR_INVALID_VALUE,
                    "R580",
                )
            }),
        ];
        // 2 workers, lanes ipc and serial, own + ipc + crash.
        assert_eq!(processes(&jobs, 2), 7);
        assert_eq!(processes(&[], 1), 1);
    }

    /// The message names the budget, the deadline and the wait.
    #[test]
    fn no_room_says_budget_deadline_and_wait() {
        let s = no_room(
            Duration::from_secs(600),
            Duration::from_secs(116),
            Duration::from_secs(60),
            Duration::from_secs(28),
        );
        assert_eq!(
            s,
            "not run: the run budget of 600 s left less than a trial's deadline of 116.0 s (60 s, and 2 × 28.0 s for the \
             wait the library under test holds each new process at its first GPU work)"
        );
    }
}
