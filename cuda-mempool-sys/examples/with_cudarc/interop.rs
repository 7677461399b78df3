// Typed conversions between cudarc's raw driver types (`cudarc::driver::sys`) and this crate's: one
// function per handle type, so a `CUevent` cannot go where a `CUstream` belongs (a bare `.cast()`
// accepts any pointee). Both crates bind the same C handles (`*mut CUstream_st`, ...), so each
// conversion is the same pointer under another crate's name for the opaque struct.
// Included by examples/with_cudarc.rs and by the crate's compile_fail doctest `CudarcEventIsNotAStream`.
use cuda_mempool_sys as sys;
use cudarc::driver::sys as cu;

/// cudarc's stream as this crate's.
pub fn stream_from_cudarc(s: cu::CUstream) -> sys::CUstream {
    s.cast()
}
/// This crate's stream as cudarc's.
pub fn stream_to_cudarc(s: sys::CUstream) -> cu::CUstream {
    s.cast()
}
/// cudarc's event as this crate's.
pub fn event_from_cudarc(e: cu::CUevent) -> sys::CUevent {
    e.cast()
}
/// This crate's event as cudarc's.
pub fn event_to_cudarc(e: sys::CUevent) -> cu::CUevent {
    e.cast()
}
/// cudarc's context as this crate's.
pub fn context_from_cudarc(c: cu::CUcontext) -> sys::CUcontext {
    c.cast()
}
/// This crate's context as cudarc's.
pub fn context_to_cudarc(c: sys::CUcontext) -> cu::CUcontext {
    c.cast()
}
/// cudarc's memory pool as this crate's.
pub fn pool_from_cudarc(p: cu::CUmemoryPool) -> sys::CUmemoryPool {
    p.cast()
}
/// This crate's memory pool as cudarc's.
pub fn pool_to_cudarc(p: sys::CUmemoryPool) -> cu::CUmemoryPool {
    p.cast()
}
/// cudarc's `CUresult` (a Rust enum of the codes its headers name) as this crate's (a newtype
/// that holds any value).
pub fn result_from_cudarc(r: cu::CUresult) -> sys::CUresult {
    sys::CUresult(r as u32)
}
/// This crate's `CUresult` as cudarc's, for the codes listed below: cudarc's enum cannot hold a
/// value its headers lack (`CUDA_MEMPOOL_SYS_LOAD_FAILED`, a newer driver's code), so this way
/// is partial. (`CUdeviceptr` and `CUdevice` need no conversion: both crates alias the same
/// integers.)
pub fn result_to_cudarc(r: sys::CUresult) -> Option<cu::CUresult> {
    CUDARC_RESULTS.iter().copied().find(|c| *c as u32 == r.0)
}

/// The codes this example maps back (the ones a pool wrapper meets); extend as needed.
const CUDARC_RESULTS: &[cu::CUresult] = &[
    cu::CUresult::CUDA_SUCCESS,
    cu::CUresult::CUDA_ERROR_INVALID_VALUE,
    cu::CUresult::CUDA_ERROR_OUT_OF_MEMORY,
    cu::CUresult::CUDA_ERROR_NOT_INITIALIZED,
    cu::CUresult::CUDA_ERROR_NO_DEVICE,
    cu::CUresult::CUDA_ERROR_INVALID_CONTEXT,
    cu::CUresult::CUDA_ERROR_INVALID_HANDLE,
    cu::CUresult::CUDA_ERROR_NOT_FOUND,
    cu::CUresult::CUDA_ERROR_NOT_READY,
    cu::CUresult::CUDA_ERROR_NOT_SUPPORTED,
    cu::CUresult::CUDA_ERROR_UNKNOWN,
];
