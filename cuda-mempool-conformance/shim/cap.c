/* The memory cap of 820-cap-bypass (named in mutants/caps.c): what a GPU-sharing layer tells the process it has.
 *
 * Shared by precondition.c (its cuMemGetInfo_v2 and cuDeviceTotalMem_v2 hooks report the cap) and
 * mutants/caps.c (its cuMemAlloc_v2 and cuMemFree_v2 hooks charge and refund it), so that no group
 * file calls another. The layer caps the process at half the device's memory, counts only what
 * cuMemAlloc_v2 took, and leaves the pool paths alone: the bug of a layer that hooks cuMemAlloc only. */
#include "shim.h"

/* Bytes cuMemAlloc_v2 took under the cap and cuMemFree_v2 has not given back. */
static size_t charged;

/* Half the memory of the calling context's device, per the driver; 0 when it cannot say. */
static size_t cap(void) {
  static CUresult (*info)(size_t *, size_t *);
  if (!info) *(void **)&info = shim_next("cuMemGetInfo_v2");
  size_t free_bytes = 0, total = 0;
  return info && info(&free_bytes, &total) == CUDA_SUCCESS ? total / 2 : 0;
}

CUresult shim_cap_info(CUresult r, size_t *free_bytes, size_t *total_bytes) {
  if (r != CUDA_SUCCESS || !shim_on("820-cap-bypass") || !free_bytes || !total_bytes) return r;
  size_t used = __atomic_load_n(&charged, __ATOMIC_SEQ_CST);
  *total_bytes /= 2;
  *free_bytes = *total_bytes > used ? *total_bytes - used : 0;
  return r;
}

CUresult shim_cap_total(CUresult r, size_t *bytes) {
  if (r == CUDA_SUCCESS && bytes && shim_on("820-cap-bypass")) *bytes /= 2;
  return r;
}

int shim_cap_charge(size_t n) {
  size_t limit = cap();
  size_t was = __atomic_fetch_add(&charged, n, __ATOMIC_SEQ_CST);
  if (!limit || (was <= limit && n <= limit - was)) return 1;
  __atomic_fetch_sub(&charged, n, __ATOMIC_SEQ_CST);
  return 0;
}

void shim_cap_refund(size_t n) { __atomic_fetch_sub(&charged, n, __ATOMIC_SEQ_CST); }
