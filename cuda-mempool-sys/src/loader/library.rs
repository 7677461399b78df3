//! An opened driver library ([`Library`], re-exported at the crate root): its handle and name.
//! How it is opened and read (`open`, `symbol`, …) is `loader.rs`'s, through the OS files.

use alloc::string::String;
use core::ffi::c_void;
use core::ptr::NonNull;

/// An opened driver library. It is never closed (libcuda does not support being unloaded, and
/// tables filled from it keep its addresses), so it can be cloned and shared freely.
#[derive(Clone, Debug)]
pub struct Library {
    pub(super) handle: NonNull<c_void>,
    pub(super) name: String,
}

// SAFETY: a dlopen handle (an HMODULE) is a process-wide token; dlsym (GetProcAddress) on it is
// thread-safe.
unsafe impl Send for Library {}
// SAFETY: as above.
unsafe impl Sync for Library {}
