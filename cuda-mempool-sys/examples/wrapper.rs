//! The wrapper-author path of the README, end to end on a GPU: the free functions (linked, or with
//! `dynamic-loading` loading the driver on their first call), `CUresult::result()` and `Display`, a
//! pool owned by a small safe type, an attribute read at its value type, a stream made with a
//! priority and the context it belongs to (`cuStreamGetCtx`), a wrapper type deriving `Debug`,
//! `PartialEq`, `Eq` and `Hash` over CUDA 13's pool properties, and the CUDA 13 selector
//! `cuMemGetMemPool` through `cuda13::EntryPoints` feeding a CUDA 12 function (one handle type).
//! `cargo run -p cuda-mempool-sys --example wrapper --features cuda-13 [--features dynamic-loading]`.
use cuda_mempool_sys as sys;
use cuda_mempool_sys::cuda13;
use std::process::ExitCode;

/// A pool this program created; destroyed when dropped.
struct MemPool(sys::CUmemoryPool);

impl MemPool {
    fn new(device: i32) -> Result<MemPool, sys::CUresult> {
        let props = sys::CUmemPoolProps {
            allocType: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            location: sys::mem_location(sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, device),
            ..Default::default()
        };
        let mut pool = std::ptr::null_mut();
        // SAFETY: both pointers are valid for the call.
        unsafe { sys::cuMemPoolCreate(&mut pool, &props) }.result()?;
        Ok(MemPool(pool))
    }

    fn used(&self) -> Result<u64, sys::CUresult> {
        let mut v: u64 = 0;
        let attr = sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT;
        // SAFETY: a live pool; `v` has the attribute's value type (u64).
        unsafe { sys::cuMemPoolGetAttribute(self.0, attr, &mut v as *mut u64 as *mut _) }.result()?;
        Ok(v)
    }
}

/// A wrapper's description of a CUDA 13 pool: it derives what the C struct has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct PoolSpec13(cuda13::CUmemPoolProps);

impl Drop for MemPool {
    fn drop(&mut self) {
        // SAFETY: created by `new`, destroyed once.
        let _ = unsafe { sys::cuMemPoolDestroy(self.0) };
    }
}

fn run() -> Result<(), String> {
    let step = |what: &str, r: Result<(), sys::CUresult>| r.map_err(|e| format!("{what}: {e}"));
    step("cuInit", unsafe { sys::cuInit(0) }.result())?;
    let mut ctx = std::ptr::null_mut();
    step(
        "cuDevicePrimaryCtxRetain",
        unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, 0) }.result(),
    )?;
    step("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(ctx) }.result())?;
    let stream = sys::CU_STREAM_PER_THREAD;

    let pool = MemPool::new(0).map_err(|e| format!("MemPool::new: {e}"))?;
    let mut p: sys::CUdeviceptr = 0;
    step(
        "cuMemAllocFromPoolAsync",
        unsafe { sys::cuMemAllocFromPoolAsync(&mut p, 1 << 20, pool.0, stream) }.result(),
    )?;
    step(
        "cuStreamSynchronize",
        unsafe { sys::cuStreamSynchronize(stream) }.result(),
    )?;
    println!(
        "own pool: 1 MiB at {p:#x}, USED_MEM_CURRENT = {} bytes",
        pool.used().map_err(|e| e.to_string())?
    );
    step("cuMemFreeAsync", unsafe { sys::cuMemFreeAsync(p, stream) }.result())?;

    // A stream with a priority, and the context it belongs to: what a wrapper handed a stream by
    // another library asks.
    let mut prio: sys::CUstream = std::ptr::null_mut();
    let flags = sys::CUstream_flags::CU_STREAM_NON_BLOCKING;
    step(
        "cuStreamCreateWithPriority",
        unsafe { sys::cuStreamCreateWithPriority(&mut prio, flags.0, 0) }.result(),
    )?;
    let mut owner: sys::CUcontext = std::ptr::null_mut();
    step(
        "cuStreamGetCtx",
        unsafe { sys::cuStreamGetCtx(prio, &mut owner) }.result(),
    )?;
    if owner != ctx {
        return Err(format!("cuStreamGetCtx: {owner:p}, not the current context {ctx:p}"));
    }
    println!("a {flags:?} stream with priority 0 belongs to the current context {owner:p}");
    step("cuStreamDestroy", unsafe { sys::cuStreamDestroy(prio) }.result())?;

    // A refusal, as a wrapper's error message shows it (from the bindings' tables, no driver call).
    let refused = unsafe { sys::cuMemPoolTrimTo(std::ptr::null_mut(), 0) };
    println!("cuMemPoolTrimTo(null pool) -> {refused}");

    // CUDA 13's pool properties (`CUmemLocation::id` in a union there) in a type that derives Debug.
    let spec = PoolSpec13(cuda13::CUmemPoolProps {
        allocType: cuda13::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        handleTypes: cuda13::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
            | cuda13::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_FABRIC,
        location: cuda13::mem_location(cuda13::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, 0),
        ..Default::default()
    });
    let specs: std::collections::HashSet<PoolSpec13> = [spec, spec].into_iter().collect();
    if specs.len() != 1 {
        return Err("two equal PoolSpec13 hashed apart".into());
    }
    println!("{:?}", spec.0.location);
    println!("handle types: {:?}", spec.0.handleTypes);

    // CUDA 13's location-based selector, loaded (not linked), into CUDA 12 functions.
    match cuda13::EntryPoints::load() {
        Err(e) => println!("cuda13::EntryPoints::load: {e}"),
        Ok(cu13) => {
            let mut device0 = cuda13::mem_location(cuda13::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, 0);
            let pinned = cuda13::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
            let mut current: sys::CUmemoryPool = std::ptr::null_mut();
            let r = unsafe { cu13.cuMemGetMemPool(&mut current, &mut device0, pinned) };
            println!("cuda13 cuMemGetMemPool(device 0) -> {r}, pool {current:p}");
            if r == sys::CUresult::CUDA_SUCCESS {
                let mut q: sys::CUdeviceptr = 0;
                step(
                    "cuMemAllocFromPoolAsync (cuda13 pool)",
                    unsafe { sys::cuMemAllocFromPoolAsync(&mut q, 4096, current, stream) }.result(),
                )?;
                step("cuMemFreeAsync", unsafe { sys::cuMemFreeAsync(q, stream) }.result())?;
                println!("allocated 4 KiB from it through the cuda12 function at {q:#x}");
            }
        }
    }
    step(
        "cuStreamSynchronize",
        unsafe { sys::cuStreamSynchronize(stream) }.result(),
    )?;
    drop(pool);
    step(
        "cuDevicePrimaryCtxRelease",
        unsafe { sys::cuDevicePrimaryCtxRelease_v2(0) }.result(),
    )?;
    Ok(())
}

fn main() -> ExitCode {
    #[cfg(feature = "dynamic-loading")]
    println!("dynamic-loading: the free functions load the driver on their first call");
    match run() {
        Ok(()) => {
            println!("wrapper: ok");
            ExitCode::SUCCESS
        }
        Err(e) => {
            #[cfg(all(feature = "dynamic-loading", any(unix, windows)))]
            if let Some(le) = sys::global::load_error() {
                eprintln!("wrapper: the driver library could not be loaded: {le}");
            }
            eprintln!("wrapper: {e}");
            ExitCode::FAILURE
        }
    }
}
