//! Which API a failing trial holds responsible, and its cause: the failing call and what it answered.
//!
//! A trial of one API often needs others to set up or to observe (an IPC round trip frees through
//! 822; a trim trial reads 828). When one of those answers wrongly, the report should mark the API
//! that answered wrongly, not the one the trial is filed under: an interposer vendor reads the
//! table to learn which APIs their library reproduces. Checks that fail (`driver::ok`, `expect`)
//! name the call they checked; a child or worker that died inside a tracked call leaves a
//! breadcrumb (`crumb.rs`). The first such API seen during a trial is its blame; with none, the
//! trial's own API is.
//!
//! The cause is the same knowledge as data, for grouping: the first checked call of a trial that
//! answered wrongly (`answered`, from `driver::expect` and `departures::expect_code`), or the call a
//! process died or hung inside (`Cause::died`, `Cause::hung`, from the breadcrumb). The report
//! groups failures by it (`report::causes`): a vendor reads one line per cause, not one per trial.

use crate::driver::cu::CUresult;
use conformance_model::{Answer, FailureCause};
use std::cell::{Cell, RefCell};

thread_local! {
    static BLAME: Cell<Option<u32>> = const { Cell::new(None) };
    static CAUSE: RefCell<Option<Cause>> = const { RefCell::new(None) };
}

/// What a failing call answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Answered {
    /// It returned this value: a CUresult, or a value no CUresult is (an interposer's -1).
    Code(i32),
    /// The process died by this signal inside it.
    Signal(i32),
    /// The process ended inside it without a signal (it exited).
    Exited,
    /// No answer within the deadline: the process was killed.
    Hung,
}

/// Why a trial failed, typed: the API and entry point of the failing call (none when the process
/// died or hung outside every tracked call) and what it answered. Failures with equal causes are
/// one line of the report.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cause {
    pub api: Option<u32>,
    pub call: Option<String>,
    pub answer: Answered,
}

impl Answered {
    /// Its name in report.json and in a worker's answer (the code or the signal is the value
    /// beside it).
    pub fn name(self) -> Answer {
        match self {
            Answered::Code(_) => Answer::Code,
            Answered::Signal(_) => Answer::Signal,
            Answered::Exited => Answer::Exited,
            Answered::Hung => Answer::Hung,
        }
    }
    /// The name in report.json and in a worker's answer.
    pub fn as_str(self) -> &'static str {
        self.name().as_str()
    }
    /// The answer of this name and value; None for a code or a signal without its value.
    pub fn from_parts(name: Answer, value: Option<i32>) -> Option<Answered> {
        match (name, value) {
            (Answer::Code, Some(v)) => Some(Answered::Code(v)),
            (Answer::Signal, Some(v)) => Some(Answered::Signal(v)),
            (Answer::Exited, _) => Some(Answered::Exited),
            (Answer::Hung, _) => Some(Answered::Hung),
            _ => None,
        }
    }
    /// The code or the signal number.
    pub fn value(self) -> Option<i32> {
        match self {
            Answered::Code(v) | Answered::Signal(v) => Some(v),
            Answered::Exited | Answered::Hung => None,
        }
    }
}

impl Cause {
    /// A checked call described by `what` (`cuMemFreeAsync(interior pointer)`) returned `got`.
    pub fn returned(what: &str, got: CUresult) -> Cause {
        let call = entry_point(what);
        Cause {
            api: api_of(call),
            call: Some(call.to_string()),
            answer: Answered::Code(got.0 as i32),
        }
    }
    /// The process died (by `signal`, if one) inside the breadcrumb's call, if it left one.
    pub fn died(signal: Option<i32>, inside: &Option<(u32, String)>) -> Cause {
        Cause::inside(inside, signal.map_or(Answered::Exited, Answered::Signal))
    }
    /// The process hung inside the breadcrumb's call, if it left one.
    pub fn hung(inside: &Option<(u32, String)>) -> Cause {
        Cause::inside(inside, Answered::Hung)
    }
    fn inside(inside: &Option<(u32, String)>, answer: Answered) -> Cause {
        Cause {
            api: inside.as_ref().map(|i| i.0),
            call: inside.as_ref().map(|i| i.1.clone()),
            answer,
        }
    }
    /// The cause as the model keeps it (report.json's `cause`, a worker's answer's): the one
    /// place the driver's typed cause becomes the model's.
    pub fn to_model(&self) -> FailureCause {
        FailureCause {
            api: self.api.map(u64::from),
            call: self.call.clone(),
            answer: self.answer.name(),
            value: self.answer.value().map(i64::from),
            extra: Default::default(),
        }
    }
    /// The cause the model's `c` says; None where it says none that can be (a code or a signal
    /// without its value, a value or an API out of range).
    pub fn from_model(c: &FailureCause) -> Option<Cause> {
        let value = match c.value {
            Some(v) => Some(i32::try_from(v).ok()?),
            None => None,
        };
        let api = match c.api {
            Some(a) => Some(u32::try_from(a).ok()?),
            None => None,
        };
        Some(Cause {
            api,
            call: c.call.clone(),
            answer: Answered::from_parts(c.answer, value)?,
        })
    }
}

/// Forget the blame and the cause of the previous trial on this thread.
pub fn reset() {
    BLAME.with(|b| b.set(None));
    CAUSE.with(|c| *c.borrow_mut() = None);
}

/// A checked call (`what` starts with the call's name) answered `got`, which was wrong: hold its API
/// responsible (as `set`) and keep it as the trial's cause, unless an earlier wrong answer was kept.
pub fn answered(what: &str, got: CUresult) {
    if let Some(api) = api_of(what) {
        set(api);
    }
    CAUSE.with(|c| {
        c.borrow_mut().get_or_insert_with(|| Cause::returned(what, got));
    });
}

/// The first wrong answer of this trial so far, if any.
pub fn cause() -> Option<Cause> {
    CAUSE.with(|c| c.borrow().clone())
}

/// Hold `api` responsible, unless an earlier check of this trial already named one.
pub fn set(api: u32) {
    BLAME.with(|b| {
        if b.get().is_none() {
            b.set(Some(api));
        }
    });
}

/// The API held responsible so far, if any.
pub fn get() -> Option<u32> {
    BLAME.with(|b| b.get())
}

/// The index of the API a check's description starts with: `cuMemFreeAsync(interior pointer)` →
/// 822. `_ptsz` variants count as their API. Descriptions that start with anything else → None.
pub fn api_of(what: &str) -> Option<u32> {
    let ident: &str = what
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    let ident = ident.strip_suffix("_ptsz").unwrap_or(ident);
    crate::driver::APIS
        .iter()
        .find(|(_, name)| *name == ident)
        .map(|(i, _)| *i)
}

/// The driver entry point a check's description names: its first word of the form `cu` and a
/// capital (`second cuMemFreeAsync of the same pointer` → `cuMemFreeAsync`, `_ptsz` kept); a
/// description that names none is its own call (`grant`).
fn entry_point(what: &str) -> &str {
    what.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|w| {
            w.strip_prefix("cu")
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_uppercase()))
        })
        .unwrap_or(what)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn names_the_leading_api() {
        assert_eq!(api_of("cuMemFreeAsync(interior pointer)"), Some(822));
        assert_eq!(api_of("cuMemAllocAsync_ptsz(stream 0)"), Some(820));
        assert_eq!(api_of("cuMemPoolCreate"), Some(823));
        assert_eq!(api_of("grant"), None);
        assert_eq!(api_of("cuMemPoolCreateX"), None);
    }
    #[test]
    fn first_blame_wins_until_reset() {
        reset();
        set(822);
        set(833);
        assert_eq!(get(), Some(822));
        reset();
        assert_eq!(get(), None);
    }
    #[test]
    fn the_first_wrong_answer_is_the_cause_until_reset() {
        reset();
        answered("second cuMemFreeAsync of the same pointer", CUresult(u32::MAX));
        answered("cuMemPoolTrimTo(0)", CUresult::CUDA_ERROR_INVALID_VALUE);
        let c = cause().unwrap();
        assert_eq!(c.api, Some(822));
        assert_eq!(c.call.as_deref(), Some("cuMemFreeAsync"));
        assert_eq!(c.answer, Answered::Code(-1));
        // The description does not start with the call: no blame from it, as before.
        assert_eq!(get(), Some(833));
        reset();
        assert_eq!(cause(), None);
    }
    #[test]
    fn entry_points_and_the_model() {
        assert_eq!(entry_point("cuMemAllocAsync_ptsz(stream 0)"), "cuMemAllocAsync_ptsz");
        assert_eq!(entry_point("sync per-thread"), "sync per-thread");
        assert_eq!(entry_point("cudaless cuStreamSynchronize"), "cuStreamSynchronize");
        for c in [
            Cause::returned("cuMemPoolCreate", CUresult::CUDA_ERROR_OUT_OF_MEMORY),
            Cause::died(Some(11), &Some((833, "cuMemPoolTrimTo".into()))),
            Cause::died(None, &None),
            Cause::hung(&Some((822, "cuMemFreeAsync".into()))),
        ] {
            assert_eq!(Cause::from_model(&c.to_model()), Some(c));
        }
        let no_value = FailureCause {
            answer: Answer::Signal,
            ..FailureCause::default()
        };
        assert_eq!(Cause::from_model(&no_value), None);
        let too_big = FailureCause {
            value: Some(i64::MAX),
            ..FailureCause::default()
        };
        assert_eq!(Cause::from_model(&too_big), None);
    }
}
