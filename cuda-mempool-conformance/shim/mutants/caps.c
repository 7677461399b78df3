/* The mutants of memory a layer hands out outside the pools (issue 23): cuMemAlloc_v2 and cuMemFree_v2.
 *
 * A GPU-sharing or checkpointing layer hooks the plain allocator to cap, count or track the
 * process's memory; each mutant is one way it then disagrees with the stream-ordered allocator.
 * The cap itself (what cuMemGetInfo_v2 and cuDeviceTotalMem_v2 report) is cap.c's. The comment
 * above each entry names the trials that kill it. */
#include "../shim.h"

#define CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE 17
#define CU_STREAM_LEGACY ((CUstream)0x1)

const struct shim_entry caps_entries[] = {
    /* 820 caps::beyond_reported_total_out_of_memory, 821 caps::beyond_reported_total_out_of_memory
     * (and _ipc_pool), 828 caps::pool_memory_shows_in_mem_get_info */
    MUTANT("820-cap-bypass", 820, "gpu",
           "reports half the memory (cuMemGetInfo, cuDeviceTotalMem) and caps cuMemAlloc there; pool paths uncapped"),
    /* 828 accounting::cuMemAlloc_leaves_the_pools_alone */
    MUTANT("820-cuMemAlloc-from-default-pool", 820, "gpu",
           "serves cuMemAlloc from the device's default pool (allocated on the legacy stream, synchronised)"),
    /* 822 accounting::cuMemFree_takes_stream_ordered_memory */
    MUTANT("822-cuMemFree-refuses-pool-memory", 822, "gpu",
           "cuMemFree answers INVALID_VALUE for memory of a pool (it frees only what cuMemAlloc gave)"),
    {0},
};

/* What cuMemAlloc_v2 took under the cap, by address: refunded when cuMemFree_v2 frees it. */
#define SLOTS 1024
static struct {
  CUdeviceptr p;
  size_t n;
} taken[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void note_taken(CUdeviceptr p, size_t n) {
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < SLOTS; i++)
    if (!taken[i].p) {
      taken[i].p = p;
      taken[i].n = n;
      break;
    }
  pthread_mutex_unlock(&lock);
}

/* The bytes noted for `p` (forgotten now), or 0. */
static size_t forget_taken(CUdeviceptr p) {
  size_t n = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; p && i < SLOTS && !n; i++)
    if (taken[i].p == p) {
      n = taken[i].n;
      taken[i].p = 0;
    }
  pthread_mutex_unlock(&lock);
  return n;
}

/* The driver's other functions the mutants use (never this library's hooks). */
#define NEXT(var, name, ret, args) \
  static ret(*var) args;           \
  if (!var) *(void **)&var = shim_next(name)

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
  if (!shim_on("820-cap-bypass")) return real(dptr, n);
  if (!shim_cap_charge(n)) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = real(dptr, n);
  if (r == CUDA_SUCCESS) note_taken(*dptr, n);
  else shim_cap_refund(n);
  return r;
}

HOOK CUresult cuMemFree_v2(CUdeviceptr p) {
  ENTER("cuMemFree_v2", CUresult, (CUdeviceptr));
  if (shim_init_state != 1 || !p) return real(p);
  if (shim_on("822-cuMemFree-refuses-pool-memory") && pool_memory(p)) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = real(p);
  size_t n = r == CUDA_SUCCESS && shim_on("820-cap-bypass") ? forget_taken(p) : 0;
  if (n) shim_cap_refund(n);
  return r;
}

const struct shim_hook caps_hooks[] = {
    {"cuMemAlloc_v2", (void *)cuMemAlloc_v2},
    {"cuMemFree_v2", (void *)cuMemFree_v2},
    {0},
};
