//! One module per API group. Each exposes `cases() -> Vec<Case>`.

pub mod access;
pub mod alloc;
pub mod attr;
pub mod ipc;
pub mod pool;
pub mod uninit;

use crate::harness::Case;

/// Every case of the suite, in API order.
pub fn all() -> Vec<Case> {
    let mut v = Vec::new();
    v.extend(uninit::cases());
    v.extend(alloc::cases());
    v.extend(pool::cases());
    v.extend(ipc::cases());
    v.extend(access::cases());
    v.extend(attr::cases());
    v.sort_by_key(|c| c.api);
    v
}
