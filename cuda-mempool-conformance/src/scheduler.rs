//! The coordinator's scheduler: runs every trial libtest-mimic will ask for in worker processes, as
//! soon as the run starts, and hands each result to the trial that waits for it.
//!
//! General trials share a pool of workers (as many as test threads), longest first; each lane's
//! trials run in order in a worker of their own. A dispatcher thread owns each worker: it sends a
//! trial, waits up to the deadline, judges what came back (`harness::judge`), and replaces the
//! worker if it died or hung. When its queue is empty it asks its worker for the leak check and
//! reaps it; `finish` collects those checks for `suite::no_leaks`.

use crate::harness::{crash_timeout, judge, Case, Env, Raw, Record};
use crate::worker::Worker;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

struct Slot {
    result: Mutex<Option<Record>>,
    ready: Condvar,
}

pub struct Scheduler {
    slots: HashMap<String, Arc<Slot>>,
    dispatchers: Mutex<Vec<JoinHandle<Vec<String>>>>,
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

struct Ctx {
    env: Arc<Env>,
    devices: Vec<i32>,
    deadline: Duration,
    next_id: Mutex<usize>,
}

impl Ctx {
    /// A general worker comes from those started ahead when there is one; a lane's is its own,
    /// with a context only if one of the lane's trials needs a device.
    fn new_worker(&self, pre: Option<&Prestarted>, context: bool) -> Result<Worker, String> {
        if let Some(w) = pre.and_then(Prestarted::take) {
            return Ok(w);
        }
        let id = {
            let mut n = self.next_id.lock().unwrap();
            *n += 1;
            *n
        };
        Worker::spawn(id, context)
    }
}

impl Scheduler {
    /// Start running `jobs` (the cases libtest-mimic will run), `parallel` general workers at once.
    pub fn start(
        env: Arc<Env>,
        devices: Vec<i32>,
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
        let ctx = Arc::new(Ctx {
            env,
            devices,
            deadline,
            next_id: Mutex::new(1000),
        });
        let slots_ref = Arc::new(slots.clone());
        let mut dispatchers = Vec::new();
        let general = Arc::new(Mutex::new(VecDeque::from(general)));
        let n_general = parallel.max(1).min(general.lock().unwrap().len());
        for _ in 0..n_general {
            dispatchers.push(spawn_dispatcher(
                general.clone(),
                ctx.clone(),
                slots_ref.clone(),
                Some(pre.clone()),
                true,
            ));
        }
        for (_, q) in lanes {
            let context = q.iter().any(|c| c.needs.contains(&crate::probe::Cap::Gpu));
            dispatchers.push(spawn_dispatcher(
                Arc::new(Mutex::new(q)),
                ctx.clone(),
                slots_ref.clone(),
                None,
                context,
            ));
        }
        let pre = pre.clone();
        Scheduler {
            slots,
            dispatchers: Mutex::new(dispatchers),
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

fn spawn_dispatcher(
    queue: Arc<Mutex<VecDeque<Arc<Case>>>>,
    ctx: Arc<Ctx>,
    slots: Arc<HashMap<String, Arc<Slot>>>,
    pre: Option<Arc<Prestarted>>,
    context: bool,
) -> JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut worker: Option<Worker> = None;
        loop {
            let Some(case) = queue.lock().unwrap().pop_front() else {
                break;
            };
            let w = match worker.take() {
                Some(w) => Ok(w),
                None => ctx.new_worker(pre.as_deref(), context),
            };
            let raw = match w {
                Err(e) => Raw::Broken(format!("no worker process could be started: {e}")),
                Ok(mut w) => {
                    let deadline = if case.crash.is_some() {
                        crash_timeout(ctx.deadline)
                    } else {
                        ctx.deadline
                    };
                    let raw = w.run(&case.trial_name(), &ctx.env.m, &ctx.devices, deadline);
                    if matches!(raw, Raw::Answer(_) | Raw::Broken(_)) {
                        worker = Some(w);
                    }
                    raw
                }
            };
            let rec = judge(&case, raw);
            let slot = &slots[&rec.trial];
            *slot.result.lock().unwrap() = Some(rec);
            slot.ready.notify_all();
        }
        match worker {
            Some(w) => match w.finish(&ctx.env.m, &ctx.devices, ctx.deadline) {
                Ok(l) => l,
                Err(e) => vec![e],
            },
            None => Vec::new(),
        }
    })
}
