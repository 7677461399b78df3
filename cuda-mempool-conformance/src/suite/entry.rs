//! The suite's entry point, `main`: a child role if this process is one, else a command, else the
//! coordinator of a run — settings, workers, probe, trials, `suite::no_leaks`, reruns, the report.

use crate::harness::devices::select;
use crate::harness::leaks::{Coordinator, WorkerState};
use crate::harness::settings::Settings;
use crate::harness::{probe, Cap, Case, Env, Outcome, CHILD_VAR};
use crate::run::interrupt;
use crate::run::scheduler::{Prestarted, Scheduler};
use crate::run::stop::Stop;
use crate::run::{Runner, RUN_START};
use crate::suite::commands::command;
use crate::suite::options::{self, default_parallel};
use crate::suite::reporting::{last_resort, report, Reporting, REPORTING};
use crate::suite::rerun;
use crate::suite::roles::{self, all_cases};
use crate::suite::trials::{self, LeakCheck, NO_LEAKS};
use libtest_mimic::Arguments;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// The suite: a child role if this process is one, a command, or the coordinator of a run.
/// The coordinator never calls the library under test (nor loads it): every call runs in a child
/// (the probe, workers), and the coordinator reads their answers. Only CONFORMANCE_WORKERS=0 makes
/// it a worker too.
pub fn main() -> ExitCode {
    // The settings first, read once here and handed down from here (a child reads its own, from
    // the environment its parent gave it); the driver floor is handed values made from them.
    let settings = Settings::at_entry();
    if let Some(role) = crate::os::setting(CHILD_VAR) {
        return roles::child(&role, &settings);
    }
    let argv: Vec<String> = std::env::args().collect();
    if let Some(code) = command(&argv) {
        return code;
    }
    let (reruns, argv) = match rerun::from_args(argv, &settings) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let mut args = Arguments::from_iter(argv);
    let s = match options::settings(&settings) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    // Checked (the expectation file among them): its `[[verified]]` entries join the settings handed
    // down (the departure policy).
    let settings = options::with_expectations(&settings);
    let start = *RUN_START.get_or_init(Instant::now);
    if !args.list {
        if let Err(e) = interrupt::watch(s.budget, last_resort) {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    }
    let templates: Vec<Case> = all_cases(&settings);
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
        let general = chosen.iter().filter(|c| c.placement.lane().is_none()).count();
        // A fail-fast run with a lead needs one worker before its lead is done (`run::stop`).
        let n = crate::run::order::workers_for(general, parallel);
        // Started before the probe: the deadline without a planned wait, which each learns with the
        // machine (`Machine::planned_settings`).
        Prestarted::start(
            if s.fail_fast && s.lead > 0 { n.min(1) } else { n },
            settings.deadline(),
        )
    } else {
        Prestarted::start(0, settings.deadline())
    });
    // NVML's start for the footprint's sampler (issue 47) overlaps the probe.
    if workers {
        crate::harness::footprint::begin(&settings.nvml);
    }
    // The lookup child (no cuInit) runs beside the probe: both are on every trial's path.
    let before_probe = settings.deadline();
    let lookup = std::thread::spawn(move || crate::cases::uninit::lookup_in_child(before_probe));
    let mut m = if s.in_process {
        let mut m = probe::probe(&settings);
        m.hidden_init = Some(probe::hidden_init_in_child(&settings).map(i64::from));
        m
    } else {
        probe::probe_in_child(&settings)
    };
    let looked_up = lookup
        .join()
        .unwrap_or_else(|_| Err("the lookup thread panicked".into()));
    if m.probe_error.is_none() && m.load_error().is_none() {
        m.lookup_init = Some(Some(looked_up.map(i64::from)));
    }
    // Which devices the cases spread over: a request this machine cannot meet is an error before
    // any trial runs.
    match select(&s.devices, &m, s.required.contains(&Cap::Peer)) {
        Ok(sel) => m.selection = Some(sel),
        Err(e) => {
            eprintln!("conformance: {e}");
            pre.discard();
            return ExitCode::from(2);
        }
    }
    if !args.list {
        println!(
            "conformance: machine\n{}",
            crate::report::machine_text::summary(&m.answer())
        );
        if let Some(b) = crate::harness::precondition::broken(&m) {
            eprintln!("conformance: {}", b.text());
        }
    }
    // Issue 47: a layer that caps the device and counts every process on it counts this run's own
    // processes; where the probe sees a cap the run starts fewer general workers, and says so.
    let cap = m
        .used()
        .into_iter()
        .filter_map(|d| crate::harness::machine::capped(m.devices.get(d as usize)?))
        .next();
    let parallel = match cap {
        Some((reported, physical)) if workers => {
            let fewer = crate::run::order::capped_parallel(parallel);
            if !args.list {
                println!(
                    "conformance: the device reports {} MiB of {} MiB physical (a cap): {fewer} general worker \
                     processes at most instead of {parallel}",
                    reported >> 20,
                    physical >> 20
                );
            }
            fewer
        }
        _ => parallel,
    };
    // Issue 58: where the library holds each new process long at its first GPU work, every wait of
    // the run takes it on top (`driver::deadline`, handed down to every process), and the run starts
    // fewer general workers; it says so, with the processes it expects to start, before the trials.
    let settings = m.planned_settings(&settings);
    let deadline = settings.deadline();
    let wait = deadline.first_wait();
    let before_wait = parallel;
    let parallel = if !wait.is_zero() && workers {
        crate::run::first_wait::workers(parallel)
    } else {
        parallel
    };
    let timeout = deadline.trial();
    let cap_seen = cap.map(|(reported, physical)| conformance_model::CapSeen {
        reported,
        physical,
        workers: parallel as u64,
        default_workers: args.test_threads.unwrap_or(parallel) as u64,
        extra: Default::default(),
    });
    // The suite's own footprint, sampled from NVML on its first device while the run lasts.
    if workers {
        let first = m.used().into_iter().find_map(|d| m.devices.get(d as usize));
        crate::harness::footprint::watch(first.and_then(|d| d.pci_bus_id.as_deref()));
    }
    let mut cases: Vec<Arc<Case>> = templates
        .iter()
        .flat_map(|c| c.spread(m.selection()))
        .map(Arc::new)
        .collect();
    // Every entry of an expectation file must name a trial of this run; its selectors match this
    // machine.
    crate::harness::expect::bind(&m);
    if let Ok(Some(known)) = crate::harness::expect::load(&settings) {
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
            crate::harness::settings::TRIALS_FILE_VAR,
            unknown.len(),
            unknown.join(", ")
        );
    }
    trials::keep_partition(&mut cases, s.partition);
    let coordinator = Coordinator::baseline();
    let env = Arc::new(if s.in_process {
        Env::on(Arc::new(m.clone()), settings.clone(), 0)
    } else {
        Env::without_context(Arc::new(m.clone()), settings.clone())
    });
    let runner = Arc::new(OnceLock::new());
    let plan = trials::plan(&m, &cases, &s.required, &args, runner.clone());
    let first_wait = (!wait.is_zero()).then(|| conformance_model::FirstWait {
        wait_s: wait.as_secs_f64(),
        long_after_s: crate::harness::first_work::long_after(s.timeout).as_secs_f64(),
        workers: if workers { parallel as u64 } else { 0 },
        default_workers: if workers { before_wait as u64 } else { 0 },
        trial_timeout_s: s.timeout.as_secs_f64(),
        deadline_s: timeout.as_secs_f64(),
        processes: crate::run::first_wait::processes(&plan.jobs, if workers { parallel } else { 0 }) as u64,
        budget_s: s.budget.map(|b| b.as_secs_f64()),
        extra: Default::default(),
    });
    if let (Some(w), false) = (&first_wait, args.list) {
        let first = m.first_work.as_ref().map(|f| (f.first_s, f.again_s));
        println!("conformance: {}", crate::report::first_wait::text(w, first));
    }
    let room = s.budget.filter(|_| !wait.is_zero());
    let no_room = room.map_or_else(String::new, |b| {
        crate::run::first_wait::no_room(b, timeout, s.timeout, wait)
    });
    let stop = Arc::new(
        Stop::new(s.fail_fast)
            .with_lead(s.lead)
            .under_budget(s.budget.is_some())
            .with_room(room, timeout, no_room),
    );
    let _ = REPORTING.set(Reporting {
        env: env.clone(),
        jobs: plan.jobs.clone(),
        start,
        parallel,
        verbose: s.verbose,
        partition: s.partition,
        cap: cap_seen,
        first_wait,
    });
    let scheduler = workers.then(|| {
        Arc::new(Scheduler::start(
            env.clone(),
            plan.jobs.clone(),
            parallel,
            pre.clone(),
            stop.clone(),
            s.chosen.as_ref().unwrap_or(&trials::Chosen::new()),
        ))
    });
    let _ = runner.set(match &scheduler {
        Some(s) => Runner::Workers(s.clone()),
        None => Runner::InProcess {
            env: env.clone(),
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
    all.push(trials::no_leaks(
        leak_check,
        crate::harness::precondition::lookup(&m).is_some(),
    ));
    let conclusion = libtest_mimic::run(&args, all);
    if let Some(s) = &scheduler {
        s.finish();
    }
    pre.discard();
    if args.list {
        return conclusion.exit_code();
    }
    // Reruns only for a run that was not cut short (a cut run owes its report at once), nor held
    // trials back for want of room before its budget (issue 58: its budget is spent).
    let flaky = match (reruns, interrupt::cut()) {
        (0, _) | (_, Some(_)) => 0,
        (_, None) if stop.held_back() => 0,
        (n, None) => rerun::failures(&cases, &trials::records(), n, &env),
    };
    report();
    if let Some(cut) = interrupt::cut() {
        return ExitCode::from(cut.exit_code());
    }
    // Trials held back for want of room before the budget (issue 58): a run whose budget ran out.
    if stop.held_back() {
        println!(
            "conformance: trials not started for want of room before the run budget (recorded interrupted); exit code {}",
            interrupt::BUDGET_EXIT
        );
        return ExitCode::from(interrupt::BUDGET_EXIT);
    }
    // Failures that all passed on a rerun: the run passes, and says so (the FAILED lines above are
    // their first runs; the report lists them as flaky).
    if flaky > 0 && conclusion.has_failed() && !trials::records().iter().any(|r| r.outcome == Outcome::Failed) {
        println!("conformance: {flaky} failed trial(s) passed on a rerun: flaky, not failing (see the report)");
        return ExitCode::SUCCESS;
    }
    conclusion.exit_code()
}
