//! The checkpoint leg's own trials (capability `checkpoint`, CONFORMANCE_CHECKPOINT): what of the
//! allocator's state survives a checkpoint and restore of the process that holds it, API by API.
//! Each trial sets its state up, takes its own process (or, in the IPC ones, the exporter or the
//! importer) through the run's engine (`harness::checkpoint`), then checks what the documentation
//! promises of that state had no checkpoint happened: a checkpoint is meant to be invisible to the
//! process. Each runs in a process of its own, so the checkpoint holds its state alone and a
//! failed one costs no other trial.

use crate::cases::capture::{capture, Exec};
use crate::cases::prelude::*;
use crate::cases::xproc::{check_pattern, pattern};
use crate::driver::cu::CUmemPool_attribute_enum as A;
use std::time::{Duration, Instant};

/// Every attribute of a pool (`cuMemPoolGetAttribute`), as one comparable row.
const ATTRS: &[(&str, A, bool)] = &[
    (
        "reuse_follow_event_dependencies",
        A::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
        true,
    ),
    (
        "reuse_allow_opportunistic",
        A::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
        true,
    ),
    (
        "reuse_allow_internal_dependencies",
        A::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
        true,
    ),
    ("release_threshold", A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, false),
    ("reserved_mem_current", A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, false),
    ("reserved_mem_high", A::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, false),
    ("used_mem_current", A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT, false),
    ("used_mem_high", A::CU_MEMPOOL_ATTR_USED_MEM_HIGH, false),
];

/// Every attribute of `pool`, by name.
fn attributes(pool: CUmemoryPool) -> R<Vec<(&'static str, u64)>> {
    ATTRS
        .iter()
        .map(|&(n, a, int)| {
            Ok((
                n,
                if int {
                    get_i32(pool, a)? as u64
                } else {
                    get_u64(pool, a)?
                },
            ))
        })
        .collect()
}

/// The names and values that differ between two readings of the same attributes.
fn changed(before: &[(&str, u64)], after: &[(&str, u64)]) -> Vec<String> {
    before
        .iter()
        .zip(after)
        .filter(|(b, a)| b.1 != a.1)
        .map(|(b, a)| format!("{} {} → {}", b.0, b.1, a.1))
        .collect()
}

/// This process through the run's engine; a note with what each step took for what it held.
fn checkpoint_self(e: &Env, held: u64) -> R {
    let trip = checkpoint::round_trip(&e.m.checkpoint, std::process::id() as i32, e.deadline())?;
    note(format!(
        "checkpoint leg: {} GiB held by the pools: {}",
        held as f64 / (1u64 << 30) as f64,
        trip.describe()
    ));
    Ok(())
}

/// Write `seed`'s pattern to `p` and wait.
fn fill(p: CUdeviceptr, n: usize, seed: u8, s: &Stream) -> R {
    let host = pattern(seed, n);
    ok("cuMemcpyHtoDAsync", unsafe {
        cuMemcpyHtoDAsync_v2(p, host.as_ptr().cast(), n, s.0)
    })?;
    s.sync()
}

/// `p` holds `seed`'s pattern.
fn holds(what: &str, p: CUdeviceptr, n: usize, seed: u8, s: &Stream) -> R {
    let mut host = vec![0u8; n];
    ok("cuMemcpyDtoHAsync", unsafe {
        cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), p, n, s.0)
    })?;
    s.sync()?;
    check_pattern(&format!("{what}, read after the checkpoint"), &host, seed)
}

/// A pool that keeps what is freed to it (release threshold: all of it) and reuses nothing
/// opportunistically, on `dev`.
fn keeping_pool(dev: CUdevice) -> R<Pool> {
    let pool = Pool::on_device(dev)?;
    set_u64(pool.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
    set_i32(pool.0, A::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, 0)?;
    set_i32(pool.0, A::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, 0)?;
    Ok(pool)
}

const MIB: usize = 1 << 20;

/// 828, 832: every attribute of an explicit pool (threshold 1 GiB, reuse off, blocks used and
/// kept) and of the device's default pool reads the same after the checkpoint.
fn every_attribute_kept(e: &Env) -> R {
    let s = Stream::new()?;
    let pool = Pool::on_device(e.dev)?;
    set_u64(pool.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 1 << 30)?;
    set_i32(pool.0, A::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, 0)?;
    set_i32(pool.0, A::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, 0)?;
    let kept = alloc_from(pool.0, 64 * MIB, s.0)?;
    let live = alloc_from(pool.0, 8 * MIB, s.0)?;
    free_async(kept, s.0)?;
    let default = default_pool(e.dev)?;
    set_u64(default, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 256 << 20)?;
    let d_live = alloc_async(4 * MIB, s.0)?;
    s.sync()?;
    let before = (attributes(pool.0)?, attributes(default)?);
    checkpoint_self(e, get_u64(pool.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?)?;
    let after = (attributes(pool.0)?, attributes(default)?);
    let mut diffs: Vec<String> = changed(&before.0, &after.0)
        .into_iter()
        .map(|d| format!("pool: {d}"))
        .collect();
    diffs.extend(
        changed(&before.1, &after.1)
            .into_iter()
            .map(|d| format!("default pool: {d}")),
    );
    free_async(live, s.0)?;
    free_async(d_live, s.0)?;
    s.sync()?;
    set_u64(default, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 0)?;
    ensure!(
        diffs.is_empty(),
        "attributes changed across the checkpoint: {}",
        diffs.join(", ")
    );
    Ok(())
}

/// 832: the release threshold still governs the pool after the checkpoint: what a pool of threshold
/// "everything" frees stays reserved through a synchronisation, and what a pool of threshold 0
/// frees goes back.
fn release_threshold_still_holds(e: &Env) -> R {
    let s = Stream::new()?;
    let keeping = Pool::on_device(e.dev)?;
    set_u64(keeping.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
    let releasing = Pool::on_device(e.dev)?;
    set_u64(releasing.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 0)?;
    checkpoint_self(e, 0)?;
    let threshold = get_u64(keeping.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)?;
    ensure!(
        threshold == u64::MAX,
        "the release threshold read {threshold} after the checkpoint, u64::MAX was set"
    );
    for (pool, name) in [(&keeping, "the keeping pool"), (&releasing, "the releasing pool")] {
        let p = alloc_from(pool.0, 64 * MIB, s.0)?;
        free_async(p, s.0)?;
        s.sync()?;
        let reserved = get_u64(pool.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
        let keeps = std::ptr::eq(pool, &keeping);
        ensure!(
            (reserved >= 64 * MIB as u64) == keeps,
            "{name} reserves {reserved} bytes after freeing 64 MiB and synchronising, after the checkpoint: its \
             release threshold {} them",
            if keeps {
                "should have kept"
            } else {
                "should have released"
            }
        );
    }
    Ok(())
}

/// 820, 821: live allocations of the default pool (cuMemAllocAsync) and of an explicit pool
/// (cuMemAllocFromPoolAsync) keep their address, their pool and their contents.
fn contents_and_addresses_kept(e: &Env) -> R {
    let s = Stream::new()?;
    let pool = Pool::on_device(e.dev)?;
    let n = 16 * MIB;
    let a = alloc_async(n, s.0)?;
    let b = alloc_from(pool.0, n, s.0)?;
    fill(a, n, 0x11, &s)?;
    fill(b, n, 0x22, &s)?;
    let default = default_pool(e.dev)?;
    checkpoint_self(e, 2 * n as u64)?;
    for (what, p, want, seed) in [
        ("cuMemAllocAsync's allocation", a, default, 0x11u8),
        ("cuMemAllocFromPoolAsync's allocation", b, pool.0, 0x22),
    ] {
        let owner = pool_of(p)?;
        ensure!(
            owner == want,
            "{what} at {p:#x} belongs to pool {owner:p} after the checkpoint, {want:p} before"
        );
        holds(what, p, n, seed, &s)?;
    }
    free_async(a, s.0)?;
    free_async(b, s.0)?;
    s.sync()
}

/// 821: a block freed before the checkpoint and kept by the pool is what the next allocation of
/// its size gets, at the same address.
fn kept_block_reused(e: &Env) -> R {
    let s = Stream::new()?;
    let pool = keeping_pool(e.dev)?;
    let first = alloc_from(pool.0, 8 * MIB, s.0)?;
    free_async(first, s.0)?;
    s.sync()?;
    checkpoint_self(e, 8 * MIB as u64)?;
    let again = alloc_from(pool.0, 8 * MIB, s.0)?;
    let reserved = get_u64(pool.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
    free_async(again, s.0)?;
    s.sync()?;
    ensure!(
        again == first,
        "the allocation after the checkpoint is at {again:#x}; the block freed and kept before it was at {first:#x}"
    );
    ensure!(
        reserved <= 2 * 8 * MIB as u64 + (64 * MIB) as u64,
        "the pool reserves {reserved} bytes: it grew rather than reuse"
    );
    Ok(())
}

/// 822: an allocation made before the checkpoint frees after it, and the pool counts it gone.
fn free_after_restore(e: &Env) -> R {
    let s = Stream::new()?;
    let pool = Pool::on_device(e.dev)?;
    let p = alloc_from(pool.0, 8 * MIB, s.0)?;
    s.sync()?;
    checkpoint_self(e, 8 * MIB as u64)?;
    ok("cuMemFreeAsync of an allocation made before the checkpoint", unsafe {
        cuMemFreeAsync(p, s.0)
    })?;
    s.sync()?;
    let used = get_u64(pool.0, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
    ensure!(
        used == 0,
        "the pool counts {used} bytes used after freeing its one allocation"
    );
    Ok(())
}

/// 833: what the pool kept before the checkpoint is trimmed after it.
fn trim_after_restore(e: &Env) -> R {
    let s = Stream::new()?;
    let pool = keeping_pool(e.dev)?;
    let p = alloc_from(pool.0, 32 * MIB, s.0)?;
    free_async(p, s.0)?;
    s.sync()?;
    let kept = get_u64(pool.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
    ensure!(
        kept >= 32 * MIB as u64,
        "the pool reserves {kept} bytes before the checkpoint; 32 MiB were freed to it"
    );
    checkpoint_self(e, kept)?;
    ok("cuMemPoolTrimTo(0) after the checkpoint", unsafe {
        cuMemPoolTrimTo(pool.0, 0)
    })?;
    let left = get_u64(pool.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
    ensure!(left == 0, "the pool still reserves {left} bytes after trimming to 0");
    Ok(())
}

/// 823, 824: a pool made before the checkpoint, with an allocation, is destroyed after it; a new pool
/// is made and used after it.
fn destroy_and_create_after_restore(e: &Env) -> R {
    let s = Stream::new()?;
    let old = Pool::on_device(e.dev)?;
    let p = alloc_from(old.0, 4 * MIB, s.0)?;
    s.sync()?;
    checkpoint_self(e, 4 * MIB as u64)?;
    free_async(p, s.0)?;
    s.sync()?;
    ok("cuMemPoolDestroy of a pool made before the checkpoint", unsafe {
        cuMemPoolDestroy(old.take())
    })?;
    let new = Pool::on_device(e.dev)?;
    let q = alloc_from(new.0, 4 * MIB, s.0)?;
    fill(q, 4 * MIB, 0x33, &s)?;
    holds("a new pool's allocation after the checkpoint", q, 4 * MIB, 0x33, &s)?;
    free_async(q, s.0)?;
    s.sync()
}

/// 826: a pool made for POSIX-fd export before the checkpoint exports after it.
fn export_after_restore(e: &Env) -> R {
    let pool = Pool::ipc(e.dev)?;
    checkpoint_self(e, 0)?;
    let fd = export_pool_fd(pool.0)?;
    ensure!(
        std::os::fd::AsRawFd::as_raw_fd(&fd) >= 0,
        "cuMemPoolExportToShareableHandle after the checkpoint gave no file descriptor"
    );
    Ok(())
}

/// 825: an allocation of an exportable pool, made before the checkpoint, exports after it.
fn export_pointer_after_restore(e: &Env) -> R {
    let s = Stream::new()?;
    // R580 exports pointers only of a pool whose handle was exported (825
    // export_pointer_before_pool_export): as an application would, before the checkpoint.
    let pool = Pool::ipc(e.dev)?;
    let _fd = export_pool_fd(pool.0)?;
    let p = alloc_from(pool.0, 2 * MIB, s.0)?;
    s.sync()?;
    checkpoint_self(e, 2 * MIB as u64)?;
    let mut data = CUmemPoolPtrExportData::default();
    let r = unsafe { cuMemPoolExportPointer(&mut data, p) };
    free_async(p, s.0)?;
    s.sync()?;
    ok(
        "cuMemPoolExportPointer after the checkpoint, of an allocation made before it",
        r,
    )?;
    ensure!(
        data.reserved.iter().any(|&b| b != 0),
        "cuMemPoolExportPointer after the checkpoint wrote no data"
    );
    Ok(())
}

/// 827, 831: the owner's access to its pool reads read-write after the checkpoint, and a grant
/// made before it (a peer device's, on a pair) is kept; access is set again after it.
fn access_kept(e: &Env) -> R {
    let pool = Pool::on_device(e.dev)?;
    let get = |dev: CUdevice| -> R<CUmemAccess_flags> {
        let mut loc = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, dev);
        let mut f = CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE;
        ok("cuMemPoolGetAccess", unsafe {
            cuMemPoolGetAccess(&mut f, pool.0, &mut loc)
        })?;
        Ok(f)
    };
    let rw = CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    let grant = |dev: CUdevice| -> R {
        let desc = CUmemAccessDesc {
            location: mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, dev),
            flags: rw,
        };
        ok("cuMemPoolSetAccess", unsafe { cuMemPoolSetAccess(pool.0, &desc, 1) })
    };
    if let Some(peer) = e.peer {
        grant(peer)?;
    }
    checkpoint_self(e, 0)?;
    let owner = get(e.dev)?;
    ensure!(owner == rw, "the owner's access reads {owner:?} after the checkpoint");
    if let Some(peer) = e.peer {
        let f = get(peer)?;
        ensure!(
            f == rw,
            "device {peer}'s grant reads {f:?} after the checkpoint; read-write was granted before it"
        );
    }
    grant(e.dev)
}

/// 820: the device's current pool (cuDeviceSetMemPool) is the one set before the checkpoint, and
/// cuMemAllocAsync takes from it.
fn current_pool_kept(e: &Env) -> R {
    let s = Stream::new()?;
    let pool = Pool::on_device(e.dev)?;
    let _current = CurrentPool::set(e.dev, pool.0)?;
    checkpoint_self(e, 0)?;
    let now = current_pool(e.dev)?;
    ensure!(
        now == pool.0,
        "the device's current pool is {now:p} after the checkpoint, {:p} was set",
        pool.0
    );
    let p = alloc_async(MIB, s.0)?;
    let owner = pool_of(p)?;
    free_async(p, s.0)?;
    s.sync()?;
    ensure!(
        owner == pool.0,
        "cuMemAllocAsync after the checkpoint took from pool {owner:p}, not the current one"
    );
    Ok(())
}

/// 820: cuMemGetInfo after the checkpoint counts what the process holds: the same total, and at
/// least the live allocation's bytes in use.
fn mem_get_info_after_restore(e: &Env) -> R {
    let s = Stream::new()?;
    let n = 256 * MIB;
    let p = alloc_async(n, s.0)?;
    s.sync()?;
    let (_, total_before) = mem_info()?;
    checkpoint_self(e, n as u64)?;
    let (free, total) = mem_info()?;
    free_async(p, s.0)?;
    s.sync()?;
    ensure!(
        total == total_before,
        "cuMemGetInfo's total is {total} after the checkpoint, {total_before} before"
    );
    ensure!(
        total - free >= n,
        "cuMemGetInfo counts {} bytes in use after the checkpoint, less than the {n} this process holds live",
        total - free
    );
    Ok(())
}

/// 820: a graph with an allocation node, instantiated before the checkpoint, launches after it and
/// its allocation is usable.
fn graph_across(e: &Env) -> R {
    let _ = e;
    let s = Stream::new()?;
    let (work, end, graph) = capture(s.0, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL, |cs| {
        let p = alloc_async(2 * MIB, cs)?;
        ok("cuMemsetD8Async", unsafe { cuMemsetD8Async(p, 0x44, 2 * MIB, cs) })?;
        free_async(p, cs)
    })?;
    work?;
    ok("cuStreamEndCapture", end)?;
    let graph = graph.ok_or("the capture made no graph")?;
    let exec = Exec::new(&graph, 0)?;
    checkpoint_self(e, 0)?;
    ok("cuGraphLaunch after the checkpoint", exec.launch(s.0))?;
    s.sync()
}

/// 820: stream-ordered work pending when the engine locks: with a timeout, the lock gives up
/// (the process stays running); without, it waits for the work, which then completes.
fn lock_waits_for_pending_work(e: &Env) -> R {
    if e.m.checkpoint != crate::harness::settings::Engine::Driver {
        return ignore("the lock's timeout is the driver engine's own argument: needs CONFORMANCE_CHECKPOINT=driver");
    }
    let s = Stream::new()?;
    let gate = Gate::close(s.0, e.deadline())?;
    let p = alloc_async(MIB, s.0)?;
    ok("cuMemsetD8Async", unsafe { cuMemsetD8Async(p, 0x55, MIB, s.0) })?;
    let pid = std::process::id() as i32;
    let timeout_ms = 300u32;
    let start = Instant::now();
    let timed = checkpoint::child_step(pid, &format!("lock:{timeout_ms}"), e.deadline(), e.deadline().trial())
        .map_err(Fail::Wrong)?;
    let took = start.elapsed();
    // Without a timeout: the lock waits for the held stream; the gate opens a little later.
    let open_after = Duration::from_millis(400);
    let waiting = std::thread::scope(|scope| {
        let opener = scope.spawn(|| {
            std::thread::sleep(open_after);
            gate.open();
        });
        let t = Instant::now();
        let r = checkpoint::child_step(pid, "lock:0", e.deadline(), e.deadline().trial());
        let _ = opener.join();
        (r, t.elapsed())
    });
    let forced = gate.release();
    free_async(p, s.0)?;
    s.sync()?;
    ensure!(
        forced.is_none(),
        "the gate's safety limit opened the held stream: {}",
        forced.unwrap().describe()
    );
    let lock = timed.steps.first().ok_or("the checkpoint child took no lock step")?;
    ensure!(
        lock.code != 0,
        "cuCheckpointProcessLock with a {timeout_ms} ms timeout locked the process while its stream-ordered work \
         was held ({})",
        timed.describe()
    );
    ensure!(
        timed.state == checkpoint::RUNNING,
        "after the refused lock the process is {}",
        checkpoint::state_name(timed.state)
    );
    note(format!(
        "lock with {timeout_ms} ms timeout on held work: {} (the call took {:.3} s)",
        timed.describe(),
        took.as_secs_f64()
    ));
    let (r, waited) = waiting;
    let t = r.map_err(Fail::Wrong)?;
    let lock = t.steps.first().ok_or("the checkpoint child took no lock step")?;
    ensure!(
        lock.code == 0,
        "cuCheckpointProcessLock without a timeout: {}",
        t.describe()
    );
    ensure!(
        Duration::from_secs_f64(lock.secs) >= open_after / 2,
        "cuCheckpointProcessLock without a timeout locked after {:.3} s, before the held work could finish (the \
         gate opened at {:.3} s)",
        lock.secs,
        open_after.as_secs_f64()
    );
    ensure!(
        t.state == checkpoint::RUNNING,
        "after lock and unlock the process is {}",
        checkpoint::state_name(t.state)
    );
    note(format!(
        "lock without timeout on held work: {} ({:.3} s in all)",
        t.describe(),
        waited.as_secs_f64()
    ));
    Ok(())
}

/// The trial bytes a round trip of `gib` GiB holds: what the per-GiB figure is measured on.
fn round_trip_figure(e: &Env, gib: usize) -> R {
    let s = Stream::new()?;
    let pool = Pool::on_device(e.dev)?;
    let p = alloc_from(pool.0, gib << 30, s.0)?;
    ok("cuMemsetD8Async", unsafe { cuMemsetD8Async(p, 0x66, gib << 30, s.0) })?;
    s.sync()?;
    let trip = checkpoint::round_trip(&e.m.checkpoint, std::process::id() as i32, e.deadline())?;
    let per = |step: &str| trip.secs(step) / gib as f64;
    note(format!(
        "checkpoint figure, {gib} GiB held: lock {:.3} s, checkpoint {:.3} s/GiB, restore {:.3} s/GiB, unlock {:.3} s",
        trip.secs("lock"),
        per("checkpoint"),
        per("restore"),
        trip.secs("unlock")
    ));
    let head = 4 * MIB;
    let mut host = vec![0u8; head];
    ok("cuMemcpyDtoHAsync", unsafe {
        cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), p, head, s.0)
    })?;
    free_async(p, s.0)?;
    s.sync()?;
    ensure!(
        host.iter().all(|&b| b == 0x66),
        "a {gib} GiB allocation's first bytes changed across the checkpoint"
    );
    Ok(())
}

/// A trial of the leg: it needs the engine too, and runs in a process of its own.
fn leg(c: Case) -> Case {
    c.needs(Cap::Checkpoint).own_process()
}

pub fn cases() -> Vec<Case> {
    vec![
        leg(Case::gpu(828, "checkpoint::every_attribute_kept", every_attribute_kept)),
        leg(Case::gpu(
            832,
            "checkpoint::release_threshold_still_holds",
            release_threshold_still_holds,
        )),
        leg(Case::gpu(
            820,
            "checkpoint::contents_and_addresses_kept",
            contents_and_addresses_kept,
        )),
        leg(Case::gpu(821, "checkpoint::kept_block_reused", kept_block_reused)),
        leg(Case::gpu(822, "checkpoint::free_after_restore", free_after_restore)),
        leg(Case::gpu(833, "checkpoint::trim_after_restore", trim_after_restore)),
        leg(Case::gpu(
            824,
            "checkpoint::destroy_and_create_after_restore",
            destroy_and_create_after_restore,
        )),
        leg(Case::gpu(826, "checkpoint::export_after_restore", export_after_restore).needs(Cap::Ipc)),
        leg(Case::gpu(
            825,
            "checkpoint::export_pointer_after_restore",
            export_pointer_after_restore,
        )
        .needs(Cap::Ipc)),
        leg(Case::gpu(827, "checkpoint::access_kept", access_kept)),
        leg(Case::gpu(831, "checkpoint::peer_grant_kept", access_kept).pair()),
        leg(Case::gpu(820, "checkpoint::current_pool_kept", current_pool_kept)),
        leg(Case::gpu(
            820,
            "checkpoint::mem_get_info_after_restore",
            mem_get_info_after_restore,
        )
        .memory_bytes(512 << 20)),
        leg(Case::gpu(820, "checkpoint::graph_alloc_node_across", graph_across)),
        leg(Case::gpu(
            820,
            "checkpoint::lock_waits_for_pending_work",
            lock_waits_for_pending_work,
        )),
        leg(Case::gpu(821, "checkpoint::round_trip_1_gib", |e| round_trip_figure(e, 1)).memory_bytes(2 << 30)),
        leg(Case::gpu(821, "checkpoint::round_trip_8_gib", |e| round_trip_figure(e, 8)).memory_bytes(9 << 30)),
    ]
}
