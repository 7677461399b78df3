/* The no-context-crash mutants of shim.h (issue 23, interposer bugs): shared by the group files
 * whose hooks call it, each naming its API's mutant. */
#include "shim.h"

#include <stdio.h>

void shim_no_context_crash(unsigned api) {
  char name[32];
  snprintf(name, sizeof name, "%u-no-context-crash", api);
  if (shim_init_state != 1 || !shim_on(name)) return;
  static CUresult (*get)(CUcontext *);
  if (!get) *(void **)&get = shim_next("cuCtxGetCurrent");
  CUcontext c = NULL;
  if (get && get(&c) == CUDA_SUCCESS && !c) shim_crash();
}
