//! Gates the scheduler's dispatchers wait at: a count of trials not yet done ([`Pending`]), and
//! the trials that lead a fail-fast run ([`Lead`]).

use crate::harness::case::Case;
use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex};

/// A queue of trials, shared by the dispatchers that take from it.
pub(super) type Queue = Arc<Mutex<VecDeque<Arc<Case>>>>;

/// The trials that lead a fail-fast run (`Stop::leads`), and how many of them are not done.
pub(super) struct Lead {
    names: HashSet<String>,
    left: Pending,
}
impl Lead {
    pub(super) fn new(names: HashSet<String>) -> Lead {
        Lead {
            left: Pending::new(names.len()),
            names,
        }
    }
    /// A trial that does not lead waits until the leading ones are done, or `stopped`, unless its
    /// own queue still holds one (a lane keeps its order; a queue's leading trials come first).
    pub(super) fn wait(&self, case: &Case, queue: &Queue, stopped: &dyn Fn() -> bool) {
        if self.names.is_empty() || self.names.contains(&case.trial_name()) || self.held_by(queue) {
            return;
        }
        self.left.wait(0, stopped);
    }
    /// Whether `queue` still holds a leading trial (its trials ahead of it must not wait for
    /// others that wait for the lead).
    pub(super) fn held_by(&self, queue: &Queue) -> bool {
        let q = queue.lock().unwrap();
        q.iter().any(|c| self.names.contains(&c.trial_name()))
    }
    /// Whether no trial leads this run.
    pub(super) fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
    /// `case` is done (run, or recorded not run).
    pub(super) fn done(&self, case: &Case) {
        if self.names.contains(&case.trial_name()) {
            self.left.done_one();
        }
    }
}

/// A count of trials not yet done, and a wait for it to fall.
pub(super) struct Pending {
    left: Mutex<usize>,
    fell: Condvar,
}
impl Pending {
    pub(super) fn new(n: usize) -> Pending {
        Pending {
            left: Mutex::new(n),
            fell: Condvar::new(),
        }
    }
    pub(super) fn done_one(&self) {
        let mut left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        *left = left.saturating_sub(1);
        self.fell.notify_all();
    }
    /// Wait until at most `own` are left, or `stopped` (checked whenever the count falls).
    pub(super) fn wait(&self, own: usize, stopped: &dyn Fn() -> bool) {
        let mut left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        while *left > own && !stopped() {
            left = self.fell.wait(left).unwrap_or_else(|p| p.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::case::Group;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    fn fake(name: &str) -> Arc<Case> {
        Arc::new(Case::of(Group::Harness, name, &[crate::harness::Cap::Gpu], |_| Ok(())))
    }

    /// The wait of a fail-fast exclusive trial ends when the others are done (but for its own
    /// lane's), or when the run stops, not before.
    #[test]
    fn an_exclusive_trial_waits_for_the_cheap_ones_or_the_stop() {
        for (own, stop_early) in [(0, false), (1, false), (0, true)] {
            let pending = Arc::new(Pending::new(3));
            let stopped = Arc::new(AtomicBool::new(false));
            let done = Arc::new(AtomicBool::new(false));
            let t = {
                let (p, s, d) = (pending.clone(), stopped.clone(), done.clone());
                std::thread::spawn(move || {
                    p.wait(own, &|| s.load(Ordering::SeqCst));
                    d.store(true, Ordering::SeqCst);
                })
            };
            pending.done_one();
            std::thread::sleep(Duration::from_millis(30));
            assert!(!done.load(Ordering::SeqCst), "own {own}: went with 2 left");
            if stop_early {
                stopped.store(true, Ordering::SeqCst);
            }
            pending.done_one();
            std::thread::sleep(Duration::from_millis(30));
            assert_eq!(
                done.load(Ordering::SeqCst),
                own == 1 || stop_early,
                "own {own}, stop {stop_early}"
            );
            pending.done_one();
            t.join().unwrap();
            assert!(done.load(Ordering::SeqCst));
        }
    }

    /// A trial that does not lead waits for the leading ones (not when its queue still holds one,
    /// nor once the run stopped); a leading one never waits.
    #[test]
    fn the_rest_wait_for_the_lead() {
        let (lead, rest) = (fake("lead"), fake("rest"));
        let gate = Arc::new(Lead::new([lead.trial_name()].into_iter().collect()));
        let other: Queue = Arc::new(Mutex::new(VecDeque::new()));
        let holding: Queue = Arc::new(Mutex::new(VecDeque::from([lead.clone()])));
        assert!(gate.held_by(&holding) && !gate.held_by(&other));
        gate.wait(&lead, &other, &|| false);
        gate.wait(&rest, &holding, &|| false);
        gate.wait(&rest, &other, &|| true);
        let done = Arc::new(AtomicBool::new(false));
        let t = {
            let (gate, rest, other, done) = (gate.clone(), rest.clone(), other.clone(), done.clone());
            std::thread::spawn(move || {
                gate.wait(&rest, &other, &|| false);
                done.store(true, Ordering::SeqCst);
            })
        };
        std::thread::sleep(Duration::from_millis(30));
        assert!(!done.load(Ordering::SeqCst), "went before the lead was done");
        gate.done(&rest);
        std::thread::sleep(Duration::from_millis(30));
        assert!(
            !done.load(Ordering::SeqCst),
            "a trial that does not lead opened the gate"
        );
        gate.done(&lead);
        t.join().unwrap();
        assert!(done.load(Ordering::SeqCst));
    }
}
