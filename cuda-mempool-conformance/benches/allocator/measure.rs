//! What every group of the bench is measured with and gives back: the counts of a run (`Scale`: the
//! full run's and the smoke run's) and a result row (`Row`, made by `row` from a group's samples).

/// Counts for a full run and for the smoke run under `cargo test`.
#[derive(Clone, Copy)]
pub(super) struct Scale {
    pub(super) ffi_rounds: usize,
    pub(super) ffi_iters: usize,
    pub(super) pair_iters_small: usize,
    pub(super) pair_iters_large: usize,
    pub(super) reuse_iters: usize,
    pub(super) ipc_ptrs: usize,
    /// Pairs per thread per round, and rounds, of the threads group.
    pub(super) thread_pairs: usize,
    pub(super) thread_rounds: usize,
    pub(super) capture_iters: usize,
    /// Rounds of the api group, calls per round, and calls per round of its IPC cases.
    pub(super) api_rounds: usize,
    pub(super) api_calls: usize,
    pub(super) api_ipc_calls: usize,
}
pub(super) const FULL: Scale = Scale {
    ffi_rounds: 31,
    ffi_iters: 20_000,
    pair_iters_small: 2_000,
    pair_iters_large: 40,
    reuse_iters: 2_000,
    ipc_ptrs: 200,
    thread_pairs: 2_000,
    thread_rounds: 7,
    capture_iters: 2_000,
    api_rounds: 31,
    api_calls: 10_000,
    api_ipc_calls: 200,
};
pub(super) const SMOKE: Scale = Scale {
    ffi_rounds: 3,
    ffi_iters: 100,
    pair_iters_small: 5,
    pair_iters_large: 2,
    reuse_iters: 5,
    ipc_ptrs: 3,
    thread_pairs: 5,
    thread_rounds: 1,
    capture_iters: 5,
    api_rounds: 3,
    api_calls: 20,
    api_ipc_calls: 3,
};

pub(super) struct Row {
    pub(super) group: &'static str,
    pub(super) case: String,
    pub(super) unit: &'static str,
    pub(super) median: f64,
    pub(super) min: f64,
    pub(super) max: f64,
    pub(super) iters: usize,
}

pub(super) fn row(group: &'static str, case: String, unit: &'static str, mut v: Vec<f64>) -> Row {
    v.sort_by(|a, b| a.total_cmp(b));
    let iters = v.len();
    Row {
        group,
        case,
        unit,
        median: v[iters / 2],
        min: v[0],
        max: v[iters - 1],
        iters,
    }
}
