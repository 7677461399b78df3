/* The mutants (and faults) of 828 cuMemPoolGetAttribute, 832 cuMemPoolSetAttribute, 833 cuMemPoolTrimTo.
 *
 * The mutants work only once cuInit has succeeded (the before-cuInit ones are init.c's). Attribute
 * values: 1 REUSE_FOLLOW_EVENT_DEPENDENCIES, 2 REUSE_ALLOW_OPPORTUNISTIC, 3
 * REUSE_ALLOW_INTERNAL_DEPENDENCIES (int each), 4 RELEASE_THRESHOLD, 5 RESERVED_MEM_CURRENT, 6
 * RESERVED_MEM_HIGH, 7 USED_MEM_CURRENT, 8 USED_MEM_HIGH (cuuint64_t each); 9-13 are CUDA 13.x's.
 * "The calling device" is the device of the calling thread's current context. */
#include "../shim.h"

#include <pthread.h>

enum {
  A_REUSE_FIRST = 1,
  A_REUSE_LAST = 3,
  A_THRESHOLD = 4,
  A_RESERVED = 5,
  A_RESERVED_HIGH = 6,
  A_USED = 7,
  A_USED_HIGH = 8,
  A_MAX_POOL_SIZE = 13,
  A_LOCALITY_DOMAIN_ID = 15,
  A_LAST_KNOWN = 15, /* the last the CUDA 13.5 header lists */
};
#define MIB (1ull << 20)
/* R580's reservation granularity (32 MiB chunks) and its allocation granularity (2 MiB). */
#define CHUNK (32 * MIB)
#define PAGE (2 * MIB)

const struct shim_entry attr_entries[] = {
    FAULT("noop-833", 833, "none", "success for anything, and it trims nothing"),
    FAULT("hang-833", 833, "none", "never returns"),

    /* 828: argument checks, codes, values and their widths. */
    /* 828 null_pool_invalid_value */
    MUTANT("828-null-pool-default-pool", 828, "gpu",
           "a NULL pool means the calling device's default pool: its value instead of INVALID_VALUE"),
    /* 828 null_value_invalid_value */
    MUTANT("828-null-value-unchecked", 828, "gpu", "a NULL value pointer is not checked: success, the value written nowhere"),
    /* 828 unknown_attribute_invalid_value */
    MUTANT("828-unknown-attribute-zero", 828, "gpu", "an unknown attribute (0, 0x1000) answers success and 0"),
    /* 828 imported_pool_get_release_threshold_refused, imported_pool_get_used_mem_refused (ipc) */
    MUTANT("828-imported-pool-not-supported", 828, "ipc",
           "a query the driver refuses on an imported pool answers NOT_SUPPORTED instead of INVALID_VALUE"),
    /* 828 high_water_marks_keep_the_peak; 832 reserved_mem_high_reset_to_current */
    MUTANT("828-reserved-high-answers-current", 828, "gpu", "RESERVED_MEM_HIGH answers RESERVED_MEM_CURRENT"),
    /* 828 high_water_marks_keep_the_peak; 832 used_mem_high_reset_to_current */
    MUTANT("828-used-high-answers-current", 828, "gpu", "USED_MEM_HIGH answers USED_MEM_CURRENT"),
    /* 828 used_mem_exact_accounting */
    MUTANT("828-used-rounded-up", 828, "gpu", "USED_MEM_CURRENT is rounded up to whole 2 MiB pages"),
    /* 828 release_threshold_value_width_8, reserved_mem_*_value_width_8, used_mem_*_value_width_8;
     * 832 release_threshold_max_keeps_memory */
    MUTANT("828-u64-written-as-u32", 828, "gpu", "the 8-byte attributes are written as 4 bytes (the low half)"),
    /* 828 reuse_*_value_width_4 */
    MUTANT("828-int-written-as-byte", 828, "gpu", "the 4-byte reuse flags are written as 1 byte (a C bool)"),
    /* 832 reuse_flags_round_trip; 823 new_pool_defaults */
    MUTANT("828-reuse-flags-read-inverted", 828, "gpu", "the reuse flags read back inverted (0 for on, 1 for off)"),

    /* 832: argument checks, read-only attributes, reset rules, and values not applied. */
    /* 832 null_pool_invalid_value */
    MUTANT("832-null-pool-default-pool", 832, "gpu",
           "a NULL pool means the calling device's default pool: set there instead of INVALID_VALUE"),
    /* 832 null_value_crashes_driver */
    MUTANT("832-null-value-accepted", 832, "gpu", "a NULL value sets nothing and answers success (R580 crashes)"),
    /* 832 unknown_attribute_invalid_value */
    MUTANT("832-unknown-attribute-accepted", 832, "gpu", "an unknown attribute (0, 0x1000) is accepted and ignored"),
    /* 832 reserved_mem_current_read_only, used_mem_current_read_only */
    MUTANT("832-read-only-accepted", 832, "gpu",
           "setting RESERVED_MEM_CURRENT or USED_MEM_CURRENT succeeds (and changes nothing)"),
    /* 832 reserved_mem_high_nonzero_refused, used_mem_high_nonzero_refused */
    MUTANT("832-nonzero-high-accepted", 832, "gpu", "a high-water mark set to nonzero is taken as a reset"),
    /* 832 reserved_mem_high_reset_to_current */
    MUTANT("832-reserved-high-reset-ignored", 832, "gpu", "resetting RESERVED_MEM_HIGH succeeds but leaves the mark"),
    /* 832 used_mem_high_reset_to_current */
    MUTANT("832-used-high-reset-ignored", 832, "gpu", "resetting USED_MEM_HIGH succeeds but leaves the mark"),
    /* 832 release_threshold_max_keeps_memory, default_pool_release_threshold_set_and_restored */
    MUTANT("832-release-threshold-not-applied", 832, "gpu", "setting RELEASE_THRESHOLD succeeds but stores nothing"),
    /* 832 release_threshold_max_keeps_memory; 833 trim_to_zero_releases_unused, trim_keeps_min_bytes */
    MUTANT("832-release-threshold-stored-ignored", 832, "gpu",
           "RELEASE_THRESHOLD reads back as set, but the pool releases at every synchronisation (1 byte)"),
    /* 832 reuse_flags_round_trip, reuse_follow_event_dependencies_off_does_not,
     * reuse_internal_dependencies_off_out_of_memory */
    MUTANT("832-reuse-flags-ignored", 832, "gpu", "setting a reuse flag succeeds but changes nothing (they stay on)"),
    /* 832 imported_pool_set_release_threshold_refused (ipc) */
    MUTANT("832-imported-pool-accepted", 832, "ipc",
           "a release threshold for an imported pool is accepted (and dropped) instead of INVALID_VALUE"),

    /* 833: what is trimmed, and what is refused. */
    /* 833 null_pool_invalid_value */
    MUTANT("833-null-pool-default-pool", 833, "gpu", "a NULL pool trims the calling device's default pool"),
    /* 833 trim_to_zero_releases_unused, trim_keeps_min_bytes */
    MUTANT("833-trims-nothing", 833, "gpu", "checks its arguments, succeeds, and releases nothing"),
    /* 833 trim_keeps_min_bytes */
    MUTANT("833-ignores-min-bytes", 833, "gpu", "trims to 0 whatever minBytesToKeep asks"),
    /* 833 trim_keeps_min_bytes */
    MUTANT("833-min-bytes-off-by-one-chunk", 833, "gpu", "keeps one 32 MiB chunk less than minBytesToKeep asks"),
    /* 833 trim_keeps_memory_in_use */
    MUTANT("833-refuses-in-use", 833, "gpu", "a pool with memory in use is refused (NOT_PERMITTED) instead of trimmed"),
    /* 833 default_pool_trim_releases_unused */
    MUTANT("833-default-pool-refused", 833, "gpu", "a device's default pool is refused with NOT_SUPPORTED"),
    /* 833 default_pool_trim_releases_unused */
    MUTANT("833-default-pool-trims-nothing", 833, "gpu",
           "a device's default pool: answers success and releases nothing (only own pools are trimmed)"),
    /* 833 imported_pool_trim_refused (ipc) */
    MUTANT("833-imported-pool-not-supported", 833, "ipc",
           "an imported pool is refused with NOT_SUPPORTED instead of INVALID_VALUE"),
    /* 828 capture::during_global_capture_get_attribute_unsupported_and_invalidates_driver_behaviour */
    MUTANT("828-capture-refusal-invalid-value", 828, "gpu",
           "refused during a global-mode capture: answers INVALID_VALUE instead of STREAM_CAPTURE_UNSUPPORTED"),
    /* 832 capture::during_global_capture_set_attribute_unsupported_and_invalidates_driver_behaviour */
    MUTANT("832-capture-refusal-invalid-value", 832, "gpu",
           "refused during a global-mode capture: answers INVALID_VALUE instead of STREAM_CAPTURE_UNSUPPORTED"),
    /* 833 capture::during_global_capture_trim_to_unsupported_and_invalidates_driver_behaviour */
    MUTANT("833-capture-refusal-invalid-value", 833, "gpu",
           "refused during a global-mode capture: answers INVALID_VALUE instead of STREAM_CAPTURE_UNSUPPORTED"),
    /* issue 23: interposer */
    /* 828 interposer::no_current_context_succeeds */
    /* issue 38: 832 reuse_flags_any_nonzero_is_on */
    MUTANT("832-reuse-flag-not-boolean", 832, "gpu",
           "a reuse flag keeps only its low bit: 2 and 0x100 turn it off instead of on"),
    /* issue 48: 832 reuse_flags_any_nonzero_is_on (R580 reads every non-zero value back as 1) */
    MUTANT("832-reuse-flag-kept-as-set", 832, "gpu",
           "a reuse flag set non-zero reads back the value set (2, -1, 0x100), not the driver's 1: a layer "
           "that answers attributes from its own copy"),
    /* issue 38: 833 trim_below_a_chunk_keeps_the_chunk_in_use, trim_below_a_chunk_keeps_one_chunk */
    MUTANT("833-trim-keeps-too-much", 833, "gpu", "keeps one 32 MiB chunk more than minBytesToKeep asks"),
    /* issue 38: 828 printed::cuda13_max_pool_size_value_width_8 */
    MUTANT("828-max-pool-size-not-supported", 828, "gpu",
           "MAX_POOL_SIZE (CUDA 13.5) answers NOT_SUPPORTED: neither the value nor an older driver's INVALID_VALUE"),
    /* issue 48: 828 printed::cuda13_locality_domain_id_value_width_4 */
    MUTANT("828-locality-domain-not-supported", 828, "gpu",
           "LOCALITY_DOMAIN_ID (CUDA 13.5) answers NOT_SUPPORTED: neither the value nor an older driver's INVALID_VALUE"),
    MUTANT("828-no-context-crash", 828, "gpu",
           "on a thread with no current context: uses the device it could not get (SIGSEGV)"),
    /* 832 interposer::no_current_context_succeeds */
    MUTANT("832-no-context-crash", 832, "gpu",
           "on a thread with no current context: uses the device it could not get (SIGSEGV)"),
    /* 833 interposer::no_current_context_succeeds */
    MUTANT("833-no-context-crash", 833, "gpu",
           "on a thread with no current context: uses the device it could not get (SIGSEGV)"),
    /* 832 capture::set_attribute_during_*_capture_takes_effect_or_invalidates */
    MUTANT("832-noop-during-capture", 832, "gpu",
           "while a blocking stream captures: answers SUCCESS and sets nothing (a call deferred and dropped)"),
    /* 833 capture::trim_to_during_*_capture_takes_effect_or_invalidates */
    MUTANT("833-noop-during-capture", 833, "gpu",
           "while a blocking stream captures: answers SUCCESS and trims nothing (a call deferred and dropped)"),
    /* issue 23: edges */
    /* 828 edges_attribute (RELEASE_THRESHOLD with each bit 8-31) */
    MUTANT("828-attribute-low-byte-only", 828, "gpu",
           "the attribute is kept in 8 bits: an unknown one whose low byte is known answers that attribute"),
    /* 832 edges_attribute (RELEASE_THRESHOLD with each bit 8-31) */
    MUTANT("832-attribute-low-byte-only", 832, "gpu",
           "the attribute is kept in 8 bits: an unknown one whose low byte is known sets that attribute"),
    /* 832 edges_release_threshold (1 << 32 and above) */
    MUTANT("832-release-threshold-as-u32", 832, "gpu",
           "RELEASE_THRESHOLD is read as 4 bytes: only the low half of the value is stored"),
    /* 832 edges_reserved_mem_high_value, edges_used_mem_high_value (1 << 32, 1 << 60) */
    MUTANT("832-high-mark-value-as-u32", 832, "gpu",
           "a high-water mark's value is read as 4 bytes: a nonzero value with a zero low half resets the mark"),
    /* 833 edges_min_bytes_to_keep (1 << 60, 1 << 63) */
    MUTANT("833-huge-min-bytes-trims-all", 833, "gpu",
           "a minBytesToKeep above what the pool holds trims to 0 instead of releasing nothing"),
    /* issue 23: accounting */
    /* 828 accounting::allocation_counted_before_its_stream_runs */
    MUTANT("828-used-mem-stale", 828, "gpu",
           "USED_MEM_CURRENT answers what the pool's previous query saw (a statistic refreshed after answering)"),
    /* 833 accounting::trim_keeps_memory_of_a_pending_free */
    MUTANT("833-trim-waits-for-pending", 833, "gpu",
           "synchronises the context first: a pending free is waited for, and its memory trimmed with the rest"),
    /* issue 23: capture */
    /* 828 capture::get_attribute_during_*_capture_answers_or_invalidates (global, thread_local, relaxed) */
    MUTANT("828-stale-during-capture", 828, "gpu",
           "while a blocking stream captures: USED_MEM_CURRENT answers SUCCESS and 0 without asking the driver"),
    {0},
};

static CUresult real_get(CUmemoryPool pool, int attr, void *value) {
  static CUresult (*get)(CUmemoryPool, int, void *);
  if (!get) *(void **)&get = shim_next("cuMemPoolGetAttribute");
  return get ? get(pool, attr, value) : CUDA_ERROR_UNKNOWN;
}

static CUmemoryPool default_pool(CUdevice d) {
  static CUresult (*get)(CUmemoryPool *, CUdevice);
  if (!get) *(void **)&get = shim_next("cuDeviceGetDefaultMemPool");
  CUmemoryPool p = NULL;
  if (!get || get(&p, d) != CUDA_SUCCESS) return NULL;
  return p;
}

/* The calling device's default pool, or NULL. */
static CUmemoryPool default_pool_here(void) {
  static CUresult (*get)(CUdevice *);
  if (!get) *(void **)&get = shim_next("cuCtxGetDevice");
  CUdevice d = -1;
  if (!get || get(&d) != CUDA_SUCCESS) return NULL;
  return default_pool(d);
}

static int is_default_pool(CUmemoryPool pool) {
  for (int d = 0, n = shim_device_count(); d < n; d++)
    if (default_pool(d) == pool) return 1;
  return 0;
}

static int unknown(int attr) { return attr < A_REUSE_FIRST || attr > A_LAST_KNOWN; }
static int reuse_flag(int attr) { return attr >= A_REUSE_FIRST && attr <= A_REUSE_LAST; }
static int wide(int attr) { return attr >= A_THRESHOLD && attr <= A_USED_HIGH; }

static cuuint64_t u64_at(const void *value) {
  cuuint64_t v;
  memcpy(&v, value, sizeof v);
  return v;
}

/* 832-release-threshold-stored-ignored: the threshold asked for each pool, while the driver holds
 * THRESHOLD_MARK (1 byte: everything above it is released at the next synchronisation). A pool
 * the driver does not hold at the mark is not one this table speaks for (a pool created since at
 * the same address holds the default 0), so a stale entry is never answered. */
#define THRESHOLD_MARK 1ull
#define KEPT 256
static struct {
  CUmemoryPool pool;
  cuuint64_t value;
} kept[KEPT];
static size_t kept_next;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

/* 832-reuse-flag-kept-as-set's copy: the last non-zero value set of each (pool, reuse flag). */
#define FLAGS 64
static struct {
  CUmemoryPool pool;
  int attr, value;
} flags_set[FLAGS];
static size_t flags_next;

/* Remember `value` set for `attr` of `pool` (0: forget it). */
static void flag_set(CUmemoryPool pool, int attr, int value) {
  pthread_mutex_lock(&kept_lock);
  size_t at = FLAGS;
  for (size_t i = 0; i < FLAGS; i++)
    if (flags_set[i].pool == pool && flags_set[i].attr == attr) at = i;
  if (at == FLAGS && value) at = flags_next++ % FLAGS;
  if (at < FLAGS) {
    flags_set[at].pool = value ? pool : NULL;
    flags_set[at].attr = attr;
    flags_set[at].value = value;
  }
  pthread_mutex_unlock(&kept_lock);
}

/* The value set for `attr` of `pool`, if one is remembered: 1 with it in *value. */
static int flag_value(CUmemoryPool pool, int attr, int *value) {
  int found = 0;
  pthread_mutex_lock(&kept_lock);
  for (size_t i = 0; i < FLAGS && !found; i++)
    if (flags_set[i].pool == pool && flags_set[i].attr == attr) {
      *value = flags_set[i].value;
      found = 1;
    }
  pthread_mutex_unlock(&kept_lock);
  return found;
}

/* Remember `value` for `pool` (0: forget it). */
static void keep(CUmemoryPool pool, cuuint64_t value) {
  pthread_mutex_lock(&kept_lock);
  size_t at = KEPT;
  for (size_t i = 0; i < KEPT; i++)
    if (kept[i].pool == pool) at = i;
  if (at == KEPT && value) {
    for (size_t i = 0; i < KEPT && at == KEPT; i++)
      if (!kept[i].pool) at = i;
    if (at == KEPT) at = kept_next++ % KEPT;
  }
  if (at < KEPT) {
    kept[at].pool = value ? pool : NULL;
    kept[at].value = value;
  }
  pthread_mutex_unlock(&kept_lock);
}

static int kept_value(CUmemoryPool pool, cuuint64_t *value) {
  int found = 0;
  pthread_mutex_lock(&kept_lock);
  for (size_t i = 0; i < KEPT && !found; i++)
    if (kept[i].pool == pool) {
      *value = kept[i].value;
      found = 1;
    }
  pthread_mutex_unlock(&kept_lock);
  return found;
}

/* issue 23: interposer. Whether a blocking stream of the calling thread's context captures, as the
 * legacy stream's answer shows it (STREAM_CAPTURE_IMPLICIT, 906): the -noop-during-capture mutants
 * and 828-stale-during-capture. */
static int capture_under_way(void) {
  static CUresult (*is_capturing)(CUstream, int *);
  if (!is_capturing) *(void **)&is_capturing = shim_next("cuStreamIsCapturing");
  int status = 0; /* CU_STREAM_CAPTURE_STATUS_NONE */
  CUresult r = is_capturing ? is_capturing((CUstream)0x1 /* CU_STREAM_LEGACY */, &status) : CUDA_ERROR_UNKNOWN;
  return r == 906 || (r == CUDA_SUCCESS && status == 1 /* ACTIVE */);
}

/* issue 23: accounting. 828-used-mem-stale: the used memory each pool's previous query saw; answers
 * the value kept for `pool` (0 for its first query) and keeps `now` in its place. */
static cuuint64_t stale_used(CUmemoryPool pool, cuuint64_t now) {
  static struct {
    CUmemoryPool pool;
    cuuint64_t used;
  } seen[KEPT];
  static size_t next;
  cuuint64_t before = 0;
  size_t at = KEPT;
  pthread_mutex_lock(&kept_lock);
  for (size_t i = 0; i < KEPT && at == KEPT; i++)
    if (seen[i].pool == pool) at = i;
  if (at == KEPT) at = next++ % KEPT;
  else before = seen[at].used;
  seen[at].pool = pool;
  seen[at].used = now;
  pthread_mutex_unlock(&kept_lock);
  return before;
}

HOOK CUresult cuMemPoolGetAttribute(CUmemoryPool pool, int attr, void *value) {
  BEGIN(828, "cuMemPoolGetAttribute", CUresult, (CUmemoryPool, int, void *));
  shim_no_context_crash(828); /* issue 23: interposer */
  if (shim_init_state != 1) return real(pool, attr, value);
  unsigned char nowhere[16];
  if (shim_on("828-attribute-low-byte-only")) attr &= 0xff;
  if (!pool && shim_on("828-null-pool-default-pool")) pool = default_pool_here();
  if (!value && shim_on("828-null-value-unchecked")) value = nowhere;
  if (attr == A_RESERVED_HIGH && shim_on("828-reserved-high-answers-current")) attr = A_RESERVED;
  if (attr == A_USED_HIGH && shim_on("828-used-high-answers-current")) attr = A_USED;
  if (pool && value && attr == A_MAX_POOL_SIZE && shim_on("828-max-pool-size-not-supported"))
    return CUDA_ERROR_NOT_SUPPORTED; /* issue 38: printed */
  if (pool && value && attr == A_LOCALITY_DOMAIN_ID && shim_on("828-locality-domain-not-supported"))
    return CUDA_ERROR_NOT_SUPPORTED; /* issue 48: printed */
  if (pool && value && attr == A_USED && shim_on("828-stale-during-capture") && capture_under_way()) {
    memset(value, 0, sizeof(cuuint64_t)); /* issue 23: capture (a statistic kept aside, never refreshed) */
    return CUDA_SUCCESS;
  }
  if (value && reuse_flag(attr)) {
    int inverted = shim_on("828-reuse-flags-read-inverted"), byte = shim_on("828-int-written-as-byte");
    if (inverted || byte) {
      int v = 0;
      CUresult r = real(pool, attr, &v);
      if (r != CUDA_SUCCESS) return r;
      if (inverted) {
        v = !v;
        memcpy(value, &v, sizeof v);
      } else {
        unsigned char b = (unsigned char)v;
        memcpy(value, &b, 1);
      }
      return r;
    }
  }
  if (value && wide(attr) && shim_on("828-u64-written-as-u32")) {
    cuuint64_t v = 0;
    CUresult r = real(pool, attr, &v);
    if (r == CUDA_SUCCESS) memcpy(value, &v, 4); /* little-endian: the low half */
    return r;
  }
  CUresult r = real(pool, attr, value);
  if (r == CUDA_SUCCESS && value) {
    if (attr == A_USED && shim_on("828-used-rounded-up")) {
      cuuint64_t v = u64_at(value);
      v = (v + PAGE - 1) / PAGE * PAGE;
      memcpy(value, &v, sizeof v);
    }
    if (attr == A_USED && shim_on("828-used-mem-stale")) {
      cuuint64_t v = stale_used(pool, u64_at(value));
      memcpy(value, &v, sizeof v);
    }
    int as_set;
    if (reuse_flag(attr) && *(int *)value && shim_on("832-reuse-flag-kept-as-set") && flag_value(pool, attr, &as_set))
      memcpy(value, &as_set, sizeof as_set);
    cuuint64_t asked;
    if (attr == A_THRESHOLD && shim_on("832-release-threshold-stored-ignored") && u64_at(value) == THRESHOLD_MARK &&
        kept_value(pool, &asked))
      memcpy(value, &asked, sizeof asked);
  }
  if (r == CUDA_ERROR_INVALID_VALUE && pool && value) {
    if (unknown(attr) && shim_on("828-unknown-attribute-zero")) {
      memset(value, 0, 4);
      return CUDA_SUCCESS;
    }
    /* A well-formed query the driver refuses: an imported pool's (the suite makes no other). */
    if (!unknown(attr) && attr <= A_USED_HIGH && shim_on("828-imported-pool-not-supported"))
      return CUDA_ERROR_NOT_SUPPORTED;
  }
  if (r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED && shim_on("828-capture-refusal-invalid-value")) return CUDA_ERROR_INVALID_VALUE;
  return r;
}

HOOK CUresult cuMemPoolSetAttribute(CUmemoryPool pool, int attr, void *value) {
  BEGIN(832, "cuMemPoolSetAttribute", CUresult, (CUmemoryPool, int, void *));
  shim_ckpt_note_pool(pool); /* the checkpoint mutants (checkpoint.c) */
  shim_no_context_crash(832); /* issue 23: interposer */
  if (shim_init_state != 1) return real(pool, attr, value);
  if (shim_on("832-attribute-low-byte-only")) attr &= 0xff;
  if (pool && value && attr >= 1 && attr <= 3 && shim_on("832-reuse-flag-not-boolean")) {
    int low = *(int *)value & 1;
    return real(pool, attr, &low);
  }
  if (!pool && shim_on("832-null-pool-default-pool")) pool = default_pool_here();
  /* issue 23: interposer */
  if (pool && value && shim_on("832-noop-during-capture") && capture_under_way()) return CUDA_SUCCESS;
  if (!value && shim_on("832-null-value-accepted")) return pool ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  if (pool && value) {
    /* What the mutants that change nothing answer: whether the driver takes the pool and attribute
     * (its answer to reading the attribute back). */
    cuuint64_t probe[2];
    int u32_threshold = attr == A_THRESHOLD && shim_on("832-release-threshold-as-u32");
    int u32_mark = (attr == A_RESERVED_HIGH || attr == A_USED_HIGH) && shim_on("832-high-mark-value-as-u32");
    if (u32_threshold || u32_mark) {
      cuuint64_t low = (uint32_t)u64_at(value);
      return real(pool, attr, &low);
    }
    if (reuse_flag(attr) && shim_on("832-reuse-flags-ignored")) return real_get(pool, attr, probe);
    if (attr == A_THRESHOLD && shim_on("832-release-threshold-not-applied")) return real_get(pool, attr, probe);
    if (attr == A_THRESHOLD && shim_on("832-release-threshold-stored-ignored")) {
      cuuint64_t asked = u64_at(value), mark = asked ? THRESHOLD_MARK : 0;
      CUresult r = real(pool, attr, &mark);
      if (r == CUDA_SUCCESS) keep(pool, asked);
      return r;
    }
    if (attr == A_RESERVED_HIGH || attr == A_USED_HIGH) {
      int nonzero = shim_on("832-nonzero-high-accepted");
      int ignored = shim_on(attr == A_RESERVED_HIGH ? "832-reserved-high-reset-ignored" : "832-used-high-reset-ignored");
      if (nonzero && u64_at(value) != 0) {
        cuuint64_t zero = 0;
        return real(pool, attr, &zero);
      }
      if (ignored && u64_at(value) == 0) return real_get(pool, attr, probe);
    }
  }
  CUresult r = real(pool, attr, value);
  if (r == CUDA_SUCCESS && pool && value && reuse_flag(attr) && shim_on("832-reuse-flag-kept-as-set"))
    flag_set(pool, attr, *(int *)value);
  if (r == CUDA_ERROR_INVALID_VALUE && pool && value) {
    if ((attr == A_RESERVED || attr == A_USED) && shim_on("832-read-only-accepted")) return CUDA_SUCCESS;
    if (unknown(attr) && shim_on("832-unknown-attribute-accepted")) return CUDA_SUCCESS;
    /* A well-formed threshold the driver refuses: an imported pool's (the suite sets no other). */
    if (attr == A_THRESHOLD && shim_on("832-imported-pool-accepted")) return CUDA_SUCCESS;
  }
  if (r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED && shim_on("832-capture-refusal-invalid-value")) return CUDA_ERROR_INVALID_VALUE;
  return r;
}

HOOK CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t min_bytes_to_keep) {
  BEGIN(833, "cuMemPoolTrimTo", CUresult, (CUmemoryPool, size_t));
  shim_no_context_crash(833); /* issue 23: interposer */
  if (shim_on("hang-833"))
    for (;;) pause();
  if (shim_on("noop-833")) return 0;
  if (shim_init_state != 1) return real(pool, min_bytes_to_keep);
  if (!pool && shim_on("833-null-pool-default-pool")) pool = default_pool_here();
  if (pool && shim_on("833-trim-keeps-too-much")) min_bytes_to_keep += (size_t)32 << 20;
  /* issue 23: interposer */
  if (pool && shim_on("833-noop-during-capture") && capture_under_way()) return CUDA_SUCCESS;
  if (pool) {
    if (shim_on("833-default-pool-refused") && is_default_pool(pool)) return CUDA_ERROR_NOT_SUPPORTED;
    if (shim_on("833-default-pool-trims-nothing") && is_default_pool(pool)) return CUDA_SUCCESS;
    cuuint64_t used = 0;
    if (shim_on("833-refuses-in-use") && real_get(pool, A_USED, &used) == CUDA_SUCCESS && used > 0)
      return CUDA_ERROR_NOT_PERMITTED;
    /* The driver's checks of the pool, as a query makes them (NULL and imported pools refused
     * alike), and nothing released. (Not minBytesToKeep = SIZE_MAX: R580 then releases everything.) */
    if (shim_on("833-trims-nothing")) return real_get(pool, A_RESERVED, &used);
    if (shim_on("833-ignores-min-bytes")) min_bytes_to_keep = 0;
    cuuint64_t held = 0;
    if (shim_on("833-huge-min-bytes-trims-all") && real_get(pool, A_RESERVED, &held) == CUDA_SUCCESS &&
        min_bytes_to_keep > held)
      min_bytes_to_keep = 0;
    if (shim_on("833-min-bytes-off-by-one-chunk"))
      min_bytes_to_keep = min_bytes_to_keep > CHUNK ? min_bytes_to_keep - CHUNK : 0;
    if (shim_on("833-trim-waits-for-pending")) {
      static CUresult (*sync)(void);
      if (!sync) *(void **)&sync = shim_next("cuCtxSynchronize");
      if (sync) (void)sync();
    }
  }
  CUresult r = real(pool, min_bytes_to_keep);
  if (r == CUDA_ERROR_INVALID_VALUE && pool && shim_init_state == 1 && shim_on("833-imported-pool-not-supported"))
    return CUDA_ERROR_NOT_SUPPORTED;
  if (r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED && shim_on("833-capture-refusal-invalid-value")) return CUDA_ERROR_INVALID_VALUE;
  return r;
}

const struct shim_hook attr_hooks[] = {
    {"cuMemPoolGetAttribute", (void *)cuMemPoolGetAttribute},
    {"cuMemPoolSetAttribute", (void *)cuMemPoolSetAttribute},
    {"cuMemPoolTrimTo", (void *)cuMemPoolTrimTo},
    {0},
};
