//! The edge trials and their runner: the trial of each (API, argument), each row's call made (on a
//! watched thread where it may hang), judged, and the wrong ones listed; after a hang, the later rows in
//! fresh processes (role `edge-rows`, whose body is here too).

use super::messages::{FailLine, RowLine};
use super::model::*;
use crate::cases::prelude::*;
use crate::harness::bounded::{self, Bounded};
use std::time::Duration;

/// The trial of one (API, argument): `edges_<arg>`.
pub fn case(edge: &'static Edge) -> Case {
    let mut c = Case::gpu(edge.api, format!("edges_{}", edge.arg), move |e| run(e, edge));
    // Rows that may leave a thread stuck in the driver: where trials share the coordinator's
    // process (in-process mode) it runs in a process of its own.
    // A stand-in, its rows only listed: the settings an unset environment gives.
    let probe = Env::without_context(
        std::sync::Arc::new(Default::default()),
        std::sync::Arc::new(crate::harness::settings::Settings::unset()),
    );
    if (edge.rows)(&probe).iter().any(|r| r.watch != Watch::Off) {
        c = c.may_hang();
    }
    for &cap in edge.needs {
        c = c.needs(cap);
    }
    match edge.sharing {
        Sharing::Shared => c,
        Sharing::Alone => c.alone(),
        Sharing::Beyond => c.beyond_device(),
    }
}

/// What one row's call came to.
enum Got {
    Answer(Answer),
    /// No answer within the bound (a watched call).
    Hung(Duration),
}

/// Make row `row`'s call: on this thread, or watched. Err: the row could not be set up.
fn call_row(e: &Env, edge: &'static Edge, row: &Row, what: &str) -> R<Got> {
    if row.watch == Watch::Off {
        return (edge.call)(e, row.value).map(Got::Answer);
    }
    let bound = match row.watch {
        Watch::Hangs(_) => e.deadline().driver_hang(),
        _ => e.deadline().beyond_device(),
    };
    let (env, call, value) = (e.clone(), edge.call, row.value);
    let model = crate::driver::departures::current_model();
    // The watched thread's own records (checked calls, known departures) come back with its answer.
    match bounded::call(what, bound, move || {
        env.bind();
        crate::driver::departures::set_model(&model);
        let a = call(&env, value);
        (a, observe::take().0, crate::driver::departures::take_known())
    }) {
        Bounded::Answered((a, records, known)) => {
            records.into_iter().for_each(observe::record);
            known.into_iter().for_each(crate::driver::departures::push_known);
            a.map(Got::Answer)
        }
        Bounded::Hung(after) => Ok(Got::Hung(after)),
    }
}

/// The verdict on one row's answer, under `policy`.
fn judge_row(policy: &Policy, row: &Row, what: &str, got: Got) -> R {
    let answer = match got {
        Got::Hung(after) => {
            return match row.watch {
                Watch::Hangs(id) => crate::driver::hangs::expect_hang(policy, id, what, after),
                _ => Err(Fail::Wrong(format!(
                    "{what}: no answer within {:.1} s (the call was left running; the rest of the trial ran \
                     in a fresh process)",
                    after.as_secs_f64()
                ))),
            }
        }
        Got::Answer(a) => a,
    };
    let verdict = match row.want {
        Want::Code(c) => expect(what, answer.code, c),
        Want::Departure(id) => expect_code(policy, id, what, answer.code),
    };
    verdict.and_then(|()| {
        if answer.code == SUCCESS {
            answer.effect.map_err(|f| f.map(|m| format!("{what}: {m}")))
        } else {
            Ok(())
        }
    })
}

/// The name of row `row`'s call in messages.
fn row_call(edge: &Edge, row: &Row) -> String {
    format!("{}({} = {})", api_name(edge.api), edge.arg, row.label)
}

/// Run every row of `edge`: each wrong answer is listed (with the row's value), the worst kind of
/// failure decides the trial's (wrong, then a strict departure, then a changed one). Once a watched
/// call is left stuck in the driver (which then holds this process), the rows after it run in fresh
/// processes (role `edge-rows`).
pub fn run(e: &Env, edge: &'static Edge) -> R {
    let rows = (edge.rows)(e);
    let start = std::time::Instant::now();
    let (mut wrong, mut strict, mut changed) = (Vec::new(), Vec::new(), Vec::new());
    let mut verdicts: Vec<R> = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        if bounded::stuck().is_some() {
            // Another fresh process only while it can still end within the trial's deadline.
            let need = e.deadline().child_answer() + e.deadline().beyond_device();
            if start.elapsed() + need > e.deadline().trial() * 9 / 10 {
                for row in &rows[i..] {
                    verdicts.push(Err(Fail::Wrong(format!(
                        "{}: not run: earlier rows hung and the trial's time is spent",
                        row_call(edge, row)
                    ))));
                }
                break;
            }
            let (mut rest, next, setup) = rows_in_child(e, edge, &rows, i);
            i = next;
            verdicts.append(&mut rest);
            if let Some(f) = setup {
                return Err(f);
            }
            continue;
        }
        let row = &rows[i];
        let what = row_call(edge, row);
        let got = call_row(e, edge, row, &what)?;
        verdicts.push(judge_row(&e.policy(), row, &what, got));
        i += 1;
    }
    for verdict in verdicts {
        match verdict {
            Ok(()) => {}
            Err(Fail::Changed(m)) => changed.push(m),
            Err(Fail::Departure(m)) => strict.push(m),
            Err(f) => wrong.push(f.into_message()),
        }
    }
    let list = |v: &[String]| format!("{} of {} rows:\n  {}", v.len(), rows.len(), v.join("\n  "));
    if !wrong.is_empty() || !strict.is_empty() {
        blame::set(edge.api);
    }
    if !wrong.is_empty() {
        return Err(Fail::Wrong(list(&wrong)));
    }
    if !strict.is_empty() {
        return Err(Fail::Departure(list(&strict)));
    }
    if !changed.is_empty() {
        return Err(Fail::Changed(list(&changed)));
    }
    Ok(())
}

/// The variable that tells an `edge-rows` child which rows to run: `API:ARG:FROM:DEVICE`.
pub const EDGE_ROWS_VAR: &str = "CONFORMANCE_EDGE_ROWS";

/// Run `edge`'s rows from `from` on in a fresh child (role `edge-rows`), up to and including the
/// first that hangs there: their verdicts (judged here), the index of the next row to run, and a
/// setup failure if the child had one. The child's answers are taken in order from `from`; the
/// first missing or out-of-order one ends them.
fn rows_in_child(e: &Env, edge: &'static Edge, rows: &[Row], from: usize) -> (Vec<R>, usize, Option<Fail>) {
    let spec = format!("{}:{}:{from}:{}", edge.api, edge.arg, e.dev);
    // Its start (a context) and its rows, each bounded in the child itself.
    let timeout = e.deadline().child_answer() + e.deadline().beyond_device();
    let out = match crate::harness::run_child_for(&Role::EdgeRows, &[(EDGE_ROWS_VAR, &spec)], e.deadline(), timeout) {
        Ok(o) => o,
        Err(e) => {
            let f = Fail::Wrong(format!("rows from {from} on: no child started: {e}"));
            return (vec![], rows.len(), Some(f));
        }
    };
    let (answers, setup) = read_child_rows(&out.stdout, from, rows.len());
    let mut next = from + answers.len();
    let mut verdicts = Vec::new();
    for (i, got) in answers {
        let row = &rows[i];
        verdicts.push(judge_row(&e.policy(), row, &row_call(edge, row), got));
    }
    if setup.is_some() {
        return (verdicts, rows.len(), setup);
    }
    if next == from {
        let what = row_call(edge, &rows[from]);
        verdicts.push(Err(Fail::Wrong(format!(
            "{what}: run in a fresh process (an earlier row left this one stuck in the driver), which \
             answered nothing: {}",
            out.describe()
        ))));
        next += 1;
    }
    (verdicts, next, None)
}

/// An `edge-rows` child's answers, read from its stdout: each row's, in order from row `from` (of
/// `n`), up to the first line that is not the next row's answer; and its setup failure, if it
/// wrote one.
fn read_child_rows(stdout: &str, from: usize, n: usize) -> (Vec<(usize, Got)>, Option<Fail>) {
    let mut answers = Vec::new();
    for line in stdout.lines().filter(|l| l.starts_with('{')) {
        let next = from + answers.len();
        let Ok(j) = serde_json::from_str::<RowLine>(line) else {
            break;
        };
        if next >= n || j.row() != next {
            break;
        }
        let got = match j {
            RowLine::Setup { setup, .. } => return (answers, Some(setup.into())),
            // A bound past what a Duration holds is no bound the child set.
            RowLine::Hung { hung_s, .. } => match Duration::try_from_secs_f64(hung_s) {
                Ok(d) => Got::Hung(d),
                Err(_) => break,
            },
            RowLine::Answer { code, effect, .. } => Got::Answer(Answer {
                code: CUresult(code),
                effect: effect.map_or(Ok(()), |f| Err(f.into())),
            }),
        };
        answers.push((next, got));
    }
    (answers, None)
}

/// Child role `edge-rows` (`EDGE_ROWS_VAR`): run one edge's rows from a row on, each answer a JSON
/// line; after a row that hangs, exit at once (the driver is held: the parent starts another).
pub fn rows_child_main(edges: &[&'static Edge], settings: &std::sync::Arc<crate::harness::settings::Settings>) -> i32 {
    let spec = crate::os::setting(EDGE_ROWS_VAR).unwrap_or_default();
    let parts: Vec<&str> = spec.split(':').collect();
    let parsed = match parts.as_slice() {
        [api, arg, from, dev] => api
            .parse::<u32>()
            .ok()
            .zip(from.parse::<usize>().ok())
            .zip(dev.parse::<i32>().ok())
            .map(|((api, from), dev)| (api, *arg, from, dev)),
        _ => None,
    };
    let Some((api, arg, from, dev)) = parsed else {
        eprintln!("{EDGE_ROWS_VAR}={spec:?}: expected API:ARG:FROM:DEVICE");
        return 2;
    };
    let Some(edge) = edges.iter().find(|x| x.api == api && x.arg == arg).copied() else {
        eprintln!("{EDGE_ROWS_VAR}={spec:?}: no edge trial {api} {arg}");
        return 2;
    };
    let m = std::sync::Arc::new(crate::harness::probe::probe(settings));
    let e = Env::on(m, settings.clone(), dev);
    e.bind();
    let rows = (edge.rows)(&e);
    for (i, row) in rows.iter().enumerate().skip(from) {
        let what = row_call(edge, row);
        let line = match call_row(&e, edge, row, &what) {
            Err(f) => RowLine::Setup {
                i,
                setup: FailLine::from(f),
            },
            Ok(Got::Hung(after)) => RowLine::Hung {
                i,
                hung_s: after.as_secs_f64(),
            },
            Ok(Got::Answer(a)) => RowLine::Answer {
                i,
                code: a.code.0,
                effect: a.effect.err().map(FailLine::from),
            },
        };
        println!("{}", line.text());
        if bounded::stuck().is_some() {
            bounded::exit_now(0);
        }
        if matches!(line, RowLine::Setup { .. }) {
            break;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parent's reading of a child's lines: answers in order from the row asked, a hang and a
    /// failure's kind kept, a setup failure, and the first line out of order (or unreadable, or past
    /// the rows) ends them. Each assertion a mutant of `read_child_rows` it kills (taking any index,
    /// skipping a bad line, turning every failure into a wrong answer).
    #[test]
    fn child_lines() {
        let out = concat!(
            "noise\n",
            "{\"i\": 2, \"code\": 2, \"effect\": null}\n",
            "{\"i\": 3, \"code\": 0, \"effect\": {\"kind\": \"changed\", \"message\": \"m\"}}\n",
            "{\"i\": 4, \"hung_s\": 3.0}\n",
        );
        let (a, setup) = read_child_rows(out, 2, 6);
        assert!(setup.is_none());
        assert_eq!(a.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![2, 3, 4]);
        assert!(matches!(&a[0].1, Got::Answer(x) if x.code.0 == 2 && x.effect.is_ok()));
        assert!(matches!(&a[1].1, Got::Answer(x) if matches!(x.effect, Err(Fail::Changed(_)))));
        assert!(matches!(a[2].1, Got::Hung(d) if d == Duration::from_secs(3)));
        // Out of order, unreadable, or past the last row: nothing more is taken.
        assert_eq!(read_child_rows("{\"i\": 3, \"code\": 0}\n", 2, 6).0.len(), 0);
        assert_eq!(read_child_rows("{bad\n{\"i\": 2, \"code\": 0}\n", 2, 6).0.len(), 0);
        assert_eq!(read_child_rows("{\"i\": 2, \"code\": 0}\n", 2, 2).0.len(), 0);
        let (a, setup) = read_child_rows(
            "{\"i\": 2, \"setup\": {\"kind\": \"ignore\", \"message\": \"x\"}}\n",
            2,
            6,
        );
        assert!(a.is_empty() && matches!(setup, Some(Fail::Ignore(_))));
    }
}
