//! The result vocabulary, typed: a trial's outcome and the kind behind it, what one execution of a
//! body answered, what came back from the process that ran it, and the record the report reads.

use crate::driver::blame::Cause;
use crate::driver::cu::CUdevice;
use crate::driver::observe::Observation;
use crate::harness::case::{Group, Per};
pub use crate::harness::child::ChildSpan;
use crate::harness::machine::Cap;
use serde::{Deserialize, Serialize};

/// What a trial came to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    Passed,
    Failed,
    Ignored,
    /// A crash case whose call returned the documented code instead of crashing, or a declared
    /// departure of the driver that no longer reproduces: not a failure, but a change from the
    /// driver the expectation was written against, shown as such.
    Changed,
    /// A failure the user's expectation file lists (CONFORMANCE_EXPECT): reported, not failing.
    Expected,
    /// A declared departure of drivers from the documentation (or a declared crash) that reproduced
    /// on a driver branch it was not verified on: reported apart, not failing (unless
    /// CONFORMANCE_STRICT=documented, which makes it a failure).
    Known,
    /// Not run, or cut short: the run was interrupted (a signal, or CONFORMANCE_RUN_BUDGET ran out:
    /// `run::interrupt`). Not a verdict on the library; the run's exit code is not zero.
    Interrupted,
    /// A failure of a trial the expectation file lists as flaky (`[[flaky]]`), or a failure that
    /// passed when rerun (`--rerun-failed`): reported and counted apart, not failing.
    Flaky,
}
impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Ignored => "ignored",
            Outcome::Changed => "changed",
            Outcome::Expected => "expected-failure",
            Outcome::Known => "known-departure",
            Outcome::Interrupted => "interrupted",
            Outcome::Flaky => "flaky",
        }
    }
    pub fn parse(s: &str) -> Option<Outcome> {
        [
            Outcome::Passed,
            Outcome::Failed,
            Outcome::Ignored,
            Outcome::Changed,
            Outcome::Expected,
            Outcome::Known,
            Outcome::Interrupted,
            Outcome::Flaky,
        ]
        .into_iter()
        .find(|o| o.as_str() == s)
    }
}

/// Why a record is what it is, beyond pass or fail: which mechanism decided it. Data, not a prefix
/// of the message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// It passed as its checks say.
    Plain,
    /// A checked answer, value or effect was wrong.
    Check,
    /// The case's body panicked.
    Panic,
    /// The process running it died (by this signal, if one).
    Died(Option<i32>),
    /// No answer within the deadline; the process was killed.
    Hung,
    /// The trial could not be run at all.
    Broken,
    /// A declared crash (`Case::crashes`): seen, not seen, or seen where it was not declared.
    Crash,
    /// A declared departure of the driver (`departures.rs`): outside its branches, or gone.
    Departure,
    /// A capability the machine lacks (ignored, or failed where CONFORMANCE_REQUIRE names it).
    Missing(Cap),
    /// The body itself found it cannot run here.
    CannotRun,
    /// The user's expectation file decided it (an expected failure, or an unexpected pass).
    Expectation,
    /// The run left something behind (`suite::no_leaks`).
    Leak,
    /// A precondition of the run does not hold (`harness::precondition`): the suite-level trial
    /// that says so, and the trials that rely on it, not run.
    Precondition,
    /// Not run: the run stopped at an earlier failure (CONFORMANCE_FAIL_FAST, `run::stop`).
    Stopped,
    /// Not run, or cut short: a signal or the run budget ended the run (`run::interrupt`).
    Interrupted,
}
impl Kind {
    /// The name in report.json and JUnit.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Plain => "plain",
            Kind::Check => "check",
            Kind::Panic => "panic",
            Kind::Died(_) => "died",
            Kind::Hung => "hung",
            Kind::Broken => "broken",
            Kind::Crash => "crash",
            Kind::Departure => "departure",
            Kind::Missing(_) => "missing-capability",
            Kind::CannotRun => "cannot-run",
            Kind::Expectation => "expectation",
            Kind::Leak => "leak",
            Kind::Precondition => "precondition",
            Kind::Stopped => "stopped",
            Kind::Interrupted => "interrupted",
        }
    }
    /// The kinds a worker's answer can carry (what a body came to in its own process).
    fn parse_answer(s: &str) -> Option<Kind> {
        [
            Kind::Plain,
            Kind::Check,
            Kind::Panic,
            Kind::Departure,
            Kind::CannotRun,
            Kind::Broken,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// One trial's result, for the report.
#[derive(Clone, Debug)]
pub struct Record {
    pub trial: String,
    pub group: Group,
    pub outcome: Outcome,
    pub kind: Kind,
    pub message: String,
    /// For a failure: the API held responsible (`blame.rs`), when it is not the trial's own.
    pub blame: Option<u32>,
    /// For a failure: the failing call and what it answered, when one is known (`blame.rs`).
    pub cause: Option<Cause>,
    pub secs: f64,
    pub notes: Vec<String>,
    /// The trial needs a device, and the process running it answered (did not die or hang).
    pub device_answer: bool,
    /// The device a single-device trial ran on (the owner, for pair and multi-device trials).
    pub dev: Option<CUdevice>,
    /// How the case spreads over devices.
    pub per: Per,
    /// The trial's checked calls (`observe.rs`).
    pub observations: Vec<Observation>,
    /// When the trial started and ended, in seconds since the run started (0 when not run).
    pub span: (f64, f64),
    /// Which of the 14 APIs the trial reached (bit `api - 820`, `driver::calls`): known when it ran
    /// in a worker under the mutation library and answered.
    pub calls: Option<u16>,
    /// Where its time went beside its body (`report::timeline`): default when not run by a worker.
    pub timing: Timing,
}
impl Record {
    /// A record with nothing measured yet: no blame, no time, no notes, no observations.
    pub fn new(trial: impl Into<String>, group: Group, outcome: Outcome, kind: Kind, message: String) -> Record {
        Record {
            trial: trial.into(),
            group,
            outcome,
            kind,
            message,
            blame: None,
            cause: None,
            secs: 0.0,
            notes: vec![],
            device_answer: false,
            dev: None,
            per: Per::Once,
            observations: vec![],
            span: (0.0, 0.0),
            calls: None,
            timing: Timing::default(),
        }
    }
    /// The API this record counts against in the report: a failure's blame, else its own API.
    pub fn counted_api(&self) -> Option<u32> {
        match (self.outcome, self.group) {
            (Outcome::Failed, Group::Api(own)) => Some(self.blame.unwrap_or(own)),
            _ => self.group.api(),
        }
    }
}

/// A trial's turn at the device (`run::turns`, by `placement::Need`): none needed (it needs no device),
/// shared within the memory budget, beside no memory holder (a request beyond the device), or the
/// device alone.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Turn {
    Free,
    Shared,
    Beyond,
    Exclusive,
}

/// Where a trial's time went beside its body, for the timeline (`report::timeline`): which worker
/// ran it, how long it waited for its turn, which turn, the settle wait at its end, its children.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Timing {
    /// `general 0`, `general 1`, … (the shared queue's dispatchers), or the lane's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// Seconds it waited for its turn at the device, just before its span began.
    pub wait_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<Turn>,
    /// Seconds, at the end of its span, spent waiting for the device's memory to come back
    /// (`execute::settle`, after an exclusive trial).
    pub settle_s: f64,
    pub children: Vec<ChildSpan>,
    /// Where the run waited, before it, for its lane's worker to come up and for the children its
    /// lane starts ahead (a lane's first trial), when that was, in run seconds: a process start is
    /// the run's time too (one context at a time machine-wide; 12 s and more each under
    /// compute-sanitizer). A general worker's start-up falls in its first trial's span instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker_start: Option<(f64, f64)>,
}
impl Timing {
    /// The same, its children's spans moved by `by` seconds (a worker's answer into the run's time).
    pub fn shifted(mut self, by: f64) -> Timing {
        for c in &mut self.children {
            c.span = (c.span.0 + by, c.span.1 + by);
        }
        self
    }
}

/// What one execution of a case's body came to, in the process that ran it.
#[derive(Clone, Debug)]
pub struct Answer {
    pub outcome: Outcome,
    pub kind: Kind,
    pub message: String,
    pub blame: Option<u32>,
    /// For a failure: the first wrong answer of a checked call (`blame::cause`).
    pub cause: Option<Cause>,
    pub secs: f64,
    pub notes: Vec<String>,
    pub observations: Vec<Observation>,
    /// The APIs the body reached (`driver::calls`), when the process running it can tell.
    pub calls: Option<u16>,
    /// The settle wait and the children it started (times since the trial started); the
    /// coordinator adds the rest (`Timing::shifted`).
    pub timing: Timing,
}
impl Answer {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"outcome": self.outcome.as_str(), "kind": self.kind.as_str(),
            "message": self.message, "blame": self.blame, "cause": self.cause.as_ref().map(Cause::to_json),
            "secs": self.secs, "notes": self.notes,
            "observations": self.observations.iter().map(|o| o.to_json()).collect::<Vec<_>>(),
            "calls": self.calls.map(crate::driver::calls::apis),
            "timing": serde_json::to_value(&self.timing).unwrap_or_default()})
    }
    pub fn from_json(j: &serde_json::Value) -> Result<Answer, String> {
        Ok(Answer {
            outcome: j["outcome"]
                .as_str()
                .and_then(Outcome::parse)
                .ok_or_else(|| format!("worker answer without an outcome: {j}"))?,
            kind: j["kind"]
                .as_str()
                .and_then(Kind::parse_answer)
                .ok_or_else(|| format!("worker answer without a kind: {j}"))?,
            message: j["message"].as_str().unwrap_or("").to_string(),
            blame: j["blame"].as_u64().map(|b| b as u32),
            cause: Cause::from_json(&j["cause"]),
            secs: j["secs"].as_f64().unwrap_or(0.0),
            notes: j["notes"]
                .as_array()
                .map(|a| a.iter().filter_map(|n| n.as_str().map(String::from)).collect())
                .unwrap_or_default(),
            observations: j["observations"]
                .as_array()
                .map(|a| a.iter().map(Observation::from_json).collect())
                .unwrap_or_default(),
            calls: j["calls"].as_array().map(|a| {
                let apis: Vec<u32> = a.iter().filter_map(|x| x.as_u64().map(|x| x as u32)).collect();
                crate::driver::calls::mask(&apis)
            }),
            timing: serde_json::from_value(j["timing"].clone()).unwrap_or_default(),
        })
    }
}

/// What came back from the process that ran a trial.
#[derive(Debug)]
pub enum Raw {
    Answer(Answer),
    /// The process died while running the trial (`signal` if a signal ended it).
    Died {
        how: String,
        signal: Option<i32>,
        inside: Option<(u32, String)>,
        /// The last tracked call that returned before it died, and its raw answer.
        last: Option<(u32, i32)>,
        log: String,
        secs: f64,
    },
    /// No answer within the deadline; the process was killed.
    Hung {
        secs: f64,
        inside: Option<(u32, String)>,
        log: String,
    },
    /// The trial could not be run at all (no worker could be started, say).
    Broken(String),
}
impl Raw {
    /// What the process said of its time (only an answer says anything).
    pub fn timing(&self) -> Timing {
        match self {
            Raw::Answer(a) => a.timing.clone(),
            _ => Timing::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A worker's answer carries its settle wait and children to the coordinator, which moves the
    /// children into the run's time; report.json's `timing` reads back the same.
    #[test]
    fn timing_travels_from_the_worker_to_the_report() {
        let timing = Timing {
            settle_s: 0.25,
            children: vec![ChildSpan {
                role: "ipc-import".into(),
                span: (0.5, 1.5),
            }],
            ..Timing::default()
        };
        let a = Answer {
            outcome: Outcome::Passed,
            kind: Kind::Plain,
            message: String::new(),
            blame: None,
            cause: None,
            secs: 2.0,
            notes: vec![],
            observations: vec![],
            calls: None,
            timing: timing.clone(),
        };
        let back = Answer::from_json(&a.to_json()).unwrap();
        assert_eq!(back.timing, timing);
        let moved = back.timing.shifted(10.0);
        assert_eq!(moved.children[0].span, (10.5, 11.5));
        let full = Timing {
            worker: Some("general 2".into()),
            wait_s: 0.1,
            turn: Some(Turn::Exclusive),
            ..moved
        };
        let j = serde_json::to_value(&full).unwrap();
        assert_eq!(j["turn"], "exclusive");
        assert_eq!(j["children"][0]["span"], serde_json::json!([10.5, 11.5]));
        assert_eq!(serde_json::from_value::<Timing>(j).unwrap(), full);
        let old = Answer::from_json(&serde_json::json!({"outcome": "passed", "kind": "plain"})).unwrap();
        assert_eq!(old.timing, Timing::default());
    }
}
