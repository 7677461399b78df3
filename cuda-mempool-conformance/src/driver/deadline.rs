//! The trial deadline (CONFORMANCE_TRIAL_TIMEOUT) and every wait of the suite, derived from it in
//! one place: a slow but correct layer (a sanitizer, a debugger, a remote GPU) passes once the user
//! raises the deadline. The fractions keep today's waits at the default of 60 s. Where the library
//! under test holds each new process at its first GPU work ([`first_wait`], issue 58: a layer
//! that time-slices the GPU between processes), every wait that a new process's first work can fall
//! in takes that wait on top, and a trial's deadline room for [`PROCESSES_PER_TRIAL`] of them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The user's trial deadline (CONFORMANCE_TRIAL_TIMEOUT, installed by the process's entry point:
/// `driver::given`; an unusable value was refused before any trial ran), without the library's wait.
pub fn timeout() -> Duration {
    crate::driver::given::given().trial
}

/// The variable that hands the planned wait down to every child of the suite (`harness::child`
/// sets it), in milliseconds.
pub const FIRST_WAIT_VAR: &str = "CONFORMANCE_FIRST_WAIT_MS";

/// The planned wait in milliseconds; u64::MAX while neither set nor read from FIRST_WAIT_VAR.
static FIRST_WAIT_MS: AtomicU64 = AtomicU64::new(u64::MAX);

/// What the library under test makes each new process of this run wait at its first GPU work,
/// where the run plans with it (`harness::first_work`: the probe's measure, past a sixtieth of the
/// deadline); zero where it does not. Handed down with the machine (`Machine::from_json`) and to
/// every child (FIRST_WAIT_VAR), so that each process of the run derives the same waits.
pub fn first_wait() -> Duration {
    let mut ms = FIRST_WAIT_MS.load(Ordering::Relaxed);
    if ms == u64::MAX {
        ms = crate::os::setting(FIRST_WAIT_VAR)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let _ = FIRST_WAIT_MS.compare_exchange(u64::MAX, ms, Ordering::Relaxed, Ordering::Relaxed);
    }
    Duration::from_millis(FIRST_WAIT_MS.load(Ordering::Relaxed))
}

/// Plan with `wait` at each new process's first GPU work (zero: none).
pub fn set_first_wait(wait: Duration) {
    FIRST_WAIT_MS.store(wait.as_millis().min(u64::MAX as u128 - 1) as u64, Ordering::Relaxed);
}

/// How many new processes' waits a trial's deadline makes room for: its worker's, when the trial is
/// the worker's first, and one child's it starts (an importer, its own process). A later child of
/// the same trial waits within the deadline's own share (the waits for a child's messages take the
/// wait on top each).
pub const PROCESSES_PER_TRIAL: u32 = 2;

/// The trial deadline of this run: the user's, and room for [`PROCESSES_PER_TRIAL`] new processes'
/// waits where the library holds each ([`first_wait`]).
pub fn trial() -> Duration {
    timeout() + first_wait() * PROCESSES_PER_TRIAL
}

/// A crash case's bound (a third of `trial`): it should die at once, and a hang must not cost a
/// full deadline; and the library's wait, should its process be a new one.
pub fn crash(trial: Duration) -> Duration {
    trial / 3 + first_wait()
}

/// How long an exporter waits for an importer's next message: half the deadline, so that an
/// importer that hangs fails its trial with its breadcrumb before the worker's deadline (and the
/// library's wait, which the importer's first GPU work may meet at any step).
pub fn importer_step() -> Duration {
    (timeout() / 2).max(Duration::from_secs(5)) + first_wait()
}

/// How long an exporter waits for an importer's first message, its start-up included: three
/// quarters of the deadline (under compute-sanitizer on the H100, 2026-11-25, importers started
/// beside a dozen other processes took 56-161 s and more: half of a 300 s deadline failed eight
/// trials whose importers were only slow to start). Later waits take what is left (`importer_step`).
pub fn importer_start() -> Duration {
    (timeout() / 4 * 3).max(Duration::from_secs(5)) + first_wait()
}

/// How long a child that answers many trials' steps in one process (`cases::vaspace`) may take for
/// each message, its start-up and first step included: most of the trial deadline (under
/// compute-sanitizer on the H100 the start and the first default-pool query took over half of a
/// 300 s deadline beside the run's other processes, and failed all nine trials as a hang).
pub fn shared_child_step() -> Duration {
    (timeout() / 4 * 3).max(Duration::from_secs(5)) + first_wait()
}

/// How long the harness's fault trials wait for an importer told to hang, once it has started:
/// a sixtieth of the deadline, or twice this run's measured start-up of a process (the probe's),
/// whichever is longer, so that a slow layer's importer still reaches the step it hangs at; and the
/// library's wait at its first GPU work.
pub fn hung_step(startup_secs: f64) -> Duration {
    (timeout() / 60).max(Duration::from_secs_f64(startup_secs.max(0.0) * 2.0)) + first_wait()
}

/// How long a call with a declared hang may take before it is given up (`harness::bounded`): a
/// twentieth of the deadline, 3 s at the default, so that a trial that meets the hang still ends
/// within a tenth of the deadline. Where such a call answers, it answers at once (R580 refused
/// maxSize SIZE_MAX in under a millisecond on every host that answered). And the library's wait,
/// should the call be its process's first GPU work.
pub fn driver_hang() -> Duration {
    timeout() / 20 + first_wait()
}

/// How long a watched call with an argument beyond the device's memory may take before it is
/// given up: a quarter of the deadline. The driver's out-of-memory path is slow but answers (an
/// allocation of the device's memory + 1 took over 0.5 s on an H200 beside the mutation runner's
/// processes, 2026-11-26; up to 9 s on the H100 beside a dozen processes creating contexts). And the
/// library's wait, should the call be its process's first GPU work.
pub fn beyond_device() -> Duration {
    timeout() / 4 + first_wait()
}

/// How long a short-lived child (the before-cuInit answers, a probe of cuInit) may take, the
/// library's wait at its first call included.
pub fn child_answer() -> Duration {
    timeout() / 6 + first_wait()
}

/// How long a worker may take to start and greet.
pub fn worker_start() -> Duration {
    timeout() + first_wait()
}

/// How long a finished child may take to exit before it is killed.
pub fn reap() -> Duration {
    timeout() / 12
}

/// When a running trial counts as stuck (spare workers start then; nothing fails).
pub fn stuck(deadline: Duration) -> Duration {
    (deadline / 6).max(Duration::from_secs(2))
}

/// The longest a stream may be held at a host-function gate, or a watchdog may wait to open one
/// (the gate's host function may be its process's first launch: the library's wait on top).
pub fn gate() -> Duration {
    timeout() / 2 + first_wait()
}

/// How long an exclusive trial waits, once done, for the device's free memory to come back to
/// what it was before it (processes it ended give their memory back some time after they exit).
pub fn settle() -> Duration {
    timeout() / 6
}

/// In-process mode: how long `suite::no_leaks` waits for `jobs` other trials.
pub fn all_trials(jobs: usize) -> Duration {
    trial() * (jobs as u32).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_scale_with_the_deadline() {
        let t = Duration::from_secs(600);
        assert_eq!(crash(t), Duration::from_secs(200));
        assert_eq!(
            crash(crate::driver::given::DEFAULT_TRIAL_TIMEOUT),
            Duration::from_secs(20)
        );
        assert_eq!(stuck(t), Duration::from_secs(100));
    }

    /// No wait planned in a process that was told none: every wait is the deadline's share alone.
    #[test]
    fn without_a_planned_wait_the_waits_are_the_deadlines_shares() {
        crate::driver::given::install(crate::driver::given::Given::unset());
        if first_wait() != Duration::ZERO {
            return; // a test environment that hands a wait down (none does)
        }
        assert_eq!(trial(), timeout());
        assert_eq!(child_answer(), timeout() / 6);
        assert_eq!(hung_step(0.0), timeout() / 60);
    }
}
