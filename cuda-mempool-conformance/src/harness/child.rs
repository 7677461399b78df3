//! The one way to start a child of this same binary in a role: its environment, its breadcrumb and
//! inherited fds, its output drained, a bounded wait, and what it came to; and, while a trial
//! runs, when each child started and ended (its timeline).

use crate::driver::crumb::{self, Crumb};
use crate::driver::deadline::Deadline;
use conformance_model::ChildSpan;
use std::io::Read;
use std::os::fd::RawFd;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// The variable that names a child's role (`worker`, `probe`, `ipc-import`, `case:TRIAL`, …).
pub const CHILD_VAR: &str = "CONFORMANCE_CHILD";
/// The roles this binary runs in as a child, one table: the suite's `main` dispatches on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Start and exit: how long a child takes to start (and a warm-up).
    Noop,
    /// Probe the machine and print it (`harness::probe`).
    Probe,
    /// cuInit with every device hidden, and print its answer (`harness::probe`).
    HiddenInit,
    /// Every API before `cuInit` (`cases::uninit`).
    Uninit,
    /// Every API after `cuInit` found no device (`cases::uninit`).
    NoDevice,
    /// Run trials one at a time for the coordinator (`run::worker`).
    Worker,
    /// Import a pool and its pointers from an exporter, for each trial it is given (`cases::xproc`;
    /// a worker keeps it between trials, `harness::kept_children`).
    IpcImport,
    /// Answer the imported-pool rules one by one (`cases::xproc`).
    IpcRules,
    /// Import a pool and take one named scenario on it, for each trial it is given (`cases::xproc`).
    IpcScenario,
    /// Measure one pool call's address space in a fresh process (`cases::vaspace`).
    VaSpace,
    /// Import one pool or pointer from many threads at once (`cases::xproc`).
    IpcConcurrent,
    /// One kept importer for every kept role (`ipc-import`, `ipc-scenario`, `ipc-concurrent`):
    /// each trial's first message names the role it takes (`harness::kept_children`, `cases::xproc`).
    IpcKept,
    /// The IPC benchmark's importer (benches/allocator.rs; that binary alone has it).
    BenchIpc,
    /// Run one edge trial's rows from a row on, after one left its process stuck in the driver
    /// (`cases::edges`, `harness::bounded`).
    EdgeRows,
    /// Take another process of the run through the driver's checkpoint engine, or read or restore
    /// its state (`harness::checkpoint`).
    Checkpoint,
    /// Run one case and print its answer (in-process mode's crash isolation).
    Case(String),
}
impl Role {
    /// A helper of a trial (an importer, the rules' child), not one that runs trials or measures a
    /// process (workers, `case:TRIAL`, the probe, `vaspace`): it may start with fewer hardware
    /// connections (`settings::parse::helper_connections`). None holds a stream that another of its
    /// streams must pass (822's `free_held` holds the importer's one stream, and frees on that same
    /// stream); a helper step that did would need the driver's default.
    pub fn helper(&self) -> bool {
        matches!(
            self,
            Role::IpcImport | Role::IpcRules | Role::IpcScenario | Role::IpcConcurrent | Role::IpcKept
        )
    }
}
const ROLES: &[(&str, Role)] = &[
    ("noop", Role::Noop),
    ("probe", Role::Probe),
    ("hidden-init", Role::HiddenInit),
    ("uninit", Role::Uninit),
    ("nodevice", Role::NoDevice),
    ("worker", Role::Worker),
    ("ipc-import", Role::IpcImport),
    ("ipc-rules", Role::IpcRules),
    ("ipc-scenario", Role::IpcScenario),
    ("bench-ipc", Role::BenchIpc),
    ("vaspace", Role::VaSpace),
    ("ipc-concurrent", Role::IpcConcurrent),
    ("ipc-kept", Role::IpcKept),
    ("edge-rows", Role::EdgeRows),
    ("checkpoint", Role::Checkpoint),
];
const CASE_PREFIX: &str = "case:";
impl Role {
    /// The value of [`CHILD_VAR`] for this role.
    pub fn name(&self) -> String {
        match self {
            Role::Case(trial) => format!("{CASE_PREFIX}{trial}"),
            r => ROLES
                .iter()
                .find(|x| x.1 == *r)
                .map(|x| x.0.to_string())
                .unwrap_or_default(),
        }
    }
    /// The role [`CHILD_VAR`] names, if it names one.
    pub fn parse(name: &str) -> Option<Role> {
        match name.strip_prefix(CASE_PREFIX) {
            Some(trial) => Some(Role::Case(trial.to_string())),
            None => ROLES.iter().find(|x| x.0 == name).map(|x| x.1.clone()),
        }
    }
}

/// Output of a child run of this same binary.
pub struct ChildOut {
    pub status: Option<std::process::ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub timeout: Duration,
    /// The tracked call it was inside when it died or was killed.
    pub inside: Option<(u32, String)>,
    /// The last tracked call that returned before it stopped, and its raw answer.
    pub last: Option<(u32, i32)>,
}
impl ChildOut {
    pub fn signal(&self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        self.status.and_then(|s| s.signal())
    }
    /// The last line of its stdout that is a JSON object: a child role's answer.
    pub fn last_json(&self) -> Option<&str> {
        self.stdout.lines().rev().find(|l| l.starts_with('{'))
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

/// Children this process started ([`command`] builds each one's): a trial's share is the
/// difference across it.
static STARTED: AtomicU64 = AtomicU64::new(0);

/// Children this process started so far.
pub fn starts() -> u64 {
    STARTED.load(Ordering::Relaxed)
}

/// This binary in `role`, ready to spawn: stdin null, stderr piped, `stdout` as given, the
/// breadcrumb (if any) and the extra fds (ours, theirs) inherited, set up by [`crate::os::child_setup`].
/// In a worker the child also gets the worker's calls file (`driver::calls`), so that the mutation
/// library reports the APIs the child reaches as its trial's. A helper role (`Role::helper`) gets
/// `helper_connections` as its CUDA_DEVICE_MAX_CONNECTIONS (the run's settings' value,
/// `Settings::helper_connections`; None: the run's own); other roles take None. Every child gets
/// the wait `deadline` plans with at a new process's first GPU work.
pub fn command(
    role: &Role,
    envs: &[(&str, &str)],
    stdout: Stdio,
    crumb: Option<&Crumb>,
    fds: &[(RawFd, RawFd)],
    helper_connections: Option<u32>,
    deadline: Deadline,
) -> Result<Command, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find own executable: {e}"))?;
    STARTED.fetch_add(1, Ordering::Relaxed);
    let mut cmd = Command::new(exe);
    cmd.env(CHILD_VAR, role.name())
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped());
    if let Some(n) = helper_connections.filter(|_| role.helper()) {
        cmd.env(crate::harness::settings::MAX_CONNECTIONS_VAR, n.to_string());
    }
    if let Some(path) = crate::driver::calls::children_file() {
        cmd.env(crate::driver::calls::CALLS_FILE_VAR, path);
    }
    // The wait at each new process's first GPU work the run plans with (issue 58): every descendant
    // derives the same waits, those that never read the machine too.
    let wait = deadline.first_wait();
    if wait.is_zero() {
        // Not this process's own variable, should its parent have handed it one.
        cmd.env_remove(crate::driver::deadline::FIRST_WAIT_VAR);
    } else {
        cmd.env(crate::driver::deadline::FIRST_WAIT_VAR, wait.as_millis().to_string());
    }
    let mut fds = fds.to_vec();
    match crumb {
        Some(c) => {
            cmd.env(crumb::CRUMB_VAR, "1");
            fds.push((c.raw_fd(), crumb::CHILD_FD));
        }
        None => {
            cmd.env_remove(crumb::CRUMB_VAR);
        }
    }
    crate::os::child_setup(&mut cmd, fds);
    // A worker leads a process group of its own: an interrupted run kills it with the children it
    // started (`run::interrupt`), and a terminal's Ctrl-C reaches the coordinator, not the workers.
    if matches!(role, Role::Worker) {
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    }
    Ok(cmd)
}

/// A child started while a trial is watched: role, pid, start and end in seconds since the watch
/// started (no end yet: still running).
type Started = (String, u32, f64, Option<f64>);
/// The children started since the running trial started (`Watch`); None while none is watched.
static WATCHED: Mutex<Option<(Instant, Vec<Started>)>> = Mutex::new(None);

fn watched(f: impl FnOnce(f64, &mut Vec<Started>)) {
    if let Some((since, v)) = WATCHED.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        f(since.elapsed().as_secs_f64(), v);
    }
}

/// The children one trial starts in this process (a worker runs one trial at a time), from
/// [`Watch::start`] to [`Watch::finish`].
pub struct Watch;
impl Watch {
    pub fn start() -> Watch {
        *WATCHED.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now(), Vec::new()));
        Watch
    }
    /// Each child's role and span, in seconds since `start`; one still running ends now.
    pub fn finish(self) -> Vec<ChildSpan> {
        let Some((since, v)) = WATCHED.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return Vec::new();
        };
        let now = since.elapsed().as_secs_f64();
        v.into_iter()
            .map(|(role, _, start, end)| ChildSpan {
                role,
                span: (start, end.unwrap_or(now)),
                ..ChildSpan::default()
            })
            .collect()
    }
}

/// Spawn `cmd` (made by [`command`] for `role`), noted for the running trial's timeline.
pub fn spawn(cmd: &mut Command, role: &Role) -> Result<Child, String> {
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start child {:?}: {e}", role.name()))?;
    let pid = child.id();
    watched(|now, v| v.push((role.name(), pid, now, None)));
    Ok(child)
}

/// [`drain`] the child's stderr; its end (the child exited, and the pipe closed with it) is the
/// child's end on the running trial's timeline.
pub fn drain_stderr(child: &mut Child) -> JoinHandle<String> {
    let pid = child.id();
    let pipe = child.stderr.take().expect("stderr piped by `command`");
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = { pipe }.read_to_string(&mut s);
        watched(|now, v| {
            if let Some(c) = v.iter_mut().rev().find(|c| c.1 == pid && c.3.is_none()) {
                c.3 = Some(now);
            }
        });
        s
    })
}

/// Read a child's pipe to its end on a thread of its own, so a chatty child never blocks on a
/// full pipe.
pub fn drain(mut pipe: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    })
}

/// Re-run this binary in a child role, bounded by `deadline`'s trial deadline; the child is always
/// reaped.
pub fn run_child(role: &Role, envs: &[(&str, &str)], deadline: Deadline) -> Result<ChildOut, String> {
    run_child_for(role, envs, deadline, deadline.trial())
}

/// [`run_child`] with its own bound, `timeout` (for roles that are no helpers: `kept_children`
/// starts those).
pub fn run_child_for(
    role: &Role,
    envs: &[(&str, &str)],
    deadline: Deadline,
    timeout: Duration,
) -> Result<ChildOut, String> {
    let crumb = Crumb::new()?;
    let mut cmd = command(role, envs, Stdio::piped(), Some(&crumb), &[], None, deadline)?;
    let mut child = spawn(&mut cmd, role)?;
    let to = drain(child.stdout.take().unwrap());
    let te = drain_stderr(&mut child);
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
        last: crumb.last(),
    })
}

/// `SIGSEGV (11)`, or `signal N`.
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

/// `SIGSEGV (11) or SIGABRT (6)`.
pub fn signal_names(s: &[i32]) -> String {
    s.iter().map(|&x| signal_name(x)).collect::<Vec<_>>().join(" or ")
}

/// ` inside cuMemPoolTrimTo (833)`, from a breadcrumb, or nothing.
pub fn inside_text(inside: &Option<(u32, String)>) -> String {
    match inside {
        Some((api, sym)) => format!(" inside {sym} ({api})"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every child is handed the wait its parent's deadline plans with, and where it plans with
    /// none the variable is taken out of what the child inherits, so that each process of the run
    /// derives the same waits.
    #[test]
    fn a_child_is_handed_the_planned_wait() {
        // Some(None): taken out; Some(Some(text)): set.
        let handed = |wait: Duration| {
            let deadline = Deadline::new(Duration::from_secs(60), wait);
            let cmd = command(&Role::Noop, &[], Stdio::null(), None, &[], None, deadline).unwrap();
            cmd.get_envs()
                .find(|(k, _)| *k == crate::driver::deadline::FIRST_WAIT_VAR)
                .map(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()))
        };
        assert_eq!(handed(Duration::ZERO), Some(None));
        assert_eq!(handed(Duration::from_millis(3200)), Some(Some("3200".to_string())));
    }

    /// A child started while a trial is watched is on its timeline from its spawn to its exit (its
    /// stderr closing); one started after the watch ended is not.
    #[test]
    fn a_watched_trial_sees_its_children_start_and_end() {
        let role = Role::Case("child::tests::watched".into());
        let sleeper = || {
            let mut cmd = Command::new("sh");
            cmd.args(["-c", "sleep 0.2"]).stderr(Stdio::piped());
            cmd
        };
        let watch = Watch::start();
        let mut child = spawn(&mut sleeper(), &role).unwrap();
        drain_stderr(&mut child).join().unwrap();
        let _ = child.wait();
        let spans: Vec<ChildSpan> = watch.finish().into_iter().filter(|c| c.role == role.name()).collect();
        assert_eq!(spans.len(), 1, "{spans:?}");
        let (start, end) = spans[0].span;
        assert!(start >= 0.0 && end - start >= 0.15 && end - start < 5.0, "{spans:?}");
        let mut later = spawn(&mut sleeper(), &role).unwrap();
        let _ = later.wait();
        assert!(Watch::start().finish().is_empty());
    }
}
