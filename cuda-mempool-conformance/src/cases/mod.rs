//! Layer 3, the cases: one module per API group, each exposing `cases() -> Vec<Case>`, gathered in
//! `all`. A case file imports `prelude` (the driver and harness faces) and nothing of `report`, `run`
//! or `suite`. A case that provokes out-of-memory, or watches a pool's reserved memory or block
//! reuse, says `.alone()` where it is defined: another trial's refused oversized allocation releases
//! the unused memory of every pool of its process.

pub mod access;
pub mod accounting;
mod all;
pub mod alloc;
pub mod attr;
pub mod caps;
pub mod capture;
pub mod checkpoint;
pub mod edges;
pub mod entry;
pub mod interposer;
pub mod ipc;
pub mod load;
pub mod managed;
mod messages;
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

pub use all::all;
