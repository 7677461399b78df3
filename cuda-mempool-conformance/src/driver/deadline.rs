//! The trial deadline (CONFORMANCE_TRIAL_TIMEOUT) and every wait of the suite, derived from it in
//! one place: a slow but correct layer (a sanitizer, a debugger, a remote GPU) passes once the user
//! raises the deadline. The fractions keep today's waits at the default of 60 s.

use std::time::Duration;

/// The trial deadline of this run (CONFORMANCE_TRIAL_TIMEOUT, handed down by `harness::settings`;
/// an unusable value was refused before any trial ran).
pub fn trial() -> Duration {
    crate::driver::given::given().trial
}

/// A crash case's bound (a third of `trial`): it should die at once, and a hang must not cost a
/// full deadline.
pub fn crash(trial: Duration) -> Duration {
    trial / 3
}

/// How long an exporter waits for an importer's next message: half the deadline, so that an
/// importer that hangs fails its trial with its breadcrumb before the worker's deadline.
pub fn importer_step() -> Duration {
    (trial() / 2).max(Duration::from_secs(5))
}

/// How long an exporter waits for an importer's first message, its start-up included: three
/// quarters of the deadline (under compute-sanitizer on the H100, 2026-11-25, importers started
/// beside a dozen other processes took 56-161 s and more: half of a 300 s deadline failed eight
/// trials whose importers were only slow to start). Later waits take what is left (`importer_step`).
pub fn importer_start() -> Duration {
    (trial() / 4 * 3).max(Duration::from_secs(5))
}

/// How long a child that answers many trials' steps in one process (`cases::vaspace`) may take for
/// each message, its start-up and first step included: most of the trial deadline (under
/// compute-sanitizer on the H100 the start and the first default-pool query took over half of a
/// 300 s deadline beside the run's other processes, and failed all nine trials as a hang).
pub fn shared_child_step() -> Duration {
    (trial() / 4 * 3).max(Duration::from_secs(5))
}

/// How long the harness's fault trials wait for an importer told to hang, once it has started:
/// a sixtieth of the deadline, or twice this run's measured start-up of a process (the probe's),
/// whichever is longer, so that a slow layer's importer still reaches the step it hangs at.
pub fn hung_step(startup_secs: f64) -> Duration {
    (trial() / 60).max(Duration::from_secs_f64(startup_secs.max(0.0) * 2.0))
}

/// How long a call with a declared hang may take before it is given up (`harness::bounded`): a
/// twentieth of the deadline, 3 s at the default, so that a trial that meets the hang still ends
/// within a tenth of the deadline. Where such a call answers, it answers at once (R580 refused
/// maxSize SIZE_MAX in under a millisecond on every host that answered).
pub fn driver_hang() -> Duration {
    trial() / 20
}

/// How long a watched call with an argument beyond the device's memory may take before it is
/// given up: a quarter of the deadline. The driver's out-of-memory path is slow but answers (an
/// allocation of the device's memory + 1 took over 0.5 s on an H200 beside the mutation runner's
/// processes, 2026-11-26; up to 9 s on the H100 beside a dozen processes creating contexts).
pub fn beyond_device() -> Duration {
    trial() / 4
}

/// How long a short-lived child (the before-cuInit answers, a probe of cuInit) may take.
pub fn child_answer() -> Duration {
    trial() / 6
}

/// How long a worker may take to start and greet.
pub fn worker_start() -> Duration {
    trial()
}

/// How long a finished child may take to exit before it is killed.
pub fn reap() -> Duration {
    trial() / 12
}

/// When a running trial counts as stuck (spare workers start then; nothing fails).
pub fn stuck(deadline: Duration) -> Duration {
    (deadline / 6).max(Duration::from_secs(2))
}

/// The longest a stream may be held at a host-function gate, or a watchdog may wait to open one.
pub fn gate() -> Duration {
    trial() / 2
}

/// How long an exclusive trial waits, once done, for the device's free memory to come back to
/// what it was before it (processes it ended give their memory back some time after they exit).
pub fn settle() -> Duration {
    trial() / 6
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
}
