/* The memory cap of the cap mutants (named in mutants/caps.c): what a GPU-sharing layer reports and charges.
 *
 * Shared by precondition.c (its cuMemGetInfo_v2 and cuDeviceTotalMem_v2 hooks report the cap),
 * mutants/caps.c (cuMemAlloc_v2, cuMemFree_v2), mutants/vaspace.c (cuGraphAddMemAllocNode, where
 * only the counting cap acts) and mutants/alloc.c (the stream-ordered calls'
 * hooks charge and refund it), so that no group file calls another. Each layer caps the process
 * at half the device's memory and differs in what it charges and what a free gives back:
 *   820-cap-bypass           charges cuMemAlloc only: the pool paths are uncapped (a layer that
 *                            hooks cuMemAlloc only)
 *   820-cap-misses-graphs    charges cuMemAlloc and the stream-ordered allocations, but not one
 *                            made on a capturing stream (a graph's memory node), nor any graph
 *                            node: graph memory escapes the cap
 *   822-cap-counts-reserved  charges every allocation (a captured one when captured); a free from
 *                            a pool whose release threshold keeps memory charges it again instead
 *                            of refunding it (the layer counts the pool's reserve on top of the
 *                            allocation): a freed block reallocated is refused OUT_OF_MEMORY
 * Two more layers count every process on the GPU (issue 47), as most sharing layers do by default:
 * the memory free is the cap less what the whole device has in use (the driver's total less its
 * free: every process's contexts and allocations), and an allocation past it is refused, less what
 * its pool holds reserved and unused (memory already counted); nothing is charged per process:
 *   820-counting-cap-misses-graphs  checks cuMemAlloc and the stream-ordered allocations, but not
 *                                   one made on a capturing stream, nor cuGraphAddMemAllocNode: a
 *                                   graph's memory escapes the check (though it shows in use once
 *                                   launched)
 *   counting-cap                    (a fault: the faithful layer) checks those too */
#include "shim.h"

#define CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE 17
#define CU_MEMPOOL_ATTR_RELEASE_THRESHOLD 4
#define CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT 5
#define CU_MEMPOOL_ATTR_USED_MEM_CURRENT 7
#define CU_STREAM_CAPTURE_STATUS_NONE 0

/* The layers, and what each charges. */
static const struct layer {
  const char *name;
  int stream_ordered; /* charges cuMemAllocAsync and cuMemAllocFromPoolAsync */
  int captured;       /* charges them on a capturing stream too */
  int counts_kept;    /* a free from a pool that keeps memory charges it again */
  int counting;       /* counts every process on the GPU (checks, charges nothing); `captured`: it
                         checks cuGraphAddMemAllocNode too */
} LAYERS[] = {
    {"820-cap-bypass", 0, 0, 0, 0},
    {"820-cap-misses-graphs", 1, 0, 0, 0},
    {"822-cap-counts-reserved", 1, 1, 1, 0},
    {"820-counting-cap-misses-graphs", 1, 0, 0, 1},
    {"counting-cap", 1, 1, 0, 1},
};

/* The layer switched on, or NULL. */
static const struct layer *layer(void) {
  for (size_t i = 0; i < sizeof LAYERS / sizeof *LAYERS; i++)
    if (shim_on(LAYERS[i].name)) return &LAYERS[i];
  return NULL;
}

/* Bytes charged and not given back. */
static size_t charged;

/* Half the memory of the calling context's device: set by the first cuMemGetInfo, else asked at
 * the first charge; 0 while the driver cannot say. */
static size_t limit;

static size_t cap(void) {
  if (limit) return limit;
  NEXT(info, "cuMemGetInfo_v2", CUresult, (size_t *, size_t *));
  size_t free_bytes = 0, total = 0;
  if (info && info(&free_bytes, &total) == CUDA_SUCCESS) limit = total / 2;
  return limit;
}

/* What was charged, by address: the bytes and the pool they came from (NULL: none, or unknown). */
#define SLOTS 1024
static struct {
  CUdeviceptr p;
  size_t n;
  CUmemoryPool pool;
} taken[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void note_taken(CUdeviceptr p, size_t n, CUmemoryPool pool) {
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < SLOTS; i++)
    if (!taken[i].p) {
      taken[i].p = p;
      taken[i].n = n;
      taken[i].pool = pool;
      break;
    }
  pthread_mutex_unlock(&lock);
}

/* The bytes noted for `p` (forgotten now), or 0; its pool in *pool. */
static size_t forget_taken(CUdeviceptr p, CUmemoryPool *pool) {
  size_t n = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; p && i < SLOTS && !n; i++)
    if (taken[i].p == p) {
      n = taken[i].n;
      *pool = taken[i].pool;
      taken[i].p = 0;
    }
  pthread_mutex_unlock(&lock);
  return n;
}

/* Whether `stream` is capturing, per the driver (no when it cannot say). */
static int capturing(CUstream stream) {
  NEXT(is_capturing, "cuStreamIsCapturing", CUresult, (CUstream, int *));
  int status = CU_STREAM_CAPTURE_STATUS_NONE;
  return is_capturing && is_capturing(stream, &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* The pool `p` belongs to, per the driver; NULL when it has none or the driver cannot say. */
static CUmemoryPool pool_of(CUdeviceptr p) {
  NEXT(attr, "cuPointerGetAttribute", CUresult, (void *, int, CUdeviceptr));
  CUmemoryPool pool = NULL;
  return attr && attr(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p) == CUDA_SUCCESS ? pool : NULL;
}

/* Whether `pool` keeps freed memory (a release threshold above 0), per the driver. */
static int keeps(CUmemoryPool pool) {
  NEXT(get, "cuMemPoolGetAttribute", CUresult, (CUmemoryPool, int, void *));
  cuuint64_t threshold = 0;
  return pool && get && get(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold) == CUDA_SUCCESS && threshold > 0;
}

/* A pool attribute (a cuuint64_t one), per the driver; 0 when it cannot say. */
static cuuint64_t pool_u64(CUmemoryPool pool, int attribute) {
  NEXT(get, "cuMemPoolGetAttribute", CUresult, (CUmemoryPool, int, void *));
  cuuint64_t v = 0;
  return pool && get && get(pool, attribute, &v) == CUDA_SUCCESS ? v : 0;
}

/* The pool cuMemAllocAsync serves from: the current pool of the calling context's device; NULL
 * when the driver cannot say. */
static CUmemoryPool current_pool(void) {
  NEXT(device, "cuCtxGetDevice", CUresult, (CUdevice *));
  NEXT(get_pool, "cuDeviceGetMemPool", CUresult, (CUmemoryPool *, CUdevice));
  CUdevice d;
  CUmemoryPool pool = NULL;
  return device && get_pool && device(&d) == CUDA_SUCCESS && get_pool(&pool, d) == CUDA_SUCCESS ? pool : NULL;
}

/* A counting layer's memory free: the cap less the device's memory in use by every process (the
 * driver's total less its free); SIZE_MAX when the driver cannot say (no context: the call fails
 * on its own). */
static size_t counting_free(void) {
  NEXT(info, "cuMemGetInfo_v2", CUresult, (size_t *, size_t *));
  size_t free_bytes = 0, total = 0;
  if (!info || info(&free_bytes, &total) != CUDA_SUCCESS || free_bytes > total) return SIZE_MAX;
  size_t used = total - free_bytes, limit = cap();
  if (!limit) return SIZE_MAX;
  return limit > used ? limit - used : 0;
}

/* Whether a counting layer lets `n` bytes from `pool` (NULL: none) through: what is free, and the
 * pool's reserve not in use (already counted in use), cover them. */
static int counting_allows(size_t n, CUmemoryPool pool) {
  cuuint64_t reserved = pool_u64(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
  cuuint64_t in_use = pool_u64(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
  size_t spare = reserved > in_use ? (size_t)(reserved - in_use) : 0;
  size_t room = counting_free();
  return n <= room || n - room <= spare;
}

CUresult shim_cap_info(CUresult r, size_t *free_bytes, size_t *total_bytes) {
  const struct layer *l = layer();
  if (r != CUDA_SUCCESS || !l || !free_bytes || !total_bytes) return r;
  size_t used = l->counting ? *total_bytes - *free_bytes : __atomic_load_n(&charged, __ATOMIC_SEQ_CST);
  *total_bytes /= 2;
  if (!limit) limit = *total_bytes;
  *free_bytes = *total_bytes > used ? *total_bytes - used : 0;
  return r;
}

CUresult shim_cap_total(CUresult r, size_t *bytes) {
  if (r == CUDA_SUCCESS && bytes && layer()) *bytes /= 2;
  return r;
}

int shim_cap_take(int stream_ordered, CUstream stream, CUmemoryPool pool, size_t n, size_t *charge) {
  const struct layer *l = layer();
  *charge = 0;
  if (!l || !n || shim_init_state != 1) return 1;
  if (stream_ordered && (!l->stream_ordered || (!l->captured && capturing(stream)))) return 1;
  /* A captured allocation comes from the graph's memory, not from `pool`'s reserve. */
  if (l->counting) return counting_allows(n, !stream_ordered || capturing(stream) ? NULL : pool ? pool : current_pool());
  size_t limit = cap();
  size_t was = __atomic_fetch_add(&charged, n, __ATOMIC_SEQ_CST);
  if (!limit || (was <= limit && n <= limit - was)) {
    *charge = n;
    return 1;
  }
  __atomic_fetch_sub(&charged, n, __ATOMIC_SEQ_CST);
  return 0;
}

int shim_cap_graph_node(size_t n) {
  const struct layer *l = layer();
  if (!l || !l->counting || !l->captured || !n || shim_init_state != 1) return 1;
  return counting_allows(n, NULL);
}

CUresult shim_cap_took(CUresult r, CUdeviceptr *dptr, size_t charge, CUmemoryPool pool) {
  if (!charge) return r;
  if (r == CUDA_SUCCESS && dptr) note_taken(*dptr, charge, pool ? pool : pool_of(*dptr));
  else __atomic_fetch_sub(&charged, charge, __ATOMIC_SEQ_CST);
  return r;
}

CUresult shim_cap_freed(CUresult r, CUdeviceptr p) {
  const struct layer *l = layer();
  if (r != CUDA_SUCCESS || !l) return r;
  CUmemoryPool pool = NULL;
  size_t n = forget_taken(p, &pool);
  if (!n) return r;
  if (l->counts_kept && keeps(pool)) __atomic_fetch_add(&charged, n, __ATOMIC_SEQ_CST);
  else __atomic_fetch_sub(&charged, n, __ATOMIC_SEQ_CST);
  return r;
}
