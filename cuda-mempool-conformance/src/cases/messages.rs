//! The typed face of `harness::channel` for the cases' child processes: a message sent and
//! received as a serde type (its JSON text what the channel carries), the step answers the rules'
//! importer (`xproc`) and the `vaspace` child send, and the answer a parent records for a step
//! its child lost.

use crate::driver::fail::R;
use crate::harness::channel::Channel;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::os::fd::{OwnedFd, RawFd};

/// `msg` as the JSON value the channel sends.
pub(crate) fn to_json<T: Serialize>(msg: &T) -> R<Value> {
    Ok(serde_json::to_value(msg).map_err(|e| format!("a message that is not JSON: {e}"))?)
}

/// `v` as JSON text, for a message (`null` for a value that is absent).
pub(crate) fn text<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Send `msg` (and `fd`, if any) over `chan`.
pub(crate) fn send<T: Serialize>(chan: &Channel, msg: &T, fd: Option<RawFd>) -> R {
    chan.send(&to_json(msg)?, fd)
}

/// `m` as a `T`; Err: "unexpected message {m}", with what it lacks.
pub(crate) fn parse<T: DeserializeOwned>(m: &Value) -> R<T> {
    Ok(T::deserialize(m).map_err(|e| format!("unexpected message {m} ({e})"))?)
}

/// The next message over `chan` as a `T`, and the fd it carried. Err: none came (as
/// `Channel::recv` says, an error the other side reported among them), or it is not a `T`.
pub(crate) fn recv<T: DeserializeOwned>(chan: &Channel) -> R<(T, Option<OwnedFd>)> {
    let (m, fd) = chan.recv()?;
    Ok((parse(&m)?, fd))
}

/// The next message over `chan`, which must be the one `pick` takes out of a `T` (`op`, its name
/// in the error), and the fd it carried. Err: none came, or "expected message {op}, got {m}".
pub(crate) fn recv_one<T: DeserializeOwned, U>(
    chan: &Channel,
    op: &str,
    pick: impl FnOnce(T) -> Option<U>,
) -> R<(U, Option<OwnedFd>)> {
    let (m, fd) = chan.recv()?;
    match T::deserialize(&m).ok().and_then(pick) {
        Some(u) => Ok((u, fd)),
        None => Err(format!("expected message {op:?}, got {m}").into()),
    }
}

/// What a step-answering child sends (`Channel::answers_until_done` gathers it): each step's
/// answer as soon as it has it, then that it is done.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(crate) enum StepMsg<T> {
    /// `{"op": "answer", "key": STEP, "value": ANSWER}`.
    Answer { key: String, value: T },
    /// `{"op": "done"}`.
    Done,
}

/// A step's answer that says why there is none (`Channel::step_answer` reads it):
/// `{"lost": why, "blame": api}`, the API the child was inside, if any.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct LostStep {
    pub lost: String,
    pub blame: Option<u32>,
}

impl LostStep {
    /// The answer to record for a lost step.
    pub(crate) fn answer(lost: String, blame: Option<u32>) -> Value {
        // A struct of a string and a number is always JSON.
        serde_json::to_value(LostStep { lost, blame }).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The step messages read and written as today's text.
    #[test]
    fn step_messages_keep_their_text() {
        let a: StepMsg<Value> =
            serde_json::from_str(r#"{"op": "answer", "key": "trim", "value": {"code": 1}}"#).unwrap();
        assert_eq!(
            a,
            StepMsg::Answer {
                key: "trim".into(),
                value: json!({"code": 1})
            }
        );
        assert_eq!(
            to_json(&a).unwrap(),
            json!({"op": "answer", "key": "trim", "value": {"code": 1}})
        );
        let d: StepMsg<Value> = serde_json::from_str(r#"{"op": "done"}"#).unwrap();
        assert_eq!(d, StepMsg::Done);
        assert_eq!(to_json(&d).unwrap(), json!({"op": "done"}));
        assert!(parse::<StepMsg<Value>>(&json!({"op": "other"})).is_err());
    }

    /// A lost step reads `{"lost", "blame"}`, the blame null where there is none.
    #[test]
    fn a_lost_step_keeps_its_text() {
        assert_eq!(
            LostStep::answer("gone".into(), Some(830)),
            json!({"lost": "gone", "blame": 830})
        );
        assert_eq!(
            LostStep::answer("gone".into(), None),
            json!({"lost": "gone", "blame": null})
        );
        let l: LostStep = serde_json::from_str(r#"{"lost": "why", "blame": null}"#).unwrap();
        assert_eq!(l.blame, None);
    }

    /// A message that is not the type asked for is an error naming it, never a panic.
    #[test]
    fn a_malformed_message_is_an_error() {
        let e = parse::<LostStep>(&json!({"lost": 3})).unwrap_err().to_string();
        assert!(e.starts_with("unexpected message {\"lost\":3}"), "{e}");
    }
}
