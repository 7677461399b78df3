//! What runs when: the run's queues and their order (one function, `queues`), how many general
//! workers a run gets, and whether its processes start slowly (the scheduler then starts fewer of
//! them at once).

use crate::harness::case::Case;
use crate::harness::placement::{Need, SERIAL};
use crate::run::stop::Stop;
use crate::run::turns::Budget;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

/// What a run's order depends on besides its trials' placements.
pub(super) struct Run<'a> {
    /// The memory budget of the run's turns (what counts as big: [`big`]).
    pub budget: Budget,
    /// Processes start slowly ([`slow_starts`]): the trials a lane only paces run in the general
    /// queue.
    pub slow_starts: bool,
    /// Whether the queues run cheap trials first (fail-fast, a run budget), and whether the run
    /// stops at its first failure.
    pub stop: &'a Stop,
    /// CONFORMANCE_TRIALS_FILE's order: each named trial's line.
    pub rank: &'a BTreeMap<String, usize>,
}

/// A run's queues, each in the order its trials start: the general queue, and each lane's.
#[derive(Default)]
pub(super) struct Queues {
    pub general: Vec<Arc<Case>>,
    pub lanes: BTreeMap<&'static str, VecDeque<Arc<Case>>>,
}

/// The run's queues and their order, decided here alone: each trial goes to the queue its placement
/// names (`Placement::lane_in_run`), and each queue is sorted by [`key`], a stable sort that keeps
/// the suite's order among equals.
pub(super) fn queues(jobs: impl IntoIterator<Item = Arc<Case>>, run: &Run) -> Queues {
    let mut q = Queues::default();
    for c in jobs {
        match c.placement.lane_in_run(run.slow_starts) {
            Some(l) => q.lanes.entry(l).or_default().push_back(c),
            None => q.general.push(c),
        }
    }
    q.general.sort_by_key(|c| key(c, None, run));
    for (lane, cases) in q.lanes.iter_mut() {
        cases.make_contiguous().sort_by_key(|c| key(c, Some(lane), run));
    }
    q
}

/// Where a trial goes in its queue, earliest first: compared field by field, `false` before `true`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    /// Cheap first: the heavy trials last (`Need::heavy`).
    heavy: bool,
    /// Cheap first: CONFORMANCE_TRIALS_FILE's order, unranked trials after the ranked ones.
    rank: usize,
    /// Cheap first, under a run budget alone: the long-running ones first among equals (they
    /// decide when the run ends: under compute-sanitizer the IPC fault trials, 80-180 s each, began
    /// after 120 s of short ones); fail-fast keeps the suite's order (its first failure comes sooner).
    short_under_budget: bool,
    /// The general queue: the heavy trials first (at the start they wait for no long trial to end
    /// and leave no tail).
    light: bool,
    /// The general queue: among the heavy ones, the requests beyond the device first (they run side
    /// by side, and a trial that waits for the device alone would hold back those asked for after
    /// it).
    device_alone: bool,
    /// The general queue and a lane: a quarter of the device or more last ([`big`]).
    big: bool,
    /// The general queue: the long-running ones first (they overlap the many short ones).
    short: bool,
}

/// `c`'s place in the general queue (`lane` None) or in `lane`. Where the queues run cheap trials
/// first (fail-fast, a run budget; but for [`SERIAL`], whose trials change state a later one starts
/// from): the heavy ones last, the rest by rank. Otherwise the general queue: heavy first, beyond
/// the device before the device alone, the big ones last, then the long-running first; a lane: its
/// big trials last, its own order kept among the rest (its first trials run beside the run's
/// busiest start, issue 45).
fn key(c: &Case, lane: Option<&str>, run: &Run) -> Key {
    let need = c.memory_need();
    if run.stop.cheap_first() && lane != Some(SERIAL) {
        return Key {
            heavy: need.heavy(),
            rank: run.rank.get(&c.trial_name()).copied().unwrap_or(usize::MAX),
            short_under_budget: !run.stop.fail_fast() && !c.placement.slow(),
            ..Key::default()
        };
    }
    let big = big(c, &run.budget);
    match lane {
        None => Key {
            light: !need.heavy(),
            device_alone: need == Need::Device,
            big,
            short: !c.placement.slow(),
            ..Key::default()
        },
        Some(_) => Key { big, ..Key::default() },
    }
}

/// It asks for a quarter of the device or more: queued last, in the general queue and in a lane,
/// where it waits only for the run's tail to leave it room (issue 36, H100: mid-run a 6/8 share
/// stalled the queue a second, and right after the heavy trials 1.8 s, beside the lanes' first
/// children; issue 45, H200: beside the load trials a 5/8 share took 1.3 s against 0.45 s).
fn big(c: &Case, budget: &Budget) -> bool {
    budget.bytes(c.memory_need()) >= budget.total / 4
}

/// How many of the general queue's trials are heavy (`Need::heavy`).
pub(super) fn general_heavy(general: &[Arc<Case>]) -> usize {
    general.iter().filter(|c| c.memory_need().heavy()).count()
}

/// Whether this run's processes start slowly: the probe's start-up over a sixtieth of the
/// deadline (under compute-sanitizer with four test threads 9-26 s against 5 s; on the bare H100
/// 0.23 s against 1 s). Then the lanes start their processes when their first trial comes, with no
/// children ahead, and take no general trials; spare workers start later; the trials a lane only
/// paces (`placement::Queue::Paced`) run in the general queue, side by side. Under memcheck each process alive
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
    use crate::harness::placement::LARGE;
    use crate::run::turns::Turns;

    fn fake(name: &str, f: fn(Case) -> Case) -> Arc<Case> {
        Arc::new(f(Case::of(Group::Harness, name, &[crate::harness::Cap::Gpu], |_| {
            Ok(())
        })))
    }

    /// The names of `jobs`' queues as [`queues`] orders them: the general queue's, then each lane's
    /// (`lane: a b c`).
    fn order(jobs: &[Arc<Case>], run: &Run) -> (Vec<String>, Vec<String>) {
        let q = queues(jobs.iter().cloned(), run);
        let general = q.general.iter().map(|c| c.name.clone()).collect();
        let lanes = q
            .lanes
            .iter()
            .map(|(l, v)| {
                format!(
                    "{l}: {}",
                    v.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(" ")
                )
            })
            .collect();
        (general, lanes)
    }

    /// A run of the default schedule on `budget`: no rank, cheap trials not first.
    fn plain_run<'a>(budget: Budget, stop: &'a Stop, rank: &'a BTreeMap<String, usize>) -> Run<'a> {
        Run {
            budget,
            slow_starts: false,
            stop,
            rank,
        }
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
        let v = [
            fake("big", |c| c.memory_share(5, 8)),
            fake("plain", |c| c),
            fake("device", |c| c.exclusive()),
            fake("beyond", |c| c.beyond_device()),
        ];
        let (stop, rank) = (Stop::default(), BTreeMap::new());
        let (general, _) = order(&v, &plain_run(Budget::of_device(80 << 30), &stop, &rank));
        assert_eq!(general, ["beyond", "device", "plain", "big"]);
    }

    /// In a lane the trials of a quarter of the device or more go last, the others keep their order.
    #[test]
    fn a_lanes_big_trials_go_last() {
        let v = [
            fake("big", |c| c.memory_share(5, 8).lane("x")),
            fake("first", |c| c.memory_bytes(4 << 30).lane("x")),
            fake("bigger", |c| c.memory_share(6, 8).lane("x")),
            fake("second", |c| c.lane("x")),
        ];
        let (stop, rank) = (Stop::default(), BTreeMap::new());
        let (general, lanes) = order(&v, &plain_run(Budget::of_device(140 << 30), &stop, &rank));
        assert!(general.is_empty());
        assert_eq!(lanes, ["x: first second big bigger"]);
    }

    #[test]
    fn exclusive_trials_are_queued_first_then_slow_ones() {
        let v = [
            fake("plain", |c| c),
            fake("slow", |c| c.slow()),
            fake("exclusive", |c| c.exclusive()),
        ];
        let (stop, rank) = (Stop::default(), BTreeMap::new());
        let (general, _) = order(&v, &plain_run(Turns::unbounded(), &stop, &rank));
        assert_eq!(general, ["exclusive", "slow", "plain"]);
    }

    fn case(name: &str) -> Case {
        Case::of(Group::Harness, name, &[], |_| Ok(()))
    }

    /// Fail-fast order: exclusive trials last whatever their rank, the rest by rank, unranked
    /// after the ranked; a run budget takes the same order.
    #[test]
    fn fail_fast_runs_ranked_trials_first_and_exclusive_ones_last() {
        let cases: Vec<_> = [case("unranked"), case("big").exclusive(), case("second"), case("first")]
            .into_iter()
            .map(Arc::new)
            .collect();
        let rank: BTreeMap<String, usize> = [("big", 0), ("first", 1), ("second", 2)]
            .iter()
            .map(|(n, r)| (case(n).trial_name(), *r))
            .collect();
        let on = Stop::new(true);
        let (general, _) = order(&cases, &plain_run(Turns::unbounded(), &on, &rank));
        assert_eq!(general, ["first", "second", "unranked", "big"]);
        let budget = Stop::new(false).under_budget(true);
        let reversed: Vec<_> = cases.iter().rev().cloned().collect();
        let (general, _) = order(&reversed, &plain_run(Turns::unbounded(), &budget, &rank));
        assert_eq!(general, ["first", "second", "unranked", "big"]);
    }

    /// Among unranked trials, a run budget starts the long-running ones first (they decide when
    /// it ends); fail-fast keeps the suite's order (its first failure comes sooner).
    #[test]
    fn a_budget_starts_the_long_trials_first_among_equals() {
        let cases: Vec<_> = [case("a"), case("long").slow(), case("b").exclusive(), case("c")]
            .into_iter()
            .map(Arc::new)
            .collect();
        let rank = BTreeMap::new();
        let general = |stop: &Stop| order(&cases, &plain_run(Turns::unbounded(), stop, &rank)).0;
        assert_eq!(general(&Stop::new(false).under_budget(true)), ["long", "a", "c", "b"]);
        assert_eq!(general(&Stop::new(true)), ["a", "long", "c", "b"]);
    }

    /// The order of a small mixed list of placements, pinned for each kind of run: the default
    /// schedule, slow starts (the paced trials join the general queue), fail-fast with a rank (the
    /// serial lane keeps its own order) and a run budget.
    #[test]
    fn the_queues_of_a_mixed_list_are_pinned() {
        let v = [
            fake("plain", |c| c),
            fake("own", |c| c.own_process()),
            fake("slow", |c| c.slow()),
            fake("big", |c| c.memory_share(5, 8)),
            fake("freed", |c| c.hands_freed_handles()),
            fake("device", |c| c.exclusive()),
            fake("watched", |c| c.may_hang()),
            fake("beyond", |c| c.beyond_device()),
            Arc::new(case("nothing")),
            fake("s_big", |c| c.memory_share(6, 8).serial()),
            fake("s1", |c| c.serial()),
            fake("s_device", |c| c.exclusive().serial()),
            fake("x_big", |c| c.memory_share(5, 8).lane("x")),
            fake("x1", |c| c.lane("x")),
            fake("x_slow", |c| c.slow().lane("x")),
            fake("l_big", |c| c.memory_share(5, 8).paced(LARGE)),
            fake("l_slow", |c| c.slow().paced(LARGE)),
            fake("l1", |c| c.memory_bytes(1 << 30).paced(LARGE)),
        ];
        let budget = Budget::of_device(80 << 30);
        let rank: BTreeMap<String, usize> = [("x1", 0), ("slow", 1), ("s1", 2), ("own", 3), ("x_big", 4)]
            .iter()
            .map(|(n, r)| (case(n).trial_name(), *r))
            .collect();
        let no_rank = BTreeMap::new();
        let default = Stop::default();
        let (general, lanes) = order(&v, &plain_run(budget, &default, &no_rank));
        assert_eq!(
            general,
            ["beyond", "device", "slow", "plain", "own", "freed", "watched", "nothing", "big"]
        );
        assert_eq!(
            lanes,
            [
                "large: l_slow l1 l_big",
                "serial: s1 s_device s_big",
                "x: x1 x_slow x_big"
            ]
        );
        let slow_run = Run {
            slow_starts: true,
            ..plain_run(budget, &default, &no_rank)
        };
        let (general, lanes) = order(&v, &slow_run);
        assert_eq!(
            general,
            [
                "beyond", "device", "slow", "l_slow", "plain", "own", "freed", "watched", "nothing", "l1", "big",
                "l_big"
            ]
        );
        assert_eq!(lanes, ["serial: s1 s_device s_big", "x: x1 x_slow x_big"]);
        let fail_fast = Stop::new(true);
        let (general, lanes) = order(&v, &plain_run(budget, &fail_fast, &rank));
        assert_eq!(
            general,
            ["slow", "own", "plain", "big", "freed", "watched", "nothing", "device", "beyond"]
        );
        assert_eq!(
            lanes,
            [
                "large: l_big l_slow l1",
                "serial: s1 s_device s_big",
                "x: x1 x_big x_slow"
            ]
        );
        let under_budget = Stop::new(false).under_budget(true);
        let (general, lanes) = order(&v, &plain_run(budget, &under_budget, &rank));
        assert_eq!(
            general,
            ["slow", "own", "plain", "big", "freed", "watched", "nothing", "device", "beyond"]
        );
        assert_eq!(
            lanes,
            [
                "large: l_slow l_big l1",
                "serial: s1 s_device s_big",
                "x: x1 x_big x_slow"
            ]
        );
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
