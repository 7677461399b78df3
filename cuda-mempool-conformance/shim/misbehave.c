/* Test-only: a libcuda that misbehaves on purpose, loaded with LD_PRELOAD in front of the real one,
 * the way interposition libraries are shipped. tests/shim.rs runs the conformance suite under it,
 * one fault at a time, and checks that the report marks exactly the sabotaged API.
 *
 * Faults, chosen with CONFORMANCE_SHIM_FAULTS=name[,name...] (default: the first three):
 *   wrong-codes-824  cuMemPoolDestroy: success for a NULL pool and for the default pool, which it
 *                    then does not destroy (wrong codes)
 *   garbage-827      cuMemPoolGetAccess: success with flags 0x7f7f, no CUmemAccess_flags value
 *   noop-833         cuMemPoolTrimTo: success for anything, and it trims nothing
 *   null-out-820     cuMemAllocAsync: writes through its out-pointer before checking it, as some
 *                    interposers do (SIGSEGV on NULL)
 *   bad-result-822   cuMemFreeAsync: returns -1, which is no CUresult, for memory that did not
 *                    come from cuMemAllocAsync/cuMemAllocFromPoolAsync through this library
 *   hang-833         cuMemPoolTrimTo: never returns
 *   abort-826        cuMemPoolExportToShareableHandle: aborts the process
 * Everything else goes to the real driver (dlsym RTLD_NEXT). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUstream_st *CUstream;
typedef unsigned int CUmemAccess_flags;

static int fault(const char *name) {
  const char *f = getenv("CONFORMANCE_SHIM_FAULTS");
  if (!f || !*f) f = "wrong-codes-824,garbage-827,noop-833";
  size_t n = strlen(name);
  for (const char *p = f; (p = strstr(p, name)) != NULL; p += n)
    if ((p == f || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}

/* `real`: the next definition of this function (the driver's), looked up once. */
#define REAL(name, ret, args) \
  static ret(*real) args; \
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, name); \
  if (!real) return 999

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

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream) {
  REAL("cuMemAllocAsync", CUresult, (CUdeviceptr *, size_t, CUstream));
  if (fault("null-out-820")) *(volatile CUdeviceptr *)dptr = 0;
  CUresult r = real(dptr, bytesize, stream);
  if (r == 0 && dptr && fault("bad-result-822")) remember(*dptr);
  return r;
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream) {
  REAL("cuMemAllocFromPoolAsync", CUresult, (CUdeviceptr *, size_t, CUmemoryPool, CUstream));
  CUresult r = real(dptr, bytesize, pool, stream);
  if (r == 0 && dptr && fault("bad-result-822")) remember(*dptr);
  return r;
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
  REAL("cuMemFreeAsync", CUresult, (CUdeviceptr, CUstream));
  if (fault("bad-result-822") && !forget(dptr)) return -1;
  return real(dptr, stream);
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t min_bytes_to_keep) {
  REAL("cuMemPoolTrimTo", CUresult, (CUmemoryPool, size_t));
  if (fault("hang-833"))
    for (;;) pause();
  if (fault("noop-833")) return 0;
  return real(pool, min_bytes_to_keep);
}

CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  REAL("cuMemPoolDestroy", CUresult, (CUmemoryPool));
  static CUresult (*get_default)(CUmemoryPool *, CUdevice);
  if (!get_default) get_default = (CUresult(*)(CUmemoryPool *, CUdevice))dlsym(RTLD_NEXT, "cuDeviceGetDefaultMemPool");
  if (fault("wrong-codes-824")) {
    if (pool == NULL) return 0;
    CUmemoryPool d = NULL;
    if (get_default && get_default(&d, 0) == 0 && d == pool) return 0;
  }
  return real(pool);
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool, void *location) {
  REAL("cuMemPoolGetAccess", CUresult, (CUmemAccess_flags *, CUmemoryPool, void *));
  CUresult r = real(flags, pool, location);
  if (r == 0 && flags && fault("garbage-827")) *flags = 0x7f7f;
  return r;
}

CUresult cuMemPoolExportToShareableHandle(void *handle, CUmemoryPool pool, int type, unsigned long long flags) {
  REAL("cuMemPoolExportToShareableHandle", CUresult, (void *, CUmemoryPool, int, unsigned long long));
  if (fault("abort-826")) abort();
  return real(handle, pool, type, flags);
}
