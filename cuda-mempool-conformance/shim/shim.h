/* Test-only mutation library: what every file of it shares. See misbehave.c for the whole. */
#ifndef CUMP_SHIM_H
#define CUMP_SHIM_H
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* PROC_ADDRESS_ONLY: the hooks are reachable only through cuGetProcAddress (misbehave.c). */
#ifdef PROC_ADDRESS_ONLY
#define HOOK __attribute__((visibility("hidden")))
#else
#define HOOK __attribute__((visibility("default")))
#endif
#define EXPORT __attribute__((visibility("default")))

/* cuda.h's types, as far as the hooks look into them (layouts of CUDA 12.2 and later). */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long cuuint64_t;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUstream_st *CUstream;
typedef struct CUctx_st *CUcontext;
typedef unsigned int CUmemAccess_flags;
typedef struct {
  int type; /* CUmemLocationType: 1 device, 2 host, 3 host NUMA, 4 host NUMA current */
  int id;
} CUmemLocation;
typedef struct {
  CUmemLocation location;
  CUmemAccess_flags flags; /* 0 none, 1 read, 3 read-write */
} CUmemAccessDesc;
typedef struct {
  int allocType;   /* 1 pinned */
  int handleTypes; /* bit 1 POSIX fd, 2 Win32, 4 Win32 KMT, 8 fabric */
  CUmemLocation location;
  void *win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
} CUmemPoolProps;
typedef struct {
  unsigned char reserved[64];
} CUmemPoolPtrExportData;
/* The parameters of cuGraphAddMemAllocNode (the counting cap reads the size). */
typedef struct {
  CUmemPoolProps poolProps;
  const CUmemAccessDesc *accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  CUdeviceptr dptr;
} CUDA_MEM_ALLOC_NODE_PARAMS;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_PERMITTED = 800,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_UNKNOWN = 999,
};

/* The driver's definition of `name`, the next one after this library (next.c); NULL when there is
 * none. shim_dlsym: the C library's own dlsym (under misbehave.c's hook); NULL when it cannot be
 * found. */
void *shim_next(const char *name);
void *shim_dlsym(void *handle, const char *name);
/* Whether mutant or fault `name` is switched on (CONFORMANCE_MUTANT / CONFORMANCE_SHIM_FAULTS)
 * (switches.c): 1 when it is, 0 otherwise. shim_switches: the two variables' values, each NULL
 * when unset (read once, at the first call of either). */
int shim_on(const char *name);
void shim_switches(const char **mutants, const char **faults);
/* cuInit's state as this library saw it (init_state.c; mutants/init.c's cuInit hook records it):
 * 0 not called, 1 succeeded, 2 failed. */
extern volatile int shim_init_state;
/* The before-cuInit / failed-cuInit mutants of API `api` (init_state.c; named in mutants/init.c):
 * 1 when one answers in place of the driver, with its answer in *r; 0 (and *r untouched) when none
 * does, the driver then answering. Every hook of the 14 APIs calls it (BEGIN, after
 * shim_precondition). */
int shim_init_mutant(unsigned api, CUresult *r);

/* The faults of the machine the suite runs on (precondition.c), for every hooked function `name`
 * (cuInit and the 14 APIs included): crash, wait, or answer in the driver's place. 1 when a fault
 * answers, with its answer in *r; 0 (and *r untouched) when none does. Every hook calls it first
 * (BEGIN, once the call is noted; cuInit's hook in mutants/init.c). */
int shim_precondition(const char *name, CUresult *r);
/* What cuInit answers its caller when the driver (or a fault in its place) answered `r`
 * (precondition.c): `r`, or init-anyway's SUCCESS for NO_DEVICE. */
CUresult shim_init_answer(CUresult r);
/* The faults of a look-up of a driver function (precondition.c): cuGetProcAddress, and dlsym asked
 * for a name starting with "cu". Returns only when none crashes. */
void shim_lookup_precondition(void);

/* Ends the process by SIGSEGV the way a faulting access does (precondition.c), even where the
 * program handles the first SIGSEGV and returns (Rust's stack-guard handler does): a lone raise()
 * would then be survived. */
void shim_crash(void);
/* The no-context-crash mutants of API `api` (no_context.c; named in the group files, issue 23):
 * when "<api>-no-context-crash" is on, cuInit has succeeded and the calling thread has no current
 * context, ends the process by SIGSEGV (shim_crash: a layer that uses the device it could not get);
 * returns otherwise. Each hook of those APIs calls it after BEGIN. */
void shim_no_context_crash(unsigned api);
/* The no-context-refuses-stream mutants of API `api` (no_context.c; named in mutants/caps.c, issue
 * 34): when "<api>-no-context-refuses-stream" is on, cuInit has succeeded and the calling thread has
 * no current context, 1 with INVALID_CONTEXT in *r (a layer that checks the thread's context before
 * the stream names one); 0 (and *r untouched) otherwise. Every hook of the 14 APIs asks it (BEGIN,
 * after shim_init_mutant). */
int shim_no_context_refuses(unsigned api, CUresult *r);
/* The memory cap of the cap mutants (cap.c; named in mutants/caps.c, issues 23 and 34). While none
 * is on each changes nothing. shim_cap_info and shim_cap_total: the driver's answer `r` to
 * cuMemGetInfo_v2 / cuDeviceTotalMem_v2, with the capped values written over the driver's on
 * success. Around each allocation of `n` bytes (cuMemAlloc_v2: `stream_ordered` 0; cuMemAllocAsync,
 * cuMemAllocFromPoolAsync: 1, on `stream`, from `pool`, NULL for the current pool's): shim_cap_take before it, 0 when the cap refuses it (the
 * hook answers OUT_OF_MEMORY), 1 otherwise, with the bytes charged in *charge (0 when the layer does
 * not count this one); shim_cap_took after it, with the driver's answer `r` and that charge (and the
 * allocation's pool, NULL when the caller does not know it): notes the address on success, gives
 * the charge back otherwise; answers `r`. shim_cap_freed after a free of `p` (cuMemFree_v2,
 * cuMemFreeAsync) the driver answered `r`: gives back what `p` was charged; answers `r`.
 * shim_cap_graph_node before cuGraphAddMemAllocNode of `n` bytes: 0 when the cap refuses it (the
 * counting layers that check graphs), 1 otherwise. */
CUresult shim_cap_info(CUresult r, size_t *free_bytes, size_t *total_bytes);
CUresult shim_cap_total(CUresult r, size_t *bytes);
int shim_cap_take(int stream_ordered, CUstream stream, CUmemoryPool pool, size_t n, size_t *charge);
int shim_cap_graph_node(size_t n);
CUresult shim_cap_took(CUresult r, CUdeviceptr *dptr, size_t charge, CUmemoryPool pool);
CUresult shim_cap_freed(CUresult r, CUdeviceptr p);

/* 823-broken-after-crash (issue 47) and broken-without-crash (issue 58), broken.c.
 * shim_broken_answer: 1 with DEVICE_UNAVAILABLE in *r once this run is broken (a process crashed by
 * the first, or the second counted its cuMemPoolCreate calls), 0 (and *r untouched) otherwise;
 * every hook of the 14 APIs asks it (BEGIN, after shim_precondition). shim_broken_crash: while the
 * first is on and cuInit has succeeded, marks the run broken and ends the process by SIGSEGV
 * (shim_crash); returns otherwise. cuMemPoolCreate's hook calls it for a NULL out-pointer.
 * shim_broken_count: while the second is on, counts one cuMemPoolCreate into the run's mark;
 * cuMemPoolCreate's hook calls it past BEGIN. */
int shim_broken_answer(CUresult *r);
void shim_broken_crash(void);
void shim_broken_count(void);

/* The address-space and concurrent-import mutants of API `api` (address_space.c; named in
 * mutants/vaspace.c, issue 38): 1 when one answers in place of the driver, with its answer in *r; 0
 * (and *r untouched) otherwise, after any address space a mutant maps. Every hook of the 14 APIs
 * asks it (BEGIN, last). */
int shim_vaspace_mutant(unsigned api, CUresult *r);

/* A small thread-safe set of handles or addresses (set.c). Full, it stops growing: a mutant that
 * relies on it then misses some. 0 is never a member: adding or deleting it does nothing.
 * shim_set_has answers 1 when `p` is in the set, 0 otherwise (0 too for `p` 0 or dropped). */
#define SHIM_SET_SLOTS 1024
struct shim_set {
  pthread_mutex_t lock;
  uintptr_t v[SHIM_SET_SLOTS];
};
#define SHIM_SET_INIT {PTHREAD_MUTEX_INITIALIZER, {0}}
void shim_set_add(struct shim_set *s, uintptr_t p);
int shim_set_has(struct shim_set *s, uintptr_t p);
void shim_set_del(struct shim_set *s, uintptr_t p);

/* What the shim knows about pools (pools.c), for the group files that ask (mutants/pool.c and
 * mutants/ipc.c). Each query answers 1 for yes and 0 otherwise: 0 is also its answer whenever it
 * does not know (a NULL pool, a pool never noted or already forgotten, one a full set dropped, a
 * driver that cannot say). Noting or forgetting a NULL pool does nothing. */
/* Pool `pool` was made without handle types (noted only while a mutant that asks is on). */
void shim_pool_note_non_ipc(CUmemoryPool pool);
/* Pool `pool` was imported by this process. */
void shim_pool_note_imported(CUmemoryPool pool);
/* Pool `pool` was destroyed: neither non-IPC nor imported any more. */
void shim_pool_forget(CUmemoryPool pool);
/* Whether `pool` was noted as made without handle types; 0 when unknown. */
int shim_pool_non_ipc(CUmemoryPool pool);
/* Whether `pool` was noted as imported; 0 when unknown. */
int shim_pool_imported(CUmemoryPool pool);
/* Whether `pool` is a device's default pool, per the driver; 0 when unknown. */
int shim_pool_is_default(CUmemoryPool pool);
/* The number of devices the driver reports; 0 when it cannot say. */
int shim_device_count(void);

/* The checkpoint leg's damage mutants (mutants/checkpoint.c, issue 57), each a no-op unless one of
 * them is on. shim_ckpt_note_pool: a pool whose attributes were set (attr.c); shim_ckpt_note_alloc
 * and shim_ckpt_forget_alloc: a live allocation of `n` bytes made / freed (alloc.c). The damage
 * itself is done by that file's own thread, after the mutant engine's SIGUSR2. */
void shim_ckpt_note_pool(CUmemoryPool pool);
void shim_ckpt_note_alloc(CUdeviceptr p, size_t n);
void shim_ckpt_forget_alloc(CUdeviceptr p);

/* `real`: the driver's definition of this function, looked up once. */
#define REAL(name, ret, args)             \
  static ret(*real) args;                 \
  if (!real) *(void **)&real = shim_next(name); \
  if (!real) return CUDA_ERROR_UNKNOWN

/* Notes that the hook of API `api` (820..833) was entered (calls.c): one atomic OR into the
 * process's mask, which the suite's worker takes after each trial; in a child of the suite (with
 * CONFORMANCE_SHIM_CALLS_FILE set) the first call of each API is also appended to that file. */
void shim_calls_note(unsigned api);
/* A hook that never answers holds the process's driver, as R580 does (issue 45's calibration):
 * shim_hold() marks it and blocks for good; every later hook of the 14 APIs then blocks too. */
void shim_hold(void);
void shim_held_wait(void);

/* The start of each hook of API `api`: the call noted (calls.c), its driver function, the
 * machine's faults, a run broken for good, the init-state mutants, the no-context refusals and the
 * address-space mutants. */
#define BEGIN(api, name, ret, args)       \
  shim_calls_note(api);                   \
  shim_held_wait();                       \
  REAL(name, ret, args);                  \
  {                                       \
    CUresult init_r_;                     \
    if (shim_precondition(name, &init_r_) || shim_broken_answer(&init_r_) || shim_init_mutant(api, &init_r_) || \
        shim_no_context_refuses(api, &init_r_) || shim_vaspace_mutant(api, &init_r_)) \
      return init_r_;                                                           \
  }

/* The driver's function `name` in a static `var` of a hook's own (not this library's hook),
 * looked up once; NULL when there is none. */
#define NEXT(var, name, ret, args) \
  static ret(*var) args;           \
  if (!var) *(void **)&var = shim_next(name)

/* One mutant or fault: its name, the API it breaks (0 for none: a fault of the machine), what the
 * machine needs for the suite to be able to see it ("none", "gpu", "ipc", "peer", "multi"; or
 * "checkpoint": a run of the checkpoint leg with the mutant engine), mutant or fault, and what it
 * breaks. */
struct shim_entry {
  const char *name;
  unsigned api;
  const char *needs;
  const char *kind;
  const char *what;
};
/* One hooked function: its C name (its symbol) and this library's definition. */
struct shim_hook {
  const char *name;
  void *fn;
};
#define MUTANT(name, api, needs, what) {name, api, needs, "mutant", what}
#define FAULT(name, api, needs, what) {name, api, needs, "fault", what}

/* Each group file defines its entries and hooks, each list ending with a zeroed element. */
#define SHIM_GROUP(g)                            \
  extern const struct shim_entry g##_entries[]; \
  extern const struct shim_hook g##_hooks[]
SHIM_GROUP(init);
SHIM_GROUP(alloc);
SHIM_GROUP(pool);
SHIM_GROUP(ipc);
SHIM_GROUP(access);
SHIM_GROUP(attr);
SHIM_GROUP(precondition);
SHIM_GROUP(caps);
SHIM_GROUP(depth);
SHIM_GROUP(vaspace);
SHIM_GROUP(broken);
SHIM_GROUP(checkpoint);

#endif
