/* A layer that breaks for good (issue 47): one crash, then every call of the 14 APIs answers one error.
 *
 *   823-broken-after-crash  once cuInit has succeeded, a NULL out-pointer to cuMemPoolCreate marks
 *                           the run broken and crashes the process (SIGSEGV: shim_crash); from then
 *                           on every hook of the 14 APIs, in this run's every process (those started
 *                           before the crash included, at their next call), answers
 *                           CUDA_ERROR_DEVICE_UNAVAILABLE (46) without the driver. An API-remoting
 *                           layer whose server process crashed on a NULL out-pointer and answers
 *                           every later connection with 46. cuInit and the context calls still
 *                           reach the driver, so each later trial fails at its first pool or
 *                           allocation call with the one answer (as the remoting run of the issue
 *                           did: 188 failures, one cause). The report's opening line
 *                           (report/broken.rs) names the crash and the first trial after it.
 *
 * The mark is a file whose path the run's first process that loads this library with the mutant
 * on (the suite's coordinator) makes up at load, unique to it (its pid and the time), and hands
 * down in LIBMISBEHAVE_BROKEN_MARK (no CONFORMANCE_ name: plumbing, not a setting the report
 * records): the workers and their children inherit it, and a later run makes up another, so that
 * no run finds an earlier run's mark. That process removes the file
 * when it exits; one killed leaves it in the temporary directory, named by no later run.
 *
 * Acts in cuMemPoolCreate's hook (mutants/pool.c: shim_broken_crash) and in every hook of the 14
 * APIs through BEGIN (shim.h: shim_broken_answer), so tests/mutants/selection.rs lists it in BESIDE. */
#include "shim.h"

#include <fcntl.h>
#include <stdio.h>
#include <time.h>

#define NAME "823-broken-after-crash"
#define MARK_VAR "LIBMISBEHAVE_BROKEN_MARK"
#define CUDA_ERROR_DEVICE_UNAVAILABLE 46

const struct shim_entry broken_entries[] = {
    /* 823 null_pool_out_invalid_value (the crash); the report opens with the break (issue 47) */
    MUTANT(NAME, 823, "gpu",
           "a NULL out-pointer to cuMemPoolCreate crashes the process; from then on every call of the 14 APIs, in "
           "every process of the run, answers DEVICE_UNAVAILABLE (46)"),
    {0},
};

const struct shim_hook broken_hooks[] = {
    {0},
};

/* The mark's path (NULL while the mutant is off); whether this process made it up; whether this
 * process has seen the mark. */
static char mark[512];
static int owner;
static int seen;

__attribute__((constructor)) static void name_mark(void) {
  if (!shim_on(NAME)) return;
  const char *given = getenv(MARK_VAR);
  if (given && *given) {
    snprintf(mark, sizeof mark, "%s", given);
    return;
  }
  const char *tmp = getenv("TMPDIR");
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  snprintf(mark, sizeof mark, "%s/libmisbehave-broken-%ld-%lld%09ld", tmp && *tmp ? tmp : "/tmp", (long)getpid(),
           (long long)t.tv_sec, t.tv_nsec);
  setenv(MARK_VAR, mark, 1);
  owner = 1;
}

__attribute__((destructor)) static void remove_mark(void) {
  if (owner) unlink(mark);
}

int shim_broken_answer(CUresult *r) {
  if (!mark[0]) return 0;
  if (!__atomic_load_n(&seen, __ATOMIC_RELAXED)) {
    if (access(mark, F_OK) != 0) return 0;
    __atomic_store_n(&seen, 1, __ATOMIC_RELAXED);
  }
  *r = CUDA_ERROR_DEVICE_UNAVAILABLE;
  return 1;
}

void shim_broken_crash(void) {
  if (!mark[0] || shim_init_state != 1) return;
  int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
  fprintf(stderr, "libmisbehave: " NAME ": a NULL out-pointer to cuMemPoolCreate: crashing; every later call of the "
                  "14 APIs answers DEVICE_UNAVAILABLE (46)\n");
  shim_crash();
}
