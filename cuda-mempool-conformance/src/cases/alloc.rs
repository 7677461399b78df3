//! 820 cuMemAllocAsync, 821 cuMemAllocFromPoolAsync, 822 cuMemFreeAsync: success paths, which pool
//! an allocation comes from (default, current, CUDA 13 selectors), default streams, stream order,
//! and refusals. Inputs that might crash the driver run in a child process.

use crate::cases::prelude::*;
use std::time::Instant;

const E_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const E_OOM: CUresult = CUresult::CUDA_ERROR_OUT_OF_MEMORY;
const HUGE: usize = 1 << 60;

/// Allocate, check the pool and that the memory is usable, free; on stream `s`.
fn round_trip(what: &str, s: CUstream, alloc: impl Fn(&mut CUdeviceptr) -> CUresult, pool: CUmemoryPool) -> R {
    let mut p: CUdeviceptr = 0;
    ok(what, alloc(&mut p))?;
    ensure!(p != 0, "{what} returned success and a null pointer");
    let owner = pool_of(p)?;
    ensure!(
        owner == pool,
        "{what}: allocation belongs to pool {owner:p}, expected {pool:p}"
    );
    ok("cuMemsetD8Async", unsafe { cuMemsetD8Async(p, 0x5a, 4096, s) })?;
    let mut host = [0u8; 4096];
    ok("cuMemcpyDtoHAsync", unsafe {
        cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), p, 4096, s)
    })?;
    ok("cuMemFreeAsync", unsafe { cuMemFreeAsync(p, s) })?;
    ok("cuStreamSynchronize", unsafe { cuStreamSynchronize(s) })?;
    ensure!(host.iter().all(|&b| b == 0x5a), "{what}: memory read back wrong bytes");
    Ok(())
}

/// A size-0 allocation: success, a null pointer written over a non-null one, nothing in use (the
/// departure judged under `policy`).
fn size_zero(policy: &Policy, what: &str, pool: CUmemoryPool, alloc: impl Fn(&mut CUdeviceptr) -> CUresult) -> R {
    let used_before = get_u64(pool, CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
    let mut p: CUdeviceptr = 0xdead_0000;
    let r = alloc(&mut p);
    if r == SUCCESS && p != 0 && p != 0xdead_0000 {
        free_async(p, std::ptr::null_mut())?;
    }
    expect_code(policy, "size_zero_succeeds", what, r)?;
    if r != SUCCESS {
        // Outside R580's branches: the documented refusal, and nothing to look at.
        return Ok(());
    }
    ensure!(
        p == 0,
        "{what} returned success and pointer {p:#x}, expected a null pointer"
    );
    let used = get_u64(pool, CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
    ensure!(
        used == used_before,
        "{what}: the pool's used memory went from {used_before} to {used}"
    );
    Ok(())
}

/// An allocation a refusal case did not expect to get (the library accepted what it should have
/// refused): free it, so that the case leaves nothing behind whatever the answer.
fn give_back(r: CUresult, p: CUdeviceptr) {
    if r == SUCCESS && p != 0 {
        let _ = unsafe { cuMemFreeAsync(p, std::ptr::null_mut()) };
    }
}

/// (case, stream) rows: the success path on every kind of stream.
const STREAMS: &[(&str, usize)] = &[
    ("legacy_stream_0", 0),
    ("CU_STREAM_LEGACY", 1),
    ("CU_STREAM_PER_THREAD", 2),
];

pub fn cases() -> Vec<Case> {
    let mut v = vec![];
    for &(name, handle) in STREAMS {
        // Serial: cuMemAllocAsync draws from the current pool, which serial cases change.
        v.push(
            Case::gpu(820, format!("default_pool_on_{name}"), move |e| {
                let s = handle as CUstream;
                round_trip(
                    "cuMemAllocAsync",
                    s,
                    |p| unsafe { cuMemAllocAsync(p, 1 << 20, s) },
                    default_pool(e.dev)?,
                )
            })
            .serial(),
        );
        v.push(Case::gpu(821, format!("own_pool_on_{name}"), move |e| {
            let s = handle as CUstream;
            let pool = Pool::on_device(e.dev)?;
            round_trip(
                "cuMemAllocFromPoolAsync",
                s,
                |p| unsafe { cuMemAllocFromPoolAsync(p, 1 << 20, pool.0, s) },
                pool.0,
            )
        }));
    }
    v.extend([
        // The entry cuGetProcAddress answers for cuMemAllocAsync with
        // CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (the table's `cuMemAllocAsync_ptsz`) orders
        // stream 0 on the calling thread's per-thread stream, not on the legacy one. A blocking
        // stream is held at a gate: the legacy stream waits for it, the per-thread stream does not,
        // so an event recorded on the per-thread stream after the allocation completes only if the
        // allocation went there. Kills 820-proc-address-ignores-ptds.
        Case::gpu(820, "ptsz_variant_uses_per_thread_stream", |e| {
            let at = |name: &str| {
                crate::driver::cu::loaded()
                    .addresses
                    .iter()
                    .find(|a| a.0 == name)
                    .map(|a| a.1)
            };
            if let (Some(ptsz), Some(legacy)) = (at("cuMemAllocAsync_ptsz"), at("cuMemAllocAsync")) {
                ensure!(
                    ptsz != legacy,
                    "cuMemAllocAsync with and without the per-thread flag resolved to one function ({ptsz:#x}): \
                     the flag was ignored"
                );
            }
            let mut raw = std::ptr::null_mut();
            ok("cuStreamCreate(blocking)", unsafe { cuStreamCreate(&mut raw, 0) })?;
            let held = Stream(raw);
            let gate = Gate::close(held.0, e.deadline())?;
            let mut p: CUdeviceptr = 0;
            let r = unsafe { cuMemAllocAsync_ptsz(&mut p, 1 << 20, std::ptr::null_mut()) };
            let ev = Event::new(0)?;
            let recorded = ev.record(CU_STREAM_PER_THREAD);
            let start = Instant::now();
            let mut done = unsafe { cuEventQuery(ev.0) };
            while done == CUresult::CUDA_ERROR_NOT_READY && start.elapsed() < e.deadline().gate_limit() / 2 {
                std::thread::sleep(std::time::Duration::from_millis(1));
                done = unsafe { cuEventQuery(ev.0) };
            }
            gate.open();
            held.sync()?;
            let owner = if r == SUCCESS { Some(pool_of(p)) } else { None };
            if r == SUCCESS {
                free_async(p, CU_STREAM_PER_THREAD)?;
            }
            ok("cuStreamSynchronize(per-thread)", unsafe {
                cuStreamSynchronize(CU_STREAM_PER_THREAD)
            })?;
            ok("cuMemAllocAsync_ptsz(stream 0)", r)?;
            recorded?;
            ensure!(
                done == SUCCESS,
                "an event recorded on the per-thread stream after cuMemAllocAsync_ptsz(stream 0) was {} after {:?} \
                 while a blocking stream was held: the allocation was ordered on the legacy stream",
                code_name(done),
                start.elapsed()
            );
            let (owner, cur) = (owner.ok_or("no allocation")??, current_pool(e.dev)?);
            ensure!(
                owner == cur,
                "allocation belongs to pool {owner:p}, not the current pool {cur:p}"
            );
            Ok(())
        })
        .serial(),
        Case::gpu(821, "ptsz_variant", |e| {
            let pool = Pool::on_device(e.dev)?;
            let mut p: CUdeviceptr = 0;
            ok("cuMemAllocFromPoolAsync_ptsz", unsafe {
                cuMemAllocFromPoolAsync_ptsz(&mut p, 4096, pool.0, std::ptr::null_mut())
            })?;
            ok("cuMemFreeAsync_ptsz", unsafe {
                cuMemFreeAsync_ptsz(p, std::ptr::null_mut())
            })?;
            ok("cuStreamSynchronize(per-thread)", unsafe {
                cuStreamSynchronize(CU_STREAM_PER_THREAD)
            })
        }),
        Case::gpu(820, "draws_from_current_pool_after_cuDeviceSetMemPool", |e| {
            let pool = Pool::on_device(e.dev)?;
            let _cur = CurrentPool::set(e.dev, pool.0)?;
            let s = Stream::new()?;
            round_trip(
                "cuMemAllocAsync",
                s.0,
                |p| unsafe { cuMemAllocAsync(p, 1 << 20, s.0) },
                pool.0,
            )
        })
        .serial(),
        // The current pool's used memory counts the bytes requested through cuMemAllocAsync, as it
        // does for cuMemAllocFromPoolAsync (R580 counts requested bytes exactly: 828
        // used_mem_exact_accounting).
        Case::gpu(820, "used_mem_counts_requested_bytes", |e| {
            const N: usize = 3 * (1 << 20) + 17;
            let pool = Pool::on_device(e.dev)?;
            let _cur = CurrentPool::set(e.dev, pool.0)?;
            let s = Stream::new()?;
            let a = alloc_async(N, s.0)?;
            s.sync()?;
            let used = get_u64(pool.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
            free_async(a, s.0)?;
            s.sync()?;
            let used = used?;
            ensure!(
                used == N as u64,
                "the current pool's used memory is {used} after cuMemAllocAsync of {N} bytes, expected {N}"
            );
            Ok(())
        })
        .serial()
        .alone(),
        Case::gpu(820, "current_pool_is_default_pool_initially", |e| {
            let (cur, def) = (current_pool(e.dev)?, default_pool(e.dev)?);
            ensure!(cur == def, "current pool {cur:p} is not the default pool {def:p}");
            Ok(())
        })
        .serial(),
        Case::gpu(820, "cuda13_selectors_agree_with_device_selectors", |e| {
            let pinned = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
            let mut loc = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, e.dev);
            let mut d = std::ptr::null_mut();
            ok("cuMemGetDefaultMemPool", unsafe {
                cuMemGetDefaultMemPool(&mut d, &mut loc, pinned)
            })?;
            ensure!(
                d == default_pool(e.dev)?,
                "cuMemGetDefaultMemPool disagrees with cuDeviceGetDefaultMemPool"
            );
            let pool = Pool::on_device(e.dev)?;
            ok("cuMemSetMemPool", unsafe { cuMemSetMemPool(&mut loc, pinned, pool.0) })?;
            let mut cur = std::ptr::null_mut();
            let r = unsafe { cuMemGetMemPool(&mut cur, &mut loc, pinned) };
            let dev_cur = current_pool(e.dev);
            let s = Stream::new()?;
            let drawn = round_trip(
                "cuMemAllocAsync",
                s.0,
                |p| unsafe { cuMemAllocAsync(p, 4096, s.0) },
                pool.0,
            );
            ok("cuMemSetMemPool(default) restoring", unsafe {
                cuMemSetMemPool(&mut loc, pinned, d)
            })?;
            ok("cuMemGetMemPool", r)?;
            ensure!(
                cur == pool.0,
                "cuMemGetMemPool does not return the pool set by cuMemSetMemPool"
            );
            ensure!(
                dev_cur? == pool.0,
                "cuDeviceGetMemPool does not see the pool set by cuMemSetMemPool"
            );
            drawn
        })
        .needs(Cap::Cuda13)
        .serial(),
        Case::gpu(820, "null_dptr_invalid_value", |_| {
            expect(
                "cuMemAllocAsync(NULL, ...)",
                unsafe { cuMemAllocAsync(std::ptr::null_mut(), 1024, std::ptr::null_mut()) },
                E_VALUE,
            )
        }),
        // The docs list no answer for size 0; R580 returns success and writes a null pointer
        // (cuMemAlloc's own rule would predict INVALID_VALUE).
        Case::gpu(820, "size_zero_succeeds_with_null_pointer_driver_behaviour", |e| {
            size_zero(
                &e.policy(),
                "cuMemAllocAsync(size 0)",
                default_pool(e.dev)?,
                |p| unsafe { cuMemAllocAsync(p, 0, std::ptr::null_mut()) },
            )
        })
        .serial(),
        Case::gpu(820, "huge_size_out_of_memory", |_| {
            let mut p: CUdeviceptr = 0;
            expect(
                "cuMemAllocAsync(1 << 60)",
                unsafe { cuMemAllocAsync(&mut p, HUGE, std::ptr::null_mut()) },
                E_OOM,
            )
        })
        // Alone: its refusal releases the unused memory of every pool of its process.
        .alone(),
        Case::gpu(820, "huge_size_leaves_other_pools_reserved", |e| {
            // A failed oversized allocation does not release the unused reserved memory of other
            // pools (R580: a pool with threshold UINT64_MAX keeps its 32 MiB).
            let p = Pool::on_device(e.dev)?;
            set_u64(p.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, 32 << 20, s.0)?;
            free_async(a, s.0)?;
            s.sync()?;
            let before = get_u64(p.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
            let mut q: CUdeviceptr = 0;
            expect(
                "cuMemAllocAsync(1 << 60)",
                unsafe { cuMemAllocAsync(&mut q, HUGE, s.0) },
                E_OOM,
            )?;
            let after = get_u64(p.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
            ensure!(
                before >= 32 << 20,
                "only {before} bytes reserved before the failed allocation"
            );
            ensure!(
                after == before,
                "reserved {before} before, {after} after the failed allocation"
            );
            Ok(())
        })
        .alone(),
        Case::gpu(820, "no_current_context_invalid_context", |_| {
            // A thread with no current context.
            let r = std::thread::spawn(|| {
                let mut p: CUdeviceptr = 0;
                unsafe { cuMemAllocAsync(&mut p, 1024, std::ptr::null_mut()) }.0
            })
            .join()
            .map_err(|_| "thread panicked")?;
            expect(
                "cuMemAllocAsync without a context",
                CUresult(r),
                CUresult::CUDA_ERROR_INVALID_CONTEXT,
            )
        }),
        // R580 dereferences the stale stream handle and crashes (SIGSEGV); a driver that checks
        // returns an error instead (INVALID_HANDLE is what the docs' error list offers for it).
        Case::gpu(820, "destroyed_stream_crashes_driver", |_| {
            let s = Stream::new()?;
            let raw = s.0;
            drop(s);
            let mut p: CUdeviceptr = 0;
            expect(
                "cuMemAllocAsync on a destroyed stream",
                unsafe { cuMemAllocAsync(&mut p, 1024, raw) },
                CUresult::CUDA_ERROR_INVALID_HANDLE,
            )
        })
        .crashes(SIGSEGV, CUresult::CUDA_ERROR_INVALID_HANDLE, "R580 (580.159.04)")
        // Under jemalloc R580 answered the documented code instead (one H200, 2026-11-29, issue 58):
        // the stream's freed memory decides.
        .heap_dependent()
        // A driver that answers instead may have read freed memory all the same.
        .hands_freed_handles(),
        Case::gpu(821, "null_pool_invalid_value", |_| {
            let mut p: CUdeviceptr = 0;
            let r = unsafe { cuMemAllocFromPoolAsync(&mut p, 1024, std::ptr::null_mut(), std::ptr::null_mut()) };
            give_back(r, p);
            expect("cuMemAllocFromPoolAsync(pool NULL)", r, E_VALUE)
        }),
        Case::gpu(821, "null_dptr_invalid_value", |e| {
            let pool = Pool::on_device(e.dev)?;
            expect(
                "cuMemAllocFromPoolAsync(NULL, ...)",
                unsafe { cuMemAllocFromPoolAsync(std::ptr::null_mut(), 1024, pool.0, std::ptr::null_mut()) },
                E_VALUE,
            )
        }),
        // As for cuMemAllocAsync: no documented answer; R580 returns success and a null pointer.
        Case::gpu(821, "size_zero_succeeds_with_null_pointer_driver_behaviour", |e| {
            let pool = Pool::on_device(e.dev)?;
            size_zero(&e.policy(), "cuMemAllocFromPoolAsync(size 0)", pool.0, |p| unsafe {
                cuMemAllocFromPoolAsync(p, 0, pool.0, std::ptr::null_mut())
            })
        }),
        Case::gpu(821, "huge_size_out_of_memory", |e| {
            let pool = Pool::on_device(e.dev)?;
            let mut p: CUdeviceptr = 0;
            expect(
                "cuMemAllocFromPoolAsync(1 << 60)",
                unsafe { cuMemAllocFromPoolAsync(&mut p, HUGE, pool.0, std::ptr::null_mut()) },
                E_OOM,
            )
        })
        // Alone: its refusal releases the unused memory of every pool of its process.
        .alone(),
        Case::gpu(821, "destroyed_pool", |e| {
            let pool = Pool::on_device(e.dev)?.take();
            ok("cuMemPoolDestroy", unsafe { cuMemPoolDestroy(pool) })?;
            let mut p: CUdeviceptr = 0;
            let r = unsafe { cuMemAllocFromPoolAsync(&mut p, 1024, pool, std::ptr::null_mut()) };
            give_back(r, p);
            expect("cuMemAllocFromPoolAsync(destroyed pool)", r, E_VALUE)
        })
        // On R580 (H200) a worker that had run it died later inside cuMemAllocFromPoolAsync or
        // cuMemPoolDestroy under glibc's heap checks (issue 58); in a process of its own, under
        // glibc.malloc.perturb, R580 dies inside this very call (one H200, 2026-11-29, 3 runs of 3):
        // it reads the destroyed pool's freed memory.
        .crashes(SIGSEGV, E_VALUE, "R580 (580.159.04) under glibc.malloc.perturb")
        .heap_dependent()
        .hands_freed_handles(),
        Case::gpu(821, "default_pool_explicitly", |e| {
            let d = default_pool(e.dev)?;
            let s = Stream::new()?;
            round_trip(
                "cuMemAllocFromPoolAsync(default pool)",
                s.0,
                |p| unsafe { cuMemAllocFromPoolAsync(p, 4096, d, s.0) },
                d,
            )
        }),
        Case::gpu(822, "same_stream_reuse_after_free", |e| {
            // Stream order: a block freed on a stream is reused by the next allocation on it.
            let pool = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(pool.0, 1 << 20, s.0)?;
            free_async(a, s.0)?;
            let b = alloc_from(pool.0, 1 << 20, s.0)?;
            free_async(b, s.0)?;
            s.sync()?;
            ensure!(
                a == b,
                "allocation after a same-stream free got {b:#x}, not the freed {a:#x}"
            );
            Ok(())
        })
        .alone(),
        Case::gpu(822, "free_of_cuMemAlloc_memory", |_| {
            // Memory from cuMemAlloc may be freed with cuMemFreeAsync.
            let mut p: CUdeviceptr = 0;
            ok("cuMemAlloc", unsafe { cuMemAlloc_v2(&mut p, 1 << 20) })?;
            let s = Stream::new()?;
            let r = unsafe { cuMemFreeAsync(p, s.0) };
            s.sync()?;
            if r != SUCCESS {
                let _ = unsafe { cuMemFree_v2(p) };
            }
            ok("cuMemFreeAsync(cuMemAlloc memory)", r)
        }),
        Case::gpu(822, "null_pointer_is_a_no_op_driver_behaviour", |e| {
            // Like free(NULL): R580 returns success for pointer 0.
            expect_code(&e.policy(), "free_null_succeeds", "cuMemFreeAsync(0)", unsafe {
                cuMemFreeAsync(0, std::ptr::null_mut())
            })
        }),
        Case::gpu(822, "per_thread_and_legacy_streams", |e| {
            let pool = Pool::on_device(e.dev)?;
            let a = alloc_from(pool.0, 4096, CU_STREAM_LEGACY)?;
            free_async(a, CU_STREAM_PER_THREAD)?;
            ok("sync per-thread", unsafe { cuStreamSynchronize(CU_STREAM_PER_THREAD) })?;
            ok("sync legacy", unsafe { cuStreamSynchronize(CU_STREAM_LEGACY) })
        }),
        Case::gpu(822, "free_on_other_stream_after_event", |e| {
            let pool = Pool::on_device(e.dev)?;
            let (s1, s2) = (Stream::new()?, Stream::new()?);
            let a = alloc_from(pool.0, 1 << 20, s1.0)?;
            let ev = Event::new(0)?;
            ev.record(s1.0)?;
            ok("cuStreamWaitEvent", unsafe { cuStreamWaitEvent(s2.0, ev.0, 0) })?;
            free_async(a, s2.0)?;
            s2.sync()?;
            let used = get_u64(pool.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
            ensure!(used == 0, "used memory {used} after the free completed");
            Ok(())
        }),
        Case::gpu(822, "double_free", |e| {
            let pool = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            refused_double_free(pool.0, 4096, s.0)
        })
        .hands_freed_handles(),
        Case::gpu(822, "interior_pointer", |e| {
            let pool = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(pool.0, 1 << 20, s.0)?;
            let r = unsafe { cuMemFreeAsync(a + 256, s.0) };
            free_async(a, s.0)?;
            s.sync()?;
            expect("cuMemFreeAsync(interior pointer)", r, E_VALUE)
        }),
        Case::gpu(822, "free_after_pool_destroyed", |e| {
            let pool = Pool::on_device(e.dev)?.take();
            let s = Stream::new()?;
            let a = alloc_from(pool, 4096, s.0)?;
            ok("cuMemPoolDestroy", unsafe { cuMemPoolDestroy(pool) })?;
            free_async(a, s.0)?;
            s.sync()
        }),
    ]);
    v
}
