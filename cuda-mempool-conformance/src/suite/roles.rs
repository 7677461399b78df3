//! What this binary does in each child role (`harness::child::Role`): one dispatch, the roles'
//! bodies living in the layer they belong to.

use crate::cases;
use crate::harness::child::{Role, CHILD_VAR};
use crate::harness::devices::select;
use crate::harness::execute::{execute, MACHINE_FILE_VAR};
use crate::harness::leaks;
use crate::harness::settings::Settings;
use crate::harness::{probe, Cap, Case, Env, Group, Machine};
use crate::run::worker;
use std::process::ExitCode;
use std::sync::Arc;

/// The suite's cases plus the test-only planted leaks (CONFORMANCE_PLANT_LEAK of `settings`).
pub fn all_cases(settings: &Settings) -> Vec<Case> {
    let mut v = cases::all();
    for p in settings.plant_leaks.value() {
        let needs: &[Cap] = if p == "fd" { &[] } else { &[Cap::Gpu] };
        v.push(Case::of(Group::Suite, format!("planted_leak_{p}"), needs, move |e| {
            leaks::plant(p, e)
        }));
    }
    v
}

/// A child's view of the run: the machine probed again, the devices chosen as the coordinator
/// chose them (same CONFORMANCE_DEVICES, in `settings`), and the cases spread over them.
fn child_machine(settings: &Settings) -> (Machine, Vec<Case>) {
    let m = given_machine(settings).unwrap_or_else(|| {
        let mut m = probe::probe(settings);
        m.selection = Some(select(&settings.devices.value(), &m, false).unwrap_or_default());
        m
    });
    let cases = all_cases(settings)
        .iter()
        .flat_map(|c| c.spread(m.selection()))
        .collect();
    (m, cases)
}

/// The machine the parent gave ([`MACHINE_FILE_VAR`]), the driver initialised as the probe would
/// have: None where none was given or it cannot be read (the child then probes).
fn given_machine(settings: &Settings) -> Option<Machine> {
    let path = crate::os::setting(MACHINE_FILE_VAR)?;
    let text = std::fs::read_to_string(path).ok()?;
    let m = Machine::from_json(&serde_json::from_str(&text).ok()?, settings).ok()?;
    if m.cu_init == 0 {
        // SAFETY: cuInit takes a flags word; 0 is the only defined value.
        let r = unsafe { crate::driver::cu::cuInit(0) };
        if r.0 != 0 {
            return None;
        }
    }
    Some(m)
}

/// Run as the child `name` ([`CHILD_VAR`]) asks, with the settings its entry point read (from the
/// environment its parent gave it).
pub fn child(name: &str, settings: &Arc<Settings>) -> ExitCode {
    let Some(role) = Role::parse(name) else {
        eprintln!("{CHILD_VAR}={name:?}: unknown child role");
        return ExitCode::from(2);
    };
    crate::driver::cu::load(settings.entry.value());
    // The expectation file's `[[verified]]` entries join the settings handed down (its policy).
    let settings = &crate::suite::options::with_expectations(settings);
    let code = match role {
        Role::Noop => 0,
        Role::Probe => probe::child_main(settings),
        Role::HiddenInit => probe::hidden_init_main(),
        Role::Uninit => cases::uninit::child_main(false),
        Role::NoDevice => cases::uninit::child_main(true),
        Role::Worker => worker::main(all_cases(settings), settings.clone()),
        Role::VaSpace => cases::vaspace::child_main(settings),
        Role::Checkpoint => crate::harness::checkpoint::child_main(),
        Role::EdgeRows => cases::edges::rows_child_main(settings),
        Role::IpcImport | Role::IpcRules | Role::IpcScenario | Role::IpcConcurrent | Role::IpcKept => {
            let env = Env::on(
                Arc::new(probe::probe(settings)),
                settings.clone(),
                cases::xproc::importer_device(),
            );
            match role {
                Role::IpcImport => cases::xproc::import_main(&env),
                Role::IpcRules => cases::xproc::rules_main(&env),
                Role::IpcConcurrent => cases::xproc::concurrent_main(&env),
                Role::IpcKept => cases::xproc::kept_main(&env),
                _ => cases::xproc::scenario_main(&env),
            }
        }
        Role::BenchIpc => {
            eprintln!("{CHILD_VAR}={name:?}: only the benchmark binary has this role");
            2
        }
        Role::Case(trial) => {
            let (m, cases) = child_machine(settings);
            match cases.iter().find(|c| c.trial_name() == trial) {
                Some(c) => {
                    println!(
                        "{}",
                        crate::harness::outcome::to_line(&execute(c, &Env::on(Arc::new(m), settings.clone(), 0)))
                    );
                    // The answer is given: end now, without exit handlers (`exit_now` flushes
                    // stdout and stderr first). Nothing here needs them: the parent reads the
                    // answer from stdout, the calls the trial reached went to the calls file as
                    // they were made (shim/calls.c), and what the process holds (its context, device
                    // memory, fds; its children, by their parent-death signal) goes back with it.
                    // The driver's handlers would run on whatever the trial left of the heap: after
                    // a freed handle (`Case::hands_freed_handles`) a crash there would turn an
                    // answered trial into a broken one; and a thread stuck in the driver
                    // (`harness::bounded`) would hold them.
                    crate::harness::bounded::exit_now(0)
                }
                None => {
                    eprintln!("no case named {trial}");
                    2
                }
            }
        }
    };
    ExitCode::from(code as u8)
}
