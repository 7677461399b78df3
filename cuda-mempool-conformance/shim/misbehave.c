/* Test-only: a libcuda that misbehaves on purpose, loaded with LD_PRELOAD in front of the real one,
 * the way interposition libraries are shipped. tests/shim.rs runs the conformance suite under it,
 * one fault at a time, and checks that the report marks exactly the sabotaged API.
 *
 * Like real interposers it hooks every path a program takes to the driver: the symbols themselves
 * (programs linked against libcuda), dlsym (programs that load the driver), and cuGetProcAddress
 * (the CUDA runtime, and so most applications). Built with -DPROC_ADDRESS_ONLY it hooks only
 * cuGetProcAddress (its other functions are hidden, and its dlsym hands out nothing but its
 * cuGetProcAddress), so only a program that resolves entry points through cuGetProcAddress sees it.
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
 *   missing-833      cuMemPoolTrimTo does not exist: dlsym answers NULL, cuGetProcAddress
 *                    CUDA_ERROR_NOT_FOUND (a library that lacks an entry point)
 * Everything else goes to the real driver. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef PROC_ADDRESS_ONLY
#define HOOK __attribute__((visibility("hidden")))
#else
#define HOOK __attribute__((visibility("default")))
#endif
#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long cuuint64_t;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUstream_st *CUstream;
typedef unsigned int CUmemAccess_flags;

#define CUDA_ERROR_NOT_FOUND 500
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2ull
#define CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND 1

static int fault(const char *name) {
  const char *f = getenv("CONFORMANCE_SHIM_FAULTS");
  if (!f || !*f) f = "wrong-codes-824,garbage-827,noop-833";
  size_t n = strlen(name);
  for (const char *p = f; (p = strstr(p, name)) != NULL; p += n)
    if ((p == f || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}

/* The C library's own dlsym, under this library's hook. */
static void *(*real_dlsym)(void *, const char *);
/* The driver's definition of `name`: the next one in the global namespace (a program linked against
 * libcuda), else the driver library's own (a program that loaded it RTLD_LOCAL: the runtime). */
static void *next(const char *name) {
  if (!real_dlsym) {
    *(void **)&real_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!real_dlsym) *(void **)&real_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    if (!real_dlsym) return NULL;
  }
  void *f = real_dlsym(RTLD_NEXT, name);
  if (f) return f;
  static void *driver;
  if (!driver) {
    const char *path = getenv("CUDA_MEMPOOL_SYS_LIBCUDA");
    driver = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  }
  return driver ? real_dlsym(driver, name) : NULL;
}

/* `real`: the next definition of this function (the driver's), looked up once. */
#define REAL(name, ret, args) \
  static ret(*real) args; \
  if (!real) *(void **)&real = next(name); \
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

HOOK CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream) {
  REAL("cuMemAllocAsync", CUresult, (CUdeviceptr *, size_t, CUstream));
  if (fault("null-out-820")) *(volatile CUdeviceptr *)dptr = 0;
  CUresult r = real(dptr, bytesize, stream);
  if (r == 0 && dptr && fault("bad-result-822")) remember(*dptr);
  return r;
}

HOOK CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream stream) {
  REAL("cuMemAllocFromPoolAsync", CUresult, (CUdeviceptr *, size_t, CUmemoryPool, CUstream));
  CUresult r = real(dptr, bytesize, pool, stream);
  if (r == 0 && dptr && fault("bad-result-822")) remember(*dptr);
  return r;
}

HOOK CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
  REAL("cuMemFreeAsync", CUresult, (CUdeviceptr, CUstream));
  if (fault("bad-result-822") && !forget(dptr)) return -1;
  return real(dptr, stream);
}

HOOK CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t min_bytes_to_keep) {
  REAL("cuMemPoolTrimTo", CUresult, (CUmemoryPool, size_t));
  if (fault("hang-833"))
    for (;;) pause();
  if (fault("noop-833")) return 0;
  return real(pool, min_bytes_to_keep);
}

HOOK CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  REAL("cuMemPoolDestroy", CUresult, (CUmemoryPool));
  static CUresult (*get_default)(CUmemoryPool *, CUdevice);
  if (!get_default) *(void **)&get_default = next("cuDeviceGetDefaultMemPool");
  if (fault("wrong-codes-824")) {
    if (pool == NULL) return 0;
    CUmemoryPool d = NULL;
    if (get_default && get_default(&d, 0) == 0 && d == pool) return 0;
  }
  return real(pool);
}

HOOK CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool, void *location) {
  REAL("cuMemPoolGetAccess", CUresult, (CUmemAccess_flags *, CUmemoryPool, void *));
  CUresult r = real(flags, pool, location);
  if (r == 0 && flags && fault("garbage-827")) *flags = 0x7f7f;
  return r;
}

HOOK CUresult cuMemPoolExportToShareableHandle(void *handle, CUmemoryPool pool, int type, unsigned long long flags) {
  REAL("cuMemPoolExportToShareableHandle", CUresult, (void *, CUmemoryPool, int, unsigned long long));
  if (fault("abort-826")) abort();
  return real(handle, pool, type, flags);
}

/* The functions above by name (their C names are their symbols). */
static const struct {
  const char *name;
  void *fn;
} hooks[] = {
    {"cuMemAllocAsync", (void *)cuMemAllocAsync},
    {"cuMemAllocFromPoolAsync", (void *)cuMemAllocFromPoolAsync},
    {"cuMemFreeAsync", (void *)cuMemFreeAsync},
    {"cuMemPoolTrimTo", (void *)cuMemPoolTrimTo},
    {"cuMemPoolDestroy", (void *)cuMemPoolDestroy},
    {"cuMemPoolGetAccess", (void *)cuMemPoolGetAccess},
    {"cuMemPoolExportToShareableHandle", (void *)cuMemPoolExportToShareableHandle},
};
static void *hook(const char *name) {
  for (size_t i = 0; name && i < sizeof hooks / sizeof *hooks; i++)
    if (!strcmp(name, hooks[i].name)) return hooks[i].fn;
  return NULL;
}
static int missing(const char *name) { return name && fault("missing-833") && !strcmp(name, "cuMemPoolTrimTo"); }

/* cuGetProcAddress: the driver's answer, with this library's functions in place of its own
 * (except the per-thread-default-stream variants, which stay the driver's). */
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags, int *status) {
  REAL("cuGetProcAddress_v2", CUresult, (const char *, void **, int, cuuint64_t, int *));
  if (missing(symbol)) {
    if (pfn) *pfn = NULL;
    if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  }
  CUresult r = real(symbol, pfn, version, flags, status);
  void *mine = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? NULL : hook(symbol);
  if (r == 0 && pfn && *pfn && mine) *pfn = mine;
  return r;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags) {
  REAL("cuGetProcAddress", CUresult, (const char *, void **, int, cuuint64_t));
  if (missing(symbol)) {
    if (pfn) *pfn = NULL;
    return CUDA_ERROR_NOT_FOUND;
  }
  CUresult r = real(symbol, pfn, version, flags);
  void *mine = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? NULL : hook(symbol);
  if (r == 0 && pfn && *pfn && mine) *pfn = mine;
  return r;
}

/* dlsym: this library's functions for their names, whatever the handle. */
EXPORT void *dlsym(void *handle, const char *name) {
  if (!real_dlsym) next("dlsym");
  if (missing(name)) return NULL;
  if (!strcmp(name, "cuGetProcAddress_v2")) return (void *)cuGetProcAddress_v2;
  if (!strcmp(name, "cuGetProcAddress")) return (void *)cuGetProcAddress;
#ifndef PROC_ADDRESS_ONLY
  void *mine = hook(name);
  if (mine) return mine;
#endif
  return real_dlsym ? real_dlsym(handle, name) : NULL;
}
