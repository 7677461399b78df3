//! The driver API as the suite sees it. Every module of the suite takes its CUDA types and functions
//! from here, never from `cuda_mempool_sys` directly, so that one place decides how the suite reaches
//! the driver (which bindings, and which calls are tracked).
pub use cuda_mempool_sys::cuda13::*;
