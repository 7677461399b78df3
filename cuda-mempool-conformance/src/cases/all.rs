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
