//! What a failed load of the driver library reports: [`LoadErrorKind`] and [`LoadError`] (the
//! crate root re-exports both), built by `loader.rs` and the OS files beside this one.

use alloc::string::String;
use core::fmt;

/// What went wrong while loading the driver library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LoadErrorKind {
    /// `dlopen` (Windows: `LoadLibraryExW`) failed: no such file, wrong architecture, missing
    /// dependency, …
    Open,
    /// The library exports neither `cuGetProcAddress_v2` nor `cuGetProcAddress` (a driver older
    /// than CUDA 11.3, or not a driver library).
    NoProcAddress,
}

/// Loading the driver library failed: which library, what failed, and the reason (`dlerror`; on
/// Windows the `GetLastError` code and its `FormatMessageW` text).
///
/// It is `Display` always and `std::error::Error` only with the crate's `std` feature (the crate
/// is `no_std`): without it, `?` into `Box<dyn std::error::Error>` fails with "the trait
/// `std::error::Error` is not implemented for `LoadError`". Enable `std`
/// (`cuda-mempool-sys = { features = ["std"] }`), or convert with `to_string()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    pub(super) kind: LoadErrorKind,
    pub(super) library: String,
    pub(super) reason: String,
}

impl LoadError {
    /// What failed.
    pub fn kind(&self) -> LoadErrorKind {
        self.kind
    }
    /// The library as it was named to `dlopen` / `LoadLibraryExW`.
    pub fn library(&self) -> &str {
        &self.library
    }
    /// The reason, as `dlerror` gave it; on Windows the function that failed, where it searched,
    /// and the error: `LoadLibraryExW (System32 only) failed with error 126: The specified module
    /// could not be found.`
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            LoadErrorKind::Open => write!(
                f,
                "cannot open the CUDA driver library {}: {}",
                self.library, self.reason
            ),
            LoadErrorKind::NoProcAddress => write!(
                f,
                "{} exports neither cuGetProcAddress_v2 nor cuGetProcAddress (older than CUDA 11.3, or not \
                 the driver library): {}",
                self.library, self.reason
            ),
        }
    }
}

/// With the `std` feature only.
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
impl std::error::Error for LoadError {}
