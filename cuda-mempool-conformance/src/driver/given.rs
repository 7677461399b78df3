//! The three settings the driver floor needs (how the entry points are filled, whether every
//! departure fails, the trial deadline), typed, as each process's entry point hands them down.
//!
//! Why handed down: the settings are read and parsed in one place, `harness::settings`, which sits
//! above this floor; the driver may not import it. So the types live here, on the lowest floor that
//! uses them (`entry::Entry`, a bool, a `Duration`), and every entry point of a process hands their
//! values down (`harness::settings::Settings::at_entry`) before its first driver call.
//!
//! Why one process-wide store, set once, rather than a value in every call: the driver floor reads
//! them where no caller's value reaches. The trial deadline bounds a gate's hold inside the host
//! function the driver calls back (`check::gate_wait`, an `extern "C"` callback with only the
//! gate's pointer), and every wait the floor derives (`deadline`) is taken by the checked-call
//! helpers and departure checks that every case calls with no context; strictness is judged in
//! those same checks; the entry mode is read once, when the one entry-point table of the process is
//! filled (`cu::load`). The store is no default: [`given`] before [`install`] panics, naming the
//! bug (an entry point that reads no settings), and a second [`install`] of other values panics too.
//! Unit tests install [`Given::unset`] explicitly ([`install`]), the values an unset environment
//! gives.

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

impl Given {
    /// The values an unset environment gives (what a test installs).
    pub const fn unset() -> Given {
        Given {
            entry: Entry::ProcAddress,
            strict: false,
            trial: DEFAULT_TRIAL_TIMEOUT,
        }
    }
}

static GIVEN: OnceLock<Given> = OnceLock::new();

/// Take this process's values, once, at its entry point. Installing the same values again changes
/// nothing (a test binary whose tests each install theirs); other values are a bug and panic.
pub fn install(g: Given) {
    let now = *GIVEN.get_or_init(|| g);
    assert_eq!(
        now, g,
        "driver::given::install: the driver floor was handed {g:?} after {now:?}; a process reads its settings \
         once, at its entry point"
    );
}

/// The values the entry point installed. Panics where none did: a bug (a process's entry point, a
/// test binary or a unit test that reached the driver floor without `install`), never a default.
pub fn given() -> Given {
    *GIVEN.get().expect(
        "driver::given: read before this process's entry point installed the driver's settings (a bug: every \
         entry point calls harness::settings::Settings::at_entry, and a test driver::given::install, before \
         its first driver call)",
    )
}
