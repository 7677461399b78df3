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
// `result_to_cudarc`: every code the crate root's header names, generated from it.
include!("results.rs");
