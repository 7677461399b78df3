//! Opening the driver library and resolving entry points with `dlopen` / `dlsym` /
//! `cuGetProcAddress` (Unix only). `dlopen`, `dlsym`, `dlerror` and `getenv` are declared here
//! rather than taken from a crate, so the crate stays `no_std` with no dependencies; `libdl` is
//! linked where the C library keeps them there (glibc before 2.34, Android).

use alloc::borrow::ToOwned;
use alloc::ffi::CString;
use alloc::string::String;
use core::ffi::{c_char, c_int, c_uint, c_void, CStr};
use core::fmt;
use core::ptr::{self, NonNull};

use crate::EntryPoint;

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

/// The last `dlerror()` message of this thread.
fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated thread-local string.
    let e = unsafe { sys::dlerror() };
    if e.is_null() {
        "unknown dlerror".to_owned()
    } else {
        // SAFETY: see above; copied before any other dl* call can overwrite it.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// What went wrong while loading the driver library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LoadErrorKind {
    /// `dlopen` failed (no such file, wrong architecture, missing dependency, …).
    Open,
    /// The library exports neither `cuGetProcAddress_v2` nor `cuGetProcAddress` (a driver older
    /// than CUDA 11.3, or not a driver library).
    NoProcAddress,
}

/// Loading the driver library failed: which library, what failed, and the reason (`dlerror`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    kind: LoadErrorKind,
    library: String,
    reason: String,
}

impl LoadError {
    /// What failed.
    pub fn kind(&self) -> LoadErrorKind {
        self.kind
    }
    /// The library as it was named to `dlopen`.
    pub fn library(&self) -> &str {
        &self.library
    }
    /// The reason, as `dlerror` gave it.
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

#[cfg(feature = "std")]
impl std::error::Error for LoadError {}

/// An opened driver library. It is never closed (libcuda does not support being unloaded, and
/// tables filled from it keep its addresses), so it can be cloned and shared freely.
#[derive(Clone, Debug)]
pub struct Library {
    handle: NonNull<c_void>,
    name: String,
}

// SAFETY: a dlopen handle is a process-wide token; dlsym on it is thread-safe.
unsafe impl Send for Library {}
// SAFETY: as above.
unsafe impl Sync for Library {}

impl Library {
    /// The driver library's run-time name on Linux.
    pub const DEFAULT: &'static str = "libcuda.so.1";
    /// The environment variable that names another library (a path or a file name) to open in
    /// place of [`DEFAULT`](Self::DEFAULT).
    pub const ENV: &'static str = "CUDA_MEMPOOL_SYS_LIBCUDA";

    /// Opens the library named by [`ENV`](Self::ENV) when it is set and not empty, else
    /// [`DEFAULT`](Self::DEFAULT). The variable is read with `getenv(3)`: do not call this while
    /// another thread changes the environment.
    pub fn open_default() -> Result<Self, LoadError> {
        // SAFETY: the name is NUL-terminated; getenv returns null or a NUL-terminated string,
        // copied at once.
        let env = unsafe { sys::getenv(b"CUDA_MEMPOOL_SYS_LIBCUDA\0".as_ptr() as *const c_char) };
        let name = if env.is_null() {
            None
        } else {
            Some(unsafe { CStr::from_ptr(env) }.to_owned()).filter(|n| !n.as_bytes().is_empty())
        };
        let name = name.unwrap_or_else(|| CString::new(Self::DEFAULT).unwrap());
        // SAFETY: opening the driver library the environment names is what the dynamic linker
        // does for a linked program with LD_LIBRARY_PATH; its exports have cuda.h's signatures.
        unsafe { Self::open_c(&name) }
    }

    /// Opens the library at `path` (a bare file name is searched for as `dlopen` does).
    ///
    /// # Safety
    /// Opening a library runs its initialisers, and the tables filled from it trust its exports
    /// to have cuda.h's signatures: `path` must be a CUDA driver library or a faithful stand-in.
    pub unsafe fn open(path: &str) -> Result<Self, LoadError> {
        match CString::new(path) {
            Ok(c) => Self::open_c(&c),
            Err(_) => Err(LoadError {
                kind: LoadErrorKind::Open,
                library: path.to_owned(),
                reason: "the name contains a NUL byte".to_owned(),
            }),
        }
    }

    unsafe fn open_c(path: &CStr) -> Result<Self, LoadError> {
        let name = path.to_string_lossy().into_owned();
        sys::dlerror(); // clear a stale message
        let handle = sys::dlopen(path.as_ptr(), sys::RTLD_NOW | sys::RTLD_LOCAL);
        match NonNull::new(handle) {
            Some(handle) => Ok(Library { handle, name }),
            None => Err(LoadError {
                kind: LoadErrorKind::Open,
                library: name,
                reason: dl_error(),
            }),
        }
    }

    /// The name the library was opened by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `dlopen` handle.
    pub fn as_raw(&self) -> *mut c_void {
        self.handle.as_ptr()
    }

    /// `dlsym(handle, symbol)`: the address the library exports under `symbol`, or null.
    pub fn symbol(&self, symbol: &CStr) -> *mut c_void {
        // SAFETY: a valid handle (never closed) and a NUL-terminated name.
        unsafe { sys::dlsym(self.handle.as_ptr(), symbol.as_ptr()) }
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
            reason: dl_error(),
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

/// `dlsym(RTLD_DEFAULT, symbol)`.
pub(crate) fn default_namespace_symbol(symbol: &CStr) -> *mut c_void {
    // SAFETY: RTLD_DEFAULT and a NUL-terminated name.
    unsafe { sys::dlsym(sys::RTLD_DEFAULT, symbol.as_ptr()) }
}
