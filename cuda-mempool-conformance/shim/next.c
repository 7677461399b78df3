/* The driver's definitions under this library: shim_next, and the C library's own dlsym (shim_dlsym).
 *
 * Below every other file of the library (misbehave.c's registry and hooks, the group files, the
 * shared files): each reaches the driver through here, and this file calls none of them. */
#include "shim.h"

/* The C library's own dlsym, under this library's hook (misbehave.c). */
static void *(*real_dlsym)(void *, const char *);

void *shim_dlsym(void *handle, const char *name) {
  if (!real_dlsym) {
    *(void **)&real_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!real_dlsym) *(void **)&real_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"); /* x86-64 */
    if (!real_dlsym) *(void **)&real_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17");  /* aarch64 */
    if (!real_dlsym) return NULL;
  }
  return real_dlsym(handle, name);
}

/* The next definition in the global namespace (a program linked against libcuda), else the driver
 * library's own (a program that loaded it RTLD_LOCAL: the runtime). */
void *shim_next(const char *name) {
  void *f = shim_dlsym(RTLD_NEXT, name);
  if (f) return f;
  static void *driver;
  if (!driver) {
    const char *path = getenv("CUDA_MEMPOOL_SYS_LIBCUDA");
    driver = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  }
  return driver ? shim_dlsym(driver, name) : NULL;
}
