//! What this process holds: every pool it created or imported and every allocation it made or
//! imported, recorded by the tracked calls in `cu.rs` on success and struck off by the calls that
//! release them. At the end of a run each worker reports what is still on the ledger, with the
//! trial that created it: that, not device-wide free memory, is what "the suite leaked" means.

use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Clone, Debug)]
pub struct Entry {
    /// e.g. "pool from cuMemPoolCreate", "2097152-byte allocation from cuMemAllocAsync".
    pub what: String,
    /// The trial that was running when it was created ("" outside trials).
    pub trial: String,
}

#[derive(Default)]
struct Ledger {
    trial: String,
    pools: BTreeMap<usize, Entry>,
    allocations: BTreeMap<u64, Entry>,
}

static LEDGER: Mutex<Ledger> = Mutex::new(Ledger {
    trial: String::new(),
    pools: BTreeMap::new(),
    allocations: BTreeMap::new(),
});

fn with<T>(f: impl FnOnce(&mut Ledger) -> T) -> T {
    f(&mut LEDGER.lock().unwrap_or_else(|p| p.into_inner()))
}

/// Name the trial that what follows belongs to.
pub fn set_trial(name: &str) {
    with(|l| l.trial = name.to_string());
}

pub fn pool_added(pool: usize, source: &str) {
    with(|l| {
        let e = Entry {
            what: format!("pool {pool:#x} from {source}"),
            trial: l.trial.clone(),
        };
        // Importing a handle already held returns the same pool: one entry, one destroy.
        l.pools.entry(pool).or_insert(e);
    });
}

pub fn pool_removed(pool: usize) {
    with(|l| {
        l.pools.remove(&pool);
    });
}

pub fn allocation_added(ptr: u64, bytes: usize, source: &str) {
    if ptr == 0 {
        return; // size 0 returns no memory
    }
    with(|l| {
        let e = Entry {
            what: format!("{bytes}-byte allocation {ptr:#x} from {source}"),
            trial: l.trial.clone(),
        };
        l.allocations.insert(ptr, e);
    });
}

pub fn allocation_removed(ptr: u64) {
    with(|l| {
        l.allocations.remove(&ptr);
    });
}

/// Everything still held: "<what> (created in trial T)".
pub fn outstanding() -> Vec<String> {
    with(|l| {
        l.pools
            .values()
            .chain(l.allocations.values())
            .map(|e| {
                if e.trial.is_empty() {
                    format!("{} never released", e.what)
                } else {
                    format!("{} never released (created in trial {})", e.what, e.trial)
                }
            })
            .collect()
    })
}

/// Forget everything (a fresh process starts empty; used by tests of the ledger itself).
pub fn clear() {
    with(|l| {
        l.pools.clear();
        l.allocations.clear();
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn records_and_strikes_off() {
        clear();
        set_trial("t1");
        pool_added(0x10, "cuMemPoolCreate");
        allocation_added(0x2000, 64, "cuMemAllocFromPoolAsync");
        allocation_added(0, 0, "cuMemAllocAsync");
        pool_added(0x10, "cuMemPoolImportFromShareableHandle");
        assert_eq!(outstanding().len(), 2);
        assert!(outstanding()[0].contains("created in trial t1"));
        allocation_removed(0x2000);
        pool_removed(0x10);
        assert!(outstanding().is_empty());
    }
}
