//! A message channel to a child process of this same binary: a SOCK_SEQPACKET socketpair (message
//! boundaries kept, no path in the filesystem), JSON messages, at most one fd per message passed
//! with SCM_RIGHTS, and a receive timeout on every wait. The child is always reaped.

use crate::driver::crumb::Crumb;
use crate::driver::fail::R;
use crate::harness::child::Role;
use nix::sys::socket::{
    recvmsg, sendmsg, setsockopt, shutdown, socketpair, sockopt, AddressFamily, ControlMessage, ControlMessageOwned,
    MsgFlags, Shutdown, SockFlag, SockType,
};
use nix::sys::time::TimeVal;
use serde_json::Value;
use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use std::process::{Child, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The fd number the child finds its end of the channel at.
pub const CHILD_FD: RawFd = 3;
const MAX_MSG: usize = 1 << 20;

pub struct Channel {
    sock: OwnedFd,
}

impl Channel {
    fn new(sock: OwnedFd, timeout: Duration) -> R<Channel> {
        let c = Channel { sock };
        c.set_timeout(timeout)?;
        Ok(c)
    }

    /// The child's end (fd 3, inherited).
    pub fn from_inherited() -> R<Channel> {
        // SAFETY: the parent placed the socket at CHILD_FD for this role and nothing else owns it.
        let sock = unsafe { OwnedFd::from_raw_fd(CHILD_FD) };
        Channel::new(sock, crate::driver::deadline::trial())
    }

    pub fn send(&self, msg: &Value, fd: Option<RawFd>) -> R {
        let bytes = serde_json::to_vec(msg).map_err(|e| e.to_string())?;
        let iov = [IoSlice::new(&bytes)];
        let fds = fd.map(|f| [f]);
        let cmsgs: Vec<ControlMessage> = fds.as_ref().map(|f| ControlMessage::ScmRights(f)).into_iter().collect();
        sendmsg::<()>(self.sock.as_raw_fd(), &iov, &cmsgs, MsgFlags::empty(), None)
            .map_err(|e| format!("sending {}: {e}", msg.get("op").unwrap_or(&Value::Null)))?;
        Ok(())
    }

    /// Bound every later wait for a message by `timeout`.
    pub fn set_timeout(&self, timeout: Duration) -> R {
        let tv = TimeVal::new(timeout.as_secs() as _, timeout.subsec_micros() as _);
        setsockopt(&self.sock, sockopt::ReceiveTimeout, &tv).map_err(|e| format!("SO_RCVTIMEO: {e}").into())
    }

    /// The next message, or why there is none: the wait ran out, or the other side is gone.
    /// (`recv` answers [`CLOSED`] for the latter.)
    pub fn poll(&self) -> Got {
        let mut buf = vec![0u8; MAX_MSG];
        let mut cmsg = nix::cmsg_space!([RawFd; 2]);
        let (n, fds) = loop {
            let mut iov = [IoSliceMut::new(&mut buf)];
            match recvmsg::<()>(
                self.sock.as_raw_fd(),
                &mut iov,
                Some(&mut cmsg),
                MsgFlags::MSG_CMSG_CLOEXEC,
            ) {
                Ok(m) => {
                    let mut fds = Vec::new();
                    match m.cmsgs() {
                        Ok(cmsgs) => {
                            for c in cmsgs {
                                if let ControlMessageOwned::ScmRights(v) = c {
                                    // SAFETY: the kernel installed these fds in this process for us.
                                    fds.extend(v.into_iter().map(|f| unsafe { OwnedFd::from_raw_fd(f) }));
                                }
                            }
                        }
                        Err(e) => return Got::Error(e.to_string()),
                    }
                    break (m.bytes, fds);
                }
                Err(nix::errno::Errno::EINTR) => continue,
                Err(nix::errno::Errno::EAGAIN) => return Got::Timeout,
                Err(nix::errno::Errno::ECONNRESET) => return Got::Closed,
                Err(e) => return Got::Error(format!("recvmsg: {e}")),
            }
        };
        if n == 0 {
            return Got::Closed;
        }
        match serde_json::from_slice(&buf[..n]) {
            Ok(msg) => Got::Msg(msg, fds.into_iter().next()),
            Err(e) => Got::Error(format!("bad message: {e}")),
        }
    }

    /// The next message (and the fd it carried), within the channel's timeout. A message that
    /// reports an error becomes this side's error (and its blame, if it names one, this side's).
    pub fn recv(&self) -> R<(Value, Option<OwnedFd>)> {
        let start = Instant::now();
        match self.poll() {
            Got::Msg(msg, fd) => {
                if let Some(err) = msg.get("error").and_then(Value::as_str) {
                    if let Some(api) = msg.get("blame").and_then(Value::as_u64) {
                        crate::driver::blame::set(api as u32);
                    }
                    return Err(format!("peer reported: {err}").into());
                }
                Ok((msg, fd))
            }
            Got::Timeout => Err(format!("no message within {} s", start.elapsed().as_secs()).into()),
            Got::Closed => Err(CLOSED.into()),
            Got::Error(e) => Err(e.into()),
        }
    }

    /// Gather a child's step answers (`{"op": "answer", "key", "value"}`) into `into` until it
    /// says `{"op": "done"}`: None then, or why it stopped answering first.
    pub fn answers_until_done(&self, into: &mut std::collections::BTreeMap<String, Value>) -> Option<String> {
        self.answers_until_done_by(into, None)
    }

    /// [`Channel::answers_until_done`], all of them by `by` (each wait shortened to the time left):
    /// a child that answers many trials' steps within one trial's deadline gives up its last steps,
    /// not the worker.
    pub fn answers_until_done_by(
        &self,
        into: &mut std::collections::BTreeMap<String, Value>,
        by: Option<(std::time::Instant, Duration)>,
    ) -> Option<String> {
        loop {
            if let Some((until, step)) = by {
                let left = until.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    return Some(format!("no message within the {} s left of the trial", step.as_secs()));
                }
                if let Err(e) = self.set_timeout(left.min(step)) {
                    return Some(e.to_string());
                }
            }
            match self.recv() {
                Ok((m, _)) if m["op"] == "answer" => {
                    into.insert(m["key"].as_str().unwrap_or("").to_string(), m["value"].clone());
                }
                Ok((m, _)) if m["op"] == "done" => return None,
                Ok((m, _)) => return Some(format!("unexpected message {m}")),
                Err(e) => return Some(e.to_string()),
            }
        }
    }

    /// Tell the other side there is nothing more to come: its next wait answers [`Got::Closed`]
    /// (an importer child then exits 0, `cases::xproc`).
    pub fn close_write(&self) {
        let _ = shutdown(self.sock.as_raw_fd(), Shutdown::Write);
    }

    /// Report an error to the other side, with the API this side holds responsible, if any.
    pub fn send_error(&self, e: &str) {
        let _ = self.send(
            &serde_json::json!({"error": e, "blame": crate::driver::blame::get()}),
            None,
        );
    }
}

/// What a wait for a message came to.
pub enum Got {
    Msg(Value, Option<OwnedFd>),
    Timeout,
    Closed,
    Error(String),
}

/// Start this binary in `role` with a channel to it at fd 3 and, if given, a breadcrumb file at fd 4
/// (`helper_connections`: a helper role's, as `child::command` takes it).
pub fn spawn_role(
    role: &Role,
    envs: &[(&str, &str)],
    stdout: Stdio,
    crumb: Option<&Crumb>,
    timeout: Duration,
    helper_connections: Option<u32>,
) -> R<(Channel, Child)> {
    let (mine, theirs) = socketpair(AddressFamily::Unix, SockType::SeqPacket, None, SockFlag::SOCK_CLOEXEC)
        .map_err(|e| format!("socketpair: {e}"))?;
    let fds = [(theirs.as_raw_fd(), CHILD_FD)];
    let mut cmd = crate::harness::child::command(role, envs, stdout, crumb, &fds, helper_connections)?;
    let child = crate::harness::child::spawn(&mut cmd, role)?;
    drop(theirs);
    Ok((Channel::new(mine, timeout)?, child))
}

/// One step's answer among a shared child's (gathered by [`Channel::answers_until_done`]): its
/// value, or why there is none: `who` gave none, or the step reads `{"lost": why, "blame": api}`
/// (the child died or hung there; the blame goes to the trial).
pub fn step_answer(answers: &std::collections::BTreeMap<String, Value>, key: &str, who: &str) -> R<Value> {
    let v = answers
        .get(key)
        .ok_or_else(|| format!("{who} gave no answer for step {key}"))?;
    if let Some(lost) = v["lost"].as_str() {
        if let Some(api) = v["blame"].as_u64() {
            crate::driver::blame::set(api as u32);
        }
        return Err(lost.into());
    }
    Ok(v.clone())
}

/// What [`Channel::recv`] answers when the other side closed the channel (it exited, or died).
pub const CLOSED: &str = "the other side closed the channel";

/// How a child in an IPC role was lost: the signal it died by on its own (None when it was
/// killed, or exited), the API it was inside, and the whole message.
#[derive(Debug)]
pub struct Lost {
    pub signal: Option<i32>,
    pub inside: Option<u32>,
    pub message: String,
}

/// A child of this binary in an IPC role, with a channel to it. Dropping it kills and reaps it.
pub struct Peer {
    pub chan: Channel,
    child: Option<Child>,
    stderr: Option<JoinHandle<String>>,
    timeout: Duration,
    crumb: Crumb,
    /// Its role and environment (`harness::kept_children`: which trials it may serve again).
    pub(crate) key: String,
    /// It may serve another trial once this one is done with it (`harness::kept_children`).
    pub(crate) reusable: bool,
    /// Started ahead and has served no trial yet (`harness::kept_children::warm`).
    pub(crate) fresh: bool,
}

impl Peer {
    /// Start a child role; `timeout` bounds each receive and the wait for its exit;
    /// `helper_connections`: a helper role's, as `child::command` takes it.
    pub fn spawn(role: &Role, envs: &[(&str, &str)], timeout: Duration, helper_connections: Option<u32>) -> R<Peer> {
        let crumb = Crumb::new()?;
        let (chan, mut child) = spawn_role(role, envs, Stdio::null(), Some(&crumb), timeout, helper_connections)?;
        let stderr = crate::harness::child::drain_stderr(&mut child);
        Ok(Peer {
            chan,
            child: Some(child),
            stderr: Some(stderr),
            timeout,
            crumb,
            key: Peer::key_of(role, envs),
            reusable: false,
            fresh: true,
        })
    }

    /// Which trials a child in `role` with `envs` may serve (`harness::kept_children`).
    pub(crate) fn key_of(role: &Role, envs: &[(&str, &str)]) -> String {
        format!("{} {envs:?}", role.name())
    }

    /// Whether the child is still running (a kept one may have died between trials).
    pub(crate) fn alive(&mut self) -> bool {
        self.child.as_mut().is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// Bound each receive and the wait for its exit by `timeout` from now on.
    pub(crate) fn set_wait(&mut self, timeout: Duration) -> R {
        self.timeout = timeout;
        self.chan.set_timeout(timeout)
    }

    /// Close the channel's sending side, wait for the child to exit (bounded), then return its
    /// stderr; Err if it did not exit 0.
    pub fn finish(mut self) -> R<String> {
        self.chan.close_write();
        let mut child = self.child.take().unwrap();
        use wait_timeout::ChildExt;
        let status = child.wait_timeout(self.timeout).map_err(|e| e.to_string())?;
        let status = match status {
            Some(s) => s,
            None => {
                let _ = child.kill();
                let _ = child.wait();
                let inside = self.crumb.describe();
                if let Some((api, _)) = self.crumb.read() {
                    crate::driver::blame::set(api);
                }
                return Err(format!(
                    "child did not exit within {} s: killed{inside}; {}",
                    self.timeout.as_secs(),
                    self.stderr_text()
                )
                .into());
            }
        };
        let err = self.stderr_text();
        if status.success() {
            Ok(err)
        } else {
            if let Some((api, _)) = self.crumb.read() {
                crate::driver::blame::set(api);
            }
            Err(format!("child {status}{}; {err}", self.crumb.describe()).into())
        }
    }

    fn stderr_text(&mut self) -> String {
        let s = self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default();
        if s.trim().is_empty() {
            "its stderr was empty".into()
        } else {
            format!("its stderr:\n{}", s.trim())
        }
    }

    /// A failure that happened while talking to the child: kill and reap it, attach its stderr.
    /// The tracked call the child is (or was, when it died) inside, if any.
    pub fn inside(&self) -> Option<(u32, String)> {
        self.crumb.read()
    }

    /// A child that died or hung inside one of the 14 APIs makes that API the trial's blame.
    /// Its process id, while it has a process.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    pub fn fail(self, e: String) -> String {
        self.lost(e, false).message
    }

    /// [`Peer::fail`], typed: the signal that ended the child (if one did before it was killed),
    /// the API it was inside, and the message. `closed`: the child closed the channel (it is
    /// exiting or dying), so it gets the reaping bound to be seen exit before it is killed.
    pub fn lost(mut self, e: String, closed: bool) -> Lost {
        let inside = self.crumb.read();
        if let Some((api, _)) = &inside {
            crate::driver::blame::set(*api);
        }
        let described = self.crumb.describe();
        let (mut signal, mut message) = (None, e.clone());
        if let Some(mut c) = self.child.take() {
            use std::os::unix::process::ExitStatusExt;
            // Dead on its own (seen within the reaping bound when it closed the channel), or
            // killed now: only the former's signal is the child's own.
            use wait_timeout::ChildExt;
            let early = if closed {
                c.wait_timeout(crate::driver::deadline::reap()).ok().flatten()
            } else {
                c.try_wait().ok().flatten()
            };
            if early.is_none() {
                let _ = c.kill();
            }
            let status = early.or_else(|| c.wait().ok());
            signal = early.and_then(|s| s.signal());
            let status = status.map(|s| s.to_string()).unwrap_or_default();
            message = format!("{e} (child {status}{described}; {})", self.stderr_text());
        }
        Lost {
            signal,
            inside: inside.map(|i| i.0),
            message,
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
pub fn unhex(s: &str) -> R<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return Err("odd hex length".into());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| e.to_string().into()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
    use std::time::{Duration, Instant};

    fn pair() -> (Channel, Channel) {
        let (a, b) = socketpair(AddressFamily::Unix, SockType::SeqPacket, None, SockFlag::SOCK_CLOEXEC).unwrap();
        (
            Channel::new(a, Duration::from_secs(5)).unwrap(),
            Channel::new(b, Duration::from_secs(5)).unwrap(),
        )
    }

    /// Answers that come in time are kept; past the time left the wait gives up with what came,
    /// well before the per-message wait would.
    #[test]
    fn answers_stop_at_the_time_left() {
        let (parent, child) = pair();
        child
            .send(&serde_json::json!({"op": "answer", "key": "a", "value": 1}), None)
            .unwrap();
        let mut got = std::collections::BTreeMap::new();
        let start = Instant::now();
        let until = start + Duration::from_millis(200);
        let ended = parent.answers_until_done_by(&mut got, Some((until, Duration::from_secs(5))));
        assert!(ended.is_some(), "no end reported");
        assert_eq!(got.len(), 1);
        assert!(start.elapsed() < Duration::from_secs(2), "waited {:?}", start.elapsed());
        child.send(&serde_json::json!({"op": "done"}), None).unwrap();
        assert_eq!(parent.answers_until_done(&mut got), None);
    }
}
