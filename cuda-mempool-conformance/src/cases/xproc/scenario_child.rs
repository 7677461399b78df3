//! The scenarios' importer (child role `ipc-scenario`, or a kept `ipc-kept` importer): import the
//! pool offered, take the scenario named, and answer what each call did.

use super::common::*;
use super::messages::{Reply, Scenario, ScenarioAnswer, ToScenario};
use crate::cases::messages::recv;
use crate::cases::prelude::*;
use std::os::fd::{AsRawFd, OwnedFd};

/// Bytes of pattern at the start (and, for allocations of at least twice as much, at the end) of
/// each allocation a scenario offers, and what its importer reads back.
pub(super) const EDGE: usize = 4 * KIB;
/// The seed of the pattern at the start of an allocation; the end carries `SEED ^ TAIL`.
pub(super) const SEED: u8 = 0x6e;
pub(super) const TAIL: u8 = 0xff;

/// Child role `ipc-scenario`: import the pool, take the scenario named, answer, exit.
pub fn scenario_main(env: &Env) -> i32 {
    serve("scenario", env, scenario_trial)
}

/// One trial of the `ipc-scenario` role (also served by a kept `ipc-kept` importer).
pub(super) fn scenario_trial(env: &Env, chan: &crate::harness::channel::Channel) -> R {
    env.bind();
    let (ToScenario::Scenario { name, data, size }, fd) = recv(chan)?;
    let fd = fd.ok_or("scenario message without an fd")?;
    let value = scenario(name, &data, size, fd, env.deadline())?;
    chan.send(&Reply::Answer { value }, None)
}

/// The importer's side. Every import is freed before the answer goes back, so the exporter frees
/// its allocations after the importer's frees, as cuMemPoolImportPointer requires. `deadline`: the
/// run's (a held stream's gate).
fn scenario(name: Scenario, data: &[String], n: usize, fd: OwnedFd, deadline: Deadline) -> R<ScenarioAnswer> {
    let mut p = std::ptr::null_mut();
    ok(
        "cuMemPoolImportFromShareableHandle",
        import_pool_fd(fd.as_raw_fd(), &mut p),
    )?;
    drop(fd);
    let pool = Pool(p);
    let data: Vec<CUmemPoolPtrExportData> = data.iter().map(|d| data_from_hex(d)).collect::<R<_>>()?;
    let first = *data.first().ok_or("no export data")?;
    let s = Stream::new()?;
    match name {
        Scenario::ZeroData => zero_data(&pool, first, &s),
        Scenario::Interior => interior(&pool, first, *data.get(1).ok_or("no interior data")?, &s),
        Scenario::FreeSync => free_sync(pool, first),
        Scenario::Twice => twice(pool, first, &s),
        Scenario::Large => large(pool, first, n, &s),
        Scenario::FreeHeld => free_held(pool, first, &s, deadline),
    }
}

/// The answer of a scenario whose import answered `code`, so far.
fn imported(code: CUresult) -> ScenarioAnswer {
    ScenarioAnswer {
        import: Some(code.0),
        ..Default::default()
    }
}

fn import(pool: &Pool, mut d: CUmemPoolPtrExportData) -> (CUresult, CUdeviceptr) {
    let mut q: CUdeviceptr = 0;
    let r = unsafe { cuMemPoolImportPointer(&mut q, pool.0, &mut d) };
    (r, q)
}

/// Read `EDGE` bytes at `q` (synchronously) and compare them with `seed`'s pattern: the copy's
/// code and whether the bytes match.
fn read_edge(q: CUdeviceptr, seed: u8) -> (CUresult, bool) {
    let mut host = vec![0u8; EDGE];
    let r = unsafe { cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), q, EDGE) };
    (r, r == SUCCESS && host == pattern(seed, EDGE))
}

/// All-zero export data, then the genuine data: both codes.
fn zero_data(pool: &Pool, good: CUmemPoolPtrExportData, s: &Stream) -> R<ScenarioAnswer> {
    let (zero, q) = import(pool, CUmemPoolPtrExportData::default());
    if zero == SUCCESS && q != 0 {
        let _ = unsafe { cuMemFreeAsync(q, s.0) };
    }
    let (genuine, g) = import(pool, good);
    if genuine == SUCCESS {
        free_async(g, s.0)?;
    }
    s.sync()?;
    Ok(ScenarioAnswer {
        zero: Some(zero.0),
        genuine: Some(genuine.0),
        ..Default::default()
    })
}

/// The allocation's own export data and an interior pointer's (the allocation's last `EDGE`
/// bytes): both codes, where the interior import lies past the whole one, and what it reads.
fn interior(
    pool: &Pool,
    whole: CUmemPoolPtrExportData,
    inner: CUmemPoolPtrExportData,
    s: &Stream,
) -> R<ScenarioAnswer> {
    let (base, qb) = import(pool, whole);
    let (code, qi) = import(pool, inner);
    let mut v = ScenarioAnswer {
        base: Some(base.0),
        interior: Some(code.0),
        ..Default::default()
    };
    if base == SUCCESS && code == SUCCESS {
        let (read, tail_ok) = read_edge(qi, SEED ^ TAIL);
        v.delta = Some(qi as i64 - qb as i64);
        v.read = Some(read.0);
        v.tail_ok = Some(tail_ok);
    }
    if code == SUCCESS && qi != qb {
        let _ = unsafe { cuMemFreeAsync(qi, s.0) };
    }
    if base == SUCCESS {
        let _ = unsafe { cuMemFreeAsync(qb, s.0) };
    }
    s.sync()?;
    Ok(v)
}

/// Import, read, free with cuMemFree (synchronous), destroy the imported pool: each code.
fn free_sync(pool: Pool, d: CUmemPoolPtrExportData) -> R<ScenarioAnswer> {
    let (code, q) = import(&pool, d);
    let mut v = imported(code);
    if code == SUCCESS {
        let (read, head_ok) = read_edge(q, SEED);
        v.read = Some(read.0);
        v.head_ok = Some(head_ok);
        v.free = Some(unsafe { cuMemFree_v2(q) }.0);
    }
    v.destroy = Some(unsafe { cuMemPoolDestroy(pool.take()) }.0);
    Ok(v)
}

/// The same export data imported twice; both read; the first freed (and the free complete); the
/// second read again and freed; the imported pool destroyed: each code.
fn twice(pool: Pool, d: CUmemPoolPtrExportData, s: &Stream) -> R<ScenarioAnswer> {
    let (first, q1) = import(&pool, d);
    let (second, q2) = import(&pool, d);
    let mut v = ScenarioAnswer {
        first: Some(first.0),
        second: Some(second.0),
        same: Some(q1 == q2),
        ..Default::default()
    };
    if first != SUCCESS || second != SUCCESS {
        return Ok(v);
    }
    let (r1, ok1) = read_edge(q1, SEED);
    let (r2, ok2) = read_edge(q2, SEED);
    v.before_ok = Some(r1 == SUCCESS && r2 == SUCCESS && ok1 && ok2);
    v.free_first = Some(unsafe { cuMemFreeAsync(q1, s.0) }.0);
    v.sync = Some(unsafe { cuStreamSynchronize(s.0) }.0);
    let (after, after_ok) = read_edge(q2, SEED);
    v.read_after = Some(after.0);
    v.after_ok = Some(after_ok);
    v.free_second = Some(unsafe { cuMemFreeAsync(q2, s.0) }.0);
    let _ = unsafe { cuStreamSynchronize(s.0) };
    v.destroy = Some(unsafe { cuMemPoolDestroy(pool.take()) }.0);
    Ok(v)
}

/// One large allocation: import it, read its first and last `EDGE` bytes, free it, destroy.
fn large(pool: Pool, d: CUmemPoolPtrExportData, n: usize, s: &Stream) -> R<ScenarioAnswer> {
    let (code, q) = import(&pool, d);
    let mut v = imported(code);
    if code == SUCCESS {
        let (head, head_ok) = read_edge(q, SEED);
        let (tail, tail_ok) = read_edge(q + (n - EDGE) as u64, SEED ^ TAIL);
        v.head = Some(head.0);
        v.head_ok = Some(head_ok);
        v.tail = Some(tail.0);
        v.tail_ok = Some(tail_ok);
        v.free = Some(unsafe { cuMemFreeAsync(q, s.0) }.0);
        let _ = unsafe { cuStreamSynchronize(s.0) };
    }
    v.destroy = Some(unsafe { cuMemPoolDestroy(pool.take()) }.0);
    Ok(v)
}

/// Import, hold the stream at a gate, free the import on it: the codes, how long the free took, and
/// whether the gate's safety limit had to open the stream (the free waited for it); then destroy.
fn free_held(pool: Pool, d: CUmemPoolPtrExportData, s: &Stream, deadline: Deadline) -> R<ScenarioAnswer> {
    let (code, q) = import(&pool, d);
    let mut v = imported(code);
    if code == SUCCESS {
        let gate = Gate::close(s.0, deadline)?;
        let start = std::time::Instant::now();
        let free = unsafe { cuMemFreeAsync(q, s.0) };
        let took = start.elapsed();
        let forced = gate.release();
        v.free = Some(free.0);
        v.free_ms = Some(took.as_secs_f64() * 1e3);
        v.returned_while_held = Some(forced.is_none());
        let _ = unsafe { cuStreamSynchronize(s.0) };
    }
    v.destroy = Some(unsafe { cuMemPoolDestroy(pool.take()) }.0);
    Ok(v)
}
