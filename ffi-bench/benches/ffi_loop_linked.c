/* The C half of the linked-symbol FFI figure: the loop of benches/linked.rs, calling the driver's
 * exported cuMemAllocAsync and cuMemFreeAsync by name, as a C program linked with -lcuda does (no
 * CUDA header: the declarations are cuda.h's, for symbols cuda.h does not rename). */
#include <stddef.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct CUstream_st *CUstream;
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);

/* iters pairs of cuMemAllocAsync + cuMemFreeAsync on one stream; the first failing code, or 0. */
int ffi_bench_c_linked_loop(CUstream stream, size_t size, unsigned long iters) {
  for (unsigned long i = 0; i < iters; i++) {
    CUdeviceptr p = 0;
    CUresult r = cuMemAllocAsync(&p, size, stream);
    if (r != 0) return r;
    r = cuMemFreeAsync(p, stream);
    if (r != 0) return r;
  }
  return 0;
}
