//! CONFORMANCE_FAIL_FAST=1: the run stops at its first failure. Trials running then finish; every
//! trial not yet started is recorded ignored (`stopped`), naming the failure; the leak check still
//! runs. The mutation runner (tests/mutants.rs) uses it: a mutant's verdict needs one kill. In that
//! mode the queues also run cheap trials first: CONFORMANCE_TRIALS_FILE's order, the `exclusive`
//! ones (the device alone) last (`run::order::queues`). A run under CONFORMANCE_RUN_BUDGET takes the
//! same order (the widest coverage a short budget can give), and a run cut short (`run::interrupt`)
//! stops the same way, its trials not yet started recorded `interrupted`.
//!
//! CONFORMANCE_FAIL_FAST_LEAD=N (fail-fast only): the file's first N trials (the likely failures:
//! the mutation runner names the trials that killed the mutant before) run before any other starts,
//! and no worker of a queue without one of them starts meanwhile. A run that fails among them ends
//! without starting the rest (a mutant's run: one worker's start-up and its killer, not the whole
//! suite's start-up beside it); one that does not goes on as before. The order decides only which
//! trials a fail-fast run gets to, never a verdict.
//!
//! Under a run budget where the library holds each new process at its first GPU work (issue 58,
//! `run::first_wait`): once the budget left is shorter than a trial's deadline, no trial starts
//! (`Stop::with_room`); each is recorded `interrupted`, saying so and naming the wait, rather than
//! cut short when the budget runs out. The run then exits as one whose budget ran out.

use crate::harness::case::Case;
use crate::harness::outcome::{Kind, Outcome, Record};
use crate::harness::verdict::of_case;
use crate::run::clock::since_start;
use crate::run::interrupt;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::harness::settings::FAIL_FAST_VAR;

/// Whether the run stops at its first failure, and which failure stopped it.
#[derive(Default)]
pub struct Stop {
    on: bool,
    /// Cheap trials first (fail-fast, or a run budget).
    cheap_first: bool,
    /// Fail-fast: how many of the ranked trials lead (run before any other starts).
    lead: usize,
    by: Mutex<Option<String>>,
    /// Under a run budget: the room a trial needs before the budget ends ([`Stop::with_room`]).
    room: Option<Room>,
    /// Whether a trial was held back for want of room.
    held: AtomicBool,
}

/// The room a trial needs before the run budget ends: no trial starts later than `deadline` before
/// it; `why` is the record of each held back.
struct Room {
    budget: Duration,
    deadline: Duration,
    why: String,
}

impl Stop {
    pub fn new(on: bool) -> Stop {
        Stop {
            on,
            cheap_first: on,
            lead: 0,
            by: Mutex::new(None),
            room: None,
            held: AtomicBool::new(false),
        }
    }
    /// Fail-fast: the first `n` ranked trials lead (ignored when the run does not stop at a failure).
    pub fn with_lead(self, n: usize) -> Stop {
        Stop {
            lead: if self.on { n } else { 0 },
            ..self
        }
    }
    /// Whether `c` leads: ranked among the first `lead` and not heavy (heavy trials wait for the
    /// cheap ones in a fail-fast run, so one could not lead).
    pub fn leads(&self, c: &Case, rank: &BTreeMap<String, usize>) -> bool {
        !c.memory_need().heavy() && rank.get(&c.trial_name()).is_some_and(|&r| r < self.lead)
    }
    /// Under a run budget (CONFORMANCE_RUN_BUDGET) cheap trials run first, as in fail-fast mode.
    pub fn under_budget(self, budget: bool) -> Stop {
        Stop {
            cheap_first: self.on || budget,
            ..self
        }
    }
    /// Under `budget` (if any), no trial starts once less than `deadline` is left of it: each is
    /// recorded interrupted with `why` (issue 58: where each new process waits at its first GPU work,
    /// a trial started late would be cut short by the budget for its waits).
    pub fn with_room(self, budget: Option<Duration>, deadline: Duration, why: String) -> Stop {
        Stop {
            room: budget.map(|budget| Room { budget, deadline, why }),
            ..self
        }
    }
    /// Whether a trial was held back for want of room before the budget ends ([`Stop::with_room`]).
    pub fn held_back(&self) -> bool {
        self.held.load(Ordering::Relaxed)
    }
    /// Whether the run stops at its first failure (CONFORMANCE_FAIL_FAST=1).
    pub fn fail_fast(&self) -> bool {
        self.on
    }
    /// Whether the queues run cheap trials first (fail-fast, or a run budget).
    pub fn cheap_first(&self) -> bool {
        self.cheap_first
    }
    /// Whether a failure (fail-fast) or an interrupt has stopped the run.
    pub fn stopped(&self) -> bool {
        interrupt::cut().is_some() || self.by.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }
    /// Note a judged record: the first failure stops the run.
    pub fn note(&self, r: &Record) {
        if self.on && r.outcome == Outcome::Failed {
            self.by
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert_with(|| r.trial.clone());
        }
    }
    /// The record of `case` when the run has stopped (it is then not run), else None.
    pub fn skipped(&self, case: &Case) -> Option<Record> {
        if let Some(r) = self.interrupted(case) {
            return Some(r);
        }
        if let Some(room) = self
            .room
            .as_ref()
            .filter(|r| since_start() + r.deadline.as_secs_f64() > r.budget.as_secs_f64())
        {
            self.held.store(true, Ordering::Relaxed);
            return Some(of_case(case, Outcome::Interrupted, Kind::Interrupted, room.why.clone()));
        }
        let by = self.by.lock().unwrap_or_else(|p| p.into_inner()).clone()?;
        Some(of_case(
            case,
            Outcome::Ignored,
            Kind::Stopped,
            format!("not run: {FAIL_FAST_VAR}=1 and `{by}` failed first"),
        ))
    }
    /// The record of `case` when the run was cut short (`run::interrupt`): not run, or cut short
    /// while it ran (its process killed), else None.
    pub fn interrupted(&self, case: &Case) -> Option<Record> {
        let cut = interrupt::cut()?;
        Some(of_case(case, Outcome::Interrupted, Kind::Interrupted, cut.text()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::case::Group;

    fn case(name: &str) -> Case {
        Case::of(Group::Harness, name, &[], |_| Ok(()))
    }

    /// Off, nothing stops; on, the first failure stops the run and is the one named, and passes
    /// and ignores never stop it.
    #[test]
    fn the_first_failure_stops_a_fail_fast_run() {
        let fail = |t: &str| Record::new(t, Group::Harness, Outcome::Failed, Kind::Check, "x".into());
        let pass = Record::new("p", Group::Harness, Outcome::Passed, Kind::Plain, String::new());
        let off = Stop::new(false);
        off.note(&fail("a"));
        assert!(off.skipped(&case("later")).is_none());
        let on = Stop::new(true);
        on.note(&pass);
        assert!(on.skipped(&case("later")).is_none());
        on.note(&fail("a"));
        on.note(&fail("b"));
        let r = on.skipped(&case("later")).expect("stopped");
        assert_eq!((r.outcome, r.kind()), (Outcome::Ignored, Kind::Stopped));
        assert!(r.message.contains("`a` failed first"), "{}", r.message);
        // A run budget runs cheap trials first, and stops at no failure.
        let budget = Stop::new(false).under_budget(true);
        budget.note(&fail("a"));
        assert!(!budget.stopped() && budget.cheap_first() && !budget.fail_fast());
    }

    /// With room to keep, a trial starts while the budget left holds its deadline, and is held back
    /// after, recorded interrupted with the reason; without a budget nothing is held back.
    #[test]
    fn no_trial_starts_without_room_before_the_budget() {
        let room = |budget: u64| {
            Stop::new(false).with_room(
                Some(Duration::from_secs(budget)),
                Duration::from_secs(100),
                "not run: no room".into(),
            )
        };
        // The run has just started: 10,000 s leave room, 50 s do not.
        let roomy = room(10_000);
        assert!(roomy.skipped(&case("a")).is_none() && !roomy.held_back());
        let tight = room(50);
        let r = tight.skipped(&case("a")).expect("held back");
        assert_eq!(
            (r.outcome, r.kind(), r.message.as_str()),
            (Outcome::Interrupted, Kind::Interrupted, "not run: no room")
        );
        assert!(tight.held_back());
        let none = Stop::new(false).with_room(None, Duration::from_secs(100), String::new());
        assert!(none.skipped(&case("a")).is_none());
    }

    /// Only the first N ranked trials lead, never a heavy one, and only in a fail-fast run.
    #[test]
    fn the_first_ranked_trials_lead_a_fail_fast_run() {
        let rank: BTreeMap<String, usize> = [("a", 0), ("big", 1), ("b", 2), ("c", 3)]
            .iter()
            .map(|(n, r)| (case(n).trial_name(), *r))
            .collect();
        let on = Stop::new(true).with_lead(3);
        let leads: Vec<bool> = [
            case("a"),
            case("big").exclusive(),
            case("b"),
            case("c"),
            case("unranked"),
        ]
        .iter()
        .map(|c| on.leads(c, &rank))
        .collect();
        assert_eq!(leads, [true, false, true, false, false]);
        assert!(!Stop::new(false).with_lead(3).leads(&case("a"), &rank));
    }
}
