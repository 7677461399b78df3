//! What the bindings contain, and nothing else. Functions are listed by their *C API name*; the
//! generator asks the C preprocessor what each one resolves to in that major's cuda.h (for example
//! `cuMemAlloc` -> `cuMemAlloc_v2`) and binds the resolved symbol, the one a C program would link.
//! Every referenced type comes along (bindgen's recursive allowlist). Each list is sorted; the
//! generator refuses an unsorted list or an entry that a header does not declare.

/// The 14 APIs of the stream-ordered allocator, with their index in the PhOS support table.
pub const POOL_APIS: &[(&str, u32)] = &[
    ("cuMemAllocAsync", 820),
    ("cuMemAllocFromPoolAsync", 821),
    ("cuMemFreeAsync", 822),
    ("cuMemPoolCreate", 823),
    ("cuMemPoolDestroy", 824),
    ("cuMemPoolExportPointer", 825),
    ("cuMemPoolExportToShareableHandle", 826),
    ("cuMemPoolGetAccess", 827),
    ("cuMemPoolGetAttribute", 828),
    ("cuMemPoolImportFromShareableHandle", 829),
    ("cuMemPoolImportPointer", 830),
    ("cuMemPoolSetAccess", 831),
    ("cuMemPoolSetAttribute", 832),
    ("cuMemPoolTrimTo", 833),
];

/// A function, the first CUDA major whose header declares it, and whether a build without
/// `dynamic-loading` links it.
pub struct Func {
    pub name: &'static str,
    pub since_major: u32,
    /// `true`: an `extern` declaration in the major's module (a linked program binds it at start-up
    /// if it references it). `false`: table only, never linked (see [`table_only`]).
    pub linked: bool,
}

const fn f(name: &'static str) -> Func {
    Func {
        name,
        since_major: 11,
        linked: true,
    }
}

/// A function newer than drivers the crate must still start on, which is never linked: its module
/// gets no `extern` declaration of it, only its `EntryPoints` field (loaded through
/// `cuGetProcAddress` or from the library) and a free function of its name that is `global`'s in
/// every feature combination (a call through the process's table, `CUDA_ERROR_NOT_FOUND` where
/// the driver lacks it). A Rust program binds every linked symbol it references when it starts, so
/// a linked one would keep a program that merely stores it (`from_linked`, a C function pointer)
/// from starting on an older driver: CI's libcuda is R535 (CUDA 12.2).
const fn table_only(name: &'static str, since_major: u32) -> Func {
    Func {
        name,
        since_major,
        linked: false,
    }
}

/// Supporting driver API, sorted by name. Groups are noted per entry.
pub const SUPPORT: &[Func] = &[
    f("cuCtxDisablePeerAccess"),       // peer access (context level)
    f("cuCtxEnablePeerAccess"),        // peer access (context level)
    f("cuCtxGetCurrent"),              // current context
    f("cuCtxGetDevice"),               // current context
    f("cuCtxPopCurrent"),              // current context
    f("cuCtxPushCurrent"),             // current context
    f("cuCtxSetCurrent"),              // current context
    f("cuCtxSynchronize"),             // current context
    f("cuDeviceCanAccessPeer"),        // peer access queries
    f("cuDeviceGet"),                  // devices
    f("cuDeviceGetAttribute"),         // devices (memory-pool support, handle types, ...)
    f("cuDeviceGetCount"),             // devices
    f("cuDeviceGetDefaultMemPool"),    // pool selection
    f("cuDeviceGetGraphMemAttribute"), // graph memory (capture trials)
    f("cuDeviceGetMemPool"),           // pool selection
    f("cuDeviceGetName"),              // devices
    f("cuDeviceGetP2PAttribute"),      // peer access queries
    f("cuDeviceGraphMemTrim"),         // graph memory (capture trials)
    f("cuDevicePrimaryCtxGetState"),   // primary context
    f("cuDevicePrimaryCtxRelease"),    // primary context
    f("cuDevicePrimaryCtxReset"),      // primary context
    f("cuDevicePrimaryCtxRetain"),     // primary context
    f("cuDeviceSetGraphMemAttribute"), // graph memory (capture trials)
    f("cuDeviceSetMemPool"),           // pool selection
    f("cuDeviceTotalMem"),             // devices
    f("cuDriverGetVersion"),           // init and version
    f("cuEventCreate"),                // events
    f("cuEventDestroy"),               // events
    f("cuEventQuery"),                 // events
    f("cuEventRecord"),                // events
    f("cuEventSynchronize"),           // events
    f("cuGetErrorName"),               // errors
    f("cuGetErrorString"),             // errors
    f("cuGetProcAddress"),             // run-time resolution of entry points newer than the oldest driver
    f("cuGraphDestroy"),               // graphs (capture trials)
    f("cuGraphExecDestroy"),           // graphs (capture trials)
    f("cuGraphGetNodes"),              // graphs (capture trials)
    f("cuGraphInstantiateWithFlags"),  // graphs (capture trials)
    f("cuGraphLaunch"),                // graphs (capture trials)
    f("cuGraphMemAllocNodeGetParams"), // graph memory nodes (capture trials)
    f("cuGraphMemFreeNodeGetParams"),  // graph memory nodes (capture trials)
    f("cuGraphNodeGetType"),           // graphs (capture trials)
    f("cuInit"),                       // init and version
    f("cuIpcGetEventHandle"),          // IPC events
    f("cuIpcOpenEventHandle"),         // IPC events
    f("cuLaunchHostFunc"),             // streams: host callbacks
    f("cuMemAlloc"),                   // classic allocation (for "not a pool allocation" cases)
    f("cuMemFree"),                    // classic allocation
    f("cuMemGetInfo"),                 // free / total device memory
    f("cuMemcpy"),                     // copies (unified addressing)
    f("cuMemcpyAsync"),                // copies
    f("cuMemcpyDtoH"),                 // copies
    f("cuMemcpyDtoHAsync"),            // copies
    f("cuMemcpyHtoD"),                 // copies
    f("cuMemcpyHtoDAsync"),            // copies
    f("cuMemcpyPeer"),                 // copies between devices
    f("cuMemcpyPeerAsync"),            // copies between devices
    f("cuMemsetD32"),                  // fills
    f("cuMemsetD32Async"),             // fills
    f("cuMemsetD8"),                   // fills
    f("cuMemsetD8Async"),              // fills
    f("cuPointerGetAttribute"),        // pointer attributes
    f("cuPointerGetAttributes"),       // pointer attributes
    f("cuStreamBeginCapture"),         // stream capture
    f("cuStreamCreate"),               // streams
    f("cuStreamCreateWithPriority"),   // streams
    f("cuStreamDestroy"),              // streams
    f("cuStreamEndCapture"),           // stream capture
    f("cuStreamGetCtx"),               // streams: the context of a stream handed in by another library
    f("cuStreamIsCapturing"),          // stream capture
    f("cuStreamQuery"),                // streams
    f("cuStreamSynchronize"),          // streams
    f("cuStreamWaitEvent"),            // streams
];

/// The checkpoint API (NVIDIA's "CUDA Checkpointing" group), sorted by name: declared from cuda.h
/// 12.8 on, for drivers R570+, hence table only. Each signature's types come along (CUDA 13's
/// `CUcheckpointGpuPair`, custom-storage structs, ...). Not bound: `cuCheckpointOperationComplete`
/// (cuda.h 13.4+), which only custom-storage checkpoints need.
pub const CHECKPOINT: &[Func] = &[
    table_only("cuCheckpointProcessCheckpoint", 12),
    table_only("cuCheckpointProcessGetRestoreThreadId", 12),
    table_only("cuCheckpointProcessGetState", 12),
    table_only("cuCheckpointProcessLock", 12),
    table_only("cuCheckpointProcessRestore", 12),
    table_only("cuCheckpointProcessUnlock", 12),
];

/// Every function of SUPPORT and CHECKPOINT whose header in `major` declares it.
pub fn functions(major: u32) -> impl Iterator<Item = &'static Func> {
    SUPPORT.iter().chain(CHECKPOINT).filter(move |f| f.since_major <= major)
}

/// Declared by wrapper.h itself (cuda.h only declares them under CUDA_API_PER_THREAD_DEFAULT_STREAM).
pub const PTSZ: &[&str] = &[
    "cuMemAllocAsync_ptsz",
    "cuMemAllocFromPoolAsync_ptsz",
    "cuMemFreeAsync_ptsz",
];

/// CUDA 13 pool selectors by location: declared for 13 only. Drivers before R580 lack them, so code
/// that must also run there calls them through the entry-point table (`EntryPoints::load()`), or
/// resolves them with cuGetProcAddress through the PFN types below.
pub const CUDA13_SELECTORS: &[&str] = &["cuMemGetDefaultMemPool", "cuMemGetMemPool", "cuMemSetMemPool"];
pub const CUDA13_SELECTOR_PFNS: &[&str] = &[
    "PFN_cuMemGetDefaultMemPool_v13000",
    "PFN_cuMemGetMemPool_v13000",
    "PFN_cuMemSetMemPool_v13000",
];

/// Types wanted although no allowlisted function names them (flags and attribute enums).
pub const TYPES: &[&str] = &[
    "CUctx_flags",
    "CUdevice_attribute",
    "CUdriverProcAddress_flags",
    "CUevent_flags",
    "CUevent_wait_flags",
    "CUgraphInstantiate_flags",
    "CUmemAccess_flags",
    "CUmemAllocationHandleType",
    "CUmemAllocationType",
    "CUmemFabricHandle", // 12.3+: skipped where absent
    "CUmemLocationType",
    "CUmemPool_attribute",
    "CUpointer_attribute",
    "CUstream_flags",
];

/// Enums whose values C combines with `|` (flag sets), by cuda.h's typedef name: bindgen gives
/// them `BitOr`, `BitOrAssign`, `BitAnd` and `BitAndAssign`, and their `Debug` lists the named
/// bits of a combination (`A | B`). Not `CUmemAccess_flags`: its values are levels, not bits.
pub const BIT_SETS: &[&str] = &[
    "CUctx_flags",
    "CUdriverProcAddress_flags",
    "CUevent_flags",
    "CUevent_wait_flags",
    "CUgraphInstantiate_flags",
    "CUmemAllocationHandleType",
    "CUstream_flags",
];

/// A C union inside a struct, and which of its fields each value of the struct's tag field means:
/// the generator writes the struct's `Debug`, `PartialEq`, `Eq` and `Hash` through that field
/// (bindgen derives none of them for a struct that holds a union).
#[derive(Debug)]
pub struct TaggedUnion {
    /// The struct holding the union, as bindgen names it.
    pub owner: &'static str,
    /// The field of `owner` whose value says which union field is meant.
    pub tag: &'static str,
    /// (a constant of the tag's type, the union field it means), for the values that do not mean
    /// `default`.
    pub cases: &'static [(&'static str, &'static str)],
    /// The union field every other value of the tag means.
    pub default: &'static str,
}

/// Every union the headers put in a bound struct (the generator refuses one that is not listed).
/// CUDA 13 moved `CUmemLocation::id` into a union beside `localized`, which only
/// `CU_MEM_LOCATION_TYPE_DEVICE_LOCALITY_DOMAIN` uses (cuda.h's comments on both fields).
pub const TAGGED_UNIONS: &[TaggedUnion] = &[TaggedUnion {
    owner: "CUmemLocation_st",
    tag: "type_",
    cases: &[("CU_MEM_LOCATION_TYPE_DEVICE_LOCALITY_DOMAIN", "localized")],
    default: "id",
}];

/// Object-like macros with plain integer values (bindgen turns them into consts).
pub const VARS: &[&str] = &[
    "CUDA_VERSION",
    "CU_IPC_HANDLE_SIZE",
    "CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS",
];

/// Pointer- or cast-valued macros bindgen cannot translate. The generator writes each one into every
/// major's module, and the ABI probe checks each value against cuda.h.
pub struct HandConst {
    pub name: &'static str,
    /// Type and value as written in the generated module.
    pub rust_ty: &'static str,
    pub rust_value: &'static str,
    pub doc: &'static str,
    /// The probe's C expression and the Rust expression it is compared with (`B` is the module).
    pub c_expr: &'static str,
    pub probe_expr: &'static str,
}

pub const HAND_CONSTS: &[HandConst] = &[
    HandConst {
        name: "CU_STREAM_LEGACY",
        rust_ty: "CUstream",
        rust_value: "0x1 as CUstream",
        doc: "The legacy default stream, whatever the compilation's default-stream mode.",
        c_expr: "(unsigned long long)(uintptr_t)CU_STREAM_LEGACY",
        probe_expr: "B::CU_STREAM_LEGACY as usize",
    },
    HandConst {
        name: "CU_STREAM_PER_THREAD",
        rust_ty: "CUstream",
        rust_value: "0x2 as CUstream",
        doc: "The per-thread default stream, whatever the compilation's default-stream mode.",
        c_expr: "(unsigned long long)(uintptr_t)CU_STREAM_PER_THREAD",
        probe_expr: "B::CU_STREAM_PER_THREAD as usize",
    },
    HandConst {
        name: "CU_DEVICE_CPU",
        rust_ty: "CUdevice",
        rust_value: "-1",
        doc: "The host (CPU) as a device ordinal, where an API accepts it.",
        c_expr: "(long long)CU_DEVICE_CPU",
        probe_expr: "B::CU_DEVICE_CPU",
    },
    HandConst {
        name: "CU_DEVICE_INVALID",
        rust_ty: "CUdevice",
        rust_value: "-2",
        doc: "An invalid device ordinal.",
        c_expr: "(long long)CU_DEVICE_INVALID",
        probe_expr: "B::CU_DEVICE_INVALID",
    },
];

pub fn check_sorted() -> Result<(), String> {
    fn sorted(what: &str, names: &[&str]) -> Result<(), String> {
        for w in names.windows(2) {
            if w[0] >= w[1] {
                return Err(format!(
                    "xtask/src/allowlist.rs: {what} is not sorted: {:?} before {:?}",
                    w[0], w[1]
                ));
            }
        }
        Ok(())
    }
    sorted("POOL_APIS", &POOL_APIS.iter().map(|p| p.0).collect::<Vec<_>>())?;
    sorted("SUPPORT", &SUPPORT.iter().map(|p| p.name).collect::<Vec<_>>())?;
    sorted("CHECKPOINT", &CHECKPOINT.iter().map(|p| p.name).collect::<Vec<_>>())?;
    sorted("PTSZ", PTSZ)?;
    sorted("CUDA13_SELECTORS", CUDA13_SELECTORS)?;
    sorted("TYPES", TYPES)?;
    sorted("BIT_SETS", BIT_SETS)?;
    sorted("VARS", VARS)
}

/// The loader's own declarations of cuGetProcAddress (cuda-mempool-sys/src/loader.rs), which serve
/// every major: (typedef in cudaTypedefs.h, the Rust signature as C spells it, first major whose
/// cudaTypedefs.h has the typedef). The ABI probe asserts that the C compiler finds them compatible.
pub const LOADER_PFNS: &[(&str, &str, u32)] = &[
    (
        "PFN_cuGetProcAddress_v11030",
        "unsigned int (*)(char const *, void * *, int, uint64_t)",
        11,
    ),
    (
        "PFN_cuGetProcAddress_v12000",
        "unsigned int (*)(char const *, void * *, int, uint64_t, unsigned int *)",
        12,
    ),
];
