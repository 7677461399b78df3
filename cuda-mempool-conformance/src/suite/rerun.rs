//! `--rerun-failed N` (or CONFORMANCE_RERUN_FAILED=N): after the run, each failed trial runs again,
//! up to N times, each time in a fresh process; one that passes on a rerun is `flaky` (the report
//! names the rerun that passed and keeps the first failure), one that fails every time stays failed.

use crate::harness::settings::parse::rerun_count;
use crate::harness::settings::Settings;
use crate::harness::{Case, Env, Kind, Outcome, Record};
use std::sync::Arc;

const FLAG: &str = "--rerun-failed";

/// How many reruns a failed trial gets (0: none), and `argv` without `--rerun-failed N` (libtest
/// does not know it). The flag wins over the variable (`settings`' CONFORMANCE_RERUN_FAILED).
pub fn from_args(argv: Vec<String>, settings: &Settings) -> Result<(u32, Vec<String>), String> {
    let Some(i) = argv.iter().position(|a| a == FLAG || a.starts_with("--rerun-failed=")) else {
        return Ok((settings.rerun_failed.checked()?, argv));
    };
    let mut argv = argv;
    let flag = argv.remove(i);
    let value = match flag.split_once('=') {
        Some((_, v)) => v.to_string(),
        None if i < argv.len() => argv.remove(i),
        None => return Err(format!("{FLAG} needs a number: {FLAG} N")),
    };
    Ok((rerun_count(&value, FLAG)?, argv))
}

/// Whether a failure is one a rerun can judge again: a trial that ran and failed by itself, not one
/// failed before it ran (a required capability, a precondition, a stopped run) nor by the
/// expectation file (an unexpected pass).
fn rerunnable(r: &Record) -> bool {
    r.outcome == Outcome::Failed
        && !matches!(
            r.kind(),
            Kind::Missing | Kind::Precondition | Kind::Stopped | Kind::Expectation | Kind::Leak
        )
}

/// The first run's failure `first`, after the reruns that came back `again` (the last one passed
/// when any did).
fn verdict(first: Record, again: &[Record], n: u32) -> Record {
    match again.last() {
        Some(last) if last.outcome != Outcome::Failed => {
            let message = format!(
                "passed on rerun {} of {n} (--rerun-failed; now {}); the first run failed: {}",
                again.len(),
                last.outcome.as_str(),
                first.message
            );
            first.with(|t| {
                t.outcome = Outcome::Flaky;
                t.message = message;
            })
        }
        last => {
            let mut r = first;
            let said = last.map_or("", |l| l.message.lines().next().unwrap_or(""));
            r.notes.push(format!(
                "failed again on each of {} rerun(s) (--rerun-failed); the last: {said}",
                again.len()
            ));
            r
        }
    }
}

/// Rerun this run's failures up to `n` times each, in fresh processes, one at a time (no trial of
/// the run is still running); each record takes its verdict. How many failures passed on a rerun.
/// `env`: the coordinator's (the run's deadline and departure policy).
pub fn failures(cases: &[Arc<Case>], records: &[Record], n: u32, env: &Env) -> usize {
    let mut flaky = 0;
    for first in records.iter().filter(|r| rerunnable(r)) {
        let Some(case) = cases.iter().find(|c| c.trial_name() == first.trial) else {
            continue;
        };
        let mut again = Vec::new();
        for _ in 0..n {
            let r = crate::run::run_again(case, env.deadline(), &env.policy());
            let passed = r.outcome != Outcome::Failed;
            again.push(r);
            if passed {
                break;
            }
        }
        let r = verdict(first.clone(), &again, n);
        if r.outcome == Outcome::Flaky {
            flaky += 1;
            println!("FLAKY {}: {}", r.trial, r.message);
        } else {
            eprintln!(
                "FAILED AGAIN {}: {}",
                r.trial,
                r.notes.last().map_or("", String::as_str)
            );
        }
        super::trials::replace(r);
    }
    flaky
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Group;

    fn rec(outcome: Outcome, message: &str) -> Record {
        Record::new(
            "820_cuMemAllocAsync::x",
            Group::Api(820),
            outcome,
            Kind::Check,
            message.into(),
        )
    }

    #[test]
    fn a_pass_on_a_rerun_is_flaky_and_says_which() {
        let first = rec(Outcome::Failed, "expected 1, got 0");
        let again = [rec(Outcome::Failed, "again"), rec(Outcome::Passed, "")];
        let r = verdict(first, &again, 3);
        assert_eq!(r.outcome, Outcome::Flaky);
        assert!(r.message.contains("passed on rerun 2 of 3") && r.message.contains("expected 1, got 0"));
    }

    #[test]
    fn failing_every_rerun_stays_failed() {
        let again = [rec(Outcome::Failed, "a"), rec(Outcome::Failed, "b")];
        let r = verdict(rec(Outcome::Failed, "first"), &again, 2);
        assert_eq!(r.outcome, Outcome::Failed);
        assert_eq!(r.message, "first");
        assert!(r.notes[0].contains("each of 2 rerun"));
    }

    #[test]
    fn the_flag_is_taken_out_of_argv() {
        let argv = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let s = Settings::from_vars(&[(crate::harness::settings::RERUN_VAR, "3")]);
        let (n, rest) = from_args(argv(&["suite", "--rerun-failed", "2", "--exact"]), &s).unwrap();
        assert_eq!((n, rest), (2, argv(&["suite", "--exact"])));
        let (n, _) = from_args(argv(&["suite", "--rerun-failed=5"]), &s).unwrap();
        assert_eq!(n, 5);
        assert!(from_args(argv(&["suite", "--rerun-failed", "x"]), &s)
            .unwrap_err()
            .contains("--rerun-failed"));
        assert!(from_args(argv(&["suite", "--rerun-failed"]), &s).is_err());
        assert_eq!(
            from_args(argv(&["suite"]), &s).unwrap().0,
            3,
            "the variable, without the flag"
        );
    }
}
