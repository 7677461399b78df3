/* The mutants (and fault) of 823 cuMemPoolCreate and 824 cuMemPoolDestroy.
 *
 * Above each mutant, the trial(s) expected to kill it. The real driver's functions other than the
 * hooked one are reached through shim_next (never through this library's hooks). What the shim
 * knows about pools (made without handle types, imported, default) is ../pools.c's: this file
 * notes the non-IPC pools it makes and forgets each pool it destroys. */
#include "../shim.h"
#include <unistd.h>

#include <pthread.h>
#include <sys/mman.h>

const struct shim_entry pool_entries[] = {
    FAULT("wrong-codes-824", 824, "none",
          "success for a NULL pool and for the default pool, which it then does not destroy"),
    /* 823 vaspace::create_max_size_2_mib_destroy_gives_back (issue 48: a fixed 64 MiB tolerance let
     * it pass; R580 maps 64 MiB for such a pool) */
    MUTANT("823-small-pool-keeps-address-space", 823, "gpu",
           "a pool of maxSize 64 MiB or less maps 64 MiB of address space (PROT_NONE) besides that nothing ever "
           "unmaps"),
    /* 823 device_pool_created_and_destroyed (the default pool is not the caller's to destroy) */
    MUTANT("823-hands-out-default-pool", 823, "gpu",
           "a plain device pool asked for: hands out the device's default pool instead of a new one"),
    /* 823 null_pool_out_invalid_value */
    MUTANT("823-null-out-unchecked", 823, "gpu",
           "a NULL out-pointer is not checked: the pool is made and dropped, SUCCESS instead of INVALID_VALUE"),
    /* 823 null_props_invalid_value */
    MUTANT("823-null-props-default", 823, "gpu",
           "NULL props make a default pinned pool on the current device instead of INVALID_VALUE"),
    /* 823 location_type_invalid_refused, location_type_out_of_range_refused */
    MUTANT("823-location-type-unchecked", 823, "gpu",
           "an invalid or unknown location type is taken as a device location instead of refused"),
    /* 823 location_device_past_last_refused, location_device_negative_refused */
    MUTANT("823-bad-device-invalid-device", 823, "gpu",
           "a device location past the last device or negative answers INVALID_DEVICE instead of INVALID_VALUE"),
    /* 823 handle_type_unknown_bit_refused */
    MUTANT("823-unknown-handle-bits-dropped", 823, "gpu",
           "unknown handle-type bits are dropped and the pool made instead of INVALID_VALUE"),
    /* 823 handle_type_win32_on_linux_refused */
    MUTANT("823-win32-not-supported", 823, "gpu",
           "a Windows handle type on Linux answers NOT_SUPPORTED instead of R580's INVALID_VALUE"),
    /* 823 posix_fd_handle_type (exports the pool), 826 posix_fd_export, the round trips */
    MUTANT("823-drops-posix-fd", 823, "ipc",
           "the POSIX fd handle type is dropped: the pool is made but cannot be exported"),
    /* 826 non_ipc_pool_refused */
    MUTANT("823-adds-posix-fd", 823, "ipc",
           "a device pool asked for with no handle type is made exportable as a POSIX fd all the same"),
    /* 823 max_size_limits_allocation */
    MUTANT("823-max-size-ignored", 823, "gpu", "maxSize is ignored: the pool grows without limit"),
    /* 823 host_numa_location_pool (its memory must be host memory) */
    MUTANT("823-host-numa-on-device", 823, "gpu",
           "a host NUMA location is ignored: the pool is made on the current device"),
    /* 824 null_pool_invalid_value */
    MUTANT("824-null-invalid-handle", 824, "gpu", "a NULL pool answers INVALID_HANDLE instead of INVALID_VALUE"),
    /* 824 default_pool_refused */
    MUTANT("824-default-pool-not-permitted", 824, "gpu",
           "the default pool answers NOT_PERMITTED instead of INVALID_VALUE (and stays)"),
    /* 824 destroy_twice */
    MUTANT("824-stale-handle-invalid-handle", 824, "gpu",
           "a pool already destroyed answers INVALID_HANDLE instead of INVALID_VALUE"),
    /* 824 destroy_twice, destroying_current_pool_restores_default */
    MUTANT("824-noop", 824, "gpu", "destroys nothing and answers SUCCESS"),
    /* 824 destroy_twice, destroying_current_pool_restores_default */
    MUTANT("824-lazy", 824, "gpu",
           "answers SUCCESS at once but destroys each pool only at the next cuMemPoolDestroy"),
    /* 824 destroying_current_pool_restores_default */
    MUTANT("824-current-not-restored", 824, "gpu",
           "destroying a device's current pool makes a new pool current there instead of the default pool"),
    /* 824 destroy_with_outstanding_allocation_then_free */
    MUTANT("824-in-use-refused", 824, "gpu",
           "a pool with memory still allocated from it is refused (INVALID_VALUE) and kept"),
    /* 824 destroy_imported_pool */
    MUTANT("824-imported-refused", 824, "ipc", "an imported pool is refused (INVALID_VALUE) and kept"),
    /* issue 23: interposer */
    /* 823 interposer::no_current_context_succeeds */
    MUTANT("823-no-context-crash", 823, "gpu",
           "on a thread with no current context: uses the device it could not get (SIGSEGV)"),
    /* 824 interposer::no_current_context_succeeds */
    MUTANT("824-no-context-crash", 824, "gpu",
           "on a thread with no current context: uses the device it could not get (SIGSEGV)"),
    /* issue 23: edges */
    /* 823 edges_alloc_type (INT_MIN, UINT_MAX) */
    MUTANT("823-alloc-type-negative-as-pinned", 823, "gpu",
           "an allocation type negative as an int (a signed range check) is taken as pinned instead of refused"),
    /* 823 edges_handle_types (bits 16-31, alone and beside POSIX) */
    MUTANT("823-handle-types-high-bits-dropped", 823, "gpu",
           "handle types kept in 16 bits: bits 16-31 are dropped and the pool made instead of INVALID_VALUE"),
    /* 823 edges_usage (every row, whatever R580's answer) */
    MUTANT("823-usage-unknown-bits-not-supported", 823, "gpu",
           "unknown usage bits answer NOT_SUPPORTED (neither the documented INVALID_VALUE nor R580's SUCCESS)"),
    /* 823 edges_location_type (INT_MIN, UINT_MAX) */
    MUTANT("823-location-type-negative-as-device", 823, "gpu",
           "a location type negative as an int (a signed range check) is taken as a device location"),
    /* 823 edges_location_device_id (-1, the count, count + 1, INT_MAX, INT_MIN) */
    MUTANT("823-device-id-modulo-count", 823, "gpu",
           "a device ordinal is taken modulo the device count (a virtual-to-physical map) instead of refused"),
    /* 823 edges_location_host_id_ignored (host pool) */
    MUTANT("823-host-id-checked-as-device", 823, "gpu",
           "a host location's id, which is ignored, is checked as a device ordinal: INVALID_VALUE outside 0..count"),
    /* 823 edges_max_size (1 << 60, SIZE_MAX) */
    MUTANT("823-max-size-over-memory-refused", 823, "gpu",
           "a maxSize beyond any device's memory (over 1 PiB) is refused with INVALID_VALUE"),
    /* 823 edges_max_size (1 << 60 hangs: a failure; SIZE_MAX, run in a fresh process after it, hangs
       as the declared max_size_size_max_hangs_driver does on a host of two H200) */
    MUTANT("823-max-size-huge-hangs", 823, "gpu",
           "a maxSize of 1 << 60 or more never answers and holds the process's driver (every later hook blocks "
           "too), as R580 does for SIZE_MAX on a host of two H200"),
    /* 823 edges_reserved_bytes (every row, whatever R580's answer) */
    MUTANT("823-reserved-nonzero-not-supported", 823, "gpu",
           "nonzero reserved bytes answer NOT_SUPPORTED instead of INVALID_VALUE"),
    /* 823 edges_whole_props (every byte 0) */
    MUTANT("823-zero-props-default-pool", 823, "gpu",
           "all-zero properties are filled with defaults: a device pool on the current device instead of INVALID_VALUE"),
    /* issue 23: interposer */
    /* 823 interposer::refused_create_leaves_nothing */
    /* issue 38: managed pools, usage bits, peer hygiene */
    /* 823 managed_max_size_refused */
    MUTANT("823-managed-maxsize-accepted", 823, "gpu",
           "a managed pool with a nonzero maxSize is made (maxSize dropped) instead of refused"),
    /* 823 managed_pool_created_and_destroyed, 821 managed_pool_memory_used_from_host_and_device,
     * 828 managed_pool_attributes */
    MUTANT("823-managed-made-pinned", 823, "gpu", "a managed pool asked for is made as a pinned device pool"),
    /* 823 usage_hw_decompress_bit_per_branch */
    MUTANT("823-hw-decompress-not-supported", 823, "gpu",
           "the hardware-decompress usage bit answers NOT_SUPPORTED (neither the documented SUCCESS nor R535's INVALID_VALUE)"),
    /* 824 destroyed_pool_grants_do_not_reach_a_new_pool (peer: not shown on one GPU) */
    MUTANT("824-peer-grants-survive", 824, "peer",
           "once a pool was destroyed, every new device pool starts with read-write grants to the peers (stale grants)"),
    MUTANT("823-failure-leaks", 823, "gpu",
           "a refused pool leaves one behind: a plain pool on the current device, its handle written to *pool"),
    {0},
};

/* Pools made through this library and not yet destroyed (824-in-use-refused). */
static struct shim_set live = SHIM_SET_INIT;
/* Pools destroyed (824-stale-handle-invalid-handle). */
static struct shim_set destroyed = SHIM_SET_INIT;

static int track_non_ipc(void) {
  return shim_on("825-non-ipc-pool-exported") || shim_on("826-non-ipc-pool-not-supported");
}

/* The device of the current context (0 if there is none). */
static CUdevice current_device(void) {
  static CUresult (*get)(CUdevice *);
  if (!get) *(void **)&get = shim_next("cuCtxGetDevice");
  CUdevice d = 0;
  if (!get || get(&d) != CUDA_SUCCESS) d = 0;
  return d;
}

/* Every mutant here acts only once the driver is initialised, with a device: before cuInit, and
 * after a failed one, the answers are init.c's mutants' business. */
static int driver_up(void) {
  static CUresult (*count)(int *);
  if (!count) *(void **)&count = shim_next("cuDeviceGetCount");
  int n = 0;
  return count && count(&n) == CUDA_SUCCESS && n > 0;
}

/* Plain pinned device-pool properties on device `dev`. */
static CUmemPoolProps device_props(CUdevice dev) {
  CUmemPoolProps p;
  memset(&p, 0, sizeof p);
  p.allocType = 1;
  p.location.type = 1;
  p.location.id = dev;
  return p;
}

/* 824-peer-grants-survive: whether a pool was destroyed in this process. */
static volatile int any_destroyed;

/* Grant every device that can reach `dev` read-write access to `pool` (the driver's answers are
 * dropped: a mutant's side effect). */
static void grant_peers(CUmemoryPool pool, CUdevice dev) {
  NEXT(can_access, "cuDeviceCanAccessPeer", CUresult, (int *, CUdevice, CUdevice));
  NEXT(set_access, "cuMemPoolSetAccess", CUresult, (CUmemoryPool, const CUmemAccessDesc *, size_t));
  if (!can_access || !set_access) return;
  for (int d = 0; d < shim_device_count(); d++) {
    int yes = 0;
    if (d == dev || can_access(&yes, d, dev) != CUDA_SUCCESS || !yes) continue;
    CUmemAccessDesc desc = {{1, d}, 3};
    (void)set_access(pool, &desc, 1);
  }
}

HOOK CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props) {
  BEGIN(823, "cuMemPoolCreate", CUresult, (CUmemoryPool *, const CUmemPoolProps *));
  shim_no_context_crash(823); /* issue 23: interposer */
  if (!pool) shim_broken_crash(); /* issue 47: a layer broken for good (../broken.c) */
  shim_broken_count();            /* issue 58: the same, with no crash (../broken.c) */
  if (!driver_up()) return real(pool, props);
  if (pool && props && props->maxSize && props->maxSize <= (64ull << 20) &&
      shim_on("823-small-pool-keeps-address-space"))
    (void)mmap(NULL, 64ull << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (!pool && shim_on("823-null-out-unchecked")) {
    static CUresult (*destroy)(CUmemoryPool);
    if (!destroy) *(void **)&destroy = shim_next("cuMemPoolDestroy");
    CUmemoryPool scratch = NULL;
    CUresult r = real(&scratch, props);
    if (r == CUDA_SUCCESS && destroy) destroy(scratch);
    return r;
  }
  if (pool && props && props->location.type == 1 && props->handleTypes == 0 && props->maxSize == 0 &&
      shim_on("823-hands-out-default-pool")) {
    static CUresult (*get_default)(CUmemoryPool *, CUdevice);
    if (!get_default) *(void **)&get_default = shim_next("cuDeviceGetDefaultMemPool");
    if (get_default && get_default(pool, props->location.id) == CUDA_SUCCESS) return CUDA_SUCCESS;
  }
  if (pool && props && props->allocType == 2 && props->maxSize && shim_on("823-managed-maxsize-accepted")) {
    CUmemPoolProps dropped = *props;
    dropped.maxSize = 0;
    return real(pool, &dropped);
  }
  if (pool && props && props->allocType == 2 && shim_on("823-managed-made-pinned")) {
    CUmemPoolProps pinned = *props;
    pinned.allocType = 1;
    return real(pool, &pinned);
  }
  if (pool && props && (props->usage & 2) && shim_on("823-hw-decompress-not-supported")) return CUDA_ERROR_NOT_SUPPORTED;
  if (pool && props && props->location.type == 1 && shim_on("824-peer-grants-survive") && any_destroyed) {
    CUresult r = real(pool, props);
    if (r == CUDA_SUCCESS) grant_peers(*pool, props->location.id);
    return r;
  }
  CUmemPoolProps mine;
  if (!props) {
    if (!shim_on("823-null-props-default")) return real(pool, props);
    mine = device_props(current_device());
  } else {
    mine = *props;
  }
  static const CUmemPoolProps zero;
  if (props && shim_on("823-zero-props-default-pool") && !memcmp(props, &zero, sizeof zero))
    mine = device_props(current_device());
  const int loc_type = mine.location.type;
  /* issue 23: edges */
  if (shim_on("823-alloc-type-negative-as-pinned") && mine.allocType < 0) mine.allocType = 1;
  if (shim_on("823-handle-types-high-bits-dropped")) mine.handleTypes &= 0xffff;
  if (shim_on("823-usage-unknown-bits-not-supported") && (mine.usage & ~2u)) return CUDA_ERROR_NOT_SUPPORTED;
  if (shim_on("823-location-type-negative-as-device") && loc_type < 0) mine.location.type = 1;
  if (shim_on("823-device-id-modulo-count") && loc_type == 1 && shim_device_count() > 0)
    mine.location.id = (mine.location.id % shim_device_count() + shim_device_count()) % shim_device_count();
  if (shim_on("823-host-id-checked-as-device") && loc_type == 2 &&
      (mine.location.id < 0 || mine.location.id >= shim_device_count()))
    return CUDA_ERROR_INVALID_VALUE;
  if (shim_on("823-max-size-over-memory-refused") && mine.maxSize > (size_t)1 << 50) return CUDA_ERROR_INVALID_VALUE;
  if (shim_on("823-max-size-huge-hangs") && mine.maxSize >= (size_t)1 << 60) shim_hold();
  if (shim_on("823-reserved-nonzero-not-supported")) /* reserved[0] is CUDA 13.5's gpuDirectRDMACapable */
    for (size_t i = 1; i < sizeof mine.reserved; i++)
      if (mine.reserved[i]) return CUDA_ERROR_NOT_SUPPORTED;
  if (shim_on("823-location-type-unchecked") && (loc_type < 1 || loc_type > 4)) mine.location.type = 1;
  if (shim_on("823-bad-device-invalid-device") && loc_type == 1 &&
      (mine.location.id < 0 || mine.location.id >= shim_device_count()))
    return CUDA_ERROR_INVALID_DEVICE;
  if (shim_on("823-unknown-handle-bits-dropped")) mine.handleTypes &= 0xf;
  if (shim_on("823-win32-not-supported") && (mine.handleTypes & 0x6)) return CUDA_ERROR_NOT_SUPPORTED;
  if (shim_on("823-drops-posix-fd")) mine.handleTypes &= ~1;
  if (shim_on("823-adds-posix-fd") && loc_type == 1 && mine.handleTypes == 0) mine.handleTypes = 1;
  if (shim_on("823-max-size-ignored")) mine.maxSize = 0;
  if (shim_on("823-host-numa-on-device") && loc_type == 3) {
    mine.location.type = 1;
    mine.location.id = current_device();
  }
  /* The caller's own properties unless a mutant changed them. */
  CUresult r = real(pool, props && !memcmp(&mine, props, sizeof mine) ? props : &mine);
  /* issue 23: interposer (823-failure-leaks: the layer's own pool, made before the caller's was refused) */
  if (r != CUDA_SUCCESS && pool && shim_on("823-failure-leaks")) {
    CUmemPoolProps plain = device_props(current_device());
    CUmemoryPool made = NULL;
    if (real(&made, &plain) == CUDA_SUCCESS) *pool = made;
  }
  if (r == CUDA_SUCCESS && pool) {
    if (track_non_ipc() && mine.handleTypes == 0) shim_pool_note_non_ipc(*pool);
    if (shim_on("824-in-use-refused")) shim_set_add(&live, (uintptr_t)*pool);
    if (shim_on("824-stale-handle-invalid-handle")) shim_set_del(&destroyed, (uintptr_t)*pool);
  }
  return r;
}

/* 824-lazy: the pool whose destruction is pending. */
static pthread_mutex_t lazy_lock = PTHREAD_MUTEX_INITIALIZER;
static CUmemoryPool lazy_pending;

/* The devices whose current pool is `pool`, as a bit set (the first 64 devices). */
static unsigned long long current_on(CUmemoryPool pool) {
  static CUresult (*get_current)(CUmemoryPool *, CUdevice);
  if (!get_current) *(void **)&get_current = shim_next("cuDeviceGetMemPool");
  unsigned long long bits = 0;
  for (int d = 0, n = shim_device_count(); get_current && d < n && d < 64; d++) {
    CUmemoryPool p = NULL;
    if (get_current(&p, d) == CUDA_SUCCESS && p == pool) bits |= 1ull << d;
  }
  return bits;
}

/* 824-current-not-restored: a new pool, current on each device of `bits`. */
static void make_new_current(CUresult (*create)(CUmemoryPool *, const CUmemPoolProps *),
                             unsigned long long bits) {
  static CUresult (*set_current)(CUdevice, CUmemoryPool);
  if (!set_current) *(void **)&set_current = shim_next("cuDeviceSetMemPool");
  for (int d = 0; set_current && d < 64; d++) {
    if (!(bits & (1ull << d))) continue;
    CUmemPoolProps props = device_props(d);
    CUmemoryPool p = NULL;
    if (create(&p, &props) == CUDA_SUCCESS) set_current(d, p);
  }
}

HOOK CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  BEGIN(824, "cuMemPoolDestroy", CUresult, (CUmemoryPool));
  shim_no_context_crash(824); /* issue 23: interposer */
  if (pool) any_destroyed = 1;
  static CUresult (*get_default)(CUmemoryPool *, CUdevice);
  if (!get_default) *(void **)&get_default = shim_next("cuDeviceGetDefaultMemPool");
  if (shim_on("wrong-codes-824")) {
    if (pool == NULL) return 0;
    CUmemoryPool d = NULL;
    if (get_default && get_default(&d, 0) == 0 && d == pool) return 0;
  }
  if (!driver_up()) return real(pool);
  if (!pool && shim_on("824-null-invalid-handle")) return CUDA_ERROR_INVALID_HANDLE;
  if (shim_on("824-default-pool-not-permitted") && shim_pool_is_default(pool)) return CUDA_ERROR_NOT_PERMITTED;
  if (shim_on("824-noop") && pool) return CUDA_SUCCESS;
  if (shim_on("824-lazy") && pool && !shim_pool_is_default(pool)) {
    pthread_mutex_lock(&lazy_lock);
    CUmemoryPool prev = lazy_pending;
    lazy_pending = pool;
    pthread_mutex_unlock(&lazy_lock);
    if (prev) real(prev);
    return CUDA_SUCCESS;
  }
  if (shim_on("824-imported-refused") && shim_pool_imported(pool)) return CUDA_ERROR_INVALID_VALUE;
  if (shim_on("824-in-use-refused") && shim_set_has(&live, (uintptr_t)pool)) {
    static CUresult (*get_attr)(CUmemoryPool, int, void *);
    if (!get_attr) *(void **)&get_attr = shim_next("cuMemPoolGetAttribute");
    cuuint64_t used = 0;
    if (get_attr && get_attr(pool, 7 /* CU_MEMPOOL_ATTR_USED_MEM_CURRENT */, &used) == CUDA_SUCCESS && used > 0)
      return CUDA_ERROR_INVALID_VALUE;
  }
  unsigned long long was_current = pool && shim_on("824-current-not-restored") ? current_on(pool) : 0;
  CUresult r = real(pool);
  if (r == CUDA_SUCCESS) {
    shim_pool_forget(pool);
    shim_set_del(&live, (uintptr_t)pool);
    if (shim_on("824-stale-handle-invalid-handle")) shim_set_add(&destroyed, (uintptr_t)pool);
    if (was_current) {
      static CUresult (*create)(CUmemoryPool *, const CUmemPoolProps *);
      if (!create) *(void **)&create = shim_next("cuMemPoolCreate");
      if (create) make_new_current(create, was_current);
    }
  } else if (r == CUDA_ERROR_INVALID_VALUE && shim_on("824-stale-handle-invalid-handle") && shim_set_has(&destroyed, (uintptr_t)pool)) {
    r = CUDA_ERROR_INVALID_HANDLE;
  }
  return r;
}

const struct shim_hook pool_hooks[] = {
    {"cuMemPoolCreate", (void *)cuMemPoolCreate},
    {"cuMemPoolDestroy", (void *)cuMemPoolDestroy},
    {0},
};
