//! What the suite would catch: the suite, once per mutant of the mutation library (shim/,
//! LD_PRELOAD, `CONFORMANCE_MUTANT=name`), against a baseline run under the same library with no
//! mutant switched on. A mutant is killed when a trial that passed in the baseline fails under it;
//! one that no trial fails SURVIVES, and its trial here fails (unless it is listed in
//! [`EQUIVALENT`](record::EQUIVALENT), with the reason no program can tell it from the real driver). Mutants whose
//! API the machine cannot exercise (no GPU, no second GPU, ...) are ignored with that reason, so
//! on a machine without a GPU (CI) this checks the mutants the no-device trials can judge.
//!
//!   cargo test -p conformance --features selftest --test mutants                 every mutant this machine can judge
//!   cargo test -p conformance --features selftest --test mutants -- mutant::823  a subset, by the usual name filter
//!   cargo xtask mutants                                      the same, writing docs/conformance/mutants.md
//!   CONFORMANCE_MUTANTS_NEEDS=peer ...                       only the mutants that need `peer`
//!   CONFORMANCE_MUTANTS_ONLY=820-a,821-b ...                 only the mutants named
//!
//! CONFORMANCE_MUTANTS_REPORT=DIR writes DIR/mutants.md (each mutant and the trials that killed it,
//! each trial and the mutants it kills, the trials that kill none with the reason they exist) and
//! DIR/mutants.json, rewritten as each verdict comes in. With a GPU the runs go one at a time (each
//! is a whole suite with its own worker processes, and suites side by side on one GPU fail trials by
//! themselves); without one, four at a time. `--test-threads` overrides either. Each run gets a 10 s
//! trial deadline, so a mutant that hangs costs about that. A control run of the faithful library
//! goes last: it must fail nothing that passed in the baseline.
//!
//! **Each run stops at its first kill** (CONFORMANCE_MUTANTS_STOP=first, the default: the suite's
//! CONFORMANCE_FAIL_FAST=1). A verdict needs one kill: a run stops only after a trial that passed
//! in the baseline failed, so it kills exactly the mutants the whole run kills, and a survivor runs
//! every selected trial either way. What it gives up is the matrix: a mutant's killers are those
//! that failed before its run stopped (CONFORMANCE_MUTANTS_STOP=never: all of them, and the trials
//! that kill none). The order only decides how soon a kill comes: the trials that killed the mutant
//! in an earlier run's mutants.json (CONFORMANCE_MUTANTS_HINT; `cargo xtask mutants` and
//! .ci/gpu/mutants.sh name the committed docs/conformance/mutants.json), then its API's own, quickest
//! first, the exclusive ones last. CONFORMANCE_MUTANTS_KEEP=1 keeps each run's report under
//! DIR/runs/.
//!
//! **A run in parts** (CONFORMANCE_MUTANTS_RESUME=FILE[:FILE...], [`resume`]): the earlier parts'
//! verdicts are taken from their mutants.json, only the rest are judged, one report covers the whole.
//!
//! **Only the trials that can see a mutant** (CONFORMANCE_MUTANTS_SELECT=calls, the default; `all`
//! runs the whole suite for every mutant). The baseline's report says, trial by trial, which of the
//! 14 APIs it reached (`"calls"`: the library notes each hook entered, in the worker and in the
//! children it starts; a shared result counts for every trial that reads it). A mutant of API `a`
//! then runs against the trials that passed in the baseline and reached `a`, those with no record
//! (a trial whose worker died, a crash case), and the `harness::` and `suite::` trials
//! (CONFORMANCE_TRIALS_FILE); `suite::no_leaks` and `suite::preconditions` are in every run. A
//! mutant that no trial reaches SURVIVES with that reason. Why it judges as the whole suite would:
//! - a mutant acts only inside the hooks of its API (its `shim_on` sits there), so a trial that
//!   never enters them makes, under the mutant, exactly the calls and gets exactly the answers it
//!   got in the baseline, and passes again: leaving it out loses no kill. Mutants that act in other
//!   hooks (cuMemAlloc, cuMemGetInfo, the look-ups of cuGetProcAddress and dlsym) are listed in
//!   [`BESIDE`](selection::BESIDE) and run against the whole suite; a trial here checks that every mutant the shim
//!   names in a file without a hook of its API is listed.
//! - the hole is state: a mutated hook can leave something behind in its worker (a pool not
//!   destroyed, a current pool not restored, a refused free that 822-refused-free-fails-closed
//!   remembers) that a later trial of the same worker, which never reached the API, trips on. That
//!   later trial is not run here. What is left behind is still seen by `suite::no_leaks` (each
//!   worker's leak check, always run), and the trial that reached the API usually fails itself; a
//!   mutant whose only killer was such a bystander would show as SURVIVED here and killed with
//!   `all`. .ci/gpu/mutants-select.sh runs both and compares them mutant by mutant.
//! - which trials share a worker, and in which order, differs from the whole suite's: the killing
//!   trials of a mutant can differ, its verdict should not.
//!
//! The runner's parts, one file each under tests/mutants/: [`settings`] (the variables above),
//! [`launch`] (the suite as a child under the library), [`library`] (the mutants and what this
//! machine can show), [`suite`] (one run of the suite), [`baseline`], [`selection`] (which trials
//! run against a mutant), [`order`] (the hint file, and the order that finds a kill soonest),
//! [`record`] (what a run under a mutant showed), [`verdict`] (the kill rule), [`resume`],
//! [`report`] (mutants.md and mutants.json) and [`trials`] (what libtest-mimic runs). Here: only
//! `main`; the parts import one another, never this file.

use libtest_mimic::{Arguments, Trial};
use std::time::Instant;

#[path = "mutants/baseline.rs"]
mod baseline;
#[path = "mutants/launch.rs"]
mod launch;
#[path = "mutants/library.rs"]
mod library;
#[path = "mutants/order.rs"]
mod order;
#[path = "mutants/record.rs"]
mod record;
#[path = "mutants/report.rs"]
mod report;
#[path = "mutants/resume.rs"]
mod resume;
#[path = "mutants/saved.rs"]
mod saved;
#[path = "mutants/selection.rs"]
mod selection;
#[path = "mutants/settings.rs"]
mod settings;
#[path = "mutants/suite.rs"]
mod suite;
#[path = "mutants/trials.rs"]
mod trials;
#[path = "mutants/verdict.rs"]
mod verdict;

pub fn main() -> std::process::ExitCode {
    if let Some(code) = launch::run_suite_if_asked() {
        return code;
    }
    let mut args = Arguments::from_args();
    let gpu = library::missing("gpu").is_none();
    if args.test_threads.is_none() {
        args.test_threads = Some(if gpu {
            1
        } else {
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(settings::PARALLEL)
        });
    }
    let start = Instant::now();
    let (mode, stop, earlier) = match (
        settings::select_mode(),
        settings::stop_mode(),
        order::hint(),
        resume::earlier(),
    ) {
        (Ok(m), Ok(s), Ok(_), Ok(e)) => (m, s, e),
        (Err(e), _, _, _) | (_, Err(e), _, _) | (_, _, Err(e), _) | (_, _, _, Err(e)) => {
            eprintln!("mutants: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mutants = match library::list() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("mutants: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    // The baseline first, alone, before any mutant runs (not just to list, nor for the selection's
    // own checks alone).
    let judging = mutants
        .iter()
        .any(|m| !args.is_filtered_out(&Trial::test(format!("mutant::{}", m.name), || Ok(()))));
    if !args.list && judging {
        if let Err(e) = baseline::first(earlier) {
            eprintln!("mutants: {e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    record::VERDICTS
        .lock()
        .unwrap()
        .extend(earlier.verdicts.iter().map(|(n, v)| (n.clone(), Ok(v.clone()))));
    let trials = trials::all(&mutants, earlier, mode, stop);
    let _ = report::RUN.set((start, mutants.clone()));
    let conclusion = libtest_mimic::run(&args, trials);
    if let Some(dir) = settings::report_dir() {
        match report::write_report(&dir, &mutants, start.elapsed().as_secs_f64()) {
            Ok(()) => println!("mutants: wrote {}", dir.join("mutants.md").display()),
            Err(e) => {
                eprintln!("mutants: cannot write the report: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    let _ = std::fs::remove_dir_all(suite::scratch());
    conclusion.exit_code()
}
