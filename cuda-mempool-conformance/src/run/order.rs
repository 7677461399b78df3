//! What runs when: the general queue's order, how many general workers a run gets, and whether
//! its processes start slowly (the scheduler then starts fewer of them at once).

use crate::harness::case::Case;
use crate::run::turns::Budget;
use std::sync::Arc;
use std::time::Duration;

/// Where a trial goes in the general queue, earliest first ([`run_first`]).
pub(crate) type Rank = (bool, bool, bool, bool);

/// The general queue's order: heavy trials first (`Need::heavy`: at the start they wait for no long
/// trial to end and leave no tail), then the long-running ones, then the suite's order, the trials
/// of a quarter of the device or more last.
pub(super) fn run_first(c: &Case, budget: &Budget) -> Rank {
    let need = c.memory_need();
    // Among the heavy ones, the requests beyond the device first: they run side by side, and a
    // trial that waits for the device alone would hold back those asked for after it.
    (
        !need.heavy(),
        need == crate::harness::case::Need::Device,
        big(c, budget),
        !c.slow,
    )
}

/// It asks for a quarter of the device or more: queued last, in the general queue and in a lane,
/// where it waits only for the run's tail to leave it room (issue 36, H100: mid-run a 6/8 share
/// stalled the queue a second, and right after the heavy trials 1.8 s, beside the lanes' first
/// children; issue 45, H200: beside the load trials a 5/8 share took 1.3 s against 0.45 s).
fn big(c: &Case, budget: &Budget) -> bool {
    budget.bytes(c.memory_need()) >= budget.total / 4
}

/// A lane's order: its big trials ([`big`]) last, the suite's order kept among the rest (a stable
/// sort): its first trials run beside the run's busiest start (issue 45).
pub(super) fn lane_order(lane: &mut [Arc<Case>], budget: &Budget) {
    lane.sort_by_key(|c| big(c, budget));
}

/// How many of the general queue's trials are heavy (`Need::heavy`).
pub(super) fn general_heavy(general: &[Arc<Case>]) -> usize {
    general.iter().filter(|c| c.memory_need().heavy()).count()
}

/// Whether this run's processes start slowly: the probe's start-up over a sixtieth of the
/// deadline (under compute-sanitizer with four test threads 9-26 s against 5 s; on the bare H100
/// 0.23 s against 1 s). Then the lanes start their processes when their first trial comes, with no
/// children ahead, and take no general trials; spare workers start later; the trials a lane only
/// paces (`Case::paced`) run in the general queue, side by side. Under memcheck each process alive
/// adds about 5 s to every other's start: every process started ahead made the others later
/// (issue 36: seven lane workers and seven children started at once left every importer past its
/// wait; started at the run's start, the ipc lane's were up after 350 s).
pub fn slow_starts(startup_secs: f64, deadline: Duration) -> bool {
    startup_secs > deadline.as_secs_f64() / 60.0
}

/// How many general workers a run of `general` trials gets: one per 16 trials, `parallel` at most.
/// A short run (a mutant's, a rerun's) then creates one or two contexts, not `parallel` (the driver
/// creates contexts one at a time, and the run waits for them).
pub fn workers_for(general: usize, parallel: usize) -> usize {
    general.div_ceil(TRIALS_PER_WORKER).min(parallel.max(1))
}
const TRIALS_PER_WORKER: usize = 16;

/// The general workers of a run on a capped device (issue 47): a layer that counts every process on
/// the GPU counts each worker's context against the cap it is judged by, so a capped run keeps
/// `parallel` but [`CAPPED_WORKERS`] at most (the lanes and kept importers are the cases' own).
pub fn capped_parallel(parallel: usize) -> usize {
    parallel.min(CAPPED_WORKERS)
}
/// The most general workers a capped run starts.
pub const CAPPED_WORKERS: usize = 2;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::case::Group;
    use crate::run::turns::Turns;

    fn fake(name: &str, f: fn(Case) -> Case) -> Arc<Case> {
        Arc::new(f(Case::of(Group::Harness, name, &[crate::harness::Cap::Gpu], |_| {
            Ok(())
        })))
    }

    /// One general worker per 16 trials, `parallel` at most, none for no trial.
    #[test]
    fn a_short_run_gets_few_workers() {
        assert_eq!(workers_for(0, 4), 0);
        assert_eq!(workers_for(5, 4), 1);
        assert_eq!(workers_for(17, 4), 2);
        assert_eq!(workers_for(360, 4), 4);
        assert_eq!(workers_for(360, 0), 1);
    }

    /// A capped device: two general workers at most.
    #[test]
    fn a_capped_run_gets_two_workers_at_most() {
        assert_eq!(capped_parallel(4), 2);
        assert_eq!(capped_parallel(1), 1);
        assert_eq!(workers_for(360, capped_parallel(4)), 2);
    }

    /// Requests beyond the device before the trials that need it alone, the trials of a quarter of
    /// the device or more after every other.
    #[test]
    fn heavy_first_beyond_before_device_big_last() {
        let budget = Budget::of_device(80 << 30);
        let mut v = [
            fake("big", |c| c.memory_share(5, 8)),
            fake("plain", |c| c),
            fake("device", |c| c.exclusive()),
            fake("beyond", |c| c.beyond_device()),
        ];
        v.sort_by_key(|c| run_first(c, &budget));
        let names: Vec<_> = v.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["beyond", "device", "plain", "big"]);
    }

    /// In a lane the trials of a quarter of the device or more go last, the others keep their order.
    #[test]
    fn a_lanes_big_trials_go_last() {
        let budget = Budget::of_device(140 << 30);
        let mut v = [
            fake("big", |c| c.memory_share(5, 8)),
            fake("first", |c| c.memory_bytes(4 << 30)),
            fake("bigger", |c| c.memory_share(6, 8)),
            fake("second", |c| c),
        ];
        lane_order(&mut v, &budget);
        let names: Vec<_> = v.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["first", "second", "big", "bigger"]);
    }

    #[test]
    fn exclusive_trials_are_queued_first_then_slow_ones() {
        let mut v = [
            fake("plain", |c| c),
            fake("slow", |mut c| {
                c.slow = true;
                c
            }),
            fake("exclusive", |c| c.exclusive()),
        ];
        v.sort_by_key(|c| run_first(c, &Turns::unbounded()));
        let names: Vec<_> = v.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["exclusive", "slow", "plain"]);
    }

    /// Slow starts: the probe's start-up over a sixtieth of the deadline (the sanitizer's 9 s of
    /// 300, not the bare device's 0.23 s of 60).
    #[test]
    fn slow_starts_are_a_sixtieth_of_the_deadline() {
        assert!(slow_starts(9.3, Duration::from_secs(300)));
        assert!(!slow_starts(0.23, Duration::from_secs(60)));
        assert!(!slow_starts(4.9, Duration::from_secs(300)));
        assert!(slow_starts(1.1, Duration::from_secs(60)));
    }
}
