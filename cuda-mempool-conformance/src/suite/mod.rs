//! Layer 4, the suite: `main`, shared by `tests/conformance.rs` and any harness that runs the suite
//! under a different libcuda (tests/shim.rs): child roles first, then the coordinator — settings,
//! workers, probe, trials, `suite::no_leaks`, the report (also when the run is cut short:
//! `run::interrupt`).

pub mod rerun;
pub mod roles;
pub mod trials;

use crate::harness::devices::{request, select, Request};
use crate::harness::leaks::{self, Coordinator, WorkerState};
use crate::harness::verdict::of_case;
use crate::harness::{probe, Cap, Case, Env, Group, Kind, Outcome, Record, CHILD_VAR};
use crate::report::{diff, expectations, junit, matrix, screen, summary, timeline};
use crate::run::interrupt::{self, Cut};
use crate::run::scheduler::{Prestarted, Scheduler};
use crate::run::stop::Stop;
use crate::run::{Runner, RUN_START};
use libtest_mimic::Arguments;
use roles::all_cases;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use trials::{LeakCheck, NO_LEAKS};

/// Default test threads (and so general worker processes, besides one per lane): the driver
/// creates contexts one at a time (H100, R580: 4 processes start in 0.6 s, 16 in 3.0 s), so more
/// workers cost more start-up than they save. Full runs on the H100 took 6.0 s with 3 workers,
/// 6.3 s with 4, 6.5 s with 6 and 7.0 s with 8 (docs/reliability.md).
const DEFAULT_PARALLEL: usize = 4;

fn default_parallel() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(DEFAULT_PARALLEL)
}

/// CONFORMANCE_WORKERS=0 runs every trial in this process (crash cases still in children), the way
/// nextest's one-process-per-trial runs do; any other value is an error.
fn in_process_mode() -> Result<bool, String> {
    if std::env::var_os("NEXTEST").is_some() {
        return Ok(true);
    }
    match std::env::var("CONFORMANCE_WORKERS").as_deref() {
        Err(_) => Ok(false),
        Ok("0") => Ok(true),
        Ok("1") => Ok(false),
        Ok(v) => Err(format!(
            "CONFORMANCE_WORKERS={v:?}: expected 0 (run trials in this process) or 1 (worker processes, the default); \
             the number of workers is --test-threads"
        )),
    }
}

/// Environment variables, checked before anything runs.
struct Settings {
    devices: Request,
    required: Vec<Cap>,
    timeout: Duration,
    in_process: bool,
    /// CONFORMANCE_TRIALS_FILE's trials (None: all), and their order (a fail-fast run's).
    chosen: Option<trials::Chosen>,
    /// CONFORMANCE_FAIL_FAST: stop at the first failure (`run::stop`).
    fail_fast: bool,
    /// CONFORMANCE_FAIL_FAST_LEAD: how many of the chosen trials run before the rest (`run::stop`).
    lead: usize,
    /// CONFORMANCE_RUN_BUDGET: the whole run's budget (`run::interrupt`).
    budget: Option<Duration>,
    /// CONFORMANCE_VERBOSE: the last screen lists every ignored trial and failure.
    verbose: bool,
    /// CONFORMANCE_PARTITION: this runner's shard of the run (None: all of it).
    partition: Option<trials::Partition>,
}
fn settings() -> Result<Settings, String> {
    leaks::plants()?;
    crate::driver::cu::Entry::from_env()?;
    probe::library_from_env()?;
    crate::harness::expect::load()?;
    let timeout = crate::harness::config::trial_timeout()?;
    crate::driver::departures::strict_from_env()?;
    crate::cases::load::settings(timeout)?;
    crate::run::serial_schedule()?;
    crate::harness::config::helper_connections()?;
    Ok(Settings {
        devices: request()?,
        required: crate::harness::config::required_caps()?,
        timeout,
        in_process: in_process_mode()?,
        chosen: trials::chosen()?,
        fail_fast: crate::run::stop::fail_fast_from_env()?,
        lead: crate::run::stop::lead_from_env()?,
        budget: crate::harness::config::run_budget()?,
        verbose: crate::harness::config::verbose()?,
        partition: trials::Partition::from_env()?,
    })
}

/// Commands that run no trial: `--diff OLD.json NEW.json`, `--matrix REPORT.json… [--out DIR]`,
/// `--timeline REPORT.json [--out DIR]`, `--expectations-from REPORT.json`.
fn command(argv: &[String]) -> Option<ExitCode> {
    if let Some(i) = argv.iter().position(|a| a == "--diff") {
        return Some(diff::main(&argv[i + 1..]));
    }
    if let Some(i) = argv.iter().position(|a| a == "--timeline") {
        return Some(redraw_timeline(&argv[i + 1..]));
    }
    if let Some(i) = argv.iter().position(|a| a == "--matrix") {
        return Some(matrix::main(&argv[i + 1..]));
    }
    let i = argv.iter().position(|a| a == "--expectations-from")?;
    Some(match argv.get(i + 1).map(|p| expectations::from_report(p)) {
        Some(Ok(text)) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Some(Err(e)) => {
            eprintln!("conformance: --expectations-from: {e}");
            ExitCode::from(2)
        }
        None => {
            eprintln!("conformance: usage: --expectations-from REPORT.json");
            ExitCode::from(2)
        }
    })
}

/// `--timeline REPORT.json [--out DIR]`: timeline.svg drawn from a report, and where its time went.
fn redraw_timeline(args: &[String]) -> ExitCode {
    match timeline::redraw(args) {
        Ok((bars, wall, svg)) => {
            for line in screen::time_lines(&bars, wall) {
                println!("{line}");
            }
            println!("conformance: timeline written to {}", svg.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("conformance: --timeline: {e}");
            ExitCode::from(2)
        }
    }
}

/// The suite: a child role if this process is one, a command, or the coordinator of a run.
/// The coordinator never calls the library under test (nor loads it): every call runs in a child
/// (the probe, workers), and the coordinator reads their answers. Only CONFORMANCE_WORKERS=0 makes
/// it a worker too.
pub fn main() -> ExitCode {
    if let Ok(role) = std::env::var(CHILD_VAR) {
        return roles::child(&role);
    }
    let argv: Vec<String> = std::env::args().collect();
    if let Some(code) = command(&argv) {
        return code;
    }
    let (reruns, argv) = match rerun::from_args(argv) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let mut args = Arguments::from_iter(argv);
    let s = match settings() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let start = *RUN_START.get_or_init(Instant::now);
    if !args.list {
        if let Err(e) = interrupt::watch(s.budget, last_resort) {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    }
    let templates: Vec<Case> = all_cases();
    let parallel = args.test_threads.unwrap_or_else(default_parallel);
    args.test_threads = Some(parallel);
    let workers = !s.in_process && !args.list;

    // Start the workers first: their cuInit and context creation overlap the probe. Lanes start
    // their own workers (some need no context).
    let pre = Arc::new(if workers {
        let chosen: Vec<&Case> = templates
            .iter()
            .filter(|c| !trials::filtered_out(&args, &c.trial_name()))
            .filter(|c| {
                s.chosen
                    .as_ref()
                    .is_none_or(|k| trials::template_chosen(k, &c.trial_name()))
            })
            .collect();
        // Lanes start their own workers later: eleven contexts created here instead of four made
        // the H100's runs start 0.6 s later (the driver creates contexts one at a time).
        let general = chosen.iter().filter(|c| c.lane.is_none()).count();
        // A fail-fast run with a lead needs one worker before its lead is done (`run::stop`).
        let n = crate::run::order::workers_for(general, parallel);
        Prestarted::start(if s.fail_fast && s.lead > 0 { n.min(1) } else { n })
    } else {
        Prestarted::start(0)
    });
    // The lookup child (no cuInit) runs beside the probe: both are on every trial's path.
    let timeout = s.timeout;
    let lookup = std::thread::spawn(move || crate::cases::uninit::lookup_in_child(timeout));
    let mut m = if s.in_process {
        let mut m = probe::probe();
        m.hidden_init = probe::hidden_init_in_child(s.timeout);
        m
    } else {
        probe::probe_in_child(s.timeout)
    };
    let looked_up = lookup
        .join()
        .unwrap_or_else(|_| Err("the lookup thread panicked".into()));
    if m.probe_error.is_none() && m.load_error.is_none() {
        m.lookup_init = Some(looked_up);
    }
    // Which devices the cases spread over: a request this machine cannot meet is an error before
    // any trial runs.
    match select(&s.devices, &m, s.required.contains(&Cap::Peer)) {
        Ok(sel) => m.selection = sel,
        Err(e) => {
            eprintln!("conformance: {e}");
            pre.discard();
            return ExitCode::from(2);
        }
    }
    if !args.list {
        println!("conformance: machine\n{}", m.summary());
        if let Some(b) = crate::harness::precondition::broken(&m) {
            eprintln!("conformance: {}", b.text());
        }
    }
    let mut cases: Vec<Arc<Case>> = templates
        .iter()
        .flat_map(|c| c.spread(&m.selection))
        .map(Arc::new)
        .collect();
    // Every entry of an expectation file must name a trial of this run; its selectors match this
    // machine.
    crate::harness::expect::bind(&m);
    if let Ok(Some(known)) = crate::harness::expect::load() {
        let mut names: Vec<String> = cases.iter().map(|c| c.trial_name()).collect();
        names.push(NO_LEAKS.to_string());
        names.extend(trials::FROM_PROBE.iter().map(|n| n.to_string()));
        if let Err(e) = known.check_trials(&names) {
            eprintln!("conformance: {e}");
            pre.discard();
            return ExitCode::from(2);
        }
    }
    // CONFORMANCE_TRIALS_FILE: the others are not part of this run (a name this run lacks, a device
    // the probe did not find say, is told and skipped).
    let unknown = trials::keep_chosen(&mut cases, s.chosen.as_ref());
    if !unknown.is_empty() && !args.list {
        eprintln!(
            "conformance: {} names {} trial(s) this run does not have, skipped: {}",
            trials::TRIALS_FILE_VAR,
            unknown.len(),
            unknown.join(", ")
        );
    }
    trials::keep_partition(&mut cases, s.partition);
    let coordinator = Coordinator::baseline();
    let env = Arc::new(if s.in_process {
        Env::on(Arc::new(m.clone()), 0)
    } else {
        Env {
            m: Arc::new(m.clone()),
            dev: 0,
            peer: None,
            multi: vec![],
            ctx: 0,
        }
    });
    let runner = Arc::new(OnceLock::new());
    let plan = trials::plan(&m, &cases, &s.required, &args, runner.clone());
    let stop = Arc::new(
        Stop::new(s.fail_fast)
            .with_lead(s.lead)
            .under_budget(s.budget.is_some()),
    );
    let _ = REPORTING.set(Reporting {
        env: env.clone(),
        jobs: plan.jobs.clone(),
        start,
        parallel,
        verbose: s.verbose,
        partition: s.partition,
    });
    let scheduler = workers.then(|| {
        Arc::new(Scheduler::start(
            env.clone(),
            plan.jobs.clone(),
            parallel,
            s.timeout,
            pre.clone(),
            stop.clone(),
            s.chosen.as_ref().unwrap_or(&trials::Chosen::new()),
        ))
    });
    let _ = runner.set(match &scheduler {
        Some(s) => Runner::Workers(s.clone()),
        None => Runner::InProcess {
            env: env.clone(),
            timeout: s.timeout,
            stop: stop.clone(),
        },
    });
    let leak_check = match &scheduler {
        Some(s) => LeakCheck::Workers(s.clone(), coordinator),
        // In this process (CONFORMANCE_WORKERS=0): this process is the one worker.
        None if std::env::var_os("NEXTEST").is_none() && !args.list => {
            LeakCheck::InProcess(Mutex::new(WorkerState::start(&env)), env.clone(), plan.jobs.len())
        }
        None => LeakCheck::PerTrialProcesses,
    };
    let mut all = plan.trials;
    all.push(trials::no_leaks(leak_check));
    let conclusion = libtest_mimic::run(&args, all);
    if let Some(s) = &scheduler {
        s.finish();
    }
    pre.discard();
    if args.list {
        return conclusion.exit_code();
    }
    // Reruns only for a run that was not cut short (a cut run owes its report at once).
    let flaky = match (reruns, interrupt::cut()) {
        (0, _) | (_, Some(_)) => 0,
        (n, None) => rerun::failures(&cases, &trials::records(), n, s.timeout),
    };
    report();
    if let Some(cut) = interrupt::cut() {
        return ExitCode::from(cut.exit_code());
    }
    // Failures that all passed on a rerun: the run passes, and says so (the FAILED lines above are
    // their first runs; the report lists them as flaky).
    if flaky > 0 && conclusion.has_failed() && !trials::records().iter().any(|r| r.outcome == Outcome::Failed) {
        println!("conformance: {flaky} failed trial(s) passed on a rerun: flaky, not failing (see the report)");
        return ExitCode::SUCCESS;
    }
    conclusion.exit_code()
}

/// What the report needs, once the trials are planned (the last resort of a cut run reads it too).
struct Reporting {
    env: Arc<Env>,
    /// The cases that run: those without a record when the run is cut are recorded interrupted.
    jobs: Vec<Arc<Case>>,
    start: Instant,
    parallel: usize,
    verbose: bool,
    /// CONFORMANCE_PARTITION: the shard this run was (report.json `partition`).
    partition: Option<trials::Partition>,
}
static REPORTING: OnceLock<Reporting> = OnceLock::new();
/// Whether the report was written (once: by `main`, or by `last_resort`).
static REPORTED: Mutex<bool> = Mutex::new(false);

/// Write the report once, from what `REPORTING` holds (nothing before the trials are planned).
fn report() {
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
fn last_resort(cut: Cut) {
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
    if let Ok(path) = std::env::var(junit::JUNIT_VAR) {
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
