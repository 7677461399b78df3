//! The list of capture cases: the captured allocations, then the pool calls during a capture.

use crate::cases::prelude::*;

/// Every capture case, in that order.
pub fn cases() -> Vec<Case> {
    let mut v = super::allocs::cases();
    v.extend(super::pool_calls::cases());
    v
}
