//! The harness's side of the result vocabulary: what one execution of a body answered, what came
//! back from the process that ran it, and the record the report reads. The vocabulary itself (a
//! trial's outcome, the kind behind it, its timing and children) is the ground floor's,
//! `conformance_model`, re-exported here.

use crate::driver::blame::Cause;
use crate::driver::cu::CUdevice;
use crate::driver::observe::Observation;
use crate::harness::case::{Group, Per};
use conformance_model::ExpectedBy;
pub use conformance_model::{ChildSpan, Kind, Outcome, Timing, Turn};

/// The kinds a worker's answer can carry (what a body came to in its own process).
fn parse_answer(s: &str) -> Option<Kind> {
    Kind::parse(s).filter(|k| {
        matches!(
            k,
            Kind::Plain | Kind::Check | Kind::Panic | Kind::Departure | Kind::CannotRun | Kind::Broken
        )
    })
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
    /// The expectation file's entry that made it an expected failure or flaky (`harness::expect`).
    pub expected_by: Option<ExpectedBy>,
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
            expected_by: None,
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
                .and_then(parse_answer)
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
                ..ChildSpan::default()
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
