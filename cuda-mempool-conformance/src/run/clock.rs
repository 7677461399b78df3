//! The run's clock: when the run started, and the seconds since, for the trials' spans.

use std::sync::OnceLock;
use std::time::Instant;

/// When the run started (the coordinator sets it first thing), for the trials' spans.
pub static RUN_START: OnceLock<Instant> = OnceLock::new();

/// Seconds since the run started.
pub fn since_start() -> f64 {
    RUN_START.get_or_init(Instant::now).elapsed().as_secs_f64()
}
