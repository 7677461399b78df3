//! The suite's `main`, shared by `tests/conformance.rs` and any harness that runs the suite under
//! a different libcuda (tests/shim.rs): child roles first, then the coordinator — probe, workers,
//! trials, `suite::no_leaks`, the report.

use crate::harness::{self, Case, Env, Group, Outcome, Record, Runner, CHILD_ENV};
use crate::leaks::{self, WorkerState};
use crate::probe::{self, Cap, Machine};
use crate::scheduler::{Prestarted, Scheduler};
use crate::{cases, report};
use libtest_mimic::{Arguments, Completion, Trial};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The suite's cases plus the test-only planted leaks.
fn all_cases() -> Vec<Case> {
    let mut v = cases::all();
    for p in leaks::plants().unwrap_or_default() {
        let needs: &[Cap] = if p == "fd" { &[] } else { &[Cap::Gpu] };
        v.push(Case::of(Group::Suite, format!("planted_leak_{p}"), needs, move |e| {
            leaks::plant(p, e)
        }));
    }
    v
}

fn in_process_env(m: Machine) -> Env {
    Env::on(Arc::new(m), 0)
}

/// A child's view of the run: the machine probed again, the devices chosen as the coordinator
/// chose them (same CONFORMANCE_DEVICES), and the cases spread over them.
fn child_machine() -> (Machine, Vec<Case>) {
    let mut m = probe::probe();
    let req = crate::devices::request().unwrap_or(crate::devices::Request::Default);
    m.selection = crate::devices::select(&req, &m, false).unwrap_or_default();
    let cases = all_cases().iter().flat_map(|c| c.spread(&m.selection)).collect();
    (m, cases)
}

fn child(role: &str) -> ExitCode {
    let code = match role {
        "noop" => 0,
        "probe" => probe::child_main(),
        "uninit" => cases::uninit::child_main(false),
        "nodevice" => cases::uninit::child_main(true),
        crate::worker::ROLE => crate::worker::main(all_cases()),
        "ipc-import" | "ipc-rules" => {
            let env = Env::on(Arc::new(probe::probe()), cases::xproc::importer_device());
            if role == "ipc-import" {
                cases::xproc::import_main(&env)
            } else {
                cases::xproc::rules_main(&env)
            }
        }
        _ => match role.strip_prefix("case:") {
            Some(trial) => {
                let (m, cases) = child_machine();
                harness::child_case(&in_process_env(m), &cases, trial)
            }
            None => {
                eprintln!("{CHILD_ENV}={role:?}: unknown child role");
                2
            }
        },
    };
    ExitCode::from(code as u8)
}

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
    devices: crate::devices::Request,
    required: Vec<Cap>,
    timeout: Duration,
    in_process: bool,
}
fn settings() -> Result<Settings, String> {
    leaks::plants()?;
    crate::cu::Entry::from_env()?;
    crate::expect::load()?;
    let timeout = harness::trial_timeout()?;
    cases::load::settings(timeout)?;
    Ok(Settings {
        devices: crate::devices::request()?,
        required: harness::required_caps()?,
        timeout,
        in_process: in_process_mode()?,
    })
}

pub const NO_LEAKS: &str = "suite::no_leaks";

pub fn main() -> ExitCode {
    crate::cu::load();
    if let Ok(role) = std::env::var(CHILD_ENV) {
        return child(&role);
    }
    // `--diff OLD.json NEW.json`: compare two reports; no trial runs.
    let argv: Vec<String> = std::env::args().collect();
    if let Some(i) = argv.iter().position(|a| a == "--diff") {
        return crate::diff::main(&argv[i + 1..]);
    }
    // `--expectations-from REPORT.json`: an expectation file accepting that report's failures.
    if let Some(i) = argv.iter().position(|a| a == "--expectations-from") {
        return match argv.get(i + 1).map(|p| crate::expect::from_report(p)) {
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
        };
    }
    let mut args = Arguments::from_args();
    let s = match settings() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let start = *harness::RUN_START.get_or_init(Instant::now);
    let templates: Vec<Case> = all_cases();
    let parallel = args.test_threads.unwrap_or_else(default_parallel);
    args.test_threads = Some(parallel);
    let workers = !s.in_process && !args.list;

    // Start the workers first: their cuInit and context creation overlap the probe.
    let pre = Arc::new(if workers {
        let named: Vec<&Case> = templates
            .iter()
            .filter(|c| !args.is_filtered_out(&Trial::test(c.trial_name(), || Ok(()))))
            .collect();
        // Lanes start their own workers (some need no context).
        Prestarted::start(named.iter().filter(|c| c.lane.is_none()).count().min(parallel))
    } else {
        Prestarted::start(0)
    });
    let mut m = if s.in_process || args.list {
        probe::probe()
    } else {
        probe::probe_in_child(Duration::from_secs(30).min(s.timeout))
    };
    // Which devices the cases spread over: a request this machine cannot meet is an error before
    // any trial runs.
    match crate::devices::select(&s.devices, &m, s.required.contains(&Cap::Peer)) {
        Ok(sel) => m.selection = sel,
        Err(e) => {
            eprintln!("conformance: {e}");
            pre.discard();
            return ExitCode::from(2);
        }
    }
    if !args.list {
        println!("conformance: machine\n{}", m.summary());
    }
    let cases: Vec<Arc<Case>> = templates
        .iter()
        .flat_map(|c| c.spread(&m.selection))
        .map(Arc::new)
        .collect();
    // Every entry of an expectation file must name a trial of this run.
    if let Ok(Some(known)) = crate::expect::load() {
        let mut names: Vec<String> = cases.iter().map(|c| c.trial_name()).collect();
        names.push(NO_LEAKS.to_string());
        if let Err(e) = known.check_trials(&names) {
            eprintln!("conformance: {e}");
            pre.discard();
            return ExitCode::from(2);
        }
    }
    let coordinator = leaks::Coordinator::baseline();
    let env = Arc::new(if s.in_process {
        in_process_env(m.clone())
    } else {
        Env {
            m: Arc::new(m.clone()),
            dev: 0,
            peer: None,
            multi: vec![],
            ctx: 0,
        }
    });
    let jobs: Vec<Arc<Case>> = cases
        .iter()
        .filter(|c| {
            harness::will_run(c, &m, &s.required, &args)
                && c.missing(&m).is_none_or(|(cap, _)| !s.required.contains(&cap))
        })
        .cloned()
        .collect();
    let scheduler = workers.then(|| {
        Arc::new(Scheduler::start(
            env.clone(),
            jobs.clone(),
            parallel,
            s.timeout,
            pre.clone(),
        ))
    });
    // In this process (nextest, CONFORMANCE_WORKERS=0): this process is the one worker.
    let own_state = (s.in_process && std::env::var_os("NEXTEST").is_none() && !args.list)
        .then(|| Mutex::new(WorkerState::start(&env)));
    let runner = Arc::new(match &scheduler {
        Some(s) => Runner::Workers(s.clone()),
        None => Runner::InProcess {
            env: env.clone(),
            timeout: s.timeout,
        },
    });
    let mut trials = harness::trials(&m, cases.clone(), &s.required, &args, runner);
    trials.push(no_leaks_trial(
        scheduler.clone(),
        own_state,
        env.clone(),
        coordinator,
        jobs.len(),
    ));
    let conclusion = libtest_mimic::run(&args, trials);
    if let Some(s) = &scheduler {
        s.finish();
    }
    pre.discard();
    if args.list {
        return conclusion.exit_code();
    }
    let wall = start.elapsed().as_secs_f64();
    let records = harness::RECORDS.lock().unwrap().clone();
    let rows = report::rows(&env.m, &records);
    let date = report::now_utc();
    let md = report::markdown(&env.m, &rows, &records, &date, wall, parallel);
    println!();
    for line in md.lines().filter(|l| l.starts_with('|') || l.starts_with("Total:")) {
        println!("{line}");
    }
    let ignored: Vec<_> = records.iter().filter(|r| r.outcome == Outcome::Ignored).collect();
    if !ignored.is_empty() {
        println!("ignored trials and why:");
        for r in ignored {
            println!("  {}: {}", r.trial, r.message);
        }
    }
    if std::env::var_os("NEXTEST").is_some() {
        // One process per trial under nextest: its JUnit output is the report.
        return conclusion.exit_code();
    }
    let dir = report::report_dir();
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join("report.md"), &md))
        .and_then(|_| {
            let j = report::json(&env.m, &rows, &records, &date, wall, parallel);
            std::fs::write(
                dir.join("report.json"),
                serde_json::to_string_pretty(&j).unwrap() + "\n",
            )
        });
    if let Ok(path) = std::env::var(crate::junit::ENV) {
        match std::fs::write(&path, crate::junit::render(&records, wall)) {
            Ok(()) => println!("conformance: JUnit written to {path}"),
            Err(e) => eprintln!(
                "conformance: cannot write JUnit to {path} ({e}); check {}",
                crate::junit::ENV
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
    conclusion.exit_code()
}

/// `suite::no_leaks`, last: once every other trial is done, each worker's leak check and the
/// coordinator's own. A failing trial like any other, so the exit code, the totals and JUnit agree.
fn no_leaks_trial(
    scheduler: Option<Arc<Scheduler>>,
    own: Option<Mutex<WorkerState>>,
    env: Arc<Env>,
    coordinator: leaks::Coordinator,
    jobs: usize,
) -> Trial {
    Trial::ignorable_test(NO_LEAKS, move || {
        let start = Instant::now();
        let findings = match (&scheduler, &own) {
            (Some(s), _) => {
                let mut l = s.finish();
                l.extend(coordinator.check());
                Some(l)
            }
            (None, Some(state)) => {
                wait_for_others(jobs);
                Some(state.lock().unwrap().end_check(&env))
            }
            (None, None) => None,
        };
        let rec = |outcome, message: String| Record {
            trial: NO_LEAKS.into(),
            group: Group::Suite,
            outcome,
            message,
            blame: None,
            secs: start.elapsed().as_secs_f64(),
            notes: vec![],
            device_answer: false,
            span: (0.0, 0.0),
            dev: None,
            per: harness::Per::Once,
            observations: vec![],
        };
        let r = match findings {
            None => rec(
                Outcome::Ignored,
                "each trial ran in a process of its own (nextest): nothing outlives a trial to leak".into(),
            ),
            Some(l) if l.is_empty() => rec(Outcome::Passed, String::new()),
            Some(l) => rec(Outcome::Failed, format!("the run left behind:\n- {}", l.join("\n- "))),
        };
        let mut r = r;
        if let Ok(Some(known)) = crate::expect::load() {
            known.apply(&mut r);
        }
        let result = match r.outcome {
            Outcome::Failed => Err(r.message.clone().into()),
            Outcome::Ignored => Ok(Completion::ignored_with(r.message.clone())),
            _ => Ok(Completion::Completed),
        };
        if r.outcome == Outcome::Failed {
            eprintln!("FAILED {NO_LEAKS}: {}", r.message);
        }
        harness::RECORDS.lock().unwrap().push(r);
        result
    })
}

/// In-process mode: wait until the other trials have recorded their results.
fn wait_for_others(jobs: usize) {
    let until = Instant::now() + Duration::from_secs(600);
    while Instant::now() < until {
        if harness::COMPLETED.load(std::sync::atomic::Ordering::SeqCst) >= jobs {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
