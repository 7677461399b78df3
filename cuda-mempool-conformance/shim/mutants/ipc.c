/* The mutants (and fault) of the IPC APIs: pools and pointers exported and imported.
 *
 * 825 cuMemPoolExportPointer, 826 cuMemPoolExportToShareableHandle,
 * 829 cuMemPoolImportFromShareableHandle, 830 cuMemPoolImportPointer.
 *
 * Above each mutant, the trial(s) expected to kill it; most need the cross-process trials
 * (cases/xproc.rs: the importers are child processes, which load this library too). Handle type 1
 * is the POSIX fd; the fabric handle type (8) is left alone by every mutant (its trials crash the
 * real driver on purpose). The real driver's other functions are reached through shim_next. What
 * the shim knows about pools (made without handle types, imported, default) is ../pools.c's: this
 * file notes the pools it imports. */
#include "../shim.h"

#include <pthread.h>

#define POSIX_FD 1

const struct shim_entry ipc_entries[] = {
    FAULT("abort-826", 826, "none", "aborts the process in the export"),
    /* 825 null_pointer_invalid_value */
    MUTANT("825-null-pointer-not-found", 825, "gpu", "pointer 0 answers NOT_FOUND instead of INVALID_VALUE"),
    /* issue 38: 825 export_pointer_of_a_pending_allocation */
    MUTANT("825-export-waits-for-allocation", 825, "ipc",
           "synchronises the context before exporting: an allocation pending on a held stream is waited for"),
    /* 825 null_data_out_invalid_value */
    MUTANT("825-null-out-unchecked", 825, "ipc",
           "a NULL data out-pointer is not checked: the export is made and dropped, SUCCESS instead of INVALID_VALUE"),
    /* 825 cuMemAlloc_pointer_refused */
    MUTANT("825-non-pool-pointer-invalid-handle", 825, "gpu",
           "memory of no pool (cuMemAlloc's) answers INVALID_HANDLE instead of INVALID_VALUE"),
    /* 825 pointer_of_non_ipc_pool_refused */
    MUTANT("825-non-ipc-pool-exported", 825, "gpu",
           "a pointer of a pool made without handle types is exported with made-up data instead of refused"),
    /* 825 export_pointer_before_pool_export */
    MUTANT("825-before-pool-export-allowed", 825, "ipc",
           "a pointer of an IPC pool whose handle was never exported is exported (the pool's handle is exported "
           "behind the caller's back) instead of R580's INVALID_VALUE"),
    /* 825 export_pointer_after_pool_export (all zero), 830 import_pointer, the round trips */
    MUTANT("825-zeroed-data", 825, "ipc", "the export data is all zero, with SUCCESS"),
    /* 830 import_pointer_reads_exporters_bytes, the round trips (the importer reads one byte off) */
    MUTANT("825-data-one-byte-changed", 825, "ipc",
           "one byte of the export data is changed (byte 24, the low byte of the allocation's offset in R580's "
           "data): the importer gets an address one byte off"),
    /* 826 default_pool_refused */
    MUTANT("826-default-pool-not-supported", 826, "gpu",
           "the default pool answers NOT_SUPPORTED instead of INVALID_VALUE"),
    /* 826 null_handle_out_invalid_value */
    MUTANT("826-null-out-unchecked", 826, "ipc",
           "a NULL handle out-pointer is not checked: the fd is made and closed, SUCCESS instead of INVALID_VALUE"),
    /* 826 nonzero_flags_refused */
    MUTANT("826-flags-ignored", 826, "ipc", "nonzero flags are ignored instead of refused"),
    /* 826 fabric_export_without_imex_channel_crashes_driver (fabric-capable devices; before crashes had
     * to land where declared, the destroy's crash passed it whatever the export answered) */
    MUTANT("826-fabric-no-channel-invalid-value", 826, "gpu",
           "a fabric export with no IMEX channel answers INVALID_VALUE instead of NOT_PERMITTED"),
    /* 826 handle_type_none_refused */
    MUTANT("826-handle-type-none-posix", 826, "ipc", "handle type NONE is taken as POSIX fd instead of refused"),
    /* 826 wrong_handle_type_refused */
    MUTANT("826-win32-not-supported", 826, "ipc",
           "a Windows handle type answers NOT_SUPPORTED instead of INVALID_VALUE"),
    /* 826 non_ipc_pool_refused */
    MUTANT("826-non-ipc-pool-not-supported", 826, "ipc",
           "a pool made without handle types answers NOT_SUPPORTED instead of INVALID_VALUE"),
    /* 826 imported_pool_export_refused */
    MUTANT("826-imported-pool-not-permitted", 826, "ipc",
           "an imported pool answers NOT_PERMITTED instead of INVALID_VALUE"),
    /* 826 exporter_leaks_no_fd, suite::no_leaks */
    MUTANT("826-leaks-fd", 826, "ipc", "each successful export leaves a duplicate of the fd open"),
    /* 829 invalid_fd_answer_as_recorded_on_this_driver */
    MUTANT("829-bad-fd-invalid-value", 829, "gpu",
           "an fd that is no pool handle answers INVALID_VALUE (the documented code) instead of R580's UNKNOWN"),
    /* 829 null_pool_out_invalid_value */
    MUTANT("829-null-out-unchecked", 829, "ipc",
           "a NULL pool out-pointer is not checked: the pool is imported and dropped, SUCCESS instead of INVALID_VALUE"),
    /* 829 handle_type_none_refused */
    MUTANT("829-handle-type-none-accepted", 829, "ipc", "handle type NONE is taken as POSIX fd instead of refused"),
    /* 829 nonzero_flags_refused */
    MUTANT("829-flags-ignored", 829, "ipc", "nonzero flags are ignored instead of refused"),
    /* 829 import_leaves_callers_fd_open, import_leaves_fds_as_they_were, import_same_fd_twice (the second
     * import finds the fd closed), the round trips */
    MUTANT("829-closes-fd", 829, "ipc",
           "a successful import closes the caller's fd, which stays the caller's (who closes it again: a double close)"),
    /* 829 import_leaves_fds_as_they_were, the round trips ("importer leaked fds"), suite::no_leaks */
    MUTANT("829-dup-leaks-fd", 829, "ipc", "each successful import dups the caller's fd and never closes the copy"),
    /* 829 import_same_fd_twice_gives_same_pool */
    MUTANT("829-same-fd-new-pool", 829, "ipc",
           "importing a handle already imported gives a new pool instead of the same one"),
    /* 830 null_pointer_out_invalid_value */
    MUTANT("830-null-out-unchecked", 830, "ipc",
           "a NULL out-pointer is not checked: SUCCESS (nothing imported) instead of INVALID_VALUE"),
    /* 830 null_export_data_invalid_value */
    MUTANT("830-null-data-unchecked", 830, "ipc", "NULL export data answers SUCCESS with address 0"),
    /* 830 null_pool_invalid_value */
    MUTANT("830-null-pool-invalid-handle", 830, "ipc", "a NULL pool answers INVALID_HANDLE instead of INVALID_VALUE"),
    /* 830 garbage_export_data_refused, foreign_export_data_refused */
    MUTANT("830-bad-data-not-found", 830, "ipc",
           "export data an imported pool refuses (garbage, another pool's) answers NOT_FOUND instead of INVALID_VALUE"),
    /* 830 garbage_export_data_refused, foreign_export_data_refused */
    MUTANT("830-data-unchecked", 830, "ipc",
           "export data is not checked: what an imported pool refuses gets SUCCESS and the address the data's "
           "offset field names"),
    /* 830 import_pointer_on_non_imported_pool_refused */
    MUTANT("830-exporting-pool-accepted", 830, "ipc",
           "importing into the exporting pool itself answers SUCCESS with the exported pointer instead of refusing"),
    /* 830 import_pointer_reads_exporters_bytes, the round trips (256 bytes off), 822 free_imported_pointer */
    MUTANT("830-offset-address", 830, "ipc", "the imported address is 256 bytes past the allocation"),
    /* 830 import_same_pointer_twice_gives_same_address */
    MUTANT("830-second-import-new-address", 830, "ipc",
           "importing the same export data again gives another address (256 bytes on) instead of the same"),
    /* issue 23: interposer */
    /* 825 interposer::no_current_context_succeeds */
    MUTANT("825-no-context-crash", 825, "ipc",
           "on a thread with no current context: uses the device it could not get (SIGSEGV)"),
    /* 826 interposer::no_current_context_succeeds */
    MUTANT("826-no-context-crash", 826, "ipc",
           "on a thread with no current context: uses the device it could not get (SIGSEGV)"),
    /* 829 interposer::no_current_context_succeeds */
    MUTANT("829-no-context-crash", 829, "ipc",
           "on a thread with no current context: uses the device it could not get (SIGSEGV)"),
    /* 830 interposer::no_current_context_invalid_value */
    MUTANT("830-no-context-crash", 830, "ipc",
           "on a thread with no current context: uses the device it could not get (SIGSEGV)"),
    /* issue 23: ipc */
    /* 825 interior_pointer_refused (a driver that refuses interior pointers), 830
     * interior_pointer_export_data_maps_the_interior (one that exports them) */
    MUTANT("825-interior-exports-base", 825, "ipc",
           "an address inside an allocation is exported as the allocation's own (SUCCESS, the base's data) instead "
           "of the driver's answer"),
    /* 829 same_process_import_gives_a_new_pool_handle, 830 same_process_import_pointer_new_address_same_bytes,
     * 822 same_process_import_freed_before_the_exporter */
    MUTANT("829-same-process-exporter-pool", 829, "ipc",
           "importing an fd this process exported gives back the exporting pool's handle instead of a new pool"),
    /* 830 same_process_import_pointer_new_address_same_bytes, 822 same_process_import_freed_before_the_exporter */
    MUTANT("830-returns-exporter-pointer", 830, "ipc",
           "in the exporting process, an import gives the exporter's own pointer (the real mapping is freed) instead "
           "of a mapping of its own"),
    /* 830 all_zero_export_data_invalid_value */
    MUTANT("830-zero-data-success", 830, "ipc",
           "all-zero export data answers SUCCESS (address 0) instead of INVALID_VALUE"),
    /* 830 same_pointer_imported_twice_survives_one_free, 822 free_imported_pointer */
    MUTANT("830-import-twice-one-reference", 830, "ipc",
           "a second import of an address already imported drops the driver's reference at once: both imports share "
           "one, and the first free unmaps both"),
    /* 830 large_import_*_mib_reads_both_ends */
    MUTANT("830-large-import-truncated", 830, "ipc",
           "an import of an allocation over 1 GiB maps its first 64 MiB only (copied into a 64 MiB buffer that "
           "stands for it): its end is not the exporter's"),
    /* issue 23: interposer */
    /* 830 interposer::refused_import_leaves_nothing */
    MUTANT("830-failure-leaks", 830, "ipc",
           "a refused import leaves a mapping behind: the last export data this process made is imported through "
           "the pool, its address written to *ptr"),
    /* issue 23: edges */
    /* 826 edges_flags (bits 32-63) */
    MUTANT("826-flags-high-half-dropped", 826, "ipc",
           "flags taken as a 32-bit int: bits 32-63 are dropped and the export made instead of refused"),
    /* 826 edges_handle_type (POSIX with each unknown bit) */
    MUTANT("826-handle-type-unknown-bits-dropped", 826, "ipc",
           "unknown handle-type bits (4-31) are dropped: POSIX with any of them exports as POSIX instead of refused"),
    /* 829 edges_flags (bits 32-63) */
    MUTANT("829-flags-high-half-dropped", 829, "ipc",
           "flags taken as a 32-bit int: bits 32-63 are dropped and the pool imported instead of refused"),
    /* 829 edges_handle_type (POSIX with each unknown bit) */
    MUTANT("829-handle-type-unknown-bits-dropped", 829, "ipc",
           "unknown handle-type bits (4-31) are dropped: POSIX with any of them imports as POSIX instead of refused"),
    {0},
};

/* Addresses cuMemPoolImportPointer handed out (830-second-import-new-address). */
static struct shim_set imported_addresses = SHIM_SET_INIT;

/* Export data and the pointer it was made for (830-exporting-pool-accepted): the last EXPORTS. */
#define EXPORTS 256
static struct {
  CUmemPoolPtrExportData data;
  CUdeviceptr ptr;
} exports[EXPORTS];
static size_t next_export;
static pthread_mutex_t exports_lock = PTHREAD_MUTEX_INITIALIZER;
static void remember_export(const CUmemPoolPtrExportData *d, CUdeviceptr p) {
  pthread_mutex_lock(&exports_lock);
  exports[next_export % EXPORTS].data = *d;
  exports[next_export % EXPORTS].ptr = p;
  next_export++;
  pthread_mutex_unlock(&exports_lock);
}
static CUdeviceptr exported_pointer(const CUmemPoolPtrExportData *d) {
  CUdeviceptr p = 0;
  pthread_mutex_lock(&exports_lock);
  for (size_t i = 0; i < EXPORTS && i < next_export && !p; i++)
    if (!memcmp(&exports[i].data, d, sizeof *d)) p = exports[i].ptr;
  pthread_mutex_unlock(&exports_lock);
  return p;
}

/* Pools this process exported as POSIX fds, by fd number (829-same-process-exporter-pool). */
#define FD_EXPORTS 64
static struct {
  int fd;
  CUmemoryPool pool;
} fd_exports[FD_EXPORTS];
static size_t next_fd_export;
static void remember_fd_export(int fd, CUmemoryPool pool) {
  pthread_mutex_lock(&exports_lock);
  fd_exports[next_fd_export % FD_EXPORTS].fd = fd;
  fd_exports[next_fd_export % FD_EXPORTS].pool = pool;
  next_fd_export++;
  pthread_mutex_unlock(&exports_lock);
}
static CUmemoryPool fd_exporter(int fd) {
  CUmemoryPool pool = NULL;
  pthread_mutex_lock(&exports_lock);
  for (size_t i = next_fd_export; i-- > 0 && i + FD_EXPORTS >= next_fd_export && !pool;)
    if (fd_exports[i % FD_EXPORTS].fd == fd) pool = fd_exports[i % FD_EXPORTS].pool;
  pthread_mutex_unlock(&exports_lock);
  return pool;
}

/* Addresses imported once already (830-import-twice-one-reference). */
static struct shim_set imported_once = SHIM_SET_INIT;

/* The allocation `ptr` lies in, per the driver (0: none, or the query failed); its size in *size. */
static CUdeviceptr allocation_base(CUdeviceptr ptr, size_t *size) {
  static CUresult (*range)(CUdeviceptr *, size_t *, CUdeviceptr);
  if (!range) *(void **)&range = shim_next("cuMemGetAddressRange_v2");
  CUdeviceptr base = 0;
  size_t n = 0;
  if (!range || range(&base, &n, ptr) != CUDA_SUCCESS) return 0;
  if (size) *size = n;
  return base;
}

/* The real cuMemFree (dropping an import behind the caller's back). */
static CUresult real_free(CUdeviceptr p) {
  static CUresult (*fn)(CUdeviceptr);
  if (!fn) *(void **)&fn = shim_next("cuMemFree_v2");
  return fn ? fn(p) : CUDA_ERROR_NOT_FOUND;
}

static int all_zero(const CUmemPoolPtrExportData *d) {
  for (size_t i = 0; i < sizeof d->reserved; i++)
    if (d->reserved[i]) return 0;
  return 1;
}

/* 830-large-import-truncated: a 64 MiB buffer holding the import's first 64 MiB stands for it. */
#define TRUNCATED (64ull << 20)
static CUdeviceptr truncated(CUdeviceptr imported) {
  static CUresult (*alloc)(CUdeviceptr *, size_t);
  static CUresult (*copy)(CUdeviceptr, CUdeviceptr, size_t);
  if (!alloc) *(void **)&alloc = shim_next("cuMemAlloc_v2");
  if (!copy) *(void **)&copy = shim_next("cuMemcpyDtoD_v2");
  CUdeviceptr fresh = 0;
  if (!alloc || !copy || alloc(&fresh, TRUNCATED) != CUDA_SUCCESS) return imported;
  if (copy(fresh, imported, TRUNCATED) != CUDA_SUCCESS) {
    real_free(fresh);
    return imported;
  }
  real_free(imported);
  return fresh;
}

/* Every mutant here acts only once the driver is initialised, with a device: before cuInit, and
 * after a failed one, the answers are init.c's mutants' business. */
static int driver_up(void) {
  static CUresult (*count)(int *);
  if (!count) *(void **)&count = shim_next("cuDeviceGetCount");
  int n = 0;
  return count && count(&n) == CUDA_SUCCESS && n > 0;
}

/* The pool `ptr` was allocated from, per the driver (NULL: none, or the query failed). */
static CUmemoryPool pool_of(CUdeviceptr ptr) {
  static CUresult (*get)(void *, int, CUdeviceptr);
  if (!get) *(void **)&get = shim_next("cuPointerGetAttribute");
  CUmemoryPool pool = NULL;
  if (!get || get(&pool, 17 /* CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE */, ptr) != CUDA_SUCCESS) pool = NULL;
  return pool;
}

HOOK CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *out, CUdeviceptr ptr) {
  BEGIN(825, "cuMemPoolExportPointer", CUresult, (CUmemPoolPtrExportData *, CUdeviceptr));
  shim_no_context_crash(825); /* issue 23: interposer */
  if (!driver_up()) return real(out, ptr);
  if (!ptr && shim_on("825-null-pointer-not-found")) return CUDA_ERROR_NOT_FOUND;
  if (ptr && shim_on("825-export-waits-for-allocation")) {
    NEXT(ctx_sync, "cuCtxSynchronize", CUresult, (void));
    if (ctx_sync) (void)ctx_sync();
  }
  if (ptr && shim_on("825-interior-exports-base")) {
    CUdeviceptr base = allocation_base(ptr, NULL);
    if (base && base != ptr) ptr = base;
  }
  if (!out && shim_on("825-null-out-unchecked")) {
    CUmemPoolPtrExportData scratch;
    return real(&scratch, ptr);
  }
  CUresult r = real(out, ptr);
  if (r == CUDA_ERROR_INVALID_VALUE && out && ptr) {
    CUmemoryPool pool = pool_of(ptr);
    if (!pool && shim_on("825-non-pool-pointer-invalid-handle")) return CUDA_ERROR_INVALID_HANDLE;
    if (pool && shim_on("825-non-ipc-pool-exported") && shim_pool_non_ipc(pool)) {
      memset(out, 0, sizeof *out);
      memcpy(out->reserved, &pool, sizeof pool);
      memcpy(out->reserved + 24, &ptr, sizeof ptr);
      return CUDA_SUCCESS;
    }
    if (pool && shim_on("825-before-pool-export-allowed")) {
      static CUresult (*export_pool)(void *, CUmemoryPool, int, unsigned long long);
      if (!export_pool) *(void **)&export_pool = shim_next("cuMemPoolExportToShareableHandle");
      int fd = -1;
      if (export_pool && export_pool(&fd, pool, POSIX_FD, 0) == CUDA_SUCCESS) {
        close(fd);
        r = real(out, ptr);
      }
    }
  }
  if (r == CUDA_SUCCESS && out) {
    if (shim_on("825-zeroed-data")) memset(out, 0, sizeof *out);
    if (shim_on("825-data-one-byte-changed")) out->reserved[24] ^= 1;
    if (shim_on("830-exporting-pool-accepted") || shim_on("830-returns-exporter-pointer") ||
        shim_on("830-failure-leaks"))
      remember_export(out, ptr);
  }
  return r;
}

HOOK CUresult cuMemPoolExportToShareableHandle(void *handle, CUmemoryPool pool, int type, unsigned long long flags) {
  BEGIN(826, "cuMemPoolExportToShareableHandle", CUresult, (void *, CUmemoryPool, int, unsigned long long));
  shim_no_context_crash(826); /* issue 23: interposer */
  if (shim_on("abort-826")) abort();
  if (!driver_up()) return real(handle, pool, type, flags);
  if (!handle && shim_on("826-null-out-unchecked")) {
    union {
      int fd;
      unsigned char bytes[64];
    } scratch = {.fd = -1};
    CUresult r = real(&scratch, pool, type, flags);
    if (r == CUDA_SUCCESS && type == POSIX_FD) close(scratch.fd);
    return r;
  }
  if (type == 0 && shim_on("826-handle-type-none-posix")) type = POSIX_FD;
  if (flags && shim_on("826-flags-ignored")) flags = 0;
  if (shim_on("826-flags-high-half-dropped")) flags = (unsigned)flags;
  if (shim_on("826-handle-type-unknown-bits-dropped")) type &= 0xf;
  CUresult r = real(handle, pool, type, flags);
  if (r == CUDA_ERROR_NOT_PERMITTED && type == 8 /* fabric */ && shim_on("826-fabric-no-channel-invalid-value"))
    return CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_ERROR_INVALID_VALUE) {
    if (shim_on("826-default-pool-not-supported") && shim_pool_is_default(pool)) return CUDA_ERROR_NOT_SUPPORTED;
    if (shim_on("826-win32-not-supported") && (type == 2 || type == 4)) return CUDA_ERROR_NOT_SUPPORTED;
    if (shim_on("826-non-ipc-pool-not-supported") && shim_pool_non_ipc(pool)) return CUDA_ERROR_NOT_SUPPORTED;
    if (shim_on("826-imported-pool-not-permitted") && shim_pool_imported(pool)) return CUDA_ERROR_NOT_PERMITTED;
  }
  if (r == CUDA_SUCCESS && handle && type == POSIX_FD && shim_on("829-same-process-exporter-pool"))
    remember_fd_export(*(int *)handle, pool);
  if (r == CUDA_SUCCESS && handle && type == POSIX_FD && shim_on("826-leaks-fd")) {
    int leaked = dup(*(int *)handle);
    (void)leaked;
  }
  return r;
}

HOOK CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool *pool, void *handle, int type, unsigned long long flags) {
  BEGIN(829, "cuMemPoolImportFromShareableHandle", CUresult, (CUmemoryPool *, void *, int, unsigned long long));
  shim_no_context_crash(829); /* issue 23: interposer */
  if (!driver_up()) return real(pool, handle, type, flags);
  if (type == 0 && shim_on("829-handle-type-none-accepted")) type = POSIX_FD;
  if (flags && shim_on("829-flags-ignored")) flags = 0;
  if (shim_on("829-flags-high-half-dropped")) flags = (unsigned)flags;
  if (shim_on("829-handle-type-unknown-bits-dropped")) type &= 0xf;
  if (!pool && shim_on("829-null-out-unchecked")) {
    CUmemoryPool scratch = NULL;
    CUresult r = real(&scratch, handle, type, flags);
    if (r == CUDA_SUCCESS) shim_pool_note_imported(scratch);
    return r;
  }
  if (pool && type == POSIX_FD && !flags && shim_on("829-same-process-exporter-pool")) {
    CUmemoryPool mine = fd_exporter((int)(intptr_t)handle);
    if (mine) {
      *pool = mine;
      return CUDA_SUCCESS;
    }
  }
  CUresult r = real(pool, handle, type, flags);
  if (r == CUDA_ERROR_UNKNOWN && shim_on("829-bad-fd-invalid-value")) return CUDA_ERROR_INVALID_VALUE;
  if (r != CUDA_SUCCESS || !pool) return r;
  if (type == POSIX_FD) {
    int fd = (int)(intptr_t)handle;
    if (shim_on("829-closes-fd")) close(fd);
    if (shim_on("829-dup-leaks-fd")) {
      int leaked = dup(fd);
      (void)leaked;
    }
  }
  if (shim_on("829-same-fd-new-pool") && shim_pool_imported(*pool)) {
    static CUresult (*create)(CUmemoryPool *, const CUmemPoolProps *);
    static CUresult (*get_device)(CUdevice *);
    if (!create) *(void **)&create = shim_next("cuMemPoolCreate");
    if (!get_device) *(void **)&get_device = shim_next("cuCtxGetDevice");
    CUdevice dev = 0;
    if (get_device && get_device(&dev) != CUDA_SUCCESS) dev = 0;
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = 1;
    props.location.type = 1;
    props.location.id = dev;
    CUmemoryPool fresh = NULL;
    if (create && create(&fresh, &props) == CUDA_SUCCESS) *pool = fresh;
    return r;
  }
  shim_pool_note_imported(*pool);
  return r;
}

HOOK CUresult cuMemPoolImportPointer(CUdeviceptr *ptr, CUmemoryPool pool, CUmemPoolPtrExportData *data) {
  BEGIN(830, "cuMemPoolImportPointer", CUresult, (CUdeviceptr *, CUmemoryPool, CUmemPoolPtrExportData *));
  shim_no_context_crash(830); /* issue 23: interposer */
  if (!driver_up()) return real(ptr, pool, data);
  if (!ptr && pool && data && shim_on("830-null-out-unchecked")) return CUDA_SUCCESS;
  if (!data && ptr && pool && shim_on("830-null-data-unchecked")) {
    *ptr = 0;
    return CUDA_SUCCESS;
  }
  if (!pool && shim_on("830-null-pool-invalid-handle")) return CUDA_ERROR_INVALID_HANDLE;
  if (ptr && pool && data && all_zero(data) && shim_on("830-zero-data-success")) {
    *ptr = 0;
    return CUDA_SUCCESS;
  }
  CUresult r = real(ptr, pool, data);
  if (r == CUDA_ERROR_INVALID_VALUE && ptr && pool && data) {
    int from_import = shim_pool_imported(pool);
    if (from_import && shim_on("830-bad-data-not-found")) return CUDA_ERROR_NOT_FOUND;
    if (from_import && shim_on("830-data-unchecked")) {
      memcpy(ptr, data->reserved + 24, sizeof *ptr);
      return CUDA_SUCCESS;
    }
    if (!from_import && shim_on("830-exporting-pool-accepted")) {
      CUdeviceptr p = exported_pointer(data);
      if (p) {
        *ptr = p;
        return CUDA_SUCCESS;
      }
    }
  }
  /* issue 23: interposer (830-failure-leaks: a mapping made before the caller's data was refused) */
  if (r != CUDA_SUCCESS && ptr && pool && data && shim_on("830-failure-leaks")) {
    CUmemPoolPtrExportData last;
    pthread_mutex_lock(&exports_lock);
    int have = next_export > 0;
    if (have) last = exports[(next_export - 1) % EXPORTS].data;
    pthread_mutex_unlock(&exports_lock);
    CUdeviceptr made = 0;
    if (have && real(&made, pool, &last) == CUDA_SUCCESS) *ptr = made;
  }
  if (r == CUDA_SUCCESS && ptr) {
    if (shim_on("830-offset-address")) *ptr += 256;
    if (shim_on("830-second-import-new-address")) {
      if (shim_set_has(&imported_addresses, *ptr))
        *ptr += 256;
      else
        shim_set_add(&imported_addresses, *ptr);
    }
    if (shim_on("830-returns-exporter-pointer")) {
      CUdeviceptr mine = exported_pointer(data);
      if (mine && real_free(*ptr) == CUDA_SUCCESS) *ptr = mine;
    }
    if (shim_on("830-import-twice-one-reference")) {
      if (shim_set_has(&imported_once, *ptr))
        real_free(*ptr);
      else
        shim_set_add(&imported_once, *ptr);
    }
    size_t n = 0;
    if (shim_on("830-large-import-truncated") && allocation_base(*ptr, &n) && n > (1ull << 30))
      *ptr = truncated(*ptr);
  }
  return r;
}

const struct shim_hook ipc_hooks[] = {
    {"cuMemPoolExportPointer", (void *)cuMemPoolExportPointer},
    {"cuMemPoolExportToShareableHandle", (void *)cuMemPoolExportToShareableHandle},
    {"cuMemPoolImportFromShareableHandle", (void *)cuMemPoolImportFromShareableHandle},
    {"cuMemPoolImportPointer", (void *)cuMemPoolImportPointer},
    {0},
};
