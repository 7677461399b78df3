//! The suite's list of cases: every API group's cases, in API order, harness cases last.

use crate::harness::Case;

/// Every case of the suite, in API order (harness cases last).
pub fn all() -> Vec<Case> {
    let mut v = Vec::new();
    v.extend(super::uninit::cases());
    v.extend(super::entry::cases());
    v.extend(super::alloc::cases());
    v.extend(super::stream_order::cases());
    v.extend(super::pool::cases());
    v.extend(super::poolless::cases());
    v.extend(super::ipc::cases());
    v.extend(super::access::cases());
    v.extend(super::attr::cases());
    v.extend(super::managed::cases());
    v.extend(super::printed::cases());
    v.extend(super::edges::cases());
    v.extend(super::xproc::cases());
    v.extend(super::capture::cases());
    v.extend(super::accounting::cases());
    v.extend(super::caps::cases());
    v.extend(super::load::cases());
    v.extend(super::peer::cases());
    v.extend(super::peer_hygiene::cases());
    v.extend(super::multi::cases());
    v.extend(super::interposer::cases());
    v.extend(super::vaspace::cases());
    v.extend(super::checkpoint::cases());
    v.sort_by_key(|c| c.group);
    v
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// Every trial that hands the driver a handle the driver freed, declared with
    /// `Case::hands_freed_handles` (a process of its own), and why (issue 58).
    const HANDS_FREED: &[(&str, &str)] = &[
        (
            "820_cuMemAllocAsync::destroyed_stream_crashes_driver",
            "cuMemAllocAsync on a destroyed stream",
        ),
        (
            "821_cuMemAllocFromPoolAsync::destroyed_pool",
            "cuMemAllocFromPoolAsync on a destroyed pool",
        ),
        (
            "822_cuMemFreeAsync::double_free",
            "a second cuMemFreeAsync of one pointer",
        ),
        (
            "822_cuMemFreeAsync::accounting::pool_usable_after_a_refused_double_free",
            "a second cuMemFreeAsync of one pointer",
        ),
        (
            "824_cuMemPoolDestroy::destroy_twice",
            "a second cuMemPoolDestroy of one pool",
        ),
        (
            "824_cuMemPoolDestroy::interposer::no_current_context_succeeds",
            "cuMemAllocFromPoolAsync on the pool it destroyed",
        ),
    ];

    /// Trials whose names suggest a freed handle ([`SUGGEST`]) but that hand the driver none, and why.
    const REVIEWED: &[(&str, &str)] = &[
        (
            "824_cuMemPoolDestroy::checkpoint::destroy_and_create_after_restore",
            "destroys a live pool once (taken from its guard) after the checkpoint, then creates another: \
             nothing destroyed or freed is handed back",
        ),
        (
            "822_cuMemFreeAsync::same_stream_reuse_after_free",
            "the freed block comes back through a new allocation; the freed pointer is only compared",
        ),
        (
            "822_cuMemFreeAsync::free_after_pool_destroyed",
            "the pool is destroyed with a live allocation (documented: its resources go once that is \
             freed); the free hands over the live pointer, not the pool",
        ),
        (
            "822_cuMemFreeAsync::same_process_import_freed_before_the_exporter",
            "the import and the allocation are freed once each",
        ),
        (
            "823_cuMemPoolCreate::device_pool_created_and_destroyed",
            "destroyed once, not used after",
        ),
        (
            "823_cuMemPoolCreate::managed_pool_created_and_destroyed",
            "destroyed once, not used after",
        ),
        (
            "823_cuMemPoolCreate::vaspace::create_max_size_0_destroy_gives_back",
            "destroyed once, not used after",
        ),
        (
            "823_cuMemPoolCreate::vaspace::create_max_size_2_mib_destroy_gives_back",
            "destroyed once, not used after",
        ),
        (
            "823_cuMemPoolCreate::vaspace::create_max_size_1_gib_destroy_gives_back",
            "destroyed once, not used after",
        ),
        (
            "824_cuMemPoolDestroy::serial::destroying_current_pool_restores_default",
            "after the destroy only the device's current pool is asked for",
        ),
        (
            "824_cuMemPoolDestroy::destroy_with_outstanding_allocation_then_free",
            "the allocation outlives its destroyed pool (documented); the pool is not used after",
        ),
        (
            "824_cuMemPoolDestroy::destroy_imported_pool",
            "the imported pool is destroyed once",
        ),
        (
            "824_cuMemPoolDestroy::destroyed_pool_grants_do_not_reach_a_new_pool",
            "the destroyed handle is only compared with the new pools' handles",
        ),
        (
            "829_cuMemPoolImportFromShareableHandle::import_same_fd_twice",
            "the second import's pool is destroyed only where it is not the first's",
        ),
        (
            "829_cuMemPoolImportFromShareableHandle::import_same_fd_twice_gives_same_pool",
            "the second import's pool is destroyed only where it is not the first's",
        ),
        (
            "829_cuMemPoolImportFromShareableHandle::vaspace::import_figures_and_destroy_gives_back",
            "the imported pool is destroyed once",
        ),
        (
            "824_cuMemPoolDestroy::checkpoint::destroy_and_create_after_restore",
            "destroys a live pool once, after the checkpoint (its allocation freed first)",
        ),
        (
            "830_cuMemPoolImportPointer::import_same_pointer_twice",
            "the second import is freed only where it is not the first's address",
        ),
        (
            "830_cuMemPoolImportPointer::import_same_pointer_twice_gives_same_address",
            "the second import is freed only where it is not the first's address",
        ),
        (
            "830_cuMemPoolImportPointer::imported_pointer_freed_with_cuMemFree",
            "freed once",
        ),
        (
            "830_cuMemPoolImportPointer::same_pointer_imported_twice_survives_one_free",
            "this trial's process frees nothing twice; its importer's second free of one address (R580: the \
             address the first free unmapped) is the importer's, as in the concurrent imports' second frees",
        ),
    ];

    /// Words of a case's name that suggest it hands the driver something freed.
    const SUGGEST: &[&str] = &["destroy", "double", "twice", "stale", "freed", "dangling", "after_free"];

    fn names(rows: &[(&str, &str)]) -> BTreeSet<String> {
        rows.iter().map(|(n, _)| n.to_string()).collect()
    }

    /// The trials declared with `Case::hands_freed_handles` are exactly [`HANDS_FREED`], and each
    /// runs in a process of its own: a new one must be added to the table, and a row dropped from
    /// it fails here until its builder goes too.
    #[test]
    fn trials_that_hand_the_driver_freed_handles_are_declared() {
        let all = super::all();
        let declared: BTreeSet<String> = all
            .iter()
            .filter(|c| c.placement.hands_freed_handles())
            .map(|c| c.trial_name())
            .collect();
        assert_eq!(declared, names(HANDS_FREED));
        for c in all.iter().filter(|c| c.placement.hands_freed_handles()) {
            assert!(
                c.placement.own_process(),
                "{} hands the driver freed handles but shares its process",
                c.trial_name()
            );
        }
    }

    /// A case whose name suggests a freed handle is in [`HANDS_FREED`] or was reviewed
    /// ([`REVIEWED`], with the reason it hands none); no row names a trial that no longer exists.
    #[test]
    fn names_that_suggest_freed_handles_are_reviewed() {
        let all = super::all();
        let known: BTreeSet<String> = all.iter().map(|c| c.trial_name()).collect();
        let (freed, reviewed) = (names(HANDS_FREED), names(REVIEWED));
        for c in &all {
            let n = c.trial_name();
            if SUGGEST.iter().any(|w| c.name.to_lowercase().contains(w)) {
                assert!(
                    freed.contains(&n) || reviewed.contains(&n),
                    "{n}: does it hand the driver a destroyed pool or stream, or a freed pointer? Declare it \
                     with Case::hands_freed_handles and add it to HANDS_FREED, or add it to REVIEWED with why not"
                );
            }
        }
        for n in freed.union(&reviewed) {
            assert!(known.contains(n), "{n} is listed but is no trial of the suite");
        }
        assert!(freed.is_disjoint(&reviewed));
    }
}
