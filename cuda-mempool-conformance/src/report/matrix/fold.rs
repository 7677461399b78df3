//! Reports into runs, runs into columns. A run is one report, or the shards of one run (reports with
//! a `partition`, of one origin, the same n, each k once) merged back into one. A column is every
//! run of one origin (GPU models, driver, library, entry mode, settings): a fleet's hosts of one GPU
//! model, driver and library fold into one column, which counts its hosts and names each run whose
//! trials came to something else than in most runs. A trial's outcome in a column is the worst of
//! its runs'; a trial some run lacks was not judged there (`Cell::not_in`).

use super::origin::{Origin, Report};
use super::{verdict, ApiRow, CauseRow, Cell, Column, Difference, Run};
use conformance_model::Outcome;
use std::collections::{BTreeMap, BTreeSet};

/// Worst first: of a trial that several runs or shards ran, the worst outcome stands.
const SEVERITY: [Outcome; 8] = [
    Outcome::Failed,
    Outcome::Interrupted,
    Outcome::Flaky,
    Outcome::Changed,
    Outcome::ExpectedFailure,
    Outcome::KnownDeparture,
    Outcome::Passed,
    Outcome::Ignored,
];

/// A cell's outcome's rank in [`SEVERITY`]; a cell that is no outcome (a report's trial the model
/// reads is always one) ranks just after a failure.
fn severity(outcome: &str) -> usize {
    SEVERITY.iter().position(|o| o.as_str() == outcome).unwrap_or(1)
}

/// ✗ over ✓ over —: a shard or run that failed an API fails it for the column.
fn worse_mark(a: &str, b: &str) -> String {
    let rank = |m: &str| match m.chars().next() {
        Some('✗') => 0,
        Some('✓') => 1,
        _ => 2,
    };
    if rank(b) < rank(a) { b } else { a }.to_string()
}

/// One run: its reports' rows, causes and trials merged.
struct RunData {
    run: Run,
    origin: Origin,
    apis: Vec<ApiRow>,
    causes: Vec<CauseRow>,
    trials: BTreeMap<String, Cell>,
}

/// Add `from`'s API rows to `into`'s, row by row.
fn add_apis(into: &mut Vec<ApiRow>, from: &[ApiRow]) {
    for a in from {
        match into.iter_mut().find(|x| x.index == a.index && x.api == a.api) {
            None => into.push(a.clone()),
            Some(x) => {
                x.supported = worse_mark(&x.supported, &a.supported);
                x.test_passed = worse_mark(&x.test_passed, &a.test_passed);
                x.passed += a.passed;
                x.failed += a.failed;
                x.ignored += a.ignored;
                x.changed += a.changed;
                x.known_departures += a.known_departures;
                x.expected_failures += a.expected_failures;
            }
        }
    }
}

/// Add `from`'s causes to `into`'s, cause by cause.
fn add_causes(into: &mut BTreeMap<String, CauseRow>, from: &[CauseRow]) {
    for c in from {
        let e = into.entry(c.text.clone()).or_insert_with(|| CauseRow {
            text: c.text.clone(),
            ..CauseRow::default()
        });
        e.count += c.count;
        e.trials.extend(c.trials.iter().cloned());
    }
}

fn most_first(causes: BTreeMap<String, CauseRow>) -> Vec<CauseRow> {
    let mut causes: Vec<CauseRow> = causes.into_values().collect();
    causes.sort_by_key(|c| std::cmp::Reverse(c.count));
    causes
}

/// One run from one report or the shards of one run.
fn run(reports: Vec<Report>) -> RunData {
    let first = &reports[0];
    let mut apis: Vec<ApiRow> = Vec::new();
    let mut causes = BTreeMap::new();
    let mut trials: BTreeMap<String, Cell> = BTreeMap::new();
    for r in &reports {
        add_apis(&mut apis, &r.apis);
        add_causes(&mut causes, &r.causes);
        for (name, cell) in &r.trials {
            match trials.get(name) {
                Some(had) if severity(&had.outcome) <= severity(&cell.outcome) => {}
                _ => {
                    trials.insert(name.clone(), cell.clone());
                }
            }
        }
    }
    let shards = first.partition.map(|(_, n)| {
        let mut ks: Vec<usize> = reports.iter().filter_map(|r| r.partition.map(|p| p.0)).collect();
        ks.sort_unstable();
        (ks, n)
    });
    RunData {
        run: Run {
            reports: reports.iter().map(|r| r.path.clone()).collect(),
            shards,
            host: first.host.clone(),
            uuids: first.uuids.clone(),
            date: first.date.clone(),
        },
        origin: first.origin.clone(),
        apis,
        causes: most_first(causes),
        trials,
    }
}

/// The runs: a shard joins the first run of its origin and n that lacks its k; every other report
/// is a run of its own.
fn runs(reports: Vec<Report>) -> Vec<RunData> {
    let mut runs: Vec<Vec<Report>> = Vec::new();
    for r in reports {
        let home = r.partition.and_then(|(k, n)| {
            runs.iter().position(|run| {
                run[0].origin == r.origin
                    && run[0].partition.is_some_and(|p| p.1 == n)
                    && run.iter().all(|x| x.partition.map(|p| p.0) != Some(k))
            })
        });
        match home {
            Some(i) => runs[i].push(r),
            None => runs.push(vec![r]),
        }
    }
    runs.into_iter().map(run).collect()
}

/// A run in words: its host and its reports.
fn run_words(r: &Run) -> String {
    format!("{} ({})", r.host, r.reports.join(", "))
}

/// How many runs of the first outcome, and the runs of each other, for a trial the runs disagree on.
fn disagreement(outcomes: &[Option<&str>], runs: &[RunData]) -> String {
    let mut by: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, o) in outcomes.iter().enumerate() {
        by.entry(o.unwrap_or("absent")).or_default().push(i);
    }
    let parts: Vec<String> = by
        .iter()
        .map(|(o, rs)| {
            if rs.len() * 2 > runs.len() || rs.len() > 3 {
                format!("{o} in {}", rs.len())
            } else {
                let named: Vec<String> = rs.iter().map(|i| run_words(&runs[*i].run)).collect();
                format!("{o} in {}", named.join(", "))
            }
        })
        .collect();
    format!("across {} runs: {}", runs.len(), parts.join("; "))
}

/// The outcome most runs have (the first run's among equals), `None` for absent.
fn usual<'a>(outcomes: &[Option<&'a str>]) -> Option<&'a str> {
    let mut count: Vec<(Option<&str>, usize)> = Vec::new();
    for o in outcomes {
        match count.iter_mut().find(|(x, _)| x == o) {
            Some((_, n)) => *n += 1,
            None => count.push((*o, 1)),
        }
    }
    let most = count.iter().map(|c| c.1).max().unwrap_or(0);
    count.into_iter().find(|c| c.1 == most).and_then(|c| c.0)
}

/// One column from the runs of one origin.
fn column(runs: Vec<RunData>) -> Column {
    let mut apis: Vec<ApiRow> = Vec::new();
    let mut causes = BTreeMap::new();
    for r in &runs {
        add_apis(&mut apis, &r.apis);
        add_causes(&mut causes, &r.causes);
    }
    let names: BTreeSet<&String> = runs.iter().flat_map(|r| r.trials.keys()).collect();
    let mut trials = BTreeMap::new();
    let mut differs: Vec<Vec<String>> = vec![Vec::new(); runs.len()];
    for name in names {
        let cells: Vec<Option<&Cell>> = runs.iter().map(|r| r.trials.get(name)).collect();
        let outcomes: Vec<Option<&str>> = cells.iter().map(|c| c.map(|c| c.outcome.as_str())).collect();
        let worst = cells
            .iter()
            .flatten()
            .min_by_key(|c| severity(&c.outcome))
            .expect("a trial of some run");
        let mut cell = Cell {
            not_in: cells.iter().filter(|c| c.is_none()).count(),
            ..(*worst).clone()
        };
        if outcomes.iter().any(|o| *o != outcomes[0]) {
            cell.message = format!("{}: {}", disagreement(&outcomes, &runs), cell.message);
            let most = usual(&outcomes);
            for (i, o) in outcomes.iter().enumerate() {
                if *o != most {
                    differs[i].push(format!("{name}: {}", o.unwrap_or("absent")));
                }
            }
        }
        trials.insert(name.clone(), cell);
    }
    verdict::judge(&mut apis, &trials);
    let mut totals = BTreeMap::new();
    for c in trials.values() {
        *totals.entry(c.outcome.clone()).or_insert(0) += 1;
    }
    let hosts: BTreeSet<(&String, &Vec<String>)> = runs.iter().map(|r| (&r.run.host, &r.run.uuids)).collect();
    let mut dates: Vec<&String> = runs.iter().map(|r| &r.run.date).collect();
    dates.sort();
    let date = match (dates.first(), dates.last()) {
        (Some(a), Some(b)) if a != b => format!("{a} – {b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    };
    let origin = runs[0].origin.clone();
    let mut label = origin.label();
    if runs.len() > 1 {
        label += &format!(" · {} runs, {} host(s)", runs.len(), hosts.len());
    }
    Column {
        label,
        hosts: hosts.len(),
        differs: runs
            .iter()
            .zip(differs)
            .filter(|(_, d)| !d.is_empty())
            .map(|(r, trials)| Difference {
                run: run_words(&r.run),
                trials,
            })
            .collect(),
        reports: runs.iter().flat_map(|r| r.run.reports.iter().cloned()).collect(),
        runs: runs.into_iter().map(|r| r.run).collect(),
        origin,
        date,
        totals,
        apis,
        causes: most_first(causes),
        trials,
        missing: None,
    }
}

/// Merge reports into columns, in the order of their first report. Labels that would repeat (of
/// one origin but for their settings) say their settings, then their place.
pub(super) fn columns(reports: Vec<Report>) -> Vec<Column> {
    let mut by_origin: Vec<Vec<RunData>> = Vec::new();
    for r in runs(reports) {
        match by_origin.iter_mut().find(|c| c[0].origin == r.origin) {
            Some(c) => c.push(r),
            None => by_origin.push(vec![r]),
        }
    }
    let mut columns: Vec<Column> = by_origin.into_iter().map(column).collect();
    distinct_labels(&mut columns);
    columns
}

/// Labels that repeat say their settings; those that still repeat, their place.
pub(super) fn distinct_labels(columns: &mut [Column]) {
    let count = |cols: &[Column], l: &str| cols.iter().filter(|c| c.label == l).count();
    let before = columns.to_vec();
    for c in columns.iter_mut() {
        if count(&before, &c.label) > 1 {
            c.label += &format!(" · {}", c.origin.settings_text());
        }
    }
    let before = columns.to_vec();
    for (i, c) in columns.iter_mut().enumerate() {
        if count(&before, &c.label) > 1 {
            c.label += &format!(" #{}", i + 1);
        }
    }
}
