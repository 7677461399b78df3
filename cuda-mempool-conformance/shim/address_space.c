/* The address-space and concurrent-import mutants (named in mutants/vaspace.c, issue 38), acting
 * in the hooks of 822, 823, 829 and 830 through BEGIN (shim.h): shim_vaspace_mutant. */
#include "shim.h"

#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define GIB (1ull << 30)
/* Two imports by different threads closer than this count as concurrent. */
#define RACE_NS 5000000ull

static unsigned long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/* Whether another thread entered an import less than RACE_NS ago (noting this entry). */
static int import_raced(void) {
  static unsigned long long last_ns;
  static long last_tid;
  long tid = syscall(SYS_gettid);
  unsigned long long now = now_ns();
  unsigned long long before = __atomic_exchange_n(&last_ns, now, __ATOMIC_SEQ_CST);
  long before_tid = __atomic_exchange_n(&last_tid, tid, __ATOMIC_SEQ_CST);
  return before && before_tid != tid && now - before < RACE_NS;
}

/* Whether the calling thread has a current context (a thread without one is the interposer
 * trials', whose answer the driver gives). */
static int has_context(void) {
  static CUresult (*get)(CUcontext *);
  if (!get) *(void **)&get = shim_next("cuCtxGetCurrent");
  CUcontext c = NULL;
  return get && get(&c) == CUDA_SUCCESS && c != NULL;
}

int shim_vaspace_mutant(unsigned api, CUresult *r) {
  if ((api == 823 && shim_on("823-destroy-keeps-address-space")) ||
      (api == 829 && shim_on("829-import-keeps-address-space")))
    (void)mmap(NULL, GIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if ((api == 822 || api == 823 || api == 829) && shim_on("822-rlimit-crashes")) {
    struct rlimit l;
    if (getrlimit(RLIMIT_AS, &l) == 0 && l.rlim_cur != RLIM_INFINITY) {
      fprintf(stderr, "misbehave: 822-rlimit-crashes: RLIMIT_AS is finite, aborting in API %u\n", api);
      abort();
    }
  }
  if ((api == 829 || api == 830) && shim_on("829-concurrent-import-races") && import_raced()) {
    *r = CUDA_ERROR_UNKNOWN;
    return 1;
  }
  if (api == 830 && shim_on("830-threads-refused-imports") && syscall(SYS_gettid) != getpid() && has_context()) {
    *r = CUDA_ERROR_OUT_OF_MEMORY;
    return 1;
  }
  return 0;
}
