//! The run's report, written once: by `main` after the trials, or by the last resort of a run cut
//! short (`run::interrupt`) whose trials do not end in time.

use crate::harness::settings::{Partition, JUNIT_VAR};
use crate::harness::verdict::of_case;
use crate::harness::{Case, Env, Group, Kind, Outcome, Record};
use crate::report::{build, files, junit, markdown, screen, timeline};
use crate::run::interrupt::{self, Cut};
use crate::suite::trials::{self, NO_LEAKS};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What the report needs, once the trials are planned (the last resort of a cut run reads it too).
pub(super) struct Reporting {
    pub(super) env: Arc<Env>,
    /// The cases that run: those without a record when the run is cut are recorded interrupted.
    pub(super) jobs: Vec<Arc<Case>>,
    pub(super) start: Instant,
    pub(super) parallel: usize,
    pub(super) verbose: bool,
    /// CONFORMANCE_PARTITION: the shard this run was (report.json `partition`).
    pub(super) partition: Option<Partition>,
    /// The cap the probe saw, if it saw one (issue 47: the report's footprint says it).
    pub(super) cap: Option<conformance_model::CapSeen>,
    /// The library's long wait at a new process's first GPU work and the run's plan for it, if it
    /// had one (issue 58: the report's opening line says it).
    pub(super) first_wait: Option<conformance_model::FirstWait>,
}

/// The run's footprint for the report: the sampler's (`harness::footprint`), with the cap the probe
/// saw.
fn footprint(r: &Reporting) -> Option<conformance_model::Footprint> {
    let mut f = crate::harness::footprint::end()?;
    f.cap = r.cap.clone();
    Some(f)
}

pub(super) static REPORTING: OnceLock<Reporting> = OnceLock::new();
/// Whether the report was written (once: by `main`, or by `last_resort`).
static REPORTED: Mutex<bool> = Mutex::new(false);

/// Write the report once, from what `REPORTING` holds (nothing before the trials are planned).
pub(super) fn report() {
    let mut done = REPORTED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(r) = REPORTING.get().filter(|_| !*done) {
        write_report(r);
        *done = true;
    }
}

/// How long a cut run waits for its trials to end before it writes the reports itself.
const GRACE: Duration = Duration::from_secs(5);

/// On the watching thread of a cut run (`run::interrupt`): no trial starts any more and the workers
/// are being killed, so `main` should write the report within moments. Should it not (a trial
/// running in this process, CONFORMANCE_WORKERS=0, cannot be killed), the report is written from
/// what finished after GRACE and the process ends with the cut's exit code.
pub(super) fn last_resort(cut: Cut) {
    eprintln!(
        "conformance: {}: no trial starts any more, the workers are ended, the report follows \
         (a second signal ends the run at once)",
        cut.text()
    );
    std::thread::sleep(GRACE);
    report();
    std::process::exit(cut.exit_code().into());
}

/// The records of the run: those of the trials that finished, and when the run was cut short, an
/// `interrupted` one for each trial that has none (not run, or cut short in this process).
fn records(jobs: &[Arc<Case>]) -> Vec<Record> {
    let mut records = trials::records();
    let Some(cut) = interrupt::cut() else {
        return records;
    };
    let have: std::collections::BTreeSet<String> = records.iter().map(|r| r.trial.clone()).collect();
    let rest: Vec<Record> = jobs
        .iter()
        .filter(|c| !have.contains(&c.trial_name()))
        .map(|c| of_case(c, Outcome::Interrupted, Kind::Interrupted, cut.text()))
        .chain(
            trials::FROM_PROBE
                .iter()
                .chain([&NO_LEAKS])
                .filter(|n| !have.contains(**n))
                .map(|n| Record::new(*n, Group::Suite, Outcome::Interrupted, Kind::Interrupted, cut.text())),
        )
        .collect();
    records.extend(rest);
    records
}

/// The run's one report (`report::build`), then drawn from it: on stdout report.md's tables, the
/// last screen, where the time went (and a cut run's one line); on disk report.md, report.json,
/// timeline.svg and (if asked for) JUnit.
fn write_report(r: &Reporting) {
    let wall = r.start.elapsed().as_secs_f64();
    let records = records(&r.jobs);
    let mut facts = build::Facts::now(wall, r.parallel, r.partition, r.env.settings.strict.value());
    facts.footprint = footprint(r);
    facts.first_wait = r.first_wait.clone();
    let report = build::report(&r.env.m, &records, &facts);
    println!();
    for line in screen::tables(&report) {
        println!("{line}");
    }
    for line in screen::last_screen(&report, r.verbose) {
        println!("{line}");
    }
    let bars = timeline::of_report(&report).unwrap_or_default();
    for line in screen::time_lines(&bars, report.wall_s) {
        println!("{line}");
    }
    if let Some(cut) = interrupt::cut() {
        let n = markdown::with_outcome(&report, Outcome::Interrupted).len();
        println!(
            "conformance: {}: {n} trials not run or cut short (recorded interrupted); exit code {}",
            cut.text(),
            cut.exit_code()
        );
    }
    if std::env::var_os("NEXTEST").is_some() {
        // One process per trial under nextest: its JUnit output is the report.
        return;
    }
    let dir = files::report_dir(&r.env.settings);
    let written = files::write(&dir, &report, &bars);
    if let Some(path) = r.env.settings.junit.clone() {
        match std::fs::write(&path, junit::render(&report)) {
            Ok(()) => println!("conformance: JUnit written to {path}"),
            Err(e) => eprintln!("conformance: cannot write JUnit to {path} ({e}); check {JUNIT_VAR}"),
        }
    }
    match written {
        Ok(()) => println!("conformance: report written to {}", dir.display()),
        Err(e) => eprintln!(
            "conformance: cannot write the report to {} ({e}); set CONFORMANCE_REPORT_DIR",
            dir.display()
        ),
    }
}
