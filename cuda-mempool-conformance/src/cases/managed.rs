//! Managed pools (CUDA 13, CU_MEM_ALLOCATION_TYPE_MANAGED): creation, refusals, allocation used from host and device, free, attributes, trim.
//!
//! The CUDA 13 documentation of cuMemPoolCreate: a managed pool takes no handle type (no IPC), its
//! location is the preferred location of its allocations, and its `maxSize` must be 0; a system
//! whose devices lack concurrent managed access answers NOT_SUPPORTED. Where the driver refuses
//! the type itself every trial here is ignored with the driver's own answer as its reason.

use super::printed::newer_attr;
use crate::cases::prelude::*;

use crate::driver::cu::CUmemAllocationType_enum as AT;
use crate::driver::cu::CUmemPool_attribute_enum as A;

const MIB: usize = 1 << 20;

/// Properties of a managed pool whose preferred location is device `dev`.
fn managed_props(dev: CUdevice) -> CUmemPoolProps {
    let mut props = device_props(dev);
    props.allocType = AT::CU_MEM_ALLOCATION_TYPE_MANAGED;
    props
}

/// A managed pool on the case's device; the trial is ignored, with the driver's answer, where the
/// driver refuses the type (NOT_SUPPORTED: no concurrent managed access; INVALID_VALUE from a
/// driver older than CUDA 13.0, which does not know the type).
fn managed_pool(e: &Env) -> R<Pool> {
    let mut p = std::ptr::null_mut();
    let r = unsafe { cuMemPoolCreate(&mut p, &managed_props(e.dev)) };
    let refused_type = r == CUresult::CUDA_ERROR_NOT_SUPPORTED
        || (r == CUresult::CUDA_ERROR_INVALID_VALUE && e.m.driver_version < 13000);
    if refused_type {
        return ignore(format!(
            "driver CUDA {} answers {} to cuMemPoolCreate of a managed pool on device {}",
            e.m.driver_version,
            code_name(r),
            e.dev
        ));
    }
    ok("cuMemPoolCreate(managed)", r)?;
    Ok(Pool(p))
}

/// Whether `p` is managed memory, per cuPointerGetAttribute.
fn is_managed(p: CUdeviceptr) -> R<bool> {
    let mut v: u32 = 0;
    ok("cuPointerGetAttribute(IS_MANAGED)", unsafe {
        cuPointerGetAttribute(
            (&mut v as *mut u32).cast(),
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED,
            p,
        )
    })?;
    Ok(v != 0)
}

pub fn cases() -> Vec<Case> {
    vec![
        // A managed pool is made and destroyed, and is managed: ALLOCATION_TYPE reads 2 where the
        // driver answers it (printed.rs's rule: CUDA 13.5 lists it; R580, CUDA 13.0, refuses it
        // with INVALID_VALUE), else one allocation's IS_MANAGED says so. Kills
        // 823-managed-made-pinned.
        Case::gpu(823, "managed_pool_created_and_destroyed", |e| {
            let p = managed_pool(e)?;
            ensure!(
                !p.0.is_null(),
                "cuMemPoolCreate(managed) returned success and a null pool"
            );
            match newer_attr(e, p.0, A::CU_MEMPOOL_ATTR_ALLOCATION_TYPE)? {
                Some(t) => ensure!(
                    t == 2,
                    "ALLOCATION_TYPE of a managed pool reads {t}, expected 2 (MANAGED)"
                ),
                None => {
                    let s = Stream::new()?;
                    let a = alloc_from(p.0, 2 * MIB, s.0)?;
                    let managed = is_managed(a);
                    free_async(a, s.0)?;
                    s.sync()?;
                    ensure!(
                        managed?,
                        "memory of a managed pool is not managed (CU_POINTER_ATTRIBUTE_IS_MANAGED 0)"
                    );
                }
            }
            ok("cuMemPoolDestroy(managed)", unsafe { cuMemPoolDestroy(p.take()) })
        }),
        // The documentation: maxSize must be 0 for a managed pool. Either listed refusal passes;
        // success fails. Kills 823-managed-maxsize-accepted.
        Case::gpu(823, "managed_max_size_refused", |e| {
            drop(managed_pool(e)?);
            let mut props = managed_props(e.dev);
            props.maxSize = 64 * MIB;
            let mut p = std::ptr::null_mut();
            let r = unsafe { cuMemPoolCreate(&mut p, &props) };
            if r == SUCCESS {
                let _ = unsafe { cuMemPoolDestroy(p) };
            }
            ensure!(
                r == CUresult::CUDA_ERROR_INVALID_VALUE || r == CUresult::CUDA_ERROR_NOT_SUPPORTED,
                "cuMemPoolCreate(managed, maxSize 64 MiB): {}, expected INVALID_VALUE or NOT_SUPPORTED (maxSize \
                 must be 0 for a managed pool)",
                code_name(r)
            );
            Ok(())
        }),
        // Memory of a managed pool is managed: the device fills one half, the host writes the
        // other, and the host reads both back. Kills 823-managed-made-pinned (the pointer is not
        // managed; the host never touches it then).
        Case::gpu(821, "managed_pool_memory_used_from_host_and_device", |e| {
            let p = managed_pool(e)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, 2 * MIB, s.0)?;
            let managed = is_managed(a);
            let checked = (|| {
                ensure!(
                    managed?,
                    "memory of a managed pool is not managed (CU_POINTER_ATTRIBUTE_IS_MANAGED 0)"
                );
                ok("cuMemsetD8Async(managed)", unsafe {
                    cuMemsetD8Async(a, 0x5A, MIB, s.0)
                })?;
                s.sync()?;
                // SAFETY: `a` is managed memory of 2 MiB (checked above), idle after the sync.
                let bytes = unsafe { std::slice::from_raw_parts_mut(a as usize as *mut u8, 2 * MIB) };
                bytes[MIB..].fill(0x33);
                ensure!(
                    bytes[..MIB].iter().all(|&b| b == 0x5A),
                    "the host does not read the device's fill of managed pool memory"
                );
                ok("cuMemsetD8Async(managed, second half)", unsafe {
                    cuMemsetD8Async(a + MIB as u64, 0x77, 16, s.0)
                })?;
                s.sync()?;
                ensure!(
                    bytes[MIB..MIB + 16].iter().all(|&b| b == 0x77) && bytes[MIB + 16..].iter().all(|&b| b == 0x33),
                    "host writes and device fills of managed pool memory do not agree"
                );
                Ok(())
            })();
            free_async(a, s.0)?;
            s.sync()?;
            checked
        }),
        // The pool's attributes after one allocation: the 2 MiB counted as used, at least that
        // much reserved, and its properties read back (type MANAGED, no handle type, the device as
        // its location) where the driver answers CUDA 13's attributes (printed.rs's rule: R580,
        // CUDA 13.0, refuses them with INVALID_VALUE, recorded). Kills 823-managed-made-pinned
        // where ALLOCATION_TYPE is answered (it reads 1); where it is refused (R580) the two
        // trials above kill that mutant.
        Case::gpu(828, "managed_pool_attributes", |e| {
            let p = managed_pool(e)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, 2 * MIB, s.0)?;
            s.sync()?;
            let props = [
                ("ALLOCATION_TYPE", A::CU_MEMPOOL_ATTR_ALLOCATION_TYPE, 2),
                ("EXPORT_HANDLE_TYPES", A::CU_MEMPOOL_ATTR_EXPORT_HANDLE_TYPES, 0),
                ("LOCATION_TYPE", A::CU_MEMPOOL_ATTR_LOCATION_TYPE, 1),
                ("LOCATION_ID", A::CU_MEMPOOL_ATTR_LOCATION_ID, e.dev as u64),
            ];
            let read = (|| -> R<Vec<(&str, u64, u64)>> {
                let mut v = Vec::new();
                for (name, attr, want) in props {
                    if let Some(got) = newer_attr(e, p.0, attr)? {
                        v.push((name, got, want));
                    }
                }
                v.push((
                    "USED_MEM_CURRENT",
                    get_u64(p.0, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?,
                    2 * MIB as u64,
                ));
                Ok(v)
            })();
            let reserved = get_u64(p.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
            free_async(a, s.0)?;
            s.sync()?;
            for (name, got, want) in read? {
                ensure!(got == want, "{name} of a managed pool: {got}, expected {want}");
            }
            let reserved = reserved?;
            ensure!(
                reserved >= 2 * MIB as u64,
                "RESERVED_MEM_CURRENT of a managed pool with 2 MiB in use: {reserved}"
            );
            Ok(())
        })
        .alone(),
        // A managed pool trims like a device pool: a freed block kept by a maximal threshold is
        // released by cuMemPoolTrimTo(0). Kills 833-trims-nothing.
        Case::gpu(833, "managed_pool_trim_releases_unused", |e| {
            let p = managed_pool(e)?;
            set_u64(p.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, 32 * MIB, s.0)?;
            free_async(a, s.0)?;
            s.sync()?;
            let before = get_u64(p.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
            ok("cuMemPoolTrimTo(managed, 0)", unsafe { cuMemPoolTrimTo(p.0, 0) })?;
            let after = get_u64(p.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
            ensure!(
                before >= 32 * MIB as u64 && after == 0,
                "managed pool: reserved {before} before and {after} after trimming to 0"
            );
            Ok(())
        })
        .alone(),
    ]
}
