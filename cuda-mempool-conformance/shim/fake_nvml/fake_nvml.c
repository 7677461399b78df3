/* Test-only: a stand-in NVML for tests that simulate another driver branch without that driver.
 *
 * Built by build.rs into libfake-nvml.so (apart from the mutation library; its path reaches the
 * tests as CONFORMANCE_FAKE_NVML_BUILT). It answers the three calls a program makes to read the
 * driver's version, with NVML's codes:
 *   CONFORMANCE_FAKE_NVML_VERSION=v   the version nvmlSystemGetDriverVersion answers (unset:
 *                                     570.86.15); the empty string: nvmlInit_v2 answers
 *                                     DRIVER_NOT_LOADED, as NVML does without the kernel module,
 *                                     and nvmlSystemGetDriverVersion UNINITIALIZED */
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_INSUFFICIENT_SIZE = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
};

/* The version this library plays, NULL for no driver. */
static const char *version(void) {
  const char *v = getenv("CONFORMANCE_FAKE_NVML_VERSION");
  if (!v) return "570.86.15";
  return *v ? v : NULL;
}

EXPORT int nvmlInit_v2(void) { return version() ? NVML_SUCCESS : NVML_ERROR_DRIVER_NOT_LOADED; }

EXPORT int nvmlSystemGetDriverVersion(char *out, unsigned int length) {
  const char *v = version();
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (!v) return NVML_ERROR_UNINITIALIZED; /* nvmlInit_v2 failed */
  size_t n = strlen(v);
  if (n + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  memcpy(out, v, n + 1);
  return NVML_SUCCESS;
}

EXPORT int nvmlShutdown(void) { return NVML_SUCCESS; }
