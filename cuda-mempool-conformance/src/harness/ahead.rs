//! A `case:TRIAL` child started ahead of its trial (issue 59): the process a trial of its own
//! process (`placement::Process::Own`) runs in, started while the worker runs the trials before
//! it, so that its start (exec, cuInit, its context: about 0.6 s on the H200) is not within the
//! trial's span. It is as fresh as one started for the trial: it has run nothing but its own
//! start, served no trial, and ends after the one it is given.
//!
//! The worker keeps at most one, when the coordinator asks for it (`ToWorker::Run`'s `ahead`:
//! own-process trials are still queued beyond the children already started ahead, and processes do
//! not start slowly). Its side, `suite::roles` (role `case-ahead`): read the machine, make the
//! context, then wait for one line on stdin naming the trial; stdin closed without one (the worker
//! dropped it, or ended): exit.

use crate::driver::crumb::Crumb;
use crate::harness::child::{command, drain, drain_stderr, spawn, taken, wait_out, ChildOut, Role};
use crate::harness::machine_file::MachineFile;
use std::io::Write;
use std::process::{Child, ChildStdin, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

/// A child started ahead, waiting for its trial; killed and reaped when dropped unused.
pub struct Ahead {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    out: Option<(JoinHandle<String>, JoinHandle<String>)>,
    crumb: Crumb,
    _machine: MachineFile,
}

impl Ahead {
    /// Start one on `m` (the machine as this process knows it, handed over in a file).
    pub fn start(m: &crate::harness::Machine) -> Result<Ahead, String> {
        let crumb = Crumb::new()?;
        let machine = MachineFile::write(m);
        let envs: Vec<(&str, &str)> = machine.var().into_iter().collect();
        let mut cmd = command(&Role::CaseAhead, &envs, Stdio::piped(), Some(&crumb), &[], None)?;
        cmd.stdin(Stdio::piped());
        let mut child = spawn(&mut cmd, &Role::CaseAhead)?;
        let stdin = child.stdin.take();
        let to = drain(child.stdout.take().expect("stdout piped"));
        let te = drain_stderr(&mut child);
        Ok(Ahead {
            child: Some(child),
            stdin,
            out: Some((to, te)),
            crumb,
            _machine: machine,
        })
    }

    /// Run `trial` in it, waiting at most `timeout` from now: what it left, as a child started for
    /// the trial leaves it (`child::run_child_for`). Err: it ended before it was given the trial, or
    /// could not be given it (the caller starts a new one).
    pub fn run(mut self, trial: &str, timeout: Duration) -> Result<ChildOut, String> {
        let mut child = self.child.take().expect("run once");
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("the child started ahead for it had ended ({status})"));
        }
        taken(&Role::Case(trial.to_string()), child.id());
        self.crumb.clear_last();
        let given = self
            .stdin
            .take()
            .map(|mut w| writeln!(w, "{trial}"))
            .unwrap_or_else(|| Err(std::io::ErrorKind::BrokenPipe.into()));
        if let Err(e) = given {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the child started ahead for it could not be given it ({e})"));
        }
        let (to, te) = self.out.take().expect("run once");
        wait_out(child, to, te, &self.crumb, timeout)
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        // Unused: stdin closed, it exits; killed all the same, and reaped.
        drop(self.stdin.take());
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
