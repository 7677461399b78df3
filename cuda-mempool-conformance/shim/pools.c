/* What the shim knows about pools: those made without handle types, those imported, the defaults.
 *
 * Shared by the group files (mutants/pool.c notes the pools it makes and forgets the ones it
 * destroys, mutants/ipc.c notes the ones it imports, both ask), so that no group file calls
 * another. Each query answers 0 when it does not know (see shim.h). */
#include "shim.h"

/* Pools cuMemPoolCreate made without handle types while a mutant that asks was on
 * (825-non-ipc-pool-exported, 826-non-ipc-pool-not-supported). */
static struct shim_set non_ipc = SHIM_SET_INIT;
/* Pools this process imported and has not destroyed. */
static struct shim_set imported = SHIM_SET_INIT;

void shim_pool_note_non_ipc(CUmemoryPool pool) { shim_set_add(&non_ipc, (uintptr_t)pool); }
void shim_pool_note_imported(CUmemoryPool pool) { shim_set_add(&imported, (uintptr_t)pool); }

void shim_pool_forget(CUmemoryPool pool) {
  shim_set_del(&imported, (uintptr_t)pool);
  shim_set_del(&non_ipc, (uintptr_t)pool);
}

int shim_pool_non_ipc(CUmemoryPool pool) { return shim_set_has(&non_ipc, (uintptr_t)pool); }
int shim_pool_imported(CUmemoryPool pool) { return shim_set_has(&imported, (uintptr_t)pool); }

/* The number of devices, 0 if the driver cannot say. */
int shim_device_count(void) {
  static CUresult (*count)(int *);
  if (!count) *(void **)&count = shim_next("cuDeviceGetCount");
  int n = 0;
  if (!count || count(&n) != CUDA_SUCCESS) n = 0;
  return n;
}

int shim_pool_is_default(CUmemoryPool pool) {
  static CUresult (*get_default)(CUmemoryPool *, CUdevice);
  if (!get_default) *(void **)&get_default = shim_next("cuDeviceGetDefaultMemPool");
  if (!pool || !get_default) return 0;
  for (int d = 0, n = shim_device_count(); d < n; d++) {
    CUmemoryPool p = NULL;
    if (get_default(&p, d) == CUDA_SUCCESS && p == pool) return 1;
  }
  return 0;
}
