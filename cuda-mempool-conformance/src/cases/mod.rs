//! Layer 3, the cases: one module per API group, each exposing `cases() -> Vec<Case>`. A case file
//! imports `prelude` (the driver and harness faces) and nothing of `report`, `run` or `suite`.

pub mod access;
pub mod accounting;
pub mod alloc;
pub mod attr;
pub mod caps;
pub mod capture;
pub mod edges;
pub mod entry;
pub mod interposer;
pub mod ipc;
pub mod load;
pub mod managed;
pub mod multi;
pub mod peer;
pub mod peer_hygiene;
pub mod pool;
pub mod poolless;
pub mod prelude;
pub mod printed;
pub mod stream_order;
pub mod uninit;
pub mod vaspace;
pub mod xproc;

use crate::harness::Case;

/// Cases that provoke out-of-memory, or watch a pool's reserved memory or block reuse. In a
/// worker process each trial runs alone, so nothing disturbs them; when trials share one process
/// (CONFORMANCE_WORKERS=0) they run alone there too. (Sharing a process once made
/// `833 trim_to_zero_releases_unused` see its pool's reserved memory at 0 before trimming, H100,
/// R580: another trial's failed oversized allocation releases the unused memory of every pool of
/// the process.)
const MEMORY_SENSITIVE: &[&str] = &[
    "huge_size_out_of_memory",
    "huge_size_leaves_other_pools_reserved",
    "max_size_limits_allocation",
    "release_threshold_max_keeps_memory",
    "release_threshold_zero_releases_at_sync",
    "reserved_mem_grows_in_whole_chunks_driver_behaviour",
    "reserved_mem_high_reset_to_current",
    "used_mem_high_reset_to_current",
    "used_mem_exact_accounting",
    "used_mem_counts_requested_bytes",
    "high_water_marks_keep_the_peak",
    "trim_to_zero_releases_unused",
    "trim_keeps_min_bytes",
    "trim_keeps_memory_in_use",
    "trim_below_a_chunk_keeps_the_chunk_in_use",
    "trim_below_a_chunk_keeps_one_chunk",
    "managed_pool_trim_releases_unused",
    "managed_pool_attributes",
    "same_stream_reuse_after_free",
    "reuse_follow_event_dependencies_on_reuses_across_streams",
    "reuse_follow_event_dependencies_off_does_not",
    "reuse_opportunistic_on_reuses_completed_free",
    "reuse_opportunistic_off_still_reuses_completed_free_driver_behaviour",
    "reuse_internal_dependencies_on_waits_for_pending_free",
    "reuse_internal_dependencies_off_out_of_memory",
    "stream_order::refused_at_once_while_its_stream_is_held",
    "accounting::allocation_counted_before_its_stream_runs",
    "accounting::pending_free_uncounted_at_once_but_kept_reserved",
    "accounting::trim_keeps_memory_of_a_pending_free",
    "accounting::cuMemAlloc_leaves_the_pools_alone",
    "accounting::cuMemFree_takes_stream_ordered_memory",
    "accounting::pool_usable_after_a_refused_double_free",
    "caps::beyond_reported_total_out_of_memory",
    "caps::beyond_reported_total_out_of_memory_ipc_pool",
    "caps::pool_memory_shows_in_mem_get_info",
];

/// Every case of the suite, in API order (harness cases last).
pub fn all() -> Vec<Case> {
    let mut v = Vec::new();
    v.extend(uninit::cases());
    v.extend(entry::cases());
    v.extend(alloc::cases());
    v.extend(stream_order::cases());
    v.extend(pool::cases());
    v.extend(poolless::cases());
    v.extend(ipc::cases());
    v.extend(access::cases());
    v.extend(attr::cases());
    v.extend(managed::cases());
    v.extend(printed::cases());
    v.extend(edges::cases());
    v.extend(xproc::cases());
    v.extend(capture::cases());
    v.extend(accounting::cases());
    v.extend(caps::cases());
    v.extend(load::cases());
    v.extend(peer::cases());
    v.extend(peer_hygiene::cases());
    v.extend(multi::cases());
    v.extend(interposer::cases());
    v.extend(vaspace::cases());
    for c in &mut v {
        if MEMORY_SENSITIVE.contains(&c.name.as_str()) {
            c.alone = true;
        }
    }
    v.sort_by_key(|c| c.group);
    v
}
