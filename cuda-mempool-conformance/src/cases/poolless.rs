//! A device that reports no memory-pool support (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 0:
//! vGPU profiles, some embedded boards): the pool cases are ignored there with that reason, and
//! these check what the APIs answer instead (the documented CUDA_ERROR_NOT_SUPPORTED).

use crate::cases::prelude::*;

/// API `api`'s call on device `dev`.
fn call(api: u32, dev: CUdevice) -> CUresult {
    let mut p: CUdeviceptr = 0;
    let mut pool: CUmemoryPool = std::ptr::null_mut();
    unsafe {
        match api {
            820 => cuMemAllocAsync(&mut p, 1 << 20, std::ptr::null_mut()),
            823 => cuMemPoolCreate(&mut pool, &device_props(dev)),
            _ => CUresult::CUDA_ERROR_INVALID_VALUE,
        }
    }
}

/// (API, case name, what the call is, in words).
const CASES: &[(u32, &str, &str)] = &[
    (
        820,
        "pool_less_device_not_supported",
        "cuMemAllocAsync(1 MiB) on a device without pools",
    ),
    (
        823,
        "pool_less_device_not_supported",
        "cuMemPoolCreate(device pool) on a device without pools",
    ),
];

pub fn cases() -> Vec<Case> {
    CASES
        .iter()
        .map(|&(api, name, what)| {
            Case::new(api, name, &[Cap::PoolLess], move |e| {
                expect(what, call(api, e.dev), CUresult::CUDA_ERROR_NOT_SUPPORTED)
            })
        })
        .collect()
}
