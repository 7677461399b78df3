//! The coordinator's scheduler: runs every trial libtest-mimic will ask for in worker processes, as
//! soon as the run starts, and hands each result to the trial that waits for it.
//!
//! General trials share a pool of workers (as many as test threads), longest first; each lane's
//! trials run in order in a worker of their own. A dispatcher thread owns each worker: it sends a
//! trial, waits up to the deadline, judges what came back (`harness::judge`), and replaces the
//! worker if it died or hung. When its queue is empty it asks its worker for the leak check and
//! reaps it; `finish` collects those checks for `suite::no_leaks`.
//!
//! A trial that has run much longer than any trial should (a sixth of the deadline, 2 s at least;
//! half of it where processes start slowly, or the library holds each new process at its first GPU
//! work: `run::first_wait`) no longer counts against the parallelism: another
//! general worker starts beside it. A library that hangs in one API then costs about one deadline
//! of wall time, not one per hanging trial.
//!
//! Every trial, general or of a lane, runs on a turn (`Turns`) fit for what it needs of the
//! device's memory (`Need`): side by side while the needs fit the budget, beside no memory holder
//! for a request beyond the device, the device alone where it must be. The wait for a turn counts
//! neither toward the deadline nor as stuck. Heavy trials are queued first, so that they serialise
//! the start, not the tail; meanwhile the trials that need no device run. Every wait before a trial
//! runs (its turn, the fail-fast gates, which case comes next) is the admission's (`admission.rs`).
//! CONFORMANCE_SCHEDULE=serial runs one trial at a time instead, to show the verdicts do not
//! depend on the schedule.
//!
//! In fail-fast mode and under a run budget (`stop.rs`) the queue runs cheap trials first and exclusive ones last, and
//! once a trial fails no dispatcher starts another: each records the rest of its queue as stopped.
//! Lanes then take the same order, but for `serial` (its trials change state a later one starts
//! from), and an exclusive trial of any queue waits until every other trial is done: one early
//! exclusive trial (the device alone, then its memory given back) would hold up every cheap one.

use crate::driver::departures::Policy;
use crate::harness::case::{Case, Env};
use crate::harness::leaks::Findings;
use crate::harness::outcome::{Raw, Record, Timing};
use crate::harness::verdict::judge;
use crate::run::admission::Admission;
use crate::run::clock::since_start;
use crate::run::gates::Queue;
use crate::run::order::{general_heavy, queues, slow_starts, workers_for, Queues};
use crate::run::stop::Stop;
use crate::run::turns::{Budget, Turns};
pub use crate::run::worker::Prestarted;
use crate::run::worker::Worker;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

struct Slot {
    result: Mutex<Option<Record>>,
    ready: Condvar,
}
type Handles = Arc<Mutex<Vec<JoinHandle<Findings>>>>;

pub struct Scheduler {
    slots: Arc<HashMap<String, Arc<Slot>>>,
    dispatchers: Handles,
    monitor: Mutex<Option<JoinHandle<()>>>,
    pre: Arc<Prestarted>,
}

/// What every dispatcher shares.
struct Ctx {
    env: Arc<Env>,
    deadline: Duration,
    slots: Arc<HashMap<String, Arc<Slot>>>,
    pre: Arc<Prestarted>,
    next_id: Mutex<usize>,
    /// For each general dispatcher, since when its current trial has been running.
    busy: Mutex<Vec<Option<Instant>>>,
    stop: Arc<Stop>,
    /// Every wait before a trial runs: its turn and the fail-fast gates.
    admission: Admission,
    /// Processes start slowly ([`slow_starts`]): no children started ahead, spares later.
    slow: bool,
}

impl Ctx {
    /// A general worker comes from those started ahead when there is one; a lane's is its own,
    /// with a context only if one of the lane's trials needs a device.
    fn new_worker(&self, general: bool, context: bool) -> Result<Worker, String> {
        if general {
            if let Some(w) = self.pre.take() {
                return Ok(w);
            }
        }
        let id = {
            let mut n = self.next_id.lock().unwrap();
            *n += 1;
            *n
        };
        Worker::spawn(id, context, self.env.deadline()).map_err(String::from)
    }
}

/// The memory budget of the run's turns: the smallest selected device's (trials of every device
/// share one set of turns); unbounded when the probe found no device.
fn budget_of(m: &crate::harness::Machine) -> Budget {
    let total = m
        .used()
        .into_iter()
        .filter_map(|d| m.devices.get(d as usize))
        .map(|d| d.total_mem)
        .filter(|&t| t > 0)
        .min();
    total.map_or_else(Turns::unbounded, Budget::of_device)
}

/// Whether a device the run uses is capped (`machine::capped`: its reported total well below NVML's
/// physical memory).
fn capped(m: &crate::harness::Machine) -> bool {
    m.used()
        .into_iter()
        .filter_map(|d| m.devices.get(d as usize))
        .any(|d| crate::harness::machine::capped(d).is_some())
}

/// How long a trial runs before it stops counting against the parallelism; where processes start
/// slowly, half the deadline: there a spare's start costs every other start time (under
/// compute-sanitizer each process alive adds about 5 s to every start, and trials that start
/// importers take 60-150 s as they should: spares made every start slower).
fn stuck_after(deadline: Duration, slow: bool) -> Duration {
    if slow {
        deadline / 2
    } else {
        crate::driver::deadline::stuck(deadline)
    }
}

impl Scheduler {
    /// Start running `jobs` (the cases libtest-mimic will run), `parallel` general workers at once,
    /// each trial within the trial deadline of `env`'s settings; `stop` says whether the run stops at
    /// its first failure, `rank` the order it then runs them in (the queues and their order:
    /// `run::order::queues`).
    pub fn start(
        env: Arc<Env>,
        jobs: Vec<Arc<Case>>,
        parallel: usize,
        pre: Arc<Prestarted>,
        stop: Arc<Stop>,
        rank: &BTreeMap<String, usize>,
    ) -> Scheduler {
        // CONFORMANCE_SCHEDULE=serial: every trial has the device alone, one after another (the
        // check that the scheduler changes no verdict); checked with the other settings before the
        // run started.
        let serial = env.settings.serial.value();
        let deadline = env.deadline().trial();
        let device_lock = env.settings.device_lock.clone();
        let budget = budget_of(&env.m);
        let mut slots = HashMap::new();
        let cheap_left = jobs.iter().filter(|c| !c.memory_need().heavy()).count();
        // A library that holds each new process at its first GPU work (issue 58) makes every start
        // slow alike: no process started ahead or beside the others that would only wait.
        let slow = slow_starts(env.m.startup_secs(), deadline) || env.deadline().first_wait() > Duration::ZERO;
        let lead: HashSet<String> = jobs
            .iter()
            .filter(|c| stop.leads(c, rank))
            .map(|c| c.trial_name())
            .collect();
        for c in &jobs {
            slots.insert(
                c.trial_name(),
                Arc::new(Slot {
                    result: Mutex::new(None),
                    ready: Condvar::new(),
                }),
            );
        }
        let order = crate::run::order::Run {
            budget,
            slow_starts: slow,
            stop: &stop,
            rank,
        };
        let Queues { general, lanes } = queues(jobs, &order);
        let slots = Arc::new(slots);
        let ctx = Arc::new(Ctx {
            env,
            deadline,
            slots: slots.clone(),
            pre: pre.clone(),
            next_id: Mutex::new(1000),
            busy: Mutex::new(Vec::new()),
            admission: Admission::new(
                Turns::new(budget, serial).with_device_lock(device_lock),
                stop.clone(),
                cheap_left,
                lead,
            ),
            stop,
            slow,
        });
        // The heavy trials of the general queue come first (not when cheap ones go first): memory
        // turns, the lanes' included, wait until they are done, and lanes that do not start early
        // (below) start their workers and children after them (H100, R580: the requests beyond
        // the device took 1.2 s beside the lanes' workers creating contexts, 2.5 s beside their
        // children too, 0.44 s beside none; and a trial that needs the device alone must not see a
        // context made meanwhile).
        if !ctx.stop.cheap_first() {
            let heavy = general_heavy(&general);
            ctx.admission.heavy_first(heavy);
        }
        // The lanes' processes start before the heavy trials, which wait for them
        // (`Turns::lanes_starting`), but in a fail-fast run (its lead wants one worker first) or
        // where processes start slowly: their first trials then start as the heavy ones end (H100:
        // runs 5.8 s to 5.2 s). Under compute-sanitizer the ipc lane's worker and children, started
        // so beside every general trial's importers, were up after 350 s.
        // Nor on a capped device (issue 47): a layer that counts every process on the GPU counts
        // the lanes' contexts, so the heavy trials (the graph-budget ones among them) run before
        // the lanes start theirs, beside the fewest of the suite's processes.
        let early = !slow && !capped(&ctx.env.m) && !ctx.stop.fail_fast() && ctx.admission.no_lead();
        let context_of =
            |q: &VecDeque<Arc<Case>>| q.iter().any(|c| c.needs.contains(&crate::harness::machine::Cap::Gpu));
        if early {
            ctx.admission
                .lanes_starting(lanes.values().filter(|q| context_of(q)).count());
        }
        let handles: Handles = Arc::new(Mutex::new(Vec::new()));
        let general: Queue = Arc::new(Mutex::new(VecDeque::from(general)));
        let parallel = parallel.max(1);
        let n = workers_for(general.lock().unwrap().len(), parallel);
        // Started ahead for more trials than a shard, a trials file or the ignored ones left.
        pre.keep(n);
        for _ in 0..n {
            add_general(&general, &ctx, &handles);
        }
        for (lane, q) in lanes {
            let context = context_of(&q);
            // Not the serial lane (its trials leave the process's current pool and default-pool
            // attributes as they found them, but a general trial should not be the one to find
            // out), nor a lane without a context.
            let steal = (context && lane != crate::harness::placement::SERIAL && !slow).then(|| general.clone());
            let lane = Lane {
                steal,
                early: early && context,
            };
            let h = spawn_dispatcher(Arc::new(Mutex::new(q)), ctx.clone(), None, context, lane);
            handles.lock().unwrap().push(h);
        }
        let monitor = {
            let (general, ctx, handles) = (general.clone(), ctx.clone(), handles.clone());
            std::thread::spawn(move || monitor(general, ctx, handles, parallel))
        };
        Scheduler {
            slots,
            dispatchers: handles,
            monitor: Mutex::new(Some(monitor)),
            pre,
        }
    }

    /// The result of `trial` (blocks until it is there).
    pub fn wait(&self, trial: &str) -> Record {
        let Some(slot) = self.slots.get(trial) else {
            panic!("the scheduler was not given trial {trial}");
        };
        let mut r = slot.result.lock().unwrap();
        loop {
            if let Some(rec) = r.as_ref() {
                return rec.clone();
            }
            r = slot.ready.wait(r).unwrap();
        }
    }

    /// Wait for every dispatcher to finish and reap its worker; the leak checks' findings.
    pub fn finish(&self) -> Findings {
        if let Some(m) = self.monitor.lock().unwrap().take() {
            let _ = m.join();
        }
        let handles: Vec<_> = std::mem::take(&mut *self.dispatchers.lock().unwrap());
        // Workers started ahead of the probe that no trial needed (their trials were ignored).
        self.pre.discard();
        let mut found = Findings::default();
        for h in handles {
            match h.join() {
                Ok(f) => found.extend(f),
                Err(_) => found
                    .leaks
                    .push("a dispatcher thread panicked; its worker's leak check is missing".into()),
            }
        }
        found
    }
}

fn add_general(queue: &Queue, ctx: &Arc<Ctx>, handles: &Handles) {
    let slot = {
        let mut busy = ctx.busy.lock().unwrap();
        busy.push(None);
        busy.len() - 1
    };
    let h = spawn_dispatcher(queue.clone(), ctx.clone(), Some(slot), true, Lane::default());
    handles.lock().unwrap().push(h);
}

/// Keep `parallel` general trials making progress while the queue lasts: a trial running past
/// `stuck_after` gets a worker started beside it, unless an exclusive trial holds or awaits the
/// device (another worker could not start a trial before it is done).
///
/// At most one spare per quarter of `stuck_after`: each is a process that creates a context, which
/// the driver does one at a time, so a burst of them slows every other start-up (H100, 16 workers:
/// 17 spares in 2.3 s while trials were slow, and the importers started meanwhile gave no message
/// in 5 s); one per whole interval made a run under a hanging API 1.4 s longer than its bound.
fn monitor(queue: Queue, ctx: Arc<Ctx>, handles: Handles, parallel: usize) {
    let stuck = stuck_after(ctx.deadline, ctx.slow);
    let mut last_spare: Option<Instant> = None;
    while !queue.lock().unwrap().is_empty() && !ctx.stop.stopped() {
        std::thread::sleep(Duration::from_millis(100));
        let moving = ctx
            .busy
            .lock()
            .unwrap()
            .iter()
            .filter(|b| b.is_none_or(|t| t.elapsed() < stuck))
            .count();
        let spare_due = last_spare.is_none_or(|t| t.elapsed() >= stuck / 4);
        if moving < parallel && spare_due && !ctx.admission.exclusive_now() && !queue.lock().unwrap().is_empty() {
            add_general(&queue, &ctx, &handles);
            last_spare = Some(Instant::now());
        }
    }
}

/// One trial on its turn: the turn first, so that its wait is neither the trial's time (its span,
/// the deadline `run` applies) nor a stuck trial's (`busy`); then `run`, judged, with its span and
/// its timing (the wait, the turn, what the worker said of its settle wait and children), unless
/// the run stopped meanwhile (fail-fast: `run` is then not called). Judged under `policy`.
fn on_turn(
    turns: &Turns,
    stop: &Stop,
    policy: &Policy,
    case: &Case,
    busy: &dyn Fn(Option<Instant>),
    started: Option<(f64, f64)>,
    run: impl FnOnce() -> Raw,
) -> Record {
    let asked = since_start();
    let turn = turns.take(case.memory_need());
    let waited = since_start() - asked;
    if let Some(r) = stop.skipped(case) {
        return r;
    }
    busy(Some(Instant::now()));
    let begin = since_start();
    let raw = run();
    let timing = raw.timing().shifted(begin);
    // Cut short while it ran: its process was killed for the interrupt, not by the library.
    let cut = stop.interrupted(case).filter(|_| !matches!(raw, Raw::Answer(_)));
    let mut rec = cut.unwrap_or_else(|| judge(case, raw, policy));
    rec.span = (begin, since_start());
    rec.set_timing(Timing {
        wait_s: waited,
        turn: Some(turn.kind()),
        worker_start: started,
        ..timing
    });
    drop(turn);
    busy(None);
    stop.note(&rec);
    rec
}

/// Hand `case`'s record to the trial that waits for it, and tell the admission it is done.
fn publish(ctx: &Ctx, case: &Case, rec: Record, general: bool) {
    let slot = &ctx.slots[&rec.trial];
    *slot.result.lock().unwrap() = Some(rec);
    slot.ready.notify_all();
    ctx.admission.done(case, general);
}

/// What a lane's dispatcher does besides its own queue: the general queue it may `steal` from once
/// its own ran dry, and whether it starts its processes `early`, before the heavy trials.
#[derive(Default)]
struct Lane {
    steal: Option<Queue>,
    early: bool,
}

/// Counts a lane started for the heavy trials' gate when dropped, whatever became of its start.
struct Started<'a>(&'a Admission);
impl Drop for Started<'_> {
    fn drop(&mut self) {
        self.0.lane_started();
    }
}

/// A lane's worker started before the heavy trials and up (its context made), and the children
/// its trials take started ahead when it has any (`warm`): None when none came up (its first trial
/// then starts another, and says why if that fails too).
fn start_lane_early(ctx: &Ctx, queue: &Queue, context: bool, warm: bool) -> Option<Worker> {
    let first = queue.lock().unwrap().front().cloned();
    let mut w = ctx.new_worker(false, context).ok()?;
    if !w.ready(&ctx.env.m, ctx.deadline) {
        return None;
    }
    if let (Some(first), true) = (first, warm) {
        if !w.warm_lane(&first, queue, &ctx.env.m, ctx.deadline) {
            // Dropping it kills it; its first trial starts another.
            return None;
        }
    }
    Some(w)
}

/// A dispatcher: takes its queue's trials one at a time, each on its turn, in its worker. A lane's
/// that may `steal` goes on with the general queue once its own ran dry: its worker, with its
/// context made and idle otherwise, serves the general trials left (issue 36: the lanes were done
/// seconds before the general queue, whose four workers were the run's end).
fn spawn_dispatcher(
    queue: Queue,
    ctx: Arc<Ctx>,
    busy_slot: Option<usize>,
    context: bool,
    lane: Lane,
) -> JoinHandle<Findings> {
    std::thread::spawn(move || {
        let (mut queue, mut steal) = (queue, lane.steal);
        // The lane's name (its row in the timeline), also for the general trials it takes.
        let own_lane = queue
            .lock()
            .unwrap()
            .front()
            .and_then(|c| c.placement.lane())
            .unwrap_or("lane");
        let mut general = busy_slot.is_some();
        let mut worker: Option<Worker> = None;
        // A lane with start-ahead steps runs them once its worker is there (`warm_lane`).
        let mut to_warm = busy_slot.is_none() && !ctx.slow && queue.lock().unwrap().iter().any(|c| c.warm.is_some());
        let set_busy = |v: Option<Instant>| {
            if let Some(i) = busy_slot {
                ctx.busy.lock().unwrap()[i] = v;
            }
        };
        // When the worker the next trial runs in was started for it (the timeline draws it).
        let mut started: Option<(f64, f64)> = None;
        if lane.early {
            let _started = Started(&ctx.admission);
            let begin = since_start();
            worker = start_lane_early(&ctx, &queue, context, std::mem::take(&mut to_warm));
            started = worker.as_ref().map(|_| (begin, since_start()));
        }
        loop {
            let Some(case) = ctx.admission.next_case(&queue, general) else {
                match steal.take() {
                    Some(g) => {
                        // Its lane's kept children end before it takes general trials.
                        if worker.as_mut().is_some_and(|w| !w.release(ctx.deadline)) {
                            worker = None;
                        }
                        (queue, general) = (g, true);
                        continue;
                    }
                    None => break,
                }
            };
            ctx.admission.gates(&case, &queue);
            if let Some(rec) = ctx.stop.skipped(&case) {
                publish(&ctx, &case, rec, general);
                // Its worker's start was not the next trial's.
                started = None;
                continue;
            }
            // A lane's worker that makes a context starts once the heavy trials are done (its
            // first trial waits for them anyway).
            if worker.is_none() && busy_slot.is_none() && context {
                ctx.admission.wait_heavy_first();
            }
            // A new worker starts before the turn: its start overlaps the trials running.
            let mut w = Some(match worker.take() {
                Some(w) => Ok(w),
                // Its start-up (cuInit, a context) falls in the first trial's span, or in the
                // start-ahead step's below.
                None => ctx.new_worker(busy_slot.is_some(), context),
            });
            if to_warm {
                to_warm = false;
                // Not beside the heavy trials (each start makes a context), nor once the run has
                // stopped, nor before a fail-fast run's lead (which wants one worker alone).
                ctx.admission.wait_heavy_first();
                if !ctx.stop.stopped() && ctx.admission.no_lead() {
                    if let Some(Ok(wk)) = w.as_mut() {
                        let begin = since_start();
                        if wk.warm_lane(&case, &queue, &ctx.env.m, ctx.deadline) {
                            started = Some((begin, since_start()));
                        } else {
                            // Dropping it kills it; a new one runs the lane's trials.
                            w = Some(ctx.new_worker(false, context));
                        }
                    }
                }
            }
            let mut rec = on_turn(
                ctx.admission.turns(),
                &ctx.stop,
                &ctx.env.policy(),
                &case,
                &set_busy,
                started.take(),
                || {
                    match w.take().expect("run once") {
                        Err(e) => Raw::Broken(format!("no worker process could be started: {e}")),
                        Ok(mut w) => {
                            let deadline = if case.crash.is_some() {
                                ctx.env.deadline().crash()
                            } else {
                                ctx.deadline
                            };
                            let raw = w.run(&case.trial_name(), &ctx.env.m, deadline);
                            // A retired worker (a thread stuck in the driver, or the process of a crash case
                            // that wants one of its own) is dropped: killed.
                            if matches!(raw, Raw::Answer(_) | Raw::Broken(_)) && !w.retired {
                                worker = Some(w);
                            }
                            raw
                        }
                    }
                },
            );
            // Not run (the run stopped while it waited for its turn): the worker stays.
            if let Some(Ok(w)) = w {
                worker = Some(w);
            }
            let mut timing = rec.timing();
            timing.worker = Some(match busy_slot {
                Some(i) => format!("general {i}"),
                None => own_lane.to_string(),
            });
            rec.set_timing(timing);
            publish(&ctx, &case, rec, general);
        }
        // A dispatcher whose queue ran dry counts as moving: it holds no worker any more.
        set_busy(None);
        match worker {
            Some(w) => w.finish(&ctx.env.m, ctx.deadline).unwrap_or_else(|e| Findings {
                leaks: vec![e],
                by_lookup: vec![],
            }),
            None => Findings::default(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::case::Group;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn fake(name: String, exclusive: bool, slow: bool) -> Arc<Case> {
        let mut c = Case::of(Group::Harness, name, &[crate::harness::Cap::Gpu], |_| Ok(()));
        if slow {
            c = c.slow();
        }
        if exclusive {
            c = c.exclusive();
        }
        Arc::new(c)
    }

    /// Dispatchers as the scheduler's run fake cases on their turns (four over the general queue
    /// in its order, one over a lane that mixes both kinds), each "running" a few milliseconds: no
    /// exclusive trial's record spans a moment another trial's does, and shared ones do overlap.
    #[test]
    fn an_exclusive_trial_overlaps_no_other() {
        let general: Vec<_> = (0..48).map(|i| fake(format!("g{i}"), i % 8 == 5, i % 5 == 0)).collect();
        let (stop, rank) = (Stop::default(), BTreeMap::new());
        let order = crate::run::order::Run {
            budget: Turns::unbounded(),
            slow_starts: false,
            stop: &stop,
            rank: &rank,
        };
        let general = queues(general, &order).general;
        let lane: VecDeque<_> = (0..12).map(|i| fake(format!("l{i}"), i % 3 == 1, false)).collect();
        let general: Queue = Arc::new(Mutex::new(VecDeque::from(general)));
        let lane: Queue = Arc::new(Mutex::new(lane));
        let turns = Arc::new(Turns::default());
        let spans = Arc::new(Mutex::new(Vec::new()));
        let queues = [&general, &general, &general, &general, &lane];
        let threads: Vec<_> = queues
            .iter()
            .map(|&q| {
                let (q, turns, spans) = (q.clone(), turns.clone(), spans.clone());
                std::thread::spawn(move || loop {
                    let Some(c) = q.lock().unwrap().pop_front() else {
                        break;
                    };
                    let rec = on_turn(&turns, &Stop::default(), &Policy::default(), &c, &|_| {}, None, || {
                        std::thread::sleep(Duration::from_millis(if c.placement.slow() { 6 } else { 3 }));
                        Raw::Broken("a fake trial".into())
                    });
                    assert_eq!(
                        rec.timing().turn == Some(crate::harness::outcome::Turn::Exclusive),
                        c.memory_need().heavy(),
                        "{}",
                        c.name
                    );
                    assert!(rec.timing().wait_s >= 0.0 && rec.span.0 >= rec.timing().wait_s);
                    spans
                        .lock()
                        .unwrap()
                        .push((c.name.clone(), c.memory_need().heavy(), rec.span.0, rec.span.1));
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let spans = spans.lock().unwrap();
        assert_eq!(spans.len(), 60);
        let mut side_by_side = 0;
        for (i, a) in spans.iter().enumerate() {
            for b in &spans[i + 1..] {
                let overlap = a.2 < b.3 && b.2 < a.3;
                assert!(
                    !(overlap && (a.1 || b.1)),
                    "{} ({}) and {} ({}) ran at once",
                    a.0,
                    if a.1 { "exclusive" } else { "shared" },
                    b.0,
                    if b.1 { "exclusive" } else { "shared" }
                );
                side_by_side += overlap as usize;
            }
        }
        assert!(side_by_side > 0, "no two shared trials ran side by side");
    }

    /// Fail-fast: once a trial fails, a trial whose turn comes after is recorded stopped and its
    /// body never runs; without fail-fast every body runs.
    #[test]
    fn a_fail_fast_run_starts_nothing_after_a_failure() {
        for on in [false, true] {
            let (turns, stop, ran) = (Turns::default(), Stop::new(on), AtomicBool::new(false));
            let first = on_turn(
                &turns,
                &stop,
                &Policy::default(),
                &fake("fails".into(), false, false),
                &|_| {},
                None,
                || Raw::Broken("a fake trial".into()),
            );
            assert_eq!(first.outcome, crate::harness::Outcome::Failed);
            let later = on_turn(
                &turns,
                &stop,
                &Policy::default(),
                &fake("later".into(), true, false),
                &|_| {},
                None,
                || {
                    ran.store(true, Ordering::SeqCst);
                    Raw::Broken("a fake trial".into())
                },
            );
            assert_eq!(ran.load(Ordering::SeqCst), !on, "fail-fast {on}");
            if on {
                assert_eq!(later.kind(), crate::harness::Kind::Stopped);
                assert!(
                    later.message.contains("`harness::fails` failed first"),
                    "{}",
                    later.message
                );
            }
        }
    }
}
