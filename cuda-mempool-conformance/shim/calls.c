/* Which of the 14 APIs' hooks this process entered, for the mutation run's selection (tests/mutants.rs).
 *
 * BEGIN (shim.h) notes each hook of API `api` (bit api - 820) in one process-wide mask; the suite's
 * worker takes it after each trial (conformance_shim_take_calls, looked up with dlsym) and reports
 * which APIs the trial reached. A child the worker starts (an importer, an exporter) cannot be asked:
 * with CONFORMANCE_SHIM_CALLS_FILE set, each time a bit is set for the first time it appends the
 * whole mask, in decimal, one line, to that file (open, write, close: a child that crashes has
 * already reported; at most 14 writes while nobody takes the mask). */
#include "shim.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static unsigned calls;

/* Set once a hook blocked for good (shim_hold); read by every hook (BEGIN). */
static volatile int held;

void shim_hold(void) {
  held = 1;
  for (;;) pause();
}

void shim_held_wait(void) {
  if (held)
    for (;;) pause();
}

/* Append `mask` as one line to CONFORMANCE_SHIM_CALLS_FILE, when it is set; errors are dropped (a
 * lost line only makes the run select more trials, never fewer: see tests/mutants.rs). */
static void report(unsigned mask) {
  const char *path = getenv("CONFORMANCE_SHIM_CALLS_FILE");
  if (!path || !*path) return;
  char line[16];
  int n = snprintf(line, sizeof line, "%u\n", mask);
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  ssize_t w = write(fd, line, (size_t)n);
  (void)w;
  close(fd);
}

void shim_calls_note(unsigned api) {
  if (api < 820 || api > 833) return;
  unsigned bit = 1u << (api - 820);
  if (__atomic_fetch_or(&calls, bit, __ATOMIC_RELAXED) & bit) return;
  report(__atomic_load_n(&calls, __ATOMIC_RELAXED));
}

EXPORT unsigned conformance_shim_take_calls(void) { return __atomic_exchange_n(&calls, 0u, __ATOMIC_RELAXED); }
