#![forbid(unsafe_code)]
#![cfg(feature = "cuda-13")]
use cuda_mempool_sys::cuda13::*;
use std::hash::{Hash, Hasher};
#[test]
fn a_location_built_by_localized_with_a_device_tag() {
    let loc = CUmemLocation {
        type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        __bindgen_anon_1: CUmemLocation_st__bindgen_ty_1 {
            localized: CUmemLocation_st__bindgen_ty_1__bindgen_ty_1 { deviceId: 1, localityDomainId: 2 },
        },
    };
    let text = format!("{loc:?}");
    let mut h = std::collections::hash_map::DefaultHasher::new();
    loc.hash(&mut h);
    assert!(loc == loc && !text.is_empty());
}
