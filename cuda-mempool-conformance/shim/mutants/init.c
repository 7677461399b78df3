/* The init-state mutants (before cuInit, after a failed one), and cuInit's hook, which records the state.
 *
 * Before cuInit, and after cuInit failed (no device): every one of the 14 APIs must answer
 * CUDA_ERROR_NOT_INITIALIZED whatever its arguments. These mutants answer something else, the way
 * a library that handles calls itself before forwarding them would; the suite's
 * `before_cuInit_not_initialized` and `after_cuInit_no_device_not_initialized` trials see them on any
 * machine, GPU or not (CI runs them). The uninitialised call of each API is cases/uninit.rs's.
 * The state and the answers every hook asks for (shim_init_state, shim_init_mutant) are
 * ../init_state.c's, shared by every group file; this file names the mutants. What cuInit answers
 * under the machine's faults (init-803, init-anyway, fake-device) is ../precondition.c's. */
#include "../shim.h"

HOOK CUresult cuInit(unsigned flags) {
  REAL("cuInit", CUresult, (unsigned));
  CUresult r;
  if (!shim_precondition("cuInit", &r)) r = real(flags);
  /* Once the driver is up it stays up: a later failing call does not make it uninitialised. */
  if (shim_init_state != 1) shim_init_state = r == CUDA_SUCCESS ? 1 : 2;
  return shim_init_answer(r);
}

/* Each name's code word is the answer init_state.c's BEFORE gives for that API. */
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
