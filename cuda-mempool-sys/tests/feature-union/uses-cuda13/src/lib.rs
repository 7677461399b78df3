//! Written against `cuda_mempool_sys::cuda13`: CUDA 13 layouts (`id` in an anonymous union), its
//! helpers, and the CUDA 13 selectors through the entry-point table.
use cuda_mempool_sys::cuda13::{
    mem_location, CUmemLocation, CUmemLocationType, CUmemLocation_st__bindgen_ty_1, CUresult, EntryPoints,
    CU_STREAM_PER_THREAD,
};

pub fn location(id: i32) -> CUmemLocation {
    CUmemLocation {
        type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        __bindgen_anon_1: CUmemLocation_st__bindgen_ty_1::from_id(id),
    }
}

pub fn location_by_helper(id: i32) -> CUmemLocation {
    mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id)
}

pub fn per_thread_stream() -> usize {
    CU_STREAM_PER_THREAD as usize
}

pub fn no_device() -> CUresult {
    CUresult::CUDA_ERROR_NO_DEVICE
}

/// The CUDA 13 selectors this driver lacks (all three before R580).
pub fn missing_selectors() -> Result<Vec<&'static str>, String> {
    let t = EntryPoints::load().map_err(|e| e.to_string())?;
    Ok(t.missing_symbols()
        .filter(|s| s.starts_with("cuMem") && s.ends_with("MemPool"))
        .collect())
}
