//! One program, one build of cuda-mempool-sys with cuda-12 and cuda-13 enabled, both dependents
//! working as written.
fn main() {
    assert_eq!(uses_root::MAJOR, 12, "the crate root stays CUDA 12");
    assert_eq!(uses_root::location(1).id, 1);
    // SAFETY: the union was written through `id`.
    assert_eq!(uses_cuda13::location(2).__bindgen_anon_1.id(), 2);
    assert_eq!(uses_cuda13::location_by_helper(3).__bindgen_anon_1.id(), 3);
    assert_eq!(uses_cuda13::per_thread_stream(), 2);
    assert_eq!(format!("{:?}", uses_cuda13::no_device()), "CUDA_ERROR_NO_DEVICE");
    uses_root::check_free_functions("app (linked)");
    assert_eq!(uses_root::mode(), uses_root::Mode::Linked);
    let version = uses_root::driver_version().expect("cuDriverGetVersion");
    println!("feature-union app: driver CUDA {version} (linked call through the crate root)");
    let missing = uses_cuda13::missing_selectors().expect("load libcuda");
    println!("feature-union app: CUDA 13 selectors this driver lacks: {missing:?}");
    if version < 13000 {
        assert_eq!(missing.len(), 3);
    } else {
        assert!(missing.is_empty());
    }
}
