//! Opening the driver library and resolving entry points with `cuGetProcAddress`: the library is
//! opened with `dlopen` / `dlsym` on Unix (`unix.rs`) and `LoadLibraryExW` / `GetProcAddress` on
//! Windows (`windows.rs`); the rest is the same everywhere. The OS functions are declared in those
//! files rather than taken from a crate, so the crate stays `no_std` with no dependencies.

use core::ffi::{c_char, c_int, c_uint, c_void, CStr};
use core::ptr;

use crate::EntryPoint;

mod error;
mod library;
pub use error::{LoadError, LoadErrorKind};
pub use library::Library;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;
#[cfg(unix)]
pub(crate) use unix::default_namespace_symbol;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

impl Library {
    /// The driver library's run-time name: `libcuda.so.1` on Unix, `nvcuda.dll` on Windows.
    pub const DEFAULT: &'static str = os::DEFAULT;
    /// The environment variable that names another library (a path or a file name) to open in
    /// place of [`DEFAULT`](Self::DEFAULT).
    ///
    /// It is process configuration, like `LD_LIBRARY_PATH`: read whenever a library is opened by
    /// default ([`open_default`](Self::open_default), each module's `EntryPoints::load`, and the
    /// first call of a `dynamic-loading` free function, which then decides for the whole process),
    /// so it steers every crate of the process that loads the driver this way. Set it before the
    /// process starts, or at least before anything loads the driver. With the `std` feature it is
    /// read through `std::env::var_os`, under std's environment lock, so a `std::env::set_var` in
    /// another thread is no data race; without `std` (the crate is `no_std`) it is read with
    /// `getenv(3)` on Unix, which does not take that lock (change the environment from no other
    /// thread meanwhile), and `GetEnvironmentVariableW` on Windows.
    pub const ENV: &'static str = "CUDA_MEMPOOL_SYS_LIBCUDA";

    /// Opens the library named by [`ENV`](Self::ENV) when it is set and not empty, else
    /// [`DEFAULT`](Self::DEFAULT). How the variable is read, and what it steers: [`ENV`](Self::ENV).
    ///
    /// On Windows, `nvcuda.dll` is searched for in System32 only (never the current directory or
    /// `PATH`); a name from the variable is searched as [`open`](Self::open) does.
    pub fn open_default() -> Result<Self, LoadError> {
        os::open_default()
    }

    /// Opens the library at `path`. On Unix a bare file name is searched for as `dlopen` does. On
    /// Windows it is searched for in the application's directory, System32 and the directories
    /// added with `AddDllDirectory` (`LOAD_LIBRARY_SEARCH_DEFAULT_DIRS`), never the current
    /// directory or `PATH`; a fully qualified path (`C:\…`, `\\server\…`) is opened as it is, its
    /// dependencies searched for beside it too.
    ///
    /// # Safety
    /// Opening a library runs its initialisers, and the tables filled from it trust its exports
    /// to have cuda.h's signatures: `path` must be a CUDA driver library or a faithful stand-in.
    pub unsafe fn open(path: &str) -> Result<Self, LoadError> {
        os::open(path)
    }

    /// The name the library was opened by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `dlopen` handle (Windows: the `HMODULE`).
    pub fn as_raw(&self) -> *mut c_void {
        self.handle.as_ptr()
    }

    /// `dlsym(handle, symbol)` (Windows: `GetProcAddress(module, symbol)`): the address the
    /// library exports under `symbol`, or null.
    pub fn symbol(&self, symbol: &CStr) -> *mut c_void {
        // SAFETY: a valid handle (never closed) and a NUL-terminated name.
        unsafe { os::symbol(self.handle.as_ptr(), symbol) }
    }

    /// The library's `cuGetProcAddress_v2`, else its `cuGetProcAddress`.
    pub(crate) fn proc_address(&self) -> Result<ProcAddress, LoadError> {
        let v2 = self.symbol(CStr::from_bytes_with_nul(b"cuGetProcAddress_v2\0").unwrap());
        if !v2.is_null() {
            // SAFETY: the driver's cuGetProcAddress_v2 has this signature (checked by the ABI probe
            // against PFN_cuGetProcAddress_v12000).
            return Ok(ProcAddress::V2(unsafe {
                core::mem::transmute::<*mut c_void, GetProcAddressV2>(v2)
            }));
        }
        let v1 = self.symbol(CStr::from_bytes_with_nul(b"cuGetProcAddress\0").unwrap());
        if !v1.is_null() {
            // SAFETY: as above, PFN_cuGetProcAddress_v11030.
            return Ok(ProcAddress::V1(unsafe {
                core::mem::transmute::<*mut c_void, GetProcAddressV1>(v1)
            }));
        }
        Err(LoadError {
            kind: LoadErrorKind::NoProcAddress,
            library: self.name.clone(),
            reason: os::last_error(),
        })
    }
}

// cudaTypedefs.h's PFN_cuGetProcAddress_v12000 and _v11030, with CUresult and
// CUdriverProcAddressQueryResult as the unsigned ints they are (xtask's allowlist::LOADER_PFNS).
type GetProcAddressV2 = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_uint) -> c_uint;
type GetProcAddressV1 = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> c_uint;

pub(crate) enum ProcAddress {
    V2(GetProcAddressV2),
    V1(GetProcAddressV1),
}

impl ProcAddress {
    /// The entry point, or null when the driver does not have it at that version.
    pub(crate) fn resolve(&self, e: &EntryPoint) -> *mut c_void {
        const SUCCESS: c_uint = 0; // CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS
        let mut p = ptr::null_mut();
        let name = e.c_name_cstr().as_ptr();
        // SAFETY: valid name and out-pointers; the driver writes p (and the status).
        let ok = unsafe {
            match self {
                ProcAddress::V2(f) => {
                    let mut status = u32::MAX;
                    f(name, &mut p, e.cuda_version, e.flags, &mut status) == SUCCESS && status == SUCCESS
                }
                ProcAddress::V1(f) => f(name, &mut p, e.cuda_version, e.flags) == SUCCESS,
            }
        };
        if ok {
            p
        } else {
            ptr::null_mut()
        }
    }
}
