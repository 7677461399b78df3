//! `dynamic-loading` is additive: `uses-root` calls the crate root's free functions as a linked
//! program does, `enables-dynamic` turns on `dynamic-loading` for the graph, and both still compile
//! and run (the free functions load the driver's table themselves).
fn main() {
    uses_root::check_free_functions("mixed (dynamic-loading)");
    assert_eq!(uses_root::mode(), uses_root::Mode::NotYetLoaded, "nothing called yet");
    match uses_root::driver_version() {
        Ok(v) => {
            assert_eq!(uses_root::mode(), uses_root::Mode::Loaded);
            println!("feature-union mixed: driver CUDA {v} through the self-loading table")
        }
        Err(e) => {
            // No driver library: the distinct load-failure code, never CUDA_ERROR_NOT_FOUND.
            assert_eq!(e, cuda_mempool_sys_root_load_failed(), "{e}");
            assert!(e.0 >= 1000, "{e}: outside the driver's codes");
            assert!(matches!(uses_root::mode(), uses_root::Mode::NotLoaded(_)));
            println!("feature-union mixed: no driver library ({e})");
        }
    }
    println!(
        "feature-union mixed: cuDeviceGetCount: {:?}",
        enables_dynamic::device_count()
    );
}

fn cuda_mempool_sys_root_load_failed() -> uses_root::CUresult {
    uses_root::LOAD_FAILED
}
