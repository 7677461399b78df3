//! The three settings the driver floor needs (how the entry points are filled, whether every
//! departure fails, the trial deadline), typed, as `harness::settings` hands them down.
//!
//! Why handed down: the settings are read and parsed in one place, `harness::settings`, which sits
//! above this floor; the driver may not import it. So the types live here, on the lowest floor that
//! uses them (`entry::Entry`, a bool, a `Duration`), and the harness hands their values down once per
//! process, the first time anything asks for the settings (every `main` of the crate does so before
//! its first driver call, and so does the mutation runner before its probe). Until then, and in a
//! unit test that never asks, the driver sees the defaults: the values an unset environment gives.

use crate::driver::entry::Entry;
use std::sync::OnceLock;
use std::time::Duration;

/// The default trial deadline (CONFORMANCE_TRIAL_TIMEOUT unset).
pub const DEFAULT_TRIAL_TIMEOUT: Duration = Duration::from_secs(60);

/// What the driver floor is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Given {
    /// CONFORMANCE_ENTRY: how the table of entry points is filled.
    pub entry: Entry,
    /// CONFORMANCE_STRICT=documented: every departure from the documentation fails.
    pub strict: bool,
    /// CONFORMANCE_TRIAL_TIMEOUT: how long a trial may go without an answer.
    pub trial: Duration,
}

impl Default for Given {
    fn default() -> Given {
        Given {
            entry: Entry::ProcAddress,
            strict: false,
            trial: DEFAULT_TRIAL_TIMEOUT,
        }
    }
}

static GIVEN: OnceLock<Given> = OnceLock::new();

/// Take the settings (once per process: `harness::settings` reads them once; a second hand-down
/// changes nothing).
pub fn hand_down(g: Given) {
    let _ = GIVEN.set(g);
}

/// The settings handed down; the defaults while none were (nothing is cached then, so a unit test
/// that reads the settings later still hands its own down).
pub fn given() -> Given {
    GIVEN.get().copied().unwrap_or_default()
}
