//! The fixed Rust text of a major's entry-point table, around the pieces entry_points.rs writes
//! per function: `EntryPoints` (fields, `ENTRIES`, `EMPTY`, the loaders, `addresses`, `missing`,
//! the call methods), its `Default` and `Debug`, the `global` module (the process's table, loaded
//! once, and a free function per entry), the `dynamic-loading` re-exports and `mode()`.

/// What entry_points.rs wrote for every function, joined, and what the text needs besides.
pub struct Parts<'a> {
    /// The CUDA major of the module (its path in doctests: `cuda_mempool_sys::cudaNN`).
    pub major: u32,
    /// How many entry points the table has.
    pub n: usize,
    /// The first entry's symbol (`install` compares the table's first address with it).
    pub first: &'a str,
    pub fields: &'a str,
    pub entries: &'a str,
    pub empty: &'a str,
    pub from_fn: &'a str,
    pub linked: &'a str,
    pub addrs: &'a str,
    pub calls: &'a str,
    pub globals: &'a str,
    /// The symbols, comma-separated, re-exported from `global` under `dynamic-loading`.
    pub reexports: &'a str,
    /// The symbols never linked (allowlist.rs's `table_only`), re-exported from `global` in every
    /// feature combination.
    pub table_only: &'a [String],
}

/// The table's Rust source: `parts` in their places.
pub fn rust(parts: Parts) -> String {
    let Parts {
        major,
        n,
        first,
        fields,
        entries,
        empty,
        from_fn,
        linked,
        addrs,
        calls,
        globals,
        reexports,
        table_only,
    } = parts;
    let listed = table_only
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ");
    // What the docs say of the table-only functions, where the module has any.
    let (from_linked_note, global_note, install_note, mode_note, always_global) = if table_only.is_empty() {
        Default::default()
    } else {
        (
            format!(
                "\n    ///\n    /// Never linked in any feature combination: the entries whose\n    /// [`EntryPoint::linked`](crate::EntryPoint::linked) is false ({listed}), newer than drivers\n    /// a program must still start on. Their free functions are [`global`]'s, so this table holds\n    /// those, and referencing them links nothing."
            ),
            format!(
                "\n///\n/// Except {listed}: never linked, the module's functions of those names are this module's in\n/// every feature combination (a program that uses them starts on a driver that lacks them)."
            ),
            format!(" (except {listed}, which are never linked: this module's own)"),
            format!("\n/// Whatever the mode, {listed} are [`global`]'s: never linked."),
            format!(
                "\n/// Never linked (table only): the module's functions of these names are [`global`]'s in every\n/// feature combination, so a program that uses them starts on a driver that lacks them.\npub use self::global::{{{}}};\n",
                table_only.join(", ")
            ),
        )
    };
    format!(
        r#"/// Every function of this module as an optional function pointer, filled at run time.
///
/// Fields carry the symbol names of the functions (`cuMemAlloc_v2`, `cuMemAllocAsync_ptsz`, …); a
/// field is `None` when the driver library lacks that entry point. Each field has a call method of
/// the same name and arguments that returns `CUDA_ERROR_NOT_FOUND` for a missing entry.
/// [`ENTRIES`](Self::ENTRIES) describes every field (in field order) and [`missing`](Self::missing)
/// lists the absent ones.
///
/// Fill it with [`load`](Self::load) (the driver's `cuGetProcAddress`, Unix and Windows),
/// [`from_dlsym`](Self::from_dlsym) (`dlsym`; `GetProcAddress` on Windows),
/// `from_default_namespace` (`dlsym(RTLD_DEFAULT, …)`, Unix), [`from_linked`](Self::from_linked)
/// (the module's free functions), or your own resolver with [`from_fn`](Self::from_fn). Besides
/// the fields' names, the table has a call method for each C name cuda.h maps to a versioned
/// symbol (`cuMemAlloc` calls `cuMemAlloc_v2`).
///
/// # The table's contract
/// An entry that is `Some` is the driver's function of the field's name, at the ABI its
/// [`ENTRIES`](Self::ENTRIES) row gives (or a function with the same contract: an interposer's).
/// The tables this type makes keep it: [`load`](Self::load), [`from_library`](Self::from_library),
/// [`from_proc_address`](Self::from_proc_address), [`from_dlsym`](Self::from_dlsym),
/// `from_default_namespace`, [`from_linked`](Self::from_linked) and [`EMPTY`](Self::EMPTY) (no
/// entry at all); [`from_fn`](Self::from_fn) makes it its resolver's promise. The fields are
/// public and the type is `Copy`, so a table built or edited by other code need not keep it: safe
/// code can put `cuStreamQuery` where `cuStreamSynchronize` was. The type does not promise it;
/// whoever calls a call method does (its `# Safety`). Code that takes a table from its caller
/// cannot check the entries, so it takes the promise with the table, in an `unsafe fn`:
///
/// ```
/// use cuda_mempool_sys::cuda{major}::{{CUresult, CUstream, EntryPoints, CU_STREAM_LEGACY}};
///
/// /// Calls the driver through a table it can vouch for.
/// pub struct Driver(EntryPoints);
///
/// impl Driver {{
///     /// The driver's own functions: a loader's table keeps the contract.
///     pub fn load() -> Result<Driver, cuda_mempool_sys::LoadError> {{
///         Ok(Driver(EntryPoints::load()?))
///     }}
///
///     /// # Safety
///     /// Every entry of `table` is the driver's function of its name (`EntryPoints`' contract).
///     pub unsafe fn from_table(table: EntryPoints) -> Driver {{
///         Driver(table)
///     }}
///
///     /// Waits for the work queued on `stream`.
///     ///
///     /// # Safety
///     /// `stream` is a live stream of this process, or a special one.
///     pub unsafe fn synchronize(&self, stream: CUstream) -> Result<(), CUresult> {{
///         // SAFETY: the entry is the driver's cuStreamSynchronize (`load`, or the promise of
///         // `from_table`'s caller); the stream is our caller's promise.
///         unsafe {{ self.0.cuStreamSynchronize(stream) }}.result()
///     }}
/// }}
///
/// // Safe code can edit a table so that an entry is another function...
/// let mut edited = EntryPoints::EMPTY;
/// edited.cuStreamSynchronize = edited.cuStreamQuery;
/// // ...so only `unsafe` code can hand one to the wrapper, promising what it holds.
/// let _ = edited;
///
/// match Driver::load() {{
///     // SAFETY: the legacy default stream is a special stream.
///     Ok(driver) => println!("{{:?}}", unsafe {{ driver.synchronize(CU_STREAM_LEGACY) }}),
///     Err(e) => println!("no driver here: {{e}}"),
/// }}
/// ```
#[derive(Clone, Copy)]
pub struct EntryPoints {{
{fields}}}

#[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
impl EntryPoints {{
    /// How many entry points the table has.
    pub const LEN: usize = {n};

    /// Each field's symbol, the C name and CUDA version `cuGetProcAddress` is asked for, and the
    /// per-thread-default-stream flag, in field order.
    pub const ENTRIES: &'static [crate::EntryPoint; {n}] = &[
{entries}    ];

    /// A table with no entry point: every call returns `CUDA_ERROR_NOT_FOUND`.
    pub const EMPTY: Self = Self {{
{empty}    }};

    /// Fills the table with what `resolve` returns for each entry, null meaning missing.
    ///
    /// # Safety
    /// Every non-null pointer `resolve` returns must be a function with the signature of the field
    /// it fills (the C function the entry describes, at that entry's CUDA version), valid for as
    /// long as the table is used.
    pub unsafe fn from_fn<F: FnMut(&'static crate::EntryPoint) -> *mut ::core::ffi::c_void>(mut resolve: F) -> Self {{
        Self {{
{from_fn}        }}
    }}

    /// The module's free functions themselves, in every feature combination. Linked (no
    /// `dynamic-loading`) they are the driver's symbols, and referencing them all links them all:
    /// a program that calls this does not link (or start) against a driver that lacks one of them.
    /// With `dynamic-loading` (enabled by any crate of the graph) they are [`global`]'s functions:
    /// each entry calls through the process's table, which loads the driver on first use, so no
    /// entry is `None` and a call answers [`global::LOAD_FAILED`] without a driver library
    /// ([`mode`] tells which).{from_linked_note}
    pub fn from_linked() -> Self {{
        Self {{
{linked}        }}
    }}

    /// The driver library (`libcuda.so.1`; `nvcuda.dll` from System32 on Windows; or the file
    /// named by `CUDA_MEMPOOL_SYS_LIBCUDA`), opened and resolved through its `cuGetProcAddress`
    /// ([`from_proc_address`](Self::from_proc_address)). The library is never closed.
    #[cfg(any(unix, windows))]
    pub fn load() -> ::core::result::Result<Self, crate::LoadError> {{
        Self::from_proc_address(&crate::Library::open_default()?)
    }}

    /// [`load`](Self::load) from the library at `path` (a file name is searched for as
    /// `crate::Library::open` does).
    ///
    /// # Safety
    /// Opening a library runs its initialisers, and its entry points are trusted to have cuda.h's
    /// signatures: `path` must be a CUDA driver library (or a faithful stand-in).
    #[cfg(any(unix, windows))]
    pub unsafe fn from_library(path: &str) -> ::core::result::Result<Self, crate::LoadError> {{
        Self::from_proc_address(&crate::Library::open(path)?)
    }}

    /// Each entry from the library's `cuGetProcAddress_v2` (`cuGetProcAddress` before CUDA 12.0),
    /// asked for the entry's C name at its CUDA version, with the per-thread-default-stream flag
    /// for `_ptsz` entries. Fails only when the library has neither function (drivers before 11.3).
    #[cfg(any(unix, windows))]
    pub fn from_proc_address(library: &crate::Library) -> ::core::result::Result<Self, crate::LoadError> {{
        let resolver = library.proc_address()?;
        // SAFETY: the driver returns the entry point of the requested name and ABI version, which
        // is the signature of the field (checked against cudaTypedefs.h by the ABI probe).
        Ok(unsafe {{ Self::from_fn(|e| resolver.resolve(e)) }})
    }}

    /// Each entry from `dlsym(library, symbol)` (`GetProcAddress` on Windows): the symbol the
    /// library exports under the field's name, whatever CUDA version it reports.
    #[cfg(any(unix, windows))]
    pub fn from_dlsym(library: &crate::Library) -> Self {{
        // SAFETY: a driver library exports each symbol with cuda.h's signature for that symbol.
        unsafe {{ Self::from_fn(|e| library.symbol(e.symbol_cstr())) }}
    }}

    /// Each entry from `dlsym(RTLD_DEFAULT, symbol)`: what the dynamic linker binds for a linked
    /// program (`LD_PRELOAD` libraries first). Entries of a library opened by [`load`](Self::load)
    /// are not there (it is opened `RTLD_LOCAL`). Unix only: Windows has no default namespace.
    #[cfg(unix)]
    #[cfg_attr(docsrs, doc(cfg(unix)))]
    pub fn from_default_namespace() -> Self {{
        // SAFETY: as for `from_dlsym`; the process's libraries export cuda.h's symbols.
        unsafe {{ Self::from_fn(|e| crate::loader::default_namespace_symbol(e.symbol_cstr())) }}
    }}

    /// The address of each entry (null where missing), in field order.
    pub fn addresses(&self) -> [*const ::core::ffi::c_void; {n}] {{
        [
{addrs}        ]
    }}

    /// The entries the table lacks.
    pub fn missing(&self) -> impl Iterator<Item = &'static crate::EntryPoint> {{
        Self::ENTRIES
            .iter()
            .zip(self.addresses())
            .filter(|(_, p)| p.is_null())
            .map(|(e, _)| e)
    }}

    /// The symbol names of the entries the table lacks.
    pub fn missing_symbols(&self) -> impl Iterator<Item = &'static str> {{
        self.missing().map(|e| e.symbol)
    }}

{calls}
}}

impl ::core::default::Default for EntryPoints {{
    fn default() -> Self {{
        Self::EMPTY
    }}
}}

impl ::core::fmt::Debug for EntryPoints {{
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {{
        f.debug_map()
            .entries(Self::ENTRIES.iter().map(|e| e.symbol).zip(self.addresses()))
            .finish()
    }}
}}

/// The module's functions as free functions that call through one table for the whole process.
/// With the `dynamic-loading` feature the module's own functions are these, so code written
/// against the C names compiles and runs the same in every feature combination. Linked (without
/// `dynamic-loading`) the module's functions are the driver's symbols and this module stands
/// beside them: only calls to `global::*` reach its table.{global_note}
///
/// The table loads itself on the first call ([`EntryPoints::load`], once per process, thread-safe),
/// unless one was [`install`](global::install)ed before. A function answers
/// [`LOAD_FAILED`](global::LOAD_FAILED) when the driver library could not be loaded (`load_error`
/// says why) and `CUDA_ERROR_NOT_FOUND` when the library lacks its entry.
pub mod global {{
    use super::*;
    use ::core::sync::atomic::{{AtomicPtr, AtomicU8, Ordering}};

    static TABLE: AtomicPtr<EntryPoints> = AtomicPtr::new(::core::ptr::null_mut());
    /// 0: not loaded yet; 1: loading; 2: a table is there; 3: loading failed.
    static STATE: AtomicU8 = AtomicU8::new(0);
    #[cfg(any(unix, windows))]
    static LOAD_ERROR: AtomicPtr<crate::LoadError> = AtomicPtr::new(::core::ptr::null_mut());

    /// What every function answers when the driver library could not be loaded:
    /// `CUresult::CUDA_MEMPOOL_SYS_LOAD_FAILED` (`0x4d500001`), the crate's own code, outside the
    /// driver's range (no driver answer reads as it); distinct from a missing entry's
    /// `CUDA_ERROR_NOT_FOUND`. The driver answers `CUDA_ERROR_INVALID_VALUE` if asked to name it
    /// (`cuGetErrorString`); its `Display` and `name()` need no driver.
    pub const LOAD_FAILED: CUresult = CUresult::CUDA_MEMPOOL_SYS_LOAD_FAILED;

    /// Make `table` the one every function of this module calls through, from now on, in every
    /// crate of the process (call it before the first call: a process has one table; the last one
    /// installed wins).
    ///
    /// With `dynamic-loading`, [`EntryPoints::from_linked`] holds this module's own functions:
    /// installing it changes nothing (it is the process's table already), rather than making each
    /// call call itself.
    ///
    /// Linked (no crate of the graph enables `dynamic-loading`), the module's free functions are the
    /// driver's symbols{install_note} and never read this table: installing changes what `global::*` calls
    /// reach, nothing else. Putting a mock under the free functions works only with
    /// `dynamic-loading`.
    ///
    /// # Safety
    /// Every entry of `table` must be the driver's function of that name (or one with the same
    /// contract: an interposer's), for the whole life of the process: every caller of this
    /// module's safe-to-name functions, in any crate, relies on what it reaches (an entry that
    /// answers `cuStreamSynchronize` with `cuStreamQuery` makes their reads race). No entry may be
    /// one of this module's own functions (besides a whole `from_linked()` table, above).
    pub unsafe fn install(table: &'static EntryPoints) {{
        if table.addresses()[0] == {first} as *const ::core::ffi::c_void {{
            return;
        }}
        TABLE.store(table as *const EntryPoints as *mut EntryPoints, Ordering::Release);
        STATE.store(2, Ordering::Release);
    }}

    /// The process's table: the installed one, else the driver's, loaded on first use; `None`
    /// when it could not be loaded (or, where loading is not supported, none was installed).
    #[inline]
    pub fn table() -> ::core::option::Option<&'static EntryPoints> {{
        // SAFETY: only `install` and `load_once` store here, only pointers to tables that live
        // forever.
        if let Some(t) = unsafe {{ TABLE.load(Ordering::Acquire).as_ref() }} {{
            return Some(t);
        }}
        load_once();
        unsafe {{ TABLE.load(Ordering::Acquire).as_ref() }}
    }}

    /// Load the driver's table, once: the first caller loads, the others wait for it.
    #[cfg(any(unix, windows))]
    fn load_once() {{
        loop {{
            match STATE.compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire) {{
                Ok(_) => {{
                    match EntryPoints::load() {{
                        Ok(t) => {{
                            let t = alloc::boxed::Box::leak(alloc::boxed::Box::new(t));
                            TABLE.store(t, Ordering::Release);
                            STATE.store(2, Ordering::Release);
                        }}
                        Err(e) => {{
                            LOAD_ERROR.store(alloc::boxed::Box::leak(alloc::boxed::Box::new(e)), Ordering::Release);
                            STATE.store(3, Ordering::Release);
                        }}
                    }}
                    return;
                }}
                Err(1) => ::core::hint::spin_loop(),
                Err(_) => return,
            }}
        }}
    }}
    #[cfg(not(any(unix, windows)))]
    fn load_once() {{}}

    /// Where this module's table stands, without loading it: [`Mode::NotYetLoaded`](crate::Mode),
    /// [`Mode::Loaded`](crate::Mode) (loaded or installed) or [`Mode::NotLoaded`](crate::Mode) with
    /// the reason. The module's [`mode`] says whether its free functions call
    /// through it.
    pub fn state() -> crate::Mode {{
        match STATE.load(Ordering::Acquire) {{
            2 => crate::Mode::Loaded,
            #[cfg(any(unix, windows))]
            3 => match load_error() {{
                Some(e) => crate::Mode::NotLoaded(e),
                None => crate::Mode::NotYetLoaded,
            }},
            _ => crate::Mode::NotYetLoaded,
        }}
    }}

    /// Why the driver library could not be loaded, once a call tried and failed.
    #[cfg(any(unix, windows))]
    pub fn load_error() -> ::core::option::Option<&'static crate::LoadError> {{
        // SAFETY: stored once by `load_once`, leaked: it lives forever.
        unsafe {{ LOAD_ERROR.load(Ordering::Acquire).as_ref() }}
    }}

    // The functions below are `inline(never)`: each has one address in the process (an inlined
    // copy per codegen unit would have its own), which `from_linked` stores and `install` compares.

    #[cold]
    fn no_table() -> CUresult {{
        if STATE.load(Ordering::Acquire) == 3 {{
            LOAD_FAILED
        }} else {{
            CUresult::CUDA_ERROR_NOT_FOUND
        }}
    }}

{globals}
}}

/// Under `dynamic-loading` the module's functions are [`global`]'s: the same names and types
/// (`unsafe extern "C" fn`) as the linked ones.
#[cfg(feature = "dynamic-loading")]
pub use self::global::{{{reexports}}};
{always_global}
/// How this module's free functions reach the driver: [`Mode::Linked`](crate::Mode) without
/// `dynamic-loading` (the linked symbols), else where [`global`]'s table stands
/// ([`global::state`]). It loads nothing.{mode_note}
pub fn mode() -> crate::Mode {{
    if cfg!(feature = "dynamic-loading") {{
        global::state()
    }} else {{
        crate::Mode::Linked
    }}
}}
"#
    )
}
