/* The one header bindgen reads (`cargo xtask regen`), and the one the ABI probe compiles against.
 * It is compiled once per supported CUDA major, against that major's pinned cuda.h. */
#include <cuda.h>
#include <cudaTypedefs.h> /* PFN_* types for entry points resolved at run time (cuGetProcAddress). */

/* Per-thread-default-stream variants of the three stream-ordered allocation calls. cuda.h declares
 * these only by renaming the plain names when CUDA_API_PER_THREAD_DEFAULT_STREAM is defined, so one
 * pass of bindgen cannot see both. They are declared here with the plain calls' exact types; the ABI
 * probe checks that with __builtin_types_compatible_p against cuda.h's own declarations. */
CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream);
CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);
