//! The driver API as the suite sees it. Every module of the suite takes its CUDA types and functions
//! from here, never from `cuda_mempool_sys` directly, so that one place decides how the suite reaches
//! the driver.
//!
//! The 14 APIs (and `cuMemAlloc`/`cuMemFree`) are shadowed by tracked versions with the same names
//! and arguments: each leaves a breadcrumb while it runs (`crumb.rs`: which API a dead or hung
//! process was inside) and records what it created or released on success (`ledger.rs`: what the
//! suite still holds at the end of a run). Everything else is the generated binding itself.
#![allow(non_snake_case, clippy::missing_safety_doc)]

pub use cuda_mempool_sys::cuda13::*;

/// The bindings themselves, unshadowed.
mod raw {
    pub use cuda_mempool_sys::cuda13::*;
}

use crate::crumb::enter;
use crate::ledger;

const OK: CUresult = CUresult::CUDA_SUCCESS;

/// An allocation that succeeded and wrote its address: record it.
unsafe fn allocated(r: CUresult, dptr: *mut CUdeviceptr, bytes: usize, source: &str) -> CUresult {
    if r == OK && !dptr.is_null() {
        ledger::allocation_added(unsafe { *dptr }, bytes, source);
    }
    r
}

fn freed(r: CUresult, dptr: CUdeviceptr) -> CUresult {
    if r == OK {
        ledger::allocation_removed(dptr);
    }
    r
}

pub unsafe fn cuMemAllocAsync(dptr: *mut CUdeviceptr, bytesize: usize, hStream: CUstream) -> CUresult {
    let _in = enter(820, "cuMemAllocAsync");
    let r = unsafe { raw::cuMemAllocAsync(dptr, bytesize, hStream) };
    unsafe { allocated(r, dptr, bytesize, "cuMemAllocAsync") }
}

pub unsafe fn cuMemAllocAsync_ptsz(dptr: *mut CUdeviceptr, bytesize: usize, hStream: CUstream) -> CUresult {
    let _in = enter(820, "cuMemAllocAsync_ptsz");
    let r = unsafe { raw::cuMemAllocAsync_ptsz(dptr, bytesize, hStream) };
    unsafe { allocated(r, dptr, bytesize, "cuMemAllocAsync_ptsz") }
}

pub unsafe fn cuMemAllocFromPoolAsync(
    dptr: *mut CUdeviceptr,
    bytesize: usize,
    pool: CUmemoryPool,
    hStream: CUstream,
) -> CUresult {
    let _in = enter(821, "cuMemAllocFromPoolAsync");
    let r = unsafe { raw::cuMemAllocFromPoolAsync(dptr, bytesize, pool, hStream) };
    unsafe { allocated(r, dptr, bytesize, "cuMemAllocFromPoolAsync") }
}

pub unsafe fn cuMemAllocFromPoolAsync_ptsz(
    dptr: *mut CUdeviceptr,
    bytesize: usize,
    pool: CUmemoryPool,
    hStream: CUstream,
) -> CUresult {
    let _in = enter(821, "cuMemAllocFromPoolAsync_ptsz");
    let r = unsafe { raw::cuMemAllocFromPoolAsync_ptsz(dptr, bytesize, pool, hStream) };
    unsafe { allocated(r, dptr, bytesize, "cuMemAllocFromPoolAsync_ptsz") }
}

pub unsafe fn cuMemFreeAsync(dptr: CUdeviceptr, hStream: CUstream) -> CUresult {
    let _in = enter(822, "cuMemFreeAsync");
    freed(unsafe { raw::cuMemFreeAsync(dptr, hStream) }, dptr)
}

pub unsafe fn cuMemFreeAsync_ptsz(dptr: CUdeviceptr, hStream: CUstream) -> CUresult {
    let _in = enter(822, "cuMemFreeAsync_ptsz");
    freed(unsafe { raw::cuMemFreeAsync_ptsz(dptr, hStream) }, dptr)
}

pub unsafe fn cuMemPoolCreate(pool: *mut CUmemoryPool, poolProps: *const CUmemPoolProps) -> CUresult {
    let _in = enter(823, "cuMemPoolCreate");
    let r = unsafe { raw::cuMemPoolCreate(pool, poolProps) };
    if r == OK && !pool.is_null() {
        ledger::pool_added(unsafe { *pool } as usize, "cuMemPoolCreate");
    }
    r
}

pub unsafe fn cuMemPoolDestroy(pool: CUmemoryPool) -> CUresult {
    let _in = enter(824, "cuMemPoolDestroy");
    let r = unsafe { raw::cuMemPoolDestroy(pool) };
    if r == OK {
        ledger::pool_removed(pool as usize);
    }
    r
}

pub unsafe fn cuMemPoolExportPointer(shareData_out: *mut CUmemPoolPtrExportData, ptr: CUdeviceptr) -> CUresult {
    let _in = enter(825, "cuMemPoolExportPointer");
    unsafe { raw::cuMemPoolExportPointer(shareData_out, ptr) }
}

pub unsafe fn cuMemPoolExportToShareableHandle(
    handle_out: *mut ::core::ffi::c_void,
    pool: CUmemoryPool,
    handleType: CUmemAllocationHandleType,
    flags: ::core::ffi::c_ulonglong,
) -> CUresult {
    let _in = enter(826, "cuMemPoolExportToShareableHandle");
    unsafe { raw::cuMemPoolExportToShareableHandle(handle_out, pool, handleType, flags) }
}

pub unsafe fn cuMemPoolGetAccess(
    flags: *mut CUmemAccess_flags,
    memPool: CUmemoryPool,
    location: *mut CUmemLocation,
) -> CUresult {
    let _in = enter(827, "cuMemPoolGetAccess");
    unsafe { raw::cuMemPoolGetAccess(flags, memPool, location) }
}

pub unsafe fn cuMemPoolGetAttribute(
    pool: CUmemoryPool,
    attr: CUmemPool_attribute,
    value: *mut ::core::ffi::c_void,
) -> CUresult {
    let _in = enter(828, "cuMemPoolGetAttribute");
    unsafe { raw::cuMemPoolGetAttribute(pool, attr, value) }
}

pub unsafe fn cuMemPoolImportFromShareableHandle(
    pool_out: *mut CUmemoryPool,
    handle: *mut ::core::ffi::c_void,
    handleType: CUmemAllocationHandleType,
    flags: ::core::ffi::c_ulonglong,
) -> CUresult {
    let _in = enter(829, "cuMemPoolImportFromShareableHandle");
    let r = unsafe { raw::cuMemPoolImportFromShareableHandle(pool_out, handle, handleType, flags) };
    if r == OK && !pool_out.is_null() {
        ledger::pool_added(unsafe { *pool_out } as usize, "cuMemPoolImportFromShareableHandle");
    }
    r
}

pub unsafe fn cuMemPoolImportPointer(
    ptr_out: *mut CUdeviceptr,
    pool: CUmemoryPool,
    shareData: *mut CUmemPoolPtrExportData,
) -> CUresult {
    let _in = enter(830, "cuMemPoolImportPointer");
    let r = unsafe { raw::cuMemPoolImportPointer(ptr_out, pool, shareData) };
    unsafe { allocated(r, ptr_out, 0, "cuMemPoolImportPointer") }
}

pub unsafe fn cuMemPoolSetAccess(pool: CUmemoryPool, map: *const CUmemAccessDesc, count: usize) -> CUresult {
    let _in = enter(831, "cuMemPoolSetAccess");
    unsafe { raw::cuMemPoolSetAccess(pool, map, count) }
}

pub unsafe fn cuMemPoolSetAttribute(
    pool: CUmemoryPool,
    attr: CUmemPool_attribute,
    value: *mut ::core::ffi::c_void,
) -> CUresult {
    let _in = enter(832, "cuMemPoolSetAttribute");
    unsafe { raw::cuMemPoolSetAttribute(pool, attr, value) }
}

pub unsafe fn cuMemPoolTrimTo(pool: CUmemoryPool, minBytesToKeep: usize) -> CUresult {
    let _in = enter(833, "cuMemPoolTrimTo");
    unsafe { raw::cuMemPoolTrimTo(pool, minBytesToKeep) }
}

pub unsafe fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytesize: usize) -> CUresult {
    let r = unsafe { raw::cuMemAlloc_v2(dptr, bytesize) };
    unsafe { allocated(r, dptr, bytesize, "cuMemAlloc") }
}

pub unsafe fn cuMemFree_v2(dptr: CUdeviceptr) -> CUresult {
    freed(unsafe { raw::cuMemFree_v2(dptr) }, dptr)
}
