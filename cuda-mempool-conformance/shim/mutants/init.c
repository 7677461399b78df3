/* Before cuInit, and after cuInit failed (no device): every one of the 14 APIs must answer
 * CUDA_ERROR_NOT_INITIALIZED whatever its arguments. These mutants answer something else, the way
 * a library that handles calls itself before forwarding them would; the suite's
 * `before_cuInit_not_initialized` and `after_cuInit_no_device_not_initialized` trials see them on any
 * machine, GPU or not (CI runs them). The uninitialised call of each API is cases/uninit.rs's. */
#include "../shim.h"

#include <stdio.h>

volatile int shim_init_state;

HOOK CUresult cuInit(unsigned flags) {
  REAL("cuInit", CUresult, (unsigned));
  CUresult r = real(flags);
  /* Once the driver is up it stays up: a later failing call does not make it uninitialised. */
  if (shim_init_state != 1) shim_init_state = r == CUDA_SUCCESS ? 1 : 2;
  return r;
}

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

#define BEFORE_INIT(api, code, why) \
  MUTANT(#api "-before-init-" code, api, "none", "before cuInit: answers " why " instead of NOT_INITIALIZED")
#define FAILED_INIT(api) \
  MUTANT(#api "-failed-init-no-device", api, "none", \
         "after cuInit failed with NO_DEVICE: answers NO_DEVICE (cuInit's error) instead of NOT_INITIALIZED")

const struct shim_entry init_entries[] = {
    BEFORE_INIT(820, "invalid-context", "INVALID_CONTEXT (checks for a current context first)"),
    BEFORE_INIT(821, "invalid-value", "INVALID_VALUE (checks the NULL pool first)"),
    BEFORE_INIT(822, "success", "SUCCESS (treats pointer 0 as a no-op first)"),
    BEFORE_INIT(823, "invalid-device", "INVALID_DEVICE (checks the location's device first)"),
    BEFORE_INIT(824, "invalid-value", "INVALID_VALUE (checks the NULL pool first)"),
    BEFORE_INIT(825, "invalid-value", "INVALID_VALUE (checks the null pointer first)"),
    BEFORE_INIT(826, "invalid-value", "INVALID_VALUE (checks the NULL pool first)"),
    BEFORE_INIT(827, "invalid-value", "INVALID_VALUE (checks the NULL pool first)"),
    BEFORE_INIT(828, "invalid-value", "INVALID_VALUE (checks the NULL pool first)"),
    BEFORE_INIT(829, "invalid-value", "INVALID_VALUE (checks the handle first)"),
    BEFORE_INIT(830, "invalid-value", "INVALID_VALUE (checks the NULL pool first)"),
    BEFORE_INIT(831, "invalid-value", "INVALID_VALUE (checks the NULL pool first)"),
    BEFORE_INIT(832, "invalid-value", "INVALID_VALUE (checks the NULL pool first)"),
    BEFORE_INIT(833, "invalid-value", "INVALID_VALUE (checks the NULL pool first)"),
    FAILED_INIT(820), FAILED_INIT(821), FAILED_INIT(822), FAILED_INIT(823), FAILED_INIT(824),
    FAILED_INIT(825), FAILED_INIT(826), FAILED_INIT(827), FAILED_INIT(828), FAILED_INIT(829),
    FAILED_INIT(830), FAILED_INIT(831), FAILED_INIT(832), FAILED_INIT(833),
    {0},
};

const struct shim_hook init_hooks[] = {
    {"cuInit", (void *)cuInit},
    {0},
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
