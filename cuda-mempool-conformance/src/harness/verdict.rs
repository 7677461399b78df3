//! The verdict: every kind of expectation matched in one place. Before a trial runs, what the case
//! needs against the machine (and CONFORMANCE_REQUIRE); after, what came back against what the
//! case declares (an answer, or a crash seen on some drivers); last, the user's expectation file
//! (CONFORMANCE_EXPECT). Departures of the driver are judged where the call is checked
//! (`driver::departures`) and arrive here as a typed answer; a trial in which a stream-order gate's
//! safety limit opened a held stream (`driver::check::Gate`) fails here ([`forced_gates_fail`]).

use crate::driver::blame::Cause;
use crate::driver::check::code_name;
use crate::driver::cu::CUresult;
use crate::driver::departures::{self, Policy};
use crate::harness::case::{Case, Crash};
use crate::harness::child::{inside_text, signal_name, signal_names};
use crate::harness::expect;
use crate::harness::machine::{Cap, Machine};
use crate::harness::outcome::{Answer, Kind, Outcome, Raw, Record};
use crate::harness::precondition::Broken;

/// What a case comes to before it runs.
pub enum Before {
    /// It can run here.
    Run,
    /// A capability it needs is missing and not required: ignored, never run.
    Ignore(Record),
    /// A capability it needs is missing and required (CONFORMANCE_REQUIRE): failed, never run.
    Fail(Record),
}

/// Whether `case` can run on `m`, given the precondition that does not hold (if one does not) and
/// the capabilities a run requires. A trial that relies on a broken precondition is not run and
/// counts against nothing: `suite::preconditions` says it once.
pub fn before(case: &Case, m: &Machine, broken: Option<&Broken>, required: &[Cap]) -> Before {
    if let Some(b) = broken.filter(|b| case.relies.contains(&b.which)) {
        return Before::Ignore(of_case(
            case,
            Outcome::Ignored,
            Kind::Precondition,
            format!(
                "not run: it relies on `{}`, which does not hold here ({} says why)",
                b.which.what(),
                b.which.trial()
            ),
        ));
    }
    let Some((cap, why)) = case.missing(m) else {
        return Before::Run;
    };
    let r = |outcome, message| of_case(case, outcome, Kind::Missing, message);
    if required.contains(&cap) {
        Before::Fail(r(
            Outcome::Failed,
            format!(
                "required capability `{}` missing (CONFORMANCE_REQUIRE): {why}",
                cap.name()
            ),
        ))
    } else {
        Before::Ignore(r(Outcome::Ignored, format!("needs `{}`: {why}", cap.name())))
    }
}

/// What came back, judged against what the case declares (under the run's departure `policy`), then
/// against the user's expectations.
pub fn judge(case: &Case, raw: Raw, policy: &Policy) -> Record {
    let (observations, calls) = match &raw {
        Raw::Answer(a) => (
            a.observations.clone(),
            a.calls.as_deref().map(crate::harness::outcome::mask_of),
        ),
        _ => (Vec::new(), None),
    };
    let mut r = against_case(case, raw, policy);
    r.observations = Some(observations);
    r.set_calls(calls);
    expected(r)
}

/// A record the user's expectation file (CONFORMANCE_EXPECT, checked before any trial ran) lists:
/// a listed failure becomes an expected failure, a listed pass fails. Others are left as they are.
pub fn expected(mut r: Record) -> Record {
    if let Some(e) = expect::loaded() {
        if e.apply(&mut r) {
            r.kind = Some(Kind::Expectation);
        }
    }
    r
}

fn with_log(msg: String, log: &str) -> String {
    if log.trim().is_empty() {
        format!("{msg}; it wrote nothing to stderr during this trial")
    } else {
        format!("{msg}; the last lines it wrote:\n{}", log.trim_end())
    }
}

/// The process died or hung where no crash was expected of this driver.
fn lost(case: &Case, raw: Raw) -> Record {
    match raw {
        Raw::Died {
            how,
            signal,
            inside,
            log,
            secs,
            ..
        } => caused(
            Cause::died(signal, &inside),
            one(
                case,
                Outcome::Failed,
                Kind::Died,
                with_log(
                    format!("the process running this trial {how}{}", inside_text(&inside)),
                    &log,
                ),
                inside.map(|i| i.0),
                secs,
            ),
        ),
        Raw::Hung { secs, inside, log } => caused(
            Cause::hung(&inside),
            one(
                case,
                Outcome::Failed,
                Kind::Hung,
                with_log(
                    format!(
                        "no answer after {secs:.0} s{}; the process was killed",
                        inside_text(&inside)
                    ),
                    &log,
                ),
                inside.map(|i| i.0),
                secs,
            ),
        ),
        Raw::Broken(e) => one(
            case,
            Outcome::Failed,
            Kind::Broken,
            format!("could not run: {e}"),
            None,
            0.0,
        ),
        Raw::Answer(a) => answered(case, *a),
    }
}

/// A record of this case (its name, group, device and per-device form) with an outcome, its kind
/// and a message, nothing measured: for a trial that is not run, and the start of every other.
pub fn of_case(case: &Case, outcome: Outcome, kind: Kind, message: String) -> Record {
    let mut r = Record::new(case.trial_name(), case.group, outcome, kind, message);
    r.set_dev(Some(case.dev));
    r.per = case.per;
    r
}

/// A record of this case with nothing but an outcome, its kind, a message, blame and time.
fn one(case: &Case, outcome: Outcome, kind: Kind, message: String, blame: Option<u32>, secs: f64) -> Record {
    of_case(case, outcome, kind, message).with(|t| {
        t.blame = blame.filter(|b| Some(*b) != case.group.api()).map(u64::from);
        t.secs = secs;
    })
}

/// The body answered: its own outcome stands.
fn answered(case: &Case, a: Answer) -> Record {
    let mut r = one(
        case,
        a.outcome,
        a.kind,
        a.message,
        a.blame.and_then(|b| u32::try_from(b).ok()),
        a.secs,
    );
    r.notes = a.notes;
    r.set_cause(a.cause.as_ref().and_then(Cause::from_model).as_ref());
    r.device_answer = case.needs.contains(&Cap::Gpu);
    r
}

/// `r`, failed by `cause`.
fn caused(cause: Cause, mut r: Record) -> Record {
    r.set_cause(Some(&cause));
    r
}

/// Whether a crash landed where the case declared it: inside the case's own API, or inside one of
/// the APIs it may show up later in ([`Crash::later`]) with the case's own API the last call to
/// return before it (no other tracked call in between). A crash anywhere else is not the declared
/// one, whatever its signal. A case that declares a later crash reaches the later call only after
/// checking its own API's answer (see `826 fabric_export_without_imex_channel_crashes_driver`).
fn landed(case: &Case, c: &Crash, inside: &Option<(u32, String)>, last: Option<(u32, i32)>) -> bool {
    let own = case.group.api();
    if c.heap {
        // The freed memory is touched wherever the heap puts it (`Crash::heap`).
        return true;
    }
    match inside {
        Some((api, _)) if Some(*api) == own => true,
        Some((api, _)) if c.later.contains(api) => matches!(last, Some((l, _)) if Some(l) == own),
        _ => false,
    }
}

/// ", after cuMemPoolExportToShareableHandle (826) answered CUDA_ERROR_NOT_PERMITTED (800)" or "".
fn after_text(last: Option<(u32, i32)>) -> String {
    match last {
        Some((api, code)) => format!(
            " (the last call to return: {} ({api}), which answered {})",
            crate::driver::api_name(api),
            code_name(CUresult(code as u32))
        ),
        None => String::new(),
    }
}

/// "cuMemPoolExportToShareableHandle (826)", or "… (826), or later inside cuMemPoolDestroy (824)".
fn where_declared(case: &Case, c: &Crash) -> String {
    let own = case.group.api().unwrap_or(0);
    let mut s = format!("{} ({own})", crate::driver::api_name(own));
    for api in c.later {
        s += &format!(", or later inside {} ({api})", crate::driver::api_name(*api));
    }
    s
}

fn against_case(case: &Case, raw: Raw, policy: &Policy) -> Record {
    match case.crash {
        None => lost(case, raw),
        // A crash declared for other drivers: here the documented code is expected, a crash fails.
        Some(c) if !departures::crash_verified_here(policy, c.branches) || policy.strict => match raw {
            // The declared crash, on a branch it was not verified on: a known departure.
            Raw::Died {
                signal: Some(s),
                inside,
                last,
                secs,
                ..
            } if c.signals.contains(&s) && landed(case, &c, &inside, last) && !policy.strict => one(
                case,
                Outcome::KnownDeparture,
                Kind::Crash,
                format!(
                    "{} crashed by {} as declared for driver branches {}–{} ({}), not verified on this \
                         branch; the documentation's answer is {}",
                    departures::driver_text(),
                    signal_name(s),
                    c.branches.0,
                    c.branches.1,
                    c.seen_on,
                    code_name(c.documented)
                ),
                None,
                secs,
            )
            .with(|t| t.notes = vec![format!("crashed by {}{}", signal_name(s), inside_text(&inside))]),
            Raw::Died {
                how,
                signal,
                inside,
                log,
                secs,
                ..
            } => {
                let message = with_log(
                    format!(
                        "the process {how}{} on {}; a crash by {} was declared for driver branches {}–{} ({}); \
                         {} the documented {} is expected",
                        inside_text(&inside),
                        departures::driver_text(),
                        signal_names(c.signals),
                        c.branches.0,
                        c.branches.1,
                        c.seen_on,
                        if policy.strict {
                            format!("under {}=documented", departures::STRICT_VAR)
                        } else {
                            "this is not that crash, so".to_string()
                        },
                        code_name(c.documented)
                    ),
                    &log,
                );
                caused(
                    Cause::died(signal, &inside),
                    one(case, Outcome::Failed, Kind::Crash, message, case.group.api(), secs),
                )
            }
            other => lost(case, other),
        },
        Some(c) => crash_declared(case, c, raw),
    }
}

/// A case whose input crashed the driver it was written against, on a driver of those branches.
fn crash_declared(case: &Case, c: Crash, raw: Raw) -> Record {
    let own = case.group.api();
    match raw {
        Raw::Broken(_) => lost(case, raw),
        Raw::Died {
            signal: Some(s),
            secs,
            inside,
            last,
            ..
        } if c.signals.contains(&s) && landed(case, &c, &inside, last) => {
            one(case, Outcome::Passed, Kind::Crash, String::new(), None, secs).with(|t| {
                t.notes = vec![format!(
                    "crashed by {}{} as seen on {}",
                    signal_name(s),
                    inside_text(&inside),
                    c.seen_on
                )]
            })
        }
        // The expected crash did not come: the case's own API answers for it.
        Raw::Died {
            how,
            signal,
            inside,
            last,
            log,
            secs,
        } => {
            let message = with_log(
                format!(
                    "expected a crash by {} inside {} (as seen on {}), but the process {how}{}{}",
                    signal_names(c.signals),
                    where_declared(case, &c),
                    c.seen_on,
                    inside_text(&inside),
                    after_text(last)
                ),
                &log,
            );
            caused(
                Cause::died(signal, &inside),
                one(case, Outcome::Failed, Kind::Crash, message, own, secs),
            )
        }
        Raw::Hung { secs, inside, log } => {
            let message = with_log(
                format!(
                    "no answer after {secs:.0} s{}: a hang, not the crash by {} seen on {}",
                    inside_text(&inside),
                    signal_names(c.signals),
                    c.seen_on
                ),
                &log,
            );
            caused(
                Cause::hung(&inside),
                one(case, Outcome::Failed, Kind::Hung, message, own, secs),
            )
        }
        Raw::Answer(a) => match a.outcome {
            Outcome::Passed if c.heap => answered(case, *a).with(|t| {
                t.notes = vec![format!(
                    "answered the documented {}: this run's heap did not expose the freed memory {} crashed on (by {})",
                    code_name(c.documented),
                    c.seen_on,
                    signal_names(c.signals)
                )]
            }),
            Outcome::Passed => answered(case, *a).with(|t| {
                t.message = format!(
                    "no longer crashes: returned the documented {} where {} crashed by {}",
                    code_name(c.documented),
                    c.seen_on,
                    signal_names(c.signals)
                );
                t.outcome = Outcome::Changed;
                t.kind = Some(Kind::Crash);
                t.blame = None;
            }),
            Outcome::Failed => {
                let message = format!(
                    "neither crashed (by {}, as on {}) nor returned the documented {}: {}",
                    signal_names(c.signals),
                    c.seen_on,
                    code_name(c.documented),
                    a.message
                );
                answered(case, *a).with(|t| {
                    t.message = message;
                    t.kind = Some(Kind::Crash);
                })
            }
            _ => answered(case, *a),
        },
    }
}

/// A trial during which a gate's safety limit had to open a held stream (a call waited for the
/// stream: `check::Gate`) fails, whatever its body concluded; one that failed already keeps its
/// message and gets the forced gates as notes. The waiting call's API takes the blame.
pub fn forced_gates_fail(verdict: (Outcome, Kind, String)) -> (Outcome, Kind, String) {
    let forced = crate::driver::check::take_forced_gates();
    if forced.is_empty() {
        return verdict;
    }
    if let Some(api) = forced.iter().find_map(|f| f.api()) {
        crate::driver::blame::set(api);
    }
    let lines: Vec<String> = forced.iter().map(|f| f.describe()).collect();
    if verdict.0 == Outcome::Failed {
        lines.into_iter().for_each(crate::driver::check::note);
        return verdict;
    }
    (Outcome::Failed, Kind::Check, lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::case::{SIGSEGV, SIGSEGV_OR_SIGABRT};

    const SUCCESS: i32 = 0;
    const NOT_PERMITTED: i32 = 800;

    fn fabric() -> (Case, Crash) {
        let case = Case::gpu(826, "fabric", |_| Ok(()))
            .crashes(SIGSEGV_OR_SIGABRT, CUresult::CUDA_ERROR_NOT_PERMITTED, "test")
            .or_later_inside(&[824]);
        let c = case.crash.unwrap();
        (case, c)
    }
    fn at(api: u32) -> Option<(u32, String)> {
        Some((api, crate::driver::api_name(api).to_string()))
    }

    #[test]
    fn a_crash_inside_the_api_under_test_is_the_declared_one() {
        let (case, c) = fabric();
        assert!(landed(&case, &c, &at(826), Some((823, SUCCESS))));
    }

    #[test]
    fn a_later_crash_counts_only_right_after_the_api_under_test() {
        let (case, c) = fabric();
        assert!(landed(&case, &c, &at(824), Some((826, NOT_PERMITTED))));
        // Another call returned in between: not the declared crash.
        assert!(!landed(&case, &c, &at(824), Some((828, SUCCESS))));
        // Not one of the declared later APIs.
        assert!(!landed(&case, &c, &at(833), Some((826, NOT_PERMITTED))));
    }

    #[test]
    fn a_crash_elsewhere_is_not_the_declared_one() {
        let (case, c) = fabric();
        assert!(!landed(&case, &c, &None, Some((826, SUCCESS))));
        let only_own = Case::gpu(820, "x", |_| Ok(())).crashes(SIGSEGV, CUresult::CUDA_ERROR_INVALID_HANDLE, "test");
        let c = only_own.crash.unwrap();
        assert!(!landed(&only_own, &c, &at(822), Some((820, SUCCESS))));
    }
}
