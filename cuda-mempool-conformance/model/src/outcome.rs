//! The closed sets of a trial's result: what it came to (`Outcome`), the mechanism that decided it
//! (`Kind`), and what a failing call answered (`Answer`). Their serde names are report.json's and
//! JUnit's strings, and `as_str` says the same.

use serde::{Deserialize, Serialize};

/// What a trial came to.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Also what a trial without an `outcome` reads as (a hand-made report; the suite writes it
    /// always).
    #[default]
    Passed,
    Failed,
    Ignored,
    /// A crash case whose call returned the documented code instead of crashing, or a declared
    /// departure of the driver that no longer reproduces: not a failure, but a change from the
    /// driver the expectation was written against, shown as such.
    Changed,
    /// A failure the user's expectation file lists (CONFORMANCE_EXPECT): reported, not failing.
    ExpectedFailure,
    /// A declared departure of drivers from the documentation (or a declared crash) that reproduced
    /// on a driver branch it was not verified on: reported apart, not failing (unless
    /// CONFORMANCE_STRICT=documented, which makes it a failure).
    KnownDeparture,
    /// Not run, or cut short: the run was interrupted (a signal, or CONFORMANCE_RUN_BUDGET ran out).
    /// Not a verdict on the library; the run's exit code is not zero.
    Interrupted,
    /// A failure of a trial the expectation file lists as flaky (`[[flaky]]`), or a failure that
    /// passed when rerun (`--rerun-failed`): reported and counted apart, not failing.
    Flaky,
}

impl Outcome {
    /// Every outcome, in report order.
    pub const ALL: [Outcome; 8] = [
        Outcome::Passed,
        Outcome::Failed,
        Outcome::Ignored,
        Outcome::Changed,
        Outcome::ExpectedFailure,
        Outcome::KnownDeparture,
        Outcome::Interrupted,
        Outcome::Flaky,
    ];
    /// The name in report.json (its serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Ignored => "ignored",
            Outcome::Changed => "changed",
            Outcome::ExpectedFailure => "expected-failure",
            Outcome::KnownDeparture => "known-departure",
            Outcome::Interrupted => "interrupted",
            Outcome::Flaky => "flaky",
        }
    }
    /// The outcome named `s` (`as_str`), if one is.
    pub fn parse(s: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a trial is what it is, beyond pass or fail: which mechanism decided it. Data, not a prefix
/// of the message. The signal a process died by is its cause's (`FailureCause`), the capability a
/// trial missed its message's: neither is read as data beyond that.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// It passed as its checks say.
    Plain,
    /// A checked answer, value or effect was wrong.
    Check,
    /// The case's body panicked.
    Panic,
    /// The process running it died.
    Died,
    /// No answer within the deadline; the process was killed.
    Hung,
    /// The trial could not be run at all.
    Broken,
    /// A declared crash (`Case::crashes`): seen, not seen, or seen where it was not declared.
    Crash,
    /// A declared departure of the driver (`departures.rs`): outside its branches, or gone.
    Departure,
    /// A capability the machine lacks (ignored, or failed where CONFORMANCE_REQUIRE names it).
    #[serde(rename = "missing-capability")]
    Missing,
    /// The body itself found it cannot run here.
    CannotRun,
    /// The user's expectation file decided it (an expected failure, or an unexpected pass).
    Expectation,
    /// The run left something behind (`suite::no_leaks`).
    Leak,
    /// A precondition of the run does not hold (`harness::precondition`): the suite-level trial
    /// that says so, and the trials that rely on it, not run.
    Precondition,
    /// Not run: the run stopped at an earlier failure (CONFORMANCE_FAIL_FAST).
    Stopped,
    /// Not run, or cut short: a signal or the run budget ended the run.
    Interrupted,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 15] = [
        Kind::Plain,
        Kind::Check,
        Kind::Panic,
        Kind::Died,
        Kind::Hung,
        Kind::Broken,
        Kind::Crash,
        Kind::Departure,
        Kind::Missing,
        Kind::CannotRun,
        Kind::Expectation,
        Kind::Leak,
        Kind::Precondition,
        Kind::Stopped,
        Kind::Interrupted,
    ];
    /// The name in report.json and JUnit (its serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Plain => "plain",
            Kind::Check => "check",
            Kind::Panic => "panic",
            Kind::Died => "died",
            Kind::Hung => "hung",
            Kind::Broken => "broken",
            Kind::Crash => "crash",
            Kind::Departure => "departure",
            Kind::Missing => "missing-capability",
            Kind::CannotRun => "cannot-run",
            Kind::Expectation => "expectation",
            Kind::Leak => "leak",
            Kind::Precondition => "precondition",
            Kind::Stopped => "stopped",
            Kind::Interrupted => "interrupted",
        }
    }
    /// The kind named `s` (`as_str`), if one is.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the failing call of a failed trial answered (`cause.answer`, a cause group's `answer`); the
/// code or the signal is the `value` beside it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    /// It returned a code (`value`).
    #[default]
    Code,
    /// The process died by a signal (`value`) inside it.
    Signal,
    /// The process ended inside it without a signal.
    Exited,
    /// No answer within the deadline: the process was killed.
    Hung,
}

impl Answer {
    /// The name in report.json (its serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            Answer::Code => "code",
            Answer::Signal => "signal",
            Answer::Exited => "exited",
            Answer::Hung => "hung",
        }
    }
    /// The answer named `s` (`as_str`), if one is.
    pub fn parse(s: &str) -> Option<Answer> {
        [Answer::Code, Answer::Signal, Answer::Exited, Answer::Hung]
            .into_iter()
            .find(|a| a.as_str() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each set's serde name is its `as_str`, and reads back.
    #[test]
    fn serde_names_are_the_report_strings() {
        let name = |v: serde_json::Value| v.as_str().unwrap().to_string();
        for o in Outcome::ALL {
            assert_eq!(name(serde_json::to_value(o).unwrap()), o.as_str());
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::from_value::<Outcome>(o.as_str().into()).unwrap(), o);
        }
        for k in Kind::ALL {
            assert_eq!(name(serde_json::to_value(k).unwrap()), k.as_str());
            assert_eq!(Kind::parse(k.as_str()), Some(k));
        }
        for a in [Answer::Code, Answer::Signal, Answer::Exited, Answer::Hung] {
            assert_eq!(name(serde_json::to_value(a).unwrap()), a.as_str());
            assert_eq!(Answer::parse(a.as_str()), Some(a));
        }
    }
}
