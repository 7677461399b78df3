//! Cases and what becomes of them: capability checks, one trial's execution (in a worker process or
//! in this one), the verdict on what came back, and the libtest-mimic trials that report it.

use crate::cu::*;
use crate::driver::R;
use crate::probe::{Cap, Machine, ALL_CAPS};
use libtest_mimic::{Completion, Failed, Trial};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// What a case gets: the probed machine, its device (whose primary context is current), and for
/// pair and multi-device cases the other devices.
#[derive(Clone)]
pub struct Env {
    pub m: Arc<Machine>,
    pub dev: CUdevice,
    /// A pair case's other device.
    pub peer: Option<CUdevice>,
    /// A multi-device case's devices (all reach each other); `dev` is the first.
    pub multi: Vec<CUdevice>,
    /// `dev`'s primary context, retained by this process (0 if none).
    pub ctx: usize,
}
impl Env {
    /// A process's environment on device `dev` (retaining its context when there is a device).
    pub fn on(m: Arc<Machine>, dev: CUdevice) -> Env {
        let ctx = if m.init == 0 && !m.devices.is_empty() {
            crate::probe::retain_context(dev)
        } else {
            0
        };
        Env {
            m,
            dev,
            peer: None,
            multi: Vec::new(),
            ctx,
        }
    }
    /// The environment for one case: its device(s), their contexts retained on first use.
    pub fn for_case(&self, c: &Case) -> Env {
        let ctx = if c.dev == self.dev || self.ctx == 0 {
            self.ctx
        } else {
            crate::probe::retain_context(c.dev)
        };
        if self.ctx != 0 {
            for d in c.peer.iter().chain(&c.multi) {
                crate::probe::retain_context(*d);
            }
        }
        Env {
            m: self.m.clone(),
            dev: c.dev,
            peer: c.peer,
            multi: c.multi.clone(),
            ctx,
        }
    }
    /// Make this device's primary context current on this thread.
    pub fn bind(&self) {
        if self.ctx != 0 {
            let _ = unsafe { cuCtxSetCurrent(self.ctx as CUcontext) };
        }
    }
    /// The pair case's other device.
    pub fn peer(&self) -> R<CUdevice> {
        self.peer
            .ok_or_else(|| format!("no device shares peer access with device {}", self.dev))
    }
}

pub type Body = Arc<dyn Fn(&Env) -> R + Send + Sync>;

/// Where a trial belongs in the report: one of the 14 APIs, the harness's own checks of itself,
/// or the suite's checks of the run as a whole.
#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord)]
pub enum Group {
    Api(u32),
    /// The harness tested against injected faults (dying and hanging children).
    Harness,
    /// The run as a whole (`suite::no_leaks`).
    Suite,
}
impl Group {
    pub fn api(self) -> Option<u32> {
        match self {
            Group::Api(i) => Some(i),
            _ => None,
        }
    }
    pub fn label(self) -> String {
        match self {
            Group::Api(i) => format!("{i}_{}", crate::api_name(i)),
            Group::Harness => "harness".into(),
            Group::Suite => "suite".into(),
        }
    }
}

/// A case whose input crashes the driver it was written against: the signals it was seen to die
/// by, the code the documentation promises instead, and the drivers the crash was seen on.
#[derive(Clone, Copy, Debug)]
pub struct Crash {
    pub signals: &'static [i32],
    pub documented: CUresult,
    pub seen_on: &'static str,
    /// Driver branches the crash is expected on (`deviations.rs`); outside them the documented
    /// code is.
    pub branches: (u32, u32),
}
pub const SIGSEGV: &[i32] = &[11];
/// A heap corrupted inside the driver: SIGSEGV where it is touched, or SIGABRT from the C
/// library's heap checks at a later free, depending on the allocator's state.
pub const SIGSEGV_OR_SIGABRT: &[i32] = &[11, 6];

fn signal_names(s: &[i32]) -> String {
    s.iter().map(|&x| signal_name(x)).collect::<Vec<_>>().join(" or ")
}

/// How a case spreads over the devices a run uses (`devices.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Per {
    /// Once per run (no device, or the machine as a whole).
    Once,
    /// Once per selected device.
    Device,
    /// Once per ordered peer-capable pair (owner, peer).
    Pair,
    /// Once, over the devices that all reach each other (three or more).
    Multi,
}

#[derive(Clone)]
pub struct Case {
    pub group: Group,
    pub name: String,
    pub needs: Vec<Cap>,
    pub per: Per,
    /// The device it runs on (the pool owner for pairs), once spread over the devices.
    pub dev: CUdevice,
    pub peer: Option<CUdevice>,
    pub multi: Vec<CUdevice>,
    /// What the trial name ends with once spread (`::dev2`, `::dev0_dev1`), when devices are named.
    pub suffix: String,
    /// Cases of one lane run one after another in a worker of their own: `serial` (they change
    /// the current pool or default-pool attributes), or a lane whose cases share one expensive
    /// answer (a child process's observations).
    pub lane: Option<&'static str>,
    pub crash: Option<Crash>,
    /// Long-running: scheduled first so that it overlaps the many short ones.
    pub slow: bool,
    /// Runs with no other trial in its process (it compares process-wide counts such as open fds).
    /// Workers run one trial at a time anyway; this matters when trials share one process.
    pub alone: bool,
    pub body: Body,
}

/// The lane of cases that change device state visible to the whole process.
pub const SERIAL: &str = "serial";

impl Case {
    pub fn new(
        api: u32,
        name: impl Into<String>,
        needs: &[Cap],
        body: impl Fn(&Env) -> R + Send + Sync + 'static,
    ) -> Case {
        Case {
            group: Group::Api(api),
            name: name.into(),
            needs: needs.to_vec(),
            per: if needs.contains(&Cap::Gpu) {
                Per::Device
            } else {
                Per::Once
            },
            dev: 0,
            peer: None,
            multi: Vec::new(),
            suffix: String::new(),
            lane: None,
            crash: None,
            slow: false,
            alone: false,
            body: Arc::new(body),
        }
    }
    pub fn gpu(api: u32, name: impl Into<String>, body: impl Fn(&Env) -> R + Send + Sync + 'static) -> Case {
        Self::new(api, name, &[Cap::Gpu], body)
    }
    /// A case of another group (harness, suite): once per run, on device 0.
    pub fn of(
        group: Group,
        name: impl Into<String>,
        needs: &[Cap],
        body: impl Fn(&Env) -> R + Send + Sync + 'static,
    ) -> Case {
        Case {
            group,
            per: Per::Once,
            ..Self::new(0, name, needs, body)
        }
    }
    /// Runs on every ordered peer-capable pair (needs `peer`).
    pub fn pair(mut self) -> Case {
        self.per = Per::Pair;
        self.needs(Cap::Peer)
    }
    /// Runs once over three or more devices that all reach each other (needs `multi-peer`).
    pub fn multi(mut self) -> Case {
        self.per = Per::Multi;
        self.needs(Cap::MultiPeer)
    }
    pub fn needs(mut self, cap: Cap) -> Case {
        self.needs.push(cap);
        self
    }
    pub fn lane(mut self, lane: &'static str) -> Case {
        self.lane = Some(lane);
        self
    }
    pub fn serial(self) -> Case {
        self.lane(SERIAL)
    }
    /// The driver crashes on this input: see [`Crash`]. The body returns Ok when the call returned
    /// the documented code instead (the driver no longer crashes).
    pub fn crashes(mut self, signals: &'static [i32], documented: CUresult, seen_on: &'static str) -> Case {
        self.crash = Some(Crash {
            signals,
            documented,
            seen_on,
            branches: (580, 580),
        });
        self
    }
    pub fn slow(mut self) -> Case {
        self.slow = true;
        self
    }
    pub fn alone(mut self) -> Case {
        self.alone = true;
        self
    }
    /// `820_cuMemAllocAsync::case`, `…::serial::case`, `harness::case`, `suite::case`.
    pub fn trial_name(&self) -> String {
        match (self.group, self.lane) {
            (Group::Api(_), Some(SERIAL)) => format!("{}::serial::{}{}", self.group.label(), self.name, self.suffix),
            _ => format!("{}::{}{}", self.group.label(), self.name, self.suffix),
        }
    }
    /// Why this case cannot run on `m`, if it cannot.
    pub fn missing(&self, m: &Machine) -> Option<(Cap, String)> {
        self.needs.iter().find_map(|c| {
            let r = match c {
                // A spread pair case has its pair by construction; an unspread one has none.
                Cap::Peer if self.per == Per::Pair => match self.peer {
                    Some(_) => m.has_on(Cap::Gpu, self.dev),
                    None => Err("no two devices this run uses share peer access".to_string()),
                },
                _ => m.has_on(*c, self.dev),
            };
            r.err().map(|why| (*c, why))
        })
    }
    /// This case spread over a run's devices.
    pub fn spread(&self, sel: &crate::devices::Selection) -> Vec<Case> {
        let one = |dev: CUdevice, peer: Option<CUdevice>, multi: Vec<CUdevice>, suffix: String| Case {
            dev,
            peer,
            multi,
            suffix,
            ..self.clone()
        };
        let first = sel.devices.first().copied().unwrap_or(0);
        match self.per {
            Per::Once => vec![self.clone()],
            Per::Device if sel.devices.is_empty() => vec![self.clone()],
            Per::Device => sel
                .devices
                .iter()
                .map(|&d| {
                    let suffix = if sel.explicit {
                        format!("::dev{d}")
                    } else {
                        String::new()
                    };
                    one(d, None, vec![], suffix)
                })
                .collect(),
            Per::Pair if sel.pairs.is_empty() => vec![one(first, None, vec![], String::new())],
            Per::Pair => sel
                .pairs
                .iter()
                .map(|&(a, b)| {
                    let suffix = if sel.explicit {
                        format!("::dev{a}_dev{b}")
                    } else {
                        String::new()
                    };
                    one(a, Some(b), vec![], suffix)
                })
                .collect(),
            Per::Multi => {
                let dev = sel.multi.first().copied().unwrap_or(first);
                vec![one(dev, None, sel.multi.clone(), String::new())]
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    Passed,
    Failed,
    Ignored,
    /// A crash case whose call returned the documented code instead of crashing, or a declared
    /// departure of the driver that no longer reproduces: not a failure, but a change from the
    /// driver the expectation was written against, shown as such.
    Changed,
    /// A failure the user's expectation file lists (CONFORMANCE_EXPECT): reported, not failing.
    Expected,
}
impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Ignored => "ignored",
            Outcome::Changed => "changed",
            Outcome::Expected => "expected-failure",
        }
    }
    pub fn parse(s: &str) -> Option<Outcome> {
        [
            Outcome::Passed,
            Outcome::Failed,
            Outcome::Ignored,
            Outcome::Changed,
            Outcome::Expected,
        ]
        .into_iter()
        .find(|o| o.as_str() == s)
    }
}

/// One trial's result, for the report.
#[derive(Clone, Debug)]
pub struct Record {
    pub trial: String,
    pub group: Group,
    pub outcome: Outcome,
    pub message: String,
    /// For a failure: the API held responsible (`blame.rs`), when it is not the trial's own.
    pub blame: Option<u32>,
    pub secs: f64,
    pub notes: Vec<String>,
    /// The trial needs a device, and the process running it answered (did not die or hang).
    pub device_answer: bool,
    /// The device a single-device trial ran on (the owner, for pair and multi-device trials).
    pub dev: Option<CUdevice>,
    /// How the case spreads over devices.
    pub per: Per,
    /// The trial's checked calls (`observe.rs`).
    pub observations: Vec<crate::observe::Observation>,
    /// When the trial started and ended, in seconds since the run started (0 when not run).
    pub span: (f64, f64),
}
impl Record {
    /// The API this record counts against in the report: a failure's blame, else its own API.
    pub fn counted_api(&self) -> Option<u32> {
        match (self.outcome, self.group) {
            (Outcome::Failed, Group::Api(own)) => Some(self.blame.unwrap_or(own)),
            _ => self.group.api(),
        }
    }
}
pub static RECORDS: Mutex<Vec<Record>> = Mutex::new(Vec::new());
/// When the run started (the coordinator sets it first thing), for the trials' spans.
pub static RUN_START: OnceLock<Instant> = OnceLock::new();

/// Seconds since the run started.
pub fn since_start() -> f64 {
    RUN_START.get_or_init(Instant::now).elapsed().as_secs_f64()
}
/// How many scheduled trials have completed (in-process mode's `suite::no_leaks` waits on it).
pub static COMPLETED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// What one execution of a case's body came to, in the process that ran it.
#[derive(Clone, Debug)]
pub struct Answer {
    pub outcome: Outcome,
    pub message: String,
    pub blame: Option<u32>,
    pub secs: f64,
    pub notes: Vec<String>,
    pub observations: Vec<crate::observe::Observation>,
}
impl Answer {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::        json!({"outcome": self.outcome.as_str(), "message": self.message,
            "blame": self.blame, "secs": self.secs, "notes": self.notes,
            "observations": self.observations.iter().map(|o| o.to_json()).collect::<Vec<_>>()})
    }
    pub fn from_json(j: &serde_json::Value) -> Result<Answer, String> {
        Ok(Answer {
            outcome: j["outcome"]
                .as_str()
                .and_then(Outcome::parse)
                .ok_or_else(|| format!("worker answer without an outcome: {j}"))?,
            message: j["message"].as_str().unwrap_or("").to_string(),
            blame: j["blame"].as_u64().map(|b| b as u32),
            secs: j["secs"].as_f64().unwrap_or(0.0),
            notes: j["notes"]
                .as_array()
                .map(|a| a.iter().filter_map(|n| n.as_str().map(String::from)).collect())
                .unwrap_or_default(),
            observations: j["observations"]
                .as_array()
                .map(|a| a.iter().map(crate::observe::Observation::from_json).collect())
                .unwrap_or_default(),
        })
    }
}

/// Test-only: CONFORMANCE_CRASH_TRIAL=<trial name> makes that trial crash its process on purpose
/// (cuMemPoolSetAttribute with a NULL value, then abort), to show that a crash costs one trial.
pub const CRASH_ENV: &str = "CONFORMANCE_CRASH_TRIAL";

fn crash_in_process(env: &Env) -> ! {
    env.bind();
    eprintln!("{CRASH_ENV}: crashing this process on purpose");
    if let Ok(p) = crate::driver::Pool::on_device(env.dev) {
        let a = CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
        let _ = unsafe { cuMemPoolSetAttribute(p.0, a, std::ptr::null_mut()) };
    }
    std::process::abort();
}

/// Run a case's body here, now: capability check, blame and notes reset, panics caught.
pub fn execute(case: &Case, env: &Env) -> Answer {
    let env = &env.for_case(case);
    let name = case.trial_name();
    crate::blame::reset();
    let _ = crate::driver::take_notes();
    let _ = crate::observe::take();
    crate::ledger::set_trial(&name);
    let start = Instant::now();
    let answer = |outcome, message: String| {
        let (observations, dropped) = crate::observe::take();
        let mut notes = crate::driver::take_notes();
        if dropped > 0 {
            notes.push(format!("{dropped} more checked calls not recorded"));
        }
        Answer {
            outcome,
            message,
            blame: crate::blame::get().filter(|b| Some(*b) != case.group.api()),
            secs: start.elapsed().as_secs_f64(),
            notes,
            observations,
        }
    };
    if let Some((cap, why)) = case.missing(&env.m) {
        return answer(Outcome::Ignored, format!("needs `{}`: {why}", cap.name()));
    }
    if std::env::var(CRASH_ENV).as_deref() == Ok(name.as_str()) {
        crash_in_process(env);
    }
    env.bind();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (case.body)(env)));
    crate::ledger::set_trial("");
    match result {
        Ok(Ok(())) => answer(Outcome::Passed, String::new()),
        Ok(Err(e)) if e.starts_with(crate::driver::IGNORE) => {
            answer(Outcome::Ignored, e[crate::driver::IGNORE.len()..].to_string())
        }
        Ok(Err(e)) if e.starts_with(crate::deviations::CHANGED) => {
            answer(Outcome::Changed, e[crate::deviations::CHANGED.len()..].to_string())
        }
        Ok(Err(e)) => answer(Outcome::Failed, e),
        Err(p) => {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            answer(Outcome::Failed, format!("the case panicked: {what}"))
        }
    }
}

/// What came back from the process that ran a trial.
#[derive(Debug)]
pub enum Raw {
    Answer(Answer),
    /// The process died while running the trial (`signal` if a signal ended it).
    Died {
        how: String,
        signal: Option<i32>,
        inside: Option<(u32, String)>,
        log: String,
        secs: f64,
    },
    /// No answer within the deadline; the process was killed.
    Hung {
        secs: f64,
        inside: Option<(u32, String)>,
        log: String,
    },
    /// The trial could not be run at all (no worker could be started, say).
    Broken(String),
}

pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return format!("signal {sig}"),
    };
    format!("{name} ({sig})")
}

fn inside_text(inside: &Option<(u32, String)>) -> String {
    match inside {
        Some((api, sym)) => format!(" inside {sym} ({api})"),
        None => String::new(),
    }
}

fn with_log(msg: String, log: &str) -> String {
    if log.trim().is_empty() {
        format!("{msg}; it wrote nothing to stderr during this trial")
    } else {
        format!("{msg}; the last lines it wrote:\n{}", log.trim_end())
    }
}

/// The verdict: what came back, judged against what the case expects (a crash, or an answer).
pub fn judge(case: &Case, raw: Raw) -> Record {
    let observations = match &raw {
        Raw::Answer(a) => a.observations.clone(),
        _ => Vec::new(),
    };
    let mut r = judge_raw(case, raw);
    r.observations = observations;
    r
}

fn judge_raw(case: &Case, raw: Raw) -> Record {
    let answered = matches!(raw, Raw::Answer(_)) && case.needs.contains(&Cap::Gpu);
    let rec = |outcome, message: String, blame: Option<u32>, secs, notes| Record {
        trial: case.trial_name(),
        group: case.group,
        outcome,
        message,
        blame: blame.filter(|b| Some(*b) != case.group.api()),
        secs,
        notes,
        device_answer: answered,
        span: (0.0, 0.0),
        dev: Some(case.dev),
        per: case.per,
        observations: vec![],
    };
    let own = case.group.api();
    // A crash expected on other drivers: here the documented code is expected, and a crash fails.
    let crash = case.crash.filter(|c| crate::deviations::in_branches(c.branches));
    if let (
        Some(c),
        None,
        Raw::Died {
            how, inside, log, secs, ..
        },
    ) = (case.crash, crash, &raw)
    {
        let (version, _) = crate::deviations::driver();
        return rec(
            Outcome::Failed,
            with_log(
                format!(
                    "the process {how}{} on driver {version}; the crash by {} was declared for driver branches \
                     {}–{} ({}), elsewhere the documented {} is expected",
                    inside_text(inside),
                    signal_names(c.signals),
                    c.branches.0,
                    c.branches.1,
                    c.seen_on,
                    crate::driver::code_name(c.documented)
                ),
                log,
            ),
            own,
            *secs,
            vec![],
        );
    }
    match (crash, raw) {
        (_, Raw::Broken(e)) => rec(Outcome::Failed, format!("could not run: {e}"), None, 0.0, vec![]),
        (
            Some(c),
            Raw::Died {
                signal: Some(s),
                secs,
                inside,
                ..
            },
        ) if c.signals.contains(&s) => rec(
            Outcome::Passed,
            String::new(),
            None,
            secs,
            vec![format!(
                "crashed by {}{} as seen on {}",
                signal_name(s),
                inside_text(&inside),
                c.seen_on
            )],
        ),
        // The expected crash did not come: the case's own API answers for it.
        (
            Some(c),
            Raw::Died {
                how, inside, log, secs, ..
            },
        ) => rec(
            Outcome::Failed,
            with_log(
                format!(
                    "expected a crash by {} (as seen on {}), but the process {how}{}",
                    signal_names(c.signals),
                    c.seen_on,
                    inside_text(&inside)
                ),
                &log,
            ),
            own,
            secs,
            vec![],
        ),
        (Some(c), Raw::Hung { secs, inside, log }) => rec(
            Outcome::Failed,
            with_log(
                format!(
                    "no answer after {secs:.0} s{}: a hang, not the crash by {} seen on {}",
                    inside_text(&inside),
                    signal_names(c.signals),
                    c.seen_on
                ),
                &log,
            ),
            own,
            secs,
            vec![],
        ),
        (Some(c), Raw::Answer(a)) => match a.outcome {
            Outcome::Passed => rec(
                Outcome::Changed,
                format!(
                    "no longer crashes: returned the documented {} where {} crashed by {}",
                    crate::driver::code_name(c.documented),
                    c.seen_on,
                    signal_names(c.signals)
                ),
                None,
                a.secs,
                a.notes,
            ),
            Outcome::Failed => rec(
                Outcome::Failed,
                format!(
                    "neither crashed (by {}, as on {}) nor returned the documented {}: {}",
                    signal_names(c.signals),
                    c.seen_on,
                    crate::driver::code_name(c.documented),
                    a.message
                ),
                a.blame,
                a.secs,
                a.notes,
            ),
            o => rec(o, a.message, a.blame, a.secs, a.notes),
        },
        (None, Raw::Answer(a)) => rec(a.outcome, a.message, a.blame, a.secs, a.notes),
        (
            None,
            Raw::Died {
                how, inside, log, secs, ..
            },
        ) => rec(
            Outcome::Failed,
            with_log(
                format!("the process running this trial {how}{}", inside_text(&inside)),
                &log,
            ),
            inside.map(|i| i.0),
            secs,
            vec![],
        ),
        (None, Raw::Hung { secs, inside, log }) => rec(
            Outcome::Failed,
            with_log(
                format!(
                    "no answer after {secs:.0} s{}; the process was killed",
                    inside_text(&inside)
                ),
                &log,
            ),
            inside.map(|i| i.0),
            secs,
            vec![],
        ),
    }
}

/// CONFORMANCE_REQUIRE=gpu,ipc,...: capabilities whose absence is a failure, not an ignore.
pub fn required_caps() -> Result<Vec<Cap>, String> {
    let Ok(v) = std::env::var("CONFORMANCE_REQUIRE") else {
        return Ok(vec![]);
    };
    let mut caps = Vec::new();
    for name in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match ALL_CAPS.iter().find(|c| c.1 == name) {
            Some(c) => caps.push(c.0),
            None => {
                let known: Vec<&str> = ALL_CAPS.iter().map(|c| c.1).collect();
                return Err(format!(
                    "CONFORMANCE_REQUIRE={v:?}: unknown capability {name:?}; known: {} (comma-separated)",
                    known.join(", ")
                ));
            }
        }
    }
    Ok(caps)
}

pub const DEFAULT_TRIAL_TIMEOUT: Duration = Duration::from_secs(60);

/// CONFORMANCE_TRIAL_TIMEOUT=SECS: how long one trial may go without an answer.
pub fn trial_timeout() -> Result<Duration, String> {
    match std::env::var("CONFORMANCE_TRIAL_TIMEOUT") {
        Err(_) => Ok(DEFAULT_TRIAL_TIMEOUT),
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(s) if (1.0..=86400.0).contains(&s) => Ok(Duration::from_secs_f64(s)),
            _ => Err(format!(
                "CONFORMANCE_TRIAL_TIMEOUT={v:?}: expected a number of seconds from 1 to 86400 (default {})",
                DEFAULT_TRIAL_TIMEOUT.as_secs()
            )),
        },
    }
}

/// A crash case's bound: it should die at once, and a hang must not cost a full trial deadline.
pub fn crash_timeout(trial: Duration) -> Duration {
    trial.min(Duration::from_secs(20))
}

pub const CHILD_ENV: &str = "CONFORMANCE_CHILD";
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(60);

/// Output of a child run of this same binary.
pub struct ChildOut {
    pub status: Option<std::process::ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub timeout: Duration,
    /// The tracked call it was inside when it died or was killed.
    pub inside: Option<(u32, String)>,
}
impl ChildOut {
    pub fn signal(&self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        self.status.and_then(|s| s.signal())
    }
    pub fn describe(&self) -> String {
        let how = if self.timed_out {
            format!("gave no answer within {} s and was killed", self.timeout.as_secs())
        } else if let Some(sig) = self.signal() {
            format!("died by {}", signal_name(sig))
        } else {
            format!("exited with {:?}", self.status.and_then(|s| s.code()))
        };
        let err = self.stderr.trim();
        format!(
            "child {how}{}{}",
            inside_text(&self.inside),
            if err.is_empty() {
                String::new()
            } else {
                format!("; its stderr:\n{err}")
            }
        )
    }
}

/// Make a child die with the thread that started it (Linux), so that a worker killed for hanging
/// takes its own children with it.
pub fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    extern "C" {
        fn prctl(option: i32, arg2: u64, ...) -> i32;
        fn setrlimit(resource: i32, rlim: *const [u64; 2]) -> i32;
    }
    const PR_SET_PDEATHSIG: i32 = 1;
    const RLIMIT_CORE: i32 = 4;
    // SAFETY: prctl and setrlimit are async-signal-safe; they only set limits of the new process.
    // No core files either: children crash on purpose (see `channel::spawn_role`).
    unsafe {
        cmd.pre_exec(|| {
            prctl(PR_SET_PDEATHSIG, 9);
            setrlimit(RLIMIT_CORE, &[0, 0]);
            Ok(())
        });
    }
}

/// Re-run this binary in a child role, with a bounded wait; the child is always reaped.
pub fn run_child(role: &str, envs: &[(&str, &str)]) -> Result<ChildOut, String> {
    run_child_for(role, envs, CHILD_TIMEOUT)
}

/// [`run_child`] with its own bound.
pub fn run_child_for(role: &str, envs: &[(&str, &str)], timeout: Duration) -> Result<ChildOut, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;
    let crumb = crate::crumb::Crumb::new()?;
    let crumb_fd = crumb.raw_fd();
    let mut cmd = Command::new(exe);
    cmd.env(CHILD_ENV, role)
        .env(crate::crumb::ENV, "1")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    die_with_parent(&mut cmd);
    {
        use std::os::unix::process::CommandExt;
        extern "C" {
            fn dup2(old: i32, new: i32) -> i32;
        }
        // SAFETY: only dup2 (async-signal-safe) runs between fork and exec; fd 4 was not one of
        // the pipes (those are placed at 0-2 by std after pre_exec hooks only for stdio).
        unsafe {
            cmd.pre_exec(move || {
                if crumb_fd != crate::crumb::CHILD_FD && dup2(crumb_fd, crate::crumb::CHILD_FD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot start child {role:?}: {e}"))?;
    // Drain both pipes on threads so a chatty child cannot block on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let to = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let te = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let (status, timed_out) = match child.wait_timeout(timeout).map_err(|e| e.to_string())? {
        Some(s) => (Some(s), false),
        None => {
            let _ = child.kill();
            (child.wait().ok(), true)
        }
    };
    let ok = status.is_some_and(|s| s.success());
    Ok(ChildOut {
        status,
        stdout: to.join().unwrap_or_default(),
        stderr: te.join().unwrap_or_default(),
        timed_out,
        timeout,
        inside: if ok { None } else { crumb.read() },
    })
}

/// In-process mode: a crash case runs in a fresh child of this binary (role `case:TRIAL`).
fn run_isolated(case: &Case, timeout: Duration) -> Raw {
    let start = Instant::now();
    match run_child_for(&format!("case:{}", case.trial_name()), &[], timeout) {
        Err(e) => Raw::Broken(e),
        Ok(out) => {
            let secs = start.elapsed().as_secs_f64();
            if out.timed_out {
                return Raw::Hung {
                    secs,
                    inside: out.inside,
                    log: out.stderr,
                };
            }
            match (out.signal(), out.stdout.lines().rev().find(|l| l.starts_with('{'))) {
                (None, Some(line)) => match serde_json::from_str(line)
                    .map_err(|e| e.to_string())
                    .and_then(|j| Answer::from_json(&j))
                {
                    Ok(a) => Raw::Answer(a),
                    Err(e) => Raw::Broken(e),
                },
                (sig, _) => Raw::Died {
                    how: out.describe(),
                    signal: sig,
                    inside: out.inside,
                    log: String::new(),
                    secs,
                },
            }
        }
    }
}

/// Child role `case:TRIAL` (in-process mode's crash isolation): run one case, print its answer.
pub fn child_case(env: &Env, cases: &[Case], trial: &str) -> i32 {
    let Some(c) = cases.iter().find(|c| c.trial_name() == trial) else {
        eprintln!("no case named {trial}");
        return 2;
    };
    println!("{}", execute(c, env).to_json());
    0
}

/// How trials reach the driver.
pub enum Runner {
    /// In worker processes (the default): see `scheduler.rs`.
    Workers(Arc<crate::scheduler::Scheduler>),
    /// In this process's test threads (under nextest, which gives each trial its own process, or
    /// with CONFORMANCE_WORKERS=0). Crash cases still run in a child.
    InProcess { env: Arc<Env>, timeout: Duration },
}

type LaneLocks = Mutex<std::collections::BTreeMap<&'static str, Arc<Mutex<()>>>>;
static LANES: OnceLock<LaneLocks> = OnceLock::new();
static ALONE: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn lane_lock(lane: &'static str) -> Arc<Mutex<()>> {
    LANES
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(lane)
        .or_default()
        .clone()
}

impl Runner {
    fn run(&self, case: &Case) -> Record {
        match self {
            Runner::Workers(s) => s.wait(&case.trial_name()),
            Runner::InProcess { env, timeout } => {
                let begin = since_start();
                let raw = if case.crash.is_some() {
                    let _shared = ALONE.read().unwrap_or_else(|p| p.into_inner());
                    run_isolated(case, crash_timeout(*timeout))
                } else {
                    let lane = case.lane.map(lane_lock);
                    let _lane = lane.as_ref().map(|l| l.lock().unwrap_or_else(|p| p.into_inner()));
                    let (_alone, _shared);
                    if case.alone {
                        _alone = ALONE.write().unwrap_or_else(|p| p.into_inner());
                    } else {
                        _shared = ALONE.read().unwrap_or_else(|p| p.into_inner());
                    }
                    Raw::Answer(execute(case, env))
                };
                let mut r = judge(case, raw);
                r.span = (begin, since_start());
                r
            }
        }
    }
}

/// Which cases libtest-mimic will run: not filtered out, and not ignored up front.
pub fn will_run(case: &Case, m: &Machine, required: &[Cap], args: &libtest_mimic::Arguments) -> bool {
    let t = Trial::test(case.trial_name(), || Ok(())).with_ignored_flag(ignored_up_front(case, m, required).is_some());
    !args.is_filtered_out(&t) && !args.is_ignored(&t)
}

/// A missing capability that is not required: the trial is ignored before it runs.
fn ignored_up_front(case: &Case, m: &Machine, required: &[Cap]) -> Option<String> {
    case.missing(m)
        .filter(|(c, _)| !required.contains(c))
        .map(|(c, why)| format!("needs `{}`: {why}", c.name()))
}

fn record(r: Record) {
    if r.outcome == Outcome::Failed {
        // Printed now as well: the reader sees it next to the trial's line.
        eprintln!("FAILED {}: {}", r.trial, r.message);
    }
    if r.outcome == Outcome::Changed {
        println!("CHANGED {}: {}", r.trial, r.message);
    }
    if r.outcome == Outcome::Expected {
        println!("EXPECTED FAILURE {}: {}", r.trial, r.message);
    }
    RECORDS.lock().unwrap().push(r);
}

/// Turn cases into libtest-mimic trials. A missing capability that is not required ignores the
/// trial up front (every runner shows it as ignored, nextest too), its reason recorded; a missing
/// required one fails it. The others are run by `runner` and judged.
pub fn trials(
    m: &Machine,
    cases: Vec<Arc<Case>>,
    required: &[Cap],
    args: &libtest_mimic::Arguments,
    runner: Arc<Runner>,
) -> Vec<Trial> {
    cases
        .into_iter()
        .map(|c| {
            let name = c.trial_name();
            let up_front = ignored_up_front(&c, m, required);
            let required_missing = c.missing(m).filter(|(cap, _)| required.contains(cap));
            let runner = runner.clone();
            let case = c.clone();
            let trial = Trial::ignorable_test(name.clone(), move || -> Result<Completion, Failed> {
                let r = match &required_missing {
                    Some((cap, why)) => Record {
                        trial: case.trial_name(),
                        group: case.group,
                        outcome: Outcome::Failed,
                        message: format!(
                            "required capability `{}` missing (CONFORMANCE_REQUIRE): {why}",
                            cap.name()
                        ),
                        blame: None,
                        secs: 0.0,
                        notes: vec![],
                        device_answer: false,
                        span: (0.0, 0.0),
                        dev: Some(case.dev),
                        per: case.per,
                        observations: vec![],
                    },
                    None => {
                        let r = runner.run(&case);
                        COMPLETED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        r
                    }
                };
                let mut r = r;
                if let Ok(Some(known)) = crate::expect::load() {
                    known.apply(&mut r);
                }
                let result = match r.outcome {
                    Outcome::Passed | Outcome::Changed | Outcome::Expected => Ok(Completion::Completed),
                    Outcome::Ignored => Ok(Completion::ignored_with(r.message.clone())),
                    Outcome::Failed => Err(r.message.clone().into()),
                };
                record(r);
                result
            });
            match up_front {
                Some(reason) => {
                    let t = trial.with_ignored_flag(true);
                    if !args.is_filtered_out(&t) && !args.include_ignored && !args.ignored {
                        RECORDS.lock().unwrap().push(Record {
                            trial: name,
                            group: c.group,
                            outcome: Outcome::Ignored,
                            message: reason,
                            blame: None,
                            secs: 0.0,
                            notes: vec![],
                            device_answer: false,
                            span: (0.0, 0.0),
                            dev: Some(c.dev),
                            per: c.per,
                            observations: vec![],
                        });
                    }
                    t
                }
                None => trial,
            }
        })
        .collect()
}

/// Lazily computed, shared result of one expensive observation (several trials read one child's
/// answers). Cases that share one belong to one lane, so it is computed once per run. A failure is
/// kept with its blame, which every trial that reads it then carries; a success leaves no blame on
/// the trial that happened to compute it.
pub struct Shared<T>(OnceLock<Result<T, (String, Option<u32>)>>);
impl<T> Shared<T> {
    pub const fn new() -> Self {
        Shared(OnceLock::new())
    }
    pub fn get(&self, f: impl FnOnce() -> Result<T, String>) -> Result<&T, String> {
        let r = self.0.get_or_init(|| {
            let before = crate::blame::get();
            let r = f().map_err(|e| (e, crate::blame::get()));
            crate::blame::reset();
            if let Some(b) = before {
                crate::blame::set(b);
            }
            r
        });
        match r {
            Ok(v) => Ok(v),
            Err((e, blame)) => {
                if let Some(b) = blame {
                    crate::blame::set(*b);
                }
                Err(e.clone())
            }
        }
    }
}
impl<T> Default for Shared<T> {
    fn default() -> Self {
        Self::new()
    }
}
