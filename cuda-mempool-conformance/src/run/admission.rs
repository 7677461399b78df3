//! Admission: every wait a dispatcher makes before its trial runs, decided in one place. The
//! memory and device turns (`Turns`: side by side while the needs fit the budget, the heavy
//! trials first, none while lanes start their processes) and the fail-fast gates (`Lead`, the
//! trials that lead a run stopping at its first failure; `Pending`, the cheap trials an exclusive
//! one waits for) are its parts; the scheduler asks it which case comes next, whether a case may
//! start, and tells it what is done. Which order the queue holds is `order.rs`'s.

use crate::harness::case::Case;
use crate::harness::placement::Need;
use crate::run::gates::{Lead, Pending, Queue};
use crate::run::stop::Stop;
use crate::run::turns::Turns;
use std::collections::HashSet;
use std::sync::Arc;

pub(super) struct Admission {
    turns: Turns,
    stop: Arc<Stop>,
    /// Trials not heavy and not yet done (fail-fast: the heavy ones wait for none left).
    cheap: Pending,
    /// The trials that lead a fail-fast run.
    lead: Lead,
}

impl Admission {
    /// `cheap` trials not heavy, `lead` the trials leading a fail-fast run.
    pub(super) fn new(turns: Turns, stop: Arc<Stop>, cheap: usize, lead: HashSet<String>) -> Admission {
        Admission {
            turns,
            stop,
            cheap: Pending::new(cheap),
            lead: Lead::new(lead),
        }
    }

    /// The turns trials take (`on_turn` takes one for each trial).
    pub(super) fn turns(&self) -> &Turns {
        &self.turns
    }

    /// Whether no trial leads this run.
    pub(super) fn no_lead(&self) -> bool {
        self.lead.is_empty()
    }

    /// The `heavy` trials of the general queue go first: no memory turn before them.
    pub(super) fn heavy_first(&self, heavy: usize) {
        self.turns.heavy_first(heavy);
    }

    /// `n` lanes start their processes before any heavy turn ([`Admission::lane_started`] each).
    pub(super) fn lanes_starting(&self, n: usize) {
        self.turns.lanes_starting(n);
    }

    /// One of the lanes starting has its processes up (or gave up).
    pub(super) fn lane_started(&self) {
        self.turns.lane_started();
    }

    /// Wait until the heavy trials queued first are done (or the run stopped): a lane's processes
    /// start after them.
    pub(super) fn wait_heavy_first(&self) {
        self.turns.wait_heavy_first(&|| self.stop.stopped());
    }

    /// Whether a heavy turn is held or waited for: no spare worker starts meanwhile.
    pub(super) fn exclusive_now(&self) -> bool {
        self.turns.exclusive_now()
    }

    /// The next case of `queue` for a dispatcher: the first, unless it would wait for a heavy turn
    /// held or waited for by another (the device alone, or a request beyond it) while a case that
    /// needs no device memory is queued: that one runs meanwhile (the heavy phase at the start of a
    /// run then overlaps the trials that need no device, instead of holding every general worker
    /// idle). A lane keeps its order (its trials may start from what the earlier ones left).
    pub(super) fn next_case(&self, queue: &Queue, general: bool) -> Option<Arc<Case>> {
        let mut q = queue.lock().unwrap();
        let front = q.front()?;
        if general && self.turns.exclusive_now() && self.turns.would_wait(front.memory_need()) {
            if let Some(i) = q.iter().position(|c| c.memory_need() == Need::Nothing) {
                return q.remove(i);
            }
        }
        q.pop_front()
    }

    /// The fail-fast gates before `case` of `queue` starts: a heavy trial of a run that takes its
    /// cheap trials first waits until they are done (but for those queued behind it in `queue`,
    /// unless `queue` holds a leading trial: the cheap trials elsewhere wait for that lead, which
    /// waits behind this one); a trial that does not lead waits for the leading ones.
    pub(super) fn gates(&self, case: &Case, queue: &Queue) {
        if self.stop.cheap_first() && case.memory_need().heavy() && !self.lead.held_by(queue) {
            let own = queue
                .lock()
                .unwrap()
                .iter()
                .filter(|c| !c.memory_need().heavy())
                .count();
            self.cheap.wait(own, &|| self.stop.stopped());
        }
        self.lead.wait(case, queue, &|| self.stop.stopped());
    }

    /// `case` is done, run or recorded not run; a heavy one of the general queue (`general`) counts
    /// for the heavy-first gate whatever became of it, so that no memory turn waits for it forever.
    pub(super) fn done(&self, case: &Case, general: bool) {
        if !case.memory_need().heavy() {
            self.cheap.done_one();
        } else if general && !self.stop.cheap_first() {
            self.turns.heavy_done();
        }
        self.lead.done(case);
    }
}
