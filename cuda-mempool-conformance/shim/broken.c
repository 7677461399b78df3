/* A layer that breaks for good (issues 47 and 58): from some call on, every call of the 14 APIs answers one error.
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
 *   broken-without-crash    the same break with no crash (issue 58): from the run's AFTER-th
 *                           cuMemPoolCreate that reaches this library's hook past the faults (the
 *                           AFTER-th that goes on to the driver, whatever it answers: on the shim's
 *                           fake-device the driver answers NOT_INITIALIZED), every hook of the 14
 *                           APIs, in every process of the run, answers DEVICE_UNAVAILABLE (46). A
 *                           remoting layer whose GPU-side server lost a child process mid-run: no
 *                           process of the suite dies. The report's opening line names the first
 *                           trial of the break, with no crash before it. A fault (API 0), not a
 *                           mutant: it breaks every API at once, as the machine does.
 *
 * The mark is a file whose path the run's first process that loads this library with either on
 * (the suite's coordinator) makes up at load, unique to it (its pid and the time), and hands down
 * in LIBMISBEHAVE_BROKEN_MARK (no CONFORMANCE_ name: plumbing, not a setting the report records):
 * the workers and their children inherit it, and a later run makes up another, so that no run
 * finds an earlier run's mark. The run is broken once the mark holds AFTER bytes: the crash makes
 * it that long at once, broken-without-crash appends one byte per cuMemPoolCreate (O_APPEND, so
 * that every process counts into the one file). That process removes the file when it exits; one
 * killed leaves it in the temporary directory, named by no later run.
 *
 * Acts in cuMemPoolCreate's hook (mutants/pool.c: shim_broken_crash, shim_broken_count) and in
 * every hook of the 14 APIs through BEGIN (shim.h: shim_broken_answer), so tests/mutants/selection.rs
 * lists 823-broken-after-crash in BESIDE. */
#include "shim.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#define NAME "823-broken-after-crash"
#define QUIET "broken-without-crash"
#define MARK_VAR "LIBMISBEHAVE_BROKEN_MARK"
#define CUDA_ERROR_DEVICE_UNAVAILABLE 46
/* The cuMemPoolCreate calls of a run before broken-without-crash breaks it: on one H100 a default
 * run makes a few hundred, on the fake device about 150; the first 40 are about the first tenth
 * of a run's trials. */
#define AFTER 40

const struct shim_entry broken_entries[] = {
    /* 823 null_pool_out_invalid_value (the crash); the report opens with the break (issue 47) */
    MUTANT(NAME, 823, "gpu",
           "a NULL out-pointer to cuMemPoolCreate crashes the process; from then on every call of the 14 APIs, in "
           "every process of the run, answers DEVICE_UNAVAILABLE (46)"),
    /* issue 58: the same break with no crash; the report opens with it all the same */
    FAULT(QUIET, 0, "gpu",
          "from the run's 40th cuMemPoolCreate on, every call of the 14 APIs, in every process of the run, answers "
          "DEVICE_UNAVAILABLE (46); nothing crashes"),
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
  if (!shim_on(NAME) && !shim_on(QUIET)) return;
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
    struct stat st;
    if (stat(mark, &st) != 0 || st.st_size < AFTER) return 0;
    __atomic_store_n(&seen, 1, __ATOMIC_RELAXED);
  }
  *r = CUDA_ERROR_DEVICE_UNAVAILABLE;
  return 1;
}

void shim_broken_count(void) {
  if (!mark[0] || !shim_on(QUIET)) return;
  int fd = open(mark, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  struct stat st;
  if (write(fd, "1", 1) == 1 && fstat(fd, &st) == 0 && st.st_size == AFTER)
    fprintf(stderr, "libmisbehave: " QUIET ": the run's %dth cuMemPoolCreate: from now on every call of the 14 APIs "
                    "answers DEVICE_UNAVAILABLE (46)\n", AFTER);
  close(fd);
}

void shim_broken_crash(void) {
  if (!mark[0] || !shim_on(NAME) || shim_init_state != 1) return;
  int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) {
    /* AFTER bytes long: broken at once (what broken-without-crash counted, if it is on too, stays). */
    struct stat st;
    int broken = fstat(fd, &st) == 0 && (st.st_size >= AFTER || ftruncate(fd, AFTER) == 0);
    (void)broken;
    close(fd);
  }
  fprintf(stderr, "libmisbehave: " NAME ": a NULL out-pointer to cuMemPoolCreate: crashing; every later call of the "
                  "14 APIs answers DEVICE_UNAVAILABLE (46)\n");
  shim_crash();
}
