// Issue 45 speed calibration: what the heavy trials' and the IPC lanes' calls cost on one GPU.
// Build on the GPU machine: gcc -O2 -o calib calib.c -I$CUDA/include -lcuda -lpthread
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
#define CK(x) do { CUresult r_ = (x); if (r_) { printf("  %s -> %d\n", #x, r_); } } while (0)
static CUdevice dev; static CUcontext ctx; static size_t total;

static void beyond(const char *what, size_t size, int path) {
  double t = now(); CUdeviceptr p = 0; CUresult r; CUstream s = 0;
  CUmemoryPool pool = 0;
  if (path == 2 || path == 3) {
    CUmemPoolProps pp; memset(&pp, 0, sizeof pp);
    pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED; pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE; pp.location.id = dev;
    pp.handleTypes = path == 3 ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
    CK(cuMemPoolCreate(&pool, &pp));
  }
  double t1 = now();
  if (path == 0) r = cuMemAlloc(&p, size);
  else if (path == 1) r = cuMemAllocAsync(&p, size, s);
  else r = cuMemAllocFromPoolAsync(&p, size, pool, s);
  double t2 = now();
  cuStreamSynchronize(s);
  if (pool) cuMemPoolDestroy(pool);
  printf("beyond %-28s path %d -> %3d  call %.3f s, with pool %.3f s\n", what, path, r, t2 - t1, now() - t);
}

struct th { size_t size; int path; double secs; };
static void *beyond_thread(void *a) {
  struct th *x = a; cuCtxSetCurrent(ctx); double t = now(); CUdeviceptr p; CUstream s = 0;
  if (x->path == 0) cuMemAlloc(&p, x->size); else cuMemAllocAsync(&p, x->size, s);
  cuStreamSynchronize(s); x->secs = now() - t; return 0;
}

/* The graph caps trials' steps (cases/caps.rs two_graphs, Build::Node): two graphs of `frac` x the
 * total each, launched one after the other; the second is refused. Each step timed. */
static void graph_trial(double frac) {
  double t0 = now(), t;
  size_t fr0, tt; cuMemGetInfo(&fr0, &tt);
  CUstream s; CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  size_t size = (size_t)(total * frac);
  CUgraph g[2]; CUgraphExec ge[2]; CUdeviceptr live[2]; int n = 0;
  double steps[2][4];
  CUresult lr[2], sr[2];
  for (int i = 0; i < 2; i++) {
    CUDA_MEM_ALLOC_NODE_PARAMS np; memset(&np, 0, sizeof np);
    np.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED; np.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    np.poolProps.location.id = dev; np.bytesize = size;
    CUgraphNode node;
    t = now(); CK(cuGraphCreate(&g[i], 0)); CK(cuGraphAddMemAllocNode(&node, g[i], 0, 0, &np)); steps[i][0] = now() - t;
    t = now(); CK(cuGraphInstantiate(&ge[i], g[i], 0)); steps[i][1] = now() - t;
    t = now(); lr[i] = cuGraphLaunch(ge[i], s); steps[i][2] = now() - t;
    t = now(); sr[i] = cuStreamSynchronize(s); steps[i][3] = now() - t;
    if (lr[i] == 0) live[n++] = np.dptr;
  }
  t = now();
  for (int i = 0; i < n; i++) CK(cuMemFreeAsync(live[i], s));
  CK(cuStreamSynchronize(s)); double tfree = now() - t;
  t = now(); for (int i = 0; i < 2; i++) { cuGraphExecDestroy(ge[i]); cuGraphDestroy(g[i]); } double tdestroy = now() - t;
  t = now(); CK(cuDeviceGraphMemTrim(dev)); double ttrim = now() - t;
  size_t fr1; cuMemGetInfo(&fr1, &tt);
  printf("graph trial %.2f x total (%.1f GB): build %.3f/%.3f inst %.3f/%.3f launch %d %.3f/%d %.3f sync %d %.3f/%d %.3f "
         "free %.3f destroy %.3f trim %.3f; kept %.1f GB; body %.3f s\n",
         frac, size / 1e9, steps[0][0], steps[1][0], steps[0][1], steps[1][1], lr[0], steps[0][2], lr[1], steps[1][2],
         sr[0], steps[0][3], sr[1], steps[1][3], tfree, tdestroy, ttrim, ((double)fr0 - (double)fr1) / 1e9, now() - t0);
  cuStreamDestroy(s);
}

/* A fresh process runs one graph trial; the parent times its start, its body and its exit. */
static void graph_child(const char *self, double frac) {
  char arg[32]; snprintf(arg, sizeof arg, "%.3f", frac);
  double t0 = now();
  pid_t pid = fork();
  if (pid == 0) { execl(self, self, "graphchild", arg, (char *)0); _exit(127); }
  int st; waitpid(pid, &st, 0); fflush(stdout);
  size_t fr, tt; double t1 = now();
  cuMemGetInfo(&fr, &tt);
  double back = 0; size_t want = fr;
  for (int i = 0; i < 300; i++) { size_t f2; cuMemGetInfo(&f2, &tt); if (f2 > want + (64 << 20)) { want = f2; back = now() - t1; } usleep(2000); }
  printf("graph child %.2f: process %.3f s (wall, exit included); free memory still rising %.3f s after exit\n", frac, t1 - t0, back);
}

static void copies(size_t n) {
  CUdeviceptr d; CK(cuMemAlloc(&d, n));
  double t = now(); char *h = malloc(n); for (size_t i = 0; i < n; i += 8) *(uint64_t *)(h + i) = i * 0x9E3779B97F4A7C15ull; double tg = now() - t;
  t = now(); CK(cuMemcpyHtoD(d, h, n)); double th = now() - t;
  t = now(); CK(cuMemcpyHtoD(d, h, n)); double th2 = now() - t;
  char *h2 = malloc(n); t = now(); CK(cuMemcpyDtoH(h2, d, n)); double td = now() - t;
  t = now(); CK(cuMemcpyDtoH(h2, d, n)); double td2 = now() - t;
  void *pin; t = now(); CK(cuMemAllocHost(&pin, n)); double tp = now() - t;
  t = now(); CK(cuMemcpyDtoH(pin, d, n)); double tdp = now() - t;
  t = now(); CK(cuMemcpyHtoD(d, pin, n)); double thp = now() - t;
  t = now(); CK(cuMemFreeHost(pin)); double tfp = now() - t;
  t = now(); CK(cuMemHostRegister(h, n, 0)); double treg = now() - t;
  t = now(); CK(cuMemcpyHtoD(d, h, n)); double threg = now() - t;
  CK(cuMemHostUnregister(h));
  printf("copy %zu MiB: gen+fault %.3f HtoD fresh-pageable %.3f again %.3f DtoH fresh %.3f again %.3f | pinned alloc %.3f DtoH %.3f HtoD %.3f free %.3f | register %.3f HtoD %.3f\n",
         n >> 20, tg, th, th2, td, td2, tp, tdp, thp, tfp, treg, threg);
  free(h); free(h2); cuMemFree(d);
}

int main(int argc, char **argv) {
  double t = now(); CK(cuInit(0)); double ti = now() - t;
  CK(cuDeviceGet(&dev, 0));
  t = now(); CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx)); double tc = now() - t;
  size_t fr; cuMemGetInfo(&fr, &total);
  char name[128]; cuDeviceGetName(name, sizeof name, dev);
  printf("%s total %zu free %zu; cuInit %.3f s, primary context %.3f s\n", name, total, fr, ti, tc);
  const char *what = argc > 1 ? argv[1] : "all";
  if (!strcmp(what, "all") || !strcmp(what, "beyond")) {
    for (int path = 0; path < 4; path++) {
      beyond("total+2MiB", total + (2 << 20), path);
      beyond("total+2MiB again", total + (2 << 20), path);
    }
    beyond("total+1", total + 1, 1); beyond("total+1", total + 1, 2);
    beyond("2*total", 2 * total, 1);
    beyond("1<<40", (size_t)1 << 40, 1);
    beyond("1<<60", (size_t)1 << 60, 1); beyond("1<<60", (size_t)1 << 60, 2);
    beyond("1<<63", (size_t)1 << 63, 1);
    beyond("SIZE_MAX-4095", SIZE_MAX - 4095, 1); beyond("SIZE_MAX", SIZE_MAX, 1);
    beyond("SIZE_MAX", SIZE_MAX, 2);
    for (int k = 1; k <= 4; k *= 2) {
      pthread_t ids[4]; struct th x[4]; double t0 = now();
      for (int i = 0; i < k; i++) { x[i].size = total + (2 << 20); x[i].path = i & 1; pthread_create(&ids[i], 0, beyond_thread, &x[i]); }
      for (int i = 0; i < k; i++) pthread_join(ids[i], 0);
      printf("beyond x%d threads: wall %.3f each", k, now() - t0); for (int i = 0; i < k; i++) printf(" %.3f", x[i].secs); printf("\n");
    }
  }
  if (!strcmp(what, "graphchild")) {
    double t1 = now(); graph_trial(atof(argv[2]));
    printf("  child: cuInit+context %.3f s, body %.3f s\n", ti + tc, now() - t1);
    return 0;
  }
  if (!strcmp(what, "all") || !strcmp(what, "graph")) {
    fflush(stdout);
    graph_child(argv[0], 0.6);
    graph_child(argv[0], 0.6);
    graph_child(argv[0], 0.3);
    graph_child(argv[0], 0.1);
  }
  if (!strcmp(what, "all") || !strcmp(what, "copy")) {
    copies(64 << 20); copies(256 << 20); copies(256 << 20);
    CUmemoryPool pool; CUmemPoolProps pp; memset(&pp, 0, sizeof pp);
    pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED; pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE; pp.location.id = dev;
    pp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR; CK(cuMemPoolCreate(&pool, &pp));
    size_t sizes[] = {(size_t)4096 << 20, (size_t)16384 << 20};
    for (int i = 0; i < 2; i++) {
      CUdeviceptr p; double t0 = now(); CK(cuMemAllocFromPoolAsync(&p, sizes[i], pool, 0)); CK(cuStreamSynchronize(0)); double t1 = now();
      CK(cuMemsetD8Async(p, 1, 1 << 20, 0)); CK(cuStreamSynchronize(0)); double t2 = now();
      CK(cuMemFreeAsync(p, 0)); CK(cuStreamSynchronize(0)); CK(cuMemPoolTrimTo(pool, 0)); double t3 = now();
      printf("ipc pool %zu MiB: alloc+sync %.3f touch %.3f free+trim %.3f\n", sizes[i] >> 20, t1 - t0, t2 - t1, t3 - t2);
    }
    cuMemPoolDestroy(pool);
  }
  return 0;
}
