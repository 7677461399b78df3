//! `dlopen` / `dlsym` / `dlerror` / `getenv`, declared here rather than taken from a crate, so the
//! crate stays `no_std` with no dependencies; `libdl` is linked where the C library keeps them
//! there (glibc before 2.34, Android). With the `std` feature the environment is read through std
//! instead of `getenv`.

use alloc::borrow::ToOwned;
use alloc::ffi::CString;
use alloc::string::String;
#[cfg(not(feature = "std"))]
use core::ffi::c_char;
use core::ffi::{c_void, CStr};
use core::ptr::NonNull;

use super::error::{LoadError, LoadErrorKind};
use super::library::Library;

mod sys {
    use core::ffi::{c_char, c_int, c_void};

    #[cfg_attr(
        any(all(target_os = "linux", target_env = "gnu"), target_os = "android"),
        link(name = "dl")
    )]
    extern "C" {
        pub fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
        pub fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
        pub fn dlerror() -> *mut c_char;
    }
    #[cfg(not(feature = "std"))]
    extern "C" {
        pub fn getenv(name: *const c_char) -> *mut c_char;
    }

    pub const RTLD_NOW: c_int = 2;
    #[cfg(any(target_os = "macos", target_os = "ios", target_os = "tvos", target_os = "watchos"))]
    pub const RTLD_LOCAL: c_int = 4;
    #[cfg(target_os = "netbsd")]
    pub const RTLD_LOCAL: c_int = 0x200;
    #[cfg(not(any(
        target_os = "macos",
        target_os = "ios",
        target_os = "tvos",
        target_os = "watchos",
        target_os = "netbsd"
    )))]
    pub const RTLD_LOCAL: c_int = 0;

    #[cfg(any(target_os = "linux", all(target_os = "android", target_pointer_width = "64")))]
    pub const RTLD_DEFAULT: *mut c_void = core::ptr::null_mut();
    #[cfg(all(target_os = "android", target_pointer_width = "32"))]
    pub const RTLD_DEFAULT: *mut c_void = 0xffff_ffff_usize as *mut c_void;
    // Apple, the BSDs, illumos / Solaris.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub const RTLD_DEFAULT: *mut c_void = -2isize as *mut c_void;
}

/// The driver library's run-time name.
pub(super) const DEFAULT: &str = "libcuda.so.1";

/// The last `dlerror()` message of this thread.
pub(super) fn last_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated thread-local string.
    let e = unsafe { sys::dlerror() };
    if e.is_null() {
        "unknown dlerror".to_owned()
    } else {
        // SAFETY: see above; copied before any other dl* call can overwrite it.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// `CUDA_MEMPOOL_SYS_LIBCUDA`, through std's environment (under its lock, so a
/// `std::env::set_var` in another thread is no data race).
#[cfg(feature = "std")]
fn env_library() -> Option<CString> {
    use std::os::unix::ffi::OsStringExt;
    // An environment value holds no NUL.
    CString::new(std::env::var_os(Library::ENV)?.into_vec()).ok()
}

/// `CUDA_MEMPOOL_SYS_LIBCUDA`, through `getenv(3)` (no std: it does not take std's lock).
#[cfg(not(feature = "std"))]
fn env_library() -> Option<CString> {
    // SAFETY: the name is NUL-terminated; getenv returns null or a NUL-terminated string,
    // copied at once.
    let env = unsafe { sys::getenv(b"CUDA_MEMPOOL_SYS_LIBCUDA\0".as_ptr() as *const c_char) };
    // SAFETY: as above.
    (!env.is_null()).then(|| unsafe { CStr::from_ptr(env) }.to_owned())
}

/// The library `CUDA_MEMPOOL_SYS_LIBCUDA` names (when set and not empty), else [`DEFAULT`].
pub(super) fn open_default() -> Result<Library, LoadError> {
    let name = env_library()
        .filter(|n| !n.as_bytes().is_empty())
        .unwrap_or_else(|| CString::new(DEFAULT).unwrap());
    // SAFETY: opening the driver library the environment names is what the dynamic linker
    // does for a linked program with LD_LIBRARY_PATH; its exports have cuda.h's signatures.
    unsafe { open_c(&name) }
}

/// `dlopen(path, RTLD_NOW | RTLD_LOCAL)`.
pub(super) unsafe fn open(path: &str) -> Result<Library, LoadError> {
    match CString::new(path) {
        Ok(c) => open_c(&c),
        Err(_) => Err(LoadError {
            kind: LoadErrorKind::Open,
            library: path.to_owned(),
            reason: "the name contains a NUL byte".to_owned(),
        }),
    }
}

unsafe fn open_c(path: &CStr) -> Result<Library, LoadError> {
    let name = path.to_string_lossy().into_owned();
    sys::dlerror(); // clear a stale message
    let handle = sys::dlopen(path.as_ptr(), sys::RTLD_NOW | sys::RTLD_LOCAL);
    match NonNull::new(handle) {
        Some(handle) => Ok(Library { handle, name }),
        None => Err(LoadError {
            kind: LoadErrorKind::Open,
            library: name,
            reason: last_error(),
        }),
    }
}

/// `dlsym(handle, symbol)`.
pub(super) unsafe fn symbol(handle: *mut c_void, symbol: &CStr) -> *mut c_void {
    sys::dlsym(handle, symbol.as_ptr())
}

/// `dlsym(RTLD_DEFAULT, symbol)`.
pub(crate) fn default_namespace_symbol(symbol: &CStr) -> *mut c_void {
    // SAFETY: RTLD_DEFAULT and a NUL-terminated name.
    unsafe { sys::dlsym(sys::RTLD_DEFAULT, symbol.as_ptr()) }
}
