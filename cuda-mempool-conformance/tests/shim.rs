//! The suite against libraries that misbehave like real interposers: shim/ (the mutation library's faults), loaded with
//! LD_PRELOAD, breaks one API per fault (wrong codes, garbage output, a crash through a NULL
//! out-pointer, a value that is no CUresult, a hang, an abort). For each fault this test runs the
//! whole suite under it, in a child, and checks that
//! - the run completes (a normal exit, a report written),
//! - the report marks exactly the sabotaged API as not passing, among those this machine can
//!   observe it on (computed from the report's probe: some faults only show on a device),
//! - the wall time stays under the faithful run's (the same library, no fault) plus one trial
//!   deadline for the hang and one more for each hung exclusive trial (it holds the device alone
//!   while it hangs), plus 10 s.
//!
//! The library is shim/ as build.rs compiled it; CONFORMANCE_SHIM_SO=path (and
//! CONFORMANCE_SHIM_SO_PROC_ONLY) use a copy, e.g. on a GPU machine without the build tree.
//! CONFORMANCE_SHIM_KEEP=DIR keeps every faulted run's report under DIR.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod common;
use common::report::{self, Trials};
use conformance_model::{Outcome, Report};
#[path = "common/shimlib.rs"]
mod shimlib;
/// The trial deadline the faulted runs get (a hang costs at most about this much).
const DEADLINE: Duration = Duration::from_secs(10);

/// (fault, the API it sabotages, it only shows on a device).
const FAULTS: &[(&str, u32, bool)] = &[
    ("wrong-codes-824", 824, false),
    ("garbage-827", 827, true),
    ("noop-833", 833, false),
    ("null-out-820", 820, true),
    ("bad-result-822", 822, false),
    ("hang-833", 833, false),
    ("abort-826", 826, false),
];

use shimlib::Variant;

/// How a faulted run is made: which shim, and how the suite reaches the driver.
#[derive(Clone, Copy)]
struct How {
    variant: Variant,
    /// CONFORMANCE_ENTRY.
    entry: &'static str,
}
const SHIPPED: How = How {
    variant: Variant::EveryPath,
    entry: "proc-address",
};

/// Run the suite under the shim with `faults` (no other suite of this test beside it); its report
/// and wall time.
fn run_suite(faults: &str, how: How) -> Result<(Report, Duration), String> {
    let so = shimlib::path(how.variant)?;
    let tag = format!(
        "{}-{}{}",
        faults.replace(',', "+"),
        how.entry,
        if how.variant == Variant::ProcAddressOnly {
            "-proc-only-shim"
        } else {
            ""
        }
    );
    // CONFORMANCE_SHIM_KEEP=DIR keeps each faulted run's report in DIR/<faults>/.
    let keep = std::env::var_os("CONFORMANCE_SHIM_KEEP").map(PathBuf::from);
    let report = match &keep {
        Some(k) => k.join(&tag),
        None => std::env::temp_dir().join(format!("cump-shim-report-{}-{tag}", std::process::id())),
    };
    let one = common::one_suite_at_a_time();
    let start = Instant::now();
    let out = common::suite()?
        .env("LD_PRELOAD", &so)
        .env("CONFORMANCE_SHIM_FAULTS", faults)
        .env("CONFORMANCE_REPORT_DIR", &report)
        .env("CONFORMANCE_TRIAL_TIMEOUT", DEADLINE.as_secs().to_string())
        .env("CONFORMANCE_ENTRY", how.entry)
        .output()
        .map_err(|e| format!("cannot run the suite: {e}"))?;
    let wall = start.elapsed();
    drop(one);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code().is_none() {
        return Err(format!(
            "the suite under {faults} did not exit normally ({}); its stderr:\n{stderr}",
            out.status
        ));
    }
    let read = report::try_read(&report.join("report.json"))
        .map_err(|e| format!("the suite under {faults} wrote no report ({e}); its stderr:\n{stderr}"));
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&report);
    }
    Ok((read?, wall))
}

/// The wall time of a run under the same library and entry with no fault (measured once per
/// variant and entry, one at a time like the faulted runs).
fn faithful_wall(how: How) -> Result<Duration, String> {
    static WALLS: Mutex<Vec<(Variant, &'static str, Duration)>> = Mutex::new(Vec::new());
    let mut walls = WALLS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(w) = walls.iter().find(|w| w.0 == how.variant && w.1 == how.entry) {
        return Ok(w.2);
    }
    let (_, wall) = run_suite("", how)?;
    walls.push((how.variant, how.entry, wall));
    Ok(wall)
}

/// Exclusive trials that hung in report `j` (no answer within the deadline): each held the device
/// alone for a whole deadline, on top of the one deadline the other hangs overlap in.
fn hung_exclusive(j: &Report) -> u32 {
    let exclusive: std::collections::HashSet<String> = conformance::cases::all()
        .iter()
        .filter(|c| c.memory_need().heavy())
        .map(|c| c.trial_name())
        .collect();
    let n = (j.trials().iter())
        .filter(|t| t.message.starts_with("no answer after"))
        .filter(|t| exclusive.contains(conformance::harness::case::without_device_suffix(&t.trial)))
        .count();
    n as u32
}

/// Whether the report's probe found a device with memory pools.
fn has_gpu(j: &Report) -> bool {
    j.machine.cu_init == 0 && j.machine.devices.first().is_some_and(|d| d.memory_pools)
}

fn check(faults: &str, sabotaged: &[(u32, bool)], how: How) -> Result<(), Failed> {
    let (j, wall) = run_suite(faults, how)?;
    let faults = format!(
        "{faults} ({} shim, CONFORMANCE_ENTRY={})",
        match how.variant {
            Variant::EveryPath => "every-path",
            Variant::ProcAddressOnly => "proc-address-only",
            Variant::NoProcAddress => "no-proc-address",
        },
        how.entry
    );
    let faults = faults.as_str();
    let gpu = has_gpu(&j);
    let mut expected: Vec<u64> = sabotaged
        .iter()
        .filter(|(_, needs_device)| gpu || !needs_device)
        .map(|(api, _)| u64::from(*api))
        .collect();
    expected.sort_unstable();
    expected.dedup();
    let apis = &j.apis;
    if apis.is_empty() {
        return Err("report has no apis".into());
    }
    let failing: Vec<u64> = apis
        .iter()
        .filter(|a| a.test_passed == "✗")
        .filter_map(|a| a.index)
        .collect();
    for a in apis {
        println!(
            "  {:?} {}: {} ({} passed, {} failed)",
            a.index, a.api, a.test_passed, a.passed, a.failed
        );
    }
    let failures: Vec<String> = (j.trials().iter())
        .filter(|t| t.outcome == Outcome::Failed)
        .map(|t| format!("  {} (blame {:?}): {}", t.trial, t.blame, t.message))
        .collect();
    let bound = faithful_wall(how)? + DEADLINE * (1 + hung_exclusive(&j)) + Duration::from_secs(10);
    if failing != expected {
        return Err(format!(
            "under {faults} the report marks {failing:?} as not passing; the shim breaks {expected:?} here ({}). \
             Failures:\n{}",
            if gpu { "GPU" } else { "no GPU" },
            failures.join("\n")
        )
        .into());
    }
    if wall > bound {
        return Err(format!(
            "under {faults} the run took {:.1} s, more than the faithful run's wall plus one deadline per hang that \
             holds the device plus 10 s ({} s)",
            wall.as_secs_f64(),
            bound.as_secs()
        )
        .into());
    }
    println!(
        "shim {faults}: the report marks exactly {expected:?} as not passing ({}), in {:.1} s",
        if gpu { "GPU" } else { "no GPU" },
        wall.as_secs_f64()
    );
    Ok(())
}

/// `suite::library_reached`, judged from the probe alone (resolution and `dladdr`: no GPU needed,
/// no case run): under the shim that defines the 14 APIs but no cuGetProcAddress it fails, naming
/// the proc-address path and the CUDA runtime's applications; under the shim as shipped it passes.
fn check_reached(variant: Variant, reached: bool) -> Result<(), Failed> {
    let so = shimlib::path(variant)?;
    let dir = std::env::temp_dir().join(format!("cump-shim-reached-{}-{reached}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let only_suite = dir.join("trials");
    std::fs::write(&only_suite, "# the suite:: trials only\n").map_err(|e| e.to_string())?;
    let one = common::one_suite_at_a_time();
    let out = common::suite()?
        .env("LD_PRELOAD", &so)
        .env("CONFORMANCE_REPORT_DIR", dir.join("report"))
        .env("CONFORMANCE_TRIALS_FILE", &only_suite)
        .output()
        .map_err(|e| format!("cannot run the suite: {e}"))?;
    drop(one);
    let read = report::try_read(&dir.join("report/report.json"));
    let _ = std::fs::remove_dir_all(&dir);
    let j = read.map_err(|e| {
        format!(
            "the suite wrote no report ({e}); its stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let t = j
        .trial("suite::library_reached")
        .ok_or("the report has no suite::library_reached")?;
    let (outcome, message) = (t.outcome, t.message.as_str());
    let named = message.contains("proc-address") && message.contains("cuGetProcAddress");
    match (reached, outcome) {
        (true, Outcome::Passed) => {}
        (false, Outcome::Failed) if named => {}
        _ => {
            return Err(format!(
                "under {} suite::library_reached {outcome}: {message:?} (expected it to {})",
                so.display(),
                if reached {
                    "pass"
                } else {
                    "fail naming the proc-address path and cuGetProcAddress"
                }
            )
            .into())
        }
    }
    println!(
        "shim: under {} suite::library_reached {outcome}: {message}",
        so.display()
    );
    Ok(())
}

/// A library that lacks cuMemPoolTrimTo: the run completes, 833 is marked, and Supported says why.
fn check_missing() -> Result<(), Failed> {
    check("missing-833", &[(833, false)], SHIPPED)?;
    let (j, _) = run_suite("missing-833", SHIPPED)?;
    let row = j.apis.iter().find(|a| a.index == Some(833)).ok_or("no row for 833")?;
    let supported = row.supported.as_str();
    if !supported.starts_with('✗') || !supported.contains("cuMemPoolTrimTo") {
        return Err(format!("833 Supported reads {supported:?}; expected ✗ naming cuMemPoolTrimTo").into());
    }
    println!("shim missing-833: Supported for 833 reads {supported:?}");
    Ok(())
}

/// The mutation run's record (tests/mutants.rs): under the library each trial's report entry says
/// which of the 14 APIs it reached, children included; without it, none does. Run on the 14
/// before-cuInit trials alone (CONFORMANCE_TRIALS_FILE), which reach every API on any machine
/// through one shared child: each counts what that child reached.
fn check_calls() -> Result<(), Failed> {
    let dir = std::env::temp_dir().join(format!("cump-shim-calls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let wanted: Vec<String> = conformance::driver::APIS
        .iter()
        .map(|(i, name)| format!("{i}_{name}::before_cuInit_not_initialized"))
        .collect();
    let file = dir.join("trials");
    std::fs::write(&file, wanted.join("\n")).map_err(|e| e.to_string())?;
    let report = |shim: bool| -> Result<Report, String> {
        let mut cmd = common::suite()?;
        cmd.env("CONFORMANCE_TRIALS_FILE", &file)
            .env("CONFORMANCE_REPORT_DIR", &dir)
            .env("CONFORMANCE_TRIAL_TIMEOUT", DEADLINE.as_secs().to_string());
        if shim {
            cmd.env("LD_PRELOAD", shimlib::path(Variant::EveryPath)?);
        }
        let out = {
            let _one = common::one_suite_at_a_time();
            cmd.output().map_err(|e| format!("cannot run the suite: {e}"))?
        };
        report::try_read(&dir.join("report.json")).map_err(|e| {
            format!(
                "the suite wrote no report ({e}); its stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    };
    let result = (|| {
        let all: Vec<u64> = conformance::driver::APIS.iter().map(|(i, _)| u64::from(*i)).collect();
        let j = report(true)?;
        let trials = j.trials.as_deref().ok_or("the report has no trials")?;
        let mut names: Vec<&str> = trials.iter().map(|t| t.trial.as_str()).collect();
        names.sort_unstable();
        // The file's trials, and every `suite::` trial (they run in every selection).
        let mut expected: Vec<&str> = wanted.iter().map(String::as_str).collect();
        expected.extend(names.iter().filter(|n| n.starts_with("suite::")));
        expected.sort_unstable();
        let suite_kept = ["suite::no_leaks", "suite::preconditions"]
            .iter()
            .all(|n| names.contains(n));
        if names != expected || !suite_kept {
            return Err(format!(
                "CONFORMANCE_TRIALS_FILE: the run had {names:?}, not {expected:?}"
            ));
        }
        for t in trials.iter().filter(|t| !t.trial.starts_with("suite::")) {
            let calls = t.calls.clone().unwrap_or_default();
            if calls != all {
                return Err(format!(
                    "{}: calls {calls:?} under the library, expected every API (its shared child calls each)",
                    t.trial
                ));
            }
        }
        let j = report(false)?;
        if let Some(t) = j.trials().iter().find(|t| t.calls.is_some()) {
            return Err(format!("{}: calls {:?} recorded without the library", t.trial, t.calls));
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result.map_err(Failed::from)
}

pub fn main() -> ExitCode {
    if let Some(code) = common::run_suite_if_asked() {
        return code;
    }
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = FAULTS
        .iter()
        .map(|&(name, api, device)| {
            Trial::test(format!("shim::{name}"), move || check(name, &[(api, device)], SHIPPED))
        })
        .collect();
    // The three classic faults together (the shim's default).
    trials.push(Trial::test("shim::three_apis_at_once", || {
        check(
            "wrong-codes-824,garbage-827,noop-833",
            &[(824, false), (827, true), (833, false)],
            SHIPPED,
        )
    }));
    trials.push(Trial::test("shim::missing_entry_point_833", check_missing));
    trials.push(Trial::test("shim::calls_recorded_per_trial", check_calls));
    // The shim as shipped hooks every path: each of the suite's ways to the driver sees it.
    for entry in ["dlsym", "link"] {
        trials.push(Trial::test(
            format!("shim::every_path_shim_seen_by_{entry}_mode"),
            move || {
                check(
                    "noop-833",
                    &[(833, false)],
                    How {
                        variant: Variant::EveryPath,
                        entry,
                    },
                )
            },
        ));
    }
    // A shim without cuGetProcAddress is bypassed by the runtime's path; the shipped one is not.
    trials.push(Trial::test("shim::no_proc_address_shim_not_reached", || {
        check_reached(Variant::NoProcAddress, false)
    }));
    trials.push(Trial::test("shim::every_path_shim_reached", || {
        check_reached(Variant::EveryPath, true)
    }));
    // A shim that hooks only cuGetProcAddress: seen by the proc-address mode, not by the others.
    for (entry, seen) in [("proc-address", true), ("dlsym", false), ("link", false)] {
        let name = format!(
            "shim::proc_address_only_shim_{}_by_{entry}_mode",
            if seen { "seen" } else { "not_seen" }
        );
        trials.push(Trial::test(name, move || {
            let sabotaged: &[(u32, bool)] = if seen { &[(833, false)] } else { &[] };
            check(
                "noop-833",
                sabotaged,
                How {
                    variant: Variant::ProcAddressOnly,
                    entry,
                },
            )
        }));
    }
    libtest_mimic::run(&args, trials).exit_code()
}
