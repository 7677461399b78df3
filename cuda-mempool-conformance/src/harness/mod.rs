//! Layer 2, the harness: the machine and the devices a run uses, the case model and its placement, one typed result
//! vocabulary, one way to start a child of this binary (and the channel to it, and the kept importers), the probe (and
//! its measure of the library's wait at a new process's first GPU work), the suite's own footprint on a device, running a case in this process, the verdict, the leak check,
//! and where a report came from. Imports only `driver` and `os`.

pub mod bounded;
pub mod cap;
pub mod case;
pub mod channel;
pub mod checkpoint;
pub mod child;
pub mod devices;
pub mod execute;
pub mod expect;
pub mod first_work;
pub mod footprint;
pub mod gpu_model;
pub mod identity;
pub mod kept_children;
pub mod leaks;
pub mod machine;
pub mod outcome;
pub mod placement;
pub mod precondition;
pub mod probe;
pub mod provenance;
pub mod settings;
pub mod verdict;

pub use case::{Case, Crash, Env, Group, Per, Shared, SIGSEGV, SIGSEGV_OR_SIGABRT};
pub use child::{run_child, run_child_for, CHILD_VAR};
pub use machine::{Cap, Machine};
pub use outcome::{Answer, Kind, Outcome, Raw, Record};
pub use placement::{Need, Placement, SERIAL};
