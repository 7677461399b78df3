//! Where the library broke for good: the point of a run after which no trial got a right answer
//! again and the failures answered the same (`detect`, over the report's trials), said once: as
//! the entry that opens report.json's `causes` (`opening`), and as the line report.md and the
//! terminal open with (`line`). Only the trials' recorded answers count (outcome, cause, span,
//! worker), so a report read back says the same; a crash the suite saw is named when there was one,
//! and needed for nothing.
//!
//! The rule, over the trials of the 14 APIs that ran and were judged (ignored, interrupted and not
//! run ones say nothing; an expected failure or a flaky one neither breaks nor counts), in the
//! order they started:
//! - the no-GPU answers (CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_NO_DEVICE) are no answer here: a
//!   machine without a GPU, or a stand-in device over a driver without one, answers them from the
//!   first trial on, and that is the machine (the probe's cuInit line, each trial's "needs `gpu`"),
//!   not a library that broke;
//! - the tail: every trial after the last one that got a right answer (passed, changed, a known
//!   departure);
//! - for each answer its failures gave, the break: from the earliest of the tail's failures giving
//!   it after which at most one failure in [`STRAY`] answers otherwise (a failure that names no
//!   answer, and one whose process died or hung when the answer is a code, answer nothing
//!   otherwise: a crash may be what broke it); the answer whose break holds the most failures
//!   giving it is the one;
//! - the crash: of the tail's trials whose process died or hung, the last to start by the break's
//!   first failure giving the answer (else the first among the break's), when every failure giving
//!   the answer that started before it was still running as it started (caught in flight);
//!   the first trial: the first giving the answer that started after the crash, else the first;
//! - it counts when at least [`MIN_FOLLOWING`] failures of the break gave the answer, in trials of
//!   at least two APIs (one API's trials run last, an IPC lane's say, can all fail by that API
//!   alone), and no failure that ended before the tail began gave it: the answer is new, not the
//!   run's steady failure of one call that happens to end it;
//! - but for a process that broke first (in any process, issue 58): a failure giving the answer
//!   before the tail began does not make it old when its worker (`timing.worker`) got no right
//!   answer from it on and gave the answer again, and the break then reached another worker: the
//!   break opens at the earliest such failure. A layer whose server lost one client's connection
//!   first, then every client's, breaks so; one lane failing alone to the end does not count.
//!
//! `following` counts the break's failures from its earliest giving the answer on, the crash aside;
//! `answering`, those of them that gave it. Each is also listed under its own cause.

use crate::driver::blame::{Answered, Cause};
use crate::driver::cu::CUresult;
use crate::report::causes::{answer_text, text};
use conformance_model::{BrokenAfter, BrokenForGood, CauseGroup, Extra, Outcome, Report, Trial};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// At least this many failures answering the same after the break. Fewer say nothing a run's last
/// few trials failing each by their own cause does not (three of a lane's last trials that need
/// one import, say); five is well below what a broken library leaves (the remoting layer of issue
/// 47: 188) and still met by a run of a few APIs' trials.
pub const MIN_FOLLOWING: usize = 5;

/// At most one failure in this many of a break answers otherwise: a call that reaches the driver
/// beside the broken layer (one outside the 14 APIs) must not hide the break, and a tail of
/// failures of many answers is no break.
pub const STRAY: usize = 10;

/// A trial as the rule sees it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Seen {
    /// It got a right answer: passed, changed, a known departure.
    Right,
    /// It failed, with its failing call's answer if known.
    Failed(Option<Answered>),
    /// A failure the user's expectations list (expected, flaky), with its answer if known.
    Waived(Option<Answered>),
}

/// What a machine without a GPU answers every call: the driver was never initialised, or found no
/// device. Never a break's answer, nor one against it.
pub fn no_gpu_answer(a: Answered) -> bool {
    [CUresult::CUDA_ERROR_NOT_INITIALIZED, CUresult::CUDA_ERROR_NO_DEVICE]
        .iter()
        .any(|c| a == Answered::Code(c.0 as i32))
}

/// How trial `t` counts; None for one the rule does not judge (not one of the 14 APIs', not run,
/// ignored or interrupted). A no-GPU answer counts as none.
fn seen(t: &Trial) -> Option<Seen> {
    if t.api.is_none() || t.span == (0.0, 0.0) {
        return None;
    }
    let answer = t
        .cause
        .as_ref()
        .and_then(|c| Answered::from_parts(c.answer, c.value.map(|v| v as i32)))
        .filter(|a| !no_gpu_answer(*a));
    match t.outcome {
        Outcome::Passed | Outcome::Changed | Outcome::KnownDeparture => Some(Seen::Right),
        Outcome::Failed => Some(Seen::Failed(answer)),
        Outcome::ExpectedFailure | Outcome::Flaky => Some(Seen::Waived(answer)),
        Outcome::Ignored | Outcome::Interrupted => None,
    }
}

/// The process ended (died, exited or hung) rather than a call answering.
fn ended(a: Answered) -> bool {
    !matches!(a, Answered::Code(_))
}

/// What the rule found: the break and the failed trials from its first on, in the order they started.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    pub broken: BrokenForGood,
    pub answer: Answered,
    pub trials: Vec<String>,
}

/// The trial's cause in words (`died by SIGSEGV (11) inside cuMemPoolCreate`).
fn cause_text(t: &Trial, a: Answered) -> String {
    let c = t.cause.as_ref();
    text(Some(&Cause {
        api: c.and_then(|c| c.api).map(|a| a as u32),
        call: c.and_then(|c| c.call.clone()),
        answer: a,
    }))
}

/// Where the library broke for good among `trials` (the rule above); None when it did not.
pub fn detect(trials: &[Trial]) -> Option<Found> {
    let mut order: Vec<(&Trial, Seen)> = trials.iter().filter_map(|t| seen(t).map(|s| (t, s))).collect();
    order.sort_by(|a, b| {
        a.0.span
            .0
            .total_cmp(&b.0.span.0)
            .then_with(|| a.0.trial.cmp(&b.0.trial))
    });
    let answers: BTreeSet<Answered> = order
        .iter()
        .filter_map(|(_, s)| match s {
            Seen::Failed(a) => *a,
            _ => None,
        })
        .collect();
    answers
        .into_iter()
        .filter_map(|a| break_of(&order, a))
        .max_by_key(|f| f.broken.answering)
}

/// The failures that gave `answer` and ended by `began` (the tail's start), by their place in `order`.
fn given_before(order: &[(&Trial, Seen)], answer: Answered, began: f64) -> Vec<usize> {
    order
        .iter()
        .enumerate()
        .filter(|(_, (t, s))| {
            matches!(s, Seen::Failed(Some(a)) | Seen::Waived(Some(a)) if *a == answer) && t.span.1 <= began
        })
        .map(|(i, _)| i)
        .collect()
}

/// The worker a trial ran in (its dispatcher's: `general 0`, a lane's name), where the report says.
fn worker(t: &Trial) -> Option<&str> {
    t.timing.as_ref().and_then(|x| x.worker.as_deref())
}

/// Whether the worker of `order[i]` broke for good there: known, it ran a judged trial after it, got
/// no right answer from it on, and gave `answer` again.
fn worker_broke_at(order: &[(&Trial, Seen)], i: usize, answer: Answered) -> bool {
    let Some(w) = worker(order[i].0) else {
        return false;
    };
    let later: Vec<Seen> = order[i + 1..]
        .iter()
        .filter(|(t, _)| worker(t) == Some(w))
        .map(|(_, s)| *s)
        .collect();
    !later.contains(&Seen::Right) && later.contains(&Seen::Failed(Some(answer)))
}

/// The break of the tail `tail` that answers `answer`, if it counts.
fn break_of(tail: &[(&Trial, Seen)], answer: Answered) -> Option<Found> {
    let gives = |s: &Seen| *s == Seen::Failed(Some(answer));
    // Answers otherwise: a right answer (a lane's trial judging what its children answered before
    // the break, say), a failure with another answer, but a process that ended beside a code.
    let other = |s: &Seen| {
        *s == Seen::Right || matches!(s, Seen::Failed(Some(a)) if *a != answer && (ended(answer) || !ended(*a)))
    };
    // The earliest failure giving it after which at most one in STRAY answers otherwise.
    let (mut giving, mut others, mut start) = (0, 0, None);
    for (i, (_, s)) in tail.iter().enumerate().rev() {
        giving += usize::from(gives(s));
        others += usize::from(other(s));
        if gives(s) && others * STRAY <= giving {
            start = Some(i);
        }
    }
    let mut start = start?;
    // The answer is new: no failure gave it before the failures the break ends (those after the
    // last right answer before it): the run's steady failure of one call that happens to end it is
    // no break. Unless each of those is where its worker broke for good, and the break then
    // reached another worker: the break opens at the first of them (in any process).
    let last_right = tail[..start]
        .iter()
        .rposition(|(_, s)| *s == Seen::Right)
        .map_or(0, |i| i + 1);
    let before = given_before(tail, answer, tail[last_right].0.span.0);
    if let Some(&first) = before.first() {
        let broke_first: BTreeSet<&str> = before.iter().filter_map(|&i| worker(tail[i].0)).collect();
        let spread = tail[start..]
            .iter()
            .any(|(t, s)| gives(s) && worker(t).is_some_and(|w| !broke_first.contains(w)));
        if !(spread && before.iter().all(|&i| worker_broke_at(tail, i, answer))) {
            return None;
        }
        start = first;
    }
    let part = &tail[start..];
    let answering: Vec<&Trial> = part.iter().filter(|(_, s)| gives(s)).map(|(t, _)| *t).collect();
    let apis: BTreeSet<u64> = answering.iter().filter_map(|t| t.api).collect();
    if answering.len() < MIN_FOLLOWING || apis.len() < 2 {
        return None;
    }
    // The crash: of the tail's processes that died or hung (nothing was right after any of them),
    // the last to start by the break's first failure giving the answer, or else the first among
    // the break's; not one separated from the break by a failure giving the answer that ran
    // before it (that failure, not a crash, began the break). A failure answering otherwise
    // between the two does not part them: under load a call outside the layer answering its own
    // code lands anywhere in that short window (issue 47, the fake device on a machine without a GPU).
    let opens = part[0].0.span.0;
    fn died<'t>(entry: &(&'t Trial, Seen), answer: Answered) -> Option<(&'t Trial, Answered)> {
        match entry.1 {
            Seen::Failed(Some(a)) if ended(a) && a != answer => Some((entry.0, a)),
            _ => None,
        }
    }
    let caught = |c: &Trial| {
        answering
            .iter()
            .filter(|t| (t.span.0, &t.trial) < (c.span.0, &c.trial))
            .all(|t| t.span.1 > c.span.0)
    };
    let parted = |c: &Trial| {
        tail.iter()
            .any(|(t, s)| gives(s) && t.span.0 > c.span.0 && t.span.0 < opens)
    };
    let crash = tail
        .iter()
        .filter(|(t, _)| t.span.0 <= opens)
        .rev()
        .find_map(|e| died(e, answer))
        .filter(|(c, _)| !parted(c))
        .or_else(|| part.iter().find_map(|e| died(e, answer)))
        .filter(|(c, _)| caught(c));
    let first_trial = match crash {
        Some((c, _)) => answering
            .iter()
            .copied()
            .find(|t| t.span.0 >= c.span.0)
            .unwrap_or(answering[0]),
        None => answering[0],
    };
    // The failures from the earliest giving it on, the crash's own trial aside.
    let crashed = crash.map(|(c, _)| c.trial.as_str());
    let following: Vec<String> = part
        .iter()
        .filter(|(t, s)| matches!(s, Seen::Failed(_)) && Some(t.trial.as_str()) != crashed)
        .map(|(t, _)| t.trial.clone())
        .collect();
    Some(Found {
        broken: BrokenForGood {
            first_trial: first_trial.trial.clone(),
            at_s: first_trial.span.0,
            answer: answer_text(answer),
            following: following.len() as u64,
            answering: answering.len() as u64,
            after: crash.map(|(t, a)| BrokenAfter {
                trial: t.trial.clone(),
                end_s: t.span.1,
                answer: cause_text(t, a),
                extra: Extra::new(),
            }),
            extra: Extra::new(),
        },
        answer,
        trials: following,
    })
}

/// The one line: "Broken for good from `X` at 4.35 s, after `C` died by SIGSEGV (11) inside
/// cuMemPoolCreate at 4.34 s: the library never answered right again; 105 failures follow, all
/// answering CUDA_ERROR_DEVICE_UNAVAILABLE (46), each listed below by its cause".
pub fn sentence(b: &BrokenForGood) -> String {
    let mut s = format!("Broken for good from `{}` at {:.2} s", b.first_trial, b.at_s);
    if let Some(a) = &b.after {
        write!(s, ", after `{}` {} at {:.2} s", a.trial, a.answer, a.end_s).unwrap();
    }
    let how_many = if b.answering == b.following {
        "all".to_string()
    } else {
        format!("{} of them", b.answering)
    };
    write!(
        s,
        ": the library never answered right again; {} failures follow, {how_many} answering {}, each listed \
         below by its cause",
        b.following, b.answer
    )
    .unwrap();
    s
}

/// report.json's opening entry of `causes` for a run whose trials are `trials`; None when the
/// library did not break for good.
pub fn opening(trials: &[Trial]) -> Option<CauseGroup> {
    let f = detect(trials)?;
    Some(CauseGroup {
        api: None,
        call: None,
        answer: Some(f.answer.name()),
        value: f.answer.value().map(i64::from),
        count: f.trials.len() as u64,
        text: sentence(&f.broken),
        trials: f.trials,
        broken: Some(f.broken),
        extra: Extra::new(),
    })
}

/// The line report.md and the terminal open with, when the report says the library broke for good.
pub fn line(r: &Report) -> Option<&str> {
    r.causes
        .iter()
        .flatten()
        .find(|c| c.broken.is_some())
        .map(|c| c.text.as_str())
}
