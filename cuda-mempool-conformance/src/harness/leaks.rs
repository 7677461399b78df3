//! The leak check: what the suite itself still holds at the end of a run, per process.
//!
//! Each worker reports, when told to finish:
//! - the ledger (`ledger.rs`): pools created or imported and allocations made or imported through
//!   the tracked calls and never released, each with the trial that created it;
//! - on every device it holds a context of: the default pool's used memory (must be 0), its
//!   reserved memory after trimming to 0 (must be 0), its release threshold (must be back at 0),
//!   and the current pool (must be the default pool again);
//! - open fds that were not open after its warm-up, each with the trial after which it appeared;
//! - child processes still running.
//!
//! Device-wide free memory (cuMemGetInfo) is deliberately not a signal: the driver creates state
//! lazily, per-thread default streams keep memory, and other processes share the GPU, so it moves
//! for reasons that are not the suite's (measured: 2–6 MiB on H100 and H200 runs that leaked
//! nothing). The warm-up below makes the driver create its once-per-process files and state before
//! the fd baseline is taken, and calls none of the 14 APIs: a library that breaks one of them costs
//! the trials that call it, not every worker.
//!
//! The fds the library opened while the worker looked an entry point up (`driver::lookups`) are
//! set apart (`Findings::by_lookup`): a library that initialises the driver in its look-up is
//! `suite::lookup_does_not_initialise`'s one cause, not a leak of whichever trial looked up first
//! (issue 58). `suite::no_leaks` decides where they go.

use crate::driver::check::*;
use crate::driver::cu::*;
use crate::harness::case::Env;
use crate::harness::machine::Cap;
use crate::os::{fd_diff, fd_table};
use std::collections::BTreeMap;

use crate::driver::cu::CUmemPool_attribute_enum as A;

// Test-only: CONFORMANCE_PLANT_LEAK=alloc,pool,fd (`harness::settings`) adds trials
// `suite::planted_leak_*` that leak on purpose (`plant`), so that a run can show `suite::no_leaks`
// catching and naming each.

/// What a leak check found, each line in words: the leaks, and apart from them the fds still open
/// that the library opened during a look-up of an entry point (worded as a leak, for the run whose
/// look-up leaves the driver uninitialised: they are leaks there).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Findings {
    pub leaks: Vec<String>,
    pub by_lookup: Vec<String>,
}

impl Findings {
    /// Both lists, each line prefixed with `who` (`worker 3: `).
    pub fn of(self, who: &str) -> Findings {
        let with = |v: Vec<String>| v.into_iter().map(|l| format!("{who}{l}")).collect();
        Findings {
            leaks: with(self.leaks),
            by_lookup: with(self.by_lookup),
        }
    }
    /// `other`'s lines after these.
    pub fn extend(&mut self, other: Findings) {
        self.leaks.extend(other.leaks);
        self.by_lookup.extend(other.by_lookup);
    }
}

/// What a worker knows at its start, to compare with at its end.
pub struct WorkerState {
    fds: BTreeMap<i32, String>,
    /// fd → (target, the trial after which it first appeared).
    seen: BTreeMap<i32, (String, String)>,
    warm_error: Option<String>,
}

impl WorkerState {
    /// Warm up and take the fd baseline (the worker holds its device's context already).
    pub fn start(env: &Env) -> WorkerState {
        // A worker whose trials need no device holds no context (and warms up no device state).
        let gpu = env.m.has(Cap::Gpu).is_ok() && env.ctx != 0;
        let warm_error = warm_up(env, gpu).err().map(String::from);
        WorkerState {
            fds: fd_table(),
            seen: BTreeMap::new(),
            warm_error,
        }
    }

    /// Before a trial: retain the contexts of the devices it uses, which the worker then keeps;
    /// the fds the driver opens for them join the baseline (they are the worker's, not the trial's).
    pub fn prepare(&mut self, c: &crate::harness::case::Case, env: &Env) {
        if env.ctx == 0 {
            return;
        }
        let before = fd_table();
        let held: Vec<CUdevice> = crate::harness::probe::held_contexts().iter().map(|h| h.0).collect();
        for d in std::iter::once(&c.dev).chain(c.peer.iter()).chain(c.multi.iter()) {
            let ctx = crate::harness::probe::retain_context(*d);
            if ctx != 0 && !held.contains(d) {
                // The driver keeps one IPC shared-memory file per device and process, opened at the
                // first IPC event handle there: make it now, so that it is the worker's.
                let _ = ipc_event_on(ctx);
            }
        }
        let after = fd_table();
        if after != before {
            for (fd, t) in after {
                if before.get(&fd) != Some(&t) {
                    self.fds.insert(fd, t);
                }
            }
        }
    }

    /// Note the fds a trial left open (cheap: one directory listing).
    pub fn after_trial(&mut self, trial: &str) {
        let now = fd_table();
        self.seen.retain(|fd, (t, _)| now.get(fd) == Some(t));
        for (fd, target) in &now {
            if self.fds.get(fd) != Some(target) && !self.seen.contains_key(fd) {
                self.seen.insert(*fd, (target.clone(), trial.to_string()));
            }
        }
    }

    /// Everything this worker still holds that it did not hold after its warm-up; the fds the
    /// library opened in a look-up apart.
    pub fn end_check(&self, env: &Env) -> Findings {
        let mut by_lookup = Vec::new();
        let mut leaks = crate::driver::ledger::outstanding();
        if let Some(e) = &self.warm_error {
            leaks.push(format!(
                "the warm-up failed ({e}), so the fd baseline may be incomplete"
            ));
        }
        for (dev, ctx) in crate::harness::probe::held_contexts() {
            // A device without pools has no pool state to leave behind.
            if !env.m.devices.get(dev as usize).is_some_and(|d| d.memory_pools) {
                continue;
            }
            let _ = unsafe { cuCtxSetCurrent(ctx as CUcontext) };
            leaks.extend(pool_state(dev));
        }
        env.bind();
        let now = fd_table();
        for (fd, target) in &now {
            if self.fds.get(fd) != Some(target) {
                let when = match self.seen.get(fd) {
                    Some((_, trial)) => format!(" (first open after trial {trial})"),
                    None => String::new(),
                };
                let line = format!("fd {fd} -> {target} still open{when}");
                if crate::driver::lookups::opened_by_lookup(*fd, target) {
                    by_lookup.push(line);
                } else {
                    leaks.push(line);
                }
            }
        }
        let kids = children();
        if !kids.is_empty() {
            leaks.push(format!("child processes still running: {}", kids.join(", ")));
        }
        Findings { leaks, by_lookup }
    }
}

/// Device `dev`'s default and current pool, as the run should leave them (its context current).
fn pool_state(dev: CUdevice) -> Vec<String> {
    let mut v = Vec::new();
    let _ = unsafe { cuCtxSynchronize() };
    let d = match default_pool(dev) {
        Ok(d) => d,
        Err(e) => return vec![format!("device {dev}: {e}")],
    };
    match get_u64(d, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT) {
        Ok(0) => {}
        Ok(n) => v.push(format!("device {dev}'s default pool: {n} bytes still in use")),
        Err(e) => v.push(format!("device {dev}'s default pool: {e}")),
    }
    match get_u64(d, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) {
        Ok(0) => {}
        Ok(n) => v.push(format!(
            "device {dev}'s default pool: release threshold left at {n} (was 0)"
        )),
        Err(e) => v.push(format!("device {dev}'s default pool: {e}")),
    }
    // With its threshold at 0 the pool released everything at the synchronisation above; trim
    // only if it did not (so that a library that breaks cuMemPoolTrimTo does not stall this check).
    let reserved = get_u64(d, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT).and_then(|n| {
        if n == 0 {
            return Ok(0);
        }
        ok("cuMemPoolTrimTo(default pool, 0)", unsafe { cuMemPoolTrimTo(d, 0) })?;
        get_u64(d, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
    });
    match reserved {
        Ok(0) => {}
        Ok(n) => v.push(format!(
            "device {dev}'s default pool: {n} bytes still reserved after trimming to 0"
        )),
        Err(e) => v.push(format!("device {dev}'s default pool: {e}")),
    }
    match current_pool(dev) {
        Ok(c) if c == d => {}
        Ok(c) => v.push(format!(
            "device {dev}'s current pool is {c:p}, not its default pool {d:p}"
        )),
        Err(e) => v.push(format!("device {dev}: {e}")),
    }
    v
}

/// Make the driver and the runtime create what they create once per process and keep (the IPC
/// shared-memory file, fill and copy code, stream, event and host-function machinery, Rust std's
/// spawn socketpair), without touching the 14 APIs.
fn warm_up(env: &Env, gpu: bool) -> R {
    crate::harness::child::run_child(&crate::harness::child::Role::Noop, &[], env.deadline())?;
    if !gpu {
        return Ok(());
    }
    env.bind();
    let s = Stream::new()?;
    let s2 = Stream::new()?;
    let ev = Event::new(CUevent_flags::CU_EVENT_INTERPROCESS.0)?;
    let mut h = CUipcEventHandle::default();
    ok("cuIpcGetEventHandle", unsafe { cuIpcGetEventHandle(&mut h, ev.0) })?;
    let n = 4 << 20;
    let (mut p, mut q): (CUdeviceptr, CUdeviceptr) = (0, 0);
    let mut host = vec![0u8; 4096];
    unsafe {
        ok("cuMemAlloc", cuMemAlloc_v2(&mut p, n))?;
        ok("cuMemAlloc", cuMemAlloc_v2(&mut q, n))?;
        ok("cuMemsetD8Async", cuMemsetD8Async(p, 1, n, s.0))?;
        ok("cuMemsetD32Async", cuMemsetD32Async(p, 1, n / 4, s.0))?;
        ok("cuMemsetD8", cuMemsetD8_v2(q, 1, n))?;
        ok("cuMemsetD32", cuMemsetD32_v2(q, 1, n / 4))?;
        ok("cuMemcpyAsync", cuMemcpyAsync(q, p, n, s.0))?;
        ok("cuMemcpy", cuMemcpy(q, p, n))?;
        ok(
            "cuMemcpyHtoDAsync",
            cuMemcpyHtoDAsync_v2(p, host.as_ptr().cast(), 4096, s.0),
        )?;
        ok(
            "cuMemcpyDtoHAsync",
            cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), p, 4096, s.0),
        )?;
        ok("cuMemcpyHtoD", cuMemcpyHtoD_v2(p, host.as_ptr().cast(), 4096))?;
        ok("cuMemcpyDtoH", cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), p, 4096))?;
    }
    let gate = Gate::close(s.0, env.deadline())?;
    gate.open();
    ev.record(s.0)?;
    ok("cuStreamWaitEvent", unsafe { cuStreamWaitEvent(s2.0, ev.0, 0) })?;
    s2.sync()?;
    s.sync()?;
    unsafe {
        ok("cuMemFree", cuMemFree_v2(p))?;
        ok("cuMemFree", cuMemFree_v2(q))?;
    }
    Ok(())
}

/// Create an IPC event in context `ctx` and take its handle (the driver's per-device state).
fn ipc_event_on(ctx: usize) -> R {
    ok("cuCtxPushCurrent", unsafe { cuCtxPushCurrent_v2(ctx as CUcontext) })?;
    let r = (|| {
        let ev = Event::new(CUevent_flags::CU_EVENT_INTERPROCESS.0)?;
        let mut h = CUipcEventHandle::default();
        ok("cuIpcGetEventHandle", unsafe { cuIpcGetEventHandle(&mut h, ev.0) })
    })();
    let mut popped = std::ptr::null_mut();
    let _ = unsafe { cuCtxPopCurrent_v2(&mut popped) };
    r
}

/// Child processes of this process (Linux: /proc/self/task/*/children).
pub fn children() -> Vec<String> {
    let mut v = Vec::new();
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for t in tasks.flatten() {
            if let Ok(c) = std::fs::read_to_string(t.path().join("children")) {
                v.extend(c.split_whitespace().map(String::from));
            }
        }
    }
    v
}

/// The coordinator's own share: fds and children, against a baseline taken before the trials.
pub struct Coordinator {
    fds: BTreeMap<i32, String>,
}
impl Coordinator {
    pub fn baseline() -> Coordinator {
        Coordinator { fds: fd_table() }
    }
    pub fn check(&self) -> Vec<String> {
        let mut v = Vec::new();
        let now = fd_table();
        let new: BTreeMap<i32, String> = now
            .iter()
            .filter(|(k, t)| self.fds.get(k) != Some(t))
            .map(|(k, t)| (*k, t.clone()))
            .collect();
        if !new.is_empty() {
            v.push(format!(
                "coordinator: fds opened during the run and still open: {}",
                fd_diff(&BTreeMap::new(), &new)
            ));
        }
        let kids = children();
        if !kids.is_empty() {
            v.push(format!(
                "coordinator: child processes still running: {}",
                kids.join(", ")
            ));
        }
        v
    }
}

/// The body of `suite::planted_leak_NAME`: leak one thing on purpose and pass.
pub fn plant(name: &str, env: &Env) -> R {
    match name {
        "alloc" => {
            // 2 MiB from device 0's default pool, never freed.
            let s = Stream::new()?;
            let p = alloc_async(2 << 20, s.0)?;
            s.sync()?;
            note(format!("planted: 2 MiB at {p:#x} from the default pool, never freed"));
            Ok(())
        }
        "pool" => {
            let p = Pool::on_device(env.dev)?.take();
            note(format!("planted: pool {p:p}, never destroyed"));
            Ok(())
        }
        "fd" => {
            let f = std::fs::File::open("/dev/null").map_err(|e| format!("open /dev/null: {e}"))?;
            let fd = std::os::fd::IntoRawFd::into_raw_fd(f);
            note(format!("planted: fd {fd} -> /dev/null, never closed"));
            Ok(())
        }
        other => Err(format!("no planted leak named {other}").into()),
    }
}
