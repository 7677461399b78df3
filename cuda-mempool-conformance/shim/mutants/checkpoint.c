/* The checkpoint leg's damage mutants (issue 57): the state a checkpoint/restore engine that gets
 * one thing wrong leaves a process in. The mutant engine (shim/engine/checkpoint_engine.c,
 * `--mutant damage`) takes the process through a real checkpoint and restore, then sends it
 * SIGUSR2 and waits for this file's mark: a thread of this file, in the process under test, does
 * its mutant's damage (on the device's primary context) and leaves the mark
 * `$TMPDIR/cump-checkpoint-damaged-PID`, so the process resumes from the engine as if the engine
 * had restored it so. It knows the pools and allocations from the hooks that note them (alloc.c,
 * attr.c). The engine mutants that need no help here (left locked, left
 * checkpointed) are the engine's own. Killed by the `checkpoint::` trials (cases/checkpoint.rs). */
#include "../shim.h"

#include <semaphore.h>
#include <signal.h>
#include <stdio.h>

const struct shim_entry checkpoint_entries[] = {
    MUTANT("checkpoint-attributes-reset", 828, "checkpoint",
           "after a restore every pool's attributes are back to their defaults (threshold 0, reuse on)"),
    MUTANT("checkpoint-contents-lost", 820, "checkpoint", "after a restore every live allocation reads zeros"),
    MUTANT("checkpoint-reserve-released", 833, "checkpoint",
           "after a restore every pool has released what it kept (as trimmed to 0)"),
    MUTANT("checkpoint-allocation-moved", 821, "checkpoint",
           "after a restore each live allocation lives at a new address (its contents copied there)"),
    MUTANT("checkpoint-threshold-forgotten", 832, "checkpoint", "after a restore every pool's release threshold is 0"),
    {0},
};
const struct shim_hook checkpoint_hooks[] = {{0}};

/* Which mutant of this file is on: its name, or NULL (decided once). */
static const char *which(void) {
  static int decided;
  static const char *on;
  if (!decided) {
    for (const struct shim_entry *e = checkpoint_entries; e->name; e++)
      if (shim_on(e->name)) on = e->name;
    decided = 1;
  }
  return on;
}

static sem_t restored;
static void on_restore(int sig) {
  (void)sig;
  sem_post(&restored); /* async-signal-safe */
}
static void *damage_thread(void *arg);
/* The handler and the damage thread, installed at load only when a mutant of this file is on
 * (SIGUSR2 otherwise ends a process, as it should for a stray one). */
__attribute__((constructor)) static void install(void) {
  if (!which()) return;
  pthread_t t;
  sem_init(&restored, 0, 0);
  if (pthread_create(&t, NULL, damage_thread, NULL) == 0) {
    pthread_detach(t);
    signal(SIGUSR2, on_restore);
  }
}

/* Pools whose attributes were set, and the live allocations (address, size, pool). */
static struct shim_set pools = SHIM_SET_INIT;
#define LIVE 4096
static struct {
  CUdeviceptr p;
  size_t n;
} live[LIVE];
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

void shim_ckpt_note_pool(CUmemoryPool pool) {
  if (which()) shim_set_add(&pools, (uintptr_t)pool);
}
void shim_ckpt_note_alloc(CUdeviceptr p, size_t n) {
  if (!which() || !p) return;
  pthread_mutex_lock(&live_lock);
  for (int i = 0; i < LIVE; i++)
    if (!live[i].p) {
      live[i].p = p;
      live[i].n = n;
      break;
    }
  pthread_mutex_unlock(&live_lock);
}
void shim_ckpt_forget_alloc(CUdeviceptr p) {
  if (!which() || !p) return;
  pthread_mutex_lock(&live_lock);
  for (int i = 0; i < LIVE; i++)
    if (live[i].p == p) live[i].p = 0;
  pthread_mutex_unlock(&live_lock);
}

/* cuPointerGetAttribute's attributes the damage asks. */
#define DEVICE_ORDINAL 9
#define MEMPOOL_HANDLE 17

/* The driver's functions the damage takes, looked up once. */
#define DRV(var, name, args) NEXT(var, name, CUresult, args)

static void each_pool(void (*f)(CUmemoryPool)) {
  DRV(pool_of, "cuPointerGetAttribute", (void *, int, CUdeviceptr));
  DRV(get_default, "cuDeviceGetDefaultMemPool", (CUmemoryPool *, CUdevice));
  struct shim_set seen = SHIM_SET_INIT;
  for (size_t i = 0; i < SHIM_SET_SLOTS; i++)
    if (pools.v[i]) shim_set_add(&seen, pools.v[i]);
  for (int i = 0; i < LIVE; i++) {
    CUmemoryPool p = NULL;
    if (live[i].p && pool_of && pool_of(&p, MEMPOOL_HANDLE, live[i].p) == 0)
      shim_set_add(&seen, (uintptr_t)p);
  }
  CUmemoryPool d = NULL;
  for (int dev = 0; get_default && dev < shim_device_count(); dev++)
    if (get_default(&d, dev) == 0) shim_set_add(&seen, (uintptr_t)d);
  for (size_t i = 0; i < SHIM_SET_SLOTS; i++)
    if (seen.v[i]) f((CUmemoryPool)seen.v[i]);
}

static void reset_attributes(CUmemoryPool pool) {
  DRV(set, "cuMemPoolSetAttribute", (CUmemoryPool, int, void *));
  int on = 1;
  cuuint64_t zero = 0;
  if (!set) return;
  for (int a = 1; a <= 3; a++) set(pool, a, &on); /* the reuse flags' defaults */
  set(pool, 4, &zero);                          /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */
}
static void forget_threshold(CUmemoryPool pool) {
  DRV(set, "cuMemPoolSetAttribute", (CUmemoryPool, int, void *));
  cuuint64_t zero = 0;
  if (set) set(pool, 4, &zero);
}
static void release_reserve(CUmemoryPool pool) {
  DRV(trim, "cuMemPoolTrimTo", (CUmemoryPool, size_t));
  if (trim) trim(pool, 0);
}

static void damage(const char *m) {
  DRV(memset8, "cuMemsetD8_v2", (CUdeviceptr, unsigned char, size_t));
  DRV(alloc, "cuMemAllocFromPoolAsync", (CUdeviceptr *, size_t, CUmemoryPool, CUstream));
  DRV(copy, "cuMemcpyDtoD_v2", (CUdeviceptr, CUdeviceptr, size_t));
  DRV(free_async, "cuMemFreeAsync", (CUdeviceptr, CUstream));
  DRV(sync, "cuCtxSynchronize", (void));
  DRV(pool_of, "cuPointerGetAttribute", (void *, int, CUdeviceptr));
  if (!strcmp(m, "checkpoint-attributes-reset")) each_pool(reset_attributes);
  if (!strcmp(m, "checkpoint-threshold-forgotten")) each_pool(forget_threshold);
  if (!strcmp(m, "checkpoint-reserve-released")) each_pool(release_reserve);
  pthread_mutex_lock(&live_lock);
  for (int i = 0; i < LIVE; i++) {
    if (!live[i].p) continue;
    if (!strcmp(m, "checkpoint-contents-lost") && memset8) memset8(live[i].p, 0, live[i].n);
    CUmemoryPool pool = NULL;
    if (!strcmp(m, "checkpoint-allocation-moved") && alloc && copy && free_async && pool_of &&
        pool_of(&pool, MEMPOOL_HANDLE, live[i].p) == 0) {
      CUdeviceptr moved = 0;
      if (alloc(&moved, live[i].n, pool, NULL) == 0 && sync && sync() == 0) {
        copy(moved, live[i].p, live[i].n);
        free_async(live[i].p, NULL);
        live[i].p = moved;
      }
    }
  }
  pthread_mutex_unlock(&live_lock);
  if (sync) sync();
}

/* After each SIGUSR2: the damage, on the primary context of the device of the first live allocation
 * (device 0 without one), then the mark the mutant engine waits for. */
static void *damage_thread(void *arg) {
  (void)arg;
  DRV(attr, "cuPointerGetAttribute", (void *, int, CUdeviceptr));
  DRV(retain, "cuDevicePrimaryCtxRetain", (CUcontext *, CUdevice));
  DRV(release, "cuDevicePrimaryCtxRelease_v2", (CUdevice));
  DRV(set_current, "cuCtxSetCurrent", (CUcontext));
  for (;;) {
    while (sem_wait(&restored) != 0) {
    }
    int dev = 0;
    for (int i = 0; i < LIVE && attr; i++)
      if (live[i].p && attr(&dev, DEVICE_ORDINAL, live[i].p) == 0) break;
    CUcontext ctx = NULL;
    if (retain && set_current && retain(&ctx, dev) == 0 && set_current(ctx) == 0) damage(which());
    if (ctx && release) release(dev);
    char mark[512];
    const char *tmp = getenv("TMPDIR");
    snprintf(mark, sizeof mark, "%s/cump-checkpoint-damaged-%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    FILE *f = fopen(mark, "w");
    if (f) fclose(f);
  }
  return NULL;
}
