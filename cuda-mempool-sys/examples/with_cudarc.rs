//! cudarc and this crate in one program, with typed conversions only (examples/with_cudarc/interop.rs):
//! cudarc makes the context, a stream and an event; this crate asks the stream's context
//! (`cuStreamGetCtx`), allocates from the device's pool on cudarc's stream, fills and copies back in
//! stream order; cudarc records and waits on its event.
//! Prints each step; exits non-zero on any failure. Needs a GPU (R525+ for cuda-12 bindings;
//! cudarc is built for CUDA 13.0 with dynamic loading).
#[path = "with_cudarc/interop.rs"]
mod interop;

use std::process::ExitCode;

use cuda_mempool_sys as sys;
use interop::*;

fn check(what: &str, r: sys::CUresult) -> Result<(), String> {
    r.result().map_err(|e| format!("{what}: {e}"))?;
    println!("with_cudarc: {what}: ok");
    Ok(())
}

fn run() -> Result<(), String> {
    let ctx = cudarc::driver::CudaContext::new(0).map_err(|e| format!("cudarc CudaContext::new(0): {e:?}"))?;
    ctx.bind_to_thread()
        .map_err(|e| format!("cudarc bind_to_thread: {e:?}"))?;
    let stream = ctx.new_stream().map_err(|e| format!("cudarc new_stream: {e:?}"))?;
    println!("with_cudarc: cudarc context, stream and (below) event");
    // This crate sees cudarc's context as the current one.
    let mut current: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    check("cuCtxGetCurrent", unsafe { sys::cuCtxGetCurrent(&mut current) })?;
    if current != context_from_cudarc(ctx.cu_ctx()) {
        return Err("cuCtxGetCurrent is not cudarc's context".into());
    }
    let s = stream_from_cudarc(stream.cu_stream());
    // The context of cudarc's stream, asked through this crate: what a wrapper handed a stream by
    // another library does.
    let mut owner: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: cudarc's live stream; a valid out-pointer.
    check("cuStreamGetCtx on cudarc's stream", unsafe {
        sys::cuStreamGetCtx(s, &mut owner)
    })?;
    if owner != current {
        return Err("cuStreamGetCtx of cudarc's stream is not cudarc's context".into());
    }
    const N: usize = 1 << 20;
    let mut ptr: sys::CUdeviceptr = 0;
    // SAFETY: valid out-pointer; `s` is cudarc's live stream of the current context.
    check("cuMemAllocAsync on cudarc's stream", unsafe {
        sys::cuMemAllocAsync(&mut ptr, N * 4, s)
    })?;
    // SAFETY: `ptr` holds N u32 in stream order on `s`.
    check("cuMemsetD32Async", unsafe {
        sys::cuMemsetD32Async(ptr, 0x5EED_F00D, N, s)
    })?;
    let mut host = vec![0u32; N];
    // SAFETY: `host` holds N u32 and outlives the synchronisation below.
    check("cuMemcpyDtoHAsync (the C name of cuMemcpyDtoHAsync_v2)", unsafe {
        sys::cuMemcpyDtoHAsync(host.as_mut_ptr().cast(), ptr, N * 4, s)
    })?;
    // SAFETY: freed in stream order after the copy.
    check("cuMemFreeAsync", unsafe { sys::cuMemFreeAsync(ptr, s) })?;
    let event = ctx.new_event(None).map_err(|e| format!("cudarc new_event: {e:?}"))?;
    event
        .record(&stream)
        .map_err(|e| format!("cudarc record_event: {e:?}"))?;
    // This crate waits on cudarc's event.
    // SAFETY: a live event, recorded on `s`.
    check("cuEventSynchronize on cudarc's event", unsafe {
        sys::cuEventSynchronize(event_from_cudarc(event.cu_event()))
    })?;
    if let Some(bad) = host.iter().position(|&v| v != 0x5EED_F00D) {
        return Err(format!("word {bad} reads {:#x}, not 0x5eedf00d", host[bad]));
    }
    println!("with_cudarc: {N} words filled and read back through cudarc's stream");
    // The stream and the pool handed back to cudarc's types, and a CUresult both ways.
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: valid out-pointer; device 0.
    check("cuDeviceGetDefaultMemPool", unsafe {
        sys::cuDeviceGetDefaultMemPool(&mut pool, 0)
    })?;
    if stream_to_cudarc(s) != stream.cu_stream() || pool_from_cudarc(pool_to_cudarc(pool)) != pool {
        return Err("a handle changed on the way".into());
    }
    let nf = result_from_cudarc(cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_FOUND);
    if nf != sys::CUresult::CUDA_ERROR_NOT_FOUND
        || result_to_cudarc(nf) != Some(cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_FOUND)
        || result_to_cudarc(sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)
            != Some(cudarc::driver::sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)
        || result_to_cudarc(sys::CUresult::CUDA_MEMPOOL_SYS_LOAD_FAILED).is_some()
        || event_to_cudarc(event_from_cudarc(event.cu_event())) != event.cu_event()
        || context_to_cudarc(current) != ctx.cu_ctx()
    {
        return Err("a conversion does not round-trip".into());
    }
    println!(
        "with_cudarc: handles and CUresult convert both ways ({:?})",
        sys::mode()
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => {
            println!("with_cudarc: ok");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("with_cudarc: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}
