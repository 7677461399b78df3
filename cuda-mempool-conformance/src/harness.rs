//! Cases → libtest-mimic trials, strict mode, child-process isolation, and the report.

use crate::driver::R;
use crate::probe::{Cap, Machine, ALL_CAPS};
use crate::cu::*;
use libtest_mimic::{Completion, Failed, Trial};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use wait_timeout::ChildExt;

/// What a case gets: the probed machine and device 0 (its primary context is current).
pub struct Env {
    pub m: Machine,
    pub dev: CUdevice,
}
impl Env {
    /// Make device 0's primary context current on this thread.
    pub fn bind(&self) {
        if self.m.ctx != 0 {
            let _ = unsafe { cuCtxSetCurrent(self.m.ctx as CUcontext) };
        }
    }
}

pub type Body = Arc<dyn Fn(&Env) -> R + Send + Sync>;

/// How a case runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// In a test thread, in parallel with others.
    Parallel,
    /// In a test thread, holding the device-state lock (changes the current or default pool).
    Serial,
    /// In a fresh child process: inputs that may crash the driver.
    Child,
    /// In a fresh child process, and the driver is known to crash on it: passes iff the child dies
    /// by a signal. The case's name says so.
    ChildCrashes,
    /// Alone: no other trial runs meanwhile (process-wide counts such as open fds).
    Exclusive,
}

pub struct Case {
    pub api: u32,
    pub name: String,
    pub needs: Vec<Cap>,
    pub mode: Mode,
    pub body: Body,
}

impl Case {
    pub fn new(
        api: u32,
        name: impl Into<String>,
        needs: &[Cap],
        body: impl Fn(&Env) -> R + Send + Sync + 'static,
    ) -> Case {
        Case {
            api,
            name: name.into(),
            needs: needs.to_vec(),
            mode: Mode::Parallel,
            body: Arc::new(body),
        }
    }
    pub fn gpu(api: u32, name: impl Into<String>, body: impl Fn(&Env) -> R + Send + Sync + 'static) -> Case {
        Self::new(api, name, &[Cap::Gpu], body)
    }
    pub fn mode(mut self, mode: Mode) -> Case {
        self.mode = mode;
        self
    }
    pub fn needs(mut self, cap: Cap) -> Case {
        self.needs.push(cap);
        self
    }
    /// `820_cuMemAllocAsync::case` (serialised cases: `…::serial::case`).
    pub fn trial_name(&self) -> String {
        let api = crate::api_name(self.api);
        match self.mode {
            Mode::Serial => format!("{}_{}::serial::{}", self.api, api, self.name),
            _ => format!("{}_{}::{}", self.api, api, self.name),
        }
    }
}

/// One trial's outcome, for the report.
#[derive(Clone, Debug)]
pub struct Record {
    pub api: u32,
    pub trial: String,
    pub outcome: &'static str,
    pub message: String,
}
pub static RECORDS: Mutex<Vec<Record>> = Mutex::new(Vec::new());

/// Every trial holds this for reading; an Exclusive trial holds it for writing.
static EXCLUSIVE: std::sync::RwLock<()> = std::sync::RwLock::new(());

thread_local! {
    static SERIAL_JOB: std::cell::RefCell<Option<Box<dyn FnOnce() -> R>>> = const { std::cell::RefCell::new(None) };
}

/// serial_test's attribute takes functions without parameters; the job travels by thread-local
/// (the attribute runs the body on the calling thread).
#[serial_test::serial(device_state)]
fn run_serial_job() -> R {
    SERIAL_JOB.with(|j| j.borrow_mut().take()).map_or(Ok(()), |job| job())
}

/// Runs `f` holding serial_test's `device_state` lock: trials that change the current pool or
/// default-pool attributes never overlap each other.
fn serially(f: impl FnOnce() -> R + 'static) -> R {
    SERIAL_JOB.with(|j| *j.borrow_mut() = Some(Box::new(f)));
    run_serial_job()
}

fn record(api: u32, trial: &str, outcome: &'static str, message: String) {
    RECORDS.lock().unwrap().push(Record {
        api,
        trial: trial.into(),
        outcome,
        message,
    });
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

pub const CHILD_ENV: &str = "CONFORMANCE_CHILD";

/// Test-only: CONFORMANCE_CRASH_TRIAL=<trial name> makes that trial call an API that crashes the
/// driver in-process instead of running its case, to show that under `cargo nextest` (one process
/// per trial) it fails alone.
pub const CRASH_ENV: &str = "CONFORMANCE_CRASH_TRIAL";

/// cuMemPoolSetAttribute with a NULL value crashes R580 (`832 null_value_crashes_driver`); abort
/// if this driver survives it, so the switch always crashes.
fn crash_in_process(env: &Env) {
    env.bind();
    eprintln!("{CRASH_ENV}: crashing this process on purpose");
    if let Ok(p) = crate::driver::Pool::on_device(env.dev) {
        let a = CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
        let _ = unsafe { cuMemPoolSetAttribute(p.0, a, std::ptr::null_mut()) };
    }
    std::process::abort();
}
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(60);

/// Output of a child run of this same binary.
pub struct ChildOut {
    pub status: Option<std::process::ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}
impl ChildOut {
    pub fn signal(&self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        self.status.and_then(|s| s.signal())
    }
    pub fn describe(&self) -> String {
        let how = if self.timed_out {
            format!("timed out after {}s and was killed", CHILD_TIMEOUT.as_secs())
        } else if let Some(sig) = self.signal() {
            format!("died by signal {sig}")
        } else {
            format!("exited with {:?}", self.status.and_then(|s| s.code()))
        };
        let err = self.stderr.trim();
        format!(
            "child {how}{}",
            if err.is_empty() {
                String::new()
            } else {
                format!("; its stderr:\n{err}")
            }
        )
    }
}

/// Re-run this binary in a child role, with a bounded wait; the child is always reaped.
pub fn run_child(role: &str, envs: &[(&str, &str)]) -> Result<ChildOut, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;
    let mut child = Command::new(exe)
        .env(CHILD_ENV, role)
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start child {role:?}: {e}"))?;
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
    let (status, timed_out) = match child.wait_timeout(CHILD_TIMEOUT).map_err(|e| e.to_string())? {
        Some(s) => (Some(s), false),
        None => {
            let _ = child.kill();
            (child.wait().ok(), true)
        }
    };
    Ok(ChildOut {
        status,
        stdout: to.join().unwrap_or_default(),
        stderr: te.join().unwrap_or_default(),
        timed_out,
    })
}

/// Run a `Mode::Child` case in a child and judge it.
fn run_isolated(trial: &str, expect_crash: bool) -> R {
    let out = run_child(&format!("case:{trial}"), &[])?;
    match (expect_crash, out.signal(), out.status.and_then(|s| s.code())) {
        (true, Some(_), _) => Ok(()),
        (true, None, _) => Err(format!(
            "expected the driver to crash on this input, but the {}",
            out.describe()
        )),
        (false, None, Some(0)) if !out.timed_out => Ok(()),
        (false, None, Some(1)) => Err(out.stderr.trim().to_string()),
        _ => Err(out.describe()),
    }
}

/// In a child: run one case by trial name. Exit 0 = passed, 1 = failed (message on stderr).
pub fn child_case(env: &Env, cases: &[Case], trial: &str) -> i32 {
    let Some(c) = cases.iter().find(|c| c.trial_name() == trial) else {
        eprintln!("no case named {trial}");
        return 2;
    };
    env.bind();
    match (c.body)(env) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{e}");
            1
        }
    }
}

/// Turn cases into trials: check capabilities (ignored with reason, or failure in strict mode),
/// bind the context, serialise or isolate as the case asks, and record each outcome.
///
/// A trial whose capability is missing (and not required) is marked ignored up front, so every
/// runner shows it as ignored (nextest too, as skipped); its reason is recorded unless a filter left
/// it out, and printed at the end. With `--include-ignored` it runs and ignores itself at run time.
pub fn trials(env: Arc<Env>, cases: Vec<Case>, required: &[Cap], args: &libtest_mimic::Arguments) -> Vec<Trial> {
    let required = required.to_vec();
    cases
        .into_iter()
        .map(|c| {
            let name = c.trial_name();
            // A missing required capability is a failure at run time, never an ignore.
            let required_missing = c
                .needs
                .iter()
                .any(|cap| required.contains(cap) && env.m.has(*cap).is_err());
            let missing = c
                .needs
                .iter()
                .find_map(|cap| {
                    env.m
                        .has(*cap)
                        .err()
                        .map(|why| format!("needs `{}`: {why}", cap.name()))
                })
                .filter(|_| !required_missing);
            let env = env.clone();
            let required = required.clone();
            let trial_name = name.clone();
            let api = c.api;
            let trial = Trial::ignorable_test(name.clone(), move || -> Result<Completion, Failed> {
                for cap in &c.needs {
                    if let Err(why) = env.m.has(*cap) {
                        if required.contains(cap) {
                            let msg = format!(
                                "required capability `{}` missing (CONFORMANCE_REQUIRE): {why}",
                                cap.name()
                            );
                            record(c.api, &trial_name, "failed", msg.clone());
                            return Err(msg.into());
                        }
                        let reason = format!("needs `{}`: {why}", cap.name());
                        record(c.api, &trial_name, "ignored", reason.clone());
                        return Ok(Completion::ignored_with(reason));
                    }
                }
                if std::env::var(CRASH_ENV).as_deref() == Ok(trial_name.as_str()) {
                    crash_in_process(&env);
                }
                let _shared;
                let _alone;
                if c.mode == Mode::Exclusive {
                    _alone = EXCLUSIVE.write().unwrap_or_else(|p| p.into_inner());
                } else {
                    _shared = EXCLUSIVE.read().unwrap_or_else(|p| p.into_inner());
                }
                let result = match c.mode {
                    Mode::Child => run_isolated(&trial_name, false),
                    Mode::ChildCrashes => run_isolated(&trial_name, true),
                    Mode::Serial => {
                        let (env, body) = (env.clone(), c.body.clone());
                        serially(move || {
                            env.bind();
                            body(&env)
                        })
                    }
                    Mode::Parallel | Mode::Exclusive => {
                        env.bind();
                        (c.body)(&env)
                    }
                };
                match result {
                    Err(e) if e.starts_with(crate::driver::IGNORE) => {
                        let reason = e[crate::driver::IGNORE.len()..].to_string();
                        record(c.api, &trial_name, "ignored", reason.clone());
                        Ok(Completion::ignored_with(reason))
                    }
                    Ok(()) => {
                        record(c.api, &trial_name, "passed", String::new());
                        Ok(Completion::Completed)
                    }
                    Err(e) => {
                        // Printed now as well: a later crash of the process must not swallow it.
                        eprintln!("FAILED {trial_name}: {e}");
                        record(c.api, &trial_name, "failed", e.clone());
                        Err(e.into())
                    }
                }
            });
            match missing {
                Some(reason) => {
                    let t = trial.with_ignored_flag(true);
                    if !args.is_filtered_out(&t) && !args.include_ignored && !args.ignored {
                        record(api, &name, "ignored", reason);
                    }
                    t
                }
                None => trial,
            }
        })
        .collect()
}

/// Lazily computed, shared result of one child run (several trials read one child's answers).
pub struct Shared<T>(OnceLock<Result<T, String>>);
impl<T> Shared<T> {
    pub const fn new() -> Self {
        Shared(OnceLock::new())
    }
    pub fn get(&self, f: impl FnOnce() -> Result<T, String>) -> Result<&T, String> {
        self.0.get_or_init(f).as_ref().map_err(Clone::clone)
    }
}
impl<T> Default for Shared<T> {
    fn default() -> Self {
        Self::new()
    }
}
