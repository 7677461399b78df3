//! Where the library broke for good (`report::broken`), on made-up runs: a crash after which every
//! call answers one code is found and said once (report.json's `causes`, report.md, the terminal),
//! and so is a break without a crash, one that reached one process first, then every other;
//! scattered failures, a run's last few failures, one API's trials run last, an answer the run gave
//! all along, one lane failing alone to the end, the no-GPU answers of a machine without one and an
//! interrupted run are not taken for it; no committed run is.

use super::broken::{detect, opening, MIN_FOLLOWING};
use super::{causes, markdown, screen};
use crate::driver::blame::Answered;
use conformance_model::{Answer, FailureCause, Outcome, Report, Timing, Trial};

const UNAVAILABLE: i64 = 46;
const SIGSEGV: i64 = 11;
const NOT_INITIALIZED: i64 = 3;
const NO_DEVICE: i64 = 100;

/// A trial of API `api` over `span`, that came to `outcome`.
fn trial(name: &str, api: u64, outcome: &str, span: (f64, f64)) -> Trial {
    Trial {
        trial: name.to_string(),
        api: Some(api),
        group: format!("{api}_x"),
        outcome: Outcome::parse(outcome).expect("an outcome"),
        span,
        ..Trial::default()
    }
}

/// A failed trial whose call `call` (of API `of`) answered `answer` (`code`, `signal`, …) `value`.
fn failed(name: &str, api: u64, at: f64, of: u64, call: &str, answer: &str, value: Option<i64>) -> Trial {
    Trial {
        cause: Some(FailureCause {
            api: Some(of),
            call: Some(call.to_string()),
            answer: Answer::parse(answer).expect("an answer"),
            value,
            ..FailureCause::default()
        }),
        ..trial(name, api, "failed", (at, at + 0.5))
    }
}

/// A trial whose cuMemPoolCreate answered DEVICE_UNAVAILABLE.
fn unavailable(name: &str, api: u64, at: f64) -> Trial {
    failed(name, api, at, 823, "cuMemPoolCreate", "code", Some(UNAVAILABLE))
}

/// 40 trials of the 14 APIs that pass, one a second from 0 s.
fn passing() -> Vec<Trial> {
    (0..40)
        .map(|i| {
            trial(
                &format!("{}_x::p{i:02}", 820 + i % 14),
                820 + i % 14,
                "passed",
                (i as f64, i as f64 + 0.5),
            )
        })
        .collect()
}

/// The shim's 823-broken-after-crash, made up: 40 passes, then a NULL out-pointer crashes
/// cuMemPoolCreate at 40 s, and every one of the 20 trials after it fails with DEVICE_UNAVAILABLE;
/// one trial that started before the crash fails with it too.
fn broken_run() -> Vec<Trial> {
    let mut v = passing();
    v.push(unavailable("829_x::in_flight", 829, 39.8));
    v.push(failed(
        "823_x::null_pool_out_invalid_value",
        823,
        40.0,
        823,
        "cuMemPoolCreate",
        "signal",
        Some(SIGSEGV),
    ));
    v.extend((0..20).map(|i| unavailable(&format!("{}_x::f{i:02}", 820 + i % 14), 820 + i % 14, 41.0 + i as f64)));
    // The suite's own checks and the ignored trials say nothing.
    v.push(Trial {
        api: None,
        ..trial("suite::no_leaks", 0, "passed", (61.0, 61.5))
    });
    v.push(trial("833_x::ignored_late", 833, "ignored", (62.0, 62.1)));
    v
}

#[test]
fn a_crash_then_one_answer_for_good_is_found_with_its_first_trial() {
    let f = detect(&broken_run()).expect("the break is found");
    let b = &f.broken;
    assert_eq!(b.first_trial, "820_x::f00");
    assert_eq!(b.at_s, 41.0);
    assert_eq!(b.answer, "CUDA_ERROR_DEVICE_UNAVAILABLE (46)");
    // The one caught in flight counts, the crash does not.
    assert_eq!((b.following, b.answering), (21, 21));
    assert_eq!(f.answer, Answered::Code(UNAVAILABLE as i32));
    assert_eq!(f.trials.len(), 21);
    assert_eq!(
        (f.trials[0].as_str(), f.trials[1].as_str()),
        ("829_x::in_flight", "820_x::f00")
    );
    let after = b.after.as_ref().expect("the crash before it is named");
    assert_eq!(after.trial, "823_x::null_pool_out_invalid_value");
    assert_eq!(after.end_s, 40.5);
    assert_eq!(after.answer, "died by SIGSEGV (11) inside cuMemPoolCreate");
}

#[test]
fn the_break_opens_causes_the_report_and_the_terminal_once() {
    let trials = broken_run();
    let opening = opening(&trials).expect("an opening entry");
    assert_eq!(
        opening.text,
        "Broken for good from `820_x::f00` at 41.00 s, after `823_x::null_pool_out_invalid_value` died by SIGSEGV \
         (11) inside cuMemPoolCreate at 40.50 s: the library never answered right again; 21 failures follow, all \
         answering CUDA_ERROR_DEVICE_UNAVAILABLE (46), each listed below by its cause"
    );
    assert_eq!(
        (opening.answer.map(Answer::as_str), opening.value, opening.count),
        (Some("code"), Some(46), 21)
    );
    // The failures stay listed by cause below it (grouped as any run's are, here from the model).
    let below = conformance_model::CauseGroup {
        api: Some(823),
        call: Some("cuMemPoolCreate".to_string()),
        answer: Some(Answer::Code),
        value: Some(UNAVAILABLE),
        count: 21,
        text: "cuMemPoolCreate returned CUDA_ERROR_DEVICE_UNAVAILABLE (46)".to_string(),
        trials: trials
            .iter()
            .filter(|t| t.cause.as_ref().is_some_and(|c| c.value == Some(UNAVAILABLE)))
            .map(|t| t.trial.clone())
            .collect(),
        ..Default::default()
    };
    let r = Report {
        causes: Some(vec![opening.clone(), below]),
        trials: Some(trials),
        ..Report::default()
    };
    let json = r.to_json_text();
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r, "report.json keeps the break");
    assert_eq!(
        back.causes.as_ref().unwrap()[0].broken.as_ref().unwrap().first_trial,
        "820_x::f00"
    );
    let md = markdown::render(&r);
    let line = format!("**{}.**", opening.text);
    assert_eq!(md.matches(&line).count(), 1, "{md}");
    assert!(md.find(&line) < md.find("| Index |"), "report.md opens with it");
    let table = causes::table(r.causes.as_ref().unwrap());
    assert!(!table.contains("Broken for good"), "not a row of the table: {table}");
    assert!(table.contains("| 21 | 823 cuMemPoolCreate |"), "{table}");
    let terminal = screen::tables(&r);
    assert_eq!(terminal[0], format!("{}.", opening.text));
    assert_eq!(terminal.iter().filter(|l| l.contains("Broken for good")).count(), 1);
    // A failure's own cause is still its line's and JUnit's, not the break.
    assert_eq!(causes::by_trial(&r)["820_x::f00"].1, 21);
}

#[test]
fn every_trial_failing_from_the_start_breaks_at_the_first() {
    let v: Vec<Trial> = (0..8)
        .map(|i| unavailable(&format!("{}_x::f{i}", 820 + i), 820 + i, i as f64))
        .collect();
    let f = detect(&v).expect("found");
    assert_eq!((f.broken.first_trial.as_str(), f.broken.following), ("820_x::f0", 8));
    assert!(f.broken.after.is_none());
}

#[test]
fn scattered_failures_are_no_break() {
    // A normal run: a failure every fifth trial, all answering the same, passes in between and last.
    let v: Vec<Trial> = (0..100)
        .map(|i| {
            let api = 820 + i % 14;
            if i % 5 == 0 {
                unavailable(&format!("{api}_x::t{i:03}"), api, i as f64)
            } else {
                trial(&format!("{api}_x::t{i:03}"), api, "passed", (i as f64, i as f64 + 0.5))
            }
        })
        .collect();
    assert_eq!(detect(&v), None);
}

#[test]
fn the_last_few_failures_are_no_break() {
    let run = |n: usize| {
        let mut v = passing();
        v.extend((0..n).map(|i| unavailable(&format!("{}_x::f{i}", 820 + i), 820 + i as u64, 50.0 + i as f64)));
        v
    };
    assert_eq!(detect(&run(MIN_FOLLOWING - 1)), None, "fewer than {MIN_FOLLOWING}");
    assert!(detect(&run(MIN_FOLLOWING)).is_some(), "{MIN_FOLLOWING} are enough");
    // The last ones failing each by its own answer: no one answer.
    let mut v = passing();
    v.extend((0..10).map(|i| {
        let api = 820 + i as u64;
        failed(
            &format!("{api}_x::f{i}"),
            api,
            50.0 + i as f64,
            api,
            "cuX",
            "code",
            Some(i),
        )
    }));
    assert_eq!(detect(&v), None);
    // A wrong value or a panic names no answer: nothing to say the library broke.
    let mut v = passing();
    v.extend((0..10).map(|i| {
        trial(
            &format!("{}_x::f{i}", 820 + i),
            820 + i,
            "failed",
            (50.0 + i as f64, 51.0),
        )
    }));
    assert_eq!(detect(&v), None);
}

#[test]
fn one_apis_trials_run_last_are_no_break() {
    // An IPC lane's last trials, all of 830, refused by a mutant of 830.
    let mut v = passing();
    v.extend((0..12).map(|i| {
        failed(
            &format!("830_x::f{i:02}"),
            830,
            50.0 + i as f64,
            830,
            "cuMemPoolImportPointer",
            "code",
            Some(2),
        )
    }));
    assert_eq!(detect(&v), None, "one API");
    // Of two APIs, but the run gave that answer before, long before the end: its steady failure.
    let mut v = passing();
    v.push(failed(
        "830_x::early",
        830,
        10.2,
        830,
        "cuMemPoolImportPointer",
        "code",
        Some(2),
    ));
    v.extend((0..12).map(|i| {
        let api = 830 + i % 2;
        failed(
            &format!("{api}_x::f{i:02}"),
            api,
            50.0 + i as f64,
            830,
            "cuMemPoolImportPointer",
            "code",
            Some(2),
        )
    }));
    assert_eq!(detect(&v), None, "an answer the run gave all along");
    // The same without the early one: new, and found.
    v.retain(|t| t.trial != "830_x::early");
    assert!(detect(&v).is_some());
}

#[test]
fn an_interrupted_run_counts_only_what_ran() {
    // Cut short after the break: the trials cut short or not run say nothing, the break stands.
    let mut v = broken_run();
    v.push(trial("821_x::cut_short", 821, "interrupted", (61.0, 62.0)));
    v.push(trial("822_x::not_run", 822, "interrupted", (0.0, 0.0)));
    let f = detect(&v).expect("found");
    assert_eq!(f.broken.following, 21);
    // Cut right after the crash and three failures: too few to say.
    let mut v = passing();
    v.push(failed(
        "823_x::crash",
        823,
        40.0,
        823,
        "cuMemPoolCreate",
        "signal",
        Some(SIGSEGV),
    ));
    v.extend((0..3).map(|i| unavailable(&format!("{}_x::f{i}", 820 + i), 820 + i as u64, 41.0 + i as f64)));
    v.extend((0..30).map(|i| trial(&format!("833_x::cut{i:02}"), 833, "interrupted", (0.0, 0.0))));
    assert_eq!(detect(&v), None);
}

#[test]
fn a_stray_answer_in_the_break_is_borne_and_many_are_not() {
    // One failure of another call answering otherwise among the 21: still the break, from the crash.
    let mut v = broken_run();
    v.push(failed("828_x::other", 828, 45.2, 828, "cuMemAlloc", "code", Some(2)));
    let f = detect(&v).expect("found");
    assert_eq!(f.broken.first_trial, "820_x::f00");
    assert_eq!((f.broken.following, f.broken.answering), (22, 21));
    assert!(f.broken.after.is_some());
    assert!(super::broken::sentence(&f.broken).contains("22 failures follow, 21 of them answering"));
    // Three of them: more than one in ten, so the break starts after the last of them.
    let mut v = broken_run();
    for (i, at) in [45.2, 45.3, 45.4].into_iter().enumerate() {
        v.push(failed(
            &format!("828_x::other{i}"),
            828,
            at,
            828,
            "cuMemAlloc",
            "code",
            Some(2),
        ));
    }
    let f = detect(&v).expect("found");
    assert_eq!(f.broken.first_trial, "825_x::f05");
    assert_eq!((f.broken.following, f.broken.answering), (15, 15));
    assert!(f.broken.after.is_none(), "the crash is before the other failures");
    // Expected failures neither break nor count.
    let mut v = broken_run();
    v.push(Trial {
        outcome: Outcome::ExpectedFailure,
        ..failed(
            "828_x::expected",
            828,
            45.2,
            828,
            "cuMemPoolGetAttribute",
            "code",
            Some(1),
        )
    });
    assert_eq!(detect(&v).unwrap().broken.following, 21);
}

/// `t`, run by worker `w` (a dispatcher's name: `general 0`, a lane's).
fn on(w: &str, t: Trial) -> Trial {
    Trial {
        timing: Some(Timing {
            worker: Some(w.to_string()),
            ..Timing::default()
        }),
        ..t
    }
}

#[test]
fn a_break_without_a_crash_is_found_at_its_first_failure() {
    // The shim's broken-without-crash, made up: 40 passes, then every call answers
    // DEVICE_UNAVAILABLE, no process dies.
    let mut v = passing();
    v.extend((0..20).map(|i| unavailable(&format!("{}_x::f{i:02}", 820 + i % 14), 820 + i % 14, 40.0 + i as f64)));
    let f = detect(&v).expect("found");
    assert_eq!((f.broken.first_trial.as_str(), f.broken.at_s), ("820_x::f00", 40.0));
    assert_eq!((f.broken.following, f.broken.answering), (20, 20));
    assert!(f.broken.after.is_none(), "no crash is made up");
    assert_eq!(
        super::broken::sentence(&f.broken),
        "Broken for good from `820_x::f00` at 40.00 s: the library never answered right again; 20 failures \
         follow, all answering CUDA_ERROR_DEVICE_UNAVAILABLE (46), each listed below by its cause"
    );
}

#[test]
fn the_no_gpu_answers_are_no_break() {
    // A stand-in device over a driver without one (the shim's fake-device here): every call that
    // needs the device answers NOT_INITIALIZED from the first trial on, beside the no-device
    // trials that pass; and NO_DEVICE likewise.
    for code in [NOT_INITIALIZED, NO_DEVICE] {
        let mut v: Vec<Trial> = (0..10)
            .map(|i| {
                trial(
                    &format!("{}_x::p{i}", 820 + i),
                    820 + i,
                    "passed",
                    (i as f64, i as f64 + 0.5),
                )
            })
            .collect();
        v.extend((0..200).map(|i| {
            let api = 820 + i % 14;
            failed(
                &format!("{api}_x::f{i:03}"),
                api,
                10.0 + i as f64,
                api,
                "cuStreamCreate",
                "code",
                Some(code),
            )
        }));
        assert_eq!(detect(&v), None, "{code}");
    }
    // Beside a break, they answer nothing: neither the break's answer nor one against it.
    let mut v = broken_run();
    v.extend((0..10).map(|i| {
        let api = 820 + i % 14;
        failed(
            &format!("{api}_x::n{i}"),
            api,
            45.05 + i as f64,
            api,
            "cuStreamCreate",
            "code",
            Some(NOT_INITIALIZED),
        )
    }));
    let f = detect(&v).expect("found");
    assert_eq!(f.broken.first_trial, "820_x::f00");
    assert_eq!((f.broken.following, f.broken.answering), (31, 21));
}

/// 60 s of three general workers passing, one trial a second each (`general 0` at 0 s, 3 s, …),
/// and from `broke` s on every trial of `general 0` failing with DEVICE_UNAVAILABLE; from `all` s
/// on, every worker's.
fn ragged(broke: f64, all: f64) -> Vec<Trial> {
    let mut v = Vec::new();
    for i in 0..60 {
        let (at, w) = (i as f64, format!("general {}", i % 3));
        let api = 820 + (i % 14) as u64;
        let name = format!("{api}_x::t{i:02}");
        v.push(on(
            &w,
            if at >= all || (w == "general 0" && at >= broke) {
                unavailable(&name, api, at)
            } else {
                trial(&name, api, "passed", (at, at + 0.5))
            },
        ));
    }
    v
}

#[test]
fn a_break_that_reached_one_process_first_opens_there() {
    // A layer whose server lost one client first: general 0 fails from 21 s on (7 failures while
    // the other two pass 13 trials), then every worker from 42 s. Its first failure is the break's.
    let v = ragged(21.0, 42.0);
    let f = detect(&v).expect("found");
    assert_eq!((f.broken.first_trial.as_str(), f.broken.at_s), ("827_x::t21", 21.0));
    assert_eq!((f.broken.following, f.broken.answering), (25, 25));
    // Without the workers the report cannot tell a process that broke first from an answer the run
    // gave before: nothing is said.
    let bare: Vec<Trial> = v.into_iter().map(|t| Trial { timing: None, ..t }).collect();
    assert_eq!(detect(&bare), None);
    // A worker that answered right again after its failures did not break for good there.
    let mut v = ragged(21.0, 42.0);
    let t = v.iter_mut().find(|t| t.trial == "831_x::t39").unwrap();
    *t = on("general 0", trial("831_x::t39", 831, "passed", (39.0, 39.5)));
    assert_eq!(detect(&v), None);
}

#[test]
fn one_lane_failing_alone_to_the_end_is_no_break() {
    // The ipc lane's imports refused from 10 s on by a mutant of 830 (each of its trials, of 830
    // and 831, fails at its import), its last trials run after the general workers are done: the
    // lane broke, the library did not reach another process.
    let mut v: Vec<Trial> = (0..40)
        .map(|i| {
            on(
                &format!("general {}", i % 2),
                trial(
                    &format!("{}_x::p{i:02}", 820 + i % 14),
                    820 + i % 14,
                    "passed",
                    (i as f64, i as f64 + 0.5),
                ),
            )
        })
        .collect();
    v.extend((0..30).map(|i| {
        let api = 830 + i % 2;
        let at = 10.0 + 1.5 * i as f64;
        on(
            "ipc",
            failed(
                &format!("{api}_x::i{i:02}"),
                api,
                at,
                830,
                "cuMemPoolImportPointer",
                "code",
                Some(2),
            ),
        )
    }));
    assert_eq!(detect(&v), None);
}

/// No committed run, mutant runs and faulted ones included, broke for good but those made under
/// 823-broken-after-crash: each report.json's trials, run through the rule again, find nothing
/// (and none of them has the entry); the broken runs (the H100's of 2026-11-27, made before the
/// rule bore a lane's answers gathered before the crash) find the break after the crash.
#[test]
fn no_committed_run_is_taken_for_a_break() {
    let mut files = Vec::new();
    super::model_check::json_files(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs"),
        &mut files,
    );
    let mut found = Vec::new();
    let (mut read, mut broken) = (0, 0);
    for p in &files {
        let Some(text) = super::model_check::text_of(p) else {
            continue;
        };
        let Ok(r) = serde_json::from_str::<Report>(&text) else {
            continue;
        };
        let Some(trials) = r.trials.as_deref() else {
            continue;
        };
        read += 1;
        if p.to_string_lossy().contains("823-broken-after-crash") {
            let f = detect(trials).unwrap_or_else(|| panic!("{}: no break found", p.display()));
            let after = f.broken.after.as_ref().map(|a| a.trial.as_str());
            assert_eq!(
                after,
                Some("823_cuMemPoolCreate::null_pool_out_invalid_value"),
                "{}",
                p.display()
            );
            broken += 1;
            continue;
        }
        if let Some(f) = detect(trials) {
            found.push(format!("{}: {}", p.display(), super::broken::sentence(&f.broken)));
        }
        assert!(super::broken::line(&r).is_none(), "{}", p.display());
    }
    assert!(read > 100, "only {read} committed reports read");
    assert!(broken > 0, "no committed run under 823-broken-after-crash read");
    assert!(found.is_empty(), "{}", found.join("\n"));
}
