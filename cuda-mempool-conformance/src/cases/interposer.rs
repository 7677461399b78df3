//! The bugs interposers (HAMi-core, GPU-sharing and checkpointing layers) are known for, as trials
//! named `…::interposer::…`: a call made while another device's context is current (HAMi-core
//! #310), each API from a thread with no current context (#276, #289), and a refused call that
//! leaves something allocated behind (#306). The per-thread-default-stream variant through
//! cuGetProcAddress is alloc.rs's `ptsz_variant_uses_per_thread_stream`; pool calls during a
//! capture are `capture::pool_calls`'s.

use super::ipc::SameProcess;
use super::peer::OnDevice;
use crate::cases::prelude::*;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use CUmemPool_attribute as A;
const MIB: usize = 1 << 20;
const E_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const E_CONTEXT: CUresult = CUresult::CUDA_ERROR_INVALID_CONTEXT;
const POSIX: CUmemAllocationHandleType = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;

fn used(pool: CUmemoryPool) -> R<u64> {
    get_u64(pool, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
}
fn reserved(pool: CUmemoryPool) -> R<u64> {
    get_u64(pool, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)
}

/// Runs `call` on a new thread whose current context is none (set to NULL there, and checked), and
/// gives back what it returned. The codes are judged on the trial's thread, where observations and
/// blame are kept.
fn bare<T: Send>(call: impl FnOnce() -> T + Send) -> R<T> {
    let (set, got, current, out) = std::thread::scope(|sc| {
        sc.spawn(|| {
            let set = unsafe { cuCtxSetCurrent(std::ptr::null_mut()) };
            let mut c: CUcontext = std::ptr::null_mut();
            let got = unsafe { cuCtxGetCurrent(&mut c) };
            (set, got, c as usize, call())
        })
        .join()
        .map_err(|_| "the thread without a context panicked")
    })?;
    ok("cuCtxSetCurrent(NULL)", set)?;
    ok("cuCtxGetCurrent", got)?;
    ensure!(
        current == 0,
        "a context ({current:#x}) is current after cuCtxSetCurrent(NULL)"
    );
    Ok(out)
}

/// `alloc` on a thread with no current context (`bare`), on the explicit stream `s`: its answer,
/// what it allocated freed on `s` and `s` synchronised.
fn alloc_bare_on(s: &Stream, alloc: impl FnOnce(*mut CUdeviceptr, CUstream) -> CUresult + Send) -> R<CUresult> {
    let h = s.0 as usize;
    let (r, p) = bare(move || {
        let mut p: CUdeviceptr = 0;
        (alloc(&mut p, h as CUstream), p)
    })?;
    if r == SUCCESS {
        free_async(p, s.0)?;
    }
    s.sync()?;
    Ok(r)
}

/// A pool with memory in use: `n` bytes allocated on a stream of its device and synchronised.
struct Held {
    pool: Pool,
    s: Stream,
    p: CUdeviceptr,
    live: bool,
}
impl Held {
    fn new(pool: Pool, n: usize) -> R<Held> {
        let s = Stream::new()?;
        let p = alloc_from(pool.0, n, s.0)?;
        s.sync()?;
        Ok(Held { pool, s, p, live: true })
    }
}
impl Drop for Held {
    fn drop(&mut self) {
        if self.live {
            unsafe {
                let _ = cuMemFreeAsync(self.p, self.s.0);
                let _ = cuStreamSynchronize(self.s.0);
            }
        }
    }
}

/// A pool with 32 MiB reserved and nothing in use (release threshold UINT64_MAX keeps it).
fn reserving_pool(dev: CUdevice) -> R<(Pool, u64)> {
    let pool = Pool::on_device(dev)?;
    set_u64(pool.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
    let s = Stream::new()?;
    let a = alloc_from(pool.0, 32 * MIB, s.0)?;
    free_async(a, s.0)?;
    s.sync()?;
    let r = reserved(pool.0)?;
    ensure!(
        r >= 32 * MIB as u64,
        "only {r} bytes reserved after a 32 MiB allocation was freed"
    );
    Ok((pool, r))
}

/// Item 2 of issue 23: each API on a thread with no current context answers plainly, without
/// crashing. Documented answers: the stream-ordered calls on the legacy stream need the current
/// context (INVALID_CONTEXT, in their error lists); the pool calls name their device through the
/// pool or the properties, and list no INVALID_CONTEXT, so they succeed, and their effect shows on
/// the trial's thread afterwards. (820's row is alloc.rs's `no_current_context_invalid_context`.)
/// On an explicit stream the stream names its context: the three stream-ordered calls succeed
/// there (R580; issue 34: a layer answered INVALID_CONTEXT without asking the driver).
fn no_context_cases() -> Vec<Case> {
    vec![
        // Kills 820-no-context-refuses-stream.
        Case::gpu(820, "interposer::no_current_context_explicit_stream_succeeds", |_| {
            let r = alloc_bare_on(&Stream::new()?, |p, s| unsafe { cuMemAllocAsync(p, MIB, s) })?;
            expect("cuMemAllocAsync(explicit stream) without a context", r, SUCCESS)
        }),
        // Kills 821-no-context-refuses-stream.
        Case::gpu(821, "interposer::no_current_context_explicit_stream_succeeds", |e| {
            let pool = Pool::on_device(e.dev)?;
            let h = pool.0 as usize;
            let r = alloc_bare_on(&Stream::new()?, move |p, s| unsafe {
                cuMemAllocFromPoolAsync(p, MIB, h as CUmemoryPool, s)
            })?;
            expect("cuMemAllocFromPoolAsync(explicit stream) without a context", r, SUCCESS)
        }),
        // Kills 822-no-context-refuses-stream.
        Case::gpu(822, "interposer::no_current_context_explicit_stream_succeeds", |e| {
            let mut h = Held::new(Pool::on_device(e.dev)?, MIB)?;
            let (p, sh) = (h.p, h.s.0 as usize);
            let r = bare(move || unsafe { cuMemFreeAsync(p, sh as CUstream) })?;
            if r == SUCCESS {
                h.live = false;
            }
            h.s.sync()?;
            expect("cuMemFreeAsync(explicit stream) without a context", r, SUCCESS)?;
            let u = used(h.pool.0)?;
            ensure!(u == 0, "{u} bytes still in use after the free without a context");
            Ok(())
        }),
        // Kills 821-no-context-crash.
        Case::gpu(821, "interposer::no_current_context_invalid_context", |e| {
            let pool = Pool::on_device(e.dev)?;
            let before = used(pool.0)?;
            let h = pool.0 as usize;
            let (r, p) = bare(move || {
                let mut p: CUdeviceptr = 0;
                let r = unsafe { cuMemAllocFromPoolAsync(&mut p, MIB, h as CUmemoryPool, std::ptr::null_mut()) };
                (r, p)
            })?;
            if r == SUCCESS && p != 0 {
                free_async(p, std::ptr::null_mut())?;
                ok("cuStreamSynchronize", unsafe {
                    cuStreamSynchronize(std::ptr::null_mut())
                })?;
            }
            expect("cuMemAllocFromPoolAsync(legacy stream) without a context", r, E_CONTEXT)?;
            let after = used(pool.0)?;
            ensure!(
                after == before,
                "the refused allocation left {after} bytes in use (from {before})"
            );
            Ok(())
        }),
        // Kills 822-noop-leaks (it answers SUCCESS and frees nothing).
        Case::gpu(822, "interposer::no_current_context_invalid_context", |e| {
            let mut h = Held::new(Pool::on_device(e.dev)?, MIB)?;
            let p = h.p;
            let r = bare(move || unsafe { cuMemFreeAsync(p, std::ptr::null_mut()) })?;
            if r == SUCCESS {
                h.live = false;
                ok("cuCtxSynchronize", unsafe { cuCtxSynchronize() })?;
            }
            let code = expect("cuMemFreeAsync(legacy stream) without a context", r, E_CONTEXT);
            if h.live {
                h.live = false;
                free_async(h.p, h.s.0)?;
                h.s.sync()?;
            }
            code?;
            let u = used(h.pool.0)?;
            ensure!(u == 0, "{u} bytes still in use after the free on the trial's thread");
            Ok(())
        }),
        // Kills 823-no-context-crash.
        Case::gpu(823, "interposer::no_current_context_succeeds", |e| {
            let dev = e.dev;
            let (r, p) = bare(move || {
                let props = device_props(dev);
                let mut p: CUmemoryPool = std::ptr::null_mut();
                let r = unsafe { cuMemPoolCreate(&mut p, &props) };
                (r, p as usize)
            })?;
            let made = (r == SUCCESS && p != 0).then(|| Pool(p as CUmemoryPool));
            expect("cuMemPoolCreate without a context", r, SUCCESS)?;
            let made = made.ok_or("cuMemPoolCreate returned success and a NULL pool")?;
            let h = Held::new(made, MIB)?;
            ensure!(
                pool_of(h.p)? == h.pool.0,
                "an allocation from the new pool belongs to another pool"
            );
            Ok(())
        }),
        // Kills 824-no-context-crash, 824-noop (the pool outlives its destruction: it still allocates).
        Case::gpu(824, "interposer::no_current_context_succeeds", |e| {
            let pool = Pool::on_device(e.dev)?.take();
            let h = pool as usize;
            let r = bare(move || unsafe { cuMemPoolDestroy(h as CUmemoryPool) })?;
            if r != SUCCESS {
                let _ = unsafe { cuMemPoolDestroy(pool) };
            }
            expect("cuMemPoolDestroy without a context", r, SUCCESS)?;
            let mut p: CUdeviceptr = 0;
            let again = unsafe { cuMemAllocFromPoolAsync(&mut p, 4096, pool, std::ptr::null_mut()) };
            if again == SUCCESS {
                let _ = unsafe { cuMemFreeAsync(p, std::ptr::null_mut()) };
            }
            expect("cuMemAllocFromPoolAsync(the destroyed pool)", again, E_VALUE)
        })
        // R580 reads the destroyed pool's freed memory in that allocation: under glibc.malloc.perturb
        // it dies there (one H200, 2026-11-29, 3 runs of 3; issue 58).
        .crashes(SIGSEGV, E_VALUE, "R580 (580.159.04) under glibc.malloc.perturb")
        .or_later_inside(&[821])
        .heap_dependent()
        .hands_freed_handles(),
        // Kills 825-no-context-crash.
        Case::gpu(825, "interposer::no_current_context_succeeds", |e| {
            let h = Held::new(Pool::ipc(e.dev)?, MIB)?;
            // R580 exports pointers only of a pool whose handle was exported (825
            // export_pointer_before_pool_export).
            drop(export_pool_fd(h.pool.0)?);
            let p = h.p;
            let (r, data) = bare(move || {
                let mut d = CUmemPoolPtrExportData::default();
                let r = unsafe { cuMemPoolExportPointer(&mut d, p) };
                (r, d.reserved)
            })?;
            expect("cuMemPoolExportPointer without a context", r, SUCCESS)?;
            ensure!(data.iter().any(|&b| b != 0), "the export data is all zeros");
            Ok(())
        })
        .needs(Cap::Ipc),
        // Kills 826-no-context-crash.
        Case::gpu(826, "interposer::no_current_context_succeeds", |e| {
            let pool = Pool::ipc(e.dev)?;
            let h = pool.0 as usize;
            let (r, fd) = bare(move || {
                let mut fd: i32 = -1;
                let r = unsafe {
                    cuMemPoolExportToShareableHandle((&mut fd as *mut i32).cast(), h as CUmemoryPool, POSIX, 0)
                };
                (r, fd)
            })?;
            // SAFETY: an fd the driver handed over (closed on drop).
            let owned = (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) });
            expect("cuMemPoolExportToShareableHandle without a context", r, SUCCESS)?;
            ensure!(owned.is_some(), "the export returned success and fd {fd}");
            Ok(())
        })
        .needs(Cap::Ipc),
        // Kills 827-no-context-crash.
        Case::gpu(827, "interposer::no_current_context_succeeds", |e| {
            let pool = Pool::on_device(e.dev)?;
            let (h, dev) = (pool.0 as usize, e.dev);
            let (r, f) = bare(move || {
                let mut f = CUmemAccess_flags(0xdead);
                let mut loc = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, dev);
                let r = unsafe { cuMemPoolGetAccess(&mut f, h as CUmemoryPool, &mut loc) };
                (r, f)
            })?;
            expect("cuMemPoolGetAccess without a context", r, SUCCESS)?;
            ensure!(
                f == CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                "the owner's access reads {}, expected read-write",
                f.0
            );
            Ok(())
        }),
        // Kills 828-no-context-crash.
        Case::gpu(828, "interposer::no_current_context_succeeds", |e| {
            let h = Held::new(Pool::on_device(e.dev)?, MIB)?;
            let pool = h.pool.0 as usize;
            let (r, v) = bare(move || {
                let mut v: u64 = u64::MAX;
                let r = unsafe {
                    cuMemPoolGetAttribute(
                        pool as CUmemoryPool,
                        A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
                        (&mut v as *mut u64).cast(),
                    )
                };
                (r, v)
            })?;
            expect("cuMemPoolGetAttribute(USED_MEM_CURRENT) without a context", r, SUCCESS)?;
            ensure!(
                v == MIB as u64,
                "used memory reads {v} without a context, {MIB} allocated"
            );
            Ok(())
        }),
        // Kills 829-no-context-crash.
        Case::gpu(829, "interposer::no_current_context_succeeds", |e| {
            let pool = Pool::ipc(e.dev)?;
            let fd = export_pool_fd(pool.0)?;
            let raw = fd.as_raw_fd();
            let (r, p) = bare(move || {
                let mut p: CUmemoryPool = std::ptr::null_mut();
                let r = import_pool_fd(raw, &mut p);
                (r, p as usize)
            })?;
            if r == SUCCESS && p != 0 {
                ok("cuMemPoolDestroy(the imported pool)", unsafe {
                    cuMemPoolDestroy(p as CUmemoryPool)
                })?;
            }
            // R580 imports its own export in the same process (829 import_in_same_process_succeeds_driver_behaviour).
            expect("cuMemPoolImportFromShareableHandle without a context", r, SUCCESS)?;
            ensure!(p != 0, "the import returned success and a NULL pool");
            Ok(())
        })
        .needs(Cap::Ipc),
        // Kills 830-no-context-crash.
        Case::gpu(830, "interposer::no_current_context_invalid_value", |e| {
            let h = Held::new(Pool::ipc(e.dev)?, MIB)?;
            drop(export_pool_fd(h.pool.0)?);
            let mut data = CUmemPoolPtrExportData::default();
            ok("cuMemPoolExportPointer", unsafe {
                cuMemPoolExportPointer(&mut data, h.p)
            })?;
            let pool = h.pool.0 as usize;
            let (r, p) = bare(move || {
                let mut p: CUdeviceptr = 0;
                let r = unsafe { cuMemPoolImportPointer(&mut p, pool as CUmemoryPool, &mut data) };
                (r, p)
            })?;
            if r == SUCCESS && p != 0 && p != h.p {
                let _ = unsafe { cuMemFreeAsync(p, h.s.0) };
            }
            // As with a context (830 import_pointer_on_non_imported_pool_refused): the exporting
            // pool is not an imported one.
            expect(
                "cuMemPoolImportPointer(into the exporting pool) without a context",
                r,
                E_VALUE,
            )
        })
        .needs(Cap::Ipc),
        // Kills 831-no-context-crash.
        Case::gpu(831, "interposer::no_current_context_succeeds", |e| {
            let pool = Pool::on_device(e.dev)?;
            let (h, dev) = (pool.0 as usize, e.dev);
            let r = bare(move || {
                let d = CUmemAccessDesc {
                    location: mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, dev),
                    flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                };
                unsafe { cuMemPoolSetAccess(h as CUmemoryPool, &d, 1) }
            })?;
            expect("cuMemPoolSetAccess(owner, read-write) without a context", r, SUCCESS)
        }),
        // Kills 832-no-context-crash.
        Case::gpu(832, "interposer::no_current_context_succeeds", |e| {
            const WANT: u64 = 7 * MIB as u64;
            let pool = Pool::on_device(e.dev)?;
            let h = pool.0 as usize;
            let r = bare(move || {
                let mut v = WANT;
                unsafe {
                    cuMemPoolSetAttribute(
                        h as CUmemoryPool,
                        A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                        (&mut v as *mut u64).cast(),
                    )
                }
            })?;
            expect("cuMemPoolSetAttribute(RELEASE_THRESHOLD) without a context", r, SUCCESS)?;
            let v = get_u64(pool.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)?;
            ensure!(
                v == WANT,
                "the threshold set without a context reads back {v}, expected {WANT}"
            );
            Ok(())
        }),
        // Kills 833-no-context-crash.
        Case::gpu(833, "interposer::no_current_context_succeeds", |e| {
            let (pool, _) = reserving_pool(e.dev)?;
            let h = pool.0 as usize;
            let r = bare(move || unsafe { cuMemPoolTrimTo(h as CUmemoryPool, 0) })?;
            expect("cuMemPoolTrimTo(0) without a context", r, SUCCESS)?;
            let left = reserved(pool.0)?;
            ensure!(
                left == 0,
                "{left} bytes still reserved after trimming an unused pool to 0"
            );
            Ok(())
        })
        .alone(),
    ]
}

/// Item 1 (HAMi-core #310): device A's memory and stream, device B's context current.
fn other_context_cases() -> Vec<Case> {
    vec![
        // cuMemFreeAsync takes its stream, not the current context: the free is A's, done once A's
        // stream reaches it; B's pools see nothing. Kills 822-charges-current-device,
        // 822-other-device-refused.
        Case::gpu(822, "interposer::free_with_other_device_current", |e| {
            let b = e.peer()?;
            let pool = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(pool.0, 4 * MIB, s.0)?;
            s.sync()?;
            let b_pools = [default_pool(b)?, current_pool(b)?];
            let b_before = b_pools.iter().map(|&p| Ok((used(p)?, reserved(p)?))).collect::<R<Vec<_>>>()?;
            let r = {
                let _b = OnDevice::enter(b)?;
                unsafe { cuMemFreeAsync(a, s.0) }
            };
            if r != SUCCESS {
                free_async(a, s.0)?;
            }
            s.sync()?;
            ok("cuMemFreeAsync(device A's memory and stream, device B current)", r)?;
            let left = used(pool.0)?;
            ensure!(left == 0, "{left} bytes of device {}'s pool still in use after the free", e.dev);
            let b_after = b_pools.iter().map(|&p| Ok((used(p)?, reserved(p)?))).collect::<R<Vec<_>>>()?;
            ensure!(
                b_after == b_before,
                "device {b}'s default and current pools went from (used, reserved) {b_before:?} to {b_after:?}"
            );
            Ok(())
        })
        .pair()
        .alone(),
        // The docs: cuMemAllocAsync draws from the current pool of the stream's device. Kills
        // 820-current-context-pool.
        Case::gpu(820, "interposer::alloc_with_other_device_current_uses_stream_device_pool", |e| {
            let b = e.peer()?;
            let s = Stream::new()?;
            let (r, a) = {
                let _b = OnDevice::enter(b)?;
                let mut a: CUdeviceptr = 0;
                (unsafe { cuMemAllocAsync(&mut a, MIB, s.0) }, a)
            };
            let owner = if r == SUCCESS { Some(pool_of(a)) } else { None };
            if r == SUCCESS {
                free_async(a, s.0)?;
            }
            s.sync()?;
            ok("cuMemAllocAsync(device A's stream, device B current)", r)?;
            let (owner, want) = (owner.ok_or("no allocation")??, current_pool(e.dev)?);
            ensure!(
                owner == want,
                "the allocation on device {}'s stream came from pool {owner:p}, not that device's current pool {want:p}",
                e.dev
            );
            Ok(())
        })
        .pair()
        .serial(),
    ]
}

/// Item 3 (HAMi-core #306): a refused call leaves nothing allocated: the pool's counters are what
/// they were, and the out-parameter holds no handle or address.
fn refusal_cases() -> Vec<Case> {
    vec![
        Case::gpu(821, "interposer::refused_allocation_leaves_pool_as_it_was", |e| {
            let mut props = device_props(e.dev);
            props.maxSize = 64 * MIB;
            let pool = Pool::create(&props)?;
            let h = Held::new(pool, 32 * MIB)?;
            let before = (used(h.pool.0)?, reserved(h.pool.0)?);
            for (what, n) in [("beyond maxSize", 48 * MIB), ("1 << 60 bytes", 1usize << 60)] {
                let mut p: CUdeviceptr = 0;
                let r = unsafe { cuMemAllocFromPoolAsync(&mut p, n, h.pool.0, h.s.0) };
                if r == SUCCESS {
                    free_async(p, h.s.0)?;
                }
                h.s.sync()?;
                expect(
                    &format!("cuMemAllocFromPoolAsync({what})"),
                    r,
                    CUresult::CUDA_ERROR_OUT_OF_MEMORY,
                )?;
                let after = (used(h.pool.0)?, reserved(h.pool.0)?);
                ensure!(
                    after == before,
                    "after the refused allocation {what} the pool's (used, reserved) is {after:?}, it was {before:?}"
                );
            }
            Ok(())
        })
        .alone(),
        // A refused cuMemPoolCreate hands back no pool: the out-parameter keeps what it held (or
        // is NULL), and the device's current pool is the one it was. A pool made and dropped
        // without its handle reaching the caller cannot be seen: it reserves no memory, and the
        // process cannot list its pools. maxSize beyond the device: R580's OUT_OF_MEMORY is a
        // declared departure (the documentation is silent). Kills 823-failure-leaks.
        Case::gpu(823, "interposer::refused_create_leaves_nothing", |e| {
            let current = current_pool(e.dev)?;
            let count = e.m.devices.len() as i32;
            let mut past_last = device_props(e.dev);
            past_last.location = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, count);
            let mut negative = device_props(e.dev);
            negative.location = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, -1);
            let mut unknown_bit = device_props(e.dev);
            unknown_bit.handleTypes = CUmemAllocationHandleType_enum(0x40);
            let mut beyond = device_props(e.dev);
            beyond.maxSize = 1 << 60;
            let rows: [(&str, CUmemPoolProps, Option<&str>); 4] = [
                ("location device = the device count", past_last, None),
                ("location device = -1", negative, None),
                ("unknown handle-type bit 0x40", unknown_bit, None),
                ("maxSize 1 << 60", beyond, Some("max_size_beyond_memory_out_of_memory")),
            ];
            for (what, props, departure) in rows {
                let mut out = SENTINEL_POOL as CUmemoryPool;
                let r = unsafe { cuMemPoolCreate(&mut out, &props) };
                if r == SUCCESS {
                    let _ = Pool(out);
                }
                let call = format!("cuMemPoolCreate({what})");
                match departure {
                    Some(id) => expect_code(&e.policy(), id, &call, r)?,
                    None => expect(&call, r, E_VALUE)?,
                }
                if out as usize != SENTINEL_POOL && !out.is_null() {
                    blame::set(823);
                    return Err(format!(
                        "the refused {call} wrote {out:p} to its out-parameter (it held {SENTINEL_POOL:#x}): a pool \
                         handed back with the refusal"
                    )
                    .into());
                }
                let now = current_pool(e.dev)?;
                ensure!(
                    now == current,
                    "after the refused {call} the device's current pool is {now:p}, it was {current:p}"
                );
            }
            Ok(())
        }),
        // A refused cuMemPoolImportPointer (all-zero export data: INVALID_VALUE, as R580 answers
        // in an importing process) maps nothing: the out-pointer keeps what it held, the imported
        // pool's counters are as they were where the driver answers them (R580 refuses queries of
        // imported pools: imported_pool_attribute_query_refused), and the pool then imports the
        // genuine data, whose bytes are the exporter's, and is destroyed once that import is
        // freed. Kills 830-failure-leaks.
        Case::gpu(830, "interposer::refused_import_leaves_nothing", |e| {
            let mut sp = SameProcess::new(e.dev)?;
            let imported = sp.imported()?;
            let counters = |p: CUmemoryPool| {
                let (mut used, mut reserved) = (0u64, 0u64);
                let u = unsafe {
                    cuMemPoolGetAttribute(p, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT, (&mut used as *mut u64).cast())
                };
                let r = unsafe {
                    cuMemPoolGetAttribute(
                        p,
                        A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                        (&mut reserved as *mut u64).cast(),
                    )
                };
                (u == SUCCESS && r == SUCCESS).then_some((used, reserved))
            };
            let before = counters(imported);
            let mut zero = CUmemPoolPtrExportData::default();
            let mut q: CUdeviceptr = SENTINEL_PTR;
            let r = unsafe { cuMemPoolImportPointer(&mut q, imported, &mut zero) };
            // Whatever came back is freed with the imports (before the exporter's allocation).
            if q != SENTINEL_PTR && q != 0 {
                sp.imports.push(q);
            }
            let after = counters(imported);
            expect(
                "cuMemPoolImportPointer(all-zero export data, through the imported pool)",
                r,
                E_VALUE,
            )?;
            if q != SENTINEL_PTR && q != 0 {
                blame::set(830);
                return Err(format!(
                    "the refused cuMemPoolImportPointer wrote {q:#x} to its out-pointer (it held {SENTINEL_PTR:#x}): \
                     a mapping handed back with the refusal"
                )
                .into());
            }
            match (before, after) {
                (Some(b), Some(a)) => ensure!(
                    a == b,
                    "the imported pool's (used, reserved) is {a:?} after the refused import, it was {b:?}"
                ),
                _ => note("the imported pool's counters cannot be read here (the query is refused)"),
            }
            let p = sp.import()?;
            sp.check_bytes(p, "the genuine import after a refused one")?;
            ok("cuMemFreeAsync(the genuine import)", unsafe {
                cuMemFreeAsync(p, sp.stream.0)
            })?;
            sp.imports.clear();
            sp.stream.sync()?;
            let pool = sp.imported.take().ok_or("the imported pool is gone")?.take();
            ok("cuMemPoolDestroy(the imported pool, its one import freed)", unsafe {
                cuMemPoolDestroy(pool)
            })
        })
        .needs(Cap::Ipc),
    ]
}

/// What a refused call's out-parameter holds before the call: no handle or address the driver
/// hands out, so that one written on refusal shows.
const SENTINEL_POOL: usize = 0x5eed_0823;
const SENTINEL_PTR: CUdeviceptr = 0x5eed_0830;

pub fn cases() -> Vec<Case> {
    let mut v = no_context_cases();
    v.extend(other_context_cases());
    v.extend(refusal_cases());
    v
}
