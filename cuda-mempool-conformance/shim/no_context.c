/* The mutants of a thread without a current context (issues 23 and 34, interposer bugs): shared by the hooks of the 14 APIs.
 *
 * The no-context-crash mutants (named in the group files) are asked by the hooks that name them;
 * the no-context-refuses-stream mutants (named in mutants/caps.c) by every hook, through BEGIN. */
#include "shim.h"

#include <stdio.h>

/* Whether mutant `what` of API `api` ("<api>-<what>") is on, cuInit has succeeded and the calling
 * thread has no current context, per the driver. */
static int without_context(unsigned api, const char *what) {
  char name[64];
  snprintf(name, sizeof name, "%u-%s", api, what);
  if (shim_init_state != 1 || !shim_on(name)) return 0;
  NEXT(get, "cuCtxGetCurrent", CUresult, (CUcontext *));
  CUcontext c = NULL;
  return get && get(&c) == CUDA_SUCCESS && !c;
}

void shim_no_context_crash(unsigned api) {
  if (without_context(api, "no-context-crash")) shim_crash();
}

int shim_no_context_refuses(unsigned api, CUresult *r) {
  if (api > 822 || !without_context(api, "no-context-refuses-stream")) return 0;
  *r = CUDA_ERROR_INVALID_CONTEXT;
  return 1;
}
