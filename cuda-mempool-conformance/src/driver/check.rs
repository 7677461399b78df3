//! Small helpers over the raw bindings: checked calls with readable failures, guards that leave
//! nothing behind, and a host-function gate that holds a stream until released (and records a
//! release its safety limit had to make).

use crate::driver::cu::*;
use crate::driver::deadline::Deadline;
pub use crate::driver::fail::{ignore, Fail, R};
use std::ffi::c_void;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const SUCCESS: CUresult = CUresult::CUDA_SUCCESS;

/// `CUDA_ERROR_X (n)`, or `unknown (n)` for a code the bindings do not name (a negative value,
/// which no CUresult is, shows as such: `unknown (-1)`). Named by the bindings' own table, never by
/// the driver: the library under test may be absent, broken, or crash when asked.
pub fn code_name(r: CUresult) -> String {
    match r.name() {
        Some(name) => format!("{name} ({})", r.0),
        None => format!("unknown ({})", r.0 as i32),
    }
}

/// A driver function the table lacks, found with cuGetProcAddress as the CUDA runtime finds it
/// (so that an interposer's hook of it is what runs). `F` must be the function's exact prototype.
pub fn proc_address<F: Copy>(symbol: &std::ffi::CStr) -> R<F> {
    let (r, f) = beyond_table(symbol);
    ok(&format!("cuGetProcAddress({symbol:?})"), r)?;
    crate::ensure!(
        !f.is_null(),
        "cuGetProcAddress({symbol:?}) answered SUCCESS and no function"
    );
    // SAFETY: the caller names the function's exact prototype.
    Ok(unsafe { std::mem::transmute_copy(&f) })
}

/// Require success. `what` starts with the call's name (`cuMemFreeAsync(...)`): a failure is
/// blamed on that API (`blame.rs`).
pub fn ok(what: &str, r: CUresult) -> R {
    expect(what, r, SUCCESS)
}

/// Require one exact code; a failure is blamed on the API `what` starts with and is the trial's
/// cause (`blame::answered`).
pub fn expect(what: &str, got: CUresult, want: CUresult) -> R {
    crate::driver::observe::record_with(|| crate::driver::observe::Observation {
        api: crate::driver::blame::api_of(what).map(u64::from),
        call: what.to_string(),
        documented: code_name(want),
        expected: code_name(want),
        observed: code_name(got),
        ok: got == want,
        ..Default::default()
    });
    if got == want {
        Ok(())
    } else {
        crate::driver::blame::answered(what, got);
        Err(format!(
            "{what}: expected {}, driver returned {}",
            code_name(want),
            code_name(got)
        )
        .into())
    }
}

thread_local! {
    static NOTES: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A line about this trial for the report (a measurement, say), whatever its outcome.
pub fn note(line: impl Into<String>) {
    NOTES.with(|n| n.borrow_mut().push(line.into()));
}

/// The notes of the trial that just ran on this thread (and forget them).
pub fn take_notes() -> Vec<String> {
    NOTES.with(|n| std::mem::take(&mut *n.borrow_mut()))
}

/// Properties of a plain device pool on `dev`.
pub fn device_props(dev: CUdevice) -> CUmemPoolProps {
    CUmemPoolProps {
        allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        location: mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, dev),
        ..Default::default()
    }
}

/// The id of a location, whichever way CUDA 13's union spells it.
pub fn location_id(l: &CUmemLocation) -> i32 {
    l.__bindgen_anon_1.id()
}

/// A pool this case created; destroyed on drop (unless taken).
pub struct Pool(pub CUmemoryPool);
impl Pool {
    pub fn create(props: &CUmemPoolProps) -> R<Pool> {
        let mut p = std::ptr::null_mut();
        ok("cuMemPoolCreate", unsafe { cuMemPoolCreate(&mut p, props) })?;
        Ok(Pool(p))
    }
    pub fn on_device(dev: CUdevice) -> R<Pool> {
        Self::create(&device_props(dev))
    }
    /// A device pool that can be exported as a POSIX file descriptor.
    pub fn ipc(dev: CUdevice) -> R<Pool> {
        let mut props = device_props(dev);
        props.handleTypes = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        Self::create(&props)
    }
    /// Hand the pool over (the caller destroys it, or the case checks its destruction).
    pub fn take(self) -> CUmemoryPool {
        let p = self.0;
        std::mem::forget(self);
        p
    }
}
impl Drop for Pool {
    fn drop(&mut self) {
        let _ = unsafe { cuMemPoolDestroy(self.0) };
    }
}

/// A non-blocking stream; synchronised and destroyed on drop.
pub struct Stream(pub CUstream);
impl Stream {
    pub fn new() -> R<Stream> {
        let mut s = std::ptr::null_mut();
        ok("cuStreamCreate", unsafe {
            cuStreamCreate(&mut s, CUstream_flags::CU_STREAM_NON_BLOCKING.0)
        })?;
        Ok(Stream(s))
    }
    pub fn sync(&self) -> R {
        ok("cuStreamSynchronize", unsafe { cuStreamSynchronize(self.0) })
    }
}
impl Drop for Stream {
    fn drop(&mut self) {
        unsafe {
            let _ = cuStreamSynchronize(self.0);
            let _ = cuStreamDestroy_v2(self.0);
        }
    }
}

/// An event without timing; destroyed on drop.
pub struct Event(pub CUevent);
impl Event {
    pub fn new(flags: u32) -> R<Event> {
        let mut e = std::ptr::null_mut();
        ok("cuEventCreate", unsafe {
            cuEventCreate(&mut e, flags | CUevent_flags::CU_EVENT_DISABLE_TIMING.0)
        })?;
        Ok(Event(e))
    }
    pub fn record(&self, s: CUstream) -> R {
        ok("cuEventRecord", unsafe { cuEventRecord(self.0, s) })
    }
}
impl Drop for Event {
    fn drop(&mut self) {
        let _ = unsafe { cuEventDestroy_v2(self.0) };
    }
}

/// The bytes a fresh pool of `dev` reserves for a 1-byte allocation (its reservation chunk), as
/// this driver does it now: a figure of the GPU model (`driver::figures`), measured, never assumed.
pub fn pool_chunk(dev: CUdevice) -> R<u64> {
    let p = Pool::on_device(dev)?;
    set_u64(p.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
    let a = alloc_from(p.0, 1, std::ptr::null_mut())?;
    ok("cuStreamSynchronize", unsafe {
        cuStreamSynchronize(std::ptr::null_mut())
    })?;
    let r = get_u64(p.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    free_async(a, std::ptr::null_mut())?;
    ok("cuStreamSynchronize", unsafe {
        cuStreamSynchronize(std::ptr::null_mut())
    })?;
    let c = r?;
    if c == 0 {
        return Err(Fail::Wrong(
            "a fresh pool reserved nothing for a 1-byte allocation".into(),
        ));
    }
    Ok(c)
}

pub fn alloc_from(pool: CUmemoryPool, size: usize, s: CUstream) -> R<CUdeviceptr> {
    let mut p: CUdeviceptr = 0;
    ok("cuMemAllocFromPoolAsync", unsafe {
        cuMemAllocFromPoolAsync(&mut p, size, pool, s)
    })?;
    Ok(p)
}
pub fn alloc_async(size: usize, s: CUstream) -> R<CUdeviceptr> {
    let mut p: CUdeviceptr = 0;
    ok("cuMemAllocAsync", unsafe { cuMemAllocAsync(&mut p, size, s) })?;
    Ok(p)
}
pub fn free_async(p: CUdeviceptr, s: CUstream) -> R {
    ok("cuMemFreeAsync", unsafe { cuMemFreeAsync(p, s) })
}

pub fn get_u64(pool: CUmemoryPool, a: CUmemPool_attribute) -> R<u64> {
    let mut v: u64 = 0;
    let what = format!("cuMemPoolGetAttribute({a:?})");
    ok(&what, unsafe {
        cuMemPoolGetAttribute(pool, a, (&mut v as *mut u64).cast())
    })?;
    crate::driver::observe::value(what, format!("value {v}"));
    Ok(v)
}
pub fn get_i32(pool: CUmemoryPool, a: CUmemPool_attribute) -> R<i32> {
    let mut v: i32 = 0;
    let what = format!("cuMemPoolGetAttribute({a:?})");
    ok(&what, unsafe {
        cuMemPoolGetAttribute(pool, a, (&mut v as *mut i32).cast())
    })?;
    crate::driver::observe::value(what, format!("value {v}"));
    Ok(v)
}
pub fn set_u64(pool: CUmemoryPool, a: CUmemPool_attribute, mut v: u64) -> R {
    ok("cuMemPoolSetAttribute", unsafe {
        cuMemPoolSetAttribute(pool, a, (&mut v as *mut u64).cast())
    })
}
pub fn set_i32(pool: CUmemoryPool, a: CUmemPool_attribute, mut v: i32) -> R {
    ok("cuMemPoolSetAttribute", unsafe {
        cuMemPoolSetAttribute(pool, a, (&mut v as *mut i32).cast())
    })
}

/// Export a pool as a POSIX file descriptor, which the caller then owns.
pub fn export_pool_fd(pool: CUmemoryPool) -> R<std::os::fd::OwnedFd> {
    let mut fd: i32 = -1;
    let posix = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    ok("cuMemPoolExportToShareableHandle", unsafe {
        cuMemPoolExportToShareableHandle((&mut fd as *mut i32).cast(), pool, posix, 0)
    })?;
    crate::ensure!(fd >= 0, "export returned fd {fd}");
    // SAFETY: the driver handed us this fd to own.
    Ok(unsafe { std::os::fd::FromRawFd::from_raw_fd(fd) })
}

/// Import a pool from a POSIX file descriptor (passed by value, as the API takes it); the
/// driver's code. The fd stays the caller's.
pub fn import_pool_fd(fd: std::os::fd::RawFd, out: &mut CUmemoryPool) -> CUresult {
    let posix = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    unsafe { cuMemPoolImportFromShareableHandle(out, fd as isize as *mut std::ffi::c_void, posix, 0) }
}

/// The pool an address belongs to, per the driver (CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE).
pub fn pool_of(p: CUdeviceptr) -> R<CUmemoryPool> {
    let mut pool: CUmemoryPool = std::ptr::null_mut();
    ok("cuPointerGetAttribute(MEMPOOL_HANDLE)", unsafe {
        cuPointerGetAttribute(
            (&mut pool as *mut CUmemoryPool).cast(),
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
            p,
        )
    })?;
    Ok(pool)
}

pub fn default_pool(dev: CUdevice) -> R<CUmemoryPool> {
    let mut p = std::ptr::null_mut();
    ok("cuDeviceGetDefaultMemPool", unsafe {
        cuDeviceGetDefaultMemPool(&mut p, dev)
    })?;
    Ok(p)
}
pub fn current_pool(dev: CUdevice) -> R<CUmemoryPool> {
    let mut p = std::ptr::null_mut();
    ok("cuDeviceGetMemPool", unsafe { cuDeviceGetMemPool(&mut p, dev) })?;
    Ok(p)
}

/// Makes `pool` the current pool of `dev` and restores the previous one on drop.
pub struct CurrentPool {
    dev: CUdevice,
    prev: CUmemoryPool,
}
impl CurrentPool {
    pub fn set(dev: CUdevice, pool: CUmemoryPool) -> R<CurrentPool> {
        let prev = current_pool(dev)?;
        ok("cuDeviceSetMemPool", unsafe { cuDeviceSetMemPool(dev, pool) })?;
        Ok(CurrentPool { dev, prev })
    }
}
impl Drop for CurrentPool {
    fn drop(&mut self) {
        let _ = unsafe { cuDeviceSetMemPool(self.dev, self.prev) };
    }
}

/// Holds a stream at a host function until `open` (or `release`, or drop), so a case can decide
/// exactly which of its stream operations have completed. A safety limit (`Deadline::gate_limit`) opens a
/// gate nobody opened: a call that waited for the held stream then returns, and the gate records it
/// ([`ForcedGate`]). The harness takes every forced gate of a trial after it ([`take_forced_gates`])
/// and fails the trial (`harness::verdict::forced_gates_fail`), so no trial that holds a stream
/// can pass on a call that waited for it.
pub struct Gate {
    shared: Arc<GateShared>,
}
struct GateShared {
    state: Mutex<GateState>,
    /// How long the gate holds its stream before opening by itself (`Deadline::gate_limit`): kept
    /// here for the host function, which the driver calls with only this value's pointer.
    limit: Duration,
    /// The closing thread's tracked call (`crumb::Current`): what the limit names.
    owner: Arc<crate::driver::crumb::Current>,
}
impl GateShared {
    /// A closed gate of the calling thread, registered for [`take_forced_gates`], opening by itself
    /// after `limit`.
    fn new(limit: Duration) -> Arc<GateShared> {
        let shared = Arc::new(GateShared {
            state: Mutex::new(GateState::Closed),
            limit,
            owner: crate::driver::crumb::current(),
        });
        GATES.with(|g| g.borrow_mut().push(shared.clone()));
        shared
    }
}
enum GateState {
    Closed,
    Opened,
    /// Opened by the safety limit; `reported` once the trial itself judged it (`Gate::release`).
    Forced {
        gate: ForcedGate,
        reported: bool,
    },
}

/// A gate its safety limit opened: the tracked call the closing thread was inside then (its API and
/// how long it had been waiting), if any.
#[derive(Clone, Debug, PartialEq)]
pub struct ForcedGate {
    pub limit: Duration,
    pub call: Option<(u32, Duration)>,
}
impl ForcedGate {
    /// The API to blame: the call that waited, if one did.
    pub fn api(&self) -> Option<u32> {
        self.call.map(|c| c.0)
    }
    /// Why the trial fails, in one line.
    pub fn describe(&self) -> String {
        let limit = self.limit.as_secs_f64();
        match self.call {
            Some((api, waited)) => format!(
                "{} ({api}) waited for a stream held at a gate: it had been waiting {:.1} s when the gate's                  safety limit ({limit:.1} s) opened the stream; a stream-ordered call must return while its                  stream is held",
                crate::driver::api_name(api),
                waited.as_secs_f64()
            ),
            None => format!(
                "a stream held at a gate was opened by the gate's safety limit ({limit:.1} s), not by the trial,                  with no tracked call in progress on the trial's thread: the trial's work waited for the held stream"
            ),
        }
    }
}

thread_local! {
    static GATES: std::cell::RefCell<Vec<Arc<GateShared>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The gates closed on this thread since the last call that their safety limit opened and the
/// trial did not judge itself (and forget every gate).
pub fn take_forced_gates() -> Vec<ForcedGate> {
    let gates = GATES.with(|g| std::mem::take(&mut *g.borrow_mut()));
    gates
        .iter()
        .filter_map(|g| match &*lock(&g.state) {
            GateState::Forced { gate, reported: false } => Some(gate.clone()),
            _ => None,
        })
        .collect()
}

fn lock(m: &Mutex<GateState>) -> std::sync::MutexGuard<'_, GateState> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

unsafe extern "C" fn gate_wait(user: *mut c_void) {
    // SAFETY: `user` is the Arc<GateShared> leaked by Gate::close, reclaimed here exactly once.
    let shared = unsafe { Arc::from_raw(user as *const GateShared) };
    hold(&shared);
}
/// The host function's work: wait until the gate is opened, or open it at its limit and record so.
fn hold(shared: &GateShared) {
    let (start, limit) = (Instant::now(), shared.limit);
    loop {
        {
            let mut state = lock(&shared.state);
            if !matches!(*state, GateState::Closed) {
                return;
            }
            if start.elapsed() >= limit {
                let call = shared.owner.now();
                *state = GateState::Forced {
                    gate: ForcedGate { limit, call },
                    reported: false,
                };
                return;
            }
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}
impl Gate {
    /// Hold stream `s` at a gate, whose safety limit is `deadline`'s ([`Deadline::gate_limit`]).
    pub fn close(s: CUstream, deadline: Deadline) -> R<Gate> {
        let shared = GateShared::new(deadline.gate_limit());
        let user = Arc::into_raw(shared.clone()) as *mut c_void;
        let r = unsafe { cuLaunchHostFunc(s, Some(gate_wait), user) };
        if r != SUCCESS {
            drop(unsafe { Arc::from_raw(user as *const GateShared) });
        }
        ok("cuLaunchHostFunc", r)?;
        Ok(Gate { shared })
    }
    /// Open the gate (nothing happens if its safety limit already did).
    pub fn open(&self) {
        let mut state = lock(&self.shared.state);
        if matches!(*state, GateState::Closed) {
            *state = GateState::Opened;
        }
    }
    /// Open the gate, for a case that times its own calls: whether its safety limit had opened it
    /// first (the calls made meanwhile waited for the held stream). The case reports it itself;
    /// the harness does not again.
    pub fn release(self) -> Option<ForcedGate> {
        self.open();
        match &mut *lock(&self.shared.state) {
            GateState::Forced { gate, reported } => {
                *reported = true;
                Some(gate.clone())
            }
            _ => None,
        }
    }
}
impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
    }
}

/// Allocate `size` bytes from `pool` on `s`, free them and synchronise, then free them again: the
/// second free must be refused with INVALID_VALUE.
pub fn refused_double_free(pool: CUmemoryPool, size: usize, s: CUstream) -> R {
    let a = alloc_from(pool, size, s)?;
    free_async(a, s)?;
    ok("cuStreamSynchronize", unsafe { cuStreamSynchronize(s) })?;
    expect(
        "second cuMemFreeAsync of the same pointer",
        unsafe { cuMemFreeAsync(a, s) },
        CUresult::CUDA_ERROR_INVALID_VALUE,
    )
}

/// CUmemorytype's CU_MEMORYTYPE_HOST (the bindings leave the enum out).
pub const CU_MEMORYTYPE_HOST: u32 = 1;

/// The memory type (CU_POINTER_ATTRIBUTE_MEMORY_TYPE) of an allocation of `size` bytes from
/// `pool`, freed before the answer is checked.
pub fn pool_memory_type(pool: CUmemoryPool, size: usize) -> R<u32> {
    let s = Stream::new()?;
    let a = alloc_from(pool, size, s.0)?;
    s.sync()?;
    let mut kind: u32 = 0;
    let r = unsafe {
        cuPointerGetAttribute(
            (&mut kind as *mut u32).cast(),
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            a,
        )
    };
    free_async(a, s.0)?;
    s.sync()?;
    ok("cuPointerGetAttribute(MEMORY_TYPE)", r)?;
    Ok(kind)
}

/// (free, total) device memory now, per cuMemGetInfo for the current context's device.
pub fn mem_info() -> R<(usize, usize)> {
    let (mut free, mut total) = (0usize, 0usize);
    ok("cuMemGetInfo", unsafe { cuMemGetInfo_v2(&mut free, &mut total) })?;
    Ok((free, total))
}

/// Free device memory now (cuMemGetInfo).
pub fn mem_free() -> R<usize> {
    Ok(mem_info()?.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The host function's side of a gate, run on another thread as the driver runs it.
    fn hold_elsewhere(shared: &Arc<GateShared>) {
        let shared = shared.clone();
        std::thread::spawn(move || hold(&shared)).join().unwrap();
    }

    #[test]
    fn a_gate_opened_in_time_is_not_forced() {
        let _ = take_forced_gates();
        let gate = Gate {
            shared: GateShared::new(Duration::from_secs(60)),
        };
        gate.open();
        hold_elsewhere(&gate.shared);
        assert_eq!(gate.release(), None);
        assert!(take_forced_gates().is_empty());
    }

    #[test]
    fn a_gate_its_limit_opened_fails_the_trial_naming_the_waiting_call() {
        let _ = take_forced_gates();
        let gate = Gate {
            shared: GateShared::new(Duration::from_millis(5)),
        };
        {
            let _inside = crate::driver::crumb::enter(820, "cuMemAllocAsync");
            hold_elsewhere(&gate.shared);
        }
        gate.open();
        drop(gate);
        let forced = take_forced_gates();
        assert_eq!(forced.len(), 1);
        assert_eq!(forced[0].api(), Some(820));
        assert!(forced[0]
            .describe()
            .starts_with("cuMemAllocAsync (820) waited for a stream held at a gate"));
        assert!(take_forced_gates().is_empty(), "taken once");
    }

    #[test]
    fn a_forced_gate_the_trial_released_itself_is_not_reported_again() {
        let _ = take_forced_gates();
        let gate = Gate {
            shared: GateShared::new(Duration::from_millis(1)),
        };
        hold_elsewhere(&gate.shared);
        let forced = gate.release().expect("forced");
        assert_eq!(forced.api(), None);
        assert!(take_forced_gates().is_empty());
    }
}
