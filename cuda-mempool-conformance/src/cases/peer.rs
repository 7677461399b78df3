//! Peer access on two devices (827, 831, and cross-device use of 820–822). Each case runs on a pair
//! of devices that can access each other (`harness/devices.rs`: by default device 0 and the first such
//! device; with CONFORMANCE_DEVICES, every ordered pair). Pool memory lives on device A (the case's
//! device); device B (its peer) works through its own primary context and streams.

use crate::cases::prelude::*;
use crate::driver::cu::CUmemAccess_flags_enum as F;
use crate::driver::cu::CUmemLocationType_enum as LT;

/// Device `dev`'s primary context made current on this thread until drop (push/pop).
pub struct OnDevice(CUdevice);
impl OnDevice {
    pub fn enter(dev: CUdevice) -> R<OnDevice> {
        let mut ctx = std::ptr::null_mut();
        ok("cuDevicePrimaryCtxRetain", unsafe {
            cuDevicePrimaryCtxRetain(&mut ctx, dev)
        })?;
        let r = unsafe { cuCtxPushCurrent_v2(ctx) };
        if r != SUCCESS {
            let _ = unsafe { cuDevicePrimaryCtxRelease_v2(dev) };
        }
        ok("cuCtxPushCurrent", r)?;
        Ok(OnDevice(dev))
    }
}
impl Drop for OnDevice {
    fn drop(&mut self) {
        let mut ctx = std::ptr::null_mut();
        unsafe {
            let _ = cuCtxPopCurrent_v2(&mut ctx);
            let _ = cuDevicePrimaryCtxRelease_v2(self.0);
        }
    }
}

pub(crate) fn access(pool: CUmemoryPool, dev: CUdevice) -> R<F> {
    let mut f = F(0xdead);
    let mut loc = mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, dev);
    ok("cuMemPoolGetAccess", unsafe {
        cuMemPoolGetAccess(&mut f, pool, &mut loc)
    })?;
    Ok(f)
}

/// cuMemPoolGetAccess must report `want` for `dev`, where the data path has already shown what
/// the access is: a wrong report is GetAccess's fault (827), whichever trial finds it.
pub(crate) fn access_is(pool: CUmemoryPool, dev: CUdevice, want: F, when: &str) -> R {
    let f = access(pool, dev)?;
    if f != want {
        blame::set(827);
        return Err(format!(
            "cuMemPoolGetAccess {when} reports {} for device {dev}, expected {}",
            f.0, want.0
        )
        .into());
    }
    Ok(())
}

/// The data path must agree with what was granted: device `dev` fills `n` bytes at `p` (a refusal
/// where access was granted, or success where it was not, is SetAccess's fault: 831).
pub(crate) fn peer_fill_is(dev: CUdevice, p: CUdeviceptr, n: usize, granted: bool, when: &str) -> R {
    let r = fill_from(dev, p, 0x77, n)?;
    let want = if granted {
        SUCCESS
    } else {
        CUresult::CUDA_ERROR_INVALID_VALUE
    };
    if r != want {
        blame::set(831);
        return Err(format!(
            "device {dev} filling pool memory {when}: {}, expected {}",
            code_name(r),
            code_name(want)
        )
        .into());
    }
    Ok(())
}

pub(crate) fn set_access(pool: CUmemoryPool, dev: CUdevice, flags: F) -> CUresult {
    let d = CUmemAccessDesc {
        location: mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, dev),
        flags,
    };
    unsafe { cuMemPoolSetAccess(pool, &d, 1) }
}

/// Device B fills `n` bytes at `p` with `v` on its own stream; the driver's code for the fill, or
/// for the synchronisation when the fill itself was accepted.
pub(crate) fn fill_from(dev: CUdevice, p: CUdeviceptr, v: u8, n: usize) -> R<CUresult> {
    let _b = OnDevice::enter(dev)?;
    let s = Stream::new()?;
    let r = unsafe { cuMemsetD8Async(p, v, n, s.0) };
    if r != SUCCESS {
        return Ok(r);
    }
    Ok(unsafe { cuStreamSynchronize(s.0) })
}

/// Device B copies `n` bytes at `p` to the host on its own stream.
pub(crate) fn read_from(dev: CUdevice, p: CUdeviceptr, n: usize) -> R<Vec<u8>> {
    let _b = OnDevice::enter(dev)?;
    let s = Stream::new()?;
    let mut host = vec![0u8; n];
    ok("cuMemcpyDtoHAsync (peer)", unsafe {
        cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), p, n, s.0)
    })?;
    s.sync()?;
    Ok(host)
}

pub(crate) fn read_here(p: CUdeviceptr, n: usize) -> R<Vec<u8>> {
    let mut host = vec![0u8; n];
    ok("cuMemcpyDtoH", unsafe {
        cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), p, n)
    })?;
    Ok(host)
}

pub(crate) const N: usize = 1 << 20;

/// A case on every ordered peer-capable pair (`.pair()`), its body given the peer device.
pub(crate) fn peer(api: u32, name: &str, body: fn(&Env, CUdevice) -> R) -> Case {
    Case::gpu(api, name, move |e| body(e, e.peer()?)).pair()
}

pub fn cases() -> Vec<Case> {
    vec![
        peer(827, "peer_has_no_access_by_default", |e, b| {
            let p = Pool::on_device(e.dev)?;
            let f = access(p.0, b)?;
            ensure!(
                f == F::CU_MEM_ACCESS_FLAGS_PROT_NONE,
                "peer device starts with access {}, expected none",
                f.0
            );
            Ok(())
        }),
        // The data path shows the grant: B's fill is refused before it and accepted after it,
        // and the owner keeps its access.
        peer(831, "grant_read_write_to_peer", |e, b| {
            let p = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, N, s.0)?;
            s.sync()?;
            let before = peer_fill_is(b, a, N, false, "before the grant");
            let granted = ok(
                "cuMemPoolSetAccess(peer, read-write)",
                set_access(p.0, b, F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE),
            );
            let after = granted
                .clone()
                .and_then(|_| peer_fill_is(b, a, N, true, "after the grant"));
            let owner = unsafe { cuMemsetD8Async(a, 1, N, s.0) };
            free_async(a, s.0)?;
            s.sync()?;
            before?;
            granted?;
            after?;
            ok("owner fill after the peer grant (cuMemsetD8Async)", owner)
        }),
        // What GetAccess reports after a grant and after a revoke, each state first shown by the
        // data path.
        peer(827, "reports_peer_grant_and_revoke", |e, b| {
            let p = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, N, s.0)?;
            s.sync()?;
            let r = (|| {
                ok(
                    "cuMemPoolSetAccess(peer, read-write)",
                    set_access(p.0, b, F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE),
                )?;
                peer_fill_is(b, a, N, true, "after the grant")?;
                access_is(p.0, b, F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE, "after a grant")?;
                access_is(
                    p.0,
                    e.dev,
                    F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                    "for the owner after a peer grant",
                )?;
                ok(
                    "cuMemPoolSetAccess(peer, none)",
                    set_access(p.0, b, F::CU_MEM_ACCESS_FLAGS_PROT_NONE),
                )?;
                peer_fill_is(b, a, N, false, "after the revoke")?;
                access_is(p.0, b, F::CU_MEM_ACCESS_FLAGS_PROT_NONE, "after a revoke")
            })();
            free_async(a, s.0)?;
            s.sync()?;
            r
        }),
        // Read-only pool access is not available on R580 (NOT_SUPPORTED, as for the owner): the
        // peer keeps no access (its fill is refused, and GetAccess says none).
        peer(831, "read_only_peer_access_not_supported", |e, b| {
            let p = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, N, s.0)?;
            s.sync()?;
            let r = set_access(p.0, b, F::CU_MEM_ACCESS_FLAGS_PROT_READ);
            let fill = peer_fill_is(b, a, N, false, "after the refused read-only grant");
            let reported = access_is(
                p.0,
                b,
                F::CU_MEM_ACCESS_FLAGS_PROT_NONE,
                "after the refused read-only grant",
            );
            free_async(a, s.0)?;
            s.sync()?;
            expect_code(
                &e.policy(),
                "set_access_not_supported",
                "cuMemPoolSetAccess(peer, read)",
                r,
            )?;
            fill?;
            reported
        }),
        peer(831, "grant_applies_to_existing_allocations_read_and_write", |e, b| {
            let p = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, N, s.0)?;
            ok("cuMemsetD8Async", unsafe { cuMemsetD8Async(a, 0x11, N, s.0) })?;
            s.sync()?;
            ok(
                "grant after allocating",
                set_access(p.0, b, F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE),
            )?;
            let seen = read_from(b, a, N)?;
            ensure!(seen.iter().all(|&x| x == 0x11), "the peer read wrong bytes");
            ok("peer fill", fill_from(b, a, 0x22, N)?)?;
            let back = read_here(a, N)?;
            free_async(a, s.0)?;
            s.sync()?;
            ensure!(
                back.iter().all(|&x| x == 0x22),
                "the owner does not see the peer's writes"
            );
            Ok(())
        }),
        // Docs: access is what SetAccess grants. R580 answer for a peer write without it: the code
        // asserted below (run in a child: a refused access may also fault the peer's context).
        peer(831, "peer_write_refused_without_access", |e, b| {
            let p = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, N, s.0)?;
            s.sync()?;
            let r = fill_from(b, a, 0x33, N)?;
            free_async(a, s.0)?;
            s.sync()?;
            expect("peer fill without access", r, CUresult::CUDA_ERROR_INVALID_VALUE)
        }),
        peer(831, "peer_write_refused_after_revoke", |e, b| {
            let p = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, N, s.0)?;
            s.sync()?;
            ok("grant", set_access(p.0, b, F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE))?;
            ok("peer fill while granted", fill_from(b, a, 0x44, N)?)?;
            ok("revoke", set_access(p.0, b, F::CU_MEM_ACCESS_FLAGS_PROT_NONE))?;
            let r = fill_from(b, a, 0x55, N)?;
            free_async(a, s.0)?;
            s.sync()?;
            expect("peer fill after revoke", r, CUresult::CUDA_ERROR_INVALID_VALUE)
        }),
        peer(831, "independent_of_context_peer_access", |e, b| {
            // Context-level peer access (cuCtxEnablePeerAccess) grants nothing on a pool.
            let p = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, N, s.0)?;
            s.sync()?;
            let ctx_a = e.ctx as CUcontext;
            let enabled = {
                let _b = OnDevice::enter(b)?;
                unsafe { cuCtxEnablePeerAccess(ctx_a, 0) }
            };
            ensure!(
                enabled == SUCCESS || enabled == CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
                "cuCtxEnablePeerAccess: {}",
                code_name(enabled)
            );
            let fill = peer_fill_is(b, a, N, false, "with context peer access only");
            let reported = access_is(
                p.0,
                b,
                F::CU_MEM_ACCESS_FLAGS_PROT_NONE,
                "with context peer access only",
            );
            {
                let _b = OnDevice::enter(b)?;
                let _ = unsafe { cuCtxDisablePeerAccess(ctx_a) };
            }
            free_async(a, s.0)?;
            s.sync()?;
            fill?;
            reported
        }),
        peer(821, "alloc_from_peer_pool_on_own_stream", |e, b| {
            let p = Pool::on_device(e.dev)?;
            let _b = OnDevice::enter(b)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, N, s.0)?;
            let owner = pool_of(a)?;
            let mut ordinal: i32 = -1;
            ok("cuPointerGetAttribute(DEVICE_ORDINAL)", unsafe {
                cuPointerGetAttribute(
                    (&mut ordinal as *mut i32).cast(),
                    CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                    a,
                )
            })?;
            free_async(a, s.0)?;
            s.sync()?;
            ensure!(
                owner == p.0,
                "allocation belongs to pool {owner:p}, not the device-A pool"
            );
            ensure!(
                ordinal == e.dev,
                "allocation lives on device {ordinal}, expected the pool's device {}",
                e.dev
            );
            Ok(())
        }),
        peer(822, "free_on_other_device_stream", |e, b| {
            let p = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, N, s.0)?;
            let ev = Event::new(0)?;
            ev.record(s.0)?;
            {
                let _b = OnDevice::enter(b)?;
                let sb = Stream::new()?;
                ok("cuStreamWaitEvent", unsafe { cuStreamWaitEvent(sb.0, ev.0, 0) })?;
                free_async(a, sb.0)?;
                sb.sync()?;
            }
            let used = get_u64(p.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
            ensure!(
                used == 0,
                "{used} bytes still in use after the free on the other device's stream"
            );
            Ok(())
        }),
        // The default pool of device A, granted to device B: B reads and writes A's default-pool
        // memory, and loses access again when revoked (so the default pool is left as it was).
        peer(831, "default_pool_granted_to_peer", |e, b| {
            let d = default_pool(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(d, N, s.0)?;
            ok("cuMemsetD8Async", unsafe { cuMemsetD8Async(a, 0x21, N, s.0) })?;
            s.sync()?;
            let r = (|| {
                peer_fill_is(b, a, N, false, "before the grant")?;
                ok(
                    "cuMemPoolSetAccess(default pool, peer, read-write)",
                    set_access(d, b, F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE),
                )?;
                let seen = read_from(b, a, N)?;
                ensure!(
                    seen.iter().all(|&x| x == 0x21),
                    "device {b} read wrong bytes of device {}'s default pool",
                    e.dev
                );
                peer_fill_is(b, a, N, true, "after the grant")?;
                let back = read_here(a, N)?;
                ensure!(
                    back.iter().all(|&x| x == 0x77),
                    "device {} does not see device {b}'s writes",
                    e.dev
                );
                Ok(())
            })();
            let revoked = set_access(d, b, F::CU_MEM_ACCESS_FLAGS_PROT_NONE);
            free_async(a, s.0)?;
            s.sync()?;
            r?;
            ok("cuMemPoolSetAccess(default pool, peer, none) restoring", revoked)
        })
        .serial(),
        peer(820, "alloc_async_on_peer_stream_uses_peer_current_pool", |e, b| {
            let _ = e;
            let _b = OnDevice::enter(b)?;
            let s = Stream::new()?;
            let a = alloc_async(N, s.0)?;
            let owner = pool_of(a)?;
            free_async(a, s.0)?;
            s.sync()?;
            let cur_b = current_pool(b)?;
            ensure!(
                owner == cur_b,
                "allocation on device B's stream came from {owner:p}, not B's current pool {cur_b:p}"
            );
            Ok(())
        })
        .serial(),
    ]
}
