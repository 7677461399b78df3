//! The entry-point tables and enum `name()` and `Debug`, against the installed driver library.
//!
//! Without a GPU a real libcuda still answers: `cuGetProcAddress` and `cuDriverGetVersion` work,
//! `cuInit` returns CUDA_ERROR_NO_DEVICE. Without libcuda.so.1 at all, the trials that need it say
//! so and pass, unless CUDA_MEMPOOL_SYS_REQUIRE_LIBCUDA=1 (CI), which makes that a failure.

#![allow(non_snake_case)]

/// The same checks for every enabled major.
macro_rules! per_major {
    ($feature:literal, $m:ident) => {
        #[cfg(feature = $feature)]
        mod $m {
            use cuda_mempool_sys::$m::*;
            use std::collections::BTreeSet;

            #[test]
            fn enum_debug_prints_names() {
                assert_eq!(
                    format!("{:?}", CUresult::CUDA_ERROR_NO_DEVICE),
                    "CUDA_ERROR_NO_DEVICE"
                );
                assert_eq!(format!("{:?}", CUresult::CUDA_SUCCESS), "CUDA_SUCCESS");
                assert_eq!(format!("{:?}", CUresult(123_456)), "CUresult(123456)");
                assert_eq!(
                    format!("{:?}", CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED),
                    "CU_MEM_ALLOCATION_TYPE_PINNED"
                );
            }

            #[test]
            fn enum_name_is_what_debug_prints() {
                const NO_DEVICE: Option<&str> = CUresult::CUDA_ERROR_NO_DEVICE.name();
                assert_eq!(NO_DEVICE, Some("CUDA_ERROR_NO_DEVICE"));
                assert_eq!(CUresult(123_456).name(), None);
                assert_eq!(
                    format!("{:?}", CUresult::CUDA_ERROR_NO_DEVICE),
                    "CUDA_ERROR_NO_DEVICE"
                );
                assert_eq!(format!("{:?}", CUresult(123_456)), "CUresult(123456)");
            }

            #[test]
            fn helpers_are_in_the_module() {
                let loc = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, 3);
                assert_eq!(loc.type_, CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE);
                assert_eq!(CU_STREAM_LEGACY as usize, 1);
                assert_eq!(CU_STREAM_PER_THREAD as usize, 2);
                assert_eq!(CU_DEVICE_CPU, -1);
            }

            #[test]
            fn entries_describe_the_fields() {
                let e = EntryPoints::ENTRIES;
                assert_eq!(e.len(), EntryPoints::LEN);
                assert_eq!(EntryPoints::EMPTY.addresses().len(), EntryPoints::LEN);
                let symbols: BTreeSet<&str> = e.iter().map(|e| e.symbol).collect();
                assert_eq!(symbols.len(), e.len(), "symbols are unique");
                let get = |s: &str| e.iter().find(|e| e.symbol == s).unwrap();
                let alloc = get("cuMemAllocAsync");
                assert_eq!(
                    (alloc.c_name, alloc.cuda_version, alloc.per_thread),
                    ("cuMemAllocAsync", 11020, false)
                );
                let ptsz = get("cuMemAllocAsync_ptsz");
                assert_eq!(
                    (ptsz.c_name, ptsz.cuda_version, ptsz.per_thread),
                    ("cuMemAllocAsync", 11020, true)
                );
                assert_eq!(
                    ptsz.flags,
                    CUdriverProcAddress_flags::CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.0 as u64
                );
                assert_eq!(
                    alloc.flags,
                    CUdriverProcAddress_flags::CU_GET_PROC_ADDRESS_LEGACY_STREAM.0 as u64
                );
                let ma = e.iter().find(|e| e.c_name == "cuMemAlloc").unwrap();
                assert_eq!((ma.symbol, ma.cuda_version), ("cuMemAlloc_v2", 3020));
                assert_eq!(ma.symbol_cstr().to_str().unwrap(), "cuMemAlloc_v2");
                assert_eq!(ma.c_name_cstr().to_str().unwrap(), "cuMemAlloc");
                // A plain (unversioned) symbol keeps its original ABI even where a newer one exists.
                assert_eq!(get("cuCtxGetDevice").cuda_version, 2000);
            }

            #[test]
            fn empty_table_answers_not_found() {
                let t = EntryPoints::default();
                assert_eq!(t.missing().count(), EntryPoints::LEN);
                assert!(t.missing_symbols().any(|s| s == "cuInit"));
                // SAFETY: a missing entry calls nothing.
                assert_eq!(unsafe { t.cuInit(0) }, CUresult::CUDA_ERROR_NOT_FOUND);
                let mut v = 0;
                assert_eq!(
                    unsafe { t.cuDriverGetVersion(&mut v) },
                    CUresult::CUDA_ERROR_NOT_FOUND
                );
            }

            /// Loaded through cuGetProcAddress: an entry is there exactly when the driver is at
            /// least as new as the entry's ABI version.
            #[cfg(any(unix, windows))]
            #[test]
            fn load_resolves_by_driver_version() {
                let Some(t) = crate::loaded(EntryPoints::load()) else {
                    return;
                };
                let mut version = 0;
                // SAFETY: valid out-pointer.
                assert_eq!(
                    unsafe { t.cuDriverGetVersion(&mut version) },
                    CUresult::CUDA_SUCCESS
                );
                let missing: Vec<&str> = t.missing_symbols().collect();
                println!(
                    "driver {version}: {} of {} entries missing: {missing:?}",
                    missing.len(),
                    EntryPoints::LEN
                );
                for (e, p) in EntryPoints::ENTRIES.iter().zip(t.addresses()) {
                    assert_eq!(
                        !p.is_null(),
                        e.cuda_version <= version,
                        "{} (ABI of {}) on a driver of {version}",
                        e.symbol,
                        e.cuda_version
                    );
                }
                // SAFETY: cuInit takes flags 0. No GPU: NO_DEVICE; never NOT_FOUND.
                let r = unsafe { t.cuInit(0) };
                println!("cuInit through the table: {r:?}");
                assert_ne!(r, CUresult::CUDA_ERROR_NOT_FOUND);
            }

            /// dlsym by symbol finds the same set of entry points as cuGetProcAddress.
            #[cfg(any(unix, windows))]
            #[test]
            fn dlsym_agrees_with_proc_address() {
                let Some(lib) = crate::loaded(cuda_mempool_sys::Library::open_default()) else {
                    return;
                };
                let by_proc = EntryPoints::from_proc_address(&lib).unwrap();
                let by_sym = EntryPoints::from_dlsym(&lib);
                let a: Vec<&str> = by_proc.missing_symbols().collect();
                let b: Vec<&str> = by_sym.missing_symbols().collect();
                assert_eq!(a, b, "missing through cuGetProcAddress vs dlsym");
            }

            /// `cuStreamGetCtx` (the 2-argument function of CUDA 9.2: cuda.h's `cuStreamGetCtx`, not
            /// the `cuStreamGetCtx_v2` of 12.5) and `cuStreamCreateWithPriority` are entries like
            /// the others, free functions of their C types, and resolved from the driver.
            #[test]
            fn stream_context_and_priority() {
                let get = |s: &str| EntryPoints::ENTRIES.iter().find(|e| e.symbol == s).unwrap();
                let ctx = get("cuStreamGetCtx");
                assert_eq!(
                    (ctx.c_name, ctx.cuda_version, ctx.per_thread),
                    ("cuStreamGetCtx", 9020, false)
                );
                let prio = get("cuStreamCreateWithPriority");
                assert_eq!(
                    (prio.c_name, prio.cuda_version, prio.per_thread),
                    ("cuStreamCreateWithPriority", 5050, false)
                );
                let _: unsafe extern "C" fn(CUstream, *mut CUcontext) -> CUresult = cuStreamGetCtx;
                let _: unsafe extern "C" fn(*mut CUstream, ::core::ffi::c_uint, ::core::ffi::c_int) -> CUresult =
                    cuStreamCreateWithPriority;

                // The field of that name calls the function filled in for that entry.
                unsafe extern "C" fn ctx_of(_: CUstream, pctx: *mut CUcontext) -> CUresult {
                    *pctx = 0x10 as CUcontext;
                    CUresult::CUDA_SUCCESS
                }
                // SAFETY: `ctx_of` has the signature of the entry it fills.
                let t = unsafe {
                    EntryPoints::from_fn(|e| {
                        if e.symbol == "cuStreamGetCtx" {
                            ctx_of as *mut ::core::ffi::c_void
                        } else {
                            std::ptr::null_mut()
                        }
                    })
                };
                let mut c: CUcontext = std::ptr::null_mut();
                // SAFETY: a valid out-pointer; the stand-in reads nothing else.
                assert_eq!(
                    unsafe { t.cuStreamGetCtx(CU_STREAM_LEGACY, &mut c) },
                    CUresult::CUDA_SUCCESS
                );
                assert_eq!(c as usize, 0x10);

                #[cfg(any(unix, windows))]
                if let Some(t) = crate::loaded(EntryPoints::load()) {
                    assert!(t.cuStreamGetCtx.is_some() && t.cuStreamCreateWithPriority.is_some());
                    let mut stream: CUstream = std::ptr::null_mut();
                    // SAFETY: a valid out-pointer. Before cuInit the driver refuses; the entry is there.
                    let r = unsafe { t.cuStreamCreateWithPriority(&mut stream, 0, 0) };
                    assert_ne!(r, CUresult::CUDA_ERROR_NOT_FOUND);
                    println!("cuStreamCreateWithPriority before cuInit: {r:?}");
                }
            }

            /// The library's `cuGetProcAddress_v2` / `cuGetProcAddress` is itself a table entry.
            #[cfg(any(unix, windows))]
            #[test]
            fn proc_address_through_the_table() {
                let Some(t) = crate::loaded(EntryPoints::load()) else {
                    return;
                };
                let e = EntryPoints::ENTRIES
                    .iter()
                    .find(|e| e.c_name == "cuGetProcAddress")
                    .unwrap();
                assert!(!t.missing().any(|m| m == e), "{} missing", e.symbol);
            }
        }
    };
}
per_major!("cuda-11", cuda11);
per_major!("cuda-12", cuda12);
per_major!("cuda-13", cuda13);

/// Structs that derive Debug print their enum fields by name too.
#[cfg(feature = "cuda-12")]
#[test]
fn struct_debug_prints_enum_names() {
    use cuda_mempool_sys::cuda12::*;
    let props = CUmemPoolProps {
        allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        location: mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, 0),
        ..Default::default()
    };
    let text = format!("{props:?}");
    assert!(text.contains("allocType: CU_MEM_ALLOCATION_TYPE_PINNED"), "{text}");
    assert!(text.contains("type_: CU_MEM_LOCATION_TYPE_DEVICE"), "{text}");
}

/// `Ok(x)`: `Some(x)`. No driver library on this machine: `None` (the trial passes, saying so),
/// unless CUDA_MEMPOOL_SYS_REQUIRE_LIBCUDA=1.
#[cfg(any(unix, windows))]
fn loaded<T>(r: Result<T, cuda_mempool_sys::LoadError>) -> Option<T> {
    match r {
        Ok(t) => Some(t),
        Err(e) if std::env::var("CUDA_MEMPOOL_SYS_REQUIRE_LIBCUDA").as_deref() != Ok("1") => {
            println!("no driver library here, nothing to check: {e}");
            None
        }
        Err(e) => panic!("CUDA_MEMPOOL_SYS_REQUIRE_LIBCUDA=1: {e}"),
    }
}

/// The CUDA 13 selectors through the table: `None` on a driver older than 13.0 (CI's R535 is
/// CUDA 12.2), and a call returns CUDA_ERROR_NOT_FOUND instead of failing to link or start.
#[cfg(all(any(unix, windows), feature = "cuda-13"))]
#[test]
fn cuda13_selectors_follow_the_driver() {
    use cuda_mempool_sys::cuda13::*;
    let Some(t) = loaded(EntryPoints::load()) else { return };
    let mut version = 0;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { t.cuDriverGetVersion(&mut version) }, CUresult::CUDA_SUCCESS);
    let selectors = ["cuMemGetDefaultMemPool", "cuMemGetMemPool", "cuMemSetMemPool"];
    let missing: Vec<&str> = t.missing_symbols().collect();
    println!("driver {version}; missing: {missing:?}");
    if version < 13000 {
        assert!(t.cuMemGetDefaultMemPool.is_none());
        assert!(t.cuMemGetMemPool.is_none());
        assert!(t.cuMemSetMemPool.is_none());
        for s in selectors {
            assert!(missing.contains(&s), "{s} is not listed as missing");
        }
        let mut pool = std::ptr::null_mut();
        let mut loc = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, 0);
        // SAFETY: a missing entry calls nothing.
        let r = unsafe { t.cuMemGetMemPool(&mut pool, &mut loc, CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED) };
        assert_eq!(r, CUresult::CUDA_ERROR_NOT_FOUND);
    } else {
        assert!(t.cuMemGetDefaultMemPool.is_some() && t.cuMemGetMemPool.is_some() && t.cuMemSetMemPool.is_some());
    }
}

/// Errors name the library and dlerror's reason.
#[cfg(all(unix, feature = "cuda-12"))]
#[test]
fn load_errors_name_library_and_reason() {
    use cuda_mempool_sys::{cuda12::EntryPoints, LoadErrorKind};
    // SAFETY: the file does not exist, so nothing is loaded.
    let e = unsafe { EntryPoints::from_library("/nonexistent/libcuda.so.1") }.unwrap_err();
    assert_eq!(e.kind(), LoadErrorKind::Open);
    assert_eq!(e.library(), "/nonexistent/libcuda.so.1");
    assert!(e.reason().contains("No such file"), "{e}");
    assert!(e.to_string().contains("/nonexistent/libcuda.so.1"), "{e}");
    println!("{e}");

    // A library that is there but is no driver: it has no cuGetProcAddress.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: the C library is already loaded in this process.
        let e = unsafe { EntryPoints::from_library("libc.so.6") }.unwrap_err();
        assert_eq!(e.kind(), LoadErrorKind::NoProcAddress);
        assert_eq!(e.library(), "libc.so.6");
        assert!(e.reason().contains("cuGetProcAddress"), "{e}");
        println!("{e}");
        // dlsym finds nothing either, and every call answers NOT_FOUND.
        // SAFETY: as above.
        let lib = unsafe { cuda_mempool_sys::Library::open("libc.so.6") }.unwrap();
        let t = EntryPoints::from_dlsym(&lib);
        assert_eq!(t.missing().count(), EntryPoints::LEN);
    }
}

/// Windows: errors name the DLL and the Windows error (GetLastError's code and text). Run under
/// Wine by hand; `cargo xtask ci` runs the example there.
#[cfg(all(windows, feature = "cuda-12"))]
#[test]
fn load_errors_name_the_dll_and_the_windows_error() {
    use cuda_mempool_sys::{cuda12::EntryPoints, Library, LoadErrorKind};
    assert_eq!(Library::DEFAULT, "nvcuda.dll");
    // SAFETY: the file does not exist, so nothing is loaded.
    let e = unsafe { EntryPoints::from_library(r"C:\nonexistent\nvcuda.dll") }.unwrap_err();
    assert_eq!(e.kind(), LoadErrorKind::Open);
    assert_eq!(e.library(), r"C:\nonexistent\nvcuda.dll");
    assert!(e.reason().starts_with("LoadLibraryExW"), "{e}");
    assert!(e.reason().contains("failed with error "), "{e}");
    println!("{e}");

    // A DLL that is there but is no driver: it has no cuGetProcAddress.
    // SAFETY: kernel32 is loaded in every process.
    let e = unsafe { EntryPoints::from_library("kernel32.dll") }.unwrap_err();
    assert_eq!(e.kind(), LoadErrorKind::NoProcAddress);
    assert!(e.reason().starts_with("GetProcAddress failed with error 127"), "{e}");
    println!("{e}");
    // SAFETY: as above.
    let lib = unsafe { Library::open("kernel32.dll") }.unwrap();
    assert!(!lib
        .symbol(std::ffi::CStr::from_bytes_with_nul(b"GetLastError\0").unwrap())
        .is_null());
    assert_eq!(EntryPoints::from_dlsym(&lib).missing().count(), EntryPoints::LEN);
}

/// Linked: every linked entry is the linked function, which is what the dynamic linker binds
/// (`dlsym(RTLD_DEFAULT, …)`); a table-only entry (never linked: the checkpoint API) is
/// `global`'s function instead, and the default namespace has it only where the driver library
/// exports it. (The CUDA 13 module's `from_linked` would link its selectors, which CI's R535
/// lacks: this is the root's.)
#[cfg(all(unix, feature = "cuda-12", not(feature = "dynamic-loading")))]
#[test]
fn from_linked_is_what_the_dynamic_linker_binds() {
    use cuda_mempool_sys::cuda12::EntryPoints;
    let linked = EntryPoints::from_linked();
    assert_eq!(linked.missing().count(), 0);
    let ns = EntryPoints::from_default_namespace();
    let missing: Vec<&str> = ns.missing().filter(|e| e.linked).map(|e| e.symbol).collect();
    assert!(missing.is_empty(), "linked entries missing: {missing:?}");
    for ((e, a), b) in EntryPoints::ENTRIES.iter().zip(linked.addresses()).zip(ns.addresses()) {
        if e.linked {
            assert_eq!(a, b, "{}", e.symbol);
        } else {
            assert_ne!(a, b, "{}: from_linked holds global's function", e.symbol);
        }
    }
    let global_fn = cuda_mempool_sys::cuda12::global::cuCheckpointProcessGetState as *const std::ffi::c_void;
    assert_eq!(
        linked.cuCheckpointProcessGetState.map(|f| f as *const std::ffi::c_void),
        Some(global_fn)
    );
}

/// Linked, `global::install` changes what `global::*` calls reach and nothing else: the free
/// functions are the driver's symbols (a mock under them needs `dynamic-loading`).
#[cfg(all(unix, feature = "cuda-12", not(feature = "dynamic-loading")))]
#[test]
fn install_in_a_linked_build_reaches_only_global() {
    use cuda_mempool_sys::cuda12::{cuDriverGetVersion, global, CUresult, EntryPoints};
    unsafe extern "C" fn stand_in(v: *mut std::ffi::c_int) -> CUresult {
        *v = 4242;
        CUresult::CUDA_SUCCESS
    }
    let mut t = EntryPoints::EMPTY;
    t.cuDriverGetVersion = Some(stand_in);
    // SAFETY: the stand-in keeps cuDriverGetVersion's contract (it writes one int); nothing else
    // of this test binary calls through `global` in a linked build.
    unsafe { global::install(Box::leak(Box::new(t))) };
    let (mut through_global, mut linked) = (0, 0);
    // SAFETY: valid out-pointers.
    assert_eq!(
        unsafe { global::cuDriverGetVersion(&mut through_global) },
        CUresult::CUDA_SUCCESS
    );
    assert_eq!(through_global, 4242);
    let r = unsafe { cuDriverGetVersion(&mut linked) };
    assert_ne!(linked, 4242, "the linked function reached the installed table ({r:?})");
    println!("linked cuDriverGetVersion: {r:?}, {linked}");
}

/// Dynamic loading: nothing is linked, so the default namespace has no driver symbol, and a
/// library opened by `load()` (RTLD_LOCAL) does not add any.
#[cfg(all(unix, feature = "cuda-12", feature = "dynamic-loading"))]
#[test]
fn nothing_linked_under_dynamic_loading() {
    use cuda_mempool_sys::cuda12::EntryPoints;
    let _ = EntryPoints::load();
    let ns = EntryPoints::from_default_namespace();
    assert_eq!(ns.missing().count(), EntryPoints::LEN);
}

/// Dynamic loading, additive: the free functions exist with the linked ones' names and signatures
/// and load the driver's table themselves on the first call, with no install step.
#[cfg(all(unix, feature = "cuda-12", feature = "dynamic-loading"))]
#[test]
fn free_functions_load_the_table_themselves() {
    use cuda_mempool_sys::cuda12::{cuDriverGetVersion, global, CUresult};
    let mut v = 0;
    // SAFETY: a valid out-pointer.
    let r = unsafe { cuDriverGetVersion(&mut v) };
    match global::load_error() {
        None => {
            assert_eq!(r, CUresult::CUDA_SUCCESS);
            assert!(v > 0 && global::table().is_some());
        }
        // No driver on this machine: the distinct code, not CUDA_ERROR_NOT_FOUND.
        Some(e) => {
            assert_eq!(r, global::LOAD_FAILED, "{e}");
        }
    }
}

/// Dynamic loading without a driver library: every free function answers `LOAD_FAILED` (not the
/// missing-entry code) and `load_error` names the library. Runs in a child of this test binary,
/// since the table is loaded once per process.
#[cfg(all(unix, feature = "cuda-12", feature = "dynamic-loading"))]
#[test]
fn a_library_that_cannot_load_is_a_distinct_answer() {
    const CHILD: &str = "CUDA_MEMPOOL_SYS_TEST_LOAD_FAILURE_CHILD";
    use cuda_mempool_sys::cuda12::{cuInit, global, CUresult};
    if std::env::var_os(CHILD).is_some() {
        // SAFETY: flags 0.
        let r = unsafe { cuInit(0) };
        assert_eq!(r, global::LOAD_FAILED);
        assert_ne!(r, CUresult::CUDA_ERROR_NOT_FOUND);
        let e = global::load_error().expect("a load error");
        assert!(format!("{e}").contains("/nonexistent/libcuda.so.1"), "{e}");
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_library_that_cannot_load_is_a_distinct_answer",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .env("CUDA_MEMPOOL_SYS_LIBCUDA", "/nonexistent/libcuda.so.1")
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `CUresult`'s helpers: `result()`, `Display` from the bindings' own names, `Error`.
#[cfg(feature = "cuda-12")]
#[test]
fn curesult_helpers() {
    use cuda_mempool_sys::cuda12::CUresult;
    assert_eq!(CUresult::CUDA_SUCCESS.result(), Ok(()));
    assert_eq!(
        CUresult::CUDA_ERROR_NO_DEVICE.result(),
        Err(CUresult::CUDA_ERROR_NO_DEVICE)
    );
    assert_eq!(CUresult::CUDA_ERROR_NO_DEVICE.to_string(), "CUDA_ERROR_NO_DEVICE (100)");
    assert_eq!(CUresult(123456).to_string(), "unknown CUresult (123456)");
    // The crate's own code is shown in hex, as it was chosen.
    assert_eq!(
        CUresult::CUDA_MEMPOOL_SYS_LOAD_FAILED.to_string(),
        "CUDA_MEMPOOL_SYS_LOAD_FAILED (0x4d500001)"
    );
    assert_eq!(CUresult::CUDA_MEMPOOL_SYS_LOAD_FAILED.0, 0x4d50_0001);
    #[cfg(feature = "std")]
    {
        let e: Box<dyn std::error::Error> = Box::new(CUresult::CUDA_ERROR_INVALID_VALUE);
        assert!(e.to_string().contains("INVALID_VALUE"));
    }
}

/// The driver does not know the crate's own code: asked to name it, it answers
/// CUDA_ERROR_INVALID_VALUE (as the docs of `CUDA_MEMPOOL_SYS_LOAD_FAILED` say), and names a code
/// of its own.
#[cfg(all(any(unix, windows), feature = "cuda-12"))]
#[test]
fn the_driver_does_not_name_load_failed() {
    use cuda_mempool_sys::cuda12::{CUresult, EntryPoints};
    let Some(t) = loaded(EntryPoints::load()) else { return };
    let mut text: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: a valid out-pointer; the table comes from the driver library.
    let r = unsafe { t.cuGetErrorString(CUresult::CUDA_MEMPOOL_SYS_LOAD_FAILED, &mut text) };
    assert_eq!(r, CUresult::CUDA_ERROR_INVALID_VALUE);
    // SAFETY: as above.
    let r = unsafe { t.cuGetErrorName(CUresult::CUDA_MEMPOOL_SYS_LOAD_FAILED, &mut text) };
    assert_eq!(r, CUresult::CUDA_ERROR_INVALID_VALUE);
    // SAFETY: as above.
    let r = unsafe { t.cuGetErrorName(CUresult::CUDA_ERROR_NO_DEVICE, &mut text) };
    assert_eq!(r, CUresult::CUDA_SUCCESS);
    // SAFETY: the driver returned a NUL-terminated static string.
    assert_eq!(
        unsafe { std::ffi::CStr::from_ptr(text) }.to_str(),
        Ok("CUDA_ERROR_NO_DEVICE")
    );
}

/// The modules mix: a handle or a result from one major's module is the same type in another's
/// (issue: a pool from `cuda13::EntryPoints` did not fit a `cuda12` function).
#[cfg(all(feature = "cuda-11", feature = "cuda-12", feature = "cuda-13"))]
#[test]
fn modules_share_handles_and_results() {
    use cuda_mempool_sys::{common, cuda11, cuda12, cuda13};
    fn same<T>(_: T, _: T) {}
    let pool12: cuda12::CUmemoryPool = std::ptr::null_mut();
    let pool13: cuda13::CUmemoryPool = std::ptr::null_mut();
    let pool11: cuda11::CUmemoryPool = std::ptr::null_mut();
    same(pool12, pool13);
    same(pool11, pool13);
    let s11: cuda11::CUstream = std::ptr::null_mut();
    same(s11, cuda13::CU_STREAM_PER_THREAD);
    let c12: cuda12::CUcontext = std::ptr::null_mut();
    let c13: cuda13::CUcontext = std::ptr::null_mut();
    same(c12, c13);
    same(cuda11::CUresult::CUDA_SUCCESS, cuda13::CUresult::CUDA_ERROR_NOT_FOUND);
    same(common::CUresult::CUDA_SUCCESS, cuda12::CUresult::CUDA_SUCCESS);
    // A code only the CUDA 13 headers name is named through every module.
    assert_eq!(
        cuda11::CUresult::CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER.name(),
        Some("CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER")
    );
    assert_eq!(
        cuda11::CUresult(36).to_string(),
        "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER (36)"
    );
}

/// The checkpoint API (cuda.h 12.8+, drivers R570+), by symbol.
const CHECKPOINT: [&str; 6] = [
    "cuCheckpointProcessCheckpoint",
    "cuCheckpointProcessGetRestoreThreadId",
    "cuCheckpointProcessGetState",
    "cuCheckpointProcessLock",
    "cuCheckpointProcessRestore",
    "cuCheckpointProcessUnlock",
];

/// The checkpoint API in a module whose header declares it: six table-only entries at the ABI of
/// CUDA 12.8 (never linked, so this test binary starts on a driver without them, such as CI's
/// R535), free functions of their C types, and on a driver older than 12.8 a call through the
/// table answers `CUDA_ERROR_NOT_FOUND` (the module's free function, which is `global`'s, that or
/// `LOAD_FAILED`).
macro_rules! checkpoint_in {
    ($feature:literal, $m:ident, $test:ident) => {
        #[cfg(feature = $feature)]
        #[test]
        fn $test() {
            use cuda_mempool_sys::$m::*;
            use std::ffi::c_int;
            let checkpoint: Vec<&EntryPoint> = EntryPoints::ENTRIES
                .iter()
                .filter(|e| e.symbol.starts_with("cuCheckpoint"))
                .collect();
            let mut symbols: Vec<&str> = checkpoint.iter().map(|e| e.symbol).collect();
            symbols.sort_unstable();
            assert_eq!(symbols, crate::CHECKPOINT);
            for e in &checkpoint {
                assert_eq!((e.c_name, e.cuda_version, e.per_thread), (e.symbol, 12080, false), "{e:?}");
                assert!(!e.linked, "{e:?}");
            }
            // Every other entry is linked, as before.
            assert_eq!(
                EntryPoints::ENTRIES.iter().filter(|e| !e.linked).count(),
                crate::CHECKPOINT.len()
            );

            // Free functions of their C types in every feature combination, and the fields.
            let _: unsafe extern "C" fn(c_int, *mut c_int) -> CUresult = cuCheckpointProcessGetRestoreThreadId;
            let get_state: unsafe extern "C" fn(c_int, *mut CUprocessState) -> CUresult = cuCheckpointProcessGetState;
            let _: unsafe extern "C" fn(c_int, *mut CUcheckpointLockArgs) -> CUresult = cuCheckpointProcessLock;
            let _: unsafe extern "C" fn(c_int, *mut CUcheckpointCheckpointArgs) -> CUresult =
                cuCheckpointProcessCheckpoint;
            let _: unsafe extern "C" fn(c_int, *mut CUcheckpointRestoreArgs) -> CUresult = cuCheckpointProcessRestore;
            let _: unsafe extern "C" fn(c_int, *mut CUcheckpointUnlockArgs) -> CUresult = cuCheckpointProcessUnlock;
            // The free function is `global`'s in every feature combination: nothing of it is linked.
            assert_eq!(get_state as usize, global::cuCheckpointProcessGetState as *const () as usize);
            let t = EntryPoints::EMPTY;
            assert!(t.cuCheckpointProcessGetRestoreThreadId.is_none() && t.cuCheckpointProcessGetState.is_none());
            assert!(t.cuCheckpointProcessLock.is_none() && t.cuCheckpointProcessCheckpoint.is_none());
            assert!(t.cuCheckpointProcessRestore.is_none() && t.cuCheckpointProcessUnlock.is_none());
            let args = CUcheckpointLockArgs::default();
            assert_eq!((args.timeoutMs, args.reserved0), (0, 0));
            assert_eq!(CUprocessState::CU_PROCESS_STATE_LOCKED.name(), Some("CU_PROCESS_STATE_LOCKED"));

            // Through the driver's table.
            #[cfg(any(unix, windows))]
            {
                let Some(t) = crate::loaded(EntryPoints::load()) else { return };
                let mut version = 0;
                // SAFETY: a valid out-pointer.
                assert_eq!(unsafe { t.cuDriverGetVersion(&mut version) }, CUresult::CUDA_SUCCESS);
                let missing: Vec<&str> = t.missing_symbols().filter(|s| s.starts_with("cuCheckpoint")).collect();
                let pid = std::process::id() as c_int;
                let mut state = CUprocessState(u32::MAX);
                // SAFETY: the table comes from the driver library; a valid out-pointer.
                let r = unsafe { t.cuCheckpointProcessGetState(pid, &mut state) };
                println!("driver {version}: checkpoint entries missing: {missing:?}; cuCheckpointProcessGetState: {r:?}, {state:?}");
                if version < 12080 {
                    assert_eq!(missing, [
                        "cuCheckpointProcessGetRestoreThreadId",
                        "cuCheckpointProcessGetState",
                        "cuCheckpointProcessLock",
                        "cuCheckpointProcessCheckpoint",
                        "cuCheckpointProcessRestore",
                        "cuCheckpointProcessUnlock",
                    ]);
                    assert_eq!(r, CUresult::CUDA_ERROR_NOT_FOUND);
                    assert_eq!(state, CUprocessState(u32::MAX), "nothing was called");
                    // The free function calls through the process's table: the same answer, or
                    // LOAD_FAILED where the driver library cannot be loaded.
                    // SAFETY: a valid out-pointer.
                    let r = unsafe { cuCheckpointProcessGetState(pid, &mut state) };
                    assert!(r == CUresult::CUDA_ERROR_NOT_FOUND || r == global::LOAD_FAILED, "{r:?}");
                } else {
                    assert!(missing.is_empty(), "{missing:?}");
                    assert_ne!(r, CUresult::CUDA_ERROR_NOT_FOUND);
                }
            }
        }
    };
}
checkpoint_in!("cuda-12", cuda12, checkpoint_api_in_cuda12);
checkpoint_in!("cuda-13", cuda13, checkpoint_api_in_cuda13);

/// CUDA 11's header has no checkpoint API: no entry, no type.
#[cfg(feature = "cuda-11")]
#[test]
fn cuda11_has_no_checkpoint_api() {
    use cuda_mempool_sys::cuda11::EntryPoints;
    assert!(!EntryPoints::ENTRIES
        .iter()
        .any(|e| e.symbol.starts_with("cuCheckpoint")));
    assert!(EntryPoints::ENTRIES.iter().all(|e| e.linked));
}

/// A table-only function whose driver library cannot be loaded answers `LOAD_FAILED`, linked or
/// not (it is `global`'s in every feature combination). Runs in a child of this test binary,
/// since the process's table is loaded once.
#[cfg(all(unix, feature = "cuda-12"))]
#[test]
fn checkpoint_without_a_driver_library_is_load_failed() {
    const CHILD: &str = "CUDA_MEMPOOL_SYS_TEST_CHECKPOINT_CHILD";
    use cuda_mempool_sys::cuda12::{cuCheckpointProcessGetState, global, CUprocessState, CUresult};
    if std::env::var_os(CHILD).is_some() {
        let mut state = CUprocessState(u32::MAX);
        // SAFETY: a valid out-pointer.
        let r = unsafe { cuCheckpointProcessGetState(std::process::id() as i32, &mut state) };
        assert_eq!(r, global::LOAD_FAILED);
        assert_ne!(r, CUresult::CUDA_ERROR_NOT_FOUND);
        assert_eq!(state, CUprocessState(u32::MAX));
        let e = global::load_error().expect("a load error");
        assert!(format!("{e}").contains("/nonexistent/libcuda.so.1"), "{e}");
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "checkpoint_without_a_driver_library_is_load_failed",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .env("CUDA_MEMPOOL_SYS_LIBCUDA", "/nonexistent/libcuda.so.1")
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
