// Calibration for issue 45: which cuMemPoolCreate maxSize values (and which huge allocation sizes)
// the driver answers at once, and which it gives no answer for, on each device of this host.
// Each call runs in a forked child, bounded by HANG_S seconds (default 4), then killed; the parent
// prints one line per call: device, call, value, the answer (or HANG), seconds, and for a hang the
// child's CPU seconds (spinning or sleeping) and the device's used memory while it hung.
//   gcc -O2 -I/usr/local/cuda/include hangprobe.c -o hangprobe -lcuda -lpthread && ./hangprobe
// Filters: ONLY=call index (0-3), LABEL=a value's label, DEV=a device; HANG_S=the bound.
#include <cuda.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

enum call { POOL_CREATE, POOL_CREATE_POSIX, ALLOC_ASYNC, ALLOC_FROM_POOL };
static const char *call_name[] = {"cuMemPoolCreate(maxSize)", "cuMemPoolCreate(maxSize,POSIX)",
                                  "cuMemAllocAsync(size)", "cuMemAllocFromPoolAsync(size)"};

// In the child, beside the call under test: 0.5 s after it began, another thread of the same
// process makes an ordinary pool call and a synchronize: does a stuck call hold the process's driver?
static int side_fd;
static CUcontext side_ctx;
static void *side(void *arg) {
  (void)arg;
  usleep(500000);
  cuCtxSetCurrent(side_ctx);
  double t0 = now();
  CUmemPoolProps p;
  memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  CUdevice d;
  cuCtxGetDevice(&d);
  p.location.id = d;
  CUmemoryPool pool;
  int r = cuMemPoolCreate(&pool, &p);
  if (!r) cuMemPoolDestroy(pool);
  int r2 = cuCtxSynchronize();
  char buf[64];
  int n = snprintf(buf, sizeof buf, "side %d %d %.3f\n", r, r2, now() - t0);
  (void)!write(side_fd, buf, n);
  return 0;
}

// In the child: set up device `dev`, make the call, write the code to `fd`.
static int child(int dev, enum call c, uint64_t v, int fd) {
  CUdevice d;
  CUcontext ctx;
  if (cuInit(0) || cuDeviceGet(&d, dev) || cuDevicePrimaryCtxRetain(&ctx, d) || cuCtxSetCurrent(ctx)) return 90;
  CUmemPoolProps p;
  memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = dev;
  CUmemoryPool pool = 0;
  CUdeviceptr ptr = 0;
  int r = -1;
  double t0 = 0;
  (void)!write(fd, "g\n", 2);  // context made: the bound starts now
  side_fd = fd;
  side_ctx = ctx;
  pthread_t th;
  pthread_create(&th, 0, side, 0);
  t0 = now();
  switch (c) {
    case POOL_CREATE_POSIX: p.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR; /* fallthrough */
    case POOL_CREATE: p.maxSize = (size_t)v; r = cuMemPoolCreate(&pool, &p); break;
    case ALLOC_ASYNC: r = cuMemAllocAsync(&ptr, (size_t)v, 0); break;
    case ALLOC_FROM_POOL:
      if (cuMemPoolCreate(&pool, &p)) return 91;
      r = cuMemAllocFromPoolAsync(&ptr, (size_t)v, pool, 0);
      break;
  }
  double dt = now() - t0;
  char buf[64];
  int n = snprintf(buf, sizeof buf, "ans %d %.3f\n", r, dt);
  (void)!write(fd, buf, n);
  pthread_join(th, 0);
  return 0;
}

static long cpu_ticks(pid_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char *s = strrchr(buf, ')');
  long ut = 0, st = 0;
  if (s) sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &ut, &st);
  return ut + st;
}

static void probe(int dev, enum call c, uint64_t v, const char *label, double bound) {
  int fds[2];
  if (pipe(fds)) return;
  double t0 = now();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    _exit(child(dev, c, v, fds[1]));
  }
  close(fds[1]);
  FILE *in = fdopen(fds[0], "r");
  char line[128];
  if (!fgets(line, sizeof line, in)) {
    int st;
    waitpid(pid, &st, 0);
    printf("dev%d %-32s %-24s setup failed (status %d)\n", dev, call_name[c], label, st);
    fclose(in);
    return;
  }
  double start = now();
  // Read lines (the side thread's, the answer) up to `bound` seconds after the call began.
  char ans[128] = "", sidel[128] = "";
  int fd = fds[0];
  while (!ans[0] && now() - start < bound) {
    fd_set rs;
    FD_ZERO(&rs);
    FD_SET(fd, &rs);
    struct timeval tv = {0, 20000};
    if (select(fd + 1, &rs, 0, 0, &tv) > 0) {
      if (!fgets(line, sizeof line, in)) break;
      line[strcspn(line, "\n")] = 0;
      if (!strncmp(line, "ans ", 4)) strcpy(ans, line + 4);
      if (!strncmp(line, "side ", 5)) strcpy(sidel, line + 5);
    }
  }
  char sidetxt[160] = "side thread: no answer";
  if (sidel[0]) {
    int a, b;
    double t;
    sscanf(sidel, "%d %d %lf", &a, &b, &t);
    snprintf(sidetxt, sizeof sidetxt, "side thread: create %d sync %d in %.3f s", a, b, t);
  }
  if (ans[0]) {
    int r;
    double dt;
    sscanf(ans, "%d %lf", &r, &dt);
    const char *name = "?";
    cuGetErrorName((CUresult)r, &name);  // needs no cuInit
    waitpid(pid, 0, 0);
    printf("dev%d %-32s %-24s %-28s %.3f s (start %.2f s)\n", dev, call_name[c], label, name, dt, start - t0);
  } else {
    long ticks = cpu_ticks(pid);
    char cmd[160], mem[64] = "?";
    snprintf(cmd, sizeof cmd, "nvidia-smi -i %d --query-gpu=memory.used --format=csv,noheader 2>/dev/null", dev);
    FILE *p = popen(cmd, "r");
    if (p) { if (!fgets(mem, sizeof mem, p)) strcpy(mem, "?"); pclose(p); mem[strcspn(mem, "\n")] = 0; }
    kill(pid, SIGKILL);
    double k0 = now();
    waitpid(pid, 0, 0);
    printf("dev%d %-32s %-24s HANG (no answer in %.1f s; cpu %.2f s; used %s; reaped %.2f s after kill; %s)\n", dev,
           call_name[c], label, bound, ticks / (double)sysconf(_SC_CLK_TCK), mem, now() - k0, sidetxt);
  }
  fflush(stdout);
  fclose(in);
}

int main(int argc, char **argv) {
  double bound = getenv("HANG_S") ? atof(getenv("HANG_S")) : 4;
  // The parent never initialises the driver (a child forked after cuInit cannot use it): the
  // device count and names come from a child of their own.
  int ndev = 0;
  char names[8][128];
  int pn[2];
  if (pipe(pn)) return 1;
  if (fork() == 0) {
    int n = 0;
    if (cuInit(0) || cuDeviceGetCount(&n)) _exit(1);
    for (int i = 0; i < n && i < 8; i++) {
      CUdevice d;
      char nm[128] = "?";
      cuDeviceGet(&d, i);
      cuDeviceGetName(nm, sizeof nm, d);
      dprintf(pn[1], "%s\n", nm);
    }
    _exit(0);
  }
  close(pn[1]);
  FILE *pf = fdopen(pn[0], "r");
  while (ndev < 8 && fgets(names[ndev], sizeof names[ndev], pf)) {
    names[ndev][strcspn(names[ndev], "\n")] = 0;
    ndev++;
  }
  fclose(pf);
  wait(0);
  if (!ndev) { printf("no driver or device\n"); return 1; }
  // Values of maxSize: around the device's memory, powers of two, and around the top of the range
  // (where a round-up to a 2 MiB or 32 MiB granularity wraps).
  const uint64_t M2 = 1ull << 21, M32 = 1ull << 25, G1 = 1ull << 30;
  struct { uint64_t v; const char *l; } vals[] = {
      {0, "0"}, {1ull << 40, "1<<40"}, {1ull << 50, "1<<50"}, {1ull << 60, "1<<60"}, {1ull << 62, "1<<62"},
      {1ull << 63, "1<<63"}, {(1ull << 63) + (1ull << 62), "3<<62"}, {~0ull - G1 + 1, "2^64-1GiB"},
      {~0ull - M32 + 1, "2^64-32MiB"}, {~0ull - M32 + 2, "2^64-32MiB+1"}, {~0ull - M2 + 1, "2^64-2MiB"},
      {~0ull - M2 + 2, "2^64-2MiB+1"}, {~0ull - 4095, "SIZE_MAX-4095"}, {~0ull - 1, "SIZE_MAX-1"}, {~0ull, "SIZE_MAX"},
  };
  int nv = sizeof vals / sizeof vals[0];
  const char *only = getenv("ONLY");    // a call index, to probe one call only
  const char *label = getenv("LABEL");  // a value's label, to probe one value only
  const char *devs = getenv("DEV");     // one device only
  for (int dev = 0; dev < ndev; dev++) {
    if (devs && atoi(devs) != dev) continue;
    printf("== device %d: %s\n", dev, names[dev]);
    for (int c = 0; c < 4; c++) {
      if (only && atoi(only) != c) continue;
      for (int i = 0; i < nv; i++) {
        if (c >= ALLOC_ASYNC && vals[i].v == 0) continue;
        if (label && strcmp(label, vals[i].l)) continue;
        probe(dev, (enum call)c, vals[i].v, vals[i].l, bound);
      }
    }
  }
  (void)argc; (void)argv;
  return 0;
}
