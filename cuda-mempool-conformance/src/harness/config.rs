//! The run's settings from the environment, checked before any trial: required capabilities and
//! the trial deadline (its waits derived in `driver::deadline`).

use crate::harness::machine::{Cap, ALL_CAPS};
use std::time::Duration;

/// CONFORMANCE_REQUIRE=gpu,ipc,...: capabilities whose absence is a failure, not an ignore.
pub fn required_caps() -> Result<Vec<Cap>, String> {
    let Ok(v) = std::env::var("CONFORMANCE_REQUIRE") else {
        return Ok(vec![]);
    };
    let mut caps = Vec::new();
    for name in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match ALL_CAPS.iter().find(|c| c.1 == name) {
            Some(c) => caps.push(c.0),
            None => {
                let known: Vec<&str> = ALL_CAPS.iter().map(|c| c.1).collect();
                return Err(format!(
                    "CONFORMANCE_REQUIRE={v:?}: unknown capability {name:?}; known: {} (comma-separated)",
                    known.join(", ")
                ));
            }
        }
    }
    Ok(caps)
}

pub use crate::driver::deadline::{trial_timeout, DEFAULT_TRIAL_TIMEOUT};

/// A crash case's bound: it should die at once, and a hang must not cost a full trial deadline.
pub fn crash_timeout(trial: Duration) -> Duration {
    crate::driver::deadline::crash(trial)
}
