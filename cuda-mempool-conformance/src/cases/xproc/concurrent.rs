//! Concurrent import (issue 38): one importer child (`ipc-concurrent`) whose 2, 4 or 16 threads
//! import the same shareable handle, or the same pointer's export data, at once.
//!
//! Three shapes: `handle` (each thread imports the pool from its own dup of the fd, then the
//! pointer into it), `one_pool` (the pool imported once, every thread imports the pointer into it),
//! `own_pools` (a pool per thread imported beforehand, the pointers imported at once). The threads
//! start each phase together (a barrier): import, then read, then the main thread frees and
//! destroys in thread order. Every import succeeds or answers OUT_OF_MEMORY (address space, a clean
//! refusal), each successful one reads the exporter's bytes, every free of an address not yet freed
//! and every destruction succeeds, and the importer's fd count is what it was before.

use super::common::*;
use crate::cases::prelude::*;
use crate::harness::channel::{hex, Peer};
use serde_json::{json, Value};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Barrier;

const THREADS: &[usize] = &[2, 4, 16];
const SHAPES: &[&str] = &["handle", "one_pool", "own_pools"];
const SIZE: usize = 64 * KIB;
const SEED: u8 = 0x3c;

/// What one thread's imports answered: the pool's (SUCCESS where the pool was not its to import),
/// the pointer's, and whether the pointer reads the exporter's bytes. Pools travel between the
/// threads as addresses (`usize`).
#[derive(Clone, Copy, Default)]
struct Got {
    pool: usize,
    pool_code: i32,
    ptr: CUdeviceptr,
    ptr_code: i32,
    read_ok: bool,
}

/// The number of fds this process holds.
fn fd_count() -> R<usize> {
    Ok(std::fs::read_dir("/proc/self/fd")
        .map_err(|e| format!("/proc/self/fd: {e}"))?
        .count())
}

fn import_ptr(pool: usize, mut d: CUmemPoolPtrExportData) -> (i32, CUdeviceptr) {
    let mut q: CUdeviceptr = 0;
    let r = unsafe { cuMemPoolImportPointer(&mut q, pool as CUmemoryPool, &mut d) };
    (r.0 as i32, q)
}

fn import_pool(fd: &OwnedFd) -> R<(i32, usize)> {
    let dup = fd.try_clone().map_err(|e| format!("dup of the pool's fd: {e}"))?;
    let mut p = std::ptr::null_mut();
    let r = import_pool_fd(dup.as_raw_fd(), &mut p);
    Ok((r.0 as i32, p as usize))
}

fn read_ok(q: CUdeviceptr) -> bool {
    let mut host = vec![0u8; SIZE];
    let r = unsafe { cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), q, SIZE) };
    r == SUCCESS && check_pattern("import", &host, SEED).is_ok()
}

/// Child role `ipc-concurrent`: the shape and thread count the exporter names; its answer.
pub fn concurrent_main(env: &Env) -> i32 {
    serve("concurrent", env, |env, chan| {
        env.bind();
        let (m, fd) = chan.recv()?;
        let v = run(env, &m, fd.ok_or("concurrent message without an fd")?)?;
        chan.send(&json!({"op": "answer", "value": v}), None)
    })
}

fn run(env: &Env, m: &Value, fd: OwnedFd) -> R<Value> {
    let d = data_from_hex(&m["data"])?;
    let n = m["threads"].as_u64().ok_or("no thread count")? as usize;
    let shape = m["shape"].as_str().ok_or("no shape")?.to_string();
    // One import and release first, so that what the driver opens once per process is open
    // before the fds are counted.
    let (r, warm) = import_pool(&fd)?;
    ok("cuMemPoolImportFromShareableHandle (warm-up)", CUresult(r as u32))?;
    ok("cuMemPoolDestroy (warm-up)", unsafe {
        cuMemPoolDestroy(warm as CUmemoryPool)
    })?;
    let fds = fd_count()?;
    let mut shared: Vec<usize> = Vec::new();
    match shape.as_str() {
        "one_pool" => shared.push(
            import_pool(&fd)
                .and_then(|(r, p)| ok("cuMemPoolImportFromShareableHandle", CUresult(r as u32)).map(|()| p))?,
        ),
        "own_pools" => {
            for _ in 0..n {
                let (r, p) = import_pool(&fd)?;
                ok("cuMemPoolImportFromShareableHandle", CUresult(r as u32))?;
                shared.push(p);
            }
        }
        _ => {}
    }
    let barrier = Barrier::new(n);
    let got: Vec<Got> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (barrier, fd, shape, shared) = (&barrier, &fd, &shape, &shared);
                sc.spawn(move || -> R<Got> {
                    env.bind();
                    let mut g = Got::default();
                    barrier.wait();
                    g.pool = match shape.as_str() {
                        "one_pool" => shared[0],
                        "own_pools" => shared[i],
                        _ => {
                            let (r, p) = import_pool(fd)?;
                            g.pool_code = r;
                            p
                        }
                    };
                    if g.pool_code == 0 {
                        (g.ptr_code, g.ptr) = import_ptr(g.pool, d);
                    }
                    barrier.wait();
                    g.read_ok = g.ptr_code == 0 && read_ok(g.ptr);
                    Ok(g)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("an importing thread panicked".into())))
            .collect::<R<Vec<Got>>>()
    })?;
    // Release in thread order: each address once, then each pool once.
    let s = Stream::new()?;
    let mut frees = Vec::new();
    let mut freed: Vec<CUdeviceptr> = Vec::new();
    for g in got.iter().filter(|g| g.ptr_code == 0) {
        let r = unsafe { cuMemFreeAsync(g.ptr, s.0) };
        let _ = unsafe { cuStreamSynchronize(s.0) };
        frees.push(json!({"code": r.0, "again": freed.contains(&g.ptr)}));
        freed.push(g.ptr);
    }
    let mut pools: Vec<usize> = shared.clone();
    pools.extend(got.iter().filter(|g| g.pool_code == 0).map(|g| g.pool));
    // R580 answers one pool to every import of one handle (rules' import_same_fd_twice_gives_same_pool):
    // each distinct pool is destroyed once.
    pools.sort_unstable();
    pools.dedup();
    let destroys: Vec<i32> = pools
        .iter()
        .map(|&p| unsafe { cuMemPoolDestroy(p as CUmemoryPool) }.0 as i32)
        .collect();
    drop(fd);
    let threads: Vec<Value> = got
        .iter()
        .map(|g| json!({"pool": g.pool_code, "ptr": g.ptr_code, "read_ok": g.read_ok}))
        .collect();
    freed.sort_unstable();
    freed.dedup();
    Ok(json!({
        "threads": threads, "frees": frees, "destroys": destroys, "pools": pools.len(),
        "addresses": freed.len(),
        "fds_before": fds, "fds_after": fd_count()? - 1,
    }))
}

/// The exporter's side: one IPC pool with one allocation of `SEED`'s bytes, handed to an
/// `ipc-concurrent` importer with `n` threads importing as `shape` says; its answer judged.
fn concurrent(e: &Env, shape: &str, n: usize) -> R {
    let pool = Pool::ipc(e.dev)?;
    let fd = export_pool_fd(pool.0)?;
    let s = Stream::new()?;
    let p = alloc_from(pool.0, SIZE, s.0)?;
    let bytes = pattern(SEED, SIZE);
    let answer = (|| -> R<Value> {
        ok("cuMemcpyHtoDAsync", unsafe {
            cuMemcpyHtoDAsync_v2(p, bytes.as_ptr().cast(), SIZE, s.0)
        })?;
        s.sync()?;
        let d = export_ptr(p)?;
        let dev = e.dev.to_string();
        let peer = Peer::spawn(&Role::IpcConcurrent, &[(IMPORTER_DEVICE_VAR, &dev)], child_wait())?;
        let msg = json!({"op": "concurrent", "shape": shape, "threads": n, "data": hex(&d.reserved)});
        match peer
            .chan
            .send(&msg, Some(fd.as_raw_fd()))
            .and_then(|()| peer.chan.recv())
        {
            Ok((m, _)) if m["op"] == "answer" => {
                peer.finish()?;
                Ok(m["value"].clone())
            }
            Ok((m, _)) => Err(peer.fail(format!("unexpected message {m}")).into()),
            Err(e) => Err(peer.fail(e.to_string()).into()),
        }
    })();
    free_async(p, s.0)?;
    s.sync()?;
    judge(&answer?, shape, n)
}

fn judge(a: &Value, shape: &str, n: usize) -> R {
    let oom = CUresult::CUDA_ERROR_OUT_OF_MEMORY.0 as u64;
    let threads = a["threads"].as_array().ok_or_else(|| format!("no threads in {a}"))?;
    ensure!(threads.len() == n, "{} threads answered of {n}: {a}", threads.len());
    let mut refused = 0;
    for (i, t) in threads.iter().enumerate() {
        for (key, api, call) in [
            ("pool", 829, "cuMemPoolImportFromShareableHandle"),
            ("ptr", 830, "cuMemPoolImportPointer"),
        ] {
            let c = t[key].as_u64().unwrap_or(u64::MAX);
            if c == oom {
                refused += 1;
            } else if c != 0 {
                blame::set(api);
                return Err(format!(
                    "thread {i} of {n} ({shape}): {call} answered {} (neither SUCCESS nor OUT_OF_MEMORY)",
                    code_name(CUresult(c as u32))
                )
                .into());
            }
        }
        if t["ptr"] == 0 && t["read_ok"] != true {
            blame::set(830);
            return Err(format!(
                "thread {i} of {n} ({shape}): its imported pointer does not read the exporter's bytes"
            )
            .into());
        }
    }
    note(format!(
        "{n} threads ({shape}): {} distinct pool(s), {} distinct address(es)",
        a["pools"], a["addresses"]
    ));
    if refused > 0 {
        note(format!(
            "{refused} imports of {n} threads ({shape}) answered OUT_OF_MEMORY"
        ));
    }
    ensure!(refused < 2 * n, "every import of {n} threads ({shape}) was refused");
    for f in a["frees"].as_array().into_iter().flatten() {
        if f["again"] == true {
            note(format!("a second free of one imported address answered {}", f["code"]));
        } else if f["code"] != 0 {
            return expect(
                "cuMemFreeAsync(an imported address, in the importer)",
                CUresult(f["code"].as_u64().unwrap_or(u64::MAX) as u32),
                SUCCESS,
            );
        }
    }
    for d in a["destroys"].as_array().into_iter().flatten() {
        if d != 0 {
            return expect(
                "cuMemPoolDestroy(an imported pool, in the importer)",
                CUresult(d.as_u64().unwrap_or(u64::MAX) as u32),
                SUCCESS,
            );
        }
    }
    ensure!(
        a["fds_after"] == a["fds_before"],
        "the importer held {} fds before the imports and {} after releasing them all ({shape}, {n} threads)",
        a["fds_before"],
        a["fds_after"]
    );
    Ok(())
}

/// The concurrent-import cases: each shape at 2, 4 and 16 threads. Kill 829-concurrent-import-races
/// (a second thread inside an import at once is refused) and, where a shape imports pools,
/// 829-closes-fd and 829-leaks-fd.
pub(super) fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for &shape in SHAPES {
        for &n in THREADS {
            let api = if shape == "handle" { 829 } else { 830 };
            v.push(
                Case::gpu(api, format!("concurrent_import_{shape}_{n}_threads"), move |e| {
                    concurrent(e, shape, n)
                })
                .needs(Cap::Ipc),
            );
        }
    }
    v
}
