//! Failures grouped by cause (the same API, the same call, the same answer or signal), most trials
//! first: the one grouping, made from the run's records into report.json's `causes`, which
//! report.md, the terminal's last screen and JUnit read.

use crate::driver::blame::{Answered, Cause};
use crate::driver::cu::CUresult;
use crate::harness::child::signal_name;
use crate::harness::outcome::{Outcome, Record};
use conformance_model::{CauseGroup, Extra, Report};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// At most this many trial names on a cause's line of report.md and the terminal; report.json
/// lists them all.
pub const SHOWN: usize = 5;

/// One cause and the failed trials it explains, by name. No cause: the failures without a failing
/// call to group by (a wrong value or effect, a panic, a leak, a missing capability).
pub struct Causes<'a> {
    pub cause: Option<Cause>,
    pub trials: Vec<&'a str>,
}

/// The failed records by cause: most trials first, equal counts in the causes' order, the failures
/// without a cause last.
pub fn group(records: &[Record]) -> Vec<Causes<'_>> {
    let mut by: BTreeMap<Option<Cause>, Vec<&str>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.outcome == Outcome::Failed) {
        by.entry(r.cause()).or_default().push(&r.trial);
    }
    let mut v: Vec<Causes> = by
        .into_iter()
        .map(|(cause, mut trials)| {
            trials.sort_unstable();
            Causes { cause, trials }
        })
        .collect();
    v.sort_by_key(|c| (c.cause.is_none(), std::cmp::Reverse(c.trials.len())));
    v
}

/// `CUDA_ERROR_INVALID_VALUE (1)`, `-1 (no CUresult)`, `died by SIGSEGV (11)`, `exited`, `hung`.
pub fn answer_text(a: Answered) -> String {
    match a {
        Answered::Code(c) => match CUresult(c as u32).name() {
            Some(name) => format!("{name} ({c})"),
            None => format!("{c} (no CUresult)"),
        },
        Answered::Signal(s) => format!("died by {}", signal_name(s)),
        Answered::Exited => "exited".to_string(),
        Answered::Hung => "hung".to_string(),
    }
}

const NONE_TEXT: &str = "no failing call to group by (a wrong value or effect, a panic, a leak): see each trial";

/// The cause in words: `cuMemFreeAsync returned -1 (no CUresult)`, `died by SIGSEGV (11) inside
/// cuMemPoolTrimTo`, `hung outside the tracked calls`.
pub fn text(cause: Option<&Cause>) -> String {
    let Some(c) = cause else {
        return NONE_TEXT.to_string();
    };
    match (&c.call, c.answer) {
        (Some(call), Answered::Code(_)) => format!("{call} returned {}", answer_text(c.answer)),
        (Some(call), a) => format!("{} inside {call}", answer_text(a)),
        (None, a) => format!("{} outside the tracked calls", answer_text(a)),
    }
}

/// `823 cuMemPoolCreate`, or `—` for a call outside the 14 APIs.
fn api_text(api: Option<u32>) -> String {
    api.map_or("—".to_string(), |a| format!("{a} {}", crate::driver::api_name(a)))
}

/// "`a`, `b`, … and 3 more".
fn names(trials: &[&str]) -> String {
    let mut s: Vec<String> = trials.iter().take(SHOWN).map(|t| format!("`{t}`")).collect();
    if trials.len() > SHOWN {
        s.push(format!("and {} more", trials.len() - SHOWN));
    }
    s.join(", ")
}

/// report.md's table of the failures by cause, one row per cause (the terminal prints it too),
/// under its heading row; not the entry that says where the library broke for good
/// (`report::broken`: its line opens report.md and the terminal instead).
pub fn table(causes: &[CauseGroup]) -> String {
    let mut s = String::new();
    writeln!(s, "| failed trials, by cause | API | call | answer | trials |").unwrap();
    writeln!(s, "|---|---|---|---|---|").unwrap();
    for c in causes.iter().filter(|c| c.broken.is_none()) {
        let (api, call, answer) = match &c.answer {
            Some(a) => (
                api_text(c.api.map(|a| a as u32)),
                c.call
                    .as_deref()
                    .map_or("— (outside the tracked calls)".to_string(), |c| format!("`{c}`")),
                Answered::from_parts(*a, c.value.map(|v| v as i32)).map_or(a.as_str().to_string(), answer_text),
            ),
            None => ("—".to_string(), "—".to_string(), NONE_TEXT.to_string()),
        };
        let trials: Vec<&str> = c.trials.iter().map(String::as_str).collect();
        writeln!(
            s,
            "| {} | {api} | {call} | {answer} | {} |",
            trials.len(),
            names(&trials)
        )
        .unwrap();
    }
    s
}

/// report.json's `causes`: one per cause, in `group`'s order, its trials all named (`answer`:
/// code, signal, exited, hung; the cause's fields null for the failures without one).
pub fn groups(records: &[Record]) -> Vec<CauseGroup> {
    group(records)
        .iter()
        .map(|c| CauseGroup {
            api: c.cause.as_ref().and_then(|k| k.api).map(u64::from),
            call: c.cause.as_ref().and_then(|k| k.call.clone()),
            answer: c.cause.as_ref().map(|k| k.answer.name()),
            value: c.cause.as_ref().and_then(|k| k.answer.value()).map(i64::from),
            count: c.trials.len() as u64,
            text: text(c.cause.as_ref()),
            trials: c.trials.iter().map(|t| t.to_string()).collect(),
            broken: None,
            extra: Extra::new(),
        })
        .collect()
}

/// For each failed trial of `r` with a cause, its words and how many failed trials share it
/// (JUnit's failure type, the last screen's line); the break for good is no trial's cause.
pub fn by_trial(r: &Report) -> BTreeMap<&str, (&str, usize)> {
    let mut m = BTreeMap::new();
    for c in r
        .causes
        .iter()
        .flatten()
        .filter(|c| c.answer.is_some() && c.broken.is_none())
    {
        for t in &c.trials {
            m.insert(t.as_str(), (c.text.as_str(), c.trials.len()));
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::case::Group;
    use crate::harness::outcome::Kind;
    use conformance_model::Answer;

    fn failed(trial: &str, cause: Option<Cause>) -> Record {
        Record::new(trial, Group::Api(822), Outcome::Failed, Kind::Check, "words".into()).with(|r| {
            r.set_cause(cause.as_ref());
        })
    }
    fn free_returned(code: u32) -> Option<Cause> {
        Some(Cause::returned("cuMemFreeAsync(p)", CUresult(code)))
    }
    fn at(api: u32, sym: &str) -> Option<(u32, String)> {
        Some((api, sym.to_string()))
    }

    #[test]
    fn the_same_cause_is_one_line_with_its_count_and_trials() {
        let records = vec![
            failed("822_x::c", free_returned(u32::MAX)),
            failed("822_x::a", free_returned(u32::MAX)),
            // The same call described otherwise: the same cause.
            failed(
                "822_x::b",
                Some(Cause::returned(
                    "second cuMemFreeAsync of the same pointer",
                    CUresult(u32::MAX),
                )),
            ),
            failed("823_x::d", Some(Cause::returned("cuMemPoolCreate", CUresult(2)))),
            // Passed trials never count, whatever they carry.
            failed("822_x::e", free_returned(u32::MAX)).with(|r| {
                r.outcome = Outcome::Passed;
            }),
        ];
        let g = group(&records);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].trials, ["822_x::a", "822_x::b", "822_x::c"]);
        assert_eq!(text(g[0].cause.as_ref()), "cuMemFreeAsync returned -1 (no CUresult)");
        assert_eq!(g[0].cause.as_ref().unwrap().api, Some(822));
        assert_eq!(g[1].trials, ["823_x::d"]);
        assert_eq!(
            text(g[1].cause.as_ref()),
            "cuMemPoolCreate returned CUDA_ERROR_OUT_OF_MEMORY (2)"
        );
    }

    #[test]
    fn two_answers_of_one_call_are_two_causes() {
        let records = vec![
            failed("a", free_returned(1)),
            failed("b", free_returned(u32::MAX)),
            failed("c", free_returned(u32::MAX)),
        ];
        let g = group(&records);
        assert_eq!(g.len(), 2);
        assert_eq!(
            (g[0].trials.len(), g[0].cause.as_ref().unwrap().answer),
            (2, Answered::Code(-1))
        );
        assert_eq!(
            (g[1].trials.len(), g[1].cause.as_ref().unwrap().answer),
            (1, Answered::Code(1))
        );
    }

    #[test]
    fn crashes_group_by_signal_and_api_and_the_uncaused_come_last() {
        let records = vec![
            failed("n1", None),
            failed("n2", None),
            failed("n3", None),
            failed("s1", Some(Cause::died(Some(11), &at(833, "cuMemPoolTrimTo")))),
            failed("s2", Some(Cause::died(Some(11), &at(833, "cuMemPoolTrimTo")))),
            failed("s3", Some(Cause::died(Some(6), &at(833, "cuMemPoolTrimTo")))),
            failed("s4", Some(Cause::died(Some(11), &at(824, "cuMemPoolDestroy")))),
            failed("o1", Some(Cause::died(Some(11), &None))),
            failed("h1", Some(Cause::hung(&at(822, "cuMemFreeAsync")))),
        ];
        let g = group(&records);
        let lines: Vec<(usize, String)> = g.iter().map(|c| (c.trials.len(), text(c.cause.as_ref()))).collect();
        assert_eq!(lines[0], (2, "died by SIGSEGV (11) inside cuMemPoolTrimTo".to_string()));
        assert_eq!(g.len(), 6, "{lines:?}");
        assert!(lines.contains(&(1, "died by SIGABRT (6) inside cuMemPoolTrimTo".to_string())));
        assert!(lines.contains(&(1, "died by SIGSEGV (11) inside cuMemPoolDestroy".to_string())));
        assert!(lines.contains(&(1, "died by SIGSEGV (11) outside the tracked calls".to_string())));
        assert!(lines.contains(&(1, "hung inside cuMemFreeAsync".to_string())));
        // More trials than any cause, still last: they share no call.
        assert_eq!(lines[5], (3, NONE_TEXT.to_string()));
    }

    #[test]
    fn every_renderer_reads_the_grouping() {
        let records: Vec<Record> = (0..7)
            .map(|i| failed(&format!("822_x::t{i}"), free_returned(u32::MAX)))
            .chain([failed("823_x::other", None)])
            .collect();
        let j = groups(&records);
        let md = table(&j);
        assert!(
            md.contains("| 7 | 822 cuMemFreeAsync | `cuMemFreeAsync` | -1 (no CUresult) | `822_x::t0`, `822_x::t1`, `822_x::t2`, `822_x::t3`, `822_x::t4`, and 2 more |"),
            "{md}"
        );
        assert_eq!(j[0].count, 7);
        assert_eq!(j[0].trials.len(), 7);
        assert_eq!((j[0].answer.map(Answer::as_str), j[0].value), (Some("code"), Some(-1)));
        assert_eq!(j[1].answer, None);
        let report = Report {
            causes: Some(j),
            ..Report::default()
        };
        assert_eq!(by_trial(&report)["822_x::t3"].1, 7);
        assert!(!by_trial(&report).contains_key("823_x::other"));
        assert!(groups(&[]).is_empty());
    }
}
