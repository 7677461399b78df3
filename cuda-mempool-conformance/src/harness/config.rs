//! The run's settings from the environment, checked before any trial: required capabilities and
//! the trial deadline (and the crash cases' bound, derived from it).

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

pub const DEFAULT_TRIAL_TIMEOUT: Duration = Duration::from_secs(60);

/// CONFORMANCE_TRIAL_TIMEOUT=SECS: how long one trial may go without an answer.
pub fn trial_timeout() -> Result<Duration, String> {
    match std::env::var("CONFORMANCE_TRIAL_TIMEOUT") {
        Err(_) => Ok(DEFAULT_TRIAL_TIMEOUT),
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(s) if (1.0..=86400.0).contains(&s) => Ok(Duration::from_secs_f64(s)),
            _ => Err(format!(
                "CONFORMANCE_TRIAL_TIMEOUT={v:?}: expected a number of seconds from 1 to 86400 (default {})",
                DEFAULT_TRIAL_TIMEOUT.as_secs()
            )),
        },
    }
}

/// A crash case's bound: it should die at once, and a hang must not cost a full trial deadline.
pub fn crash_timeout(trial: Duration) -> Duration {
    trial.min(Duration::from_secs(20))
}
