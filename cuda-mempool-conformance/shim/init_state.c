/* cuInit's state as this library saw it, and the init-state mutant that answers in the driver's place.
 *
 * Shared by every group file: each hook asks shim_init_mutant first (BEGIN, shim.h), and some
 * read shim_init_state. mutants/init.c records the state (its cuInit hook) and lists these
 * mutants (their names and what they break); the answers are here, and a name this file does
 * not make (an entry of init.c out of step with BEFORE) is a mutant that never acts, which the
 * no-GPU mutation run (tests/mutants.rs) reports as a survivor. */
#include "shim.h"

#include <stdio.h>

volatile int shim_init_state;

/* The answer each API's before-cuInit mutant gives to the suite's uninitialised call: what a
 * library that checks arguments, context or device before the driver's state would answer. */
static const struct {
  unsigned api;
  CUresult code;
} BEFORE[] = {
    {820, CUDA_ERROR_INVALID_CONTEXT}, {821, CUDA_ERROR_INVALID_VALUE}, {822, CUDA_SUCCESS},
    {823, CUDA_ERROR_INVALID_DEVICE},  {824, CUDA_ERROR_INVALID_VALUE}, {825, CUDA_ERROR_INVALID_VALUE},
    {826, CUDA_ERROR_INVALID_VALUE},   {827, CUDA_ERROR_INVALID_VALUE}, {828, CUDA_ERROR_INVALID_VALUE},
    {829, CUDA_ERROR_INVALID_VALUE},   {830, CUDA_ERROR_INVALID_VALUE}, {831, CUDA_ERROR_INVALID_VALUE},
    {832, CUDA_ERROR_INVALID_VALUE},   {833, CUDA_ERROR_INVALID_VALUE},
};

static const char *code_word(CUresult c) {
  switch (c) {
  case CUDA_SUCCESS: return "success";
  case CUDA_ERROR_INVALID_VALUE: return "invalid-value";
  case CUDA_ERROR_INVALID_DEVICE: return "invalid-device";
  case CUDA_ERROR_INVALID_CONTEXT: return "invalid-context";
  default: return "?";
  }
}

int shim_init_mutant(unsigned api, CUresult *r) {
  int state = shim_init_state;
  if (state == 1) return 0;
  char name[64];
  if (state == 0) {
    for (size_t i = 0; i < sizeof BEFORE / sizeof *BEFORE; i++)
      if (BEFORE[i].api == api) {
        snprintf(name, sizeof name, "%u-before-init-%s", api, code_word(BEFORE[i].code));
        if (shim_on(name)) {
          *r = BEFORE[i].code;
          return 1;
        }
      }
    return 0;
  }
  snprintf(name, sizeof name, "%u-failed-init-no-device", api);
  if (shim_on(name)) {
    *r = CUDA_ERROR_NO_DEVICE;
    return 1;
  }
  return 0;
}
