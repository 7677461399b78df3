/* The C half of the FFI-overhead benchmark: the same loop as the Rust half in allocator.rs,
 * declaring only the prototypes it needs (no CUDA header: it must build where none is installed).
 * CUresult is a C enum (int-sized), CUdeviceptr an unsigned long long, CUstream an opaque pointer. */
#include <stddef.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct CUstream_st *CUstream;

CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);

/* iters pairs of cuMemAllocAsync + cuMemFreeAsync on one stream; the first failing code, or 0. */
int cump_c_alloc_free_loop(CUstream stream, size_t size, unsigned long iters) {
    for (unsigned long i = 0; i < iters; i++) {
        CUdeviceptr p = 0;
        CUresult r = cuMemAllocAsync(&p, size, stream);
        if (r != 0) return r;
        r = cuMemFreeAsync(p, stream);
        if (r != 0) return r;
    }
    return 0;
}
