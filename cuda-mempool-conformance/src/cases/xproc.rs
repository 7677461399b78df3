//! IPC across processes (825, 826, 829, 830 and the rules of imported pools). The exporter is the
//! test thread; each importer is this binary re-executed in the `ipc-import` or `ipc-rules` role,
//! reached over a `channel::Peer` (SCM_RIGHTS for the pool's fd, JSON for export data and the IPC
//! event handle). Every wait is bounded; a child that dies or hangs fails the trial with its stderr
//! and is reaped.
//!
//! Test-only fault switch: CONFORMANCE_IPC_FAULT=die:STEP or hang:STEP makes the importer abort or
//! hang at STEP (start, import, verify, write, free); the `fault_*` trials use it.

use crate::channel::{fd_diff, fd_table, hex, open_fds, unhex, Peer};
use crate::cu::*;
use crate::driver::*;
use crate::ensure;
use crate::harness::{Case, Env, Group, Shared};
use crate::probe::Cap;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;
use std::time::Instant;

const E_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const POSIX: CUmemAllocationHandleType = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
pub const FAULT_ENV: &str = "CONFORMANCE_IPC_FAULT";

/// Position-dependent bytes, so a shifted or partial copy cannot pass.
/// Every 8-byte word holds a mix of its index and the seed, so each byte depends on its position
/// (a shifted or partial copy fails) while 256 MiB still takes milliseconds to make.
fn pattern(seed: u8, n: usize) -> Vec<u8> {
    let word = |i: usize| {
        ((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(seed).wrapping_mul(0x0101_0101_0101_0101))
            .to_le_bytes()
    };
    let mut v = vec![0u8; n];
    let mut chunks = v.chunks_exact_mut(8);
    for (i, c) in (&mut chunks).enumerate() {
        c.copy_from_slice(&word(i));
    }
    let tail = chunks.into_remainder();
    let k = tail.len();
    tail.copy_from_slice(&word(n / 8)[..k]);
    v
}

fn check_pattern(what: &str, got: &[u8], seed: u8) -> R {
    let want = pattern(seed, got.len());
    match got.iter().zip(&want).position(|(a, b)| a != b) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: byte {i} of {} is {:#04x}, expected {:#04x}",
            got.len(),
            got[i],
            want[i]
        )),
    }
}

fn export_ptr(p: CUdeviceptr) -> R<CUmemPoolPtrExportData> {
    let mut d = CUmemPoolPtrExportData::default();
    ok("cuMemPoolExportPointer", unsafe { cuMemPoolExportPointer(&mut d, p) })?;
    Ok(d)
}

fn data_from_hex(s: &Value) -> R<CUmemPoolPtrExportData> {
    let b = unhex(s.as_str().ok_or("export data is not a string")?)?;
    let mut d = CUmemPoolPtrExportData::default();
    ensure!(b.len() == d.reserved.len(), "export data has {} bytes", b.len());
    d.reserved.copy_from_slice(&b);
    Ok(d)
}

fn event_handle_bytes(h: &CUipcEventHandle) -> Vec<u8> {
    h.reserved.iter().map(|&c| c as u8).collect()
}

/// One exported pool in the parent: its allocations, their seeds and export data.
struct Exported {
    /// Held so the pool is destroyed (after its allocations are freed) when this is dropped.
    _pool: Pool,
    fd: Option<OwnedFd>,
    ptrs: Vec<(CUdeviceptr, usize, u8)>,
}

impl Drop for Exported {
    /// Free whatever is still allocated (a failed round trip returns early): a pool destroyed with
    /// live allocations keeps its resources, an open /dev/nvidiactl among them, until they are freed.
    fn drop(&mut self) {
        // Work still queued on the exporter's (non-blocking) stream must finish first.
        let _ = unsafe { cuCtxSynchronize() };
        for &(p, _, _) in &self.ptrs {
            let _ = unsafe { cuMemFreeAsync(p, CU_STREAM_LEGACY) };
        }
        let _ = unsafe { cuStreamSynchronize(CU_STREAM_LEGACY) };
    }
}

/// One-time, per-process resources appear before a leak check's first snapshot: the driver's
/// shared-memory file (/dev/shm/cuda.shm.*) at the first IPC event handle, and the socketpair Rust's
/// std keeps after its first process spawn (a fresh process per trial under nextest has neither).
fn warm_up_ipc_events() -> R {
    static DONE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        crate::harness::run_child("noop", &[])?;
        let ev = Event::new(CUevent_flags::CU_EVENT_INTERPROCESS.0)?;
        let mut h = CUipcEventHandle::default();
        ok("cuIpcGetEventHandle", unsafe { cuIpcGetEventHandle(&mut h, ev.0) })
    })
    .clone()
}

/// What a round trip should do.
pub struct Spec {
    /// Per pool, the sizes of its allocations.
    pub pools: Vec<Vec<usize>>,
    pub importers: usize,
    /// Passed to the importers as CONFORMANCE_IPC_FAULT.
    pub fault: Option<&'static str>,
    /// Bound on each wait for an importer.
    pub timeout: Duration,
    /// The device the importers work on, in their own numbering (default: the exporter's).
    pub importer_device: Option<CUdevice>,
    /// The importers grant their device access to the imported pools (needed when it is not the
    /// pools' device).
    pub importer_grants: bool,
    /// CUDA_VISIBLE_DEVICES for the importers (another order of the devices).
    pub visible: Option<String>,
    /// The device ordinal the importers must see the imported memory on, in their numbering.
    pub expect_ordinal: Option<i32>,
}

/// CONFORMANCE_IMPORTER_DEVICE=N: the device an importer child works on (default 0).
const IMPORTER_DEVICE_ENV: &str = "CONFORMANCE_IMPORTER_DEVICE";
/// CONFORMANCE_IMPORTER_GRANT=1: the importer grants its device access to each imported pool.
const IMPORTER_GRANT_ENV: &str = "CONFORMANCE_IMPORTER_GRANT";

/// The device this importer child works on.
pub fn importer_device() -> CUdevice {
    std::env::var(IMPORTER_DEVICE_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

impl Spec {
    fn new(pools: Vec<Vec<usize>>, importers: usize) -> Spec {
        Spec {
            pools,
            importers,
            fault: None,
            timeout: child_wait(),
            importer_device: None,
            importer_grants: false,
            visible: None,
            expect_ordinal: None,
        }
    }
}

/// Exporter side of the round trip. Returns a one-line summary (bytes, time).
pub fn round_trip(env: &Env, spec: &Spec) -> R<String> {
    let start = Instant::now();
    // Importers first: their start-up (cuInit, a context) overlaps the exporter's work. The first
    // wait for each also covers that start-up, so it gets the ordinary bound.
    let dev = spec.importer_device.unwrap_or(env.dev).to_string();
    let mut envs: Vec<(&str, &str)> = vec![(IMPORTER_DEVICE_ENV, &dev)];
    envs.extend(spec.fault.map(|f| (FAULT_ENV, f)));
    if spec.importer_grants {
        envs.push((IMPORTER_GRANT_ENV, "1"));
    }
    if let Some(v) = &spec.visible {
        envs.push(("CUDA_VISIBLE_DEVICES", v));
    }
    let mut peers = Vec::new();
    for _ in 0..spec.importers {
        peers.push(Peer::spawn("ipc-import", &envs, child_wait().max(spec.timeout))?);
    }
    let mut phases: Vec<(&str, Duration)> = Vec::new();
    let s = Stream::new()?;
    let mut exported = Vec::new();
    for (pi, sizes) in spec.pools.iter().enumerate() {
        let pool = Pool::ipc(env.dev)?;
        let fd = export_pool_fd(pool.0)?;
        let mut ptrs = Vec::new();
        for (ai, &n) in sizes.iter().enumerate() {
            let seed = (pi * 16 + ai) as u8 ^ 0x3c;
            let p = alloc_from(pool.0, n, s.0)?;
            let host = pattern(seed, n);
            ok("cuMemcpyHtoDAsync", unsafe {
                cuMemcpyHtoDAsync_v2(p, host.as_ptr().cast(), n, s.0)
            })?;
            ptrs.push((p, n, seed));
        }
        exported.push(Exported {
            _pool: pool,
            fd: Some(fd),
            ptrs,
        });
    }
    let ev = Event::new(CUevent_flags::CU_EVENT_INTERPROCESS.0)?;
    ev.record(s.0)?;
    let mut evh = CUipcEventHandle::default();
    ok("cuIpcGetEventHandle", unsafe { cuIpcGetEventHandle(&mut evh, ev.0) })?;
    let mut meta = Vec::new();
    for e in &exported {
        let data: Vec<Value> = e
            .ptrs
            .iter()
            .map(|&(p, _, _)| export_ptr(p).map(|d| json!(hex(&d.reserved))))
            .collect::<R<_>>()?;
        let sizes: Vec<usize> = e.ptrs.iter().map(|x| x.1).collect();
        let seeds: Vec<u8> = e.ptrs.iter().map(|x| x.2).collect();
        meta.push(json!({"sizes": sizes, "seeds": seeds, "data": data}));
    }
    phases.push(("exported", start.elapsed()));
    let talk = |peers: &mut Vec<Peer>, phases: &mut Vec<(&str, Duration)>| -> R<Vec<Value>> {
        for p in peers.iter() {
            for (i, e) in exported.iter().enumerate() {
                p.chan
                    .send(&json!({"op": "pool", "index": i}), e.fd.as_ref().map(|f| f.as_raw_fd()))?;
            }
            p.chan.send(
                &json!({"op": "go", "pools": meta, "event": hex(&event_handle_bytes(&evh))}),
                None,
            )?;
        }
        for p in peers.iter() {
            let (m, _) = p.chan.recv()?;
            expect_op(&m, "verified")?;
            if let Some(want) = spec.expect_ordinal {
                let got = m["ordinal"].as_i64();
                ensure!(
                    got == Some(i64::from(want)),
                    "the importer (CUDA_VISIBLE_DEVICES={:?}) sees the imported memory on device {got:?}, \
                     expected {want}: the pool's physical device",
                    spec.visible
                );
            }
            // From here on every wait is bounded by the spec (short in the fault trials); the
            // first one also covered the importer's start-up.
            p.chan.set_timeout(spec.timeout)?;
        }
        phases.push(("verified", start.elapsed()));
        for (i, p) in peers.iter().enumerate() {
            p.chan
                .send(&json!({"op": if i == 0 { "write" } else { "skip" }}), None)?;
            expect_op(&p.chan.recv()?.0, "written")?;
        }
        phases.push(("written", start.elapsed()));
        let mut done = Vec::new();
        for p in peers.iter() {
            p.chan.send(&json!({"op": "free"}), None)?;
            done.push(p.chan.recv()?.0);
        }
        phases.push(("freed", start.elapsed()));
        Ok(done)
    };
    let done = match talk(&mut peers, &mut phases) {
        Ok(d) => d,
        Err(e) => {
            // Report the first importer whose death explains the failure, reap them all.
            let mut msgs = Vec::new();
            for p in peers.drain(..) {
                msgs.push(p.fail(e.clone()));
            }
            return Err(msgs.into_iter().next().unwrap_or(e));
        }
    };
    for p in peers.drain(..) {
        p.finish()?;
    }
    for (i, d) in done.iter().enumerate() {
        expect_op(d, "done")?;
        let (a, b) = (d["fds_start"].as_u64(), d["fds_end"].as_u64());
        ensure!(
            a == b,
            "importer {i} leaked fds: {a:?} open after init, {b:?} at the end"
        );
    }
    // Importers freed first; now the exporter checks importer 0's writes, then frees.
    let mut bytes = 0usize;
    for e in &exported {
        for &(p, n, seed) in &e.ptrs {
            let mut host = vec![0u8; n];
            ok("cuMemcpyDtoHAsync", unsafe {
                cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), p, n, s.0)
            })?;
            s.sync()?;
            check_pattern("exporter reading the importer's writes", &host, seed ^ 0xa5)?;
            bytes += n;
        }
    }
    // Dropping frees every allocation (after the importers freed theirs), then destroys the pools.
    drop(exported);
    let phases: Vec<String> = phases
        .iter()
        .map(|(p, t)| format!("{p} {:.0}", t.as_secs_f64() * 1e3))
        .collect();
    Ok(format!(
        "{} pool(s), {} allocation(s), {bytes} bytes, {} importer(s): {:.1} ms (ms since start: {})",
        spec.pools.len(),
        spec.pools.iter().map(Vec::len).sum::<usize>(),
        spec.importers,
        start.elapsed().as_secs_f64() * 1e3,
        phases.join(", ")
    ))
}

fn expect_op(m: &Value, op: &str) -> R {
    ensure!(m["op"] == op, "expected message {op:?}, got {m}");
    Ok(())
}

fn fault_at(step: &str) {
    let Ok(f) = std::env::var(FAULT_ENV) else {
        return;
    };
    match f.split_once(':') {
        Some(("die", s)) if s == step => {
            eprintln!("importer: fault injected, aborting at step {step}");
            std::process::abort();
        }
        Some(("hang", s)) if s == step => {
            eprintln!("importer: fault injected, hanging at step {step}");
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
        _ => {}
    }
}

/// Child role `ipc-import`.
pub fn import_main(env: &Env) -> i32 {
    let chan = match crate::channel::Channel::from_inherited() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("importer: {e}");
            return 1;
        }
    };
    let r = importer(env, &chan);
    if let Err(e) = &r {
        eprintln!("importer: {e}");
        chan.send_error(e);
    }
    i32::from(r.is_err())
}

fn importer(env: &Env, chan: &crate::channel::Channel) -> R {
    env.bind();
    fault_at("start");
    let s = Stream::new()?;
    let fds_start = open_fds();
    let mut pools = Vec::new();
    let go = loop {
        let (m, fd) = chan.recv()?;
        match m["op"].as_str() {
            Some("pool") => {
                let fd = fd.ok_or("pool message without an fd")?;
                fault_at("import");
                let mut p = std::ptr::null_mut();
                let r = import_pool_fd(fd.as_raw_fd(), &mut p);
                if !fd_open(fd.as_raw_fd()) {
                    // Not closed twice (the fd was ours to close).
                    std::mem::forget(fd);
                    return Err(
                        "cuMemPoolImportFromShareableHandle closed the fd it imported from, which stays \
                         the caller's"
                            .into(),
                    );
                }
                drop(fd);
                ok("cuMemPoolImportFromShareableHandle", r)?;
                if std::env::var(IMPORTER_GRANT_ENV).as_deref() == Ok("1") {
                    let d = CUmemAccessDesc {
                        location: mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, env.dev),
                        flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                    };
                    ok("cuMemPoolSetAccess(importer grants its own device)", unsafe {
                        cuMemPoolSetAccess(p, &d, 1)
                    })?;
                }
                pools.push(Pool(p));
            }
            Some("go") => break m,
            _ => return Err(format!("unexpected message {m}")),
        }
    };
    let evh_bytes = unhex(go["event"].as_str().ok_or("no event")?)?;
    let mut evh = CUipcEventHandle::default();
    for (d, b) in evh.reserved.iter_mut().zip(&evh_bytes) {
        *d = *b as _;
    }
    let mut ev = std::ptr::null_mut();
    ok("cuIpcOpenEventHandle", unsafe { cuIpcOpenEventHandle(&mut ev, evh) })?;
    let ev = Event(ev);
    ok("cuStreamWaitEvent", unsafe { cuStreamWaitEvent(s.0, ev.0, 0) })?;
    let mut bufs = Vec::new();
    for (pool, meta) in pools.iter().zip(go["pools"].as_array().ok_or("no pools")?) {
        let sizes = meta["sizes"].as_array().ok_or("no sizes")?;
        for (i, d) in meta["data"].as_array().ok_or("no data")?.iter().enumerate() {
            let mut data = data_from_hex(d)?;
            let mut p: CUdeviceptr = 0;
            ok("cuMemPoolImportPointer", unsafe {
                cuMemPoolImportPointer(&mut p, pool.0, &mut data)
            })?;
            let n = sizes[i].as_u64().ok_or("bad size")? as usize;
            let seed = meta["seeds"][i].as_u64().ok_or("bad seed")? as u8;
            bufs.push((p, n, seed));
        }
    }
    fault_at("verify");
    for &(p, n, seed) in &bufs {
        let mut host = vec![0u8; n];
        ok("cuMemcpyDtoHAsync", unsafe {
            cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), p, n, s.0)
        })?;
        s.sync()?;
        check_pattern("importer reading the exporter's pattern", &host, seed)?;
    }
    // The device the imported memory lives on, as this process numbers devices.
    let mut ordinal: i32 = -1;
    if let Some(&(p, _, _)) = bufs.first() {
        ok("cuPointerGetAttribute(DEVICE_ORDINAL)", unsafe {
            cuPointerGetAttribute(
                (&mut ordinal as *mut i32).cast(),
                CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                p,
            )
        })?;
    }
    chan.send(&json!({"op": "verified", "ordinal": ordinal}), None)?;
    let (m, _) = chan.recv()?;
    if m["op"] == "write" {
        fault_at("write");
        for &(p, n, seed) in &bufs {
            let host = pattern(seed ^ 0xa5, n);
            ok("cuMemcpyHtoDAsync", unsafe {
                cuMemcpyHtoDAsync_v2(p, host.as_ptr().cast(), n, s.0)
            })?;
            s.sync()?;
        }
    }
    chan.send(&json!({"op": "written"}), None)?;
    expect_op(&chan.recv()?.0, "free")?;
    fault_at("free");
    for &(p, _, _) in &bufs {
        free_async(p, s.0)?;
    }
    s.sync()?;
    drop(ev);
    drop(pools);
    drop(s);
    chan.send(
        &json!({"op": "done", "fds_start": fds_start, "fds_end": open_fds()}),
        None,
    )?;
    Ok(())
}

/// How long the exporter waits for an importer's next message: well inside the trial's deadline
/// (a quarter of it), so that an importer that hangs fails the trial with its breadcrumb rather
/// than costing the whole worker; but never under 5 s, which an importer's start-up (cuInit, a
/// context, while a dozen other processes create theirs) can take on a busy GPU (seen on the H100
/// with a 10 s deadline: 2.5 s waits failed round trips whose importers were merely slow to start).
pub fn child_wait() -> Duration {
    let trial = crate::harness::trial_timeout().unwrap_or(crate::harness::DEFAULT_TRIAL_TIMEOUT);
    crate::channel::RECV_TIMEOUT.min(trial / 4).max(Duration::from_secs(5))
}

/// The importer's steps, in the order it takes them. Each answer goes to the exporter as soon as
/// it is known, so an importer that dies or hangs inside one call loses that answer only: the
/// exporter starts another importer that skips what is already answered.
const RULE_STEPS: &[&str] = &[
    "import",
    "import_twice",
    "alloc_from_imported",
    "get_release_threshold",
    "get_used_mem_current",
    "set_release_threshold",
    "trim",
    "set_current",
    "get_access_own_device",
    "set_access_own_device",
    "export_imported",
    "import_pointer_null_out",
    "import_pointer_null_data",
    "import_pointer_null_pool",
    "import_pointer",
    "import_pointer_twice",
    "import_pointer_garbage",
    "import_pointer_foreign",
    "free_imported_pointer",
    "peer_get_access_before",
    "peer_set_access",
    "peer_get_access_after",
    "destroy_imported",
];

/// The importer's side of the step protocol.
struct Steps<'a> {
    chan: &'a crate::channel::Channel,
    skip: Vec<String>,
}
impl Steps<'_> {
    /// Take step `key` (unless told to skip it) and send its answer at once.
    fn step(&self, key: &str, f: impl FnOnce() -> Value) -> R<Option<Value>> {
        debug_assert!(RULE_STEPS.contains(&key), "unknown step {key}");
        if self.skip.iter().any(|k| k == key) {
            return Ok(None);
        }
        let v = f();
        self.chan.send(&json!({"op": "answer", "key": key, "value": v}), None)?;
        Ok(Some(v))
    }
    /// A step this importer cannot take, and why.
    fn cannot(&self, key: &str, why: &str, blame: u32) -> R {
        self.step(key, || json!({"not_run": why, "blame": blame})).map(|_| ())
    }
    /// A step later steps depend on: taken even when its answer is already known (a new
    /// importer needs its result), answered only when it is not.
    fn always(&self, key: &str, f: impl FnOnce() -> Value) -> R<Value> {
        debug_assert!(RULE_STEPS.contains(&key), "unknown step {key}");
        let v = f();
        if !self.skip.iter().any(|k| k == key) {
            self.chan.send(&json!({"op": "answer", "key": key, "value": v}), None)?;
        }
        Ok(v)
    }
}

fn code(r: CUresult) -> Value {
    json!({"code": r.0})
}

/// Whether `fd` is an open file descriptor of this process.
fn fd_open(fd: i32) -> bool {
    extern "C" {
        fn fcntl(fd: i32, cmd: i32, ...) -> i32;
    }
    const F_GETFD: i32 = 1;
    // SAFETY: F_GETFD only reads the descriptor's flags.
    unsafe { fcntl(fd, F_GETFD) != -1 }
}

/// The pattern the exporter writes at the start of the allocation whose export data the rules
/// importer imports, and how many bytes of it the importer reads back.
const RULES_SEED: u8 = 0x5c;
const RULES_BYTES: usize = 4096;

/// Child role `ipc-rules`: import the pool and ask the driver what an imported pool allows.
pub fn rules_main(env: &Env) -> i32 {
    let chan = match crate::channel::Channel::from_inherited() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rules: {e}");
            return 1;
        }
    };
    match rules(env, &chan) {
        Ok(()) => i32::from(chan.send(&json!({"op": "done"}), None).is_err()),
        Err(e) => {
            eprintln!("rules: {e}");
            chan.send_error(&e);
            1
        }
    }
}

fn rules(env: &Env, chan: &crate::channel::Channel) -> R {
    env.bind();
    let (m, fd) = chan.recv()?;
    let fd = fd.ok_or("no fd")?;
    let steps = Steps {
        chan,
        skip: m["skip"]
            .as_array()
            .map(|a| a.iter().filter_map(|k| k.as_str().map(String::from)).collect())
            .unwrap_or_default(),
    };
    let mut pool: CUmemoryPool = std::ptr::null_mut();
    // The fd stays the caller's: open after the import, for the caller to close.
    let raw = fd.as_raw_fd();
    let import = steps.always("import", || {
        let r = import_pool_fd(raw, &mut pool);
        json!({"code": r.0, "fd_open": fd_open(raw)})
    })?;
    let fd = if import["fd_open"] == true {
        Some(fd)
    } else {
        // Closed by the import: not closed again.
        std::mem::forget(fd);
        None
    };
    if pool.is_null() {
        for k in &RULE_STEPS[1..] {
            steps.cannot(k, "the pool import did not succeed", 829)?;
        }
        return Ok(());
    }
    let pool = Pool(pool);
    // The same fd imported again.
    steps.step("import_twice", || {
        let mut again = std::ptr::null_mut();
        let r = import_pool_fd(raw, &mut again);
        let same = r == SUCCESS && again == pool.0;
        if r == SUCCESS && !same {
            let _ = unsafe { cuMemPoolDestroy(again) };
        }
        json!({"code": r.0, "same": same})
    })?;
    drop(fd);
    let s = Stream::new()?;
    steps.step("alloc_from_imported", || {
        let mut p: CUdeviceptr = 0;
        let r = unsafe { cuMemAllocFromPoolAsync(&mut p, 4096, pool.0, s.0) };
        if r == SUCCESS {
            let _ = unsafe { cuMemFreeAsync(p, s.0) };
        }
        code(r)
    })?;
    let threshold = CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
    steps.step("get_release_threshold", || {
        let mut v: u64 = 0;
        code(unsafe { cuMemPoolGetAttribute(pool.0, threshold, (&mut v as *mut u64).cast()) })
    })?;
    steps.step("get_used_mem_current", || {
        let mut v: u64 = 0;
        let a = CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT;
        code(unsafe { cuMemPoolGetAttribute(pool.0, a, (&mut v as *mut u64).cast()) })
    })?;
    steps.step("set_release_threshold", || {
        let mut t: u64 = 1 << 20;
        code(unsafe { cuMemPoolSetAttribute(pool.0, threshold, (&mut t as *mut u64).cast()) })
    })?;
    steps.step("trim", || code(unsafe { cuMemPoolTrimTo(pool.0, 0) }))?;
    steps.step("set_current", || {
        let r = unsafe { cuDeviceSetMemPool(env.dev, pool.0) };
        if r == SUCCESS {
            if let Ok(d) = default_pool(env.dev) {
                let _ = unsafe { cuDeviceSetMemPool(env.dev, d) };
            }
        }
        code(r)
    })?;
    let own = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, env.dev);
    steps.step("get_access_own_device", || {
        let mut flags = CUmemAccess_flags(0xdead);
        let mut loc = own;
        let r = unsafe { cuMemPoolGetAccess(&mut flags, pool.0, &mut loc) };
        json!({"code": r.0, "flags": flags.0})
    })?;
    steps.step("set_access_own_device", || {
        let d = CUmemAccessDesc {
            location: own,
            flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        code(unsafe { cuMemPoolSetAccess(pool.0, &d, 1) })
    })?;
    steps.step("export_imported", || {
        let mut h: i32 = -1;
        let r = unsafe { cuMemPoolExportToShareableHandle((&mut h as *mut i32).cast(), pool.0, POSIX, 0) };
        if h >= 0 {
            drop(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(h) });
        }
        code(r)
    })?;
    // Export data: genuine, garbage, and another pool's. The NULL cases come first, each with the
    // other arguments valid (the genuine import right after shows they were).
    let data = m["data"].as_array().ok_or("no data")?;
    let mut good = data_from_hex(&data[0])?;
    let mut q: CUdeviceptr = 0;
    steps.step("import_pointer_null_out", || {
        code(unsafe { cuMemPoolImportPointer(std::ptr::null_mut(), pool.0, &mut good) })
    })?;
    steps.step("import_pointer_null_data", || {
        code(unsafe { cuMemPoolImportPointer(&mut q, pool.0, std::ptr::null_mut()) })
    })?;
    steps.step("import_pointer_null_pool", || {
        code(unsafe { cuMemPoolImportPointer(&mut q, std::ptr::null_mut(), &mut good) })
    })?;
    q = 0;
    // The imported address holds the exporter's bytes (RULES_SEED's pattern).
    let imported = steps.always("import_pointer", || {
        let r = unsafe { cuMemPoolImportPointer(&mut q, pool.0, &mut good) };
        let mut v = code(r);
        if r == SUCCESS && q != 0 {
            let mut head = vec![0u8; RULES_BYTES];
            let read = unsafe { cuMemcpyDtoHAsync_v2(head.as_mut_ptr().cast(), q, head.len(), s.0) };
            let synced = s.sync();
            v["bytes_ok"] = json!(read == SUCCESS && synced.is_ok() && head == pattern(RULES_SEED, RULES_BYTES));
        }
        v
    })?;
    let imported = imported["code"] == 0 && q != 0;
    if imported {
        steps.step("import_pointer_twice", || {
            let mut q2: CUdeviceptr = 0;
            let r = unsafe { cuMemPoolImportPointer(&mut q2, pool.0, &mut good) };
            if r == SUCCESS && q2 != q {
                let _ = unsafe { cuMemFreeAsync(q2, s.0) };
            }
            json!({"code": r.0, "same": r == SUCCESS && q2 == q})
        })?;
    } else {
        steps.cannot("import_pointer_twice", "the first pointer import did not succeed", 830)?;
    }
    steps.step("import_pointer_garbage", || {
        let mut garbage = CUmemPoolPtrExportData::default();
        for (i, b) in garbage.reserved.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37) ^ 0x5a;
        }
        let mut q3: CUdeviceptr = 0;
        code(unsafe { cuMemPoolImportPointer(&mut q3, pool.0, &mut garbage) })
    })?;
    let mut foreign = data_from_hex(&m["foreign"])?;
    steps.step("import_pointer_foreign", || {
        let mut q4: CUdeviceptr = 0;
        code(unsafe { cuMemPoolImportPointer(&mut q4, pool.0, &mut foreign) })
    })?;
    let mut freed = false;
    if imported {
        steps.always("free_imported_pointer", || {
            let r = unsafe { cuMemFreeAsync(q, s.0) };
            freed = r == SUCCESS;
            code(r)
        })?;
    } else {
        steps.cannot("free_imported_pointer", "no pointer was imported", 830)?;
    }
    s.sync()?;
    // Peer access: what the exporter granted does not come along; the importer grants its own.
    match m["peer"].as_i64() {
        Some(b) => {
            let loc_b = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, b as CUdevice);
            let get = || {
                let mut f = CUmemAccess_flags(0xdead);
                let mut loc = loc_b;
                let r = unsafe { cuMemPoolGetAccess(&mut f, pool.0, &mut loc) };
                json!({"code": r.0, "flags": f.0})
            };
            steps.step("peer_get_access_before", get)?;
            steps.step("peer_set_access", || {
                let db = CUmemAccessDesc {
                    location: loc_b,
                    flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                };
                code(unsafe { cuMemPoolSetAccess(pool.0, &db, 1) })
            })?;
            steps.step("peer_get_access_after", get)?;
        }
        None => {
            for k in ["peer_get_access_before", "peer_set_access", "peer_get_access_after"] {
                steps.cannot(k, "no peer-capable device pair", 0)?;
            }
        }
    }
    // Destroying an imported pool while a pointer imported from it is live is refused (R580), so
    // the destroy step means something only once that pointer's free succeeded.
    if freed || !imported {
        steps.step("destroy_imported", || code(unsafe { cuMemPoolDestroy(pool.take()) }))?;
    } else {
        steps.cannot("destroy_imported", "the imported pointer's free did not succeed", 822)?;
    }
    Ok(())
}

/// The importer's answers by step; a step whose importer died or hung reads
/// `{"lost": why, "blame": api}`.
type Answers = BTreeMap<String, Value>;

/// The importer's answers for the exporter's device `dev` (one run of importers per device).
fn rules_for(dev: CUdevice) -> &'static Shared<Answers> {
    static BY_DEVICE: std::sync::Mutex<BTreeMap<CUdevice, &'static Shared<Answers>>> =
        std::sync::Mutex::new(BTreeMap::new());
    let mut by = BY_DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    let shared: &'static Shared<Answers> = by.entry(dev).or_insert_with(|| Box::leak(Box::new(Shared::new())));
    shared
}

/// Run `ipc-rules` importers until every step has an answer (shared by the rule trials, which run
/// in one lane). An importer that dies or hangs inside a step loses that step's answer (blamed on
/// the API it was inside) and the next one skips it.
fn rules_answers(env: &Env) -> R<&'static Answers> {
    rules_for(env.dev).get(|| {
        let a = Pool::ipc(env.dev)?;
        let b = Pool::ipc(env.dev)?;
        drop(export_pool_fd(b.0)?);
        let s = Stream::new()?;
        let pa = alloc_from(a.0, 1 << 20, s.0)?;
        let pb = alloc_from(b.0, 1 << 20, s.0)?;
        let head = pattern(RULES_SEED, RULES_BYTES);
        ok("cuMemcpyHtoDAsync", unsafe {
            cuMemcpyHtoDAsync_v2(pa, head.as_ptr().cast(), head.len(), s.0)
        })?;
        s.sync()?;
        // With a peer-capable pair, the exporter grants the peer device access before exporting.
        let peer_dev = match env.m.has(Cap::Peer) {
            Ok(()) => {
                let b = env.m.selection.peer_of(env.dev).ok_or("no peer device")?;
                let d = CUmemAccessDesc {
                    location: mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, b),
                    flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                };
                ok("cuMemPoolSetAccess(exporter grants the peer)", unsafe {
                    cuMemPoolSetAccess(a.0, &d, 1)
                })?;
                Some(b)
            }
            Err(_) => None,
        };
        let fd = export_pool_fd(a.0)?;
        let data = json!([hex(&export_ptr(pa)?.reserved)]);
        let foreign = json!(hex(&export_ptr(pb)?.reserved));
        let mut answers = Answers::new();
        for _attempt in 0..RULE_STEPS.len() {
            let skip: Vec<&str> = RULE_STEPS
                .iter()
                .copied()
                .filter(|k| answers.contains_key(*k))
                .collect();
            if skip.len() == RULE_STEPS.len() {
                break;
            }
            let msg = json!({"op": "rules", "data": data, "foreign": foreign, "peer": peer_dev, "skip": skip});
            let dev = env.dev.to_string();
            let peer = Peer::spawn("ipc-rules", &[(IMPORTER_DEVICE_ENV, &dev)], child_wait())?;
            peer.chan.send(&msg, Some(fd.as_raw_fd()))?;
            let ended = loop {
                match peer.chan.recv() {
                    Ok((m, _)) if m["op"] == "answer" => {
                        let key = m["key"].as_str().unwrap_or("").to_string();
                        answers.insert(key, m["value"].clone());
                    }
                    Ok((m, _)) if m["op"] == "done" => break None,
                    Ok((m, _)) => break Some(format!("unexpected message {m}")),
                    Err(e) => break Some(e),
                }
            };
            match ended {
                None => {
                    peer.finish()?;
                    break;
                }
                Some(e) => {
                    // The step in flight: the first one without an answer.
                    let Some(key) = RULE_STEPS.iter().find(|k| !answers.contains_key(**k)) else {
                        return Err(peer.fail(e));
                    };
                    let inside = peer.inside();
                    let why = peer.fail(e);
                    answers.insert(
                        key.to_string(),
                        json!({"lost": format!("the importer stopped at this step: {why}"),
                               "blame": inside.map(|i| i.0)}),
                    );
                }
            }
        }
        drop(fd);
        free_async(pa, s.0)?;
        free_async(pb, s.0)?;
        s.sync()?;
        Ok(answers)
    })
}

/// One answer of the importer, for a trial: its value, or why there is none (and whom to blame).
fn rule_answer(env: &Env, key: &str) -> R<Value> {
    let a = rules_answers(env)?;
    let v = a
        .get(key)
        .ok_or_else(|| format!("the importer gave no answer for step {key}"))?;
    if let Some(lost) = v["lost"].as_str() {
        if let Some(api) = v["blame"].as_u64() {
            crate::blame::set(api as u32);
        }
        return Err(lost.to_string());
    }
    if let Some(why) = v["not_run"].as_str() {
        if let Some(api) = v["blame"].as_u64().filter(|b| *b != 0) {
            crate::blame::set(api as u32);
        }
        return Err(format!("the importer could not take step {key}: {why}"));
    }
    Ok(v.clone())
}

/// What a rule step must answer: a code, or a departure of the driver's (`deviations.rs`).
#[derive(Clone, Copy)]
enum Want {
    Code(CUresult),
    Deviation(&'static str),
}
use Want::{Code, Deviation};

/// (api, case, step, expected answer) for the imported-pool rules.
#[rustfmt::skip]
const RULES_TABLE: &[(u32, &str, &str, Want)] = &[
    (821, "imported_pool_alloc_refused", "alloc_from_imported", Code(E_VALUE)),
    (828, "imported_pool_get_release_threshold_refused", "get_release_threshold", Deviation("imported_pool_attribute_query_refused")),
    (828, "imported_pool_get_used_mem_refused", "get_used_mem_current", Deviation("imported_pool_attribute_query_refused")),
    (832, "imported_pool_set_release_threshold_refused", "set_release_threshold", Code(E_VALUE)),
    (833, "imported_pool_trim_refused", "trim", Deviation("imported_pool_trim_refused")),
    (820, "imported_pool_cannot_become_current", "set_current", Code(E_VALUE)),
    (827, "imported_pool_get_access", "get_access_own_device", Code(SUCCESS)),
    (831, "imported_pool_set_access_own_device", "set_access_own_device", Code(SUCCESS)),
    (826, "imported_pool_export_refused", "export_imported", Code(E_VALUE)),
    (829, "import_pool", "import", Code(SUCCESS)),
    (829, "import_same_fd_twice", "import_twice", Code(SUCCESS)),
    (830, "null_pointer_out_invalid_value", "import_pointer_null_out", Code(E_VALUE)),
    (830, "null_export_data_invalid_value", "import_pointer_null_data", Code(E_VALUE)),
    (830, "null_pool_invalid_value", "import_pointer_null_pool", Code(E_VALUE)),
    (830, "import_pointer", "import_pointer", Code(SUCCESS)),
    (830, "import_same_pointer_twice", "import_pointer_twice", Code(SUCCESS)),
    (830, "garbage_export_data_refused", "import_pointer_garbage", Code(E_VALUE)),
    (830, "foreign_export_data_refused", "import_pointer_foreign", Code(E_VALUE)),
    (822, "free_imported_pointer", "free_imported_pointer", Code(SUCCESS)),
    (824, "destroy_imported_pool", "destroy_imported", Code(SUCCESS)),
];

/// (api, case, step, field, expected value; booleans as 0/1, needs a peer pair) for what an
/// importer observes beyond return codes. A field is only read once the step's code is SUCCESS.
#[rustfmt::skip]
const RULE_VALUES: &[(u32, &str, &str, &str, i64, bool)] = &[
    (829, "import_leaves_callers_fd_open", "import", "fd_open", 1, false),
    (829, "import_same_fd_twice_gives_same_pool", "import_twice", "same", 1, false),
    (830, "import_pointer_reads_exporters_bytes", "import_pointer", "bytes_ok", 1, false),
    (830, "import_same_pointer_twice_gives_same_address", "import_pointer_twice", "same", 1, false),
    (827, "imported_pool_own_device_read_write", "get_access_own_device", "flags", 3, false),
    (827, "imported_pool_exporter_peer_grant_does_not_carry_over", "peer_get_access_before", "flags", 0, true),
    (831, "imported_pool_importer_grants_peer_itself", "peer_set_access", "code", 0, true),
    (827, "imported_pool_peer_read_write_after_importer_grant", "peer_get_access_after", "flags", 3, true),
];

/// The lane of the rule trials: one importer run answers them all.
const RULES_LANE: &str = "ipc-rules";

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// (api, case, spec) round trips.
fn round_trips() -> Vec<(u32, &'static str, Spec)> {
    vec![
        (
            830,
            "round_trip_sizes_1_byte_to_256_mib",
            Spec::new(vec![vec![1, 3, 4 * KIB, MIB + 7, 64 * MIB, 256 * MIB]], 1),
        ),
        (830, "round_trip_64_allocations", Spec::new(vec![vec![64 * KIB; 64]], 1)),
        (
            829,
            "round_trip_three_pools",
            Spec::new(vec![vec![MIB], vec![2 * MIB, 3], vec![5 * MIB]], 1),
        ),
        (
            829,
            "round_trip_two_importers_at_once",
            Spec::new(vec![vec![MIB, 17 * MIB]], 2),
        ),
    ]
}

/// How long the harness's own fault trials wait for a hung importer (once it has started).
const FAULT_TIMEOUT: Duration = Duration::from_secs(1);

/// (case, fault, what the failure message must mention): the harness against importers that die
/// or hang on purpose (CONFORMANCE_IPC_FAULT). These test the harness, not an API.
const FAULTS: &[(&str, &str, &str)] = &[
    (
        "ipc_importer_dies_at_import_fails_trial",
        "die:import",
        "fault injected, aborting at step import",
    ),
    (
        "ipc_importer_dies_at_verify_fails_trial",
        "die:verify",
        "fault injected, aborting at step verify",
    ),
    (
        "ipc_importer_hangs_at_write_fails_trial",
        "hang:write",
        "fault injected, hanging at step write",
    ),
];

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for (api, name, spec) in round_trips() {
        v.push(
            Case::gpu(api, name, move |e| {
                let summary = round_trip(e, &spec)?;
                note(summary);
                Ok(())
            })
            .needs(Cap::Ipc)
            .slow(),
        );
    }
    // Across devices: the importer works on the peer device and grants it access itself; data
    // goes both ways, and the importer sees the memory on the pool's device.
    v.push(
        Case::gpu(829, "round_trip_importer_on_peer_device", |e| {
            let spec = Spec {
                importer_device: Some(e.peer()?),
                importer_grants: true,
                expect_ordinal: Some(e.dev),
                ..Spec::new(vec![vec![MIB, 3 * MIB + 5]], 1)
            };
            note(round_trip(e, &spec)?);
            Ok(())
        })
        .needs(Cap::Ipc)
        .pair()
        .slow(),
    );
    // An importer that numbers the devices the other way round (CUDA_VISIBLE_DEVICES reversed)
    // works on the pool's physical device under its own number: the pool is resolved by the
    // physical device, and the importer sees the memory on that device's new ordinal.
    v.push(
        Case::gpu(829, "importer_with_devices_reordered", |e| {
            let n = e.m.devices.len();
            if n < 2 {
                return ignore("reordering the devices needs two of them");
            }
            let ours: Vec<String> = match std::env::var("CUDA_VISIBLE_DEVICES") {
                Ok(v) if !v.trim().is_empty() => v.split(',').map(|s| s.trim().to_string()).collect(),
                _ => (0..n).map(|i| i.to_string()).collect(),
            };
            ensure!(
                ours.len() == n,
                "CUDA_VISIBLE_DEVICES lists {} devices, the driver shows {n}",
                ours.len()
            );
            let reversed: Vec<String> = ours.iter().rev().cloned().collect();
            let theirs = (n - 1) as i32 - e.dev;
            let spec = Spec {
                importer_device: Some(theirs),
                visible: Some(reversed.join(",")),
                expect_ordinal: Some(theirs),
                ..Spec::new(vec![vec![MIB]], 1)
            };
            note(format!(
                "importer's CUDA_VISIBLE_DEVICES={}: {}",
                reversed.join(","),
                round_trip(e, &spec)?
            ));
            Ok(())
        })
        .needs(Cap::Ipc)
        .slow(),
    );
    v.push(
        Case::gpu(826, "exporter_leaks_no_fd", |e| {
            warm_up_ipc_events()?;
            let before = fd_table();
            round_trip(e, &Spec::new(vec![vec![MIB], vec![MIB]], 2))?;
            let after = fd_table();
            ensure!(
                before == after,
                "fds differ after the round trip: {}",
                fd_diff(&before, &after)
            );
            Ok(())
        })
        .needs(Cap::Ipc)
        .alone()
        .slow(),
    );
    for &(name, fault, mention) in FAULTS {
        v.push(
            Case::of(Group::Harness, name, &[Cap::Gpu, Cap::Ipc], move |e| {
                warm_up_ipc_events()?;
                let before = fd_table();
                let t = Instant::now();
                // Short waits: a hung importer must fail the trial in seconds.
                let spec = Spec {
                    fault: Some(fault),
                    timeout: FAULT_TIMEOUT,
                    ..Spec::new(vec![vec![MIB]], 1)
                };
                let r = round_trip(e, &spec);
                let secs = t.elapsed().as_secs_f64();
                let after = fd_table();
                let msg = match r {
                    Ok(_) => {
                        return Err(format!(
                            "round trip succeeded although the importer was told to {fault}"
                        ))
                    }
                    Err(m) => m,
                };
                crate::blame::reset();
                ensure!(
                    msg.contains(mention),
                    "failure message does not carry the importer's stderr: {msg}"
                );
                ensure!(t.elapsed() < 5 * FAULT_TIMEOUT, "took {secs:.1} s to fail");
                ensure!(
                    before == after,
                    "fds differ after the failed round trip: {}",
                    fd_diff(&before, &after)
                );
                note(format!("failed as it must in {secs:.1} s"));
                Ok(())
            })
            .alone()
            .slow(),
        );
    }
    for &(api, name, key, want) in RULES_TABLE {
        v.push(
            Case::gpu(api, name, move |e| {
                let got = rule_answer(e, key)?["code"]
                    .as_u64()
                    .ok_or_else(|| format!("the importer's answer for {key} has no code"))?;
                // Named after the call, so that a wrong answer is blamed on it.
                let what = format!("{} ({key}, in the importer)", call_of(key));
                match want {
                    Code(c) => expect(&what, CUresult(got as u32), c),
                    Deviation(d) => crate::deviations::expect_code(d, &what, CUresult(got as u32)),
                }
            })
            .needs(Cap::Ipc)
            .lane(RULES_LANE),
        );
    }
    for &(api, name, key, field, want, needs_peer) in RULE_VALUES {
        let mut case = Case::gpu(api, name, move |e| {
            let a = rule_answer(e, key)?;
            expect(
                &format!("{} ({key}, in the importer)", call_of(key)),
                CUresult(a["code"].as_u64().unwrap_or(u64::MAX) as u32),
                SUCCESS,
            )?;
            let got = a[field].as_i64().or_else(|| a[field].as_bool().map(i64::from));
            ensure!(
                got == Some(want),
                "{key}: the importer observed {field} = {}, expected {want}",
                a[field]
            );
            Ok(())
        })
        .needs(Cap::Ipc)
        .lane(RULES_LANE);
        if needs_peer {
            case = case.needs(Cap::Peer);
        }
        v.push(case);
    }
    v
}

/// The API a rule step calls (for blame).
fn call_of(key: &str) -> &'static str {
    match key {
        "import" | "import_twice" => "cuMemPoolImportFromShareableHandle",
        "alloc_from_imported" => "cuMemAllocFromPoolAsync",
        "get_release_threshold" | "get_used_mem_current" => "cuMemPoolGetAttribute",
        "set_release_threshold" => "cuMemPoolSetAttribute",
        "trim" => "cuMemPoolTrimTo",
        "set_current" => "cuDeviceSetMemPool",
        "get_access_own_device" | "peer_get_access_before" | "peer_get_access_after" => "cuMemPoolGetAccess",
        "set_access_own_device" | "peer_set_access" => "cuMemPoolSetAccess",
        "export_imported" => "cuMemPoolExportToShareableHandle",
        "free_imported_pointer" => "cuMemFreeAsync",
        "destroy_imported" => "cuMemPoolDestroy",
        _ => "cuMemPoolImportPointer",
    }
}
