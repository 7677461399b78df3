//! The static description of one entry of a generated `EntryPoints` table.

use core::ffi::CStr;
use core::fmt;

/// One entry of an `EntryPoints` table: which symbol fills it and how `cuGetProcAddress` is asked
/// for it. Every major's `EntryPoints::ENTRIES` lists them in field order.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct EntryPoint {
    /// The field's name, which is the symbol the library exports (`cuMemAlloc_v2`,
    /// `cuMemAllocAsync_ptsz`).
    pub symbol: &'static str,
    /// The name `cuGetProcAddress` is asked for: cuda.h's API name (`cuMemAlloc`,
    /// `cuMemAllocAsync`).
    pub c_name: &'static str,
    /// The CUDA version at which the bound ABI appeared (`1000 * major + 10 * minor`, e.g. 3020 for
    /// `cuMemAlloc_v2`), from cudaTypedefs.h; passed to `cuGetProcAddress`.
    pub cuda_version: i32,
    /// Whether this is the per-thread-default-stream variant (`_ptsz`).
    pub per_thread: bool,
    /// The flags passed to `cuGetProcAddress`: `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM` for
    /// per-thread entries, `CU_GET_PROC_ADDRESS_LEGACY_STREAM` otherwise.
    pub flags: u64,
    /// Whether a build without `dynamic-loading` links this symbol: the module's free function of
    /// this name is then the driver's `extern` symbol. `false` for the functions the crate never
    /// links, being newer than drivers a program must still start on (the checkpoint API of CUDA
    /// 12.8, drivers R570+): their free function is the module's `global` one in every feature
    /// combination, a call through the process's table, which `from_linked` holds too.
    pub linked: bool,
    symbol_z: &'static str,
    c_name_z: &'static str,
}

impl EntryPoint {
    // Written by the generator only; `*_z` are the same names with a trailing NUL.
    #[allow(clippy::too_many_arguments)]
    pub(crate) const fn new(
        symbol: &'static str,
        symbol_z: &'static str,
        c_name: &'static str,
        c_name_z: &'static str,
        cuda_version: i32,
        per_thread: bool,
        flags: u64,
        linked: bool,
    ) -> Self {
        EntryPoint {
            symbol,
            c_name,
            cuda_version,
            per_thread,
            flags,
            linked,
            symbol_z,
            c_name_z,
        }
    }

    /// [`symbol`](Self::symbol) as a C string, for `dlsym`.
    pub fn symbol_cstr(&self) -> &'static CStr {
        // SAFETY: the generator writes `symbol_z` as `symbol` plus one NUL, and symbols hold none.
        unsafe { CStr::from_bytes_with_nul_unchecked(self.symbol_z.as_bytes()) }
    }

    /// [`c_name`](Self::c_name) as a C string, for `cuGetProcAddress`.
    pub fn c_name_cstr(&self) -> &'static CStr {
        // SAFETY: as for `symbol_cstr`.
        unsafe { CStr::from_bytes_with_nul_unchecked(self.c_name_z.as_bytes()) }
    }
}

impl fmt::Debug for EntryPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EntryPoint")
            .field("symbol", &self.symbol)
            .field("c_name", &self.c_name)
            .field("cuda_version", &self.cuda_version)
            .field("per_thread", &self.per_thread)
            .field("flags", &self.flags)
            .field("linked", &self.linked)
            .finish()
    }
}
