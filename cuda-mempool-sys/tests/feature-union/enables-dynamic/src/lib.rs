//! A library that wants no linked driver: it enables `dynamic-loading` for the whole graph.
use cuda_mempool_sys::{cuDeviceGetCount, CUresult};

/// The device count, through the same free function a linked program calls.
pub fn device_count() -> Result<i32, CUresult> {
    let mut n = 0;
    // SAFETY: a valid out-pointer.
    unsafe { cuDeviceGetCount(&mut n) }.result().map(|()| n)
}
