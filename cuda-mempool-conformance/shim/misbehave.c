/* Test-only: a libcuda that misbehaves on purpose, loaded with LD_PRELOAD in front of the real one.
 * tests/shim.rs runs the conformance suite under it and checks that the report marks exactly the
 * APIs broken here as not passing:
 *   824 cuMemPoolDestroy    wrong codes: success for a NULL pool and for the default pool
 *   827 cuMemPoolGetAccess  garbage output: a flags value that is no CUmemAccess_flags
 *   833 cuMemPoolTrimTo     wrong codes: success for anything, and it trims nothing
 * Everything else goes to the real driver (dlsym RTLD_NEXT). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef unsigned int CUmemAccess_flags;

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t min_bytes_to_keep) {
    (void)pool;
    (void)min_bytes_to_keep;
    return 0;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool) {
    static CUresult (*real)(CUmemoryPool);
    static CUresult (*get_default)(CUmemoryPool *, CUdevice);
    if (!real) {
        real = (CUresult(*)(CUmemoryPool))dlsym(RTLD_NEXT, "cuMemPoolDestroy");
        get_default = (CUresult(*)(CUmemoryPool *, CUdevice))dlsym(RTLD_NEXT, "cuDeviceGetDefaultMemPool");
    }
    if (pool == NULL) return 0;
    CUmemoryPool d = NULL;
    if (get_default && get_default(&d, 0) == 0 && d == pool) return 0;
    return real ? real(pool) : 999;
}

CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool, void *location) {
    static CUresult (*real)(CUmemAccess_flags *, CUmemoryPool, void *);
    if (!real) real = (CUresult(*)(CUmemAccess_flags *, CUmemoryPool, void *))dlsym(RTLD_NEXT, "cuMemPoolGetAccess");
    CUresult r = real ? real(flags, pool, location) : 999;
    if (r == 0 && flags) *flags = 0x7f7f;
    return r;
}
