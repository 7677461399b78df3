//! `CONFORMANCE_JUNIT=path.xml`: the run as JUnit XML, drawn from its report (`model::Report`), from
//! plain `cargo test` (nextest writes its own with `--profile ci`). One `<testsuite>` per group (each API, harness, suite); a failure
//! carries its message, the API it counts against and its cause (with how many failed trials share
//! it: `report::causes`), a skipped trial its reason, an interrupted one (`run::interrupt`) an
//! `<error>` naming the signal or the budget (the trial did not complete: not a skip a dashboard
//! passes over, not a failure of the library), and an expected
//! failure or a changed behaviour passes with a line in `<system-out>` saying so. Test cases are in
//! the order of their names.

use conformance_model::Outcome;
use conformance_model::{Report, Trial};
use std::collections::BTreeMap;
use std::fmt::Write as _;

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o
}

/// The API a failed trial of an API counts against (its blame, else its own), or any other
/// trial's own.
fn counted_api(t: &Trial, outcome: Option<Outcome>) -> Option<u64> {
    match outcome {
        Some(Outcome::Failed) => t.api.map(|own| t.blame.unwrap_or(own)),
        _ => t.api,
    }
}

/// The JUnit XML of a run's report.
pub fn render(r: &Report) -> String {
    let trials: Vec<&Trial> = r.trials.iter().flatten().collect();
    let outcome = |t: &Trial| Some(t.outcome);
    let mut groups: BTreeMap<&str, Vec<&Trial>> = BTreeMap::new();
    for t in &trials {
        groups.entry(&t.group).or_default().push(t);
    }
    let count = |ts: &[&Trial], o: Outcome| ts.iter().filter(|t| outcome(t) == Some(o)).count();
    let causes = crate::report::causes::by_trial(r);
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    writeln!(
        x,
        "<testsuites name=\"conformance\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" errors=\"{}\" time=\"{:.3}\">",
        trials.len(),
        count(&trials, Outcome::Failed),
        count(&trials, Outcome::Ignored),
        count(&trials, Outcome::Interrupted),
        r.wall_s.unwrap_or(0.0)
    )
    .unwrap();
    for (group, ts) in groups {
        let time: f64 = ts.iter().map(|t| t.secs).sum();
        writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" errors=\"{}\" time=\"{time:.3}\">",
            esc(group),
            ts.len(),
            count(&ts, Outcome::Failed),
            count(&ts, Outcome::Ignored),
            count(&ts, Outcome::Interrupted)
        )
        .unwrap();
        for t in ts {
            write!(
                x,
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\"",
                esc(&t.trial),
                esc(group),
                t.secs
            )
            .unwrap();
            let mut out = t.notes.clone();
            match outcome(t) {
                Some(Outcome::Failed) => {
                    let mut blame = counted_api(t, outcome(t))
                        .map(|a| format!("counts against {a} {}", crate::driver::api_name(a as u32)))
                        .unwrap_or_default();
                    if let Some((cause, n)) = causes.get(t.trial.as_str()) {
                        write!(blame, "; cause: {cause} ({n} failed trials)").unwrap();
                    }
                    let first = t.message.lines().next().unwrap_or("");
                    writeln!(
                        x,
                        ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>",
                        esc(first),
                        esc(&blame),
                        esc(&t.message)
                    )
                    .unwrap();
                }
                Some(Outcome::Ignored) => {
                    writeln!(x, ">\n      <skipped message=\"{}\"/>", esc(&t.message)).unwrap();
                }
                Some(Outcome::Changed) => {
                    out.insert(0, format!("changed: {}", t.message));
                    x.push_str(">\n");
                }
                Some(Outcome::ExpectedFailure) => {
                    out.insert(0, t.message.clone());
                    x.push_str(">\n");
                }
                Some(Outcome::KnownDeparture) => {
                    out.insert(0, format!("known-departure: {}", t.message));
                    x.push_str(">\n");
                }
                Some(Outcome::Interrupted) => {
                    writeln!(
                        x,
                        ">\n      <error message=\"{}\" type=\"interrupted\"/>",
                        esc(&t.message)
                    )
                    .unwrap();
                }
                Some(Outcome::Flaky) => {
                    out.insert(0, format!("flaky: {}", t.message));
                    x.push_str(">\n");
                }
                Some(Outcome::Passed) | None => x.push_str(">\n"),
            }
            if !out.is_empty() {
                writeln!(x, "      <system-out>{}</system-out>", esc(&out.join("\n"))).unwrap();
            }
            x.push_str("    </testcase>\n");
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::case::{Group, Per};
    use crate::harness::outcome::Kind;
    use crate::harness::outcome::Record;
    use crate::report::fixture::report_of;

    fn rec(trial: &str, outcome: Outcome, message: &str) -> Record {
        Record::new(trial, Group::Api(833), outcome, Kind::Check, message.into()).with(|r| {
            r.secs = 0.5;
            r.device_answer = true;
            r.span = (0.0, 0.5);
            r.set_dev(Some(0));
            r.per = Per::Device;
        })
    }

    #[test]
    fn skips_carry_their_reason_and_failures_their_api() {
        let x = render(&report_of(
            &[
                rec("833_cuMemPoolTrimTo::a", Outcome::Ignored, "needs `gpu`: no <device>"),
                rec("833_cuMemPoolTrimTo::b", Outcome::Failed, "expected 1, got 0\nmore"),
                rec("833_cuMemPoolTrimTo::c", Outcome::Passed, ""),
            ],
            1.0,
        ));
        assert!(
            x.contains("<skipped message=\"needs `gpu`: no &lt;device&gt;\"/>"),
            "{x}"
        );
        assert!(x.contains("type=\"counts against 833 cuMemPoolTrimTo\""), "{x}");
        assert!(x.contains("tests=\"3\" failures=\"1\" skipped=\"1\""), "{x}");
    }

    /// An interrupted trial is a JUnit error naming what cut the run, counted apart.
    #[test]
    fn an_interrupted_trial_is_an_error() {
        let x = render(&report_of(
            &[
                rec(
                    "833_cuMemPoolTrimTo::a",
                    Outcome::Interrupted,
                    "interrupted: SIGTERM after 4.2 s",
                ),
                rec("833_cuMemPoolTrimTo::b", Outcome::Passed, ""),
            ],
            1.0,
        ));
        assert!(
            x.contains("<error message=\"interrupted: SIGTERM after 4.2 s\" type=\"interrupted\"/>"),
            "{x}"
        );
        assert!(x.contains("failures=\"0\" skipped=\"0\" errors=\"1\""), "{x}");
    }

    #[test]
    fn a_failure_names_its_cause_and_how_many_share_it() {
        let cause = crate::driver::blame::Cause::returned("cuMemFreeAsync", crate::driver::cu::CUresult(u32::MAX));
        let x = render(&report_of(
            &[
                rec("833_cuMemPoolTrimTo::a", Outcome::Failed, "x").with(|r| {
                    r.set_cause(Some(&cause));
                }),
                rec("833_cuMemPoolTrimTo::b", Outcome::Failed, "y").with(|r| {
                    r.set_cause(Some(&cause));
                }),
            ],
            1.0,
        ));
        assert!(
            x.contains(
                "type=\"counts against 833 cuMemPoolTrimTo; cause: cuMemFreeAsync returned -1 (no CUresult) (2 failed trials)\""
            ),
            "{x}"
        );
    }
}
