// Calibration probe for issue 34 (R580 answers): printed as key=value lines.
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
static const char *N[14] = {"cuMemAllocAsync","cuMemAllocFromPoolAsync","cuMemFreeAsync","cuMemPoolCreate","cuMemPoolDestroy","cuMemPoolExportPointer","cuMemPoolExportToShareableHandle","cuMemPoolGetAccess","cuMemPoolGetAttribute","cuMemPoolImportFromShareableHandle","cuMemPoolImportPointer","cuMemPoolSetAccess","cuMemPoolSetAttribute","cuMemPoolTrimTo"};
#define P(...) do { printf(__VA_ARGS__); printf("\n"); fflush(stdout);} while(0)
static size_t T;
static CUdevice dev; static CUcontext ctx;
typedef CUresult (*gpa11)(const char*, void**, int, cuuint64_t);
struct th { CUstream s; CUmemoryPool pool; };
static void *nocontext(void *a) {
  struct th *t = a; CUdeviceptr p = 0, q = 0; CUcontext c = 0;
  cuCtxGetCurrent(&c); P("nocontext.current=%p", (void*)c);
  CUresult r = cuMemAllocAsync(&p, 1<<20, t->s); P("nocontext.820.explicit=%d p=%llx", r, (unsigned long long)p);
  r = cuMemAllocFromPoolAsync(&q, 1<<20, t->pool, t->s); P("nocontext.821.explicit=%d q=%llx", r, (unsigned long long)q);
  if (p) { r = cuMemFreeAsync(p, t->s); P("nocontext.822.explicit=%d", r); }
  if (q) { r = cuMemFreeAsync(q, t->s); P("nocontext.822b.explicit=%d", r); }
  CUdeviceptr z = 0; r = cuMemAllocAsync(&z, 1<<20, CU_STREAM_LEGACY); P("nocontext.820.legacy=%d", r);
  r = cuMemAllocAsync(&z, 1<<20, CU_STREAM_PER_THREAD); P("nocontext.820.ptds=%d", r);
  r = cuMemAllocAsync(&z, 1<<20, NULL); P("nocontext.820.null=%d", r);
  return 0;
}
static void graph_capture(int flags) {
  CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUgraphExec ex[2] = {0}; CUdeviceptr ptr[2] = {0};
  size_t n = T / 10 * 6;
  for (int i = 0; i < 2; i++) {
    CUgraph g; CUresult r = cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL); P("gcap%d.f%d.begin=%d", i, flags, r);
    r = cuMemAllocAsync(&ptr[i], n, s); P("gcap%d.f%d.alloc=%d", i, flags, r);
    r = cuStreamEndCapture(s, &g); P("gcap%d.f%d.end=%d", i, flags, r);
    r = cuGraphInstantiate(&ex[i], g, flags); P("gcap%d.f%d.instantiate=%d", i, flags, r);
    cuGraphDestroy(g);
  }
  for (int i = 0; i < 2; i++) {
    CUresult r = cuGraphLaunch(ex[i], s); P("gcap%d.f%d.launch=%d", i, flags, r);
    r = cuStreamSynchronize(s); P("gcap%d.f%d.sync=%d", i, flags, r);
    size_t fr, tt; cuMemGetInfo(&fr, &tt); P("gcap%d.f%d.free_after=%zu", i, flags, fr);
  }
  for (int i = 0; i < 2; i++) { CUresult r = cuMemFreeAsync(ptr[i], s); P("gcap%d.f%d.free=%d", i, flags, r); }
  P("gcap.f%d.final_sync=%d", flags, cuStreamSynchronize(s));
  for (int i = 0; i < 2; i++) if (ex[i]) cuGraphExecDestroy(ex[i]);
  P("gcap.f%d.trim=%d", flags, cuDeviceGraphMemTrim(dev));
  cuStreamDestroy(s);
  cuCtxSynchronize();
}
static void graph_node(void) {
  CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUgraphExec ex[2] = {0}; CUdeviceptr ptr[2] = {0};
  for (int i = 0; i < 2; i++) {
    CUgraph g; cuGraphCreate(&g, 0);
    CUDA_MEM_ALLOC_NODE_PARAMS prm; memset(&prm, 0, sizeof prm);
    prm.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    prm.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE; prm.poolProps.location.id = dev;
    prm.bytesize = T / 10 * 6;
    CUgraphNode node; CUresult r = cuGraphAddMemAllocNode(&node, g, NULL, 0, &prm); P("gnode%d.add=%d", i, r);
    ptr[i] = prm.dptr;
    r = cuGraphInstantiate(&ex[i], g, 0); P("gnode%d.instantiate=%d", i, r);
    cuGraphDestroy(g);
  }
  for (int i = 0; i < 2; i++) {
    CUresult r = cuGraphLaunch(ex[i], s); P("gnode%d.launch=%d", i, r);
    r = cuStreamSynchronize(s); P("gnode%d.sync=%d", i, r);
  }
  for (int i = 0; i < 2; i++) P("gnode%d.free=%d", i, cuMemFreeAsync(ptr[i], s));
  P("gnode.final_sync=%d", cuStreamSynchronize(s));
  for (int i = 0; i < 2; i++) if (ex[i]) cuGraphExecDestroy(ex[i]);
  P("gnode.trim=%d", cuDeviceGraphMemTrim(dev));
  cuStreamDestroy(s);
}
static CUmemoryPool mkpool(size_t max) {
  CUmemPoolProps p; memset(&p, 0, sizeof p);
  p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED; p.location.type = CU_MEM_LOCATION_TYPE_DEVICE; p.location.id = dev; p.maxSize = max;
  CUmemoryPool pool = 0; CUresult r = cuMemPoolCreate(&pool, &p); P("pool.create.max%zu=%d", max, r);
  return pool;
}
int main(void) {
  for (int i = 0; i < 14; i++) for (int v = 0; v < 3; v++) {
    int ver[3] = {11000, 11020, 13000};
    void *p = 0; CUdriverProcAddressQueryResult st = 99;
    CUresult r = cuGetProcAddress_v2(N[i], &p, ver[v], CU_GET_PROC_ADDRESS_DEFAULT, &st);
    Dl_info di = {0}; if (p) dladdr(p, &di);
    P("gpa.%s.v%d r=%d status=%d p=%s obj=%s", N[i], ver[v], r, (int)st, p ? "set" : "NULL", di.dli_fname ? di.dli_fname : "-");
  }
  gpa11 old = (gpa11)dlsym(RTLD_DEFAULT, "cuGetProcAddress");
  P("old.present=%d", old != 0);
  for (int i = 0; old && i < 14; i++) { void *p = 0; CUresult r = old(N[i], &p, 11000, 0); P("old.%s.v11000 r=%d p=%s", N[i], r, p?"set":"NULL"); r = old(N[i], &p, 12000, 0); P("old.%s.v12000 r=%d p=%s", N[i], r, p?"set":"NULL"); }
  for (int i = 0; i < 14; i++) {
    void *p = 0; CUdriverProcAddressQueryResult st = 99; char buf[128]; snprintf(buf, sizeof buf, "%s_ptsz", N[i]);
    CUresult r = cuGetProcAddress_v2(N[i], &p, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st);
    void *ptsz = dlsym(RTLD_DEFAULT, buf); void *plain = dlsym(RTLD_DEFAULT, N[i]);
    P("ptds.%s r=%d st=%d same_as_ptsz=%d same_as_plain=%d ptsz_exists=%d", N[i], r, (int)st, p && p == ptsz, p && p == plain, ptsz != 0);
  }
  int cnt = -1; P("before_init.cuDeviceGetCount=%d", cuDeviceGetCount(&cnt));
  { CUresult ri = cuInit(0); P("cuInit=%d", ri); if (ri) return 0; }
  cuDeviceGet(&dev, 0); cuDevicePrimaryCtxRetain(&ctx, dev); cuCtxSetCurrent(ctx);
  size_t fr; cuMemGetInfo(&fr, &T); P("meminfo free=%zu total=%zu", fr, T);
  { struct th t; cuStreamCreate(&t.s, CU_STREAM_NON_BLOCKING); cuDeviceGetDefaultMemPool(&t.pool, dev);
    pthread_t h; pthread_create(&h, 0, nocontext, &t); pthread_join(h, 0); P("nocontext.sync=%d", cuStreamSynchronize(t.s)); cuStreamDestroy(t.s); }
  CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  { CUmemoryPool pool = mkpool(2 * T); CUdeviceptr p = 0;
    if (pool) { CUresult r = cuMemAllocFromPoolAsync(&p, T / 10 * 11, pool, s); P("pool.max2T.alloc1.1T=%d", r); if (!r) cuMemFreeAsync(p, s);
      r = cuMemAllocFromPoolAsync(&p, T / 2, pool, s); P("pool.max2T.alloc0.5T=%d", r); if (!r) cuMemFreeAsync(p, s); cuStreamSynchronize(s); cuMemPoolDestroy(pool); } }
  { CUmemoryPool pool = mkpool(T + (1ull<<30)); if (pool) cuMemPoolDestroy(pool); }
  { CUmemoryPool pool = mkpool(0); cuuint64_t mx = ~0ull; cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &mx);
    CUdeviceptr p = 0; size_t n = T / 8 * 5;
    P("reuse.a1=%d", cuMemAllocFromPoolAsync(&p, n, pool, s)); P("reuse.f1=%d", cuMemFreeAsync(p, s)); P("reuse.sync=%d", cuStreamSynchronize(s));
    cuuint64_t res = 0; cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &res); P("reuse.reserved=%llu", (unsigned long long)res);
    CUresult r = cuMemAllocFromPoolAsync(&p, n, pool, s); P("reuse.a2=%d", r); if (!r) cuMemFreeAsync(p, s); cuStreamSynchronize(s);
    // another pool while this one keeps 5/8
    CUmemoryPool b = mkpool(0); CUdeviceptr q = 0;
    r = cuMemAllocFromPoolAsync(&q, n, b, s); P("cross.b_alloc5/8=%d", r); P("cross.sync=%d", cuStreamSynchronize(s));
    cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &res); P("cross.a_reserved_after=%llu", (unsigned long long)res);
    if (!r) { cuMemFreeAsync(q, s); cuStreamSynchronize(s); }
    CUdeviceptr d = 0; r = cuMemAllocAsync(&d, n, s); P("cross.default_alloc5/8=%d", r); P("cross.dsync=%d", cuStreamSynchronize(s)); if (!r) { cuMemFreeAsync(d, s); cuStreamSynchronize(s); }
    CUdeviceptr m = 0; r = cuMemAlloc(&m, n); P("cross.cuMemAlloc5/8=%d", r); if (!r) cuMemFree(m);
    cuMemPoolDestroy(b); cuMemPoolDestroy(pool); }
  cuStreamDestroy(s);
  graph_capture(0);
  graph_capture(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
  graph_node();
  cuMemGetInfo(&fr, &T); P("end meminfo free=%zu", fr);
  return 0;
}
