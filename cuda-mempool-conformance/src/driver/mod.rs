//! Layer 1, the driver as the suite sees it: the entry-point table and tracked calls, breadcrumbs,
//! the ledger of what a process holds, observations and blame, checked calls, declared departures
//! and hangs (judged by the run's `departures::Policy`), the run's `deadline::Deadline`, figures of a GPU
//! model, which APIs the mutation library saw a trial reach, and what the library opened while an
//! entry point was looked up. What the harness tells this floor (how to fill the table, the
//! deadline, the policy) comes as arguments: nothing here reads a `CONFORMANCE_*` setting of a run
//! (only the sys crate's library variable, CUDA_MEMPOOL_SYS_LIBCUDA, which names the library to
//! open, and the breadcrumb protocol between the suite and its children).
//! Nothing here imports another layer.

pub mod apis;
pub mod blame;
pub mod calls;
pub mod check;
pub mod crumb;
pub mod cu;
pub mod deadline;
pub mod departures;
pub mod entry;
pub mod fail;
pub mod figures;
pub mod hangs;
pub mod ledger;
pub mod lookups;
pub mod observe;
pub mod timed;

pub use apis::{api_name, APIS};
pub use fail::{Fail, R};
