//! `CUDA_MEMPOOL_SYS_LIBCUDA` names the library `load()` opens. A test binary of its own, with one
//! test: it changes the environment, which no other thread may read meanwhile. With the `std`
//! feature the crate reads it through `std::env`, without through `getenv` (Unix) or
//! `GetEnvironmentVariableW`: CI runs this both ways.

#[cfg(all(
    any(unix, windows),
    any(feature = "cuda-11", feature = "cuda-12", feature = "cuda-13")
))]
#[test]
fn env_override_names_the_library() {
    #[cfg(feature = "cuda-11")]
    use cuda_mempool_sys::cuda11::EntryPoints;
    #[cfg(all(feature = "cuda-12", not(feature = "cuda-11")))]
    use cuda_mempool_sys::cuda12::EntryPoints;
    #[cfg(all(feature = "cuda-13", not(any(feature = "cuda-11", feature = "cuda-12"))))]
    use cuda_mempool_sys::cuda13::EntryPoints;
    use cuda_mempool_sys::{Library, LoadErrorKind};

    assert_eq!(Library::ENV, "CUDA_MEMPOOL_SYS_LIBCUDA");
    std::env::set_var(Library::ENV, "/nonexistent/libcuda-override.so");
    let e = EntryPoints::load().unwrap_err();
    assert_eq!(e.kind(), LoadErrorKind::Open);
    assert_eq!(e.library(), "/nonexistent/libcuda-override.so");
    println!("{e}");

    // Empty means unset: back to libcuda.so.1.
    std::env::set_var(Library::ENV, "");
    let by_default = Library::open_default();
    std::env::remove_var(Library::ENV);
    match by_default {
        Ok(lib) => assert_eq!(lib.name(), Library::DEFAULT),
        Err(e) => {
            assert_eq!(e.library(), Library::DEFAULT);
            assert!(
                std::env::var("CUDA_MEMPOOL_SYS_REQUIRE_LIBCUDA").as_deref() != Ok("1"),
                "CUDA_MEMPOOL_SYS_REQUIRE_LIBCUDA=1: {e}"
            );
        }
    }
}
