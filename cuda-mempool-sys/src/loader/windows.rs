//! `LoadLibraryExW` / `GetProcAddress` and the few other kernel32 functions around them, declared
//! here rather than taken from a crate (windows-sys), so the crate stays `no_std` with no
//! dependencies. kernel32 is part of every Windows program.
//!
//! Where the library is searched, following NVIDIA's advice to load the driver from System32 only:
//! * the default name `nvcuda.dll`: `LOAD_LIBRARY_SEARCH_SYSTEM32`, never the current directory,
//!   the application's directory or `PATH`;
//! * a name given by `CUDA_MEMPOOL_SYS_LIBCUDA` or `Library::open`: `LOAD_LIBRARY_SEARCH_DEFAULT_DIRS`
//!   (the application's directory, System32, directories added with `AddDllDirectory`), plus
//!   `LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR` for a fully qualified path (`C:\…`, `\\server\…`), so its
//!   own dependencies are found beside it. Never the current directory or `PATH`.

use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::{c_char, c_void, CStr};
use core::fmt::Write as _;
use core::ptr::{self, NonNull};

use super::error::{LoadError, LoadErrorKind};
use super::library::Library;

mod sys {
    use core::ffi::{c_char, c_void};

    #[link(name = "kernel32")]
    extern "system" {
        pub fn LoadLibraryExW(name: *const u16, file: *mut c_void, flags: u32) -> *mut c_void;
        pub fn GetProcAddress(module: *mut c_void, name: *const c_char) -> *mut c_void;
        pub fn GetLastError() -> u32;
        pub fn SetThreadErrorMode(new_mode: u32, old_mode: *mut u32) -> i32;
        #[cfg(not(feature = "std"))]
        pub fn GetEnvironmentVariableW(name: *const u16, buffer: *mut u16, size: u32) -> u32;
        pub fn FormatMessageW(
            flags: u32,
            source: *const c_void,
            message_id: u32,
            language_id: u32,
            buffer: *mut u16,
            size: u32,
            arguments: *mut c_void,
        ) -> u32;
    }

    pub const LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR: u32 = 0x0000_0100;
    pub const LOAD_LIBRARY_SEARCH_SYSTEM32: u32 = 0x0000_0800;
    pub const LOAD_LIBRARY_SEARCH_DEFAULT_DIRS: u32 = 0x0000_1000;
    pub const SEM_FAILCRITICALERRORS: u32 = 0x0001;
    pub const FORMAT_MESSAGE_IGNORE_INSERTS: u32 = 0x0000_0200;
    pub const FORMAT_MESSAGE_FROM_SYSTEM: u32 = 0x0000_1000;
}

/// The driver library's name; it lives in System32.
pub(super) const DEFAULT: &str = "nvcuda.dll";

/// `s` as a NUL-terminated UTF-16 string.
#[cfg(not(feature = "std"))]
fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(Some(0)).collect()
}

/// `GetLastError()` as `error N: <FormatMessageW's text>`.
fn describe(code: u32) -> String {
    let mut buf = [0u16; 512];
    // SAFETY: a system message, no inserts, into a buffer of the size given.
    let n = unsafe {
        sys::FormatMessageW(
            sys::FORMAT_MESSAGE_FROM_SYSTEM | sys::FORMAT_MESSAGE_IGNORE_INSERTS,
            ptr::null(),
            code,
            0,
            buf.as_mut_ptr(),
            buf.len() as u32,
            ptr::null_mut(),
        )
    };
    let text = String::from_utf16_lossy(&buf[..(n as usize).min(buf.len())]);
    let text = text.trim_end();
    let mut out = String::new();
    let _ = write!(out, "error {code}");
    if !text.is_empty() {
        let _ = write!(out, ": {text}");
    }
    out
}

/// The reason `GetProcAddress` last failed on this thread.
pub(super) fn last_error() -> String {
    // SAFETY: no preconditions.
    let code = unsafe { sys::GetLastError() };
    let mut out = String::from("GetProcAddress failed with ");
    out.push_str(&describe(code));
    out
}

/// The value of the environment variable `name` (UTF-16, no NUL), or None when unset or empty:
/// through std's environment (under its lock) with the `std` feature.
#[cfg(feature = "std")]
fn env_var(name: &str) -> Option<Vec<u16>> {
    use std::os::windows::ffi::OsStrExt;
    let value: Vec<u16> = std::env::var_os(name)?.encode_wide().collect();
    (!value.is_empty()).then_some(value)
}

/// The value of the environment variable `name` (UTF-16, no NUL), or None when unset or empty.
/// `GetEnvironmentVariableW` sees what `std::env::set_var` sets (the C runtime's `getenv` may not).
#[cfg(not(feature = "std"))]
fn env_var(name: &str) -> Option<Vec<u16>> {
    let name = wide(name);
    let mut buf: Vec<u16> = Vec::new();
    loop {
        // SAFETY: a NUL-terminated name and a buffer of the size given (0: only asks the size).
        let n = unsafe { sys::GetEnvironmentVariableW(name.as_ptr(), buf.as_mut_ptr(), buf.len() as u32) } as usize;
        if n == 0 {
            return None; // unset (ERROR_ENVVAR_NOT_FOUND) or empty
        }
        if n < buf.len() {
            buf.truncate(n); // n characters copied, without the NUL
            return Some(buf);
        }
        // Too small: n is the size needed, NUL included. (The value may change meanwhile: retry.)
        buf.resize(n, 0);
    }
}

/// The library `CUDA_MEMPOOL_SYS_LIBCUDA` names (std's environment with `std`, else
/// `GetEnvironmentVariableW`), else [`DEFAULT`] from System32 only.
pub(super) fn open_default() -> Result<Library, LoadError> {
    // SAFETY: as for `Library::open_default`: the driver library, or the one the user names.
    unsafe {
        match env_var("CUDA_MEMPOOL_SYS_LIBCUDA") {
            Some(name) => open_wide(name, false),
            None => open_wide(DEFAULT.encode_utf16().collect(), true),
        }
    }
}

/// A name given by the user (see the module's documentation for where it is searched).
pub(super) unsafe fn open(path: &str) -> Result<Library, LoadError> {
    if path.contains('\0') {
        return Err(LoadError {
            kind: LoadErrorKind::Open,
            library: path.into(),
            reason: "the name contains a NUL byte".into(),
        });
    }
    open_wide(path.encode_utf16().collect(), false)
}

/// `C:\…`, `C:/…`, `\\server\…`, `\\?\…`: a path `LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR` accepts.
fn fully_qualified(name: &[u16]) -> bool {
    let sep = |c: u16| c == u16::from(b'\\') || c == u16::from(b'/');
    let letter = |c: u16| c < 0x80 && (c as u8).is_ascii_alphabetic();
    match name {
        [d, c, s, ..] if letter(*d) && *c == u16::from(b':') && sep(*s) => true,
        [a, b, ..] => sep(*a) && sep(*b),
        _ => false,
    }
}

/// `name`: UTF-16 without the NUL. `system32`: the default driver library (System32 only).
unsafe fn open_wide(mut name: Vec<u16>, system32: bool) -> Result<Library, LoadError> {
    let shown = String::from_utf16_lossy(&name);
    let (flags, search) = if system32 {
        (sys::LOAD_LIBRARY_SEARCH_SYSTEM32, "System32 only")
    } else if fully_qualified(&name) {
        (
            sys::LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | sys::LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR,
            "that path; its dependencies also beside it",
        )
    } else {
        (
            sys::LOAD_LIBRARY_SEARCH_DEFAULT_DIRS,
            "the application's directory, System32 and AddDllDirectory directories",
        )
    };
    name.push(0);
    // No "cannot find the DLL" dialog box: the failure is reported as an error instead.
    let mut old_mode = 0;
    let guarded = sys::SetThreadErrorMode(sys::SEM_FAILCRITICALERRORS, &mut old_mode) != 0;
    let handle = sys::LoadLibraryExW(name.as_ptr(), ptr::null_mut(), flags);
    let code = sys::GetLastError();
    if guarded {
        sys::SetThreadErrorMode(old_mode, ptr::null_mut());
    }
    match NonNull::new(handle) {
        Some(handle) => Ok(Library { handle, name: shown }),
        None => {
            let mut reason = String::from("LoadLibraryExW (searching ");
            reason.push_str(search);
            reason.push_str(") failed with ");
            reason.push_str(&describe(code));
            Err(LoadError {
                kind: LoadErrorKind::Open,
                library: shown,
                reason,
            })
        }
    }
}

/// `GetProcAddress(module, symbol)`.
pub(super) unsafe fn symbol(handle: *mut c_void, symbol: &CStr) -> *mut c_void {
    sys::GetProcAddress(handle, symbol.as_ptr() as *const c_char)
}
