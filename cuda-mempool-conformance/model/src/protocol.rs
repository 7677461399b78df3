//! The messages between the coordinator and its worker processes (`run::worker`), and the answer a
//! trial's own process prints (`harness::execute::execute_in_child`): typed, tagged by `op`, spoken
//! by both ends through serde. What they carry of the run is this crate's vocabulary (a trial's
//! outcome and kind, its observations, the cause of its failure, its timing, the machine), so that
//! an answer reaches the report as the very values it travelled as.
//!
//! A conversation: [`ToWorker::Machine`] once, then any number of [`ToWorker::Run`] (each answered
//! by [`FromWorker::Answered`]), [`ToWorker::Warm`], [`ToWorker::Ping`] and [`ToWorker::Release`],
//! then [`ToWorker::Finish`] (answered by [`FromWorker::Leaks`], after which the worker exits).

use crate::machine::Machine;
use crate::outcome::{Kind, Outcome};
use crate::trial::{FailureCause, Observation, Timing};
use serde::{Deserialize, Serialize};

/// The coordinator to a worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum ToWorker {
    /// The machine the run probed (and the devices it chose): the first message, once.
    Machine { machine: Box<Machine> },
    /// Run this trial; answered by [`FromWorker::Answered`].
    Run { trial: String },
    /// Run this trial's start-ahead step (`Case::warm`); answered by [`FromWorker::Warmed`].
    Warm { trial: String },
    /// Are you up (your context made, the machine read)? Answered by [`FromWorker::Pong`].
    Ping,
    /// End the children you keep (your lane is done); answered by [`FromWorker::Released`].
    Release,
    /// Check for leaks and exit; answered by [`FromWorker::Leaks`].
    Finish,
}

/// A worker to the coordinator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum FromWorker {
    /// What a trial came to. `retire`: this is the worker's last answer (a thread of the trial is
    /// stuck inside the driver, or the trial was a crash case that ran in the worker); it exits.
    Answered {
        answer: Box<TrialAnswer>,
        retire: bool,
    },
    /// A start-ahead step is done: `error` says why it did not work, where it did not.
    Warmed {
        error: Option<String>,
    },
    Pong,
    Released,
    /// The end-of-run leak check: what was left behind, and what only a lookup found.
    Leaks {
        leaks: Vec<String>,
        by_lookup: Vec<String>,
    },
}

/// What one execution of a trial's body came to, in the process that ran it: a worker's answer,
/// or the last line of a trial's own process. The outcome and the kind are required (an answer
/// without them is no answer); the rest reads as empty where absent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialAnswer {
    pub outcome: Outcome,
    pub kind: Kind,
    #[serde(default)]
    pub message: String,
    /// The API held responsible, when it is not the trial's own.
    #[serde(default)]
    pub blame: Option<u64>,
    /// For a failure: the first wrong answer of a checked call.
    #[serde(default)]
    pub cause: Option<FailureCause>,
    #[serde(default)]
    pub secs: f64,
    #[serde(default)]
    pub notes: Vec<String>,
    /// Its checked calls, in the order checked.
    #[serde(default)]
    pub observations: Vec<Observation>,
    /// The APIs it reached, when the process can tell (under the mutation library).
    #[serde(default)]
    pub calls: Option<Vec<u64>>,
    /// Its settle wait and the children it started (times since the trial started).
    #[serde(default)]
    pub timing: Timing,
}

impl TrialAnswer {
    /// An answer of `outcome` and `kind` saying `message`, nothing else measured.
    pub fn new(outcome: Outcome, kind: Kind, message: String) -> TrialAnswer {
        TrialAnswer {
            outcome,
            kind,
            message,
            blame: None,
            cause: None,
            secs: 0.0,
            notes: vec![],
            observations: vec![],
            calls: None,
            timing: Timing::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Answer;

    fn answer() -> TrialAnswer {
        TrialAnswer {
            blame: Some(822),
            cause: Some(FailureCause {
                api: Some(822),
                call: Some("cuMemFreeAsync".into()),
                answer: Answer::Code,
                value: Some(-1),
                ..FailureCause::default()
            }),
            secs: 1.5,
            notes: vec!["a note".into()],
            observations: vec![Observation {
                api: Some(822),
                call: "cuMemFreeAsync(p)".into(),
                ok: false,
                ..Observation::default()
            }],
            calls: Some(vec![820, 822]),
            ..TrialAnswer::new(Outcome::Failed, Kind::Check, "wrong".into())
        }
    }

    /// Every message reads back as it was written, tagged by its `op`.
    #[test]
    fn messages_read_back() {
        let to = [
            ToWorker::Machine {
                machine: Box::default(),
            },
            ToWorker::Run {
                trial: "820_cuMemAllocAsync::x".into(),
            },
            ToWorker::Warm { trial: "t".into() },
            ToWorker::Ping,
            ToWorker::Release,
            ToWorker::Finish,
        ];
        for m in to {
            let text = serde_json::to_string(&m).unwrap();
            assert!(text.starts_with("{\"op\":"), "{text}");
            assert_eq!(serde_json::from_str::<ToWorker>(&text).unwrap(), m);
        }
        let from = [
            FromWorker::Answered {
                answer: Box::new(answer()),
                retire: true,
            },
            FromWorker::Warmed { error: None },
            FromWorker::Warmed {
                error: Some("no".into()),
            },
            FromWorker::Pong,
            FromWorker::Released,
            FromWorker::Leaks {
                leaks: vec!["a pool".into()],
                by_lookup: vec![],
            },
        ];
        for m in from {
            let text = serde_json::to_string(&m).unwrap();
            assert_eq!(serde_json::from_str::<FromWorker>(&text).unwrap(), m);
        }
    }

    /// An answer needs its outcome and kind; the rest may be absent. Anything else is no message:
    /// an error, never a default.
    #[test]
    fn malformed_messages_are_errors() {
        let a: TrialAnswer = serde_json::from_str(r#"{"outcome": "passed", "kind": "plain"}"#).unwrap();
        assert_eq!(a, TrialAnswer::new(Outcome::Passed, Kind::Plain, String::new()));
        for bad in [
            r#"{"kind": "plain"}"#,
            r#"{"outcome": "passed"}"#,
            r#"{"outcome": "won", "kind": "plain"}"#,
            r#"{"outcome": "passed", "kind": "plain", "secs": "soon"}"#,
        ] {
            assert!(serde_json::from_str::<TrialAnswer>(bad).is_err(), "{bad}");
        }
        for bad in [
            r#"{"op": "answered", "retire": false}"#,
            r#"{"op": "shrug"}"#,
            r#"{"answer": {"outcome": "passed", "kind": "plain"}, "retire": false}"#,
            r#"{"op": "answered", "answer": {"outcome": "passed", "kind": "plain"}, "retire": fa"#,
        ] {
            assert!(serde_json::from_str::<FromWorker>(bad).is_err(), "{bad}");
        }
    }
}
