/* The mutants of a GPU-sharing layer's own bookkeeping (issues 23, 34): its memory cap, its plain allocator, its context check.
 *
 * A GPU-sharing or checkpointing layer hooks the plain allocator to cap, count or track the
 * process's memory, and checks the calling thread's context itself; each mutant is one way it then
 * disagrees with the stream-ordered allocator. This file hooks cuMemAlloc_v2 and cuMemFree_v2 (the
 * counting cap's check of a graph node acts in mutants/vaspace.c's cuGraphAddMemAllocNode); the
 * cap itself (what it reports, charges and refunds, in these hooks and the stream-ordered calls'
 * of mutants/alloc.c) is cap.c's, the context check no_context.c's (BEGIN, shim.h). The comment
 * above each entry names the trials that kill it. */
#include "../shim.h"

#define CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE 17
#define CU_STREAM_LEGACY ((CUstream)0x1)

const struct shim_entry caps_entries[] = {
    /* 820 caps::beyond_reported_total_out_of_memory, 821 caps::beyond_reported_total_out_of_memory
     * (and _ipc_pool), 828 caps::pool_memory_shows_in_mem_get_info */
    MUTANT("820-cap-bypass", 820, "gpu",
           "reports half the memory (cuMemGetInfo, cuDeviceTotalMem) and caps cuMemAlloc there; pool paths uncapped"),
    /* 820 caps::captured_graphs_within_reported_total, 820 caps::graph_alloc_nodes_within_reported_total */
    MUTANT("820-cap-misses-graphs", 820, "gpu",
           "reports half the memory and caps cuMemAlloc and the stream-ordered allocations there; graph memory uncapped"),
    /* 821 caps::reserved_memory_reusable_by_its_pool, 821 caps::reserve_of_one_pool_leaves_another_room (and
     * 820 caps::graph_alloc_nodes_within_reported_total: it does not see cuGraphAddMemAllocNode) */
    MUTANT("822-cap-counts-reserved", 822, "gpu",
           "caps every allocation at half the memory; a free from a pool that keeps memory charges it again"),
    /* 820 caps::captured_graphs_within_reported_total, 820 caps::graph_alloc_nodes_within_reported_total (issue 47:
     * under a cap that counts every process, the suite's own included; the faithful layer is the fault counting-cap,
     * precondition.c, under which they pass) */
    MUTANT("820-counting-cap-misses-graphs", 820, "gpu",
           "reports half the memory less what every process on the GPU uses and refuses cuMemAlloc and the "
           "stream-ordered allocations past it; graph memory unchecked"),
    /* 828 caps::pool_memory_shows_in_mem_get_info (issue 48: the claim asserted) */
    MUTANT("828-mem-info-frozen", 828, "gpu",
           "cuMemGetInfo reports the free memory of its first answer in the process ever after: a pool's growth never "
           "shows"),
    /* 820, 821, 822 interposer::no_current_context_explicit_stream_succeeds */
    MUTANT("820-no-context-refuses-stream", 820, "gpu",
           "cuMemAllocAsync answers INVALID_CONTEXT on a thread without a current context, whatever the stream"),
    MUTANT("821-no-context-refuses-stream", 821, "gpu",
           "cuMemAllocFromPoolAsync answers INVALID_CONTEXT on a thread without a current context, whatever the stream"),
    MUTANT("822-no-context-refuses-stream", 822, "gpu",
           "cuMemFreeAsync answers INVALID_CONTEXT on a thread without a current context, whatever the stream"),
    /* 828 accounting::cuMemAlloc_leaves_the_pools_alone */
    MUTANT("820-cuMemAlloc-from-default-pool", 820, "gpu",
           "serves cuMemAlloc from the device's default pool (allocated on the legacy stream, synchronised)"),
    /* 822 accounting::cuMemFree_takes_stream_ordered_memory */
    MUTANT("822-cuMemFree-refuses-pool-memory", 822, "gpu",
           "cuMemFree answers INVALID_VALUE for memory of a pool (it frees only what cuMemAlloc gave)"),
    {0},
};

/* cuMemAlloc as the calling device's default pool serves it; the driver's code. */
static CUresult from_default_pool(CUdeviceptr *dptr, size_t n) {
  NEXT(device, "cuCtxGetDevice", CUresult, (CUdevice *));
  NEXT(get_default, "cuDeviceGetDefaultMemPool", CUresult, (CUmemoryPool *, CUdevice));
  NEXT(alloc, "cuMemAllocFromPoolAsync", CUresult, (CUdeviceptr *, size_t, CUmemoryPool, CUstream));
  NEXT(sync, "cuStreamSynchronize", CUresult, (CUstream));
  CUdevice d;
  CUmemoryPool pool = NULL;
  CUresult r = device && get_default && alloc && sync ? device(&d) : CUDA_ERROR_UNKNOWN;
  if (r == CUDA_SUCCESS) r = get_default(&pool, d);
  if (r == CUDA_SUCCESS) r = alloc(dptr, n, pool, CU_STREAM_LEGACY);
  if (r == CUDA_SUCCESS) r = sync(CU_STREAM_LEGACY);
  return r;
}

/* Whether `p` is memory of a pool, per the driver. */
static int pool_memory(CUdeviceptr p) {
  NEXT(attr, "cuPointerGetAttribute", CUresult, (void *, int, CUdeviceptr));
  CUmemoryPool pool = NULL;
  return attr && attr(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p) == CUDA_SUCCESS && pool;
}

/* The start of each hook: its driver function, and the machine's faults (not API hooks: no
 * init-state mutants). */
#define ENTER(name, ret, args) \
  REAL(name, ret, args);       \
  {                            \
    CUresult pre_r_;           \
    if (shim_precondition(name, &pre_r_)) return pre_r_; \
  }

HOOK CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t n) {
  ENTER("cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t));
  if (shim_init_state != 1 || !dptr || n == 0) return real(dptr, n);
  if (shim_on("820-cuMemAlloc-from-default-pool")) return from_default_pool(dptr, n);
  size_t charge;
  if (!shim_cap_take(0, NULL, NULL, n, &charge)) return CUDA_ERROR_OUT_OF_MEMORY;
  return shim_cap_took(real(dptr, n), dptr, charge, NULL);
}

HOOK CUresult cuMemFree_v2(CUdeviceptr p) {
  ENTER("cuMemFree_v2", CUresult, (CUdeviceptr));
  if (shim_init_state != 1 || !p) return real(p);
  if (shim_on("822-cuMemFree-refuses-pool-memory") && pool_memory(p)) return CUDA_ERROR_INVALID_VALUE;
  return shim_cap_freed(real(p), p);
}

const struct shim_hook caps_hooks[] = {
    {"cuMemAlloc_v2", (void *)cuMemAlloc_v2},
    {"cuMemFree_v2", (void *)cuMemFree_v2},
    {0},
};
