//! What a case file needs, in one import: the driver as the suite sees it, checked calls, the
//! case model and the typed results.

pub use crate::driver::check::*;
pub use crate::driver::cu::*;
pub use crate::driver::deadline::Deadline;
pub use crate::driver::departures::{crash_verified_here, expect_behaviour, expect_code, Policy};
pub use crate::driver::fail::{ignore, Fail, R};
pub use crate::driver::{api_name, blame, observe};
pub use crate::ensure;
pub use crate::harness::checkpoint;
pub use crate::harness::child::Role;
pub use crate::harness::precondition::Precondition;
pub use crate::harness::{Cap, Case, Crash, Env, Group, Shared, SIGSEGV, SIGSEGV_OR_SIGABRT};
