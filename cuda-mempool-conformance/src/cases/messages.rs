//! The typed face of `harness::channel` for the cases' child processes: a message received as a
//! serde type (its JSON text what the channel carries) with the cases' wording of what is not one.
//! The step answers the rules' importer (`xproc`) and the `vaspace` child send, and the answer a
//! parent records for a step its child lost, are the channel's (`Step`, `LostStep`).

use crate::driver::fail::R;
use crate::harness::channel::Channel;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::os::fd::OwnedFd;

/// `msg` as the JSON value the channel sends.
pub(crate) fn to_json<T: Serialize>(msg: &T) -> R<Value> {
    Ok(serde_json::to_value(msg).map_err(|e| format!("a message that is not JSON: {e}"))?)
}

/// `v` as JSON text, for a message (`null` for a value that is absent).
pub(crate) fn text<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
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

/// A test's check that message `m` writes `text` (today's message, as the json! macros wrote it)
/// and reads back from it: the wire text of every child protocol is pinned this way.
#[cfg(test)]
pub(crate) fn keeps_its_text<T>(m: T, text: Value)
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    assert_eq!(to_json(&m).unwrap(), text);
    assert_eq!(parse::<T>(&text).unwrap(), m);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A message that is not the type asked for is an error naming it, never a panic.
    #[test]
    fn a_malformed_message_is_an_error() {
        let e = parse::<crate::harness::channel::LostStep>(&json!({"lost": 3}))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("unexpected message {\"lost\":3}"), "{e}");
    }
}
