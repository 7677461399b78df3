//! Worker processes: this binary in the `worker` role runs trials one at a time for the
//! coordinator, paying cuInit and context creation once. A worker that dies or stops answering
//! costs the trial it was running, nothing more: the coordinator reads its breadcrumb (which API it
//! was inside) and the last lines it wrote, and starts another.
//!
//! Protocol: the model's typed messages over the `channel` socket (`conformance_model::protocol`):
//! the coordinator sends `ToWorker::Machine` once, then `Run` (answered by `FromWorker::Answered`)
//! any number of times, then `Finish` (answered by `Leaks`, after which the worker exits). `Ping`,
//! answered by `Pong`, says it is up: its context made, the machine read. An answer with `retire`
//! is the worker's last: a thread of its trial is stuck inside the driver (`harness::bounded`), or
//! its trial wanted a process of its own and, being a crash case, ran in the worker
//! (`Placement::in_worker`); it exits, and the coordinator starts another for the next trial. A
//! reply that is not the answer asked for (unreadable, or another message) fails the trial as
//! broken and retires the worker too: the conversation is out of step.
//!
//! Under the mutation library an answer carries `calls`: the APIs the trial reached
//! (`driver::calls`), its own and those of the children it started, which append to a calls file
//! of this worker's (the coordinator names it, and removes it with the worker).

use crate::driver::crumb::Crumb;
use crate::driver::deadline::Deadline;
use crate::driver::fail::R;
use crate::harness::case::{Case, Env};
use crate::harness::channel::{spawn_role, Channel, Got};
use crate::harness::child::Role;
use crate::harness::execute::{execute, execute_in_child};
use crate::harness::leaks::{Findings, WorkerState};
use crate::harness::machine::Machine;
use crate::harness::outcome::{reached, received, Answer, Raw};
use crate::harness::placement::InWorker;
use crate::harness::probe;
use crate::harness::settings::Settings;
use crate::run::gates::Queue;
use conformance_model::{FromWorker, ToWorker};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// "0": the worker's trials need no device, so it creates no context (saves one context creation,
/// which the driver does one at a time).
const CONTEXT_VAR: &str = "CONFORMANCE_WORKER_CONTEXT";
/// How many of a dead or hung worker's last lines a failure message carries.
const TAIL: usize = 20;
/// The file the worker's children append the APIs they reach to (`driver::calls`).
const CALLS_FILE_VAR: &str = "CONFORMANCE_WORKER_CALLS_FILE";

/// The last lines a worker wrote (stdout and stderr), numbered so a trial can take only its own.
#[derive(Default)]
struct Log {
    lines: VecDeque<String>,
    count: u64,
}
impl Log {
    fn push(&mut self, line: String) {
        self.lines.push_back(line);
        self.count += 1;
        if self.lines.len() > 200 {
            self.lines.pop_front();
        }
    }
    /// Lines written since line number `mark`, at most TAIL of them.
    fn since(&self, mark: u64) -> String {
        let new = (self.count - mark).min(self.lines.len() as u64) as usize;
        let skip = self.lines.len() - new.min(TAIL);
        self.lines.iter().skip(skip).cloned().collect::<Vec<_>>().join("\n")
    }
}

/// The coordinator's handle on one worker process.
pub struct Worker {
    pub id: usize,
    chan: Channel,
    child: Child,
    crumb: Crumb,
    log: Arc<Mutex<Log>>,
    readers: Vec<JoinHandle<()>>,
    greeted: bool,
    /// Its children's calls file (removed with the worker).
    calls_file: std::path::PathBuf,
    /// Its last trial left a thread stuck inside the driver (`harness::bounded`), or was a crash case
    /// that wants a process of its own (`Placement::in_worker`): it runs no more.
    pub retired: bool,
    /// How long it may take to exit once told to finish (`Deadline::reap`).
    reap: Duration,
}

impl Worker {
    /// Start a worker. It calls cuInit and (with `context`) retains device 0's context at once,
    /// while the coordinator is still probing; it learns the machine from the first message.
    /// `deadline`: the run's, as its coordinator knows it now (the worker plans with the wait the
    /// machine it is told names).
    pub fn spawn(id: usize, context: bool, deadline: Deadline) -> R<Worker> {
        let crumb = Crumb::new()?;
        let id_s = id.to_string();
        let calls_file = std::env::temp_dir().join(format!("cump-calls-{}-{id}", std::process::id()));
        let (chan, mut child) = spawn_role(
            &Role::Worker,
            &[
                ("CONFORMANCE_WORKER_ID", &id_s),
                (CONTEXT_VAR, if context { "1" } else { "0" }),
                (CALLS_FILE_VAR, &calls_file.to_string_lossy()),
            ],
            Stdio::piped(),
            Some(&crumb),
            deadline.worker_start(),
            None,
            deadline,
        )?;
        // Its own process group (`child::command`), killed with its children if the run is cut.
        if !crate::run::interrupt::track(child.id()) {
            let _ = child.wait();
            return Err("the run was interrupted".into());
        }
        let log = Arc::new(Mutex::new(Log::default()));
        let mut readers = Vec::new();
        let out: Box<dyn std::io::Read + Send> = Box::new(child.stdout.take().unwrap());
        let err: Box<dyn std::io::Read + Send> = Box::new(child.stderr.take().unwrap());
        for (stream, tag) in [(out, "stdout: "), (err, "")] {
            let log = log.clone();
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    match line {
                        Ok(l) => log.lock().unwrap().push(format!("{tag}{l}")),
                        Err(_) => break,
                    }
                }
            }));
        }
        Ok(Worker {
            id,
            chan,
            child,
            crumb,
            log,
            readers,
            greeted: false,
            calls_file,
            retired: false,
            reap: deadline.reap(),
        })
    }

    fn greet(&mut self, m: &Machine) -> R {
        if !self.greeted {
            // The probe's answer (`Machine::answer`, the machine's one serialisation).
            let machine = Box::new(m.answer());
            self.chan.send(&ToWorker::Machine { machine }, None)?;
            self.greeted = true;
        }
        Ok(())
    }

    /// Reap the process (bounded) and collect what it wrote.
    fn reap(&mut self) -> Option<std::process::ExitStatus> {
        use wait_timeout::ChildExt;
        crate::run::interrupt::untrack(self.child.id());
        let status = match self.child.wait_timeout(self.reap) {
            Ok(Some(s)) => Some(s),
            _ => {
                let _ = self.child.kill();
                self.child.wait().ok()
            }
        };
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        status
    }

    /// Reap the process and say how it ended (and by which signal).
    fn ended(&mut self) -> (String, Option<i32>) {
        use std::os::unix::process::ExitStatusExt;
        match self.reap() {
            Some(s) if s.signal().is_some() => {
                let sig = s.signal().unwrap();
                (
                    format!("died by {}", crate::harness::child::signal_name(sig)),
                    Some(sig),
                )
            }
            Some(s) => (format!("exited with code {:?}", s.code()), None),
            None => ("vanished".into(), None),
        }
    }

    /// Run one trial; `Raw::Died`/`Raw::Hung` mean this worker is gone and must be replaced.
    pub fn run(&mut self, trial: &str, m: &Machine, deadline: Duration) -> Raw {
        let start = Instant::now();
        let mark = self.log.lock().unwrap().count;
        if let Err(e) = self.greet(m).and_then(|_| self.chan.set_timeout(deadline)) {
            return self.died_before(e, mark, start);
        }
        self.crumb.clear_last();
        let run = ToWorker::Run { trial: trial.into() };
        if let Err(e) = self.chan.send(&run, None) {
            return self.died_before(e, mark, start);
        }
        match self.chan.poll_as() {
            Got::Msg(reply, _) => match answered(self.id, reply) {
                Ok((a, retire)) => {
                    self.retired = retire;
                    Raw::Answer(Box::new(a))
                }
                Err(e) => {
                    self.retired = true;
                    Raw::Broken(e)
                }
            },
            Got::Timeout => {
                let inside = self.crumb.read();
                let _ = self.child.kill();
                let _ = self.ended();
                Raw::Hung {
                    secs: start.elapsed().as_secs_f64(),
                    inside,
                    log: self.log.lock().unwrap().since(mark),
                }
            }
            Got::Closed | Got::Error(_) => self.died(mark, start),
        }
    }

    /// Run `trial`'s start-ahead step (`Case::warm`) in the worker, waiting at most `deadline`.
    /// Err(Ok(why)): the step failed and the worker answered (it goes on: its trials start their
    /// own children); Err(Err(why)): the worker did not answer as it should (it must not run
    /// another trial: a late answer would be read as that trial's).
    pub fn warm(&mut self, trial: &str, m: &Machine, deadline: Duration) -> Result<(), Result<String, String>> {
        self.greet(m)
            .and_then(|_| self.chan.set_timeout(deadline))
            .and_then(|_| self.chan.send(&ToWorker::Warm { trial: trial.into() }, None))
            .map_err(|e| Err(e.to_string()))?;
        match self.chan.poll_as() {
            Got::Msg(Ok(FromWorker::Warmed { error: None }), _) => Ok(()),
            Got::Msg(Ok(FromWorker::Warmed { error: Some(e) }), _) => Err(Ok(e)),
            Got::Msg(reply, _) => Err(Err(format!("worker {} answered {}", self.id, said(&reply)))),
            Got::Timeout => Err(Err(format!(
                "worker {} did not answer within {} s",
                self.id,
                deadline.as_secs()
            ))),
            Got::Closed | Got::Error(_) => Err(Err(format!("worker {} ended", self.id))),
        }
    }

    /// A lane's start-ahead steps (`Case::warm`), each distinct one once, in this new worker,
    /// before `first` (the lane's first trial) waits for its turn: the children its trials will take
    /// start at once, side by side, instead of each within its trial. One that fails is told on
    /// stderr; its trials start their own children. Only for cases this machine can run (a lane whose
    /// trials are all ignored starts nothing). Whether it may run trials after: not when it did not
    /// answer as it should.
    pub(super) fn warm_lane(&mut self, first: &Case, queue: &Queue, m: &Machine, deadline: Duration) -> bool {
        let mut steps: Vec<(usize, String)> = Vec::new();
        let q = queue.lock().unwrap();
        for c in std::iter::once(first).chain(q.iter().map(|c| &**c)) {
            if let (Some(f), None) = (c.warm, c.missing(m)) {
                if !steps.iter().any(|(g, _)| *g == f as usize) {
                    steps.push((f as usize, c.trial_name()));
                }
            }
        }
        drop(q);
        for (_, trial) in steps {
            match self.warm(&trial, m, deadline) {
                Ok(()) => {}
                Err(Ok(e)) => eprintln!("conformance: starting ahead what {trial} needs: {e}"),
                Err(Err(e)) => {
                    eprintln!("conformance: starting ahead what {trial} needs: {e}; a new worker takes the lane");
                    return false;
                }
            }
        }
        true
    }

    /// Wait at most `deadline` until it is up (its context made, the machine read): false if it
    /// did not answer as it should (it must not run a trial).
    pub fn ready(&mut self, m: &Machine, deadline: Duration) -> bool {
        let asked = self
            .greet(m)
            .and_then(|_| self.chan.set_timeout(deadline))
            .and_then(|_| self.chan.send(&ToWorker::Ping, None));
        asked.is_ok() && matches!(self.chan.poll_as(), Got::Msg(Ok(FromWorker::Pong), _))
    }

    /// End the children it keeps (`harness::kept_children::close_all`), waiting at most `deadline`.
    /// False: it did not answer as it should (it must not run another trial).
    pub fn release(&mut self, deadline: Duration) -> bool {
        let asked = self
            .chan
            .set_timeout(deadline)
            .and_then(|_| self.chan.send(&ToWorker::Release, None));
        asked.is_ok() && matches!(self.chan.poll_as(), Got::Msg(Ok(FromWorker::Released), _))
    }

    fn died(&mut self, mark: u64, start: Instant) -> Raw {
        let inside = self.crumb.read();
        let (how, signal) = self.ended();
        Raw::Died {
            how,
            signal,
            inside,
            last: self.crumb.last(),
            log: self.log.lock().unwrap().since(mark),
            secs: start.elapsed().as_secs_f64(),
        }
    }

    fn died_before(&mut self, e: impl Into<String>, mark: u64, start: Instant) -> Raw {
        let e: String = e.into();
        match self.died(mark, start) {
            Raw::Died {
                how,
                signal,
                inside,
                last,
                log,
                secs,
            } => Raw::Died {
                how: format!("{how} (before the trial could be sent: {e})"),
                signal,
                inside,
                last,
                log,
                secs,
            },
            r => r,
        }
    }

    /// Ask the worker for its end-of-run leak check, then reap it.
    pub fn finish(mut self, m: &Machine, deadline: Duration) -> Result<Findings, String> {
        let id = self.id;
        self.greet(m)?;
        self.chan.set_timeout(deadline)?;
        self.chan.send(&ToWorker::Finish, None)?;
        let answer = match self.chan.poll_as() {
            Got::Msg(Ok(FromWorker::Leaks { leaks, by_lookup }), _) => {
                Ok(Findings { leaks, by_lookup }.of(&format!("worker {id}: ")))
            }
            Got::Msg(reply, _) => Err(format!("worker {id}: unexpected answer to finish: {}", said(&reply))),
            Got::Timeout => {
                let inside = self.crumb.describe();
                let _ = self.child.kill();
                Err(format!(
                    "worker {id}: its leak check gave no answer within {} s{inside}",
                    deadline.as_secs()
                ))
            }
            Got::Closed | Got::Error(_) => {
                let inside = self.crumb.describe();
                let (how, _) = self.ended();
                Err(format!("worker {id} {how} during its leak check{inside}"))
            }
        };
        if answer.is_ok() {
            let status = self.reap();
            if !status.is_some_and(|s| s.success()) {
                return Err(format!(
                    "worker {id} did not exit cleanly after its leak check ({status:?})"
                ));
            }
        }
        answer
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        crate::run::interrupt::untrack(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.calls_file);
    }
}

/// Child role `worker`: run trials for the coordinator until told to finish.
pub fn main(templates: Vec<Case>, settings: Arc<Settings>) -> i32 {
    let mut cases = templates;
    let chan = match Channel::from_inherited(settings.deadline()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("worker: {e}");
            return 1;
        }
    };
    if let Some(path) = crate::os::setting_os(CALLS_FILE_VAR) {
        crate::driver::calls::set_children_file(path.into());
    }
    // cuInit and device 0's context now, while the coordinator probes.
    let init = unsafe { crate::driver::cu::cuInit(0) };
    let want = crate::os::setting(CONTEXT_VAR).as_deref() != Some("0");
    let ctx0 = if init == crate::driver::check::SUCCESS && want {
        probe::retain_context(0)
    } else {
        0
    };
    let mut state: Option<(Env, WorkerState)> = None;
    loop {
        let msg = match chan.poll_as::<ToWorker>() {
            Got::Msg(Ok(m), _) => m,
            Got::Msg(Err(e), _) => {
                eprintln!("worker: the coordinator sent {e}");
                return 1;
            }
            // The coordinator is gone (or waits for something else): nothing left to do.
            Got::Closed | Got::Error(_) => return 0,
            Got::Timeout => continue,
        };
        match msg {
            ToWorker::Machine { machine } => {
                let m = match Machine::from_answer(*machine, &settings) {
                    Ok(m) => m,
                    Err(e) => {
                        eprintln!("worker: {e}");
                        return 1;
                    }
                };
                // The wait the machine plans with, which a worker started before the probe could
                // not be handed (`Machine::planned_settings`).
                let settings = m.planned_settings(&settings);
                let sel = m.selection().clone();
                let m = std::sync::Arc::new(m);
                // A worker that wants a context and could not retain it at start (a lane's worker
                // starts beside the run's requests beyond the device, which may take every free byte
                // meanwhile: seen on the H100 as a context's fds "left open" by the lane's first
                // trial) retains it now, before its leak baseline: the context is the worker's.
                let env = if ctx0 != 0 || (want && init == crate::driver::check::SUCCESS) {
                    Env::on(m, settings, 0)
                } else {
                    Env::without_context(m, settings)
                };
                // The coordinator's cases, spread over the devices it chose.
                cases = cases.iter().flat_map(|c| c.spread(&sel)).collect();
                let st = WorkerState::start(&env);
                state = Some((env, st));
            }
            ToWorker::Run { trial } => {
                let Some((env, st)) = state.as_mut() else {
                    eprintln!("worker: asked to run a trial before being told the machine");
                    return 1;
                };
                // Whether the worker ends after this trial's answer (`last`), besides a stuck thread.
                let mut last = false;
                let answer = match cases.iter().find(|c| c.trial_name() == trial) {
                    Some(c) => {
                        let watch = crate::harness::child::Watch::start();
                        st.prepare(c, env);
                        // What the warm-up, an earlier trial or its leftovers reached is not this one's.
                        let _ = crate::driver::calls::take();
                        // A crash case of its own process dies in the worker, which then ends.
                        let place = c.placement.in_worker(c.crash.is_some());
                        last = place == InWorker::WorkerThenEnd;
                        let mut a = if place == InWorker::Child {
                            execute_in_child(c, &env.m, env.deadline())
                        } else {
                            execute(c, env)
                        };
                        a.calls = crate::driver::calls::take().map(reached);
                        a.timing.children = watch.finish();
                        // A thread left stuck in the driver holds it: no leak check (its calls
                        // would wait), and the worker retires once it has answered.
                        if crate::harness::bounded::stuck().is_none() {
                            st.after_trial(&trial);
                        }
                        a
                    }
                    None => Answer::new(
                        crate::harness::outcome::Outcome::Failed,
                        crate::harness::outcome::Kind::Broken,
                        format!("the worker knows no case named {trial}"),
                    ),
                };
                let stuck = crate::harness::bounded::stuck();
                let reply = FromWorker::Answered {
                    answer: Box::new(answer),
                    retire: stuck.is_some() || last,
                };
                if chan.send(&reply, None).is_err() {
                    return 1;
                }
                if let Some(call) = stuck {
                    eprintln!("worker: a thread is stuck inside {call}: retiring");
                    crate::harness::bounded::exit_now(0);
                }
                // Its process was the trial's own: no other trial runs in it, and it ends without
                // exit handlers (the driver's would run on whatever the trial left of its heap).
                if last {
                    crate::harness::bounded::exit_now(0);
                }
            }
            ToWorker::Warm { trial } => {
                // A lane's start-ahead step (`Case::warm`): its answer says only whether it worked
                // (where it did not, the trials start their own children as they would anyway).
                let done: Result<(), String> = match (state.as_mut(), cases.iter().find(|c| c.trial_name() == trial)) {
                    (Some((env, st)), Some(c)) => match c.warm {
                        Some(f) => {
                            // The contexts it retains are the worker's, as before a trial.
                            st.prepare(c, env);
                            let e = env.for_case(c);
                            e.bind();
                            f(&e).map_err(|e| e.to_string())
                        }
                        None => Ok(()),
                    },
                    (None, _) => Err("asked to warm before being told the machine".into()),
                    (_, None) => Err(format!("the worker knows no case named {trial}")),
                };
                let _ = crate::driver::calls::take();
                if chan.send(&FromWorker::Warmed { error: done.err() }, None).is_err() {
                    return 1;
                }
            }
            ToWorker::Ping => {
                if chan.send(&FromWorker::Pong, None).is_err() {
                    return 1;
                }
            }
            ToWorker::Release => {
                // Its lane is done and it takes general trials: the children kept for the lane end
                // first (each holds a context; a general trial counting fds or children must not
                // see one end during it).
                crate::harness::kept_children::close_all();
                if chan.send(&FromWorker::Released, None).is_err() {
                    return 1;
                }
            }
            ToWorker::Finish => {
                // The importers kept between trials end first: they are the worker's, not leaks.
                crate::harness::kept_children::close_all();
                let found = match state.as_ref() {
                    Some((env, st)) => st.end_check(env),
                    None => Findings::default(),
                };
                let leaks = FromWorker::Leaks {
                    leaks: found.leaks,
                    by_lookup: found.by_lookup,
                };
                let _ = chan.send(&leaks, None);
                return 0;
            }
        }
    }
}

/// What worker `id`'s reply to a trial says: its answer and whether the worker retires after it,
/// or why it is none (unreadable, another message, an answer no body can give).
fn answered(id: usize, reply: Result<FromWorker, String>) -> Result<(Answer, bool), String> {
    match reply {
        Ok(FromWorker::Answered { answer, retire }) => received(*answer)
            .map(|a| (a, retire))
            .map_err(|e| format!("worker {id} answered {e}")),
        other => Err(format!("worker {id} answered {}, not the trial's answer", said(&other))),
    }
}

/// A worker's reply as a failure message quotes it: the message, or why it is none.
fn said(reply: &Result<FromWorker, String>) -> String {
    match reply {
        Ok(m) => serde_json::to_string(m).unwrap_or_else(|e| e.to_string()),
        Err(e) => e.clone(),
    }
}

/// Workers started ahead of the probe, so that their cuInit and context creation overlap it.
pub struct Prestarted(Mutex<Vec<Worker>>);
impl Prestarted {
    pub fn start(n: usize, deadline: Deadline) -> Prestarted {
        let mut v = Vec::new();
        for id in 0..n {
            match Worker::spawn(id, true, deadline) {
                Ok(w) => v.push(w),
                Err(e) => {
                    eprintln!("conformance: could not start worker {id}: {e}");
                    break;
                }
            }
        }
        Prestarted(Mutex::new(v))
    }
    pub(super) fn take(&self) -> Option<Worker> {
        self.0.lock().unwrap().pop()
    }
    /// Keep at most `n` (the rest reaped at once: each holds a context all run otherwise).
    pub(super) fn keep(&self, n: usize) {
        let mut v = self.0.lock().unwrap();
        while v.len() > n {
            v.pop();
        }
    }
    /// Reap what nobody took.
    pub fn discard(&self) {
        self.0.lock().unwrap().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::outcome::{Kind, Outcome};
    use conformance_model::TrialAnswer;

    /// A worker's answer is taken with its `retire`; anything else it sends back to `run` (a
    /// message cut short or corrupted, another message, a kind only the coordinator decides) is no
    /// answer, and says what came instead: the trial fails as broken, the coordinator goes on.
    #[test]
    fn a_reply_is_the_trials_answer_or_says_what_came() {
        let answer = TrialAnswer::new(Outcome::Failed, Kind::Check, "wrong".into());
        let reply = |answer, retire| {
            Ok(FromWorker::Answered {
                answer: Box::new(answer),
                retire,
            })
        };
        let (a, retire) = answered(3, reply(answer.clone(), true)).unwrap();
        assert_eq!(
            (a.outcome, a.kind, a.message.as_str(), retire),
            (Outcome::Failed, Kind::Check, "wrong", true)
        );
        let leak = TrialAnswer::new(Outcome::Failed, Kind::Leak, String::new());
        let cut: Result<FromWorker, String> = Err("bad message (EOF while parsing): {\"op\":\"answ".into());
        for (reply, says) in [
            (reply(leak, false), "worker 3 answered an answer of kind leak"),
            (
                Ok(FromWorker::Pong),
                "worker 3 answered {\"op\":\"pong\"}, not the trial's answer",
            ),
            (cut, "worker 3 answered bad message (EOF while parsing)"),
        ] {
            let e = answered(3, reply).unwrap_err();
            assert!(e.starts_with(says), "{e}");
        }
    }
}
