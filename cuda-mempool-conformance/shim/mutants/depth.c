/* The mutants of issue 38 that act beside the 14 APIs' hooks: the device's claimed pool handle types.
 *
 * The report header prints CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES; printed.rs checks it
 * against the pools the device makes. The mutant acts in cuDeviceGetAttribute, hooked by
 * precondition.c (one hook a symbol), so it is listed in tests/mutants.rs's BESIDE. Issue 38's
 * mutants of the 14 APIs live beside their hooks (mutants/pool.c, access.c, attr.c, ipc.c). The
 * comment above each entry names the trials that kill it. */
#include "../shim.h"

const struct shim_entry depth_entries[] = {
    /* 823 supported_handle_types_match_pools */
    MUTANT("823-handle-types-overclaimed", 823, "gpu",
           "MEMPOOL_SUPPORTED_HANDLE_TYPES claims every handle type (POSIX fd, Win32, Win32 KMT, fabric)"),
    {0},
};

const struct shim_hook depth_hooks[] = {
    {0},
};
