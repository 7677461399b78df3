//! Concurrent import (issue 38): an importer child (`ipc-concurrent`, kept between trials where the
//! shape allows: [`importer_for`]) whose 2, 4 or 16 threads import the same shareable handle, or
//! the same pointer's export data, at once.
//!
//! Three shapes: `handle` (each thread imports the pool from its own dup of the fd, then the
//! pointer into it), `one_pool` (the pool imported once, every thread imports the pointer into it),
//! `own_pools` (a pool per thread imported beforehand, the pointers imported at once). The threads
//! start each phase together (a barrier): import, then read, then the main thread frees and
//! destroys in thread order. Every import succeeds or answers OUT_OF_MEMORY (address space, a clean
//! refusal), each successful one reads the exporter's bytes, every free of an address not yet freed
//! and every first destruction of a pool succeeds, and the importer holds no more fds than before
//! the trial.

use super::common::*;
use super::messages::{ConcurrentAnswer, Release, Reply, Shape, ThreadAnswer, ToConcurrent};
use crate::cases::messages::{parse, recv, text};
use crate::cases::prelude::*;
use crate::harness::channel::hex;
use crate::harness::kept_children;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Barrier;

const THREADS: &[usize] = &[2, 4, 16];
const SHAPES: &[Shape] = &[Shape::Handle, Shape::OnePool, Shape::OwnPools];
const SIZE: usize = 64 * KIB;
const SEED: u8 = 0x3c;

/// What one thread's imports answered: the pool's (SUCCESS where the pool was not its to import),
/// the pointer's ([`NOT_TRIED`] where its pool import was refused), and whether the pointer reads
/// the exporter's bytes. Pools travel between the threads as addresses (`usize`).
#[derive(Clone, Copy, Default)]
struct Got {
    pool: usize,
    pool_code: i32,
    ptr: CUdeviceptr,
    ptr_code: i32,
    read_ok: bool,
}

/// The pointer's answer of a thread whose pool import was refused: it imported no pointer.
const NOT_TRIED: i32 = -1;

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
    serve("concurrent", env, concurrent_trial)
}

/// One trial of the `ipc-concurrent` role (also served by a kept `ipc-kept` importer).
pub(super) fn concurrent_trial(env: &Env, chan: &crate::harness::channel::Channel) -> R {
    env.bind();
    let (ToConcurrent::Concurrent { shape, threads, data }, fd) = recv(chan)?;
    let value = run(
        env,
        shape,
        threads,
        &data,
        fd.ok_or("concurrent message without an fd")?,
    )?;
    chan.send(&Reply::Answer { value }, None)
}

fn run(env: &Env, shape: Shape, n: usize, data: &str, fd: OwnedFd) -> R<ConcurrentAnswer> {
    let d = data_from_hex(data)?;
    // One import and release first, so that what the driver opens once per process is open
    // before the fds are counted (a kept importer has it from its first trial). Counted while the
    // fd the exporter sent is held, as the count after the release is.
    let (r, warm) = import_pool(&fd)?;
    ok("cuMemPoolImportFromShareableHandle (warm-up)", CUresult(r as u32))?;
    ok("cuMemPoolDestroy (warm-up)", unsafe {
        cuMemPoolDestroy(warm as CUmemoryPool)
    })?;
    let fds_before = crate::os::open_fds();
    let mut shared: Vec<usize> = Vec::new();
    match shape {
        Shape::OnePool => shared.push(
            import_pool(&fd)
                .and_then(|(r, p)| ok("cuMemPoolImportFromShareableHandle", CUresult(r as u32)).map(|()| p))?,
        ),
        Shape::OwnPools => {
            for _ in 0..n {
                let (r, p) = import_pool(&fd)?;
                ok("cuMemPoolImportFromShareableHandle", CUresult(r as u32))?;
                shared.push(p);
            }
        }
        Shape::Handle => {}
    }
    let barrier = Barrier::new(n);
    let got: Vec<Got> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (barrier, fd, shared) = (&barrier, &fd, &shared);
                sc.spawn(move || -> R<Got> {
                    env.bind();
                    let mut g = Got::default();
                    barrier.wait();
                    g.pool = match shape {
                        Shape::OnePool => shared[0],
                        Shape::OwnPools => shared[i],
                        Shape::Handle => {
                            let (r, p) = import_pool(fd)?;
                            g.pool_code = r;
                            p
                        }
                    };
                    (g.ptr_code, g.ptr) = if g.pool_code == 0 {
                        import_ptr(g.pool, d)
                    } else {
                        (NOT_TRIED, 0)
                    };
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
    // Release in thread order: each imported address (a second free of an address already freed
    // is recorded), then each pool import.
    let s = Stream::new()?;
    let mut frees = Vec::new();
    let mut freed: Vec<CUdeviceptr> = Vec::new();
    for g in got.iter().filter(|g| g.ptr_code == 0) {
        let r = unsafe { cuMemFreeAsync(g.ptr, s.0) };
        let _ = unsafe { cuStreamSynchronize(s.0) };
        frees.push(Release {
            code: r.0,
            again: freed.contains(&g.ptr),
        });
        freed.push(g.ptr);
    }
    // Each successful pool import is released by a destroy of its own: R580 answers one pool to
    // every import of one handle (rules' import_same_fd_twice_gives_same_pool), and one destroy of
    // that pool after several imports left the importer one fd more than one import and one
    // destroy did (H100, R580, 2026-11-25: `handle` and `own_pools` ended with 41 fds where
    // `one_pool` ended with 40, counted alike). A destroy of a pool already destroyed answers what
    // the driver says (SUCCESS where it counts imports, INVALID_VALUE where the first destroy ended
    // it), judged by `judge`.
    let mut pools: Vec<usize> = shared.clone();
    if shape == Shape::Handle {
        pools.extend(got.iter().filter(|g| g.pool_code == 0).map(|g| g.pool));
    }
    let mut destroyed: Vec<usize> = Vec::new();
    let mut destroys = Vec::new();
    for &p in &pools {
        if destroyed.contains(&p) {
            super::common::handed_a_destroyed_pool();
        }
        let r = unsafe { cuMemPoolDestroy(p as CUmemoryPool) };
        destroys.push(Release {
            code: r.0,
            again: destroyed.contains(&p),
        });
        destroyed.push(p);
    }
    drop(s);
    let fds_after = crate::os::open_fds();
    drop(fd);
    let threads: Vec<ThreadAnswer> = got
        .iter()
        .map(|g| ThreadAnswer {
            pool: g.pool_code,
            ptr: g.ptr_code,
            read_ok: g.read_ok,
        })
        .collect();
    freed.sort_unstable();
    freed.dedup();
    destroyed.sort_unstable();
    destroyed.dedup();
    Ok(ConcurrentAnswer {
        threads,
        frees,
        destroys,
        pools: destroyed.len(),
        addresses: freed.len(),
        fds_before,
        fds_after,
    })
}

/// The exporter's side: one IPC pool with one allocation of `SEED`'s bytes, handed to an
/// `ipc-concurrent` importer (kept between trials where [`importer_for`] allows) with `n` threads
/// importing as `shape` says; its answer judged.
fn concurrent(e: &Env, shape: Shape, n: usize) -> R {
    let pool = Pool::ipc(e.dev)?;
    let fd = export_pool_fd(pool.0)?;
    let s = Stream::new()?;
    let p = alloc_from(pool.0, SIZE, s.0)?;
    let bytes = pattern(SEED, SIZE);
    let answer = (|| -> R<ConcurrentAnswer> {
        ok("cuMemcpyHtoDAsync", unsafe {
            cuMemcpyHtoDAsync_v2(p, bytes.as_ptr().cast(), SIZE, s.0)
        })?;
        s.sync()?;
        let d = export_ptr(p)?;
        let dev = e.dev.to_string();
        // A kept importer (`harness::kept_children`) when the worker has one: the claim is about
        // concurrent imports, not a fresh process, and each start creates a context. Not for a
        // shape that destroys one pool once per import ([`importer_for`]).
        let peer = kept_children::take(
            &Role::IpcConcurrent,
            &[(IMPORTER_DEVICE_VAR, &dev)],
            // One answer, the importer's start-up included.
            e.deadline().importer_start(),
            importer_for(shape),
            &e.settings,
        )?;
        let msg = ToConcurrent::Concurrent {
            shape,
            threads: n,
            data: hex(&d.reserved),
        };
        match peer
            .chan
            .send(&msg, Some(fd.as_raw_fd()))
            .and_then(|()| peer.chan.recv())
        {
            Ok((m, _)) => match parse::<Reply<ConcurrentAnswer>>(&m) {
                Ok(Reply::Answer { value }) => {
                    kept_children::give_back(peer)?;
                    Ok(value)
                }
                Err(_) => Err(peer.fail(format!("unexpected message {m}")).into()),
            },
            Err(e) => Err(peer.fail(e.to_string()).into()),
        }
    })();
    free_async(p, s.0)?;
    s.sync()?;
    judge(&answer?, shape, n)
}

/// Which importer a shape takes. `handle` and `own_pools` import one handle once per thread, and
/// R580 answers one pool to every import of one handle (rules' import_same_fd_twice_gives_same_pool),
/// so the importer hands cuMemPoolDestroy that pool once per import: where the driver counted no
/// imports, every destroy after the first hands it a pool it freed (`Case::hands_freed_handles`).
/// Such an importer is a fresh one, and serves no later trial (`common::handed_a_destroyed_pool`
/// says it is not clean); `one_pool` imports and destroys its pool once, and may take a kept one.
fn importer_for(shape: Shape) -> kept_children::Take {
    match shape {
        Shape::OnePool => kept_children::Take::Kept,
        Shape::Handle | Shape::OwnPools => kept_children::Take::Unused,
    }
}

fn judge(a: &ConcurrentAnswer, shape: Shape, n: usize) -> R {
    let shape = shape.name();
    let oom = i64::from(CUresult::CUDA_ERROR_OUT_OF_MEMORY.0);
    let threads = &a.threads;
    ensure!(
        threads.len() == n,
        "{} threads answered of {n}: {}",
        threads.len(),
        text(a)
    );
    // Threads refused an import (OUT_OF_MEMORY from the pool's or the pointer's): a clean refusal
    // each, but not every thread's.
    let mut refused = 0;
    for (i, t) in threads.iter().enumerate() {
        let mut was_refused = false;
        for (c, api, call) in [
            (t.pool, 829, "cuMemPoolImportFromShareableHandle"),
            (t.ptr, 830, "cuMemPoolImportPointer"),
        ] {
            // No pointer import follows a pool import that did not succeed ([`NOT_TRIED`]).
            if api == 830 && t.pool != 0 {
                continue;
            }
            let c = i64::from(c);
            if c == oom {
                was_refused = true;
            } else if c != 0 {
                blame::set(api);
                return Err(format!(
                    "thread {i} of {n} ({shape}): {call} answered {} (neither SUCCESS nor OUT_OF_MEMORY)",
                    code_name(CUresult(c as u32))
                )
                .into());
            }
        }
        if was_refused {
            refused += 1;
        } else if !t.read_ok {
            blame::set(830);
            return Err(format!(
                "thread {i} of {n} ({shape}): its imported pointer does not read the exporter's bytes"
            )
            .into());
        }
    }
    note(format!(
        "{n} threads ({shape}): {} distinct pool(s), {} distinct address(es)",
        a.pools, a.addresses
    ));
    if refused > 0 {
        note(format!(
            "{refused} of {n} threads ({shape}) were refused an import (OUT_OF_MEMORY)"
        ));
    }
    ensure!(
        refused < n,
        "every one of the {n} threads ({shape}) was refused its import (OUT_OF_MEMORY): none imported at once"
    );
    // Second frees of an address already freed (R580 answers the same address to every import of
    // one pointer): recorded, not judged.
    let mut again = Vec::new();
    for f in &a.frees {
        let c = CUresult(f.code);
        if f.again {
            again.push(code_name(c));
        } else if c != SUCCESS {
            return expect("cuMemFreeAsync(an imported address, in the importer)", c, SUCCESS);
        }
    }
    if !again.is_empty() {
        note(format!(
            "{} second free(s) of one imported address answered {}",
            again.len(),
            summary(&again)
        ));
    }
    // Further destroys of a pool already destroyed (one per import of one handle): SUCCESS where
    // the driver counts imports, INVALID_VALUE where the first destroy ended the pool.
    let mut again = Vec::new();
    for d in &a.destroys {
        let c = CUresult(d.code);
        if !d.again {
            expect("cuMemPoolDestroy(an imported pool, in the importer)", c, SUCCESS)?;
        } else if c == SUCCESS || c == E_VALUE {
            again.push(code_name(c));
        } else {
            blame::set(824);
            return Err(format!(
                "cuMemPoolDestroy(an imported pool again, one destroy per import, in the importer) answered {} \
                 (neither SUCCESS nor INVALID_VALUE)",
                code_name(c)
            )
            .into());
        }
    }
    if !again.is_empty() {
        note(format!(
            "{} further destroy(s) of one imported pool (one per import) answered {}",
            again.len(),
            summary(&again)
        ));
    }
    let (before, after) = (a.fds_before, a.fds_after);
    note(format!(
        "the importer held {before} fds before the imports and {after} after releasing them ({shape}, {n} threads)"
    ));
    // Fewer fds after is no leak (the driver may close one it kept); more is.
    ensure!(
        after <= before,
        "the importer held {before} fds before the imports and {after} after releasing them all ({shape}, {n} threads)"
    );
    Ok(())
}

/// `names` counted, in first-seen order: "CUDA_ERROR_INVALID_VALUE (1) x15".
fn summary(names: &[String]) -> String {
    let mut seen: Vec<(&String, usize)> = Vec::new();
    for n in names {
        match seen.iter_mut().find(|(s, _)| *s == n) {
            Some((_, k)) => *k += 1,
            None => seen.push((n, 1)),
        }
    }
    seen.iter()
        .map(|(s, k)| format!("{s} x{k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The concurrent-import cases: each shape at 2, 4 and 16 threads. Kill 829-concurrent-import-races
/// (a second thread inside an import at once is refused), 830-threads-refused-imports (every
/// thread refused: issue 48) and, where a shape imports pools, 829-closes-fd and 829-dup-leaks-fd
/// (the importer holds more fds after than before).
pub(super) fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for &shape in SHAPES {
        for &n in THREADS {
            let api = if shape == Shape::Handle { 829 } else { 830 };
            v.push(
                Case::gpu(
                    api,
                    format!("concurrent_import_{}_{n}_threads", shape.name()),
                    move |e| concurrent(e, shape, n),
                )
                .needs(Cap::Ipc)
                .lane(CONCURRENT_LANE),
            );
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use kept_children::Take;

    /// The shapes that destroy one imported pool once per import take a fresh importer, which no
    /// later trial takes; the one that imports its pool once may take a kept one (issue 58).
    #[test]
    fn shapes_that_destroy_one_pool_per_import_take_no_kept_importer() {
        let takes: Vec<(&str, Take)> = SHAPES.iter().map(|&s| (s.name(), importer_for(s))).collect();
        assert_eq!(
            takes,
            [
                ("handle", Take::Unused),
                ("one_pool", Take::Kept),
                ("own_pools", Take::Unused)
            ]
        );
    }
}
