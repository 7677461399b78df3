/* The mutants of issue 38 that act beside the 14 APIs' hooks: the device's claimed pool handle types
 * and pool kinds.
 *
 * The report header prints CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, HOST_MEMORY_POOLS_SUPPORTED,
 * HOST_NUMA_MEMORY_POOLS_SUPPORTED and HANDLE_TYPE_FABRIC_SUPPORTED; printed.rs checks each against the
 * pools the device makes. The mutants act in cuDeviceGetAttribute, hooked by precondition.c (one hook
 * a symbol), so they are listed in tests/mutants.rs's BESIDE. Issue 38's
 * mutants of the 14 APIs live beside their hooks (mutants/pool.c, access.c, attr.c, ipc.c). The
 * comment above each entry names the trials that kill it. */
#include "../shim.h"

const struct shim_entry depth_entries[] = {
    /* 823 supported_handle_types_match_pools */
    MUTANT("823-handle-types-overclaimed", 823, "gpu",
           "MEMPOOL_SUPPORTED_HANDLE_TYPES claims every handle type (POSIX fd, Win32, Win32 KMT, fabric)"),
    /* 823 host_pools_flag_matches_host_pool_creation */
    MUTANT("823-host-pools-underclaimed", 823, "gpu",
           "HOST_MEMORY_POOLS_SUPPORTED answers 0 on a device that makes host pools"),
    /* 823 host_numa_flag_matches_host_numa_pool_creation */
    MUTANT("823-host-numa-pools-underclaimed", 823, "gpu",
           "HOST_NUMA_MEMORY_POOLS_SUPPORTED answers 0 on a device that makes host NUMA pools"),
    /* 823 fabric_flag_matches_fabric_pool_creation */
    MUTANT("823-fabric-underclaimed", 823, "gpu",
           "HANDLE_TYPE_FABRIC_SUPPORTED answers 0 on a device that makes fabric pools"),
    {0},
};

const struct shim_hook depth_hooks[] = {
    {0},
};
