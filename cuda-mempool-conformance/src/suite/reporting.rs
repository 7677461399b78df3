//! The run's report, written once: by `main` after the trials, or by the last resort of a run cut
//! short (`run::interrupt`) whose trials do not end in time.

use crate::harness::verdict::of_case;
use crate::harness::{Case, Env, Group, Kind, Outcome, Record};
use crate::report::{junit, screen, summary, timeline};
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
    pub(super) partition: Option<trials::Partition>,
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

/// The summary on stdout (the table, the last screen, where the time went, and a cut run's one
/// line), then report.md, report.json, timeline.svg and (if asked for) JUnit on disk.
fn write_report(r: &Reporting) {
    let (env, parallel, partition) = (&r.env, r.parallel, r.partition);
    let wall = r.start.elapsed().as_secs_f64();
    let records = records(&r.jobs);
    let rows = summary::rows(&env.m, &records);
    let date = summary::now_utc();
    let md = summary::markdown(&env.m, &rows, &records, &date, wall, parallel);
    // report.md's tables and totals but the declared departures' (one row each, checked or not:
    // report.md has it, and every trial), then the last screen.
    println!();
    let mut departures = false;
    for line in md.lines() {
        if line.starts_with('#') {
            departures = line.starts_with("## Known departures of drivers");
        } else if (line.starts_with('|') && !departures) || line.starts_with("Total:") {
            println!("{line}");
        }
    }
    for line in screen::last_screen(&records, r.verbose) {
        println!("{line}");
    }
    let bars = timeline::of_records(&records);
    for line in screen::time_lines(&bars, Some(wall)) {
        println!("{line}");
    }
    if let Some(cut) = interrupt::cut() {
        let n = records.iter().filter(|r| r.outcome == Outcome::Interrupted).count();
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
    let dir = summary::report_dir();
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join("report.md"), &md))
        .and_then(|_| {
            let mut j = summary::json(&env.m, &rows, &records, &date, wall, parallel);
            j["partition"] = partition.map_or(serde_json::Value::Null, |p| p.to_json());
            std::fs::write(
                dir.join("report.json"),
                serde_json::to_string_pretty(&j).unwrap() + "\n",
            )
        })
        .and_then(|_| timeline::write(&dir, &bars, Some(wall), &format!("conformance run of {date}")));
    if let Some(path) = crate::os::setting(junit::JUNIT_VAR) {
        match std::fs::write(&path, junit::render(&records, wall)) {
            Ok(()) => println!("conformance: JUnit written to {path}"),
            Err(e) => eprintln!(
                "conformance: cannot write JUnit to {path} ({e}); check {}",
                junit::JUNIT_VAR
            ),
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
