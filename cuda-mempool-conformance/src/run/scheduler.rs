//! The coordinator's scheduler: runs every trial libtest-mimic will ask for in worker processes, as
//! soon as the run starts, and hands each result to the trial that waits for it.
//!
//! General trials share a pool of workers (as many as test threads), longest first; each lane's
//! trials run in order in a worker of their own. A dispatcher thread owns each worker: it sends a
//! trial, waits up to the deadline, judges what came back (`harness::judge`), and replaces the
//! worker if it died or hung. When its queue is empty it asks its worker for the leak check and
//! reaps it; `finish` collects those checks for `suite::no_leaks`.
//!
//! A trial that has run much longer than any trial should (a quarter of the deadline, 2 to 10 s)
//! no longer counts against the parallelism: another general worker starts beside it. A library
//! that hangs in one API then costs about one deadline of wall time, not one per hanging trial.

use crate::harness::case::{Case, Env};
use crate::harness::config::crash_timeout;
use crate::harness::outcome::{Raw, Record};
use crate::harness::verdict::judge;
use crate::run::since_start;
use crate::run::worker::Worker;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

struct Slot {
    result: Mutex<Option<Record>>,
    ready: Condvar,
}

type Queue = Arc<Mutex<VecDeque<Arc<Case>>>>;
type Handles = Arc<Mutex<Vec<JoinHandle<Vec<String>>>>>;

pub struct Scheduler {
    slots: Arc<HashMap<String, Arc<Slot>>>,
    dispatchers: Handles,
    monitor: Mutex<Option<JoinHandle<()>>>,
    pre: Arc<Prestarted>,
}

/// Workers started ahead of the probe, so that their cuInit and context creation overlap it.
pub struct Prestarted(Mutex<Vec<Worker>>);
impl Prestarted {
    pub fn start(n: usize) -> Prestarted {
        let mut v = Vec::new();
        for id in 0..n {
            match Worker::spawn(id, true) {
                Ok(w) => v.push(w),
                Err(e) => {
                    eprintln!("conformance: could not start worker {id}: {e}");
                    break;
                }
            }
        }
        Prestarted(Mutex::new(v))
    }
    fn take(&self) -> Option<Worker> {
        self.0.lock().unwrap().pop()
    }
    /// Reap what nobody took.
    pub fn discard(&self) {
        self.0.lock().unwrap().clear();
    }
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
        Worker::spawn(id, context).map_err(String::from)
    }
}

/// How long a trial runs before it stops counting against the parallelism.
fn stuck_after(deadline: Duration) -> Duration {
    crate::driver::deadline::stuck(deadline)
}

impl Scheduler {
    /// Start running `jobs` (the cases libtest-mimic will run), `parallel` general workers at once.
    pub fn start(
        env: Arc<Env>,
        jobs: Vec<Arc<Case>>,
        parallel: usize,
        deadline: Duration,
        pre: Arc<Prestarted>,
    ) -> Scheduler {
        let mut slots = HashMap::new();
        let mut general = Vec::new();
        let mut lanes: BTreeMap<&'static str, VecDeque<Arc<Case>>> = BTreeMap::new();
        for c in jobs {
            slots.insert(
                c.trial_name(),
                Arc::new(Slot {
                    result: Mutex::new(None),
                    ready: Condvar::new(),
                }),
            );
            match c.lane {
                Some(l) => lanes.entry(l).or_default().push_back(c),
                None => general.push(c),
            }
        }
        // Longest first (a stable sort keeps the suite's order among equals).
        general.sort_by_key(|c| !c.slow);
        let slots = Arc::new(slots);
        let ctx = Arc::new(Ctx {
            env,
            deadline,
            slots: slots.clone(),
            pre: pre.clone(),
            next_id: Mutex::new(1000),
            busy: Mutex::new(Vec::new()),
        });
        let handles: Handles = Arc::new(Mutex::new(Vec::new()));
        let general: Queue = Arc::new(Mutex::new(VecDeque::from(general)));
        let parallel = parallel.max(1);
        for _ in 0..parallel.min(general.lock().unwrap().len()) {
            add_general(&general, &ctx, &handles);
        }
        for (_, q) in lanes {
            let context = q.iter().any(|c| c.needs.contains(&crate::harness::machine::Cap::Gpu));
            let h = spawn_dispatcher(Arc::new(Mutex::new(q)), ctx.clone(), None, context);
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
    pub fn finish(&self) -> Vec<String> {
        if let Some(m) = self.monitor.lock().unwrap().take() {
            let _ = m.join();
        }
        let handles: Vec<_> = std::mem::take(&mut *self.dispatchers.lock().unwrap());
        // Workers started ahead of the probe that no trial needed (their trials were ignored).
        self.pre.discard();
        let mut leaks = Vec::new();
        for h in handles {
            match h.join() {
                Ok(l) => leaks.extend(l),
                Err(_) => leaks.push("a dispatcher thread panicked; its worker's leak check is missing".into()),
            }
        }
        leaks
    }
}

fn add_general(queue: &Queue, ctx: &Arc<Ctx>, handles: &Handles) {
    let slot = {
        let mut busy = ctx.busy.lock().unwrap();
        busy.push(None);
        busy.len() - 1
    };
    let h = spawn_dispatcher(queue.clone(), ctx.clone(), Some(slot), true);
    handles.lock().unwrap().push(h);
}

/// Keep `parallel` general trials making progress while the queue lasts: a trial running past
/// `stuck_after` gets a worker started beside it.
fn monitor(queue: Queue, ctx: Arc<Ctx>, handles: Handles, parallel: usize) {
    let stuck = stuck_after(ctx.deadline);
    while !queue.lock().unwrap().is_empty() {
        std::thread::sleep(Duration::from_millis(100));
        let moving = ctx
            .busy
            .lock()
            .unwrap()
            .iter()
            .filter(|b| b.is_none_or(|t| t.elapsed() < stuck))
            .count();
        if moving < parallel && !queue.lock().unwrap().is_empty() {
            add_general(&queue, &ctx, &handles);
        }
    }
}

fn spawn_dispatcher(queue: Queue, ctx: Arc<Ctx>, busy_slot: Option<usize>, context: bool) -> JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut worker: Option<Worker> = None;
        let set_busy = |v: Option<Instant>| {
            if let Some(i) = busy_slot {
                ctx.busy.lock().unwrap()[i] = v;
            }
        };
        loop {
            let Some(case) = queue.lock().unwrap().pop_front() else {
                break;
            };
            set_busy(Some(Instant::now()));
            let begin = since_start();
            let w = match worker.take() {
                Some(w) => Ok(w),
                None => ctx.new_worker(busy_slot.is_some(), context),
            };
            let raw = match w {
                Err(e) => Raw::Broken(format!("no worker process could be started: {e}")),
                Ok(mut w) => {
                    let deadline = if case.crash.is_some() {
                        crash_timeout(ctx.deadline)
                    } else {
                        ctx.deadline
                    };
                    let raw = w.run(&case.trial_name(), &ctx.env.m, deadline);
                    if matches!(raw, Raw::Answer(_) | Raw::Broken(_)) {
                        worker = Some(w);
                    }
                    raw
                }
            };
            let mut rec = judge(&case, raw);
            rec.span = (begin, since_start());
            set_busy(None);
            let slot = &ctx.slots[&rec.trial];
            *slot.result.lock().unwrap() = Some(rec);
            slot.ready.notify_all();
        }
        // A dispatcher whose queue ran dry counts as moving: it holds no worker any more.
        set_busy(None);
        match worker {
            Some(w) => match w.finish(&ctx.env.m, ctx.deadline) {
                Ok(l) => l,
                Err(e) => vec![e],
            },
            None => Vec::new(),
        }
    })
}
