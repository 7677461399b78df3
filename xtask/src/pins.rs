//! The one place where header versions and the generator's own settings are pinned.
//! Changing anything here changes the generated files: run `cargo xtask regen` and commit both.

/// One supported CUDA major: the PyPI wheel that carries its pinned `cuda.h`.
pub struct Pin {
    pub major: u32,
    /// PyPI distribution carrying the headers (no toolkit needed).
    pub package: &'static str,
    pub version: &'static str,
    /// sha256 of the manylinux x86_64 wheel; a download that does not match is refused.
    pub sha256: &'static str,
    /// Folder inside the wheel that holds `cuda.h`.
    pub include: &'static str,
}

pub const PINS: &[Pin] = &[
    Pin {
        major: 11,
        package: "nvidia-cuda-runtime-cu11",
        version: "11.8.89",
        sha256: "92d04069a987e1fbc9213f8376d265df0f7bb42617d44f5eda1f496acea7f2d1",
        include: "nvidia/cuda_runtime/include",
    },
    Pin {
        major: 12,
        package: "nvidia-cuda-runtime-cu12",
        version: "12.9.79",
        sha256: "25bba2dfb01d48a9b59ca474a1ac43c6ebf7011f1b0b8cc44f54eb6ac48a96c3",
        include: "nvidia/cuda_runtime/include",
    },
    Pin {
        major: 13,
        package: "nvidia-cuda-runtime",
        version: "13.5.37",
        sha256: "df2b79a8852f10d1fef8c848489c49eebb5754051bf870202a862831412b179d",
        include: "nvidia/cu13/include",
    },
];

/// The MSRV the generated code targets; equals `rust-version` of cuda-mempool-sys.
pub const RUST_TARGET_MINOR: u64 = 64;

/// The one hand-written header bindgen reads and the ABI probe compiles against, relative to the
/// workspace root (`-I` the root finds it).
pub const WRAPPER: &str = "wrapper.h";

/// The crate's copy of the root `wrapper.h`, written by `cargo xtask regen` (never by hand), so that
/// the packaged crate's ABI test has it: `tests/abi.rs` compiles the probes with `-I` the crate.
pub const WRAPPER_COPY: &str = "cuda-mempool-sys/wrapper.h";

/// Where generated files go, relative to the workspace root.
pub fn bindings_path(major: u32) -> String {
    format!("cuda-mempool-sys/src/generated/cuda{major}.rs")
}
pub fn abi_c_path(major: u32) -> String {
    format!("cuda-mempool-sys/tests/abi/cuda{major}.c")
}
pub fn abi_rs_path(major: u32) -> String {
    format!("cuda-mempool-sys/tests/abi/cuda{major}.rs")
}
pub fn common_path() -> String {
    "cuda-mempool-sys/src/generated/common.rs".to_string()
}

/// The major the crate root re-exports (lib.rs's `ROOT_CUDA_MAJOR`).
pub const ROOT_MAJOR: u32 = 12;
/// The feature-union crate's file that stores every free function of the root as a pointer.
pub const FREE_FUNCTIONS_PATH: &str = "cuda-mempool-sys/tests/feature-union/uses-root/src/free_functions.rs";
