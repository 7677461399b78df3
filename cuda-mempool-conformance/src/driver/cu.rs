//! The driver API as the suite sees it. Every module of the suite takes its CUDA types and functions
//! from here, never from `cuda_mempool_sys` directly, so that one place decides how the suite reaches
//! the driver.
//!
//! **Through the entry-point table.** The suite links no driver symbol (cuda-mempool-sys with
//! `dynamic-loading`): it fills one `EntryPoints` table at start-up, the way chosen by
//! `CONFORMANCE_ENTRY`, and every call goes through it (the sys crate's `global` functions). So
//! the suite starts on any library, whatever it lacks (a missing entry answers
//! CUDA_ERROR_NOT_FOUND), and it reaches the driver by the path an interposer must hook:
//! - `proc-address` (default): `dlopen("libcuda.so.1")`, then `cuGetProcAddress_v2` for every
//!   entry, as the CUDA runtime (and so most applications) does;
//! - `dlsym`: `dlsym` of each symbol on that library handle;
//! - `link`: the library opened `RTLD_GLOBAL` and each symbol looked up in the default namespace:
//!   what the dynamic linker binds for a program linked against libcuda (LD_PRELOAD first).
//!
//! `CUDA_MEMPOOL_SYS_LIBCUDA=path` (the sys crate's) opens another library in every mode.
//!
//! **Tracked calls.** The 14 APIs (and `cuMemAlloc`/`cuMemFree`) are shadowed by versions with the
//! same names and arguments: each leaves a breadcrumb while it runs (`crumb.rs`: which API a dead or
//! hung process was inside) and records what it created or released on success (`ledger.rs`: what
//! the suite still holds at the end of a run).
#![allow(non_snake_case, clippy::missing_safety_doc)]

pub use cuda_mempool_sys::cuda13::global::*;
pub use cuda_mempool_sys::cuda13::*;
pub use cuda_mempool_sys::{Library, LoadError};

/// The table's functions themselves, without the tracking (for benchmarks of the binding).
pub mod untracked {
    pub use cuda_mempool_sys::cuda13::global::*;
}
use untracked as raw;

pub use crate::driver::entry::Entry;

/// How this process reached the driver.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub entry: Entry,
    /// The library asked for (`libcuda.so.1`, or the override).
    pub library: String,
    /// Why the library could not be opened (or had no cuGetProcAddress), if so.
    pub error: Option<String>,
    /// Symbols the table lacks.
    pub missing: Vec<&'static str>,
    /// Each entry the table has: its symbol and the address it resolved to.
    pub addresses: Vec<(&'static str, usize)>,
}

impl Loaded {
    /// "proc-address (cuGetProcAddress_v2 of libcuda.so.1)", say.
    pub fn describe(&self) -> String {
        let how = match self.entry {
            Entry::ProcAddress => format!("cuGetProcAddress of {}", self.library),
            Entry::Dlsym => format!("dlsym on the handle of {}", self.library),
            Entry::Link => format!("the default namespace, {} opened RTLD_GLOBAL", self.library),
        };
        format!("{} ({how})", self.entry.name())
    }
    /// The table has `symbol`.
    pub fn has(&self, symbol: &str) -> bool {
        self.error.is_none() && !self.missing.contains(&symbol)
    }
}

static LOADED: std::sync::OnceLock<Loaded> = std::sync::OnceLock::new();

/// Fill and install the table the way `entry` says (CONFORMANCE_ENTRY, as the process's entry
/// point read it: `harness::settings`), once per process, before the first call; later calls hand
/// back the table filled then. A second call asking for another way is a bug and panics: a
/// process reaches the driver one way.
pub fn load(entry: Entry) -> &'static Loaded {
    let loaded = LOADED.get_or_init(|| {
        let library = library_name();
        let (table, error) = match fill(entry, &library) {
            Ok(t) => (t, None),
            Err(e) => (EntryPoints::EMPTY, Some(e)),
        };
        let missing = if error.is_none() {
            table.missing_symbols().collect()
        } else {
            Vec::new()
        };
        let addresses = EntryPoints::ENTRIES
            .iter()
            .zip(table.addresses())
            .filter(|(_, a)| !a.is_null())
            .map(|(e, a)| (e.symbol, a as usize))
            .collect();
        // SAFETY: every entry is the opened library's own function of that name (filled by
        // cuGetProcAddress, dlsym or the default namespace, never edited): the contract callers rely on.
        unsafe { install(Box::leak(Box::new(table))) };
        Loaded {
            entry,
            library,
            error,
            missing,
            addresses,
        }
    });
    assert_eq!(
        loaded.entry,
        entry,
        "driver::cu::load: the table was filled by {} and is asked for again by {}; a process reads \
         CONFORMANCE_ENTRY once, at its entry point",
        loaded.entry.name(),
        entry.name()
    );
    loaded
}

/// The table this process's entry point filled ([`load`]). Panics where none did: a bug (a reader
/// that runs before its process's entry point), never a default way of filling it.
pub fn loaded() -> &'static Loaded {
    LOADED.get().expect(
        "driver::cu::loaded: read before this process's entry point filled the entry-point table \
         (a bug: every entry point calls driver::cu::load with its settings' entry before reading it)",
    )
}

/// The library asked for: `libcuda.so.1`, or CUDA_MEMPOOL_SYS_LIBCUDA's.
fn library_name() -> String {
    std::env::var(Library::ENV)
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| Library::DEFAULT.to_string())
}

/// A table filled the way `entry` fills it (not installed).
fn fill(entry: Entry, library: &str) -> Result<EntryPoints, String> {
    match entry {
        Entry::ProcAddress => Library::open_default()
            .and_then(|l| EntryPoints::from_proc_address(&l))
            .map_err(|e| e.to_string()),
        Entry::Dlsym => Library::open_default()
            .map(|l| EntryPoints::from_dlsym(&l))
            .map_err(|e| e.to_string()),
        Entry::Link => crate::os::dlopen_global(library).map(|_| EntryPoints::from_default_namespace()),
    }
}

/// Where each of the 14 APIs resolves when the table is filled the way `entry` fills it (the API's
/// symbol and its address, 0 where the path hands out nothing); nothing is called but the look-ups
/// themselves. Filling by `link` opens the library RTLD_GLOBAL in this process.
pub fn resolve_apis(entry: Entry) -> Result<Vec<(&'static str, usize)>, String> {
    let table = fill(entry, &library_name())?;
    let addresses = table.addresses();
    Ok(crate::driver::APIS
        .iter()
        .map(|(_, api)| {
            let at = EntryPoints::ENTRIES.iter().position(|e| e.symbol == *api);
            (*api, at.map_or(0, |i| addresses[i] as usize))
        })
        .collect())
}

/// The address of `symbol` found the way this run's mode finds the driver's own symbols: `dlsym`
/// on the library's handle (`proc-address`, `dlsym`), the default namespace (`link`).
pub fn library_symbol(symbol: &str) -> Option<usize> {
    let loaded = loaded();
    let name = std::ffi::CString::new(symbol).ok()?;
    let p = match loaded.entry {
        Entry::Link => crate::os::symbol_in_process(symbol)? as usize,
        _ => Library::open_default().ok()?.symbol(&name) as usize,
    };
    (p != 0).then_some(p)
}

/// The CUDA version the 14 APIs appeared in (11.2): a look-up at an earlier one finds none of them.
pub const APIS_SINCE: i32 = 11020;

/// Which form of cuGetProcAddress a look-up uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `cuGetProcAddress_v2` (CUDA 12.0 on): with the symbol's status as an out-parameter.
    V2,
    /// `cuGetProcAddress` (CUDA 11.3's form): no status.
    V1,
}

impl Form {
    pub fn symbol(self) -> &'static str {
        match self {
            Form::V2 => "cuGetProcAddress_v2",
            Form::V1 => "cuGetProcAddress",
        }
    }
}

/// What a look-up answered: its code, the symbol's status (V2 only), the function it wrote (0 for
/// none; the out-pointer starts at 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lookup {
    pub code: CUresult,
    pub status: Option<u32>,
    pub function: usize,
}

type LookupV2 =
    unsafe extern "C" fn(*const std::ffi::c_char, *mut *mut std::ffi::c_void, i32, u64, *mut u32) -> CUresult;
type LookupV1 = unsafe extern "C" fn(*const std::ffi::c_char, *mut *mut std::ffi::c_void, i32, u64) -> CUresult;

/// A driver function the table does not carry, asked of the table's cuGetProcAddress at the CUDA
/// 12.0 ABI, as the CUDA runtime asks (so that an interposer's hook of it is what runs): the answer
/// and the function handed out (null where none).
pub fn beyond_table(symbol: &std::ffi::CStr) -> (CUresult, *mut std::ffi::c_void) {
    let mut f: *mut std::ffi::c_void = std::ptr::null_mut();
    let mut found = CUdriverProcAddressQueryResult::CU_GET_PROC_ADDRESS_SUCCESS;
    let flags = CUdriverProcAddress_flags::CU_GET_PROC_ADDRESS_DEFAULT.0 as u64;
    let r = crate::driver::lookups::watch(|| match applications_lookup() {
        // SAFETY: the library's own cuGetProcAddress_v2 (CUDA 12.0's prototype), a NUL-terminated
        // name and valid out-pointers.
        Some(lookup) => unsafe {
            lookup(
                symbol.as_ptr(),
                &mut f,
                12000,
                flags,
                (&mut found as *mut CUdriverProcAddressQueryResult).cast(),
            )
        },
        // SAFETY: a NUL-terminated name and valid out-pointers.
        None => unsafe { cuGetProcAddress_v2(symbol.as_ptr(), &mut f, 12000, flags, &mut found) },
    });
    (r, f)
}

/// The cuGetProcAddress_v2 applications call, found as they find it ([`library_symbol`]: dlsym on
/// the library, the process's namespace under `link`); None where the library has none (the
/// table's is used). Not the table's entry: under `proc-address` that is the library's answer to a
/// look-up of its own name, and a layer that hooks the look-up but answers that name with the
/// driver's function would be bypassed for every function beyond the table (issue 48: the shim's
/// hook of cuGraphAddMemAllocNode was never reached).
fn applications_lookup() -> Option<LookupV2> {
    static LOOKUP: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let at = (*LOOKUP.get_or_init(|| library_symbol(Form::V2.symbol())))?;
    // SAFETY: a non-null address of the library's symbol cuGetProcAddress_v2, whose prototype
    // `LookupV2` is.
    Some(unsafe { std::mem::transmute::<usize, LookupV2>(at) })
}

/// cuGraphCreate and cuGraphAddMemAllocNode (CUDA 10.0 and 11.4 ABIs, unchanged since), which
/// the table does not carry: their prototypes, for [`beyond_table`]'s answers.
pub type GraphCreate = unsafe extern "C" fn(*mut CUgraph, std::ffi::c_uint) -> CUresult;
pub type GraphAddMemAllocNode = unsafe extern "C" fn(
    *mut CUgraphNode,
    CUgraph,
    *const CUgraphNode,
    usize,
    *mut CUDA_MEM_ALLOC_NODE_PARAMS,
) -> CUresult;

/// Ask the library's cuGetProcAddress (`form`, found by `library_symbol`) for `name` at CUDA
/// `version` with `flags`; Err when the library has no such look-up function.
pub fn look_up(form: Form, name: &str, version: i32, flags: u64) -> Result<Lookup, String> {
    let f = library_symbol(form.symbol()).ok_or_else(|| {
        format!(
            "{} of {} has no {}",
            loaded().entry.name(),
            loaded().library,
            form.symbol()
        )
    })?;
    let cname = std::ffi::CString::new(name).map_err(|e| e.to_string())?;
    let mut p: *mut std::ffi::c_void = std::ptr::null_mut();
    // SAFETY: the driver's look-up functions have these signatures (cudaTypedefs.h
    // PFN_cuGetProcAddress_v12000 and _v11030); the name and out-pointers are valid.
    crate::driver::lookups::watch(|| unsafe {
        match form {
            Form::V2 => {
                let f: LookupV2 = std::mem::transmute::<usize, LookupV2>(f);
                let mut status = u32::MAX;
                let code = f(cname.as_ptr(), &mut p, version, flags, &mut status);
                Ok(Lookup {
                    code,
                    status: Some(status),
                    function: p as usize,
                })
            }
            Form::V1 => {
                let f: LookupV1 = std::mem::transmute::<usize, LookupV1>(f);
                let code = f(cname.as_ptr(), &mut p, version, flags);
                Ok(Lookup {
                    code,
                    status: None,
                    function: p as usize,
                })
            }
        }
    })
}

use crate::driver::crumb::enter;
use crate::driver::ledger;

/// A tracked call: the breadcrumb says which API the process is inside while it runs, and records
/// its answer once it returns (`crumb.rs`).
fn tracked(api: u32, symbol: &str, call: impl FnOnce() -> CUresult) -> CUresult {
    let inside = enter(api, symbol);
    let r = call();
    inside.returned(r.0 as i32);
    r
}

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
    let r = tracked(820, "cuMemAllocAsync", || unsafe {
        raw::cuMemAllocAsync(dptr, bytesize, hStream)
    });
    unsafe { allocated(r, dptr, bytesize, "cuMemAllocAsync") }
}

pub unsafe fn cuMemAllocAsync_ptsz(dptr: *mut CUdeviceptr, bytesize: usize, hStream: CUstream) -> CUresult {
    let r = tracked(820, "cuMemAllocAsync_ptsz", || unsafe {
        raw::cuMemAllocAsync_ptsz(dptr, bytesize, hStream)
    });
    unsafe { allocated(r, dptr, bytesize, "cuMemAllocAsync_ptsz") }
}

pub unsafe fn cuMemAllocFromPoolAsync(
    dptr: *mut CUdeviceptr,
    bytesize: usize,
    pool: CUmemoryPool,
    hStream: CUstream,
) -> CUresult {
    let r = tracked(821, "cuMemAllocFromPoolAsync", || unsafe {
        raw::cuMemAllocFromPoolAsync(dptr, bytesize, pool, hStream)
    });
    unsafe { allocated(r, dptr, bytesize, "cuMemAllocFromPoolAsync") }
}

pub unsafe fn cuMemAllocFromPoolAsync_ptsz(
    dptr: *mut CUdeviceptr,
    bytesize: usize,
    pool: CUmemoryPool,
    hStream: CUstream,
) -> CUresult {
    let r = tracked(821, "cuMemAllocFromPoolAsync_ptsz", || unsafe {
        raw::cuMemAllocFromPoolAsync_ptsz(dptr, bytesize, pool, hStream)
    });
    unsafe { allocated(r, dptr, bytesize, "cuMemAllocFromPoolAsync_ptsz") }
}

pub unsafe fn cuMemFreeAsync(dptr: CUdeviceptr, hStream: CUstream) -> CUresult {
    freed(
        tracked(822, "cuMemFreeAsync", || unsafe { raw::cuMemFreeAsync(dptr, hStream) }),
        dptr,
    )
}

pub unsafe fn cuMemFreeAsync_ptsz(dptr: CUdeviceptr, hStream: CUstream) -> CUresult {
    freed(
        tracked(822, "cuMemFreeAsync_ptsz", || unsafe {
            raw::cuMemFreeAsync_ptsz(dptr, hStream)
        }),
        dptr,
    )
}

pub unsafe fn cuMemPoolCreate(pool: *mut CUmemoryPool, poolProps: *const CUmemPoolProps) -> CUresult {
    let r = tracked(823, "cuMemPoolCreate", || unsafe {
        raw::cuMemPoolCreate(pool, poolProps)
    });
    if r == OK && !pool.is_null() {
        ledger::pool_added(unsafe { *pool } as usize, "cuMemPoolCreate");
    }
    r
}

pub unsafe fn cuMemPoolDestroy(pool: CUmemoryPool) -> CUresult {
    let r = tracked(824, "cuMemPoolDestroy", || unsafe { raw::cuMemPoolDestroy(pool) });
    if r == OK {
        ledger::pool_removed(pool as usize);
    }
    r
}

pub unsafe fn cuMemPoolExportPointer(shareData_out: *mut CUmemPoolPtrExportData, ptr: CUdeviceptr) -> CUresult {
    tracked(825, "cuMemPoolExportPointer", || unsafe {
        raw::cuMemPoolExportPointer(shareData_out, ptr)
    })
}

pub unsafe fn cuMemPoolExportToShareableHandle(
    handle_out: *mut ::core::ffi::c_void,
    pool: CUmemoryPool,
    handleType: CUmemAllocationHandleType,
    flags: ::core::ffi::c_ulonglong,
) -> CUresult {
    tracked(826, "cuMemPoolExportToShareableHandle", || unsafe {
        raw::cuMemPoolExportToShareableHandle(handle_out, pool, handleType, flags)
    })
}

pub unsafe fn cuMemPoolGetAccess(
    flags: *mut CUmemAccess_flags,
    memPool: CUmemoryPool,
    location: *mut CUmemLocation,
) -> CUresult {
    tracked(827, "cuMemPoolGetAccess", || unsafe {
        raw::cuMemPoolGetAccess(flags, memPool, location)
    })
}

pub unsafe fn cuMemPoolGetAttribute(
    pool: CUmemoryPool,
    attr: CUmemPool_attribute,
    value: *mut ::core::ffi::c_void,
) -> CUresult {
    tracked(828, "cuMemPoolGetAttribute", || unsafe {
        raw::cuMemPoolGetAttribute(pool, attr, value)
    })
}

pub unsafe fn cuMemPoolImportFromShareableHandle(
    pool_out: *mut CUmemoryPool,
    handle: *mut ::core::ffi::c_void,
    handleType: CUmemAllocationHandleType,
    flags: ::core::ffi::c_ulonglong,
) -> CUresult {
    let r = tracked(829, "cuMemPoolImportFromShareableHandle", || unsafe {
        raw::cuMemPoolImportFromShareableHandle(pool_out, handle, handleType, flags)
    });
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
    let r = tracked(830, "cuMemPoolImportPointer", || unsafe {
        raw::cuMemPoolImportPointer(ptr_out, pool, shareData)
    });
    unsafe { allocated(r, ptr_out, 0, "cuMemPoolImportPointer") }
}

pub unsafe fn cuMemPoolSetAccess(pool: CUmemoryPool, map: *const CUmemAccessDesc, count: usize) -> CUresult {
    tracked(831, "cuMemPoolSetAccess", || unsafe {
        raw::cuMemPoolSetAccess(pool, map, count)
    })
}

pub unsafe fn cuMemPoolSetAttribute(
    pool: CUmemoryPool,
    attr: CUmemPool_attribute,
    value: *mut ::core::ffi::c_void,
) -> CUresult {
    tracked(832, "cuMemPoolSetAttribute", || unsafe {
        raw::cuMemPoolSetAttribute(pool, attr, value)
    })
}

pub unsafe fn cuMemPoolTrimTo(pool: CUmemoryPool, minBytesToKeep: usize) -> CUresult {
    tracked(833, "cuMemPoolTrimTo", || unsafe {
        raw::cuMemPoolTrimTo(pool, minBytesToKeep)
    })
}

pub unsafe fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytesize: usize) -> CUresult {
    let r = unsafe { raw::cuMemAlloc_v2(dptr, bytesize) };
    unsafe { allocated(r, dptr, bytesize, "cuMemAlloc") }
}

pub unsafe fn cuMemFree_v2(dptr: CUdeviceptr) -> CUresult {
    freed(unsafe { raw::cuMemFree_v2(dptr) }, dptr)
}
