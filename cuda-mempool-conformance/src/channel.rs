//! A message channel to a child process of this same binary: a SOCK_SEQPACKET socketpair (message
//! boundaries kept, no path in the filesystem), JSON messages, at most one fd per message passed
//! with SCM_RIGHTS, and a receive timeout on every wait. The child is always reaped.

use crate::driver::R;
use crate::harness::CHILD_ENV;
use nix::sys::socket::{
    recvmsg, sendmsg, setsockopt, socketpair, sockopt, AddressFamily, ControlMessage, ControlMessageOwned, MsgFlags,
    SockFlag, SockType,
};
use nix::sys::time::TimeVal;
use serde_json::Value;
use std::io::{IoSlice, IoSliceMut, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The fd number the child finds its end of the channel at.
pub const CHILD_FD: RawFd = 3;
/// How long any one wait for a message (or for the child's exit) may take, unless the spawner
/// says otherwise.
pub const RECV_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_MSG: usize = 1 << 20;

pub struct Channel {
    sock: OwnedFd,
}

impl Channel {
    fn new(sock: OwnedFd, timeout: Duration) -> R<Channel> {
        let tv = TimeVal::new(timeout.as_secs() as _, timeout.subsec_micros() as _);
        setsockopt(&sock, sockopt::ReceiveTimeout, &tv).map_err(|e| format!("SO_RCVTIMEO: {e}"))?;
        Ok(Channel { sock })
    }

    /// The child's end (fd 3, inherited).
    pub fn from_inherited() -> R<Channel> {
        // SAFETY: the parent placed the socket at CHILD_FD for this role and nothing else owns it.
        let sock = unsafe { OwnedFd::from_raw_fd(CHILD_FD) };
        Channel::new(sock, RECV_TIMEOUT)
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

    /// The next message (and the fd it carried), within RECV_TIMEOUT.
    pub fn recv(&self) -> R<(Value, Option<OwnedFd>)> {
        let mut buf = vec![0u8; MAX_MSG];
        let mut cmsg = nix::cmsg_space!([RawFd; 2]);
        let start = Instant::now();
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
                    for c in m.cmsgs().map_err(|e| e.to_string())? {
                        if let ControlMessageOwned::ScmRights(v) = c {
                            // SAFETY: the kernel installed these fds in this process for us.
                            fds.extend(v.into_iter().map(|f| unsafe { OwnedFd::from_raw_fd(f) }));
                        }
                    }
                    break (m.bytes, fds);
                }
                Err(nix::errno::Errno::EINTR) => continue,
                Err(nix::errno::Errno::EAGAIN) => {
                    return Err(format!("no message within {} s", start.elapsed().as_secs()))
                }
                Err(e) => return Err(format!("recvmsg: {e}")),
            }
        };
        if n == 0 {
            return Err("the other side closed the channel".into());
        }
        let msg: Value = serde_json::from_slice(&buf[..n]).map_err(|e| format!("bad message: {e}"))?;
        if let Some(err) = msg.get("error").and_then(Value::as_str) {
            return Err(format!("peer reported: {err}"));
        }
        Ok((msg, fds.into_iter().next()))
    }
}

/// A child of this binary in an IPC role, with a channel to it. Dropping it kills and reaps it.
pub struct Peer {
    pub chan: Channel,
    child: Option<Child>,
    stderr: Option<JoinHandle<String>>,
    timeout: Duration,
}

impl Peer {
    /// Start a child role; `timeout` bounds each receive and the wait for its exit.
    pub fn spawn(role: &str, envs: &[(&str, &str)], timeout: Duration) -> R<Peer> {
        let (mine, theirs) = socketpair(AddressFamily::Unix, SockType::SeqPacket, None, SockFlag::SOCK_CLOEXEC)
            .map_err(|e| format!("socketpair: {e}"))?;
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let their_fd = theirs.as_raw_fd();
        let mut cmd = Command::new(exe);
        cmd.env(CHILD_ENV, role)
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        extern "C" {
            fn dup2(old: i32, new: i32) -> i32;
        }
        // SAFETY: only async-signal-safe dup2 runs between fork and exec; the duplicate at
        // CHILD_FD has close-on-exec cleared, every other fd of ours keeps it set.
        unsafe {
            cmd.pre_exec(move || {
                if dup2(their_fd, CHILD_FD) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| format!("cannot start child {role:?}: {e}"))?;
        drop(theirs);
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Ok(Peer {
            chan: Channel::new(mine, timeout)?,
            child: Some(child),
            stderr: Some(stderr),
            timeout,
        })
    }

    /// Wait for the child to exit (bounded), then return its stderr; Err if it did not exit 0.
    pub fn finish(mut self) -> R<String> {
        let mut child = self.child.take().unwrap();
        use wait_timeout::ChildExt;
        let status = child.wait_timeout(self.timeout).map_err(|e| e.to_string())?;
        let status = match status {
            Some(s) => s,
            None => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "child did not exit within {} s: killed; {}",
                    self.timeout.as_secs(),
                    self.stderr_text()
                ));
            }
        };
        let err = self.stderr_text();
        if status.success() {
            Ok(err)
        } else {
            Err(format!("child {status}; {err}"))
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
    pub fn fail(mut self, e: String) -> String {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let status = c.wait().map(|s| s.to_string()).unwrap_or_default();
            return format!("{e} (child {status}; {})", self.stderr_text());
        }
        e
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

/// Open fds of this process (Linux /proc/self/fd), excluding the listing's own handle.
pub fn open_fds() -> usize {
    fd_table().len()
}

/// fd -> what it refers to (readlink of /proc/self/fd/N), without the listing's own handle (whose
/// link no longer resolves once the listing is done).
pub fn fd_table() -> std::collections::BTreeMap<i32, String> {
    let mut fds = Vec::new();
    if let Ok(d) = std::fs::read_dir("/proc/self/fd") {
        fds.extend(
            d.flatten()
                .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok()),
        );
    }
    fds.into_iter()
        .filter_map(|fd| {
            std::fs::read_link(format!("/proc/self/fd/{fd}"))
                .ok()
                .map(|t| (fd, t.display().to_string()))
        })
        .collect()
}

/// The fds in `after` that `before` lacked (and the reverse), with their targets.
pub fn fd_diff(
    before: &std::collections::BTreeMap<i32, String>,
    after: &std::collections::BTreeMap<i32, String>,
) -> String {
    let only = |a: &std::collections::BTreeMap<i32, String>, b: &std::collections::BTreeMap<i32, String>| {
        a.iter()
            .filter(|(k, v)| b.get(k) != Some(v))
            .map(|(k, v)| format!("{k} -> {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("new: [{}], closed: [{}]", only(after, before), only(before, after))
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
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}
