//! The trial deadline (CONFORMANCE_TRIAL_TIMEOUT) and every wait of the suite, derived from it in
//! one place: a slow but correct layer (a sanitizer, a debugger, a remote GPU) passes once the user
//! raises the deadline. The fractions keep today's waits at the default of 60 s. Where the library
//! under test holds each new process at its first GPU work ([`Deadline::first_wait`], issue 58: a layer
//! that time-slices the GPU between processes), every wait that a new process's first work can fall
//! in takes that wait on top, and a trial's deadline room for [`PROCESSES_PER_TRIAL`] of them.

use std::time::Duration;

/// The default trial deadline (CONFORMANCE_TRIAL_TIMEOUT unset).
pub const DEFAULT_TRIAL_TIMEOUT: Duration = Duration::from_secs(60);

/// The variable that hands the planned wait down to every child of the suite (`harness::child`
/// sets it from the spawning process's [`Deadline`]), in milliseconds.
pub const FIRST_WAIT_VAR: &str = "CONFORMANCE_FIRST_WAIT_MS";

/// How many new processes' waits a trial's deadline makes room for: its worker's, when the trial is
/// the worker's first, and one child's it starts (an importer, its own process). A later child of
/// the same trial waits within the deadline's own share (the waits for a child's messages take the
/// wait on top each).
pub const PROCESSES_PER_TRIAL: u32 = 2;

/// When a running trial counts as stuck (spare workers start then; nothing fails).
pub fn stuck(deadline: Duration) -> Duration {
    (deadline / 6).max(Duration::from_secs(2))
}

/// A run's deadline: the user's trial deadline (CONFORMANCE_TRIAL_TIMEOUT; an unusable value was
/// refused before any trial ran) and the wait the library under test makes each new process of the
/// run take at its first GPU work, where the run plans with it (`harness::first_work`: the probe's
/// measure, past a sixtieth of the deadline; zero where it does not). A value, made from the
/// process's settings (`harness::settings::Settings::deadline`) and handed to every reader: each
/// process of the run derives the same waits, since the coordinator hands its plan to every child
/// ([`FIRST_WAIT_VAR`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    timeout: Duration,
    first_wait: Duration,
}

impl Deadline {
    /// The deadline of a run whose user gave `timeout` and whose library holds each new process for
    /// `first_wait` (zero: none).
    pub const fn new(timeout: Duration, first_wait: Duration) -> Deadline {
        Deadline { timeout, first_wait }
    }

    /// The user's trial deadline, without the library's wait.
    pub fn timeout(self) -> Duration {
        self.timeout
    }

    /// What the library under test makes each new process of this run wait at its first GPU work
    /// (zero where the run does not plan with a wait).
    pub fn first_wait(self) -> Duration {
        self.first_wait
    }

    /// The trial deadline of this run: the user's, and room for [`PROCESSES_PER_TRIAL`] new processes'
    /// waits where the library holds each ([`Deadline::first_wait`]).
    pub fn trial(self) -> Duration {
        self.timeout + self.first_wait * PROCESSES_PER_TRIAL
    }

    /// A crash case's bound (a third of [`Deadline::trial`]): it should die at once, and a hang must
    /// not cost a full deadline; and the library's wait, should its process be a new one.
    pub fn crash(self) -> Duration {
        self.trial() / 3 + self.first_wait
    }

    /// How long an exporter waits for an importer's next message: half the deadline, so that an
    /// importer that hangs fails its trial with its breadcrumb before the worker's deadline (and the
    /// library's wait, which the importer's first GPU work may meet at any step).
    pub fn importer_step(self) -> Duration {
        (self.timeout / 2).max(Duration::from_secs(5)) + self.first_wait
    }

    /// How long an exporter waits for an importer's first message, its start-up included: three
    /// quarters of the deadline (under compute-sanitizer on the H100, 2026-11-25, importers started
    /// beside a dozen other processes took 56-161 s and more: half of a 300 s deadline failed eight
    /// trials whose importers were only slow to start). Later waits take what is left (`importer_step`).
    pub fn importer_start(self) -> Duration {
        (self.timeout / 4 * 3).max(Duration::from_secs(5)) + self.first_wait
    }

    /// How long a child that answers many trials' steps in one process (`cases::vaspace`) may take for
    /// each message, its start-up and first step included: most of the trial deadline (under
    /// compute-sanitizer on the H100 the start and the first default-pool query took over half of a
    /// 300 s deadline beside the run's other processes, and failed all nine trials as a hang).
    pub fn shared_child_step(self) -> Duration {
        (self.timeout / 4 * 3).max(Duration::from_secs(5)) + self.first_wait
    }

    /// How long the harness's fault trials wait for an importer told to hang, once it has started:
    /// a sixtieth of the deadline, or twice this run's measured start-up of a process (the probe's),
    /// whichever is longer, so that a slow layer's importer still reaches the step it hangs at; and the
    /// library's wait at its first GPU work.
    pub fn hung_step(self, startup_secs: f64) -> Duration {
        (self.timeout / 60).max(Duration::from_secs_f64(startup_secs.max(0.0) * 2.0)) + self.first_wait
    }

    /// How long a call with a declared hang may take before it is given up (`harness::bounded`): a
    /// twentieth of the deadline, 3 s at the default, so that a trial that meets the hang still ends
    /// within a tenth of the deadline. Where such a call answers, it answers at once (R580 refused
    /// maxSize SIZE_MAX in under a millisecond on every host that answered). And the library's wait,
    /// should the call be its process's first GPU work.
    pub fn driver_hang(self) -> Duration {
        self.timeout / 20 + self.first_wait
    }

    /// How long a watched call with an argument beyond the device's memory may take before it is
    /// given up: a quarter of the deadline. The driver's out-of-memory path is slow but answers (an
    /// allocation of the device's memory + 1 took over 0.5 s on an H200 beside the mutation runner's
    /// processes, 2026-11-26; up to 9 s on the H100 beside a dozen processes creating contexts). And the
    /// library's wait, should the call be its process's first GPU work.
    pub fn beyond_device(self) -> Duration {
        self.timeout / 4 + self.first_wait
    }

    /// How long a short-lived child (the before-cuInit answers, a probe of cuInit) may take, the
    /// library's wait at its first call included.
    pub fn child_answer(self) -> Duration {
        self.timeout / 6 + self.first_wait
    }

    /// How long a worker may take to start and greet.
    pub fn worker_start(self) -> Duration {
        self.timeout + self.first_wait
    }

    /// How long a finished child may take to exit before it is killed.
    pub fn reap(self) -> Duration {
        self.timeout / 12
    }

    /// The longest a stream may be held at a host-function gate, or a watchdog may wait to open one
    /// (the gate's host function may be its process's first launch: the library's wait on top).
    pub fn gate(self) -> Duration {
        self.timeout / 2 + self.first_wait
    }

    /// How long a gate holds its stream before opening by itself (`check::Gate`): a sixth of
    /// [`Deadline::gate`], far more than a trial's calls take while they hold a stream (the real
    /// driver returns at once).
    pub fn gate_limit(self) -> Duration {
        self.gate() / 6
    }

    /// How long an exclusive trial waits, once done, for the device's free memory to come back to
    /// what it was before it (processes it ended give their memory back some time after they exit).
    pub fn settle(self) -> Duration {
        self.timeout / 6
    }

    /// In-process mode: how long `suite::no_leaks` waits for `jobs` other trials.
    pub fn all_trials(self, jobs: usize) -> Duration {
        self.trial() * (jobs as u32).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_scale_with_the_deadline() {
        let long = Deadline::new(Duration::from_secs(600), Duration::ZERO);
        assert_eq!(long.crash(), Duration::from_secs(200));
        let default = Deadline::new(DEFAULT_TRIAL_TIMEOUT, Duration::ZERO);
        assert_eq!(default.crash(), Duration::from_secs(20));
        assert_eq!(stuck(long.trial()), Duration::from_secs(100));
        assert_eq!(default.gate_limit(), Duration::from_secs(5));
    }

    /// No wait planned: every wait is the deadline's share alone.
    #[test]
    fn without_a_planned_wait_the_waits_are_the_deadlines_shares() {
        let d = Deadline::new(DEFAULT_TRIAL_TIMEOUT, Duration::ZERO);
        assert_eq!(d.trial(), d.timeout());
        assert_eq!(d.child_answer(), d.timeout() / 6);
        assert_eq!(d.hung_step(0.0), d.timeout() / 60);
    }

    /// A planned wait: the trial makes room for two processes' waits, and each derived wait that a
    /// new process's first work can fall in takes it once.
    #[test]
    fn a_planned_wait_is_added_where_a_new_process_can_meet_it() {
        let wait = Duration::from_secs(28);
        let d = Deadline::new(DEFAULT_TRIAL_TIMEOUT, wait);
        assert_eq!(d.trial(), DEFAULT_TRIAL_TIMEOUT + wait * PROCESSES_PER_TRIAL);
        assert_eq!(d.child_answer(), DEFAULT_TRIAL_TIMEOUT / 6 + wait);
        assert_eq!(
            d.reap(),
            DEFAULT_TRIAL_TIMEOUT / 12,
            "a finished child's exit waits for no first work"
        );
    }
}
