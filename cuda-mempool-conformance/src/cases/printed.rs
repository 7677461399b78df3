//! Answers the report prints, checked: the supported handle types against real exports, reuse flags beyond 0 and 1, a trim below one chunk, an export of a pending allocation.

use crate::cases::prelude::*;

use crate::driver::cu::CUdevice_attribute_enum as DA;
use crate::driver::cu::CUmemAllocationHandleType_enum as HT;
use crate::driver::cu::CUmemPool_attribute_enum as A;

const MIB: usize = 1 << 20;
/// The reservation granule of R580's pools (`attr::reserved_mem_grows_in_32mib_chunks_driver_behaviour`).
const CHUNK: u64 = 32 << 20;

/// CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES of `dev`, as the report header shows it.
fn supported_handle_types(dev: CUdevice) -> R<u32> {
    let mut v = 0i32;
    ok("cuDeviceGetAttribute(MEMPOOL_SUPPORTED_HANDLE_TYPES)", unsafe {
        cuDeviceGetAttribute(&mut v, DA::CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, dev)
    })?;
    Ok(v as u32)
}

/// The code of creating a pool on `dev` with handle type `ht` (a pool made is destroyed).
fn create_with(dev: CUdevice, ht: HT) -> CUresult {
    let mut props = device_props(dev);
    props.handleTypes = ht;
    let mut p = std::ptr::null_mut();
    let r = unsafe { cuMemPoolCreate(&mut p, &props) };
    if r == SUCCESS && !p.is_null() {
        let _ = unsafe { cuMemPoolDestroy(p) };
    }
    r
}

/// A pool on `dev` that keeps what is freed (threshold max); `live` bytes stay allocated, `freed`
/// blocks are allocated and freed. Returns the pool, the live pointer (0 for none) and the stream.
fn pool_holding(dev: CUdevice, live: usize, freed: &[usize]) -> R<(Pool, CUdeviceptr, Stream)> {
    let p = Pool::on_device(dev)?;
    set_u64(p.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
    let s = Stream::new()?;
    let a = if live > 0 { alloc_from(p.0, live, s.0)? } else { 0 };
    let ptrs: Vec<_> = freed.iter().map(|&n| alloc_from(p.0, n, s.0)).collect::<R<_>>()?;
    for q in ptrs {
        free_async(q, s.0)?;
    }
    s.sync()?;
    Ok((p, a, s))
}

pub fn cases() -> Vec<Case> {
    vec![
        // The header's supported-handle-types value is what the device does: every claimed type
        // of Linux (POSIX fd, fabric) makes a pool, a claimed POSIX fd exports; an unclaimed one
        // is refused; no Windows type is claimed on Linux. Kills 823-handle-types-overclaimed.
        Case::gpu(823, "supported_handle_types_match_pools", |e| {
            let claimed = supported_handle_types(e.dev)?;
            let windows = (HT::CU_MEM_HANDLE_TYPE_WIN32.0 | HT::CU_MEM_HANDLE_TYPE_WIN32_KMT.0) & claimed;
            ensure!(
                windows == 0 && claimed & !0xf == 0,
                "MEMPOOL_SUPPORTED_HANDLE_TYPES {claimed:#x} claims types Linux has not (Windows {windows:#x}, \
                 unknown {:#x})",
                claimed & !0xf
            );
            for ht in [
                HT::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                HT::CU_MEM_HANDLE_TYPE_FABRIC,
            ] {
                let r = create_with(e.dev, ht);
                if claimed & ht.0 != 0 {
                    ensure!(
                        r == SUCCESS,
                        "handle type {:#x} claimed ({claimed:#x}) but cuMemPoolCreate answers {}",
                        ht.0,
                        code_name(r)
                    );
                } else {
                    ensure!(
                        r == CUresult::CUDA_ERROR_INVALID_VALUE || r == CUresult::CUDA_ERROR_NOT_SUPPORTED,
                        "handle type {:#x} not claimed ({claimed:#x}) but cuMemPoolCreate answers {}",
                        ht.0,
                        code_name(r)
                    );
                }
            }
            if claimed & HT::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR.0 != 0 {
                drop(export_pool_fd(Pool::ipc(e.dev)?.0)?);
            }
            Ok(())
        }),
        // The reuse flags are ints read as booleans: any non-zero value turns a flag on. A value
        // set reads back non-zero (R580: to calibrate whether as set or as 1), 0 reads back 0.
        // Kills 832-reuse-flag-not-boolean.
        Case::gpu(832, "reuse_flags_any_nonzero_is_on", |e| {
            let p = Pool::on_device(e.dev)?;
            for a in [
                A::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
                A::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
                A::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
            ] {
                for val in [2, -1, 0x100] {
                    set_i32(p.0, a, 0)?;
                    set_i32(p.0, a, val)?;
                    let got = get_i32(p.0, a)?;
                    ensure!(
                        got == val || got == 1,
                        "attribute {} set to {val} reads {got}, expected {val} or 1 (on)",
                        a.0
                    );
                    note(format!("attribute {} set to {val} reads {got}", a.0));
                }
            }
            Ok(())
        }),
        // A trim below one chunk, what exactly stays: 1 MiB in use and 32 MiB freed (two chunks,
        // 64 MiB reserved), trimmed to 1 MiB: the chunk in use stays, the free one goes: 32 MiB.
        // Kills 833-trim-keeps-too-much (and 833-trims-nothing).
        Case::gpu(833, "trim_below_a_chunk_keeps_the_chunk_in_use", |e| {
            let (p, a, s) = pool_holding(e.dev, MIB, &[32 * MIB])?;
            let before = get_u64(p.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
            let trimmed = ok("cuMemPoolTrimTo(1 MiB)", unsafe { cuMemPoolTrimTo(p.0, MIB) });
            let after = get_u64(p.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
            free_async(a, s.0)?;
            s.sync()?;
            trimmed?;
            let (before, after) = (before?, after?);
            note(format!(
                "1 MiB in use, 32 MiB freed: reserved {before} before, {after} after trimming to 1 MiB"
            ));
            ensure!(
                before == 2 * CHUNK && after == CHUNK,
                "reserved {before} before and {after} after trimming to 1 MiB; expected {} and {CHUNK} (one chunk \
                 holds the 1 MiB in use, the other is free)",
                2 * CHUNK
            );
            Ok(())
        }),
        // Nothing in use, two freed chunks, trimmed to 1 MiB: R580 keeps whole chunks, so exactly
        // one chunk stays (at least 1 MiB kept, as little as the granule allows). Kills
        // 833-trim-keeps-too-much and 833-ignores-min-bytes.
        Case::gpu(833, "trim_below_a_chunk_keeps_one_chunk", |e| {
            let (p, _, _s) = pool_holding(e.dev, 0, &[32 * MIB, 32 * MIB])?;
            let before = get_u64(p.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
            ok("cuMemPoolTrimTo(1 MiB)", unsafe { cuMemPoolTrimTo(p.0, MIB) })?;
            let after = get_u64(p.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
            note(format!(
                "nothing in use, 64 MiB freed: reserved {before} before, {after} after trimming to 1 MiB"
            ));
            ensure!(
                before == 2 * CHUNK && after == CHUNK,
                "reserved {before} before and {after} after trimming to 1 MiB; expected {} and {CHUNK}",
                2 * CHUNK
            );
            Ok(())
        }),
        // An export of an allocation still pending on a held stream: the documentation puts the
        // wait on the importer ("must not be accessed before the allocation operation completes
        // in the exporting process"), so the export itself succeeds at once, without waiting for
        // the stream. Kills 825-export-waits-for-allocation (the gate's safety limit opens it).
        Case::gpu(825, "export_pointer_of_a_pending_allocation", |e| {
            let p = Pool::ipc(e.dev)?;
            drop(export_pool_fd(p.0)?);
            let s = Stream::new()?;
            let gate = Gate::close(s.0)?;
            let a = alloc_from(p.0, MIB, s.0)?;
            let mut data = CUmemPoolPtrExportData::default();
            let r = unsafe { cuMemPoolExportPointer(&mut data, a) };
            let forced = gate.release();
            free_async(a, s.0)?;
            s.sync()?;
            ensure!(
                forced.is_none(),
                "cuMemPoolExportPointer waited for the held stream until the gate's safety limit opened it"
            );
            expect("cuMemPoolExportPointer(pending allocation)", r, SUCCESS)
        })
        .needs(Cap::Ipc),
    ]
}
