//! The harness's side of the result vocabulary: what one execution of a body answered, what came
//! back from the process that ran it, and the record the report reads. The vocabulary itself (a
//! trial's outcome, the kind behind it, its timing and children) is the ground floor's,
//! `conformance_model`, re-exported here.

use crate::driver::blame::Cause;
use crate::driver::cu::CUdevice;
use crate::harness::case::{Group, Per};
pub use conformance_model::{ChildSpan, Kind, Outcome, Timing, Turn};
use conformance_model::{Extra, Observation, Trial};

/// Whether a process's answer can be of kind `k` (what a body comes to in its own process; the
/// rest only the coordinator decides).
fn answerable(k: Kind) -> bool {
    matches!(
        k,
        Kind::Plain | Kind::Check | Kind::Panic | Kind::Departure | Kind::CannotRun | Kind::Broken
    )
}

/// One trial's result, for the report: the report's facts of it, the model's [`Trial`] (what
/// report.json says of it, so that the report copies it whole, `report::build`), and what only the
/// harness keeps beside them. It reads as its facts (`Deref`).
/// Made by [`Record::new`] alone, so that its facts start as report.json writes a record's
/// (`kind`, `observations: []` and `device: null` always there); the fields with an invariant are
/// set through their setters (`set_timing` keeps a default timing out, `set_calls` and `set_cause`
/// take the driver's values).
#[derive(Clone, Debug)]
pub struct Record {
    facts: Trial,
    /// The row it counts in (its facts' `api` and `group` say it as the report does).
    pub group: Group,
    /// How the case spreads over devices.
    pub per: Per,
    /// The trial needs a device, and the process running it answered (did not die or hang).
    pub device_answer: bool,
}
impl std::ops::Deref for Record {
    type Target = Trial;
    fn deref(&self) -> &Trial {
        &self.facts
    }
}
impl std::ops::DerefMut for Record {
    fn deref_mut(&mut self) -> &mut Trial {
        &mut self.facts
    }
}
impl Record {
    /// A record with nothing measured yet: no blame, no time, no notes, no observations (written
    /// `[]`), no device (written `null`).
    pub fn new(trial: impl Into<String>, group: Group, outcome: Outcome, kind: Kind, message: String) -> Record {
        Record {
            facts: Trial {
                trial: trial.into(),
                api: group.api().map(u64::from),
                group: group.label(),
                outcome,
                kind: Some(kind),
                message,
                blame: None,
                secs: 0.0,
                notes: vec![],
                observations: Some(vec![]),
                span: (0.0, 0.0),
                device: Some(None),
                calls: None,
                cause: None,
                timing: None,
                expected_by: None,
                extra: Extra::new(),
            },
            group,
            per: Per::Once,
            device_answer: false,
        }
    }
    /// The record with `f` done to it.
    pub fn with(mut self, f: impl FnOnce(&mut Record)) -> Record {
        f(&mut self);
        self
    }
    /// How it ended (every record says).
    pub fn kind(&self) -> Kind {
        self.facts.kind.unwrap_or(Kind::Plain)
    }
    /// For a failure: the API held responsible, when it is not the trial's own.
    pub fn blamed(&self) -> Option<u32> {
        self.facts.blame.and_then(|b| u32::try_from(b).ok())
    }
    /// The device a single-device trial ran on (the owner, for pair and multi-device trials).
    pub fn dev(&self) -> Option<CUdevice> {
        self.facts.device.flatten().and_then(|d| CUdevice::try_from(d).ok())
    }
    /// Set the device it ran on.
    pub fn set_dev(&mut self, dev: Option<CUdevice>) {
        self.facts.device = Some(dev.map(i64::from));
    }
    /// The failing call and what it answered, as the driver types it (`blame.rs`).
    pub fn cause(&self) -> Option<Cause> {
        self.facts.cause.as_ref().and_then(Cause::from_model)
    }
    /// Set the cause of a failure.
    pub fn set_cause(&mut self, cause: Option<&Cause>) {
        self.facts.cause = cause.map(Cause::to_model);
    }
    /// Its facts, as report.json writes them (`report::build`).
    pub fn facts(&self) -> &Trial {
        &self.facts
    }
    /// Set the APIs it reached, a mask as `driver::calls` keeps it.
    pub fn set_calls(&mut self, mask: Option<u16>) {
        self.facts.calls = mask.map(reached);
    }
    /// Where its time went beside its body: default when not run by a worker.
    pub fn timing(&self) -> Timing {
        self.facts.timing.clone().unwrap_or_default()
    }
    /// Set where its time went (kept only when it is not the default, as report.json has it).
    pub fn set_timing(&mut self, timing: Timing) {
        self.facts.timing = (timing != Timing::default()).then_some(timing);
    }
    /// Its checked calls (`observe.rs`).
    pub fn observations(&self) -> &[Observation] {
        self.facts.observations.as_deref().unwrap_or_default()
    }
    /// The API this record counts against in the report: a failure's blame, else its own API.
    pub fn counted_api(&self) -> Option<u32> {
        match (self.outcome, self.group) {
            (Outcome::Failed, Group::Api(own)) => Some(self.blamed().unwrap_or(own)),
            _ => self.group.api(),
        }
    }
}

/// What one execution of a case's body came to, in the process that ran it: the model's answer,
/// the same value in the process that ran the body and in the coordinator that receives it
/// (`conformance_model::protocol`). The driver's values in it are the model's ([`body_answer`]);
/// the coordinator takes one only once [`received`] has checked it.
pub use conformance_model::TrialAnswer as Answer;

/// The answer a body came to, with what the driver held of it: the API held responsible
/// (`blame.rs`), the failing call and what it answered, the APIs reached (`driver::calls`), each as
/// the model keeps it. The one place the driver's values become an answer's.
pub fn body_answer(
    outcome: Outcome,
    kind: Kind,
    message: String,
    blame: Option<u32>,
    cause: Option<&Cause>,
    calls: Option<u16>,
) -> Answer {
    Answer {
        blame: blame.map(u64::from),
        cause: cause.map(Cause::to_model),
        calls: calls.map(reached),
        ..Answer::new(outcome, kind, message)
    }
}

/// The APIs of `mask` (bit `api - 820`, `driver::calls`) as an answer lists them.
pub fn reached(mask: u16) -> Vec<u64> {
    crate::driver::calls::apis(mask).into_iter().map(u64::from).collect()
}

/// The mask (bit `api - 820`, `driver::calls`) of the APIs an answer lists; what is none of the 14
/// is dropped. `mask_of(&reached(m)) == m` for every mask of the 14.
pub fn mask_of(apis: &[u64]) -> u16 {
    let apis: Vec<u32> = apis.iter().filter_map(|a| u32::try_from(*a).ok()).collect();
    crate::driver::calls::mask(&apis)
}

/// The answer a process sent, checked: Err (why) where it is none a body can come to (a kind only
/// the coordinator decides, a blame that is no API). What the driver cannot type in it is dropped
/// where the record is made: a cause in `verdict::answered`, APIs outside the 14 among its calls in
/// `verdict::judge`.
pub fn received(m: Answer) -> Result<Answer, String> {
    if !answerable(m.kind) {
        return Err(format!(
            "an answer of kind {}, which only the coordinator decides",
            m.kind
        ));
    }
    if let Some(b) = m.blame.filter(|b| u32::try_from(*b).is_err()) {
        return Err(format!("an answer blaming API {b}"));
    }
    Ok(m)
}

/// The answer as a trial's own process prints it, its last line (`suite::roles`): the message in
/// JSON.
pub fn to_line(a: &Answer) -> String {
    serde_json::to_string(a).unwrap_or_default()
}

/// The answer a trial's own process printed ([`to_line`]), checked ([`received`]), or why the line
/// is none.
pub fn from_line(line: &str) -> Result<Answer, String> {
    serde_json::from_str(line).map_err(|e| e.to_string()).and_then(received)
}

/// What came back from the process that ran a trial.
#[derive(Debug)]
pub enum Raw {
    Answer(Box<Answer>),
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

    /// A record's calls read back as the mask they were set from, for every mask of the 14 APIs;
    /// what is none of them is dropped.
    #[test]
    fn calls_round_trip_through_the_list_the_report_writes() {
        for m in 0..(1u16 << 14) {
            let r = Record::new("t", Group::Api(820), Outcome::Passed, Kind::Plain, String::new())
                .with(|r| r.set_calls(Some(m)));
            assert_eq!(r.calls.as_deref().map(mask_of), Some(m));
        }
        assert_eq!(mask_of(&[820, 833, 834, 7, u64::MAX]), 1 | 1 << 13);
    }

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
        let back = from_line(&to_line(&a)).unwrap();
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
        let written = serde_json::json!({"worker": "general 2", "wait_s": 0.1, "turn": "exclusive",
            "settle_s": 0.25, "children": [{"role": "ipc-import", "span": [10.5, 11.5]}]});
        assert_eq!(j, written);
        assert_eq!(serde_json::from_value::<Timing>(j).unwrap(), full);
        let bare = serde_json::from_str(r#"{"outcome": "passed", "kind": "plain"}"#).unwrap();
        assert_eq!(received(bare).unwrap().timing, Timing::default());
    }

    /// What a process answered travels whole (its cause, observations and calls typed), and an
    /// answer a body cannot give is refused, not taken.
    #[test]
    fn answers_travel_whole_and_refuse_what_no_body_answers() {
        let cause = Cause::returned("cuMemFreeAsync(p)", crate::driver::cu::CUresult(1));
        let a = Answer {
            observations: vec![Observation {
                api: Some(822),
                call: "cuMemFreeAsync(p)".into(),
                ..Observation::default()
            }],
            ..body_answer(
                Outcome::Failed,
                Kind::Check,
                "wrong".into(),
                Some(822),
                Some(&cause),
                Some(crate::driver::calls::mask(&[820, 822])),
            )
        };
        let back = from_line(&to_line(&a)).unwrap();
        assert_eq!(back, a);
        assert_eq!(
            (back.blame, back.cause.as_ref().and_then(Cause::from_model), back.calls),
            (Some(822), Some(cause), Some(vec![820, 822]))
        );
        let leak = Answer::new(Outcome::Failed, Kind::Leak, String::new());
        assert!(received(leak).unwrap_err().contains("leak"));
        let far = Answer {
            blame: Some(u64::MAX),
            ..Answer::new(Outcome::Failed, Kind::Check, String::new())
        };
        assert!(received(far).is_err());
    }
}
