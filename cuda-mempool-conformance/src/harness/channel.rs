//! A message channel to a child process of this same binary: a SOCK_SEQPACKET socketpair (message
//! boundaries kept, no path in the filesystem), JSON messages, at most one fd per message passed
//! with SCM_RIGHTS, and a receive timeout on every wait. The child is always reaped.
//!
//! Messages are typed: any `Serialize` is sent, and a message is read as the type its conversation
//! speaks (`poll_as`, `recv_as`: a worker's `conformance_model::protocol`, a shared child's
//! [`Step`]s); one that does not read as that type is named as such, never taken for another.

use crate::driver::crumb::Crumb;
use crate::driver::deadline::Deadline;
use crate::driver::fail::R;
use crate::harness::child::Role;
use nix::sys::socket::{
    recvmsg, sendmsg, setsockopt, shutdown, socketpair, sockopt, AddressFamily, ControlMessage, ControlMessageOwned,
    MsgFlags, Shutdown, SockFlag, SockType,
};
use nix::sys::time::TimeVal;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
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

    /// The child's end (fd 3, inherited), each wait bounded by `deadline`'s trial deadline.
    pub fn from_inherited(deadline: Deadline) -> R<Channel> {
        // SAFETY: the parent placed the socket at CHILD_FD for this role and nothing else owns it.
        let sock = unsafe { OwnedFd::from_raw_fd(CHILD_FD) };
        Channel::new(sock, deadline.trial())
    }

    pub fn send(&self, msg: &impl Serialize, fd: Option<RawFd>) -> R {
        let bytes = serde_json::to_vec(msg).map_err(|e| e.to_string())?;
        let iov = [IoSlice::new(&bytes)];
        let fds = fd.map(|f| [f]);
        let cmsgs: Vec<ControlMessage> = fds.as_ref().map(|f| ControlMessage::ScmRights(f)).into_iter().collect();
        sendmsg::<()>(self.sock.as_raw_fd(), &iov, &cmsgs, MsgFlags::empty(), None)
            .map_err(|e| format!("sending {}: {e}", excerpt(&bytes)))?;
        Ok(())
    }

    /// Bound every later wait for a message by `timeout`.
    pub fn set_timeout(&self, timeout: Duration) -> R {
        let tv = TimeVal::new(timeout.as_secs() as _, timeout.subsec_micros() as _);
        setsockopt(&self.sock, sockopt::ReceiveTimeout, &tv).map_err(|e| format!("SO_RCVTIMEO: {e}").into())
    }

    /// The next message, or why there is none: the wait ran out, or the other side is gone.
    /// (`recv` answers [`CLOSED`] for the latter.) One that is no JSON is an error.
    pub fn poll(&self) -> Got {
        self.poll_as::<Value>().then(|m, fd| match m {
            Ok(m) => Got::Msg(m, fd),
            Err(e) => Got::Error(e),
        })
    }

    /// The next message read as a `T` (`Err`: why what arrived is none: cut short, corrupted, or
    /// of another conversation), or why there is none.
    pub fn poll_as<T: DeserializeOwned>(&self) -> Got<Result<T, String>> {
        self.next().then(|bytes, fd| Got::Msg(read(&bytes), fd))
    }

    /// The next message's bytes and the fd it carried, or why there is none.
    fn next(&self) -> Got<Vec<u8>> {
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
        buf.truncate(n);
        Got::Msg(buf, fds.into_iter().next())
    }

    /// The next message (and the fd it carried), within the channel's timeout. A message that
    /// reports an error ([`Channel::send_error`]) becomes this side's error (and its blame, if it
    /// names one, this side's).
    pub fn recv(&self) -> R<(Value, Option<OwnedFd>)> {
        self.recv_as()
    }

    /// [`Channel::recv`], the message read as a `T`: one that is none is an error saying so.
    pub fn recv_as<T: DeserializeOwned>(&self) -> R<(T, Option<OwnedFd>)> {
        let start = Instant::now();
        match self.next() {
            Got::Msg(bytes, fd) => {
                if let Ok(PeerError { error, blame }) = serde_json::from_slice(&bytes) {
                    if let Some(api) = blame {
                        crate::driver::blame::set(api);
                    }
                    return Err(format!("peer reported: {error}").into());
                }
                Ok((read(&bytes)?, fd))
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
            match self.recv_as::<Step>() {
                Ok((Step::Answer { key, value }, _)) => {
                    into.insert(key, value);
                }
                Ok((Step::Done, _)) => return None,
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
            &PeerError {
                error: e.to_string(),
                blame: crate::driver::blame::get(),
            },
            None,
        );
    }
}

/// What a wait for a message came to.
pub enum Got<T = Value> {
    Msg(T, Option<OwnedFd>),
    Timeout,
    Closed,
    Error(String),
}

impl<T> Got<T> {
    /// A message made into what `f` makes of it; no message stays as it was.
    fn then<U>(self, f: impl FnOnce(T, Option<OwnedFd>) -> Got<U>) -> Got<U> {
        match self {
            Got::Msg(m, fd) => f(m, fd),
            Got::Timeout => Got::Timeout,
            Got::Closed => Got::Closed,
            Got::Error(e) => Got::Error(e),
        }
    }
}

/// `bytes` read as a `T`, or why they are none (with how they start, to be recognised).
fn read<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("bad message ({e}): {}", excerpt(bytes)))
}

/// A message's text as a failure message quotes it: its first 200 characters.
fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.into_owned(),
    }
}

/// What a side sends instead of a message when it fails ([`Channel::send_error`]): why, and the
/// API it holds responsible, if any.
#[derive(Serialize, Deserialize)]
struct PeerError {
    error: String,
    #[serde(default)]
    blame: Option<u32>,
}

/// A shared child's messages while it answers a trial's steps ([`Channel::answers_until_done`]
/// reads them as `Step<Value>`; the child sends its own answer type `T`): one step's answer
/// (`{"op": "answer", "key", "value"}`), or the end (`{"op": "done"}`).
#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Step<T = Value> {
    Answer {
        #[serde(default)]
        key: String,
        #[serde(default)]
        value: T,
    },
    Done,
}

/// A step a shared child did not answer, as its answers keep it: why, and the API held
/// responsible (it died or hung there), if any (`{"lost": why, "blame": api}`, null without one).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct LostStep {
    pub lost: String,
    #[serde(default)]
    pub blame: Option<u32>,
}

impl LostStep {
    /// The answer a parent records for a step its child lost ([`step_answer`] reads it back).
    pub fn answer(lost: String, blame: Option<u32>) -> Value {
        // A struct of a string and a number is always JSON.
        serde_json::to_value(LostStep { lost, blame }).unwrap_or_default()
    }
}

/// Start this binary in `role` with a channel to it at fd 3 and, if given, a breadcrumb file at fd 4
/// (`helper_connections`: a helper role's, and `deadline`, as `child::command` takes them).
pub fn spawn_role(
    role: &Role,
    envs: &[(&str, &str)],
    stdout: Stdio,
    crumb: Option<&Crumb>,
    timeout: Duration,
    helper_connections: Option<u32>,
    deadline: Deadline,
) -> R<(Channel, Child)> {
    let (mine, theirs) = socketpair(AddressFamily::Unix, SockType::SeqPacket, None, SockFlag::SOCK_CLOEXEC)
        .map_err(|e| format!("socketpair: {e}"))?;
    let fds = [(theirs.as_raw_fd(), CHILD_FD)];
    let mut cmd = crate::harness::child::command(role, envs, stdout, crumb, &fds, helper_connections, deadline)?;
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
    if let Ok(LostStep { lost, blame }) = LostStep::deserialize(v) {
        if let Some(api) = blame {
            crate::driver::blame::set(api);
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
    /// How long it may take to exit once it closed the channel (`Deadline::reap`).
    reap: Duration,
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
    /// `helper_connections`: a helper role's, and `deadline`, as `child::command` takes them.
    pub fn spawn(
        role: &Role,
        envs: &[(&str, &str)],
        timeout: Duration,
        helper_connections: Option<u32>,
        deadline: Deadline,
    ) -> R<Peer> {
        let crumb = Crumb::new()?;
        let (chan, mut child) = spawn_role(
            role,
            envs,
            Stdio::null(),
            Some(&crumb),
            timeout,
            helper_connections,
            deadline,
        )?;
        let stderr = crate::harness::child::drain_stderr(&mut child);
        Ok(Peer {
            chan,
            child: Some(child),
            stderr: Some(stderr),
            timeout,
            reap: deadline.reap(),
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
                c.wait_timeout(self.reap).ok().flatten()
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

    fn send_raw(c: &Channel, bytes: &[u8]) {
        sendmsg::<()>(c.sock.as_raw_fd(), &[IoSlice::new(bytes)], &[], MsgFlags::empty(), None).unwrap();
    }

    /// A message that does not read as its conversation's type (cut short by a writer killed
    /// mid-message, corrupted, or of another shape) is named as such, never taken for another,
    /// and the conversation goes on with the next; a peer's error becomes this side's, its blame too.
    #[test]
    fn unreadable_messages_are_named_never_taken() {
        use conformance_model::FromWorker;
        let (parent, child) = pair();
        send_raw(&child, br#"{"op":"answered","answer":{"outcome":"pas"#);
        child
            .send(&serde_json::json!({"op": "answered", "retire": false}), None)
            .unwrap();
        child.send(&FromWorker::Pong, None).unwrap();
        for _ in 0..2 {
            match parent.poll_as::<FromWorker>() {
                Got::Msg(Err(e), _) => assert!(e.starts_with("bad message") && e.contains("answered"), "{e}"),
                _ => panic!("an unreadable message was taken"),
            }
        }
        assert!(matches!(
            parent.poll_as::<FromWorker>(),
            Got::Msg(Ok(FromWorker::Pong), _)
        ));
        send_raw(&child, b"\xff not json");
        assert!(matches!(parent.poll(), Got::Error(e) if e.starts_with("bad message")));

        crate::driver::blame::reset();
        child
            .send(&serde_json::json!({"error": "it broke", "blame": 822}), None)
            .unwrap();
        let e = parent.recv().unwrap_err().to_string();
        assert!(e.contains("peer reported: it broke"), "{e}");
        assert_eq!(crate::driver::blame::get(), Some(822));
        crate::driver::blame::reset();

        child.send(&serde_json::json!({"op": "shrug"}), None).unwrap();
        let mut got = std::collections::BTreeMap::new();
        let ended = parent.answers_until_done(&mut got).unwrap();
        assert!(ended.contains("bad message") && ended.contains("shrug"), "{ended}");
        drop(child);
        assert!(matches!(parent.poll_as::<FromWorker>(), Got::Closed));
    }

    /// A lost step is an error with its blame; any other value is the step's answer.
    #[test]
    fn lost_steps_are_errors() {
        let mut a = std::collections::BTreeMap::new();
        a.insert("kept".to_string(), serde_json::json!({"code": 0}));
        let lost = LostStep {
            lost: "the child died".into(),
            blame: Some(830),
        };
        a.insert("gone".to_string(), serde_json::to_value(lost).unwrap());
        crate::driver::blame::reset();
        assert_eq!(step_answer(&a, "kept", "it").unwrap(), serde_json::json!({"code": 0}));
        assert_eq!(crate::driver::blame::get(), None);
        assert_eq!(step_answer(&a, "gone", "it").unwrap_err().to_string(), "the child died");
        assert_eq!(crate::driver::blame::get(), Some(830));
        assert!(step_answer(&a, "never", "it")
            .unwrap_err()
            .to_string()
            .contains("no answer"));
        crate::driver::blame::reset();
    }

    /// The step messages read and written as today's text.
    #[test]
    fn step_messages_keep_their_text() {
        let a: Step = serde_json::from_str(r#"{"op": "answer", "key": "trim", "value": {"code": 1}}"#).unwrap();
        assert_eq!(
            a,
            Step::Answer {
                key: "trim".into(),
                value: serde_json::json!({"code": 1})
            }
        );
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::json!({"op": "answer", "key": "trim", "value": {"code": 1}})
        );
        let d: Step = serde_json::from_str(r#"{"op": "done"}"#).unwrap();
        assert_eq!(d, Step::Done);
        assert_eq!(serde_json::to_value(&d).unwrap(), serde_json::json!({"op": "done"}));
        assert!(serde_json::from_value::<Step>(serde_json::json!({"op": "other"})).is_err());
    }

    /// A lost step reads `{"lost", "blame"}`, the blame null where there is none.
    #[test]
    fn a_lost_step_keeps_its_text() {
        assert_eq!(
            LostStep::answer("gone".into(), Some(830)),
            serde_json::json!({"lost": "gone", "blame": 830})
        );
        assert_eq!(
            LostStep::answer("gone".into(), None),
            serde_json::json!({"lost": "gone", "blame": null})
        );
        let l: LostStep = serde_json::from_str(r#"{"lost": "why", "blame": null}"#).unwrap();
        assert_eq!(l.blame, None);
    }
}
