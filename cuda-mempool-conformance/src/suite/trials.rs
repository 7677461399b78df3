//! The only libtest-mimic code: cases as trials, the `suite::` trials judged from the probe first,
//! `suite::no_leaks` last, and the records they leave for the report. A trial's outcome comes from
//! the verdict; here it is only shown.

use crate::harness::leaks::{Coordinator, Findings, WorkerState};
use crate::harness::precondition::{self, Broken};
use crate::harness::settings::{Partition, TRIALS_FILE_VAR};
use crate::harness::verdict::{self, Before};
use crate::harness::{Cap, Case, Env, Group, Kind, Machine, Outcome, Record};
use crate::run::scheduler::Scheduler;
use crate::run::Runner;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The trial that runs last and checks what the run left behind.
pub const NO_LEAKS: &str = "suite::no_leaks";
/// The trial that says whether the run's preconditions hold (`harness::precondition`).
pub const PRECONDITIONS: &str = precondition::PRECONDITIONS_TRIAL;
/// The trial that says whether looking up entry points leaves the driver uninitialised.
pub const LOOKUP: &str = precondition::LOOKUP_TRIAL;
/// The trial that says whether every path to the driver reaches the library under test.
pub const LIBRARY_REACHED: &str = "suite::library_reached";
/// The trials judged from the probe, before any case runs.
pub const FROM_PROBE: &[&str] = &[PRECONDITIONS, LOOKUP, LIBRARY_REACHED];

/// CONFORMANCE_TRIALS_FILE=path: the run is only the trials the file names, one full name a line
/// (blank lines and `#` lines skipped), and the `suite::` trials; the others are not in it at all
/// (not listed, not ignored). The mutation run (tests/mutants.rs) uses it. These are the trials it
/// names, each with its first line's index (the order a fail-fast run runs them in, `run::stop`).
pub type Chosen = BTreeMap<String, usize>;

/// The trials CONFORMANCE_TRIALS_FILE names (None: unset, every trial); an unreadable file is an
/// error naming the variable.
pub fn chosen(settings: &crate::harness::settings::Settings) -> Result<Option<Chosen>, String> {
    let Some(path) = settings.trials_file.clone() else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{TRIALS_FILE_VAR}={}: cannot read it ({e}); expected a file of trial names, one a line",
            path.to_string_lossy()
        )
    })?;
    let mut chosen = Chosen::new();
    let lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    for (i, l) in lines.enumerate() {
        chosen.entry(l.to_string()).or_insert(i);
    }
    Ok(Some(chosen))
}

/// Whether a case template named `template` may make a trial of `chosen` (its spread names add
/// a device suffix `::dev0`).
pub fn template_chosen(chosen: &Chosen, template: &str) -> bool {
    let spread = format!("{template}::");
    chosen
        .range(template.to_string()..)
        .map(|(n, _)| n)
        .take_while(|n| n.starts_with(template))
        .any(|n| n == template || n.starts_with(&spread))
}

/// Keep the cases `chosen` names (all of them when None); the names it has that no case of this
/// run has, to be told.
pub fn keep_chosen(cases: &mut Vec<Arc<Case>>, chosen: Option<&Chosen>) -> Vec<String> {
    let Some(chosen) = chosen else {
        return Vec::new();
    };
    let have: BTreeSet<String> = cases.iter().map(|c| c.trial_name()).collect();
    cases.retain(|c| chosen.contains_key(&c.trial_name()));
    chosen
        .keys()
        .filter(|n| !have.contains(*n) && !n.starts_with("suite::"))
        .cloned()
        .collect()
}

/// CONFORMANCE_PARTITION=k/n (`harness::settings::Partition`): this runner's share of a run split
/// across n runners, like nextest's `--partition count:k/n`. Count-based: the cases' trial names,
/// sorted, are dealt out in turn, the i-th (from 0) to shard i % n + 1, so the shards are disjoint,
/// their union is the whole run and their sizes differ by at most one. The `suite::` trials run in
/// every shard (they judge the machine and the shard's own leaks); `report::matrix` puts the shards
/// back into one column.
///
/// Whether the trial named `name` is shard `p`'s, among the run's trial `names`.
pub fn shard_keeps(p: Partition, names: &BTreeSet<String>, name: &str) -> bool {
    name.starts_with("suite::")
        || names
            .iter()
            .filter(|n| !n.starts_with("suite::"))
            .position(|n| n == name)
            .is_some_and(|i| i % p.n == p.k - 1)
}

/// Keep this shard's cases (all of them when None).
pub fn keep_partition(cases: &mut Vec<Arc<Case>>, p: Option<Partition>) {
    let Some(p) = p else { return };
    let names: BTreeSet<String> = cases.iter().map(|c| c.trial_name()).collect();
    let ours: BTreeSet<String> = names.iter().filter(|n| shard_keeps(p, &names, n)).cloned().collect();
    cases.retain(|c| ours.contains(&c.trial_name()));
}

/// Every record of this run, in the order trials finished.
static RECORDS: Mutex<Vec<Record>> = Mutex::new(Vec::new());
/// How many scheduled trials have completed (in-process mode's `suite::no_leaks` waits on it).
static COMPLETED: AtomicUsize = AtomicUsize::new(0);

/// The records so far.
pub fn records() -> Vec<Record> {
    RECORDS.lock().unwrap().clone()
}

/// Put `r` in place of the record of the same trial (a rerun's verdict, `suite::rerun`).
pub fn replace(r: Record) {
    let mut all = RECORDS.lock().unwrap();
    match all.iter_mut().find(|x| x.trial == r.trial) {
        Some(x) => *x = r,
        None => all.push(r),
    }
}

/// Whether `--list`, a filter or `--skip` leaves out a trial of this name (before any is built).
pub fn filtered_out(args: &Arguments, name: &str) -> bool {
    args.is_filtered_out(&Trial::test(name, || Ok(())))
}

/// Show a record as libtest-mimic expects, print what a reader must see beside the trial's line,
/// and keep it for the report.
fn finish(r: Record) -> Result<Completion, Failed> {
    let result = match r.outcome {
        Outcome::Passed | Outcome::Changed | Outcome::ExpectedFailure | Outcome::KnownDeparture | Outcome::Flaky => {
            Ok(Completion::Completed)
        }
        // Interrupted: libtest shows it ignored with what cut the run; the exit code says the rest.
        Outcome::Ignored | Outcome::Interrupted => Ok(Completion::ignored_with(r.message.clone())),
        Outcome::Failed => Err(r.message.clone().into()),
    };
    match r.outcome {
        Outcome::Failed => eprintln!("FAILED {}: {}", r.trial, r.message),
        Outcome::Changed => println!("CHANGED {}: {}", r.trial, r.message),
        Outcome::ExpectedFailure => println!("EXPECTED FAILURE {}: {}", r.trial, r.message),
        Outcome::KnownDeparture => println!("KNOWN DEPARTURE {}: {}", r.trial, r.message),
        Outcome::Flaky => println!("FLAKY {}: {}", r.trial, r.message),
        _ => {}
    }
    RECORDS.lock().unwrap().push(r);
    result
}

/// The trials of a run, and the cases among them that will really run (not filtered out, not
/// ignored up front). `runner` is set once those are known (the scheduler needs them).
pub struct Planned {
    pub trials: Vec<Trial>,
    pub jobs: Vec<Arc<Case>>,
}

/// Turn cases into libtest-mimic trials. A missing capability that is not required ignores the
/// trial up front (every runner shows it as ignored, nextest too), its reason recorded; a missing
/// required one fails it. The others are run by `runner` and judged.
pub fn plan(
    m: &Machine,
    cases: &[Arc<Case>],
    required: &[Cap],
    args: &Arguments,
    runner: Arc<OnceLock<Runner>>,
) -> Planned {
    let broken = precondition::broken(m);
    let lookup = precondition::lookup(m);
    // A look-up that initialised the driver leaves the before-cuInit trials nothing to judge; one
    // whose child gave no answer (a layer that crashes on calls before cuInit) fails its own trial
    // and blocks none: each before-cuInit trial then meets the crash itself and names its API.
    let lookup_blocks = lookup.as_ref().filter(|_| matches!(m.lookup_init(), Some(Ok(_))));
    // The broken precondition a case relies on, if any: the ordered ones first.
    let blocking = |c: &Case| {
        [broken.as_ref(), lookup_blocks]
            .into_iter()
            .flatten()
            .find(|b| c.relies.contains(&b.which))
            .cloned()
    };
    let blocked_by = |b: &Option<Broken>| {
        cases
            .iter()
            .filter(|c| b.is_some() && blocking(c).map(|x| x.which) == b.as_ref().map(|x| x.which))
            .count()
    };
    let mut trials = vec![
        precondition_trial(PRECONDITIONS, broken.clone(), blocked_by(&broken), true),
        precondition_trial(LOOKUP, lookup.clone(), blocked_by(&lookup), m.lookup_init().is_some()),
        library_reached(m),
    ];
    let mut jobs = Vec::new();
    for c in cases {
        let name = c.trial_name();
        let before = verdict::before(c, m, blocking(c).as_ref(), required);
        let up_front = match &before {
            Before::Ignore(r) => Some(r.clone()),
            _ => None,
        };
        let runs = !matches!(before, Before::Fail(_));
        let (case, runner) = (c.clone(), runner.clone());
        let trial = Trial::ignorable_test(name, move || {
            let r = match &before {
                Before::Fail(r) => verdict::expected(r.clone()),
                _ => {
                    let r = runner
                        .get()
                        .expect("the runner is set before the trials run")
                        .run(&case);
                    COMPLETED.fetch_add(1, Ordering::SeqCst);
                    r
                }
            };
            finish(r)
        })
        .with_ignored_flag(up_front.is_some());
        let listed = !args.is_filtered_out(&trial);
        // Ignored up front: recorded with its reason unless the run asks for ignored trials.
        if let Some(r) = up_front.filter(|_| listed && !args.include_ignored && !args.ignored) {
            RECORDS.lock().unwrap().push(r);
        }
        if listed && !args.is_ignored(&trial) && runs {
            jobs.push(c.clone());
        }
        trials.push(trial);
    }
    Planned { trials, jobs }
}

/// `suite::preconditions` and `suite::lookup_does_not_initialise`, first: `name` fails, once,
/// naming the cause and the fix, when its precondition does not hold (`blocked` trials then not
/// run); ignored when it was not `judged`.
fn precondition_trial(name: &'static str, broken: Option<Broken>, blocked: usize, judged: bool) -> Trial {
    Trial::ignorable_test(name, move || {
        let (outcome, kind, message) = match &broken {
            None if judged => (Outcome::Passed, Kind::Plain, String::new()),
            None => (
                Outcome::Ignored,
                Kind::CannotRun,
                "not judged: the driver library did not load, or the probe gave no answer".to_string(),
            ),
            Some(b) => (
                Outcome::Failed,
                Kind::Precondition,
                format!("{} {blocked} trials that rely on it were not run.", b.text()),
            ),
        };
        finish(verdict::expected(Record::new(
            name,
            Group::Suite,
            outcome,
            kind,
            message,
        )))
    })
}

/// `suite::library_reached`: fails when a library under test defines one of the 14 APIs and some
/// path to the driver (cuGetProcAddress, dlsym, linking) hands out another object's function for
/// it, naming per path the APIs and the applications that take it (`Machine::bypasses`). A run
/// with no library under test passes; one that defines none of the driver's symbols is a note.
fn library_reached(m: &Machine) -> Trial {
    let (outcome, message) = match m.bypasses() {
        b if b.is_empty() => (Outcome::Passed, m.not_stand_ins().join("; ")),
        b => (
            Outcome::Failed,
            format!(
                "the library under test is not reached on every path to the driver:\n- {}",
                b.join("\n- ")
            ),
        ),
    };
    Trial::ignorable_test(LIBRARY_REACHED, move || {
        let r = Record::new(LIBRARY_REACHED, Group::Suite, outcome, Kind::Plain, message.clone());
        finish(verdict::expected(r))
    })
}

/// What `suite::no_leaks` checks: each worker's leak check and the coordinator's (workers), the
/// one process's (in-process mode), or nothing (nextest: a process per trial).
pub enum LeakCheck {
    Workers(Arc<Scheduler>, Coordinator),
    InProcess(Mutex<WorkerState>, Arc<Env>, usize),
    PerTrialProcesses,
}

/// `suite::no_leaks`, last: once every other trial is done, each worker's leak check and the
/// coordinator's own. A failing trial like any other, so the exit code, the totals and JUnit agree.
/// Where looking up entry points initialises the driver (`lookup_initialises`: the machine's
/// `precondition::lookup`), the fds the library opened in its look-ups are not leaks here but
/// `suite::lookup_does_not_initialise`'s, listed there (`set_apart`): one cause, one line.
pub fn no_leaks(check: LeakCheck, lookup_initialises: bool) -> Trial {
    Trial::ignorable_test(NO_LEAKS, move || {
        let start = Instant::now();
        let findings = match &check {
            LeakCheck::Workers(s, coordinator) => {
                let mut f = s.finish();
                // The footprint's sampler ends first: NVML's session is the coordinator's own.
                let _ = crate::harness::footprint::end();
                f.leaks.extend(coordinator.check());
                Some(f)
            }
            LeakCheck::InProcess(state, env, jobs) => {
                wait_for_others(*jobs, env.deadline());
                Some(state.lock().unwrap().end_check(env))
            }
            LeakCheck::PerTrialProcesses => None,
        };
        let (findings, notes) = match findings {
            Some(f) if lookup_initialises => {
                let notes = set_apart(&f.by_lookup);
                (Some(f.leaks), notes)
            }
            Some(Findings { mut leaks, by_lookup }) => {
                leaks.extend(by_lookup);
                (Some(leaks), vec![])
            }
            None => (None, vec![]),
        };
        let (outcome, kind, message) = match (findings, crate::run::interrupt::cut()) {
            // Workers killed for the interrupt are no leak: the check could not run.
            (_, Some(cut)) => (Outcome::Interrupted, Kind::Interrupted, cut.text()),
            (None, None) => (
                Outcome::Ignored,
                Kind::CannotRun,
                "each trial ran in a process of its own (nextest): nothing outlives a trial to leak".into(),
            ),
            (Some(l), None) if l.is_empty() => (Outcome::Passed, Kind::Plain, String::new()),
            (Some(l), None) => (
                Outcome::Failed,
                Kind::Leak,
                format!("the run left behind:\n- {}", l.join("\n- ")),
            ),
        };
        let r = Record::new(NO_LEAKS, Group::Suite, outcome, kind, message).with(|t| {
            t.secs = start.elapsed().as_secs_f64();
            t.notes = notes;
        });
        finish(verdict::expected(r))
    })
}

/// The fds the library opened in its look-ups (`lines`), where looking up initialises the driver:
/// added to `suite::lookup_does_not_initialise`'s message, the one cause they belong to (report.md
/// and JUnit show it with the failure); the note `suite::no_leaks` keeps instead, saying where they
/// went (all of them when that trial is not in the run).
fn set_apart(lines: &[String]) -> Vec<String> {
    if lines.is_empty() {
        return vec![];
    }
    let noted = format!(
        "The library's look-ups of entry points, which initialise the driver, also left open: {}.",
        lines.join("; ")
    );
    let mut all = RECORDS.lock().unwrap();
    match all.iter_mut().find(|r| r.trial == LOOKUP) {
        Some(r) => {
            r.message = format!("{}\n{noted}", r.message);
            let fds = match lines.len() {
                1 => "1 fd".to_string(),
                n => format!("{n} fds"),
            };
            vec![format!(
                "{fds} the library opened while an entry point was looked up, not counted as leaks: {LOOKUP}'s \
                 cause (a library that initialises the driver in its look-up), listed there"
            )]
        }
        None => vec![format!("not counted as leaks, {LOOKUP}'s cause: {noted}")],
    }
}

/// In-process mode: wait until the other trials have recorded their results (within `deadline`'s
/// bound for `jobs` trials).
fn wait_for_others(jobs: usize, deadline: crate::driver::deadline::Deadline) {
    let until = Instant::now() + deadline.all_trials(jobs);
    while Instant::now() < until {
        if COMPLETED.load(Ordering::SeqCst) >= jobs {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shards of a run are disjoint, and their union is the whole (the `suite::` trials in each).
    #[test]
    fn shards_are_disjoint_and_cover_the_run() {
        let names: BTreeSet<String> = (0..23)
            .map(|i| format!("82{}_api::trial_{i:02}", i % 10))
            .chain(["suite::no_leaks".to_string(), "suite::preconditions".to_string()])
            .collect();
        for n in 1..=5 {
            let shards: Vec<BTreeSet<&String>> = (1..=n)
                .map(|k| {
                    let p = Partition { k, n };
                    names.iter().filter(|t| shard_keeps(p, &names, t)).collect()
                })
                .collect();
            let mut union = BTreeSet::new();
            for s in &shards {
                assert!(s.iter().filter(|t| t.starts_with("suite::")).count() == 2, "{s:?}");
                let own: Vec<_> = s.iter().filter(|t| !t.starts_with("suite::")).collect();
                assert!((23 / n..=23 / n + 1).contains(&own.len()), "{n}: {own:?}");
                for t in own {
                    assert!(union.insert(*t), "{t} in two shards of {n}");
                }
            }
            assert_eq!(union.len(), 23, "the shards of {n} cover the run");
        }
    }
}
