/* The mutants (and fault) of 827 cuMemPoolGetAccess and 831 cuMemPoolSetAccess.
 *
 * The mutants work only once cuInit has succeeded (the before-cuInit ones are init.c's), and most
 * of them change the driver's answer rather than answer in its place. "The owner" is the device of
 * the calling thread's current context: the suite creates its pools on the device whose context it
 * works in and grants or asks about peers from there, so in every trial that device owns the pool
 * and any other device is a peer. Without a current context nothing is changed. */
#include "../shim.h"

#define LOC_DEVICE 1
#define ACCESS_NONE 0u
#define ACCESS_READ 1u
#define ACCESS_READ_WRITE 3u

const struct shim_entry access_entries[] = {
    FAULT("garbage-827", 827, "gpu", "success with flags 0x7f7f, no CUmemAccess_flags value"),

    /* 827: argument checks skipped, codes, and the flags reported per location. */
    /* 827 null_pool_invalid_value */
    MUTANT("827-null-pool-invalid-handle", 827, "gpu", "a NULL pool answers INVALID_HANDLE instead of INVALID_VALUE"),
    /* 827 null_flags_out_invalid_value */
    MUTANT("827-null-flags-unchecked", 827, "gpu",
           "a NULL flags pointer is not checked: success, the answer written nowhere"),
    /* 827 null_location_invalid_value */
    MUTANT("827-null-location-owner", 827, "gpu",
           "a NULL location means the calling context's device: success with its flags"),
    /* 827 own_pool_device_past_last, default_pool_device_past_last */
    MUTANT("827-past-last-accepted", 827, "gpu",
           "a device past the last is not checked: success, no access, instead of INVALID_VALUE"),
    /* 827 own_pool_location_type_invalid, default_pool_location_type_invalid */
    MUTANT("827-bad-location-type-accepted", 827, "gpu",
           "an unknown location type is not checked: success, no access, instead of INVALID_VALUE"),
    /* 827 own_pool_owner_has_read_write, default_pool_owner_has_read_write,
     * imported_pool_own_device_read_write (ipc), reports_peer_grant_and_revoke (peer) */
    MUTANT("827-owner-reported-none", 827, "gpu", "the owner device's read-write access is reported as none"),
    /* 827 own_pool_host_location_has_none, default_pool_host_location_has_none */
    MUTANT("827-host-reported-read-write", 827, "gpu", "a host location of a device pool is reported read-write"),
    /* 827 reports_peer_grant_and_revoke (peer); one_map_grants_every_peer (multi) */
    MUTANT("827-peer-grant-not-reported", 827, "peer",
           "a peer's read-write grant is not reported: GetAccess says none for it"),
    /* 827 peer_has_no_access_by_default, independent_of_context_peer_access (peer) */
    MUTANT("827-peer-reported-read-write", 827, "peer",
           "a peer without access is reported read-write (as if peers had access by default)"),

    /* 831: codes, argument checks skipped, and how a map is applied. */
    /* 831 null_pool_invalid_value */
    MUTANT("831-null-pool-current-pool", 831, "gpu",
           "a NULL pool means the calling device's current pool instead of INVALID_VALUE"),
    /* 831 null_map_with_count_invalid_value */
    MUTANT("831-null-map-accepted", 831, "gpu", "a NULL map with a count is not checked: success, nothing set"),
    /* 831 count_zero_with_map_accepted */
    MUTANT("831-count-zero-refused", 831, "gpu", "a map of 0 descriptors is refused (INVALID_VALUE) even with a map"),
    /* 831 owner_read_write_accepted */
    MUTANT("831-owner-read-write-refused", 831, "gpu",
           "read-write for the calling device (the owner) is refused with INVALID_DEVICE, as a revoke of it is"),
    /* 831 flags_out_of_range */
    MUTANT("831-flags-masked", 831, "gpu",
           "flags out of range are masked to their low two bits (7 becomes read-write) instead of INVALID_VALUE"),
    /* 831 owner_read_only_refused_not_supported; read_only_peer_access_not_supported (peer) */
    MUTANT("831-read-only-as-read-write", 831, "gpu",
           "read-only access is granted as read-write instead of refused with NOT_SUPPORTED"),
    /* 831 host_location_not_supported */
    MUTANT("831-host-location-accepted", 831, "gpu",
           "descriptors for a host location are skipped: success instead of NOT_SUPPORTED"),
    /* 831 owner_revoke_refused_invalid_device, device_past_last_invalid_device */
    MUTANT("831-invalid-device-as-not-supported", 831, "gpu", "answers NOT_SUPPORTED where the driver says INVALID_DEVICE"),
    /* 831 owner_read_only_refused_not_supported, location_type_invalid_not_supported,
     * host_location_not_supported */
    MUTANT("831-not-supported-as-invalid-device", 831, "gpu", "answers INVALID_DEVICE where the driver says NOT_SUPPORTED"),
    /* 831 grant_read_write_to_peer, reports_peer_grant_and_revoke, default_pool_granted_to_peer,
     * grant_applies_to_existing_allocations_read_and_write (peer); one_map_grants_every_peer (multi) */
    MUTANT("831-peer-grant-ignored", 831, "peer", "a read-write grant to a peer succeeds but is not applied"),
    /* 831 peer_write_refused_after_revoke, reports_peer_grant_and_revoke (peer);
     * revoke_one_peer_others_keep_access (multi) */
    MUTANT("831-peer-revoke-ignored", 831, "peer", "revoking a peer's access succeeds but is not applied"),
    /* 831 conflicting_descriptors_last_wins_driver_behaviour (peer); one_map_grants_every_peer (multi) */
    MUTANT("831-only-first-descriptor", 831, "peer", "only the first descriptor of a map is applied"),
    /* 831 conflicting_descriptors_last_wins_driver_behaviour (peer) */
    MUTANT("831-first-wins", 831, "peer",
           "a map is applied last to first: of two descriptors for one device the first wins"),
    /* issue 23: interposer */
    /* 827 interposer::no_current_context_succeeds */
    /* issue 38: 831 partly_invalid_map_changes_nothing (peer: not shown on one GPU) */
    MUTANT("831-partial-map-applied", 831, "peer",
           "a map is applied one descriptor at a time: those before a bad one stay applied, the refusal answered"),
    MUTANT("827-no-context-crash", 827, "gpu",
           "on a thread with no current context: uses the device it could not get (SIGSEGV)"),
    /* 831 interposer::no_current_context_succeeds */
    MUTANT("831-no-context-crash", 831, "gpu",
           "on a thread with no current context: uses the device it could not get (SIGSEGV)"),
    /* issue 23: edges */
    /* 827 edges_location_type (INT_MIN, UINT_MAX) */
    MUTANT("827-location-type-negative-as-device", 827, "gpu",
           "a location type negative as an int (a signed range check) is answered as a device location"),
    /* 827 edges_location_device_id (-1, INT_MIN) */
    MUTANT("827-negative-device-accepted", 827, "gpu",
           "a negative device ordinal is not checked: success, no access, instead of INVALID_VALUE"),
    /* 831 edges_access_flags (READWRITE with each bit 8-31) */
    MUTANT("831-access-flags-low-byte-only", 831, "gpu",
           "access flags kept in 8 bits: READWRITE with any of bits 8-31 is granted as READWRITE"),
    /* 831 edges_location_type (INT_MIN, UINT_MAX) */
    MUTANT("831-location-type-negative-as-device", 831, "gpu",
           "a location type negative as an int (a signed range check) is taken as a device location"),
    /* 831 edges_location_device_id (-1, INT_MIN) */
    MUTANT("831-negative-device-skipped", 831, "gpu",
           "descriptors for a negative device ordinal are skipped: success instead of the driver's refusal"),
    {0},
};

/* The device of the calling thread's current context (the owner, see above), or -1. */
static CUdevice current_device(void) {
  static CUresult (*get)(CUdevice *);
  if (!get) *(void **)&get = shim_next("cuCtxGetDevice");
  CUdevice d = -1;
  if (!get || get(&d) != CUDA_SUCCESS) return -1;
  return d;
}

static int device_count(void) {
  static CUresult (*count)(int *);
  if (!count) *(void **)&count = shim_next("cuDeviceGetCount");
  int n = 0;
  if (!count || count(&n) != CUDA_SUCCESS) return -1;
  return n;
}

static int is_host(int type) { return type >= 2 && type <= 4; }

HOOK CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool, CUmemLocation *location) {
  BEGIN(827, "cuMemPoolGetAccess", CUresult, (CUmemAccess_flags *, CUmemoryPool, CUmemLocation *));
  shim_no_context_crash(827); /* issue 23: interposer */
  int live = shim_init_state == 1;
  CUmemAccess_flags nowhere;
  CUmemLocation own;
  if (live && !flags && shim_on("827-null-flags-unchecked")) flags = &nowhere;
  if (live && !location && shim_on("827-null-location-owner")) {
    CUdevice d = current_device();
    if (d >= 0) {
      own.type = LOC_DEVICE;
      own.id = d;
      location = &own;
    }
  }
  CUmemLocation as_device;
  if (live && location && location->type < 0 && shim_on("827-location-type-negative-as-device")) {
    as_device = *location;
    as_device.type = LOC_DEVICE;
    location = &as_device;
  }
  CUresult r = real(flags, pool, location);
  if (r == 0 && flags && shim_on("garbage-827")) *flags = 0x7f7f;
  if (live && r == CUDA_ERROR_INVALID_VALUE && pool && flags && location && location->type == LOC_DEVICE &&
      location->id < 0 && shim_on("827-negative-device-accepted")) {
    *flags = ACCESS_NONE;
    return CUDA_SUCCESS;
  }
  if (!live) return r;
  if (r == CUDA_ERROR_INVALID_VALUE && !pool && shim_on("827-null-pool-invalid-handle")) return CUDA_ERROR_INVALID_HANDLE;
  if (r == CUDA_ERROR_INVALID_VALUE && pool && flags && location) {
    int type = location->type;
    if (type != LOC_DEVICE && !is_host(type) && shim_on("827-bad-location-type-accepted")) {
      *flags = ACCESS_NONE;
      return CUDA_SUCCESS;
    }
    int n = type == LOC_DEVICE ? device_count() : -1;
    if (n >= 0 && location->id >= n && shim_on("827-past-last-accepted")) {
      *flags = ACCESS_NONE;
      return CUDA_SUCCESS;
    }
  }
  if (r == CUDA_SUCCESS && flags && location) {
    if (is_host(location->type) && shim_on("827-host-reported-read-write")) *flags = ACCESS_READ_WRITE;
    if (location->type == LOC_DEVICE) {
      CUdevice cur = current_device();
      if (cur >= 0 && location->id == cur) {
        if (*flags == ACCESS_READ_WRITE && shim_on("827-owner-reported-none")) *flags = ACCESS_NONE;
      } else if (cur >= 0) {
        if (*flags == ACCESS_READ_WRITE && shim_on("827-peer-grant-not-reported"))
          *flags = ACCESS_NONE;
        else if (*flags == ACCESS_NONE && shim_on("827-peer-reported-read-write"))
          *flags = ACCESS_READ_WRITE;
      }
    }
  }
  return r;
}

/* The map mutants of 831 rewrite a copy of the map: this many descriptors live on the stack. */
#define MAP_ON_STACK 16

HOOK CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count) {
  BEGIN(831, "cuMemPoolSetAccess", CUresult, (CUmemoryPool, const CUmemAccessDesc *, size_t));
  shim_no_context_crash(831); /* issue 23: interposer */
  if (shim_init_state != 1) return real(pool, map, count);
  if (!pool && shim_on("831-null-pool-current-pool")) {
    static CUresult (*get_pool)(CUmemoryPool *, CUdevice);
    if (!get_pool) *(void **)&get_pool = shim_next("cuDeviceGetMemPool");
    CUdevice d = current_device();
    CUmemoryPool p = NULL;
    if (get_pool && d >= 0 && get_pool(&p, d) == CUDA_SUCCESS) pool = p;
  }
  if (pool && !map && count && shim_on("831-null-map-accepted")) return CUDA_SUCCESS;
  if (pool && map && !count && shim_on("831-count-zero-refused")) return CUDA_ERROR_INVALID_VALUE;
  if (pool && map && count > 1 && shim_on("831-partial-map-applied")) {
    for (size_t i = 0; i < count; i++) {
      CUresult r = real(pool, map + i, 1);
      if (r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
  }
  if (pool && map && count == 1 && map[0].location.type == 1 && map[0].flags == 3 &&
      map[0].location.id == current_device() && shim_on("831-owner-read-write-refused"))
    return CUDA_ERROR_INVALID_DEVICE;

  CUresult r;
  int only_first = 0, first_wins = 0, masked = 0, read_only = 0, host = 0, grant = 0, revoke = 0;
  int low_byte = 0, negative_type = 0, negative_id = 0;
  if (map && count) {
    only_first = count > 1 && shim_on("831-only-first-descriptor");
    first_wins = count > 1 && shim_on("831-first-wins");
    masked = shim_on("831-flags-masked");
    read_only = shim_on("831-read-only-as-read-write");
    host = shim_on("831-host-location-accepted");
    grant = shim_on("831-peer-grant-ignored");
    revoke = shim_on("831-peer-revoke-ignored");
    low_byte = shim_on("831-access-flags-low-byte-only");
    negative_type = shim_on("831-location-type-negative-as-device");
    negative_id = shim_on("831-negative-device-skipped");
  }
  if (only_first || first_wins || masked || read_only || host || grant || revoke || low_byte || negative_type ||
      negative_id) {
    CUmemAccessDesc on_stack[MAP_ON_STACK];
    CUmemAccessDesc *copy = count <= MAP_ON_STACK ? on_stack : malloc(count * sizeof *copy);
    if (!copy) return real(pool, map, count);
    CUdevice cur = (grant || revoke) ? current_device() : -1;
    int devices = (grant || revoke) ? device_count() : 0;
    size_t n = 0, take = only_first ? 1 : count;
    for (size_t i = 0; i < take; i++) {
      CUmemAccessDesc d = map[first_wins ? count - 1 - i : i];
      if (masked) d.flags &= ACCESS_READ_WRITE;
      if (low_byte) d.flags &= 0xffu;
      if (negative_type && d.location.type < 0) d.location.type = LOC_DEVICE;
      if (negative_id && d.location.type == LOC_DEVICE && d.location.id < 0) continue;
      if (read_only && d.flags == ACCESS_READ) d.flags = ACCESS_READ_WRITE;
      if (host && is_host(d.location.type)) continue;
      int peer = cur >= 0 && d.location.type == LOC_DEVICE && d.location.id != cur && d.location.id >= 0 &&
                 d.location.id < devices;
      if (grant && peer && d.flags == ACCESS_READ_WRITE) continue;
      if (revoke && peer && d.flags == ACCESS_NONE) continue;
      copy[n++] = d;
    }
    /* Everything skipped: an empty map (the driver still judges the pool). */
    r = real(pool, copy, n);
    if (copy != on_stack) free(copy);
  } else {
    r = real(pool, map, count);
  }
  if (r == CUDA_ERROR_INVALID_DEVICE && shim_on("831-invalid-device-as-not-supported")) return CUDA_ERROR_NOT_SUPPORTED;
  if (r == CUDA_ERROR_NOT_SUPPORTED && shim_on("831-not-supported-as-invalid-device")) return CUDA_ERROR_INVALID_DEVICE;
  return r;
}

const struct shim_hook access_hooks[] = {
    {"cuMemPoolGetAccess", (void *)cuMemPoolGetAccess},
    {"cuMemPoolSetAccess", (void *)cuMemPoolSetAccess},
    {0},
};
