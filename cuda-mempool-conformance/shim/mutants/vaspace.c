/* The mutants of address space and concurrent import (issue 38), named here; they act in the hooks
 * of their APIs through BEGIN (shim.h), in ../address_space.c, but for the graph node's (issue 48),
 * which acts in this file's one hook: cuGraphAddMemAllocNode, beyond the 14 APIs (where the
 * counting cap of ../cap.c checks a graph's memory too, issue 47).
 *
 * The comment above each entry names the trials that kill it (cases/vaspace/,
 * cases/xproc/concurrent.rs). */
#include "../shim.h"

#include <sys/mman.h>

const struct shim_entry vaspace_entries[] = {
    /* 823 vaspace::create_max_size_{0,2_mib,1_gib}_destroy_gives_back */
    MUTANT("823-destroy-keeps-address-space", 823, "gpu",
           "each cuMemPoolCreate maps 1 GiB of address space (PROT_NONE) that nothing ever unmaps"),
    /* 829 vaspace::import_figures_and_destroy_gives_back */
    MUTANT("829-import-keeps-address-space", 829, "ipc",
           "each cuMemPoolImportFromShareableHandle maps 1 GiB of address space (PROT_NONE) that nothing ever unmaps"),
    /* 823 vaspace::rlimit_as_create_answers_a_code, 829 vaspace::rlimit_as_import_answers_a_code,
     * 822 vaspace::rlimit_as_free_answers_a_code */
    MUTANT("822-rlimit-crashes", 822, "gpu",
           "cuMemFreeAsync, cuMemPoolCreate and cuMemPoolImportFromShareableHandle abort the process under a finite "
           "RLIMIT_AS instead of answering a code"),
    /* 829, 830 concurrent_import_{handle,one_pool,own_pools}_{2,4,16}_threads */
    MUTANT("829-concurrent-import-races", 829, "ipc",
           "an import (829 or 830) entered by a second thread within 5 ms of another thread's answers UNKNOWN "
           "(bookkeeping that is not thread-safe)"),
    /* 829, 830 concurrent_import_{handle,one_pool,own_pools}_{2,4,16}_threads (issue 48: every
     * thread refused must fail the trial; single-threaded imports are untouched) */
    MUTANT("830-threads-refused-imports", 830, "ipc",
           "cuMemPoolImportPointer called with a current context from any thread but the process's main one "
           "answers OUT_OF_MEMORY (every concurrent import refused)"),
    /* 820 vaspace::graph_alloc_node_figures (issue 48: reached since the suite's look-ups beyond its
     * table go through the cuGetProcAddress applications find) */
    MUTANT("820-graph-node-reserves-anew", 820, "gpu",
           "each cuGraphAddMemAllocNode maps 1 GiB of address space (PROT_NONE) that nothing ever unmaps: "
           "a graph made after another's destruction and a trim reserves anew"),
    {0},
};

/* cuGraphAddMemAllocNode (CUDA 11.4's prototype). The counting cap (cap.c, issue 47) reads the
 * params' size and may refuse the node; the rest of their layout is the driver's business. */
HOOK CUresult cuGraphAddMemAllocNode(void *node, void *graph, const void *deps, size_t n, void *params) {
  REAL("cuGraphAddMemAllocNode", CUresult, (void *, void *, const void *, size_t, void *));
  CUresult pre;
  if (shim_precondition("cuGraphAddMemAllocNode", &pre)) return pre;
  if (params && !shim_cap_graph_node(((const CUDA_MEM_ALLOC_NODE_PARAMS *)params)->bytesize))
    return CUDA_ERROR_OUT_OF_MEMORY;
  CUresult r = real(node, graph, deps, n, params);
  if (r == CUDA_SUCCESS && shim_init_state == 1 && shim_on("820-graph-node-reserves-anew"))
    (void)mmap(NULL, 1ull << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return r;
}

const struct shim_hook vaspace_hooks[] = {
    {"cuGraphAddMemAllocNode", (void *)cuGraphAddMemAllocNode},
    {0},
};
