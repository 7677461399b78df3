//! Observations: every checked call of a trial, recorded as it is checked — the API, the call in
//! short form, the documented answer, the answer expected from this driver, the answer observed
//! (code name and number; the value, for attribute and access reads) and whether they agreed. They
//! travel with the trial's result into report.json, where `--diff` compares them call by call.
//!
//! An observation is the model's (`conformance_model::Observation`), built here as the report and
//! a worker's answer carry it: nothing copies it on the way. Building one costs no more than a
//! type of the driver's own would (its `extra` is an empty map, which allocates nothing), and only
//! the first `KEEP` of a trial are built at all.

pub use conformance_model::Observation;
use std::cell::RefCell;

/// At most this many observations are kept per trial (the first ones; the rest are counted).
const KEEP: usize = 64;

thread_local! {
    static LOG: RefCell<(Vec<Observation>, usize)> = const { RefCell::new((Vec::new(), 0)) };
}

/// Record one checked call of the trial running on this thread.
pub fn record(o: Observation) {
    record_with(|| o)
}

/// Record the observation `make` builds, building it only while fewer than `KEEP` are kept: past
/// that a check costs a counter, so hot loops of checked calls (load trials, capture relaunches)
/// neither grow the list nor format strings.
pub fn record_with(make: impl FnOnce() -> Observation) {
    LOG.with(|l| {
        let mut l = l.borrow_mut();
        if l.0.len() < KEEP {
            l.0.push(make());
        } else {
            l.1 += 1;
        }
    });
}

/// A successful read and the value it gave (an attribute, an access flag).
pub fn value(call: String, observed: String) {
    record(Observation {
        api: crate::driver::blame::api_of(&call).map(u64::from),
        call,
        observed,
        ok: true,
        ..Observation::default()
    });
}

/// The trial's observations so far (and forget them), with how many were dropped past the limit.
pub fn take() -> (Vec<Observation>, usize) {
    LOG.with(|l| std::mem::take(&mut *l.borrow_mut()))
}
