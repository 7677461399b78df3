/* The mutation library's plumbing: the registry, the switches, and the three paths to the driver.
 *
 * Test-only: a mutation library for the 14 stream-ordered-allocator APIs. Loaded with LD_PRELOAD in
 * front of the real libcuda, the way interposition libraries are shipped, it changes one behaviour
 * of one API at a time, so that the conformance suite can be shown to notice (tests/mutants.rs,
 * docs/conformance/mutants.md), and it keeps the faults that crash, hang or answer with no CUresult
 * (tests/shim.rs).
 *
 *   CONFORMANCE_MUTANT=name[,name...]       switch mutants (or faults) on; unset: a faithful library
 *   CONFORMANCE_SHIM_FAULTS=name[,name...]  the same, the name tests/shim.rs uses
 *   CONFORMANCE_MUTANT=list                 print every mutant and fault, one a line, and exit:
 *                                           name, API, what the machine needs, kind, what it breaks
 * An unknown name stops the process at load with a message naming it (exit 2).
 *
 * This file is the plumbing: the registry, the switches, and the three paths a program takes to
 * the driver, all hooked as real interposers hook them: the symbols themselves (programs linked
 * against libcuda), dlsym (programs that load the driver), and cuGetProcAddress (the CUDA runtime,
 * and so most applications). Built with -DPROC_ADDRESS_ONLY it hooks only cuGetProcAddress (the
 * hooks are hidden, and its dlsym hands out nothing but its cuGetProcAddress); built with
 * -DNO_PROC_ADDRESS_HOOK it hooks every path but cuGetProcAddress (it neither defines nor hands out
 * cuGetProcAddress or cuGetProcAddress_v2: applications of the CUDA runtime bypass it, as they
 * bypass a layer that exports the 14 APIs alone; `suite::library_reached` says so). The mutants live in
 * mutants/, one file per API group, each hook beginning with BEGIN (shim.h); what several group
 * files need lives beside this file (set.c, pools.c, init_state.c, cap.c, no_context.c,
 * broken.c), declared in shim.h, and no group file calls another; below them all lie the switches (switches.c) and the way
 * to the driver (next.c). The faults of the machine (a driver that will not start, a crashing or
 * slow layer, a device without pools, a fake device) are precondition.c's, a group of its own
 * whose faults every hook and every look-up of a driver function asks (their list is there).
 *
 * Faults of the plumbing itself:
 *   missing-833  cuMemPoolTrimTo does not exist: dlsym answers NULL, cuGetProcAddress
 *                CUDA_ERROR_NOT_FOUND (a library that lacks an entry point)
 * Mutants of the look-up (issue 34), seen by the suite's entry trials on every path:
 *   lookup-ignores-version  cuGetProcAddress hands out its hook where the driver hands out nothing
 *                           (a version before the API's), the driver's answer and status kept
 *   lookup-initialises      cuGetProcAddress initialises the driver (its cuInit(0)) before it looks up;
 *                           under fake-device the fake's, and it keeps /dev/null open at each look-up
 *                           (the device files a driver opens as it initialises) */
#include "shim.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>

#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2ull
#define CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND 1

static const struct shim_entry plumbing_entries[] = {
    FAULT("missing-833", 833, "none", "cuMemPoolTrimTo is missing: dlsym NULL, cuGetProcAddress NOT_FOUND"),
    MUTANT("lookup-ignores-version", 820, "none",
           "cuGetProcAddress hands out its hook of any of the 14 APIs asked at a version before the API's (11.2)"),
    MUTANT("lookup-initialises", 820, "gpu",
           "cuGetProcAddress calls the driver's cuInit(0) first: APIs called before cuInit find it initialised"),
    {0},
};

static const struct shim_entry *const ENTRIES[] = {
    plumbing_entries, init_entries, alloc_entries, pool_entries, ipc_entries, access_entries, attr_entries,
    precondition_entries, caps_entries, depth_entries, vaspace_entries, broken_entries, checkpoint_entries,
};
static const struct shim_hook *const HOOKS[] = {
    init_hooks, alloc_hooks, pool_hooks, ipc_hooks, access_hooks, attr_hooks, precondition_hooks, caps_hooks,
    depth_hooks, vaspace_hooks, broken_hooks, checkpoint_hooks,
};
#define COUNT(a) (sizeof(a) / sizeof *(a))

static const struct shim_entry *find(const char *name, size_t n) {
  for (size_t g = 0; g < COUNT(ENTRIES); g++)
    for (const struct shim_entry *e = ENTRIES[g]; e->name; e++)
      if (strlen(e->name) == n && !strncmp(e->name, name, n)) return e;
  return NULL;
}

/* Every name of `list` must be known: a typo would otherwise run a faithful library and call
 * every trial a survivor. */
static void check_names(const char *var, const char *list) {
  for (const char *p = list; p && *p;) {
    size_t n = strcspn(p, ",");
    if (n && !find(p, n)) {
      fprintf(stderr,
              "libmisbehave: %s names no mutant or fault \"%.*s\"; CONFORMANCE_MUTANT=list prints them\n", var,
              (int)n, p);
      _exit(2);
    }
    p += n + (p[n] == ',');
  }
}

__attribute__((constructor)) static void setup(void) {
  const char *mutants, *faults;
  shim_switches(&mutants, &faults);
  if (mutants && !strcmp(mutants, "list")) {
    for (size_t g = 0; g < COUNT(ENTRIES); g++)
      for (const struct shim_entry *e = ENTRIES[g]; e->name; e++)
        printf("%s\t%u\t%s\t%s\t%s\n", e->name, e->api, e->needs, e->kind, e->what);
    fflush(stdout);
    _exit(0);
  }
  check_names("CONFORMANCE_MUTANT", mutants);
  check_names("CONFORMANCE_SHIM_FAULTS", faults);
}

/* This library's definition of `name`, if it hooks it. */
static void *hook(const char *name) {
  for (size_t g = 0; name && g < COUNT(HOOKS); g++)
    for (const struct shim_hook *h = HOOKS[g]; h->name; h++)
      if (!strcmp(name, h->name)) return h->fn;
  return NULL;
}
/* Whether the look-up of `name` (with `ptds`: the per-thread-default-stream variant asked of
 * cuGetProcAddress) finds nothing: missing-833 takes cuMemPoolTrimTo away every way;
 * 821-ptsz-missing (mutants/alloc.c) takes only the per-thread variant of cuMemAllocFromPoolAsync. */
static int missing(const char *name, int ptds) {
  if (!name) return 0;
  if (shim_on("missing-833") && !strcmp(name, "cuMemPoolTrimTo")) return 1;
  return shim_on("821-ptsz-missing") &&
         !strcmp(name, ptds ? "cuMemAllocFromPoolAsync" : "cuMemAllocFromPoolAsync_ptsz");
}

/* This library's function in place of `fn`, the driver's answer to cuGetProcAddress for `symbol`:
 * the hook of `symbol`, else that of `symbol`_v2 when `fn` is the driver's `symbol`_v2 (the ABI
 * it answers from the version that introduced it on: cuMemGetInfo_v2 for cuMemGetInfo at 3020).
 * NULL when it hooks neither, or `fn` is NULL. */
static void *hook_for(const char *symbol, void *fn) {
  char v2[128];
  if (!symbol || !fn) return NULL;
  void *mine = hook(symbol);
  if (mine || snprintf(v2, sizeof v2, "%s_v2", symbol) >= (int)sizeof v2) return mine;
  mine = hook(v2);
  return mine && shim_next(v2) == fn ? mine : NULL;
}

/* Whether a look-up of `symbol` asks for the per-thread-default-stream variant. Issue 23
 * (interposer): 820-proc-address-ignores-ptds (mutants/alloc.c) ignores the flag for cuMemAllocAsync,
 * 822-proc-address-ignores-ptds (issue 48) for cuMemFreeAsync. */
static int ptds_asked(const char *symbol, cuuint64_t flags) {
  if (!(flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) return 0;
  if (symbol && !strcmp(symbol, "cuMemFreeAsync") && shim_on("822-proc-address-ignores-ptds")) return 0;
  return !(symbol && !strcmp(symbol, "cuMemAllocAsync") && shim_on("820-proc-address-ignores-ptds"));
}

/* NO_PROC_ADDRESS_HOOK: the look-up hooks stay in the library, not exported. */
#ifdef NO_PROC_ADDRESS_HOOK
#define LOOKUP_HOOK __attribute__((visibility("hidden")))
#else
#define LOOKUP_HOOK EXPORT
#endif

/* The look-up mutants before the driver is asked: lookup-initialises's cuInit(0), the driver's
 * own (this library's cuInit state stays "not called", as a layer's own bookkeeping would). Under
 * fake-device the driver is this library's fake: its cuInit (mutants/init.c's hook, which
 * initialises the fake device), and in place of the device files a driver opens as it
 * initialises, /dev/null opened and kept at every look-up (issue 58: what such a layer leaves open
 * in a process is lookup_does_not_initialise's cause, not a leak of the trial that looked up). */
static void lookup_begins(void) {
  if (!shim_on("lookup-initialises")) return;
  CUresult (*init)(unsigned);
  int fake = shim_on("fake-device");
  *(void **)&init = fake ? hook("cuInit") : shim_next("cuInit");
  if (init) init(0);
  if (fake) (void)open("/dev/null", O_RDONLY | O_CLOEXEC); /* kept: never closed */
}

/* This library's function for `symbol` in place of the driver's answer `fn` (NULL: none for that
 * symbol; with `ptds`, the per-thread variant asked, which stays the driver's): the hook for the
 * driver's function, and under lookup-ignores-version the hook where the driver handed out
 * nothing (a version before the API's). NULL when this library answers nothing else. */
static void *mine_for(const char *symbol, void *fn, int ptds) {
  if (ptds) return NULL;
  if (fn) return hook_for(symbol, fn);
  return shim_on("lookup-ignores-version") ? hook(symbol) : NULL;
}

/* cuGetProcAddress: the driver's answer, with this library's functions in place of its own
 * (except the per-thread-default-stream variants, which stay the driver's). */
LOOKUP_HOOK CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags, int *status) {
  REAL("cuGetProcAddress_v2", CUresult, (const char *, void **, int, cuuint64_t, int *));
  shim_lookup_precondition();
  if (missing(symbol, (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0)) {
    if (pfn) *pfn = NULL;
    if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  }
  lookup_begins();
  CUresult r = real(symbol, pfn, version, flags, status);
  void *mine = pfn ? mine_for(symbol, r == 0 ? *pfn : NULL, ptds_asked(symbol, flags)) : NULL;
  if (mine) *pfn = mine;
  return r;
}

LOOKUP_HOOK CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags) {
  REAL("cuGetProcAddress", CUresult, (const char *, void **, int, cuuint64_t));
  shim_lookup_precondition();
  if (missing(symbol, (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0)) {
    if (pfn) *pfn = NULL;
    return CUDA_ERROR_NOT_FOUND;
  }
  lookup_begins();
  CUresult r = real(symbol, pfn, version, flags);
  void *mine = pfn ? mine_for(symbol, r == 0 ? *pfn : NULL, ptds_asked(symbol, flags)) : NULL;
  if (mine) *pfn = mine;
  return r;
}

/* dlsym: this library's functions for their names, whatever the handle. */
EXPORT void *dlsym(void *handle, const char *name) {
  if (!strncmp(name, "cu", 2)) shim_lookup_precondition();
  if (missing(name, 0)) return NULL;
#ifndef NO_PROC_ADDRESS_HOOK
  if (!strcmp(name, "cuGetProcAddress_v2")) return (void *)cuGetProcAddress_v2;
  if (!strcmp(name, "cuGetProcAddress")) return (void *)cuGetProcAddress;
#endif
#ifndef PROC_ADDRESS_ONLY
  void *mine = hook(name);
  if (mine) return mine;
#endif
  return shim_dlsym(handle, name);
}
