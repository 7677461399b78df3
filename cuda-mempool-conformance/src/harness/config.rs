//! The run's settings from the environment, checked before any trial: required capabilities, the
//! trial deadline (its waits derived in `driver::deadline`), the whole run's budget, and how much
//! the terminal's last screen shows, and the helper children's hardware connections.

use crate::harness::machine::{Cap, ALL_CAPS};
use std::time::Duration;

/// CONFORMANCE_REQUIRE=gpu,ipc,...: capabilities whose absence is a failure, not an ignore.
pub fn required_caps() -> Result<Vec<Cap>, String> {
    let Some(v) = crate::os::setting("CONFORMANCE_REQUIRE") else {
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

pub const RUN_BUDGET_VAR: &str = "CONFORMANCE_RUN_BUDGET";

/// CONFORMANCE_RUN_BUDGET=SECS: the whole run's wall-time budget (unset: none). When it runs out
/// the run is interrupted (`run::interrupt`): no trial starts, the rest are recorded `interrupted`.
pub fn run_budget() -> Result<Option<Duration>, String> {
    budget(crate::os::setting(RUN_BUDGET_VAR).as_deref())
}

fn budget(v: Option<&str>) -> Result<Option<Duration>, String> {
    match v.map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => match v.parse::<f64>() {
            Ok(s) if s > 0.0 && s <= 7.0 * 86400.0 => Ok(Some(Duration::from_secs_f64(s))),
            _ => Err(format!(
                "{RUN_BUDGET_VAR}={v:?}: expected the run's budget in seconds, a number above 0 and at most \
                 604800 (e.g. {RUN_BUDGET_VAR}=120); unset it for no budget"
            )),
        },
    }
}

pub const VERBOSE_VAR: &str = "CONFORMANCE_VERBOSE";

/// CONFORMANCE_VERBOSE=0|1 (unset: 0): 1 prints every ignored trial and every failure on the
/// terminal's last screen, not only the reasons and the first ones.
pub fn verbose() -> Result<bool, String> {
    match crate::os::setting(VERBOSE_VAR).as_deref().map(str::trim) {
        None | Some("0") | Some("") => Ok(false),
        Some("1") => Ok(true),
        Some(v) => Err(format!(
            "{VERBOSE_VAR}={v:?}: expected 1 (the last screen lists every ignored trial and failure) or 0 \
             (grouped by reason, the default)"
        )),
    }
}

pub const HELPER_CONNECTIONS_VAR: &str = "CONFORMANCE_HELPER_CONNECTIONS";
/// The driver's own setting, which the helpers then inherit as every other process does.
pub const MAX_CONNECTIONS_VAR: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

/// CONFORMANCE_HELPER_CONNECTIONS=N|inherit (unset: 1): CUDA_DEVICE_MAX_CONNECTIONS for the
/// suite's helper children (importers, the rules' child; `Role::helper`), whose context the driver
/// then creates about three times faster (one at a time machine-wide: issue 36). `inherit`, or a
/// CUDA_DEVICE_MAX_CONNECTIONS of the run's own, leaves them as every other process. Workers and
/// trials' own processes always keep the driver's default: their trials hold streams.
pub fn helper_connections() -> Result<Option<u32>, String> {
    let own = std::env::var_os(MAX_CONNECTIONS_VAR).is_some();
    connections(crate::os::setting(HELPER_CONNECTIONS_VAR).as_deref(), own)
}

fn connections(v: Option<&str>, own: bool) -> Result<Option<u32>, String> {
    let n = match v.map(str::trim) {
        None | Some("") => Some(1),
        Some("inherit") => None,
        Some(v) => match v.parse::<u32>() {
            Ok(n @ 1..=32) => Some(n),
            _ => {
                return Err(format!(
                    "{HELPER_CONNECTIONS_VAR}={v:?}: expected the helper children's {MAX_CONNECTIONS_VAR}, a \
                     number from 1 to 32, or `inherit` (they get the run's own); unset it for 1"
                ))
            }
        },
    };
    Ok(n.filter(|_| !own))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helper_connections_values() {
        assert_eq!(connections(None, false), Ok(Some(1)));
        assert_eq!(connections(Some(" 4 "), false), Ok(Some(4)));
        assert_eq!(connections(Some("inherit"), false), Ok(None));
        assert_eq!(connections(None, true), Ok(None), "the run's own setting wins");
        for bad in ["0", "33", "-1", "one"] {
            let e = connections(Some(bad), false).unwrap_err();
            assert!(e.contains(HELPER_CONNECTIONS_VAR) && e.contains("inherit"), "{e}");
        }
    }

    #[test]
    fn run_budget_values() {
        assert_eq!(budget(None), Ok(None));
        assert_eq!(budget(Some(" ")), Ok(None));
        assert_eq!(budget(Some("120")), Ok(Some(Duration::from_secs(120))));
        assert_eq!(budget(Some("0.5")), Ok(Some(Duration::from_millis(500))));
        for v in ["0", "-3", "2m", "inf", "NaN", "1e9"] {
            let e = budget(Some(v)).expect_err(v);
            assert!(e.contains(RUN_BUDGET_VAR) && e.contains("in seconds"), "{e}");
        }
    }
}
