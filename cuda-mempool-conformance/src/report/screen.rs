//! The terminal's last screen after a run, drawn from its report (`model::Report`): where the
//! library broke for good (if it did), report.md's tables, then ignored trials grouped by reason,
//! interrupted ones in one line, failures last with their cause; one terminal page unless
//! CONFORMANCE_VERBOSE=1. And where the time went, in two lines (`report::timeline`).

use crate::report::markdown::{self, with_outcome};
use crate::report::timeline::{self, Bar};
use conformance_model::Outcome;
use conformance_model::Report;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// At most this many ignore reasons, and this many failures, on the terminal's last screen; and
/// this many trial names on a reason's line (CONFORMANCE_VERBOSE=1: every one).
const SCREEN_REASONS: usize = 10;
const SCREEN_FAILURES: usize = 10;
const SCREEN_NAMES: usize = 3;

/// "a, b, c and 292 more" (every name when `all`).
fn some_names(names: &[&str], all: bool) -> String {
    let shown = if all { names.len() } else { SCREEN_NAMES };
    let mut s = names.iter().take(shown).copied().collect::<Vec<_>>().join(", ");
    let more = names.len().saturating_sub(shown);
    if more > 0 {
        write!(s, " and {more} more").unwrap();
    }
    s
}

/// report.md's tables on the terminal, without their headings, opened by the line that says where
/// the library broke for good (if it did: `report::broken`) and the one that names its long wait at
/// a new process's first GPU work (if it had one: `report::first_wait`): the APIs and groups with the totals,
/// each device set, the failures by cause (not the declared departures' table: report.md has it,
/// one row each, checked or not).
pub fn tables(r: &Report) -> Vec<String> {
    let mut text = String::new();
    if let Some(line) = crate::report::broken::line(r) {
        writeln!(text, "{line}.").unwrap();
    }
    if let Some(line) = crate::report::first_wait::line(r) {
        writeln!(text, "{line}").unwrap();
    }
    text.push_str(&markdown::main_table(r));
    text.push_str(&markdown::totals_line(&r.totals));
    text.push('\n');
    for set in r.sets.iter().flatten() {
        text.push_str(&markdown::set_table(set));
    }
    if let Some(c) = r.causes.as_deref().filter(|c| !c.is_empty()) {
        text.push_str(&crate::report::causes::table(c));
    }
    text.lines().map(String::from).collect()
}

/// The terminal's last lines, after the tables: the ignored trials grouped by reason (most first,
/// a count and up to three names each), the interrupted ones in one line, then the failures, one
/// line each with its cause (`report::causes`). `verbose` (CONFORMANCE_VERBOSE=1): every reason,
/// every name and every failure. Short enough, without it, for one terminal page.
pub fn last_screen(r: &Report, verbose: bool) -> Vec<String> {
    let mut lines = Vec::new();
    let mut reasons: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for t in with_outcome(r, Outcome::Ignored) {
        reasons.entry(t.message.as_str()).or_default().push(&t.trial);
    }
    let mut reasons: Vec<(&str, Vec<&str>)> = reasons.into_iter().collect();
    reasons.sort_by_key(|(_, t)| std::cmp::Reverse(t.len()));
    if !reasons.is_empty() {
        let n: usize = reasons.iter().map(|(_, t)| t.len()).sum();
        lines.push(format!("ignored: {n} trials, by reason:"));
        let shown = if verbose { reasons.len() } else { SCREEN_REASONS };
        for (why, trials) in reasons.iter().take(shown) {
            let why = why.replace('\n', " ⏎ ");
            lines.push(format!("  {} × {why}: {}", trials.len(), some_names(trials, verbose)));
        }
        if reasons.len() > shown {
            lines.push(format!(
                "  … and {} more reasons (CONFORMANCE_VERBOSE=1 prints them all; report.md lists every trial)",
                reasons.len() - shown
            ));
        }
    }
    let interrupted: Vec<&str> = with_outcome(r, Outcome::Interrupted)
        .iter()
        .map(|t| t.trial.as_str())
        .collect();
    if !interrupted.is_empty() {
        lines.push(format!(
            "interrupted: {} trials, not run or cut short: {}",
            interrupted.len(),
            some_names(&interrupted, verbose)
        ));
    }
    let failed = with_outcome(r, Outcome::Failed);
    if !failed.is_empty() {
        let causes = crate::report::causes::by_trial(r);
        lines.push(format!("failed: {} trials:", failed.len()));
        let shown = if verbose { failed.len() } else { SCREEN_FAILURES };
        for t in failed.iter().take(shown) {
            let why = match causes.get(t.trial.as_str()) {
                Some((cause, _)) => cause,
                None => t.message.lines().next().unwrap_or(""),
            };
            lines.push(format!("  FAILED {}: {why}", t.trial));
        }
        if failed.len() > shown {
            lines.push(format!(
                "  … and {} more failures (CONFORMANCE_VERBOSE=1 prints them all; report.md's \"Failures by cause\" groups them)",
                failed.len() - shown
            ));
        }
    }
    lines
}

/// How many of the critical path's longest trials its line names.
const PATH_NAMES: usize = 3;

/// Where the time went, two lines (none when no trial ran): the critical path (the chain of trials,
/// turn waits and gaps that decided when the last trial ended; its longest trials named) and each
/// worker's idle share. `wall`: the run's wall time, where known.
pub fn time_lines(bars: &[Bar], wall: Option<f64>) -> Vec<String> {
    let path = timeline::critical_path(bars);
    if path.steps.is_empty() {
        return Vec::new();
    }
    let mut longest = path.steps.clone();
    longest.sort_by(|&a, &b| (bars[b].span.1 - bars[b].span.0).total_cmp(&(bars[a].span.1 - bars[a].span.0)));
    let names: Vec<String> = longest
        .iter()
        .take(PATH_NAMES)
        .map(|&i| format!("{} {:.2} s", bars[i].trial, bars[i].span.1 - bars[i].span.0))
        .collect();
    let of_wall = wall.map_or(String::new(), |w| format!(" of {w:.1} s wall"));
    let idle: Vec<String> = timeline::idle(bars, &timeline::rows(bars))
        .iter()
        .map(|(name, share)| format!("{name} {:.0}%", share * 100.0))
        .collect();
    vec![
        format!(
            "time: critical path {:.1} s{of_wall}: {} trials {:.1} s ({:.1} s exclusive, {:.1} s settling), \
             turn waits {:.1} s, worker starts {:.1} s, start-up and gaps {:.1} s; longest: {}",
            path.end,
            path.steps.len(),
            path.trials_s,
            path.exclusive_s,
            path.settle_s,
            path.wait_s,
            path.starts_s,
            path.gaps_s,
            names.join(", ")
        ),
        format!("time: idle share: {} (timeline.svg draws it)", idle.join(", ")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::case::Group;
    use crate::harness::outcome::{Kind, Record};
    use crate::report::fixture::report_of;

    fn rec(trial: String, outcome: Outcome, message: &str) -> Record {
        Record::new(trial, Group::Api(820), outcome, Kind::Plain, message.into())
    }

    /// 300 trials ignored for one reason make one line of three names; a rare reason its own line;
    /// failures come last, one line each with their cause; verbose names them all.
    #[test]
    fn the_last_screen_groups_ignores_by_reason_and_puts_failures_last() {
        let mut records: Vec<Record> = (0..300)
            .map(|i| rec(format!("820::t{i:03}"), Outcome::Ignored, "needs `gpu`: no device"))
            .collect();
        records.push(rec("821::rare".into(), Outcome::Ignored, "needs `ipc`"));
        records.push(rec("822::bad".into(), Outcome::Failed, "expected 1, got 0\nmore"));
        records.push(rec(
            "822::cut".into(),
            Outcome::Interrupted,
            "interrupted: SIGTERM after 1.0 s",
        ));
        let screen = last_screen(&report_of(&records, 1.0), false);
        assert_eq!(
            screen,
            [
                "ignored: 301 trials, by reason:",
                "  300 × needs `gpu`: no device: 820::t000, 820::t001, 820::t002 and 297 more",
                "  1 × needs `ipc`: 821::rare",
                "interrupted: 1 trials, not run or cut short: 822::cut",
                "failed: 1 trials:",
                "  FAILED 822::bad: expected 1, got 0",
            ]
        );
        let all = last_screen(&report_of(&records, 1.0), true);
        assert!(all[1].contains("820::t299") && !all[1].contains("more"), "{}", all[1]);
    }

    /// Many reasons and many failures are cut to a page, saying how many more there are.
    #[test]
    fn the_last_screen_fits_a_page() {
        let records: Vec<Record> = (0..40)
            .map(|i| rec(format!("820::i{i}"), Outcome::Ignored, &format!("reason {i}")))
            .chain((0..40).map(|i| rec(format!("820::f{i}"), Outcome::Failed, "x")))
            .collect();
        let screen = last_screen(&report_of(&records, 1.0), false);
        assert!(screen.len() <= 2 * (SCREEN_REASONS + 2), "{}", screen.len());
        assert!(screen.iter().any(|l| l.contains("30 more reasons")), "{screen:?}");
        assert!(screen.iter().any(|l| l.contains("30 more failures")), "{screen:?}");
        assert_eq!(last_screen(&report_of(&records, 1.0), true).len(), 82);
    }

    /// Where the time went: two lines, the critical path with its longest trials first, then each
    /// worker's idle share; nothing when no trial ran.
    #[test]
    fn the_time_lines_name_the_critical_path_and_idle_shares() {
        let bar = |trial: &str, worker: &str, span| Bar {
            trial: trial.into(),
            outcome: Outcome::Passed,
            span,
            timing: crate::harness::outcome::Timing {
                worker: Some(worker.into()),
                ..Default::default()
            },
        };
        let bars = [
            bar("820::a", "general 0", (0.5, 1.0)),
            bar("820::b", "general 0", (1.0, 4.0)),
            bar("829::c", "ipc", (0.5, 2.0)),
        ];
        let lines = time_lines(&bars, Some(4.5));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with("time: critical path 4.0 s of 4.5 s wall: 2 trials 3.5 s")
                && lines[0].ends_with("longest: 820::b 3.00 s, 820::a 0.50 s"),
            "{}",
            lines[0]
        );
        assert!(lines[1].contains("general 0 12%, ipc 62%"), "{}", lines[1]);
        assert!(time_lines(&[], None).is_empty());
    }
}
