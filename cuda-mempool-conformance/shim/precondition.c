/* The faults of the machine the suite runs on: its driver, its device, the layers between, its processes.
 *
 * Not mutants of one API: each changes what every call finds (a driver that will not start, a
 * layer that crashes or slows each call, a device without memory pools, a device where there is
 * none), so that tests can show what the suite reports on such a machine. They break no single
 * API (API 0 in the list), and tests/mutants.rs does not run them as mutants. Every hook asks
 * shim_precondition first (BEGIN, shim.h; cuInit's hook in mutants/init.c, this file's own through
 * ENTER). This file hooks what the 14 APIs' files do not: the three functions a program calls
 * before cuInit, the two device pool getters, and the device and context functions fake-device
 * answers; each passes its call to the driver while its fault is off (the two memory queries
 * through the cap mutants' cap, cap.c).
 *
 *   init-803              cuInit answers SYSTEM_DRIVER_MISMATCH without the driver (the state: failed):
 *                         a libcuda that does not match the kernel module (a driver upgraded without a
 *                         reboot, a forward-compatibility libcuda on a module it does not support)
 *   init-anyway           cuInit answers SUCCESS where the driver answered NO_DEVICE (the state stays
 *                         failed): compute-sanitizer under CUDA_VISIBLE_DEVICES=""
 *   crash-before-init     every hooked function but cuInit raises SIGSEGV until cuInit has been called:
 *                         a layer that sets itself up in cuInit (the driver answers cuGetErrorName,
 *                         cuGetErrorString and cuDriverGetVersion before it)
 *   crash-in-coordinator  in a process without a non-empty CONFORMANCE_CHILD (the suite's coordinator;
 *                         its children have it), every hooked function, cuGetProcAddress and dlsym of
 *                         a name starting with "cu" raise SIGSEGV: a layer that crashes the process
 *                         that probes the machine, not the children
 *   slow                  every hooked function sleeps CONFORMANCE_SHIM_DELAY_MS milliseconds (200
 *                         unset) first: a tracing, sanitizing or API-remoting layer
 *   first-call-wait       each process's first call of GPU work (any hooked function but cuInit and
 *                         this file's device, context and version queries: the 14 APIs, cuMemAlloc,
 *                         cuMemFree, cuGraphAddMemAllocNode) first sleeps CONFORMANCE_SHIM_FIRST_WAIT_MS
 *                         milliseconds (3000 unset), once; its other threads' calls wait with it: a
 *                         layer that time-slices the GPU between processes, where a new process waits
 *                         for its slice at its first copy, launch or allocation (issue 58)
 *   no-pools              after a successful cuInit, a device without memory pools (vGPU profiles,
 *                         some Jetson boards): the four pool attributes of cuDeviceGetAttribute answer
 *                         0, and 820, 821, 823, 829, cuDeviceGetDefaultMemPool and cuDeviceGetMemPool
 *                         NOT_SUPPORTED without the driver
 *   fake-device           one device where there is none, without the driver: cuInit SUCCESS (NO_DEVICE
 *                         under CUDA_VISIBLE_DEVICES=""), then the device, context and memory queries
 *                         answer for device 0, compute capability 9.0, 1 GiB, pools with POSIX fd
 *                         handles (none under no-pools); NOT_INITIALIZED before: a stand-in GPU, so
 *                         that tests reach the suite's device path on a machine without one
 * init-803 wins over fake-device at cuInit.
 *
 * CONFORMANCE_SHIM_DELAY_MS and CONFORMANCE_SHIM_FIRST_WAIT_MS are read at load: anything but a
 * whole number of milliseconds up to 600000 stops the process with a message naming it (exit 2). */
#include "shim.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED 115
#define CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES 119
#define CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED 128
#define CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED 142
#define CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED 144
#define HANDLE_TYPE_POSIX_FD 1
#define GIB ((size_t)1 << 30)
#define DELAY_MAX_MS 600000ul

const struct shim_entry precondition_entries[] = {
    FAULT("init-803", 0, "none", "cuInit answers SYSTEM_DRIVER_MISMATCH (803) without the driver"),
    FAULT("init-anyway", 0, "none", "cuInit answers SUCCESS where the driver answered NO_DEVICE"),
    FAULT("crash-before-init", 0, "none", "every hooked function but cuInit raises SIGSEGV before cuInit"),
    FAULT("crash-in-coordinator", 0, "none",
          "without CONFORMANCE_CHILD: every hooked function, cuGetProcAddress and dlsym of cu* raise SIGSEGV"),
    FAULT("slow", 0, "none", "every hooked function first sleeps CONFORMANCE_SHIM_DELAY_MS (200) ms"),
    FAULT("first-call-wait", 0, "none",
          "each process's first call of GPU work sleeps CONFORMANCE_SHIM_FIRST_WAIT_MS (3000) ms, once"),
    FAULT("no-pools", 0, "none",
          "after cuInit: pool attributes 0; 820, 821, 823, 829 and the device pool getters NOT_SUPPORTED"),
    FAULT("fake-device", 0, "none", "one device (9.0, 1 GiB) answered without the driver; cuInit SUCCESS"),
    /* issue 47: the faithful counterpart of 820-counting-cap-misses-graphs (cap.c); the suite must pass under it */
    FAULT("counting-cap", 0, "gpu",
          "a GPU-sharing layer counting every process: half the memory less what the whole GPU uses, every allocation "
          "(graph memory too) refused past it"),
    {0},
};

/* slow's delay and first-call-wait's hold in milliseconds (CONFORMANCE_SHIM_DELAY_MS,
 * CONFORMANCE_SHIM_FIRST_WAIT_MS, read at load). */
static unsigned long delay_ms = 200;
static unsigned long first_wait_ms = 3000;

/* `var`'s milliseconds into *ms, when it is set. */
static void read_ms(const char *var, unsigned long *ms) {
  const char *s = getenv(var);
  if (!s) return;
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (*s < '0' || *s > '9' || *end || errno || v > DELAY_MAX_MS) {
    fprintf(stderr, "libmisbehave: %s is \"%s\"; it takes a whole number of milliseconds up to %lu\n", var, s,
            DELAY_MAX_MS);
    _exit(2);
  }
  *ms = v;
}

__attribute__((constructor)) static void read_delays(void) {
  read_ms("CONFORMANCE_SHIM_DELAY_MS", &delay_ms);
  read_ms("CONFORMANCE_SHIM_FIRST_WAIT_MS", &first_wait_ms);
}

static void sleep_ms(unsigned long ms) {
  int saved = errno;
  struct timespec t = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) && errno == EINTR) {
  }
  errno = saved;
}

/* shim.h's: the program's SIGSEGV handler runs first (Rust's hands the signal back to the default
 * action and returns, as for any fault off its stack guards), then the default action ends the
 * process. */
void shim_crash(void) {
  raise(SIGSEGV);
  signal(SIGSEGV, SIG_DFL);
  raise(SIGSEGV);
}

/* Whether this process is the suite's coordinator: its children all have CONFORMANCE_CHILD. */
static int coordinator(void) {
  const char *c = getenv("CONFORMANCE_CHILD");
  return !c || !*c;
}

/* Whether no-pools refuses function `name`: it makes, finds or allocates from a pool. */
static int pool_call(const char *name) {
  static const char *const CALLS[] = {
      "cuMemAllocAsync", "cuMemAllocFromPoolAsync", "cuMemPoolCreate", "cuMemPoolImportFromShareableHandle",
      "cuDeviceGetDefaultMemPool", "cuDeviceGetMemPool",
  };
  for (size_t i = 0; i < sizeof CALLS / sizeof *CALLS; i++)
    if (!strcmp(name, CALLS[i])) return 1;
  return 0;
}

/* cuInit's answer in the driver's place (init-803, fake-device): 1 with it in *r, 0 when the
 * driver answers. */
static int init_fault(CUresult *r) {
  if (shim_on("init-803")) {
    *r = CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
  } else if (shim_on("fake-device")) {
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    *r = visible && !*visible ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
  } else {
    return 0;
  }
  return 1;
}

/* This file's hooks (listed at its end): the device, context and version queries, no GPU work. */
extern const struct shim_hook precondition_hooks[];

/* Whether hooked function `name` is GPU work, which first-call-wait holds: not cuInit, nor one of
 * this file's queries. */
static int gpu_work(const char *name) {
  if (!strcmp(name, "cuInit")) return 0;
  for (const struct shim_hook *h = precondition_hooks; h->name; h++)
    if (!strcmp(name, h->name)) return 0;
  return 1;
}

/* first-call-wait's hold: once per process; a thread that calls meanwhile waits until it ends
 * (pthread_once). */
static pthread_once_t first_work_once = PTHREAD_ONCE_INIT;
static void first_work_hold(void) { sleep_ms(first_wait_ms); }

int shim_precondition(const char *name, CUresult *r) {
  int init = !strcmp(name, "cuInit");
  if (shim_on("crash-in-coordinator") && coordinator()) shim_crash();
  if (shim_on("crash-before-init") && !init && shim_init_state == 0) shim_crash();
  if (shim_on("slow")) sleep_ms(delay_ms);
  if (shim_on("first-call-wait") && gpu_work(name)) pthread_once(&first_work_once, first_work_hold);
  if (init) return init_fault(r);
  if (shim_on("no-pools") && shim_init_state == 1 && pool_call(name)) {
    *r = CUDA_ERROR_NOT_SUPPORTED;
    return 1;
  }
  return 0;
}

CUresult shim_init_answer(CUresult r) {
  return r == CUDA_ERROR_NO_DEVICE && shim_on("init-anyway") ? CUDA_SUCCESS : r;
}

void shim_lookup_precondition(void) {
  if (shim_on("crash-in-coordinator") && coordinator()) shim_crash();
}

/* The start of each hook of this file: its driver function, and the machine's faults. */
#define ENTER(name, ret, args) \
  REAL(name, ret, args);       \
  {                            \
    CUresult pre_r_;           \
    if (shim_precondition(name, &pre_r_)) return pre_r_; \
  }

/* After ENTER in each hook fake-device answers: the driver's answer (to `args`) while fake-device
 * is off, NOT_INITIALIZED before a successful cuInit. */
#define FAKE(args)                               \
  if (!shim_on("fake-device")) return real args; \
  if (shim_init_state != 1) return CUDA_ERROR_NOT_INITIALIZED

/* fake-device's only device is device 0. */
static CUresult fake_device(CUdevice d) { return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
/* fake-device's context: an address nothing else has, never read. */
static char fake_ctx_mark;
#define FAKE_CTX ((CUcontext)(void *)&fake_ctx_mark)
/* The calling thread's current context under fake-device. */
static __thread CUcontext fake_current;

/* Whether attribute `attr` is one of the four that say what pools a device has. */
static int pool_attribute(int attr) {
  return attr == CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED ||
         attr == CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES ||
         attr == CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED ||
         attr == CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED;
}

/* The fake device's value of attribute `attr`: 0 for every one it does not name. */
static int fake_attribute(int attr) {
  int pools = !shim_on("no-pools");
  switch (attr) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
  case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return pools;
  case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: return pools ? HANDLE_TYPE_POSIX_FD : 0;
  default: return 0;
  }
}

/* The functions a program calls before cuInit: only the faults every hook has. */
HOOK CUresult cuGetErrorName(CUresult error, const char **str) {
  ENTER("cuGetErrorName", CUresult, (CUresult, const char **));
  return real(error, str);
}

HOOK CUresult cuGetErrorString(CUresult error, const char **str) {
  ENTER("cuGetErrorString", CUresult, (CUresult, const char **));
  return real(error, str);
}

HOOK CUresult cuDriverGetVersion(int *version) {
  ENTER("cuDriverGetVersion", CUresult, (int *));
  return real(version);
}

/* The device pool getters: no-pools refuses them (shim_precondition). */
HOOK CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev) {
  ENTER("cuDeviceGetDefaultMemPool", CUresult, (CUmemoryPool *, CUdevice));
  return real(pool, dev);
}

HOOK CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev) {
  ENTER("cuDeviceGetMemPool", CUresult, (CUmemoryPool *, CUdevice));
  return real(pool, dev);
}

/* Under no-pools on a real device the driver still checks the device and the out-pointer (asked
 * for an attribute every driver with pools knows); the pool attributes then read 0. */
HOOK CUresult cuDeviceGetAttribute(int *value, int attr, CUdevice dev) {
  ENTER("cuDeviceGetAttribute", CUresult, (int *, int, CUdevice));
  if (!shim_on("fake-device")) {
    if (attr == CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES && shim_on("823-handle-types-overclaimed")) {
      CUresult r = real(value, attr, dev);
      if (r == CUDA_SUCCESS && value) *value |= 0xf; /* mutants/depth.c */
      return r;
    }
    if ((attr == CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED && shim_on("823-host-pools-underclaimed")) ||
        (attr == CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED && shim_on("823-host-numa-pools-underclaimed")) ||
        (attr == CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED && shim_on("823-fabric-underclaimed"))) {
      CUresult r = real(value, attr, dev);
      if (r == CUDA_SUCCESS && value) *value = 0; /* mutants/depth.c */
      return r;
    }
    if (!shim_on("no-pools") || shim_init_state != 1 || !pool_attribute(attr)) return real(value, attr, dev);
    CUresult r = real(value, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev);
    if (r == CUDA_SUCCESS) *value = 0;
    return r;
  }
  if (shim_init_state != 1) return CUDA_ERROR_NOT_INITIALIZED;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = fake_device(dev);
  if (r == CUDA_SUCCESS) *value = fake_attribute(attr);
  return r;
}

HOOK CUresult cuDeviceGetCount(int *count) {
  ENTER("cuDeviceGetCount", CUresult, (int *));
  FAKE((count));
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  *count = 1;
  return CUDA_SUCCESS;
}

HOOK CUresult cuDeviceGet(CUdevice *dev, int ordinal) {
  ENTER("cuDeviceGet", CUresult, (CUdevice *, int));
  FAKE((dev, ordinal));
  if (!dev) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = fake_device(ordinal);
  if (r == CUDA_SUCCESS) *dev = 0;
  return r;
}

HOOK CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
  ENTER("cuDeviceGetName", CUresult, (char *, int, CUdevice));
  FAKE((name, len, dev));
  static const char NAME[] = "libmisbehave fake device";
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = fake_device(dev);
  if (r != CUDA_SUCCESS) return r;
  size_t n = sizeof NAME - 1 < (size_t)len - 1 ? sizeof NAME - 1 : (size_t)len - 1;
  memcpy(name, NAME, n);
  name[n] = '\0';
  return CUDA_SUCCESS;
}

HOOK CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
  ENTER("cuDeviceTotalMem_v2", CUresult, (size_t *, CUdevice));
  /* the cap mutants (cap.c) */
  if (!shim_on("fake-device")) return shim_cap_total(real(bytes, dev), bytes);
  FAKE((bytes, dev));
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = fake_device(dev);
  if (r == CUDA_SUCCESS) *bytes = GIB;
  return r;
}

HOOK CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer) {
  ENTER("cuDeviceCanAccessPeer", CUresult, (int *, CUdevice, CUdevice));
  FAKE((can, dev, peer));
  if (!can) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = fake_device(dev);
  if (r == CUDA_SUCCESS) r = fake_device(peer);
  if (r == CUDA_SUCCESS) *can = 0;
  return r;
}

HOOK CUresult cuDeviceGetP2PAttribute(int *value, int attr, CUdevice src, CUdevice dst) {
  ENTER("cuDeviceGetP2PAttribute", CUresult, (int *, int, CUdevice, CUdevice));
  FAKE((value, attr, src, dst));
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = fake_device(src);
  if (r == CUDA_SUCCESS) r = fake_device(dst);
  if (r == CUDA_SUCCESS) *value = 0;
  return r;
}

HOOK CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
  ENTER("cuDevicePrimaryCtxRetain", CUresult, (CUcontext *, CUdevice));
  FAKE((ctx, dev));
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = fake_device(dev);
  if (r == CUDA_SUCCESS) *ctx = FAKE_CTX;
  return r;
}

HOOK CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  ENTER("cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice));
  FAKE((dev));
  return fake_device(dev);
}

HOOK CUresult cuCtxSetCurrent(CUcontext ctx) {
  ENTER("cuCtxSetCurrent", CUresult, (CUcontext));
  FAKE((ctx));
  fake_current = ctx;
  return CUDA_SUCCESS;
}

HOOK CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  ENTER("cuCtxPushCurrent_v2", CUresult, (CUcontext));
  FAKE((ctx));
  fake_current = ctx;
  return CUDA_SUCCESS;
}

HOOK CUresult cuCtxPopCurrent_v2(CUcontext *ctx) {
  ENTER("cuCtxPopCurrent_v2", CUresult, (CUcontext *));
  FAKE((ctx));
  if (ctx) *ctx = FAKE_CTX;
  fake_current = NULL;
  return CUDA_SUCCESS;
}

HOOK CUresult cuCtxGetCurrent(CUcontext *ctx) {
  ENTER("cuCtxGetCurrent", CUresult, (CUcontext *));
  FAKE((ctx));
  if (!ctx) return CUDA_ERROR_INVALID_VALUE;
  *ctx = fake_current;
  return CUDA_SUCCESS;
}

HOOK CUresult cuCtxSynchronize(void) {
  ENTER("cuCtxSynchronize", CUresult, (void));
  FAKE(());
  return CUDA_SUCCESS;
}

HOOK CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
  ENTER("cuMemGetInfo_v2", CUresult, (size_t *, size_t *));
  /* 828-mem-info-frozen (named in mutants/caps.c): the free memory of the first answer, ever after */
  if (shim_on("828-mem-info-frozen")) {
    static size_t first;
    CUresult r = real(free_bytes, total_bytes);
    if (r == CUDA_SUCCESS && free_bytes) {
      size_t none = 0;
      __atomic_compare_exchange_n(&first, &none, *free_bytes, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
      *free_bytes = __atomic_load_n(&first, __ATOMIC_SEQ_CST);
    }
    return r;
  }
  /* the cap mutants (cap.c) */
  if (!shim_on("fake-device")) return shim_cap_info(real(free_bytes, total_bytes), free_bytes, total_bytes);
  FAKE((free_bytes, total_bytes));
  if (free_bytes) *free_bytes = GIB;
  if (total_bytes) *total_bytes = GIB;
  return CUDA_SUCCESS;
}

const struct shim_hook precondition_hooks[] = {
    {"cuGetErrorName", (void *)cuGetErrorName},
    {"cuGetErrorString", (void *)cuGetErrorString},
    {"cuDriverGetVersion", (void *)cuDriverGetVersion},
    {"cuDeviceGetDefaultMemPool", (void *)cuDeviceGetDefaultMemPool},
    {"cuDeviceGetMemPool", (void *)cuDeviceGetMemPool},
    {"cuDeviceGetAttribute", (void *)cuDeviceGetAttribute},
    {"cuDeviceGetCount", (void *)cuDeviceGetCount},
    {"cuDeviceGet", (void *)cuDeviceGet},
    {"cuDeviceGetName", (void *)cuDeviceGetName},
    {"cuDeviceTotalMem_v2", (void *)cuDeviceTotalMem_v2},
    {"cuDeviceCanAccessPeer", (void *)cuDeviceCanAccessPeer},
    {"cuDeviceGetP2PAttribute", (void *)cuDeviceGetP2PAttribute},
    {"cuDevicePrimaryCtxRetain", (void *)cuDevicePrimaryCtxRetain},
    {"cuDevicePrimaryCtxRelease_v2", (void *)cuDevicePrimaryCtxRelease_v2},
    {"cuCtxSetCurrent", (void *)cuCtxSetCurrent},
    {"cuCtxPushCurrent_v2", (void *)cuCtxPushCurrent_v2},
    {"cuCtxPopCurrent_v2", (void *)cuCtxPopCurrent_v2},
    {"cuCtxGetCurrent", (void *)cuCtxGetCurrent},
    {"cuCtxSynchronize", (void *)cuCtxSynchronize},
    {"cuMemGetInfo_v2", (void *)cuMemGetInfo_v2},
    {0},
};
