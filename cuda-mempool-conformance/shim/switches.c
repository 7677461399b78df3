/* Which mutants and faults are switched on: CONFORMANCE_MUTANT and CONFORMANCE_SHIM_FAULTS, read once.
 *
 * Below every file that asks (shim_on): misbehave.c checks the names at load and prints the list,
 * through shim_switches; this file calls none of the others. */
#include "shim.h"

static const char *mutants, *faults;
static pthread_once_t read_once = PTHREAD_ONCE_INIT;

static void read_switches(void) {
  mutants = getenv("CONFORMANCE_MUTANT");
  faults = getenv("CONFORMANCE_SHIM_FAULTS");
}

void shim_switches(const char **mutant_list, const char **fault_list) {
  pthread_once(&read_once, read_switches);
  *mutant_list = mutants;
  *fault_list = faults;
}

/* Whether the comma-separated list `list` holds `name`. */
static int listed(const char *list, const char *name) {
  if (!list) return 0;
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
    if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}

int shim_on(const char *name) {
  pthread_once(&read_once, read_switches);
  return listed(mutants, name) || listed(faults, name);
}
