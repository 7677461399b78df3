//! Written against the crate root as if only `cuda-12` were enabled: CUDA 12 layouts (a plain `id`
//! in `CUmemLocation`) and linked functions. It must keep compiling when another crate in the graph
//! enables `cuda-13`.
pub use cuda_mempool_sys::CUresult;
use cuda_mempool_sys::{cuDriverGetVersion, CUmemLocation, CUmemLocationType, ROOT_CUDA_MAJOR};

pub const MAJOR: u32 = ROOT_CUDA_MAJOR;

pub fn location(id: i32) -> CUmemLocation {
    CUmemLocation {
        type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id,
    }
}

/// The driver's CUDA version, through the linked function.
pub fn driver_version() -> Result<i32, CUresult> {
    let mut v = 0;
    // SAFETY: valid out-pointer.
    match unsafe { cuDriverGetVersion(&mut v) } {
        CUresult::CUDA_SUCCESS => Ok(v),
        e => Err(e),
    }
}

/// What a free function answers when the driver library could not be loaded (`dynamic-loading`).
pub const LOAD_FAILED: CUresult = cuda_mempool_sys::global::LOAD_FAILED;
