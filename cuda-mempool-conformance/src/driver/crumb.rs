//! Breadcrumbs: which of the 14 APIs a process is inside right now, readable by its parent after the
//! process died or hung there.
//!
//! The parent creates a small unlinked file and hands it to the child as fd [`CHILD_FD`]. Before each
//! tracked call (see `cu.rs`) the child writes the API's index and symbol at offset 0 with one
//! `pwrite`, and clears it when the call returns; no allocation, no lock. A parent whose child died
//! by a signal, or stopped answering, reads the file: "died inside cuMemPoolTrimTo (833)" is what
//! lets the report blame the API that crashed or hung rather than the trial that happened to call it.
//! A second record, at offset [`LEN`], holds the last tracked call that returned and its answer: a
//! declared crash that lands in a later call is the declared one only if the call under test
//! accepted the input first (`harness/verdict.rs`).
//!
//! In memory, each thread also keeps which tracked call it is inside and since when ([`Current`]):
//! a gate's host function whose safety limit had to open a held stream names the call that was
//! waiting for it (`check::Gate`).

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The fd a child finds its breadcrumb file at (the channel is fd 3).
pub const CHILD_FD: RawFd = 4;
/// Set by the parent when the child has a breadcrumb file at [`CHILD_FD`].
pub const CRUMB_VAR: &str = "CONFORMANCE_CRUMB";
const LEN: usize = 64;

static MINE: OnceLock<Option<File>> = OnceLock::new();

fn mine() -> Option<&'static File> {
    MINE.get_or_init(|| {
        crate::os::setting_os(CRUMB_VAR)?;
        // SAFETY: the parent placed this process's breadcrumb file at CHILD_FD (see `Crumb::child_fd`);
        // nothing else in this process owns that fd.
        Some(unsafe { File::from_raw_fd(CHILD_FD) })
    })
    .as_ref()
}

/// Which tracked call one thread is inside now and since when, readable from any thread.
#[derive(Default)]
pub struct Current {
    api: AtomicU32,
    since_us: AtomicU64,
}
thread_local! {
    static CURRENT: Arc<Current> = Arc::default();
}
static EPOCH: OnceLock<Instant> = OnceLock::new();
fn micros() -> u64 {
    EPOCH.get_or_init(Instant::now).elapsed().as_micros() as u64
}
impl Current {
    /// The API the thread is inside and how long it has been, or None between calls.
    pub fn now(&self) -> Option<(u32, Duration)> {
        let api = self.api.load(Ordering::Acquire);
        let since = self.since_us.load(Ordering::Relaxed);
        (api != 0).then(|| (api, Duration::from_micros(micros().saturating_sub(since))))
    }
}
/// The calling thread's [`Current`], to read from another thread.
pub fn current() -> Arc<Current> {
    CURRENT.with(Arc::clone)
}

/// Clears the breadcrumb (and the thread's [`Current`]) when the call it marks returns.
pub struct Inside(bool, u32);
impl Inside {
    /// The call returned `r`: record it as the last answer (API index, code) before the guard clears
    /// the breadcrumb.
    pub fn returned(self, r: i32) -> i32 {
        if self.0 {
            if let Some(f) = mine() {
                let mut rec = [0u8; 8];
                rec[..4].copy_from_slice(&self.1.to_le_bytes());
                rec[4..].copy_from_slice(&r.to_le_bytes());
                let _ = f.write_at(&rec, LEN as u64);
            }
        }
        r
    }
}
impl Drop for Inside {
    fn drop(&mut self) {
        let _ = CURRENT.try_with(|c| c.api.store(0, Ordering::Release));
        if self.0 {
            if let Some(f) = mine() {
                let _ = f.write_at(&[0u8; 4], 0);
            }
        }
    }
}

/// Mark this process as inside `api` (`symbol`) until the guard is dropped.
pub fn enter(api: u32, symbol: &str) -> Inside {
    let _ = CURRENT.try_with(|c| {
        c.since_us.store(micros(), Ordering::Relaxed);
        c.api.store(api, Ordering::Release);
    });
    let Some(f) = mine() else { return Inside(false, api) };
    let mut rec = [0u8; LEN];
    rec[..4].copy_from_slice(&api.to_le_bytes());
    let n = symbol.len().min(LEN - 4);
    rec[4..4 + n].copy_from_slice(&symbol.as_bytes()[..n]);
    let _ = f.write_at(&rec, 0);
    Inside(true, api)
}

/// The parent's side: a breadcrumb file for one child.
pub struct Crumb(File);
impl Crumb {
    pub fn new() -> Result<Crumb, String> {
        let dir = std::env::temp_dir();
        for attempt in 0..16u32 {
            let path = dir.join(format!(
                "conformance-crumb-{}-{attempt}-{}",
                std::process::id(),
                nonce()
            ));
            match std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(f) => {
                    let _ = std::fs::remove_file(&path);
                    f.set_len(2 * LEN as u64).map_err(|e| format!("breadcrumb file: {e}"))?;
                    return Ok(Crumb(f));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(format!(
                        "cannot create a breadcrumb file in {} ({e}); set TMPDIR to a writable directory",
                        dir.display()
                    ))
                }
            }
        }
        Err("cannot create a breadcrumb file: names kept colliding".into())
    }
    /// The fd to place at [`CHILD_FD`] in the child (and to set [`CRUMB_VAR`] for).
    pub fn raw_fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
    /// The API the child was inside when it stopped, if any: (index, symbol).
    pub fn read(&self) -> Option<(u32, String)> {
        let mut rec = [0u8; LEN];
        self.0.read_exact_at(&mut rec, 0).ok()?;
        let api = u32::from_le_bytes(rec[..4].try_into().unwrap());
        if api == 0 {
            return None;
        }
        let end = rec[4..].iter().position(|&b| b == 0).map_or(LEN, |p| p + 4);
        Some((api, String::from_utf8_lossy(&rec[4..end]).into_owned()))
    }
    /// The last tracked call that returned, and its answer: (index, raw code).
    pub fn last(&self) -> Option<(u32, i32)> {
        let mut rec = [0u8; 8];
        self.0.read_exact_at(&mut rec, LEN as u64).ok()?;
        let api = u32::from_le_bytes(rec[..4].try_into().unwrap());
        (api != 0).then(|| (api, i32::from_le_bytes(rec[4..].try_into().unwrap())))
    }
    /// Forget the last answer (a worker, before its next trial).
    pub fn clear_last(&self) {
        let _ = self.0.write_at(&[0u8; 8], LEN as u64);
    }
    /// "; it was inside cuMemPoolTrimTo (833)" or "".
    pub fn describe(&self) -> String {
        match self.read() {
            Some((api, sym)) => format!("; it was inside {sym} ({api})"),
            None => String::new(),
        }
    }
}

fn nonce() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}
