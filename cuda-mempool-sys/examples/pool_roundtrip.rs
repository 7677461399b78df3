//! Create a pool on device 0, allocate from it in stream order, fill and read back, free, destroy.
//! Prints the driver version and each step. `cargo run -p cuda-mempool-sys --example pool_roundtrip`.
//!
//! Every call goes through the entry-point table (`EntryPoints::load()`), so the example builds and
//! runs with or without the `dynamic-loading` feature, and says what it lacks instead of failing to
//! start where there is no driver.
use cuda_mempool_sys::*;
use std::ffi::CStr;
use std::process::ExitCode;

fn check(cu: &EntryPoints, what: &str, r: CUresult) -> Result<(), String> {
    if r == CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut name = std::ptr::null();
    // SAFETY: cuGetErrorName writes a static string pointer, or leaves it null for unknown codes.
    let known = unsafe { cu.cuGetErrorName(r, &mut name) } == CUresult::CUDA_SUCCESS && !name.is_null();
    let name = if known {
        unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
    } else {
        "unknown".into()
    };
    Err(format!("{what} failed: {name} ({})", r.0))
}

fn run() -> Result<(), String> {
    let cu = EntryPoints::load().map_err(|e| e.to_string())?;
    let missing: Vec<&str> = cu.missing_symbols().collect();
    println!("{} loaded; entry points it lacks: {missing:?}", Library::DEFAULT);
    unsafe {
        let mut version = 0;
        check(&cu, "cuDriverGetVersion", cu.cuDriverGetVersion(&mut version))?;
        println!(
            "driver supports CUDA {}.{} ({version})",
            version / 1000,
            version % 1000 / 10
        );
        check(&cu, "cuInit", cu.cuInit(0))?;
        let mut dev = 0;
        check(&cu, "cuDeviceGet", cu.cuDeviceGet(&mut dev, 0))?;
        let mut name = [0 as std::ffi::c_char; 128];
        check(&cu, "cuDeviceGetName", cu.cuDeviceGetName(name.as_mut_ptr(), 128, dev))?;
        println!("device 0: {}", CStr::from_ptr(name.as_ptr()).to_string_lossy());
        let mut ctx = std::ptr::null_mut();
        check(
            &cu,
            "cuDevicePrimaryCtxRetain",
            cu.cuDevicePrimaryCtxRetain(&mut ctx, dev),
        )?;
        check(&cu, "cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))?;

        let props = CUmemPoolProps {
            allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            location: mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, dev),
            ..Default::default()
        };
        let mut pool = std::ptr::null_mut();
        check(&cu, "cuMemPoolCreate", cu.cuMemPoolCreate(&mut pool, &props))?;
        println!("cuMemPoolCreate: pool {pool:p}");

        let mut stream = std::ptr::null_mut();
        check(
            &cu,
            "cuStreamCreate",
            cu.cuStreamCreate(&mut stream, CUstream_flags::CU_STREAM_NON_BLOCKING.0),
        )?;
        const N: usize = 1 << 20;
        let mut dptr: CUdeviceptr = 0;
        check(
            &cu,
            "cuMemAllocFromPoolAsync",
            cu.cuMemAllocFromPoolAsync(&mut dptr, N, pool, stream),
        )?;
        println!("cuMemAllocFromPoolAsync: {N} bytes at {dptr:#x}");
        check(&cu, "cuMemsetD8Async", cu.cuMemsetD8Async(dptr, 0xA5, N, stream))?;
        let mut host = vec![0u8; N];
        check(
            &cu,
            "cuMemcpyDtoHAsync",
            cu.cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), dptr, N, stream),
        )?;
        check(&cu, "cuMemFreeAsync", cu.cuMemFreeAsync(dptr, stream))?;
        check(&cu, "cuStreamSynchronize", cu.cuStreamSynchronize(stream))?;
        if host.iter().any(|&b| b != 0xA5) {
            return Err("read back a wrong byte".into());
        }
        println!("filled and read back {N} bytes: ok; cuMemFreeAsync: ok");
        let mut used: u64 = 0;
        check(
            &cu,
            "cuMemPoolGetAttribute",
            cu.cuMemPoolGetAttribute(
                pool,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
                (&mut used as *mut u64).cast(),
            ),
        )?;
        println!("pool used memory after free: {used} bytes");
        check(&cu, "cuStreamDestroy", cu.cuStreamDestroy_v2(stream))?;
        check(&cu, "cuMemPoolDestroy", cu.cuMemPoolDestroy(pool))?;
        println!("cuMemPoolDestroy: ok");
        check(&cu, "cuDevicePrimaryCtxRelease", cu.cuDevicePrimaryCtxRelease_v2(dev))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pool_roundtrip: {e}");
            ExitCode::FAILURE
        }
    }
}
