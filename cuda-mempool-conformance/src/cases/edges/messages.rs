//! What an `edge-rows` child writes for its parent (`run`): one JSON line per row, as serde types
//! whose text is the lines'.

use crate::driver::fail::Fail;
use serde::{Deserialize, Serialize};

/// One row's line: `{"i": ROW, "setup": FAIL}` (the row could not be set up; the child stops),
/// `{"i": ROW, "hung_s": SECONDS}` (its call did not answer within the bound), or
/// `{"i": ROW, "code": CODE, "effect": FAIL or null}` (its call's code, `CUresult`'s number, and
/// what was wrong with its effect).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub(super) enum RowLine {
    Setup {
        i: usize,
        setup: FailLine,
    },
    Hung {
        i: usize,
        hung_s: f64,
    },
    Answer {
        i: usize,
        code: u32,
        effect: Option<FailLine>,
    },
}

impl RowLine {
    /// The row it answers.
    pub(super) fn row(&self) -> usize {
        match *self {
            RowLine::Setup { i, .. } | RowLine::Hung { i, .. } | RowLine::Answer { i, .. } => i,
        }
    }

    /// The line as the child prints it.
    pub(super) fn text(&self) -> String {
        // Numbers, strings and options of them are always JSON.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A failure on a line, its kind kept: `{"kind": KIND, "message": TEXT}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(super) struct FailLine {
    pub kind: FailKind,
    pub message: String,
}

/// A [`Fail`]'s kind on a line; a kind this build does not know reads as a wrong answer.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(super) enum FailKind {
    Ignore,
    Changed,
    Departure,
    #[serde(other)]
    Wrong,
}

impl From<Fail> for FailLine {
    fn from(f: Fail) -> FailLine {
        let kind = match &f {
            Fail::Wrong(_) => FailKind::Wrong,
            Fail::Ignore(_) => FailKind::Ignore,
            Fail::Changed(_) => FailKind::Changed,
            Fail::Departure(_) => FailKind::Departure,
        };
        FailLine {
            kind,
            message: f.into_message(),
        }
    }
}

impl From<FailLine> for Fail {
    fn from(l: FailLine) -> Fail {
        let m = l.message;
        match l.kind {
            FailKind::Wrong => Fail::Wrong(m),
            FailKind::Ignore => Fail::Ignore(m),
            FailKind::Changed => Fail::Changed(m),
            FailKind::Departure => Fail::Departure(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// `line` writes `text` and reads back from it, and from the line it prints.
    fn same(line: RowLine, text: Value) {
        assert_eq!(serde_json::from_str::<RowLine>(&line.text()).unwrap(), line);
        crate::cases::messages::keeps_its_text(line, text);
    }

    /// Each line reads and writes today's text, a failure's kind kept both ways.
    #[test]
    fn row_lines_keep_their_text() {
        let fail = |kind, message: &str| FailLine {
            kind,
            message: message.into(),
        };
        same(
            RowLine::Setup {
                i: 2,
                setup: fail(FailKind::Ignore, "x"),
            },
            json!({"i": 2, "setup": {"kind": "ignore", "message": "x"}}),
        );
        same(RowLine::Hung { i: 4, hung_s: 3.0 }, json!({"i": 4, "hung_s": 3.0}));
        same(
            RowLine::Answer {
                i: 2,
                code: 2,
                effect: None,
            },
            json!({"i": 2, "code": 2, "effect": null}),
        );
        same(
            RowLine::Answer {
                i: 3,
                code: 0,
                effect: Some(fail(FailKind::Changed, "m")),
            },
            json!({"i": 3, "code": 0, "effect": {"kind": "changed", "message": "m"}}),
        );
        for (f, kind) in [
            (Fail::Wrong("w".into()), "wrong"),
            (Fail::Ignore("w".into()), "ignore"),
            (Fail::Changed("w".into()), "changed"),
            (Fail::Departure("w".into()), "departure"),
        ] {
            let line = FailLine::from(f.clone());
            assert_eq!(
                serde_json::to_value(&line).unwrap(),
                json!({"kind": kind, "message": "w"})
            );
            assert_eq!(Fail::from(line), f);
        }
        // A kind this build does not know is a wrong answer.
        let l: FailLine = serde_json::from_str(r#"{"kind": "odd", "message": "m"}"#).unwrap();
        assert_eq!(Fail::from(l), Fail::Wrong("m".into()));
    }
}
