//! The cudarc example's conversions (examples/with_cudarc/interop.rs), without a GPU: every
//! `CUresult` the crate root's header names maps to cudarc's and back (the map is generated from
//! that header); the crate's own code and unknown values do not. Against the dev-dependency,
//! cudarc for CUDA 13.0; tests/cudarc-versions checks older versions of cudarc's enum.
#![cfg(feature = "cuda-12")]

#[allow(dead_code)]
#[path = "../examples/with_cudarc/interop.rs"]
mod interop;

use cuda_mempool_sys::CUresult;
use cudarc::driver::sys as cu;
use interop::{result_from_cudarc, result_to_cudarc};

#[test]
fn every_named_code_maps_both_ways() {
    assert_eq!(
        result_to_cudarc(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS),
        Some(cu::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)
    );
    let mut mapped = 0;
    for v in 0..1000 {
        let ours = CUresult(v);
        let Some(theirs) = result_to_cudarc(ours) else { continue };
        mapped += 1;
        assert_eq!(result_from_cudarc(theirs), ours);
        // The same name on both sides.
        assert_eq!(Some(format!("{theirs:?}").as_str()), ours.name(), "{v}");
    }
    // The CUDA 12.9 header names 100 codes; cudarc's cuda-13000 names them all, so every one is
    // mapped.
    assert_eq!(mapped, 100);
    assert_eq!(result_to_cudarc(CUresult::CUDA_MEMPOOL_SYS_LOAD_FAILED), None);
    assert_eq!(result_to_cudarc(CUresult(123_456)), None);
}
