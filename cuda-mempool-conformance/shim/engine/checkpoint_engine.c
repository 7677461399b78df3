/* cump-checkpoint-engine: a checkpoint engine outside the suite, for its checkpoint leg's
 * `command:` form (CONFORMANCE_CHECKPOINT=command:cump-checkpoint-engine {pid} {step}), and the
 * leg's mutant engines (issue 57). It calls the driver's own engine, cuCheckpointProcessLock /
 * Checkpoint / Restore / Unlock (R570+), looked up with dlsym in libcuda.so.1, on another process.
 *
 *   cump-checkpoint-engine [--mutant NAME] PID checkpoint   lock, then checkpoint
 *   cump-checkpoint-engine [--mutant NAME] PID restore      restore, then unlock
 *   cump-checkpoint-engine [--mutant NAME] PID toggle       all four
 *
 * Exit 0 when every call answered CUDA_SUCCESS; otherwise the failing call's CUresult (capped at
 * 255) after a line on stderr naming it. The mutants, each an engine that gets one thing wrong:
 *   left-locked         restores but never unlocks (answers success)
 *   still-checkpointed  answers success to `restore` without restoring or unlocking
 *   damage              restores and unlocks, then sends the process SIGUSR2 and waits (20 s at
 *                       most) for the mark $TMPDIR/cump-checkpoint-damaged-PID: the mutation
 *                       library in that process (CONFORMANCE_MUTANT=checkpoint-*, shim/mutants/
 *                       checkpoint.c) has then done the damage its mutant names, as an engine
 *                       that lost or changed that state would leave the process. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*step_fn)(int pid, void *args);

static step_fn look(void *lib, const char *name) {
  step_fn f = (step_fn)dlsym(lib, name);
  if (!f) {
    fprintf(stderr, "cump-checkpoint-engine: libcuda.so.1 has no %s (the driver's checkpoint engine needs R570+)\n", name);
    exit(2);
  }
  return f;
}

static void call(step_fn f, const char *name, int pid) {
  int r = f(pid, NULL);
  if (r != 0) {
    fprintf(stderr, "cump-checkpoint-engine: %s(%d) answered %d\n", name, pid, r);
    exit(r > 255 ? 255 : r);
  }
}

int main(int argc, char **argv) {
  const char *mutant = "";
  int a = 1;
  if (argc > 2 && strcmp(argv[1], "--mutant") == 0) {
    mutant = argv[2];
    a = 3;
  }
  if (argc - a != 2) {
    fprintf(stderr, "usage: cump-checkpoint-engine [--mutant left-locked|still-checkpointed|damage] PID checkpoint|restore|toggle\n");
    return 2;
  }
  int pid = atoi(argv[a]);
  const char *step = argv[a + 1];
  if (pid <= 0) {
    fprintf(stderr, "cump-checkpoint-engine: %s is not a process id\n", argv[a]);
    return 2;
  }
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "cump-checkpoint-engine: cannot open libcuda.so.1: %s\n", dlerror());
    return 2;
  }
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
  if (init) init(0);
  step_fn lock = look(lib, "cuCheckpointProcessLock"), checkpoint = look(lib, "cuCheckpointProcessCheckpoint"),
          restore = look(lib, "cuCheckpointProcessRestore"), unlock = look(lib, "cuCheckpointProcessUnlock");
  int down = strcmp(step, "checkpoint") == 0 || strcmp(step, "toggle") == 0;
  int up = strcmp(step, "restore") == 0 || strcmp(step, "toggle") == 0;
  if (!down && !up) {
    fprintf(stderr, "cump-checkpoint-engine: step %s: expected checkpoint, restore or toggle\n", step);
    return 2;
  }
  if (down) {
    call(lock, "cuCheckpointProcessLock", pid);
    call(checkpoint, "cuCheckpointProcessCheckpoint", pid);
  }
  if (up) {
    if (strcmp(mutant, "still-checkpointed") == 0) return 0;
    call(restore, "cuCheckpointProcessRestore", pid);
    if (strcmp(mutant, "left-locked") == 0) return 0;
    call(unlock, "cuCheckpointProcessUnlock", pid);
    if (strcmp(mutant, "damage") == 0) {
      char mark[512];
      const char *tmp = getenv("TMPDIR");
      snprintf(mark, sizeof mark, "%s/cump-checkpoint-damaged-%d", tmp && *tmp ? tmp : "/tmp", pid);
      unlink(mark);
      if (kill(pid, SIGUSR2) != 0) {
        perror("cump-checkpoint-engine: kill(SIGUSR2)");
        return 2;
      }
      struct timespec tick = {0, 10 * 1000 * 1000};
      for (int i = 0; i < 2000 && access(mark, F_OK) != 0; i++) nanosleep(&tick, NULL);
      if (unlink(mark) != 0) {
        fprintf(stderr, "cump-checkpoint-engine: process %d left no damage mark in 20 s (is the mutation library preloaded with a checkpoint-* mutant?)\n", pid);
        return 3;
      }
    }
  }
  return 0;
}
