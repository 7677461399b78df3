//! How many children the general workers start ahead (`harness::ahead`), and which worker is asked
//! for the next: the coordinator's side of `ToWorker::Run`'s `ahead`.

use crate::harness::case::Case;
use crate::run::gates::Queue;
use crate::run::worker::Worker;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The children started ahead for the general queue that no trial has taken yet, over all workers.
pub(super) struct Aheads {
    /// Whether this run starts any (`Scheduler::start` says when not).
    on: bool,
    waiting: AtomicUsize,
}

impl Aheads {
    pub(super) fn new(on: bool) -> Aheads {
        Aheads {
            on,
            waiting: AtomicUsize::new(0),
        }
    }

    /// Whether `w`, about to run `case` from the general `queue`, should start a child ahead after
    /// it: the queue's trials that would take one (`Placement::takes_ahead`) outnumber the children
    /// waiting, and `w` will have none once `case` has run (a case that takes one takes `w`'s:
    /// counted off here).
    pub(super) fn ask(&self, w: &mut Worker, case: &Case, queue: &Queue) -> bool {
        if w.ahead && case.placement.takes_ahead(case.crash.is_some()) {
            w.ahead = false;
            self.waiting.fetch_sub(1, Ordering::Relaxed);
        }
        if !self.on || w.ahead {
            return false;
        }
        let left = queue
            .lock()
            .unwrap()
            .iter()
            .filter(|c| c.placement.takes_ahead(c.crash.is_some()))
            .count();
        if left <= self.waiting.load(Ordering::Relaxed) {
            return false;
        }
        w.ahead = true;
        self.waiting.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// `w` is gone (dropped: it died, hung or retired), and its child started ahead with it.
    pub(super) fn gone(&self, w: &Worker) {
        if w.ahead {
            self.waiting.fetch_sub(1, Ordering::Relaxed);
        }
    }
}
