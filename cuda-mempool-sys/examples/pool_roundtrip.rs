//! Create a pool on device 0, allocate from it in stream order, fill and read back, free, destroy.
//! Prints the driver version and each step. `cargo run -p cuda-mempool-sys --example pool_roundtrip`.
use cuda_mempool_sys::*;
use std::ffi::CStr;
use std::process::ExitCode;

fn check(what: &str, r: CUresult) -> Result<(), String> {
    if r == CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut name = std::ptr::null();
    // SAFETY: cuGetErrorName writes a static string pointer, or leaves it null for unknown codes.
    let known = unsafe { cuGetErrorName(r, &mut name) } == CUresult::CUDA_SUCCESS && !name.is_null();
    let name = if known {
        unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
    } else {
        "unknown".into()
    };
    Err(format!("{what} failed: {name} ({})", r.0))
}

fn run() -> Result<(), String> {
    unsafe {
        let mut version = 0;
        check("cuDriverGetVersion", cuDriverGetVersion(&mut version))?;
        println!(
            "driver supports CUDA {}.{} ({version})",
            version / 1000,
            version % 1000 / 10
        );
        check("cuInit", cuInit(0))?;
        let mut dev = 0;
        check("cuDeviceGet", cuDeviceGet(&mut dev, 0))?;
        let mut name = [0 as std::ffi::c_char; 128];
        check("cuDeviceGetName", cuDeviceGetName(name.as_mut_ptr(), 128, dev))?;
        println!("device 0: {}", CStr::from_ptr(name.as_ptr()).to_string_lossy());
        let mut ctx = std::ptr::null_mut();
        check("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&mut ctx, dev))?;
        check("cuCtxSetCurrent", cuCtxSetCurrent(ctx))?;

        let props = CUmemPoolProps {
            allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
            location: mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, dev),
            ..Default::default()
        };
        let mut pool = std::ptr::null_mut();
        check("cuMemPoolCreate", cuMemPoolCreate(&mut pool, &props))?;
        println!("cuMemPoolCreate: pool {pool:p}");

        let mut stream = std::ptr::null_mut();
        check(
            "cuStreamCreate",
            cuStreamCreate(&mut stream, CUstream_flags::CU_STREAM_NON_BLOCKING.0),
        )?;
        const N: usize = 1 << 20;
        let mut dptr: CUdeviceptr = 0;
        check(
            "cuMemAllocFromPoolAsync",
            cuMemAllocFromPoolAsync(&mut dptr, N, pool, stream),
        )?;
        println!("cuMemAllocFromPoolAsync: {N} bytes at {dptr:#x}");
        check("cuMemsetD8Async", cuMemsetD8Async(dptr, 0xA5, N, stream))?;
        let mut host = vec![0u8; N];
        check(
            "cuMemcpyDtoHAsync",
            cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), dptr, N, stream),
        )?;
        check("cuMemFreeAsync", cuMemFreeAsync(dptr, stream))?;
        check("cuStreamSynchronize", cuStreamSynchronize(stream))?;
        if host.iter().any(|&b| b != 0xA5) {
            return Err("read back a wrong byte".into());
        }
        println!("filled and read back {N} bytes: ok; cuMemFreeAsync: ok");
        let mut used: u64 = 0;
        check(
            "cuMemPoolGetAttribute",
            cuMemPoolGetAttribute(
                pool,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
                (&mut used as *mut u64).cast(),
            ),
        )?;
        println!("pool used memory after free: {used} bytes");
        check("cuStreamDestroy", cuStreamDestroy_v2(stream))?;
        check("cuMemPoolDestroy", cuMemPoolDestroy(pool))?;
        println!("cuMemPoolDestroy: ok");
        check("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2(dev))?;
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
