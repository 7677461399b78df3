//! Observations: every checked call of a trial, recorded as it is checked — the API, the call in
//! short form, the documented answer, the answer expected from this driver, the answer observed
//! (code name and number; the value, for attribute and access reads) and whether they agreed. They
//! travel with the trial's result into report.json, where `--diff` compares them call by call.

use serde_json::{json, Value};
use std::cell::RefCell;

/// At most this many observations are kept per trial (the first ones; the rest are counted).
const KEEP: usize = 64;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    pub api: Option<u32>,
    pub call: String,
    pub documented: String,
    pub expected: String,
    pub observed: String,
    pub ok: bool,
    /// The scoped driver deviation this check follows (`driver/departures.rs`), if any.
    pub deviation: Option<String>,
}

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
        api: crate::driver::blame::api_of(&call),
        call,
        documented: String::new(),
        expected: String::new(),
        observed,
        ok: true,
        deviation: None,
    });
}

/// The trial's observations so far (and forget them), with how many were dropped past the limit.
pub fn take() -> (Vec<Observation>, usize) {
    LOG.with(|l| std::mem::take(&mut *l.borrow_mut()))
}

impl Observation {
    pub fn to_json(&self) -> Value {
        json!({"api": self.api, "call": self.call, "documented": self.documented,
            "expected": self.expected, "observed": self.observed, "ok": self.ok,
            "deviation": self.deviation})
    }
    pub fn from_json(j: &Value) -> Observation {
        let s = |k: &str| j[k].as_str().unwrap_or("").to_string();
        Observation {
            api: j["api"].as_u64().map(|a| a as u32),
            call: s("call"),
            documented: s("documented"),
            expected: s("expected"),
            observed: s("observed"),
            ok: j["ok"].as_bool().unwrap_or(false),
            deviation: j["deviation"].as_str().map(String::from),
        }
    }
}
