//! What a checked call or a case body returns: Ok, or a typed reason why not.

use std::fmt;

/// Why a check or a case did not pass. The kind is data, never a prefix of the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fail {
    /// Something was wrong: the words say what (an answer, a value, an effect).
    Wrong(String),
    /// The case cannot run here; the words say why. Reported as ignored.
    Ignore(String),
    /// A declared departure of the driver no longer reproduces: the documented answer came back.
    /// Reported as changed, not as a failure.
    Changed(String),
    /// The driver gave an answer a declared departure names where it fails: under
    /// CONFORMANCE_STRICT=documented.
    Departure(String),
}

/// What every case and checked call returns.
pub type R<T = ()> = Result<T, Fail>;

impl Fail {
    /// The words, whatever the kind.
    pub fn message(&self) -> &str {
        match self {
            Fail::Wrong(m) | Fail::Ignore(m) | Fail::Changed(m) | Fail::Departure(m) => m,
        }
    }
    /// The words, owned.
    pub fn into_message(self) -> String {
        match self {
            Fail::Wrong(m) | Fail::Ignore(m) | Fail::Changed(m) | Fail::Departure(m) => m,
        }
    }
    /// The same kind, its words passed through `f` (context added, say).
    pub fn map(self, f: impl FnOnce(String) -> String) -> Fail {
        match self {
            Fail::Wrong(m) => Fail::Wrong(f(m)),
            Fail::Ignore(m) => Fail::Ignore(f(m)),
            Fail::Changed(m) => Fail::Changed(f(m)),
            Fail::Departure(m) => Fail::Departure(f(m)),
        }
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl From<String> for Fail {
    fn from(m: String) -> Fail {
        Fail::Wrong(m)
    }
}

impl From<&str> for Fail {
    fn from(m: &str) -> Fail {
        Fail::Wrong(m.to_string())
    }
}

/// Helpers that speak plain `Result<_, String>` (setup, parsing) take a failed check's words.
impl From<Fail> for String {
    fn from(f: Fail) -> String {
        f.into_message()
    }
}

/// Mark the case ignored, with the reason, from inside its body.
pub fn ignore<T>(reason: impl fmt::Display) -> R<T> {
    Err(Fail::Ignore(reason.to_string()))
}

/// `ensure!(cond, "format", args)`: fail the case with a message unless cond holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err($crate::driver::Fail::Wrong(format!($($fmt)+)));
        }
    };
}
