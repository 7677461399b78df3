//! One-line docs of our own for every bound driver function, and its anchor in NVIDIA's driver API
//! reference (https://docs.nvidia.com/cuda/cuda-driver-api/group__GROUP.html#group__GROUP_ANCHOR).
//! Anchors are copied from NVIDIA's pages (CUDA 13 release docs), never derived: doxygen hashes them.
//! `cuGetProcAddress` has none yet (its page's links could not be read), nor have the checkpoint
//! functions (`cuCheckpointProcess*`), which link their group's page; `cuGraphInstantiateWithFlags`
//! links NVIDIA's `cuGraphInstantiate`, which cuda.h 12+ defines as this function.

pub struct FnDoc {
    /// cuda.h's API name (no _v2 / _ptsz suffix).
    pub name: &'static str,
    /// The doxygen group, e.g. "CUDA__MALLOC__ASYNC" (the page is group__CUDA__MALLOC__ASYNC.html).
    pub group: &'static str,
    /// The anchor suffix after "group__GROUP_", e.g. "1g13413273e84a641bce1929eae9e6501f"; "" when not found.
    pub anchor: &'static str,
    /// One line of our own (no trailing period: the generator adds it).
    pub doc: &'static str,
    /// The safety rule specific to this function, beyond docs.rs's generic one; "" when there is none.
    /// `{value types of PREFIX}` in it is written per major from that header (docs.rs).
    pub safety: &'static str,
}

pub const FN_DOCS: &[FnDoc] = &[
    FnDoc { name: "cuCheckpointProcessCheckpoint", group: "CUDA__CHECKPOINT", anchor: "", doc: "Moves a locked process's device memory off its GPUs (to host memory unless custom storage is asked for) and releases what it holds there", safety: "`args` is null or points to an initialised `CUcheckpointCheckpointArgs` whose reserved bytes are zero (`Default::default()` is). Where the header has `customStorageInfo_out`, a non-null one asks for custom storage, which needs `cuCheckpointOperationComplete`: not bound here." },
    FnDoc { name: "cuCheckpointProcessGetRestoreThreadId", group: "CUDA__CHECKPOINT", anchor: "", doc: "Reads the id of a process's CUDA restore thread", safety: "" },
    FnDoc { name: "cuCheckpointProcessGetState", group: "CUDA__CHECKPOINT", anchor: "", doc: "Reads where a process stands in the checkpoint cycle (running, locked, checkpointed, failed, ...)", safety: "" },
    FnDoc { name: "cuCheckpointProcessLock", group: "CUDA__CHECKPOINT", anchor: "", doc: "Locks a running process ahead of a checkpoint: its further CUDA calls block until it is unlocked (with an optional timeout for taking the lock)", safety: "`args` is null or points to an initialised `CUcheckpointLockArgs` whose reserved fields are zero (`Default::default()` is)." },
    FnDoc { name: "cuCheckpointProcessRestore", group: "CUDA__CHECKPOINT", anchor: "", doc: "Brings a checkpointed process's device memory back onto GPUs, optionally remapped by UUID; the process stays locked until unlocked", safety: "`args` is null or points to an initialised `CUcheckpointRestoreArgs` whose reserved bytes are zero (`Default::default()` is). Where the header has `gpuPairs`, it is null or points to `gpuPairsCount` pairs naming every checkpointed GPU; a non-null `customStorageInfo_out` asks for custom storage, which needs `cuCheckpointOperationComplete`: not bound here." },
    FnDoc { name: "cuCheckpointProcessUnlock", group: "CUDA__CHECKPOINT", anchor: "", doc: "Unlocks a locked process, so that its CUDA calls run again", safety: "`args` is null or points to a `CUcheckpointUnlockArgs` whose reserved fields are zero (`Default::default()` is)." },
    FnDoc { name: "cuCtxDisablePeerAccess", group: "CUDA__PEER__ACCESS", anchor: "1g5b4b6936ea868d4954ce4d841a3b4810", doc: "Revokes the current context's direct access to a peer context's memory", safety: "No work of the current context, queued or future, may dereference the peer context's memory once access is revoked." },
    FnDoc { name: "cuCtxEnablePeerAccess", group: "CUDA__PEER__ACCESS", anchor: "1g0889ec6728e61c05ed359551d67b3f5a", doc: "Lets the current context directly access memory allocated in a peer context (one direction only)", safety: "" },
    FnDoc { name: "cuCtxGetCurrent", group: "CUDA__CTX", anchor: "1g8f13165846b73750693640fb3e8380d0", doc: "Reads the context bound to the calling thread (null when none is bound)", safety: "The returned handle is borrowed: the caller gains no reference and must not use it after its owner destroys or releases it." },
    FnDoc { name: "cuCtxGetDevice", group: "CUDA__CTX", anchor: "1g4e84b109eba36cdaaade167f34ae881e", doc: "Reads the device of the calling thread's current context", safety: "" },
    FnDoc { name: "cuCtxPopCurrent", group: "CUDA__CTX", anchor: "1g2fac188026a062d92e91a8687d0a7902", doc: "Pops the current context off the calling thread's context stack", safety: "Pop only what this thread pushed (keep push/pop balanced per thread); popping neither releases nor destroys the context." },
    FnDoc { name: "cuCtxPushCurrent", group: "CUDA__CTX", anchor: "1gb02d4c850eb16f861fe5a29682cc90ba", doc: "Pushes a context onto the calling thread's context stack, making it current", safety: "The context must stay alive while it is on any thread's stack; pop it on the same thread before releasing or destroying it." },
    FnDoc { name: "cuCtxSetCurrent", group: "CUDA__CTX", anchor: "1gbe562ee6258b4fcc272ca6478ca2a2f7", doc: "Binds a context to the calling thread, replacing the top of its stack (null unbinds)", safety: "A bound context must outlive its binding: unbind it on every thread before releasing or destroying it." },
    FnDoc { name: "cuCtxSynchronize", group: "CUDA__CTX", anchor: "1g7a54725f28d34b8c6299f0c6ca579616", doc: "Blocks until all work queued in the current context has finished", safety: "" },
    FnDoc { name: "cuDeviceCanAccessPeer", group: "CUDA__PEER__ACCESS", anchor: "1g496bdaae1f632ebfb695b99d2c40f19e", doc: "Reports whether one device can directly access another device's memory", safety: "" },
    FnDoc { name: "cuDeviceGet", group: "CUDA__DEVICE", anchor: "1g8bdd1cc7201304b01357b8034f6587cb", doc: "Gets the device handle for an ordinal in 0..cuDeviceGetCount", safety: "" },
    FnDoc { name: "cuDeviceGetAttribute", group: "CUDA__DEVICE", anchor: "1g9c3e1414f0ad901d3278a4d6645fc266", doc: "Reads one integer attribute of a device", safety: "" },
    FnDoc { name: "cuDeviceGetCount", group: "CUDA__DEVICE", anchor: "1g52b5ce05cb8c5fb6831b2c0ff2887c74", doc: "Counts the CUDA-capable devices visible to the process", safety: "" },
    FnDoc { name: "cuDeviceGetDefaultMemPool", group: "CUDA__DEVICE", anchor: "1gc8bca3c97a78816303b8aa5773b741f2", doc: "Gets a device's default stream-ordered memory pool", safety: "The returned pool is owned by the driver: never pass it to cuMemPoolDestroy." },
    FnDoc { name: "cuDeviceGetGraphMemAttribute", group: "CUDA__GRAPH", anchor: "1g359903c2447ac22b4e1a0dce26adfef5", doc: "Reads usage statistics of a device's graph-allocation memory", safety: "`value` must point to a cuuint64_t (every CU_GRAPH_MEM_ATTR_* value is 64-bit)." },
    FnDoc { name: "cuDeviceGetMemPool", group: "CUDA__DEVICE", anchor: "1gdf186e9559d53a5eb18e572d48c1121b", doc: "Gets the pool that cuMemAllocAsync currently uses for a device", safety: "The returned pool is borrowed, not owned: if it is a user pool it is valid only until its owner destroys it." },
    FnDoc { name: "cuDeviceGetName", group: "CUDA__DEVICE", anchor: "1gef75aa30df95446a845f2a7b9fffbb7f", doc: "Copies a device's NUL-terminated name into a caller buffer", safety: "`name` must be writable for `len` bytes, with `len` > 0." },
    FnDoc { name: "cuDeviceGetP2PAttribute", group: "CUDA__PEER__ACCESS", anchor: "1g4c55c60508f8eba4546b51f2ee545393", doc: "Reads one attribute (rank, access, atomics support) of the link between two devices", safety: "" },
    FnDoc { name: "cuDeviceGraphMemTrim", group: "CUDA__GRAPH", anchor: "1g57c87f4ba6af41825627cdd4e5a8c52b", doc: "Returns graph-allocation memory a device caches but no graph uses to the OS", safety: "" },
    FnDoc { name: "cuDevicePrimaryCtxGetState", group: "CUDA__PRIMARY__CTX", anchor: "1g65f3e018721b6d90aa05cfb56250f469", doc: "Reads the flags and the active state of a device's primary context", safety: "" },
    FnDoc { name: "cuDevicePrimaryCtxRelease", group: "CUDA__PRIMARY__CTX", anchor: "1gf2a8bc16f8df0c88031f6a1ba3d6e8ad", doc: "Drops one reference to a device's primary context", safety: "Call once per successful retain; the last release resets the context, invalidating its memory, streams and events." },
    FnDoc { name: "cuDevicePrimaryCtxReset", group: "CUDA__PRIMARY__CTX", anchor: "1g5d38802e8600340283958a117466ce12", doc: "Destroys every allocation and all state of a device's primary context", safety: "Invalidates every handle and pointer made in the primary context, including other libraries'; none may be used afterwards." },
    FnDoc { name: "cuDevicePrimaryCtxRetain", group: "CUDA__PRIMARY__CTX", anchor: "1g9051f2d5c31501997a6cb0530290a300", doc: "Takes a reference to a device's primary context, creating it if needed; does not make it current", safety: "" },
    FnDoc { name: "cuDeviceSetGraphMemAttribute", group: "CUDA__GRAPH", anchor: "1g064bd5c6a773b83d145c281ebf5dbe34", doc: "Resets the high-watermark statistics of a device's graph-allocation memory", safety: "`value` must point to a cuuint64_t; only USED_MEM_HIGH and RESERVED_MEM_HIGH are settable, and only to 0." },
    FnDoc { name: "cuDeviceSetMemPool", group: "CUDA__DEVICE", anchor: "1g4f2f276b84d9c2eaefdc76d6274db4a0", doc: "Makes a pool the one cuMemAllocAsync uses for a device", safety: "" },
    FnDoc { name: "cuDeviceTotalMem", group: "CUDA__DEVICE", anchor: "1gc6a0d6551335a3780f9f3c967a0fde5d", doc: "Reads the total memory of a device in bytes", safety: "" },
    FnDoc { name: "cuDriverGetVersion", group: "CUDA__VERSION", anchor: "1g8b7a10395392e049006e61bcdc8ebe71", doc: "Reads the newest CUDA version the installed driver supports", safety: "" },
    FnDoc { name: "cuEventCreate", group: "CUDA__EVENT", anchor: "1g450687e75f3ff992fe01662a43d9d3db", doc: "Creates an event in the current context", safety: "" },
    FnDoc { name: "cuEventDestroy", group: "CUDA__EVENT", anchor: "1g593ec73a8ec5a5fc031311d3e4dca1ef", doc: "Destroys an event; if it is still pending, resources are freed once it completes", safety: "" },
    FnDoc { name: "cuEventQuery", group: "CUDA__EVENT", anchor: "1g6f0704d755066b0ee705749ae911deef", doc: "Checks without blocking whether the work captured by an event has completed", safety: "" },
    FnDoc { name: "cuEventRecord", group: "CUDA__EVENT", anchor: "1g95424d3be52c4eb95d83861b70fb89d1", doc: "Captures the work currently queued on a stream in an event", safety: "" },
    FnDoc { name: "cuEventSynchronize", group: "CUDA__EVENT", anchor: "1g9e520d34e51af7f5375610bca4add99c", doc: "Blocks until the work captured by an event has completed", safety: "" },
    FnDoc { name: "cuGetErrorName", group: "CUDA__ERROR", anchor: "1g2c4ac087113652bb3d1f95bf2513c468", doc: "Gets the enum name of a CUresult as a static string", safety: "The string is static: never free or write it; for an unknown code `*pStr` is set to NULL." },
    FnDoc { name: "cuGetErrorString", group: "CUDA__ERROR", anchor: "1g72758fcaf05b5c7fac5c25ead9445ada", doc: "Gets a human-readable description of a CUresult as a static string", safety: "The string is static: never free or write it; for an unknown code `*pStr` is set to NULL." },
    FnDoc { name: "cuGetProcAddress", group: "CUDA__DRIVER__ENTRY__POINT", anchor: "", doc: "Looks up a driver function pointer by base name, CUDA version and flags", safety: "Cast `*pfn` only to the exact prototype of the version requested (cudaTypedefs.h PFN_*); it may be NULL on success." },
    FnDoc { name: "cuGraphDestroy", group: "CUDA__GRAPH", anchor: "1g718cfd9681f078693d4be2426fd689c8", doc: "Destroys a graph and all of its nodes", safety: "Node handles obtained from the graph become invalid; executable graphs instantiated from it are unaffected." },
    FnDoc { name: "cuGraphExecDestroy", group: "CUDA__GRAPH", anchor: "1ga32ad4944cc5d408158207c978bc43a7", doc: "Destroys an executable graph; launches already in flight still complete", safety: "" },
    FnDoc { name: "cuGraphGetNodes", group: "CUDA__GRAPH", anchor: "1gfa35a8e2d2fc32f48dbd67ba27cf27e5", doc: "Lists a graph's nodes, or only counts them when `nodes` is null", safety: "`numNodes` is read and written; a non-null `nodes` must be writable for `*numNodes` CUgraphNode entries." },
    FnDoc { name: "cuGraphInstantiateWithFlags", group: "CUDA__GRAPH", anchor: "1gb53b435e178cccfa37ac87285d2c3fa1", doc: "Builds an executable graph from a graph, with CUDA_GRAPH_INSTANTIATE_FLAG_* flags", safety: "" },
    FnDoc { name: "cuGraphLaunch", group: "CUDA__GRAPH", anchor: "1g6b2dceb3901e71a390d2bd8b0491e471", doc: "Enqueues an executable graph on a stream", safety: "All memory the graph's nodes read or write, host buffers included, must stay valid until the launch completes." },
    FnDoc { name: "cuGraphMemAllocNodeGetParams", group: "CUDA__GRAPH", anchor: "1gee2c7d66d3d96b1470c1d1a769f250a2", doc: "Reads the parameters of a memory-allocation node, including its reserved address", safety: "The returned accessDescs array is owned by the node and valid only while the node exists." },
    FnDoc { name: "cuGraphMemFreeNodeGetParams", group: "CUDA__GRAPH", anchor: "1gd24d9fe5769222a2367e3f571fb2f28b", doc: "Reads the address that a memory-free node frees", safety: "" },
    FnDoc { name: "cuGraphNodeGetType", group: "CUDA__GRAPH", anchor: "1gdb1776d97aa1c9d5144774b29e4b8c3e", doc: "Reads the type of a graph node", safety: "" },
    FnDoc { name: "cuInit", group: "CUDA__INITIALIZE", anchor: "1g0a2f1517e1bd8502c7194c3a8c134bc3", doc: "Initializes the driver API; needed before any other driver call", safety: "" },
    FnDoc { name: "cuIpcGetEventHandle", group: "CUDA__MEM", anchor: "1gea02eadd12483de5305878b13288a86c", doc: "Exports an IPC handle for an event created with CU_EVENT_INTERPROCESS", safety: "" },
    FnDoc { name: "cuIpcOpenEventHandle", group: "CUDA__MEM", anchor: "1gf1d525918b6c643b99ca8c8e42e36c2e", doc: "Opens, in this process, an event exported by another process", safety: "Using the opened event after the exporting process destroyed its event is undefined; free it with cuEventDestroy." },
    FnDoc { name: "cuLaunchHostFunc", group: "CUDA__EXEC", anchor: "1gab95a78143bae7f21eebb978f91e7f3f", doc: "Enqueues a host function on a stream, to run after the work queued before it", safety: "`fn` runs on a driver thread: it must be thread-safe, make no CUDA call, not block on later stream work; `userData` must outlive it." },
    FnDoc { name: "cuMemAlloc", group: "CUDA__MEM", anchor: "1gb82d2a09844a58dd9e744dc31e8aa467", doc: "Allocates device memory in the current context", safety: "" },
    FnDoc { name: "cuMemAllocAsync", group: "CUDA__MALLOC__ASYNC", anchor: "1g13413273e84a641bce1929eae9e6501f", doc: "Allocates device memory from the current pool of the stream's device, ordered on the stream", safety: "Access the memory only from work ordered after the allocation; free it exactly once (cuMemFreeAsync or cuMemFree)." },
    FnDoc { name: "cuMemAllocFromPoolAsync", group: "CUDA__MALLOC__ASYNC", anchor: "1gf1dd6e1e2e8f767a5e0ea63f38ff260b", doc: "Allocates memory from a given pool, ordered on a stream", safety: "Access the memory only from work ordered after the allocation; free it exactly once (cuMemFreeAsync or cuMemFree)." },
    FnDoc { name: "cuMemFree", group: "CUDA__MEM", anchor: "1g89b3f154e17cc89b6eea277dbdf5c93a", doc: "Frees device memory synchronously", safety: "Pass only a base pointer from cuMemAlloc, a stream-ordered allocation or cuMemPoolImportPointer, once; no part of it may be used afterwards." },
    FnDoc { name: "cuMemFreeAsync", group: "CUDA__MALLOC__ASYNC", anchor: "1g41acf4131f672a2a75cd93d3241f10cf", doc: "Frees memory, ordered on a stream", safety: "The pointer must come from cuMemAllocAsync/cuMemAllocFromPoolAsync (or cuMemAlloc, cuMemPoolImportPointer), be freed only once, and not be used on any stream or the host once the free is ordered." },
    FnDoc { name: "cuMemGetDefaultMemPool", group: "CUDA__MALLOC__ASYNC", anchor: "1gfe5111eb15c977cd8d87132ff481072f", doc: "Gets the default pool of a memory location and allocation type (CUDA 13)", safety: "The returned pool is owned by the driver: never pass it to cuMemPoolDestroy." },
    FnDoc { name: "cuMemGetInfo", group: "CUDA__MEM", anchor: "1g808f555540d0143a331cc42aa98835c0", doc: "Reads the free and total memory of the current context's device", safety: "" },
    FnDoc { name: "cuMemGetMemPool", group: "CUDA__MALLOC__ASYNC", anchor: "1g5283d28ee187477e1a2b06fd731ec575", doc: "Gets the current pool of a memory location and allocation type (CUDA 13)", safety: "The returned pool is borrowed, not owned: if it is a user pool it is valid only until its owner destroys it." },
    FnDoc { name: "cuMemPoolCreate", group: "CUDA__MALLOC__ASYNC", anchor: "1g8aa4c143dbc20293659cd883232b95f2", doc: "Creates a memory pool from a CUmemPoolProps description", safety: "`poolProps` must be fully initialised, unused and reserved fields zeroed; win32SecurityAttributes stays null unless a Win32 handle type is requested." },
    FnDoc { name: "cuMemPoolDestroy", group: "CUDA__MALLOC__ASYNC", anchor: "1ge0e211115e5ad1c79250b9dd425b77f7", doc: "Destroys a pool; its memory is released once all its allocations are freed", safety: "Never pass a default pool; allocations from the pool remain valid until freed, but the pool handle is dead." },
    FnDoc { name: "cuMemPoolExportPointer", group: "CUDA__MALLOC__ASYNC", anchor: "1gfe89f0478d26edaa91eb8a2e0349329d", doc: "Produces share data that lets another process import one allocation of an exported pool", safety: "`ptr` must be a live allocation of an IPC-capable pool; do not free it until every importer has freed its mapping." },
    FnDoc { name: "cuMemPoolExportToShareableHandle", group: "CUDA__MALLOC__ASYNC", anchor: "1g79ed285fdfffb76932871fb96fbba8f8", doc: "Exports an IPC-capable pool as an OS handle of the requested type", safety: "`handle_out` must point to storage of the requested type (int fd for POSIX_FILE_DESCRIPTOR, CUmemFabricHandle for FABRIC, HANDLE for WIN32); the caller owns and must close it." },
    FnDoc { name: "cuMemPoolGetAccess", group: "CUDA__MALLOC__ASYNC", anchor: "1g838f28fd535a1cbd06c5f7fe0edbdcc7", doc: "Reads how a location may access a pool's memory", safety: "" },
    FnDoc { name: "cuMemPoolGetAttribute", group: "CUDA__MALLOC__ASYNC", anchor: "1gd45ea7c43e4a1add4b971d06fa72eda4", doc: "Reads one attribute of a memory pool", safety: "`value` must point to the attribute's value type (each `CU_MEMPOOL_ATTR_*` constant names it): {value types of CU_MEMPOOL_ATTR_}." },
    FnDoc { name: "cuMemPoolImportFromShareableHandle", group: "CUDA__MALLOC__ASYNC", anchor: "1g02b4f18dd8a1c45b7f302800e90cec5b", doc: "Opens a pool exported by another process from an OS handle", safety: "`handle` must match `handleType` (the fd value itself cast to a pointer for POSIX fds, a pointer to a CUmemFabricHandle for FABRIC); the imported pool cannot allocate." },
    FnDoc { name: "cuMemPoolImportPointer", group: "CUDA__MALLOC__ASYNC", anchor: "1g2620bb972ed5edcce312d3689454acbd", doc: "Maps into this process an allocation shared through cuMemPoolExportPointer", safety: "`shareData` must come from cuMemPoolExportPointer on the pool this one was imported from; free the mapping here before the exporter frees it, and do not touch it before the exporter's allocation has completed." },
    FnDoc { name: "cuMemPoolSetAccess", group: "CUDA__MALLOC__ASYNC", anchor: "1gff3ce33e252443f4b087b94e42913406", doc: "Grants or revokes access to a pool's memory for one or more locations", safety: "`map` must point to `count` initialised CUmemAccessDesc; revoke a location's access only when none of its work still uses the pool." },
    FnDoc { name: "cuMemPoolSetAttribute", group: "CUDA__MALLOC__ASYNC", anchor: "1g223e786cb217709235a06e41bccaec00", doc: "Sets one attribute of a memory pool", safety: "`value` must point to the attribute's type: cuuint64_t for RELEASE_THRESHOLD and the RESERVED_MEM_HIGH / USED_MEM_HIGH resets (which must be 0); int for the REUSE_* flags; other attributes are read-only." },
    FnDoc { name: "cuMemPoolTrimTo", group: "CUDA__MALLOC__ASYNC", anchor: "1g9c7e267e3460945b0ca76c48314bb669", doc: "Returns a pool's unused memory to the OS, keeping at least a given number of bytes reserved", safety: "" },
    FnDoc { name: "cuMemSetMemPool", group: "CUDA__MALLOC__ASYNC", anchor: "1g779e76c810c5f088210ea907730e17c9", doc: "Sets the current pool of a memory location and allocation type (CUDA 13)", safety: "" },
    FnDoc { name: "cuMemcpy", group: "CUDA__MEM", anchor: "1g8d0ff510f26d4b87bd3a51e731e7f698", doc: "Copies bytes between two unified-address pointers", safety: "Each range must lie inside a live allocation or valid host memory for `ByteCount` bytes." },
    FnDoc { name: "cuMemcpyAsync", group: "CUDA__MEM", anchor: "1g5f26aaf5582ade791e5688727a178d78", doc: "Copies bytes between two unified-address pointers, ordered on a stream", safety: "Each range must lie inside a live allocation or valid host memory for `ByteCount` bytes; everything must stay valid, and host memory untouched, until the copy completes on the stream." },
    FnDoc { name: "cuMemcpyDtoH", group: "CUDA__MEM", anchor: "1g3480368ee0208a98f75019c9a8450893", doc: "Copies device memory to host memory", safety: "The source must lie inside a live allocation and `dstHost` be writable, both for `ByteCount` bytes." },
    FnDoc { name: "cuMemcpyDtoHAsync", group: "CUDA__MEM", anchor: "1g56f30236c7c5247f8e061b59d3268362", doc: "Copies device memory to host memory, ordered on a stream", safety: "The source must lie inside a live allocation and `dstHost` be writable for `ByteCount` bytes; the host buffer must not be read, written or freed until the copy completes." },
    FnDoc { name: "cuMemcpyHtoD", group: "CUDA__MEM", anchor: "1g4d32266788c440b0220b1a9ba5795169", doc: "Copies host memory to device memory", safety: "`srcHost` must be readable and the destination lie inside a live allocation, both for `ByteCount` bytes." },
    FnDoc { name: "cuMemcpyHtoDAsync", group: "CUDA__MEM", anchor: "1g1572263fe2597d7ba4f6964597a354a3", doc: "Copies host memory to device memory, ordered on a stream", safety: "`srcHost` must be readable and the destination inside a live allocation for `ByteCount` bytes; the host buffer must not be written or freed until the copy completes." },
    FnDoc { name: "cuMemcpyPeer", group: "CUDA__MEM", anchor: "1ge1f5c7771544fee150ada8853c7cbf4a", doc: "Copies device memory between allocations of two contexts", safety: "Each range must lie inside a live allocation of its context for `ByteCount` bytes." },
    FnDoc { name: "cuMemcpyPeerAsync", group: "CUDA__MEM", anchor: "1g82fcecb38018e64b98616a8ac30112f2", doc: "Copies device memory between allocations of two contexts, ordered on a stream", safety: "Each range must lie inside a live allocation of its context for `ByteCount` bytes and stay allocated until the copy completes." },
    FnDoc { name: "cuMemsetD32", group: "CUDA__MEM", anchor: "1g983e8d8759acd1b64326317481fbf132", doc: "Fills device memory with `N` copies of a 32-bit value", safety: "`dstDevice` must be 4-byte aligned and the 4*`N` bytes must lie inside a live allocation." },
    FnDoc { name: "cuMemsetD32Async", group: "CUDA__MEM", anchor: "1g58229da5d30f1c0cdf667b320ec2c0f5", doc: "Fills device memory with `N` copies of a 32-bit value, ordered on a stream", safety: "`dstDevice` must be 4-byte aligned and the 4*`N` bytes inside a live allocation that stays allocated until the fill completes." },
    FnDoc { name: "cuMemsetD8", group: "CUDA__MEM", anchor: "1g6e582bf866e9e2fb014297bfaf354d7b", doc: "Fills `N` bytes of device memory with a byte value", safety: "The `N` bytes at `dstDevice` must lie inside a live allocation." },
    FnDoc { name: "cuMemsetD8Async", group: "CUDA__MEM", anchor: "1gaef08a7ccd61112f94e82f2b30d43627", doc: "Fills `N` bytes of device memory with a byte value, ordered on a stream", safety: "The `N` bytes at `dstDevice` must lie inside a live allocation that stays allocated until the fill completes." },
    FnDoc { name: "cuPointerGetAttribute", group: "CUDA__UNIFIED", anchor: "1g0c28ed0aff848042bc0533110e45820c", doc: "Reads one attribute (context, memory type, range, pool, ...) of a pointer", safety: "`data` must point to the type documented for the attribute (CUcontext for CONTEXT, unsigned int for MEMORY_TYPE, CUdeviceptr for DEVICE_POINTER, void* for HOST_POINTER, unsigned long long for BUFFER_ID, ...)." },
    FnDoc { name: "cuPointerGetAttributes", group: "CUDA__UNIFIED", anchor: "1gf65e9ea532e311dd049166e4894955ad", doc: "Reads several attributes of a pointer in one call", safety: "`attributes` and `data` must hold `numAttributes` entries, and each `data[i]` must point to the type documented for `attributes[i]`." },
    FnDoc { name: "cuStreamBeginCapture", group: "CUDA__STREAM", anchor: "1g767167da0bbf07157dc20b6c258a2143", doc: "Starts capturing the work enqueued on a stream into a graph", safety: "Work enqueued while capturing is recorded, not executed: nothing may wait for it or read its results until the captured graph is launched." },
    FnDoc { name: "cuStreamCreate", group: "CUDA__STREAM", anchor: "1ga581f0c5833e21ded8b5a56594e243f4", doc: "Creates a stream in the current context", safety: "" },
    FnDoc { name: "cuStreamCreateWithPriority", group: "CUDA__STREAM", anchor: "1g95c1a8c7c3dacb13091692dd9c7f7471", doc: "Creates a stream in the current context with a scheduling priority (a lower number is served first)", safety: "" },
    FnDoc { name: "cuStreamDestroy", group: "CUDA__STREAM", anchor: "1g244c8833de4596bcd31a06cdf21ee758", doc: "Destroys a stream; work already queued on it still completes", safety: "" },
    FnDoc { name: "cuStreamEndCapture", group: "CUDA__STREAM", anchor: "1g03dab8b2ba76b00718955177a929970c", doc: "Ends capture on a stream and returns the captured graph (null if capture was invalidated)", safety: "The caller owns the returned graph and must destroy it with cuGraphDestroy; check it for null first." },
    FnDoc { name: "cuStreamGetCtx", group: "CUDA__STREAM", anchor: "1g1107907025eaa3387fdc590a9379a681", doc: "Reads the context a stream belongs to (for a special stream: the calling thread's current context)", safety: "`hStream` must be a live stream or a special one (null, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD): the driver does not check the handle. The context is borrowed: the caller gains no reference to it." },
    FnDoc { name: "cuStreamIsCapturing", group: "CUDA__STREAM", anchor: "1g37823c49206e3704ae23c7ad78560bca", doc: "Reports whether a stream is capturing, idle, or has an invalidated capture", safety: "" },
    FnDoc { name: "cuStreamQuery", group: "CUDA__STREAM", anchor: "1g1b0d24bbe97fa68e4bc511fb6adfeb0b", doc: "Checks without blocking whether all work queued on a stream has completed", safety: "" },
    FnDoc { name: "cuStreamSynchronize", group: "CUDA__STREAM", anchor: "1g15e49dd91ec15991eb7c0a741beb7dad", doc: "Blocks until all work queued on a stream has completed", safety: "" },
    FnDoc { name: "cuStreamWaitEvent", group: "CUDA__STREAM", anchor: "1g6a898b652dfc6aa1d5c8d97062618b2f", doc: "Makes later work on a stream wait for the work captured by an event", safety: "" },
];

#[cfg(test)]
mod tests {
    use super::FN_DOCS;

    #[test]
    fn table_is_well_formed() {
        for w in FN_DOCS.windows(2) {
            assert!(
                w[0].name < w[1].name,
                "fn_docs.rs: {} and {} out of order",
                w[0].name,
                w[1].name
            );
        }
        for d in FN_DOCS {
            assert!(
                d.anchor.is_empty()
                    || (d.anchor.len() == 34
                        && d.anchor.starts_with("1g")
                        && d.anchor[2..]
                            .bytes()
                            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))),
                "{}: anchor {:?}",
                d.name,
                d.anchor
            );
            assert!(
                !d.doc.is_empty() && !d.doc.contains('\n') && !d.doc.ends_with('.'),
                "{}: doc",
                d.name
            );
            assert!(!d.safety.contains('\n'), "{}: safety", d.name);
            assert_eq!(
                FN_DOCS
                    .iter()
                    .filter(|o| !d.anchor.is_empty() && o.anchor == d.anchor)
                    .count(),
                d.anchor.is_empty() as usize ^ 1
            );
        }
    }
}
