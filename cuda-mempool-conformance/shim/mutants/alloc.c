/* The mutants (and faults) of 820 cuMemAllocAsync, 821 cuMemAllocFromPoolAsync, 822 cuMemFreeAsync.
 *
 * Besides the two faults, the mutants of the three APIs: each changes one behaviour the way an
 * interposer that handles these calls itself (keeps its own table of allocations, picks the pool,
 * translates codes) gets it wrong. The comment above each entry names the trials that kill it. */
#include "../shim.h"

#include <pthread.h>
#include <stdint.h>

/* Pointers allocated through this library (bad-result-822): a small open-addressing set. */
#define SLOTS 65536
static CUdeviceptr mine[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static size_t slot(CUdeviceptr p) { return (size_t)((p >> 8) * 2654435761u) % SLOTS; }
static void remember(CUdeviceptr p) {
  if (!p) return;
  pthread_mutex_lock(&lock);
  for (size_t i = slot(p), k = 0; k < SLOTS; i = (i + 1) % SLOTS, k++)
    if (mine[i] == 0 || mine[i] == p) { mine[i] = p; break; }
  pthread_mutex_unlock(&lock);
}
static int forget(CUdeviceptr p) {
  int found = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = slot(p), k = 0; k < SLOTS && mine[i] != 0; i = (i + 1) % SLOTS, k++)
    if (mine[i] == p) { mine[i] = (CUdeviceptr)1; found = 1; break; } /* 1: a tombstone */
  pthread_mutex_unlock(&lock);
  return found;
}

/* The mutants' own tables (address -> size), as an interposer keeps them: `live`, what 820/821
 * allocated and 822 has not freed (822-interior-frees-block, 822-foreign-pointer-refused); `freed`,
 * what 822 freed (822-double-free-success). Open addressing, tombstones reused, one lock each. */
#define TOMB ((CUdeviceptr)1)
struct table {
  pthread_mutex_t lock;
  CUdeviceptr key[SLOTS];
  size_t size[SLOTS];
};
static struct table live = {.lock = PTHREAD_MUTEX_INITIALIZER}, freed = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void tab_put(struct table *t, CUdeviceptr p, size_t n) {
  if (p <= TOMB) return;
  pthread_mutex_lock(&t->lock);
  size_t at = SLOTS, tomb = SLOTS;
  for (size_t i = slot(p), k = 0; k < SLOTS; i = (i + 1) % SLOTS, k++) {
    CUdeviceptr q = t->key[i];
    if (q == p) { at = i; break; }
    if (q == 0) { at = tomb < SLOTS ? tomb : i; break; }
    if (q == TOMB && tomb == SLOTS) tomb = i;
  }
  if (at == SLOTS) at = tomb; /* no empty slot: the first tombstone, if any (else: full, dropped) */
  if (at < SLOTS) {
    t->key[at] = p;
    t->size[at] = n;
  }
  pthread_mutex_unlock(&t->lock);
}
/* Whether `p` is in the table; removes it when `take`. */
static int tab_find(struct table *t, CUdeviceptr p, int take) {
  int found = 0;
  if (p <= TOMB) return 0;
  pthread_mutex_lock(&t->lock);
  for (size_t i = slot(p), k = 0; k < SLOTS && t->key[i] != 0; i = (i + 1) % SLOTS, k++)
    if (t->key[i] == p) {
      if (take) t->key[i] = TOMB;
      found = 1;
      break;
    }
  pthread_mutex_unlock(&t->lock);
  return found;
}
/* The allocation `x` lies strictly inside (base < x < base + size), if the table has one. */
static int tab_base(struct table *t, CUdeviceptr x, CUdeviceptr *base) {
  int found = 0;
  pthread_mutex_lock(&t->lock);
  for (size_t i = 0; i < SLOTS; i++) {
    CUdeviceptr b = t->key[i];
    if (b > TOMB && b < x && x - b < t->size[i]) {
      *base = b;
      found = 1;
      break;
    }
  }
  pthread_mutex_unlock(&t->lock);
  return found;
}
/* Whether the `live` table is kept (only while a mutant that reads it is on). */
static int tracking(void) {
  return shim_on("822-interior-frees-block") || shim_on("822-foreign-pointer-refused") || shim_on("821-unlocked-cache");
}

/* The driver's other functions the mutants use (never this library's hooks). */
#define NEXT(var, name, ret, args) \
  static ret(*var) args;           \
  if (!var) *(void **)&var = shim_next(name)

static CUresult ctx_device(CUdevice *d) {
  NEXT(fn, "cuCtxGetDevice", CUresult, (CUdevice *));
  return fn ? fn(d) : CUDA_ERROR_UNKNOWN;
}
/* The default pool (or, `current`, the current pool) of device `d`; NULL if the driver says no. */
static CUmemoryPool pool_of_device(CUdevice d, int current) {
  NEXT(get_default, "cuDeviceGetDefaultMemPool", CUresult, (CUmemoryPool *, CUdevice));
  NEXT(get_current, "cuDeviceGetMemPool", CUresult, (CUmemoryPool *, CUdevice));
  CUresult (*fn)(CUmemoryPool *, CUdevice) = current ? get_current : get_default;
  CUmemoryPool p = NULL;
  if (!fn || fn(&p, d) != CUDA_SUCCESS) return NULL;
  return p;
}
/* The same, for the device of the current context; NULL without one. */
static CUmemoryPool pool_here(int current) {
  CUdevice d;
  return ctx_device(&d) == CUDA_SUCCESS ? pool_of_device(d, current) : NULL;
}
/* Whether the driver answers attribute queries about `pool` (not NULL, destroyed or imported). */
static int pool_usable(CUmemoryPool pool) {
  NEXT(fn, "cuMemPoolGetAttribute", CUresult, (CUmemoryPool, int, void *));
  cuuint64_t used = 0;
  return fn && pool && fn(pool, 7 /* CU_MEMPOOL_ATTR_USED_MEM_CURRENT */, &used) == CUDA_SUCCESS;
}
static CUresult alloc_from(CUdeviceptr *dptr, size_t n, CUmemoryPool pool, CUstream s) {
  NEXT(fn, "cuMemAllocFromPoolAsync", CUresult, (CUdeviceptr *, size_t, CUmemoryPool, CUstream));
  return fn ? fn(dptr, n, pool, s) : CUDA_ERROR_UNKNOWN;
}
static CUresult free_real(CUdeviceptr p, CUstream s) {
  NEXT(fn, "cuMemFreeAsync", CUresult, (CUdeviceptr, CUstream));
  return fn ? fn(p, s) : CUDA_ERROR_UNKNOWN;
}
static void stream_sync(CUstream s) {
  NEXT(fn, "cuStreamSynchronize", CUresult, (CUstream));
  if (fn) (void)fn(s);
}
/* issue 34: stream order. The -synchronous and -device-wide-sync mutants wait for the stream or the
 * context before allocating; the -deferred-pointer ones hand the pointer out late. */
static void ctx_sync(void) {
  NEXT(fn, "cuCtxSynchronize", CUresult, (void));
  if (fn) (void)fn();
}
/* Whether stream `s` has work it has not run (cuStreamQuery answers NOT_READY). */
static int stream_busy(CUstream s) {
  NEXT(fn, "cuStreamQuery", CUresult, (CUstream));
  return fn && fn(s) == 600 /* CUDA_ERROR_NOT_READY */;
}
struct late {
  CUdeviceptr *dptr;
  CUdeviceptr p;
};
/* The host function of defer_pointer: the pointer lands in the caller's variable, if that still
 * holds the 0 left there (a caller that has moved on is less likely to be written over). */
static void write_late(void *user) {
  struct late *l = user;
  CUdeviceptr zero = 0;
  (void)__atomic_compare_exchange_n(l->dptr, &zero, l->p, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  free(l);
}
/* The -deferred-pointer mutants, after an allocation of *dptr on `s` succeeded: on a stream with
 * work pending, *dptr is 0 at return and the pointer is written by a host function when the stream
 * reaches it (a layer that hands out the address once its stream runs the allocation). Unchanged
 * on an idle stream, or when the host function cannot be enqueued. */
static void defer_pointer(CUdeviceptr *dptr, CUstream s) {
  NEXT(launch, "cuLaunchHostFunc", CUresult, (CUstream, void (*)(void *), void *));
  struct late *l;
  if (!launch || !stream_busy(s) || !(l = malloc(sizeof *l))) return;
  l->dptr = dptr;
  l->p = *dptr;
  __atomic_store_n(dptr, 0, __ATOMIC_SEQ_CST);
  if (launch(s, write_late, l) != CUDA_SUCCESS) {
    *dptr = l->p;
    free(l);
  }
}

/* Whether `p` is device memory of another device than the current context's. */
static int elsewhere(CUdeviceptr p) {
  NEXT(attr, "cuPointerGetAttribute", CUresult, (void *, int, CUdeviceptr));
  unsigned type = 0;
  int ordinal = -1;
  CUdevice d;
  if (!attr || attr(&type, 2 /* MEMORY_TYPE */, p) != CUDA_SUCCESS || type != 2 /* CU_MEMORYTYPE_DEVICE */) return 0;
  if (attr(&ordinal, 9 /* DEVICE_ORDINAL */, p) != CUDA_SUCCESS || ordinal < 0) return 0;
  return ctx_device(&d) == CUDA_SUCCESS && ordinal != d;
}

/* 820-private-pool, 821-default-pool-private: this library's own pool of device `d` (a plain
 * device pool, made on first use and kept for the process); NULL when the driver refuses one. */
static CUmemoryPool private_pool(CUdevice d) {
  NEXT(create, "cuMemPoolCreate", CUresult, (CUmemoryPool *, const CUmemPoolProps *));
  static CUmemoryPool pools[64];
  static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;
  if (!create || d < 0 || d >= 64) return NULL;
  pthread_mutex_lock(&pools_lock);
  if (!pools[d]) {
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = 1;         /* pinned */
    props.location.type = 1;     /* device */
    props.location.id = d;
    if (create(&pools[d], &props) != CUDA_SUCCESS) pools[d] = NULL;
  }
  CUmemoryPool p = pools[d];
  pthread_mutex_unlock(&pools_lock);
  return p;
}

/* The guard band of the -pads-size mutants. */
#define PAD 512

const struct shim_entry alloc_entries[] = {
    FAULT("null-out-820", 820, "gpu", "writes through its out-pointer before checking it (SIGSEGV on NULL)"),
    FAULT("bad-result-822", 822, "none", "returns -1, no CUresult, for memory it did not allocate"),

    /* 820 draws_from_current_pool_after_cuDeviceSetMemPool, cuda13_selectors_agree_with_device_selectors,
     * used_mem_counts_requested_bytes */
    MUTANT("820-default-pool-not-current", 820, "gpu",
           "allocates from the device's default pool, not its current pool (cuDeviceSetMemPool ignored)"),
    /* 820 alloc_async_on_peer_stream_uses_peer_current_pool (pair dev0_dev1),
     * each_device_draws_from_its_current_pool (multi) */
    MUTANT("820-device-0-pool", 820, "peer",
           "allocates from device 0's current pool whatever the device of the context and stream"),
    /* 820 default_pool_on_legacy_stream_0, default_pool_on_CU_STREAM_LEGACY, default_pool_on_CU_STREAM_PER_THREAD
     * (the allocation's pool is not the device's current one) */
    MUTANT("820-private-pool", 820, "gpu",
           "allocates from a pool of its own per device (as a layer that keeps its own pool), not the current pool"),
    /* 820 huge_size_out_of_memory, huge_size_leaves_other_pools_reserved */
    MUTANT("820-oom-invalid-value", 820, "gpu", "answers INVALID_VALUE instead of OUT_OF_MEMORY (a 1 << 60 size)"),
    /* 820 no_current_context_invalid_context */
    MUTANT("820-no-context-invalid-value", 820, "gpu",
           "answers INVALID_VALUE instead of INVALID_CONTEXT on a thread with no current context"),
    /* 820 null_dptr_invalid_value */
    MUTANT("820-null-dptr-success", 820, "gpu", "a NULL out-pointer: allocates nothing and answers SUCCESS"),
    /* 820 size_zero_succeeds_with_null_pointer_driver_behaviour */
    MUTANT("820-size-zero-pointer-untouched", 820, "gpu",
           "size 0: answers SUCCESS without writing the null pointer to *dptr"),
    /* 820 used_mem_counts_requested_bytes */
    MUTANT("820-pads-size", 820, "gpu", "allocates 512 bytes more than asked (a guard band): used memory shows it"),

    /* 821 own_pool_on_legacy_stream_0, own_pool_on_CU_STREAM_LEGACY, own_pool_on_CU_STREAM_PER_THREAD,
     * 828 used_mem_exact_accounting */
    MUTANT("821-ignores-pool", 821, "gpu",
           "ignores the pool argument: allocates from the default pool of the current context's device"),
    /* 821 default_pool_explicitly */
    MUTANT("821-default-pool-private", 821, "gpu",
           "a device's default pool passed explicitly: allocates from a pool of its own instead"),
    /* 821 null_pool_invalid_value */
    MUTANT("821-null-pool-current-pool", 821, "gpu",
           "a NULL pool: allocates from the device's current pool and answers SUCCESS"),
    /* 821 destroyed_pool; with IPC also imported_pool_alloc_refused */
    MUTANT("821-refused-pool-falls-back", 821, "gpu",
           "a pool the driver refuses (destroyed, imported): allocates from the default pool instead"),
    /* 821 huge_size_out_of_memory, 823 max_size_limits_allocation,
     * 832 reuse_internal_dependencies_off_out_of_memory */
    MUTANT("821-oom-invalid-value", 821, "gpu",
           "answers INVALID_VALUE instead of OUT_OF_MEMORY (1 << 60 bytes, beyond maxSize, pool full)"),
    /* 821 null_dptr_invalid_value */
    MUTANT("821-null-dptr-success", 821, "gpu", "a NULL out-pointer: allocates nothing and answers SUCCESS"),
    /* 821 size_zero_succeeds_with_null_pointer_driver_behaviour */
    MUTANT("821-size-zero-allocates", 821, "gpu", "size 0: allocates 1 byte and returns its non-null pointer"),
    /* 828 used_mem_exact_accounting, reserved_mem_grows_in_32mib_chunks_driver_behaviour */
    MUTANT("821-pads-size", 821, "gpu", "allocates 512 bytes more than asked (a guard band): used memory shows it"),
    /* 821 alloc_from_peer_pool_on_own_stream (pair) */
    MUTANT("821-other-device-pool-refused", 821, "peer",
           "refuses (INVALID_DEVICE) a pool whose memory lives on another device than the current context's"),

    /* 822 double_free */
    MUTANT("822-double-free-success", 822, "gpu",
           "a pointer it has already freed: answers SUCCESS instead of INVALID_VALUE"),
    /* 822 interior_pointer (the trial's own free of the base then fails) */
    MUTANT("822-interior-frees-block", 822, "gpu",
           "a pointer inside one of its allocations: frees that whole allocation and answers SUCCESS"),
    /* 822 stream_order::returns_while_its_stream_is_held; with IPC also
     * stream_order::free_of_imported_memory_returns_while_its_stream_is_held (in the importer); 832
     * reuse_follow_event_dependencies_off_does_not and reuse_internal_dependencies_off_out_of_memory (their
     * gates' safety limit opens the held stream) */
    MUTANT("822-synchronous", 822, "gpu",
           "frees like cuMemFree: waits for the stream before and after the free instead of returning at once"),
    /* 822 free_on_other_stream_after_event, double_free; 828 used_mem_exact_accounting;
     * 832 release_threshold_zero_releases_at_sync; suite::no_leaks */
    MUTANT("822-noop-leaks", 822, "gpu", "answers SUCCESS and frees nothing (every allocation leaks)"),
    /* 822 free_of_cuMemAlloc_memory; with IPC also free_imported_pointer */
    MUTANT("822-foreign-pointer-refused", 822, "gpu",
           "frees only what it allocated through 820/821: cuMemAlloc and imported memory answer INVALID_VALUE"),
    /* 820 capture::alloc_and_free_become_graph_nodes_* (no alloc node; the pool's memory is used) */
    MUTANT("820-capture-allocates-eagerly", 820, "gpu",
           "on a capturing stream: allocates at once on the per-thread stream instead of adding a graph node"),
    /* 820 capture::during_global_capture_alloc_on_legacy_stream_implicit_and_invalidates */
    MUTANT("820-legacy-as-per-thread", 820, "gpu",
           "the legacy stream (0 or CU_STREAM_LEGACY) is taken as the per-thread stream: no implicit synchronisation"),
    /* 821 capture::alloc_and_free_become_graph_nodes_* (no alloc node; the pool's memory is used) */
    MUTANT("821-capture-allocates-eagerly", 821, "gpu",
           "on a capturing stream: allocates at once on the per-thread stream instead of adding a graph node"),
    /* 821 capture::during_global_capture_ipc_capable_pool_refused_capture_survives_driver_behaviour */
    MUTANT("821-capture-refusal-invalid-value", 821, "ipc",
           "an exportable pool refused during a capture: answers INVALID_VALUE instead of NOT_SUPPORTED"),
    /* 820/821 load::threads_and_streams_* (used memory above the bytes live at a quiescent point) */
    MUTANT("822-lost-free-under-contention", 822, "gpu",
           "an allocation table without a lock: a free made while another thread frees is lost (SUCCESS)"),
    /* 822 free_on_other_device_stream (pair), free_on_every_other_device_stream (multi) */
    MUTANT("822-other-device-refused", 822, "peer",
           "refuses (INVALID_DEVICE) to free memory of another device than the current context's"),
    /* issue 23: interposer */
    /* 821 interposer::no_current_context_invalid_context */
    MUTANT("821-no-context-crash", 821, "gpu",
           "on a thread with no current context: uses the device it could not get (SIGSEGV)"),
    /* 821 interposer::refused_allocation_leaves_pool_as_it_was */
    MUTANT("821-failure-leaks", 821, "gpu",
           "takes a 2 MiB block from the pool before each call and keeps it when the driver refuses the call"),
    /* 822 interposer::free_with_other_device_current (pair), free_on_other_device_stream (pair) */
    MUTANT("822-charges-current-device", 822, "peer",
           "looks a free up under the current context's device: another device's memory answers SUCCESS, not freed"),
    /* 820 interposer::alloc_with_other_device_current_uses_stream_device_pool (pair) */
    MUTANT("820-current-context-pool", 820, "peer",
           "draws from the current pool of the current context's device, not of the stream's device"),
    /* 820 ptsz_variant_uses_per_thread_stream (entry proc-address); the flag is read in ../misbehave.c */
    MUTANT("820-proc-address-ignores-ptds", 820, "gpu",
           "cuGetProcAddress ignores the per-thread-default-stream flag for cuMemAllocAsync: the legacy variant"),
    /* 822 entry::per_thread_lookup_is_the_ptsz_symbol (issue 48; the flag is read in ../misbehave.c) */
    MUTANT("822-proc-address-ignores-ptds", 822, "gpu",
           "cuGetProcAddress ignores the per-thread-default-stream flag for cuMemFreeAsync: the legacy variant"),
    /* 821 ptsz_variant (look-ups in misbehave.c: a stand-in driver without the per-thread variants) */
    MUTANT("821-ptsz-missing", 821, "gpu",
           "offers no per-thread-default-stream cuMemAllocFromPoolAsync: dlsym of _ptsz NULL, cuGetProcAddress with the flag NOT_FOUND"),
    /* issue 23: edges */
    /* 820 edges_bytesize (SIZE_MAX - 4095, SIZE_MAX) */
    MUTANT("820-size-round-up-wraps", 820, "gpu",
           "a size whose round-up to 2 MiB overflows wraps to 0 (SIZE_MAX allocates nothing) instead of OUT_OF_MEMORY"),
    /* 821 edges_bytesize (SIZE_MAX - 4095, SIZE_MAX) */
    MUTANT("821-size-round-up-wraps", 821, "gpu",
           "a size whose round-up to 2 MiB overflows wraps to 0 (SIZE_MAX allocates nothing) instead of OUT_OF_MEMORY"),
    /* issue 23: accounting */
    /* 822 accounting::pending_free_uncounted_at_once_but_kept_reserved,
     * 833 accounting::trim_keeps_memory_of_a_pending_free */
    MUTANT("822-free-ignores-stream", 822, "gpu",
           "frees on the per-thread stream and waits for it: freed at once, not when the given stream reaches the free"),
    /* 822 accounting::pool_usable_after_a_refused_double_free */
    MUTANT("822-refused-free-fails-closed", 822, "gpu",
           "after a free the driver refuses, every later 820/821 allocation answers OUT_OF_MEMORY"),
    /* 821 load::threads_one_pool_no_lock (two live allocations overlap) */
    MUTANT("821-unlocked-cache", 821, "gpu",
           "keeps one freed block in a slot without a lock for the next allocation of its size and pool"),
    /* issue 34: stream order */
    /* 820 stream_order::returns_while_its_stream_is_held, stream_order::refused_at_once_while_its_stream_is_held,
     * stream_order::pointer_known_at_return_and_used_by_its_stream (every trial that allocates on a held stream
     * fails: its gate's safety limit opens the stream) */
    MUTANT("820-synchronous", 820, "gpu",
           "waits for the stream before allocating (cuStreamSynchronize), as a layer that synchronises every allocation"),
    /* 821 stream_order::returns_while_its_stream_is_held, stream_order::refused_at_once_while_its_stream_is_held,
     * stream_order::pointer_known_at_return_and_used_by_its_stream; 828
     * accounting::allocation_counted_before_its_stream_runs; 832 reuse_follow_event_dependencies_* (the
     * allocation's stream waits for a held one) */
    MUTANT("821-synchronous", 821, "gpu",
           "waits for the stream before allocating (cuStreamSynchronize), as a layer that synchronises every allocation"),
    /* 820 stream_order::other_stream_does_not_wait_for_a_held_one (and the 820 trials of 820-synchronous) */
    MUTANT("820-device-wide-sync", 820, "gpu",
           "waits for the whole context (cuCtxSynchronize) before allocating: a held stream stops every allocation"),
    /* 821 stream_order::other_stream_does_not_wait_for_a_held_one (and the 821 trials of 821-synchronous) */
    MUTANT("821-device-wide-sync", 821, "gpu",
           "waits for the whole context (cuCtxSynchronize) before allocating: a held stream stops every allocation"),
    /* 820 stream_order::pointer_known_at_return_and_used_by_its_stream */
    MUTANT("820-deferred-pointer", 820, "gpu",
           "on a stream with work pending: SUCCESS with *dptr 0, the pointer written when the stream reaches it"),
    /* 821 stream_order::pointer_known_at_return_and_used_by_its_stream; 828
     * accounting::allocation_counted_before_its_stream_runs (the allocation is never freed) */
    MUTANT("821-deferred-pointer", 821, "gpu",
           "on a stream with work pending: SUCCESS with *dptr 0, the pointer written when the stream reaches it"),
    {0},
};

/* The -size-round-up-wraps mutants: `n` rounded up to 2 MiB in size_t, as an interposer that
 * accounts in pages does (only a size whose round-up overflows changes: it wraps to 0). */
#define GRAIN ((size_t)2 << 20)
static size_t wrapped(size_t n) { return n > SIZE_MAX - (GRAIN - 1) ? (n + GRAIN - 1) & ~(GRAIN - 1) : n; }

/* Whether stream `s` is capturing (820-capture-allocates-eagerly). */
static int capturing(CUstream s) {
  static CUresult (*is_capturing)(CUstream, int *);
  if (!is_capturing) *(void **)&is_capturing = shim_next("cuStreamIsCapturing");
  int status = 0; /* CU_STREAM_CAPTURE_STATUS_NONE */
  return is_capturing && is_capturing(s, &status) == CUDA_SUCCESS && status == 1 /* ACTIVE */;
}

/* 822-lost-free-under-contention: the frees in progress. */
static int freeing;

/* issue 23: accounting. 822-refused-free-fails-closed: a free was refused. 821-unlocked-cache: the
 * parked block, read and cleared without a lock on purpose (an interposer's racy cache). */
static volatile int refused_free;
static volatile struct {
  CUdeviceptr p;
  size_t n;
} parked;
/* The size the `live` table holds for `p`, or 0. */
static size_t live_size(CUdeviceptr p) {
  size_t n = 0;
  pthread_mutex_lock(&live.lock);
  for (size_t i = slot(p), k = 0; p > TOMB && k < SLOTS && live.key[i] != 0; i = (i + 1) % SLOTS, k++)
    if (live.key[i] == p) {
      n = live.size[i];
      break;
    }
  pthread_mutex_unlock(&live.lock);
  return n;
}
/* The pool `p` was allocated from, per the driver (CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE); NULL if unknown. */
static CUmemoryPool pool_of_pointer(CUdeviceptr p) {
  NEXT(attr, "cuPointerGetAttribute", CUresult, (void *, int, CUdeviceptr));
  CUmemoryPool pool = NULL;
  if (!attr || attr(&pool, 17, p) != CUDA_SUCCESS) return NULL;
  return pool;
}

/* The 820 mutants around the driver's cuMemAllocAsync. */
static CUresult alloc_820(CUresult (*real)(CUdeviceptr *, size_t, CUstream), CUdeviceptr *dptr, size_t n,
                          CUstream s) {
  /* Interposers that make every default stream the per-thread one lose the legacy stream's implicit
   * synchronisation with other streams. */
  if (shim_on("820-legacy-as-per-thread") && (s == NULL || s == (CUstream)0x1)) s = (CUstream)0x2;
  /* issue 34: stream order */
  if (shim_on("820-synchronous")) stream_sync(s);
  if (shim_on("820-device-wide-sync")) ctx_sync();
  if (dptr && refused_free && shim_on("822-refused-free-fails-closed")) return CUDA_ERROR_OUT_OF_MEMORY;
  if (dptr && shim_on("820-capture-allocates-eagerly") && capturing(s))
    return real(dptr, n, (CUstream)0x2 /* CU_STREAM_PER_THREAD */);
  if (!dptr && shim_on("820-null-dptr-success")) return CUDA_SUCCESS;
  if (shim_on("820-size-round-up-wraps")) n = wrapped(n);
  if (dptr && n == 0 && shim_on("820-size-zero-pointer-untouched")) return CUDA_SUCCESS;
  if (dptr && n > 0) {
    CUmemoryPool pool = NULL;
    CUdevice d;
    if (shim_on("820-default-pool-not-current")) pool = pool_here(0);
    if (shim_on("820-device-0-pool") && ctx_device(&d) == CUDA_SUCCESS) pool = pool_of_device(0, 1);
    if (shim_on("820-private-pool") && ctx_device(&d) == CUDA_SUCCESS) pool = private_pool(d);
    /* issue 23: interposer */
    if (shim_on("820-current-context-pool")) pool = pool_here(1);
    if (pool) return alloc_from(dptr, n, pool, s);
    if (shim_on("820-pads-size") && n <= SIZE_MAX - PAD) n += PAD;
  }
  CUresult r = real(dptr, n, s);
  if (r == CUDA_SUCCESS && dptr && shim_on("820-deferred-pointer")) defer_pointer(dptr, s);
  if (r == CUDA_ERROR_OUT_OF_MEMORY && shim_on("820-oom-invalid-value")) return CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_ERROR_INVALID_CONTEXT && shim_on("820-no-context-invalid-value")) return CUDA_ERROR_INVALID_VALUE;
  return r;
}

/* The 821 mutants around the driver's cuMemAllocFromPoolAsync. */
static CUresult alloc_821(CUresult (*real)(CUdeviceptr *, size_t, CUmemoryPool, CUstream), CUdeviceptr *dptr,
                          size_t n, CUmemoryPool pool, CUstream s) {
  /* issue 34: stream order */
  if (shim_on("821-synchronous")) stream_sync(s);
  if (shim_on("821-device-wide-sync")) ctx_sync();
  if (dptr && shim_on("821-capture-allocates-eagerly") && capturing(s))
    return real(dptr, n, pool, (CUstream)0x2 /* CU_STREAM_PER_THREAD */);
  if (!dptr && shim_on("821-null-dptr-success")) return CUDA_SUCCESS;
  if (dptr && refused_free && shim_on("822-refused-free-fails-closed")) return CUDA_ERROR_OUT_OF_MEMORY;
  CUdeviceptr q = parked.p;
  if (dptr && n > 0 && q && parked.n == n && shim_on("821-unlocked-cache") && pool_of_pointer(q) == pool) {
    usleep(50); /* the window in which another thread takes the same block */
    parked.p = 0;
    *dptr = q;
    return CUDA_SUCCESS;
  }
  if (dptr && !pool && shim_on("821-null-pool-current-pool")) {
    CUmemoryPool cur = pool_here(1);
    if (cur) pool = cur;
  }
  CUdevice here;
  if (dptr && n > 0 && shim_on("821-default-pool-private") && shim_pool_is_default(pool) &&
      ctx_device(&here) == CUDA_SUCCESS) {
    CUmemoryPool mine_ = private_pool(here);
    if (mine_) pool = mine_;
  }
  if (dptr && n > 0 && shim_on("821-ignores-pool") && pool_usable(pool)) {
    CUmemoryPool d = pool_here(0);
    if (d) pool = d;
  }
  if (shim_on("821-size-round-up-wraps")) n = wrapped(n);
  if (dptr && n == 0 && shim_on("821-size-zero-allocates")) n = 1;
  if (n > 0 && shim_on("821-pads-size") && n <= SIZE_MAX - PAD) n += PAD;
  int other = dptr && shim_on("821-other-device-pool-refused");
  CUdeviceptr old = other ? *dptr : 0;
  CUresult r = real(dptr, n, pool, s);
  if (r == CUDA_ERROR_INVALID_VALUE && dptr && pool && shim_on("821-refused-pool-falls-back")) {
    CUmemoryPool d = pool_here(0);
    if (d) r = real(dptr, n, d, s);
  }
  if (r == CUDA_SUCCESS && dptr && shim_on("821-deferred-pointer")) defer_pointer(dptr, s);
  if (r == CUDA_ERROR_OUT_OF_MEMORY && shim_on("821-oom-invalid-value")) return CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_ERROR_NOT_SUPPORTED && shim_on("821-capture-refusal-invalid-value") && capturing(s))
    return CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS && other && *dptr && elsewhere(*dptr)) {
    (void)free_real(*dptr, s);
    *dptr = old;
    return CUDA_ERROR_INVALID_DEVICE;
  }
  return r;
}

/* The 822 mutants around the driver's cuMemFreeAsync. */
static CUresult free_822(CUresult (*real)(CUdeviceptr, CUstream), CUdeviceptr p, CUstream s) {
  if (shim_init_state == 1 && shim_on("822-noop-leaks")) return CUDA_SUCCESS;
  if (p && shim_on("822-lost-free-under-contention")) {
    /* The unlocked table update takes a while (50 us); another free inside it loses this one. */
    int at_entry = __atomic_fetch_add(&freeing, 1, __ATOMIC_SEQ_CST);
    usleep(50);
    int during = __atomic_load_n(&freeing, __ATOMIC_SEQ_CST);
    __atomic_fetch_sub(&freeing, 1, __ATOMIC_SEQ_CST);
    if (at_entry > 0 || during > 1) return CUDA_SUCCESS;
  }
  if (p && shim_on("822-foreign-pointer-refused") && !tab_find(&live, p, 0)) return CUDA_ERROR_INVALID_VALUE;
  if (p && shim_on("822-other-device-refused") && elsewhere(p)) return CUDA_ERROR_INVALID_DEVICE;
  /* issue 23: interposer */
  if (p && shim_on("822-charges-current-device") && elsewhere(p)) return CUDA_SUCCESS;
  if (p && shim_on("822-free-ignores-stream")) {
    CUresult r = real(p, (CUstream)0x2 /* CU_STREAM_PER_THREAD */);
    if (r == CUDA_SUCCESS) stream_sync((CUstream)0x2);
    return r;
  }
  size_t n = p && !parked.p && shim_on("821-unlocked-cache") ? live_size(p) : 0;
  if (n) {
    stream_sync(s); /* idle before it is handed out again */
    tab_find(&live, p, 1);
    parked.n = n;
    parked.p = p;
    return CUDA_SUCCESS;
  }
  int sync = shim_on("822-synchronous");
  if (sync) stream_sync(s);
  CUresult r = real(p, s);
  if (sync && r == CUDA_SUCCESS) stream_sync(s);
  CUdeviceptr base;
  if (r == CUDA_ERROR_INVALID_VALUE && p && shim_on("822-interior-frees-block") && tab_base(&live, p, &base)) {
    r = real(base, s);
    if (r == CUDA_SUCCESS) tab_find(&live, base, 1);
  }
  if (r == CUDA_ERROR_INVALID_VALUE && p && shim_on("822-double-free-success") && tab_find(&freed, p, 0))
    return CUDA_SUCCESS;
  if (r == CUDA_SUCCESS && p) {
    if (tracking()) tab_find(&live, p, 1);
    if (shim_on("822-double-free-success")) tab_put(&freed, p, 0);
  }
  if (r == CUDA_ERROR_INVALID_VALUE && p) refused_free = 1;
  return r;
}

HOOK CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream) {
  BEGIN(820, "cuMemAllocAsync", CUresult, (CUdeviceptr *, size_t, CUstream));
  if (shim_on("null-out-820")) *(volatile CUdeviceptr *)dptr = 0;
  size_t capped; /* the cap mutants (cap.c) */
  if (!shim_cap_take(1, stream, NULL, bytesize, &capped)) return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = shim_cap_took(alloc_820(real, dptr, bytesize, stream), dptr, capped, NULL);
  if (r == 0 && dptr) shim_ckpt_note_alloc(*dptr, bytesize); /* the checkpoint mutants (checkpoint.c) */
  if (r == 0 && dptr && shim_on("bad-result-822")) remember(*dptr);
  if (r == 0 && dptr && tracking()) tab_put(&live, *dptr, bytesize);
  return r;
}

HOOK CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream) {
  BEGIN(821, "cuMemAllocFromPoolAsync", CUresult, (CUdeviceptr *, size_t, CUmemoryPool, CUstream));
  /* issue 23: interposer (821-failure-leaks: the block taken first is given back only on success) */
  shim_no_context_crash(821);
  size_t capped; /* the cap mutants (cap.c) */
  if (!shim_cap_take(1, stream, pool, bytesize, &capped)) return CUDA_ERROR_OUT_OF_MEMORY;
  CUdeviceptr held = 0;
  if (dptr && bytesize > 0 && pool && shim_init_state == 1 && shim_on("821-failure-leaks"))
    (void)real(&held, 2u << 20, pool, stream);
  CUresult r = shim_cap_took(alloc_821(real, dptr, bytesize, pool, stream), dptr, capped, pool);
  if (r == 0 && dptr) shim_ckpt_note_alloc(*dptr, bytesize); /* the checkpoint mutants (checkpoint.c) */
  if (held && r == CUDA_SUCCESS) (void)free_real(held, stream);
  if (r == 0 && dptr && shim_on("bad-result-822")) remember(*dptr);
  if (r == 0 && dptr && tracking()) tab_put(&live, *dptr, bytesize);
  return r;
}

HOOK CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
  BEGIN(822, "cuMemFreeAsync", CUresult, (CUdeviceptr, CUstream));
  if (shim_on("bad-result-822") && !forget(dptr)) return -1;
  shim_ckpt_forget_alloc(dptr); /* the checkpoint mutants (checkpoint.c) */
  return shim_cap_freed(free_822(real, dptr, stream), dptr); /* the cap mutants (cap.c) */
}

const struct shim_hook alloc_hooks[] = {
    {"cuMemAllocAsync", (void *)cuMemAllocAsync},
    {"cuMemAllocFromPoolAsync", (void *)cuMemAllocFromPoolAsync},
    {"cuMemFreeAsync", (void *)cuMemFreeAsync},
    {0},
};
