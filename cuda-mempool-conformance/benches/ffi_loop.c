/* The C half of the FFI-overhead benchmark: the same loop as the Rust half in allocator.rs, calling
 * through the same two function pointers the Rust half's table holds (the suite links no driver
 * symbol; C code that loads the driver at run time calls it exactly this way). No CUDA header: it
 * must build where none is installed. CUresult is a C enum (int-sized), CUdeviceptr an unsigned
 * long long, CUstream an opaque pointer. */
#include <stddef.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct CUstream_st *CUstream;
typedef CUresult (*alloc_fn)(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
typedef CUresult (*free_fn)(CUdeviceptr dptr, CUstream hStream);

/* iters pairs of cuMemAllocAsync + cuMemFreeAsync on one stream; the first failing code, or 0. */
int cump_c_alloc_free_loop(alloc_fn alloc, free_fn release, CUstream stream, size_t size, unsigned long iters) {
    for (unsigned long i = 0; i < iters; i++) {
        CUdeviceptr p = 0;
        CUresult r = alloc(&p, size, stream);
        if (r != 0) return r;
        r = release(p, stream);
        if (r != 0) return r;
    }
    return 0;
}
