//! A verdict that travels, tested without a GPU: another driver branch (a fake NVML), an unknown
//! branch, cuInit answering 803 or initialising with every device hidden, a pool-less device (the
//! shim's fake device), a layer that breaks for good after a crash or without one (and a stand-in
//! device whose every call answers NOT_INITIALIZED, which is no break), a slow layer, a library that
//! crashes before cuInit or on any call from the coordinator, a library the suite's entry path
//! bypasses, a library that initialises the driver in its look-up (one cause, not a leak besides),
//! the trials that hand the driver a freed handle in processes of their own, and a library that
//! holds each new process at its first GPU work (with and without a budget). Each scenario runs the
//! whole suite (or the trials it names) in a child and checks its report and exit code.
//!
//! The faults are shim/'s (LD_PRELOAD, built by build.rs) and the fake NVML is
//! shim/fake_nvml/ (CONFORMANCE_FAKE_NVML_SO=path uses a copy). Scenarios that need a machine
//! without a GPU say so when there is one. CONFORMANCE_TRAVEL_KEEP=DIR keeps every report.

use conformance_model::{Answer, BrokenForGood, CauseGroup, Kind, Outcome};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::PathBuf;
use std::process::ExitCode;

#[path = "travel/issue58.rs"]
mod issue58;
#[path = "travel/scenario.rs"]
mod scenario;
use scenario::{fake_nvml, faults, keep_dir, need, no_gpu, run, Run, Trials, Variant};

fn other_branch() -> Result<(), String> {
    let envs = [
        ("CONFORMANCE_NVML", fake_nvml()?.display().to_string()),
        ("CONFORMANCE_FAKE_NVML_VERSION", "570.86.15".to_string()),
    ];
    let r = run("branch-570", None, &envs)?;
    need(
        &r,
        r.report.driver_branch == Some(Some(570)),
        "the fake NVML's branch 570 is not the report's",
    )?;
    let src = r.report.driver_source.as_deref().unwrap_or("");
    need(
        &r,
        src.starts_with("NVML ("),
        &format!("the source is {src:?}, not NVML"),
    )?;
    need(&r, r.code == Some(0), "a plain run on branch 570 does not exit 0")
}

/// The expectation file's `[[verified]]` entries reach every process that judges a departure (each
/// entry point hands them down with its settings, in the departure policy): on branch 570 (the fake
/// NVML), where no declared departure was verified, the departures the run meets are known
/// departures; with `[[verified]] departure = "*"` for 570 each of those trials passes. Needs a
/// GPU: the shim's fake device meets none of the declared departures (its answers are neither).
fn verified_branch_reaches_every_process() -> Result<(), String> {
    if no_gpu() {
        return Err("skip: needs a GPU (the fake device meets no declared departure)".into());
    }
    let mut envs = vec![
        ("CONFORMANCE_NVML", fake_nvml()?.display().to_string()),
        ("CONFORMANCE_FAKE_NVML_VERSION", "570.86.15".to_string()),
    ];
    let plain = run("verified-570-plain", None, &envs)?;
    let known: Vec<String> = (plain.report.trials().iter())
        .filter(|t| t.outcome == Outcome::KnownDeparture)
        .map(|t| t.trial.clone())
        .collect();
    need(
        &plain,
        !known.is_empty(),
        "no known departure on branch 570: the scenario shows nothing",
    )?;
    let dir = keep_dir("verified-570-file");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join("expect.toml");
    let entry = "[[verified]]\ndeparture = \"*\"\nbranch = 570\nreason = \"the travel test\"\n";
    std::fs::write(&file, entry).map_err(|e| format!("{}: {e}", file.display()))?;
    envs.push(("CONFORMANCE_EXPECT", file.display().to_string()));
    let r = run("verified-570", None, &envs)?;
    let not_passed: Vec<String> = (known.iter())
        .filter(|n| r.trial(n).is_none_or(|t| t.outcome != Outcome::Passed))
        .map(|n| format!("{n}: {:?}", r.trial(n).map(|t| t.outcome)))
        .collect();
    need(
        &r,
        not_passed.is_empty() && r.report.totals.known_departures == Some(0),
        &format!(
            "verified on 570, these {} of the {} known departures did not pass: {}",
            not_passed.len(),
            known.len(),
            not_passed.join("; ")
        ),
    )?;
    need(&r, r.code == Some(0), "a run on a verified branch does not exit 0")
}

fn unknown_branch() -> Result<(), String> {
    // A libcuda whose file name has no version (a copy), and no NVML.
    // The libcuda a plain run maps, wherever the driver installed it.
    let plain = run("unknown-branch-plain", None, &[])?;
    let real = PathBuf::from(plain.report.machine.libcuda.as_deref().unwrap_or(""));
    if !real.is_file() {
        return Err(format!(
            "no libcuda to copy (a plain run mapped {real:?}); install the driver (Debian: libcuda1)"
        ));
    }
    let dir = keep_dir("unknown-branch-lib");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let copy = dir.join("libcuda.so.1");
    std::fs::copy(&real, &copy).map_err(|e| format!("cannot copy {}: {e}", real.display()))?;
    let envs = [
        ("CONFORMANCE_NVML", "/nonexistent/libnvidia-ml.so.1".to_string()),
        ("CUDA_MEMPOOL_SYS_LIBCUDA", copy.display().to_string()),
    ];
    let r = run("branch-unknown", None, &envs)?;
    if !no_gpu() {
        // A GPU machine has /proc/driver/nvidia/version: the branch is known from it.
        return need(
            &r,
            r.report.driver_source.as_deref() == Some("/proc/driver/nvidia/version"),
            "source is not the module's file",
        );
    }
    need(&r, r.report.driver_branch.flatten().is_none(), "a branch was made up")?;
    need(
        &r,
        r.report.driver_source.as_deref() == Some("none"),
        "a source was named",
    )?;
    need(&r, r.code == Some(0), "an unknown branch alone fails the run")
}

fn init_mismatch() -> Result<(), String> {
    let r = run("init-803", Some(Variant::EveryPath), &[faults("init-803")])?;
    let cause = r.precondition().map_or("", |p| p.cause.as_str());
    need(
        &r,
        cause.contains("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)"),
        "803 not named",
    )?;
    need(
        &r,
        cause.contains("does not match the loaded kernel module"),
        "the mismatch not explained",
    )?;
    let fix = r.precondition().map_or("", |p| p.fix.as_str());
    need(
        &r,
        fix.contains("CUDA_MEMPOOL_SYS_LIBCUDA"),
        "the fix does not name the variable",
    )?;
    need(&r, r.report.totals.failed == 1, "not exactly one failure")?;
    need(
        &r,
        r.trial("suite::preconditions")
            .is_some_and(|t| t.outcome == Outcome::Failed),
        "no failing suite::preconditions",
    )?;
    r.no_api_failures()?;
    need(&r, r.code.is_some_and(|c| c != 0), "exit 0")
}

fn init_with_devices_hidden() -> Result<(), String> {
    if !no_gpu() {
        return Err("skip: needs a machine without a GPU (cuInit must find none)".into());
    }
    let r = run("init-anyway", Some(Variant::EveryPath), &[faults("init-anyway")])?;
    need(
        &r,
        r.precondition().is_some_and(|p| p.what.contains("every device hidden")),
        "wrong precondition",
    )?;
    need(&r, r.report.totals.failed == 1, "not exactly one failure")?;
    r.no_api_failures()?;
    let blocked = (r.report.trials().iter())
        .filter(|t| t.kind == Some(Kind::Precondition) && t.outcome == Outcome::Ignored)
        .count();
    need(
        &r,
        blocked == 14,
        &format!("{blocked} trials not run for it, not the 14 no-device ones"),
    )?;
    need(&r, r.code.is_some_and(|c| c != 0), "exit 0")
}

fn pool_less_device() -> Result<(), String> {
    if !no_gpu() {
        return Err("skip: the fake device stands in for a GPU only where there is none".into());
    }
    let r = run("pool-less", Some(Variant::EveryPath), &[faults("fake-device,no-pools")])?;
    for t in [
        "820_cuMemAllocAsync::pool_less_device_not_supported",
        "823_cuMemPoolCreate::pool_less_device_not_supported",
    ] {
        need(
            &r,
            r.trial(t).is_some_and(|x| x.outcome == Outcome::Passed),
            &format!("{t} did not pass"),
        )?;
    }
    let reason = r
        .trial("823_cuMemPoolCreate::device_pool_created_and_destroyed")
        .map(|t| t.message.clone());
    need(
        &r,
        reason
            .as_ref()
            .is_some_and(|m| m.contains("does not support memory pools")),
        &format!("a pool case is not ignored for the missing pool support: {reason:?}"),
    )?;
    need(
        &r,
        r.code == Some(0) && r.report.totals.failed == 0,
        "a pool-less device fails the run",
    )?;
    let strict = run(
        "pool-less-require-gpu",
        Some(Variant::EveryPath),
        &[faults("fake-device,no-pools"), ("CONFORMANCE_REQUIRE", "gpu".into())],
    )?;
    need(
        &strict,
        strict.code.is_some_and(|c| c != 0) && strict.report.totals.failed > 0,
        "CONFORMANCE_REQUIRE=gpu passes",
    )
}

/// `fault` on the fake device where there is no GPU (alone where there is one).
fn on_the_device(fault: &str) -> String {
    if no_gpu() {
        format!("fake-device,{fault}")
    } else {
        fault.to_string()
    }
}

/// A layer that breaks for good (issue 47): the mutation library's 823-broken-after-crash, on the
/// fake device where there is no GPU. The 823 trial that passes a NULL out-pointer crashes its
/// process, and from then on every call of the 14 APIs, in every process of the run, answers
/// DEVICE_UNAVAILABLE (46): the report opens with one line naming the crash and the first trial
/// after it, said once, and the failures stay listed by cause below.
fn broken_for_good() -> Result<(), String> {
    let r = run(
        "broken-for-good",
        Some(Variant::EveryPath),
        &[faults(&on_the_device("823-broken-after-crash"))],
    )?;
    let b = said_once(&r, "broken-for-good")?;
    need(
        &r,
        b.after
            .as_ref()
            .is_some_and(|a| a.trial == "823_cuMemPoolCreate::null_pool_out_invalid_value"),
        &format!("the break is not named after the crash: {b:?}"),
    )
}

/// The same break with no crash (issue 58): the shim's fault broken-without-crash, on the fake
/// device where there is no GPU. From the run's 40th cuMemPoolCreate on every call of the 14 APIs,
/// in every process, answers DEVICE_UNAVAILABLE (46), and no process dies: the report opens with
/// the one line all the same, naming the first trial of the break and no crash.
fn broken_without_crash() -> Result<(), String> {
    let r = run(
        "broken-without-crash",
        Some(Variant::EveryPath),
        &[faults(&on_the_device("broken-without-crash"))],
    )?;
    let b = said_once(&r, "broken-without-crash")?;
    need(&r, b.after.is_none(), &format!("a crash is named: {b:?}"))?;
    let died: Vec<&str> = (r.report.trials().iter())
        .filter(|t| t.outcome == Outcome::Failed && t.cause.as_ref().is_some_and(|c| c.answer == Answer::Signal))
        .map(|t| t.trial.as_str())
        .collect();
    need(
        &r,
        died.is_empty(),
        &format!("trials failed dying by a signal: {died:?}"),
    )
}

/// No break where the only answers are those of a machine without a GPU: the shim's fake device
/// alone, whose calls beyond the device queries reach a driver without one and answer
/// NOT_INITIALIZED from the first trial on (hundreds of failures, one cause), opens nothing.
fn no_gpu_answers_are_no_break() -> Result<(), String> {
    if !no_gpu() {
        return Err("skip: the fake device stands in for a GPU only where there is none".into());
    }
    let r = run("fake-device", Some(Variant::EveryPath), &[faults("fake-device")])?;
    let causes = r.report.causes.as_deref().unwrap_or(&[]);
    let broken: Vec<&CauseGroup> = causes.iter().filter(|c| c.broken.is_some()).collect();
    need(&r, broken.is_empty(), &format!("a break is said: {broken:?}"))?;
    let not_initialized = (causes.iter())
        .filter(|c| c.value == Some(3))
        .map(|c| c.count)
        .sum::<u64>();
    need(
        &r,
        not_initialized >= 100,
        &format!("only {not_initialized} failures answered NOT_INITIALIZED: not the run this scenario is about"),
    )?;
    let md = std::fs::read_to_string(keep_dir("fake-device").join("report.md")).map_err(|e| e.to_string())?;
    need(&r, !md.contains("Broken for good"), "report.md says a break")
}

/// The break a run's report opens with (report.json's first cause, report.md's first line, said
/// once), answering DEVICE_UNAVAILABLE (46) with at least 5 failures after it, its first trial one
/// of them; the failures listed by cause below; a failing exit code. `tag`: the run's folder.
fn said_once(r: &Run, tag: &str) -> Result<BrokenForGood, String> {
    let causes = r.report.causes.as_deref().unwrap_or(&[]);
    let opening = causes.first().cloned().unwrap_or_default();
    need(
        r,
        opening.broken.is_some(),
        &format!("causes do not open with the break: {opening:?}"),
    )?;
    let b = opening.broken.clone().unwrap_or_default();
    need(
        r,
        b.answer == "CUDA_ERROR_DEVICE_UNAVAILABLE (46)" && b.following >= 5,
        &format!("the break's answer or count: {b:?}"),
    )?;
    let first = b.first_trial.as_str();
    need(
        r,
        r.trial(first)
            .is_some_and(|t| t.cause.as_ref().and_then(|c| c.value) == Some(46)),
        &format!("its first trial {first:?} did not answer 46"),
    )?;
    need(
        r,
        causes.iter().filter(|c| c.broken.is_some()).count() == 1
            && causes.iter().skip(1).any(|c| c.value == Some(46) && c.broken.is_none()),
        "the break is not said once, or its failures are not listed by cause below it",
    )?;
    let md = std::fs::read_to_string(keep_dir(tag).join("report.md")).map_err(|e| e.to_string())?;
    let line = format!("**{}.**", opening.text);
    need(
        r,
        md.matches(&line).count() == 1 && md.find(&line) < md.find("| Index |"),
        &format!("report.md does not open with {line}"),
    )?;
    need(r, r.code.is_some_and(|c| c != 0), "a broken library's run exits 0")?;
    Ok(b)
}

/// A library that initialises the driver in its look-up (issue 58): the mutation library's
/// lookup-initialises, on the fake device where there is no GPU (there its look-ups also keep
/// /dev/null open, as a driver keeps the device files it opens as it initialises), over the entry
/// trials, which look the APIs up in their worker. One cause, one line: the fds those look-ups left
/// open are `suite::lookup_does_not_initialise`'s (its message lists them), not `suite::no_leaks`'s.
fn lookup_initialising_said_once() -> Result<(), String> {
    const LOOKUP: &str = "suite::lookup_does_not_initialise";
    let dir = keep_dir("lookup-initialises-list");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let list = dir.join("trials.txt");
    let names = [
        "820_cuMemAllocAsync::entry::lookup_before_its_version_hands_out_nothing",
        "821_cuMemAllocFromPoolAsync::entry::per_thread_lookup_is_the_ptsz_symbol",
    ];
    std::fs::write(&list, names.join("\n") + "\n").map_err(|e| e.to_string())?;
    let envs = [
        ("CONFORMANCE_TRIALS_FILE", list.display().to_string()),
        faults(&on_the_device("lookup-initialises")),
    ];
    let r = run("lookup-initialises", Some(Variant::EveryPath), &envs)?;
    let lookup = r.trial(LOOKUP).ok_or(format!("{LOOKUP} is not in the report"))?;
    need(&r, lookup.outcome == Outcome::Failed, &format!("{LOOKUP} did not fail"))?;
    let leaks = r
        .trial("suite::no_leaks")
        .ok_or("suite::no_leaks is not in the report")?;
    let message = leaks.message.as_str();
    need(
        &r,
        !message.contains("still open"),
        &format!("suite::no_leaks counts an fd as a leak: {message}"),
    )?;
    let said = lookup.message.as_str();
    if no_gpu() {
        // The fake device's look-ups left /dev/null open: listed under the look-up's cause.
        need(
            &r,
            said.contains("/dev/null still open (first open after trial 82"),
            &format!("{LOOKUP} does not list what the look-ups left open: {said}"),
        )?;
        need(
            &r,
            leaks.notes.iter().any(|n| n.contains(LOOKUP)),
            &format!("suite::no_leaks does not say where they went: {:?}", leaks.notes),
        )?;
    }
    // One line of the causes names it.
    let listed: Vec<String> = (r.report.causes.iter().flatten())
        .filter(|c| c.trials.iter().any(|t| t == LOOKUP))
        .map(|c| format!("{:?}", c.trials))
        .collect();
    need(
        &r,
        listed.len() == 1,
        &format!("{LOOKUP} is not on exactly one line of the causes: {listed:?}"),
    )
}

fn slow_layer() -> Result<(), String> {
    // 0.7 s a call: a before-cuInit child (14 calls) takes ~10 s, past the old fixed 10 s bound and
    // inside a sixth of the raised deadline.
    let envs = [
        faults("slow"),
        ("CONFORMANCE_SHIM_DELAY_MS", "700".into()),
        ("CONFORMANCE_TRIAL_TIMEOUT", "90".into()),
    ];
    let r = run("slow", Some(Variant::EveryPath), &envs)?;
    need(
        &r,
        r.report.totals.failed == 0 && r.code == Some(0),
        "a slow but correct layer fails",
    )?;
    need(
        &r,
        r.report.totals.passed >= 29,
        "fewer trials passed than without the delay",
    )
}

fn crash_before_init() -> Result<(), String> {
    let r = run(
        "crash-before-init",
        Some(Variant::EveryPath),
        &[faults("crash-before-init")],
    )?;
    need(
        &r,
        r.trial("suite::preconditions")
            .is_some_and(|t| t.outcome == Outcome::Passed),
        "the preconditions failed",
    )?;
    // The library's own crashes are the library's: each before-cuInit trial dies, blamed on its API.
    let died = (r.report.trials().iter())
        .filter(|t| t.outcome == Outcome::Failed && t.trial.ends_with("before_cuInit_not_initialized"))
        .count();
    need(&r, died == 14, &format!("{died} before-cuInit trials failed, not 14"))
}

fn crash_in_coordinator() -> Result<(), String> {
    let plain = run("plain", None, &[])?;
    let r = run(
        "crash-in-coordinator",
        Some(Variant::EveryPath),
        &[faults("crash-in-coordinator")],
    )?;
    need(
        &r,
        r.report.totals == plain.report.totals,
        &format!("totals differ from a plain run's {:?}", plain.report.totals),
    )?;
    need(&r, r.code == plain.code, "exit code differs from a plain run's")
}

fn bypassed_library() -> Result<(), String> {
    let r = run(
        "bypassed",
        Some(Variant::ProcAddressOnly),
        &[("CONFORMANCE_ENTRY", "dlsym".to_string())],
    )?;
    let w = r.report.not_reached.clone().flatten().unwrap_or_default();
    need(
        &r,
        w.contains("libmisbehave-proc-only.so"),
        &format!("a bypassed library is not said: {w:?}"),
    )?;
    let reached = run("reached", Some(Variant::ProcAddressOnly), &[])?;
    need(
        &reached,
        reached.report.not_reached.clone().flatten().is_none(),
        "a library reached is said to be bypassed",
    )?;
    let by = reached.report.machine.resolved.iter().flatten();
    need(
        &reached,
        by.clone()
            .any(|(s, f)| s.contains("libmisbehave-proc-only.so") || f.contains("libmisbehave-proc-only.so")),
        "no entry resolved into the library under test",
    )
}

/// A scenario: Ok, a failure, or `skip: why` where this machine cannot show it.
type Scenario = fn() -> Result<(), String>;

pub fn main() -> ExitCode {
    if let Some(code) = scenario::run_suite_if_asked() {
        return code;
    }
    let mut args = Arguments::from_args();
    // On a GPU the scenarios' suites would share it and disturb each other's memory-sensitive
    // trials: one at a time there.
    if !no_gpu() {
        args.test_threads = Some(1);
    }
    let scenarios: &[(&str, Scenario)] = &[
        ("travel::another_branch_from_nvml", other_branch),
        ("travel::unknown_branch_is_said", unknown_branch),
        (
            "travel::verified_branch_reaches_every_process",
            verified_branch_reaches_every_process,
        ),
        ("travel::init_803_said_once", init_mismatch),
        ("travel::init_with_devices_hidden_said_once", init_with_devices_hidden),
        ("travel::pool_less_device", pool_less_device),
        ("travel::broken_for_good_said_once", broken_for_good),
        ("travel::broken_without_crash_said_once", broken_without_crash),
        ("travel::no_gpu_answers_are_no_break", no_gpu_answers_are_no_break),
        ("travel::lookup_initialising_said_once", lookup_initialising_said_once),
        ("travel::slow_layer_passes_with_a_raised_deadline", slow_layer),
        (
            "travel::crash_before_init_costs_trials_not_the_report",
            crash_before_init,
        ),
        ("travel::crash_in_coordinator_changes_nothing", crash_in_coordinator),
        ("travel::bypassed_library_is_said", bypassed_library),
        (
            "travel::freed_handles_run_in_their_own_process",
            issue58::freed_handles_run_alone,
        ),
        (
            "travel::first_call_wait_is_the_librarys_and_planned_with",
            issue58::first_call_wait_is_planned_with,
        ),
        (
            "travel::first_call_wait_under_a_budget_says_why_not",
            issue58::first_call_wait_under_a_budget_says_why_not,
        ),
    ];
    let trials = scenarios
        .iter()
        .map(|&(name, f)| {
            Trial::test(name, move || match f() {
                Err(e) if e.starts_with("skip: ") => {
                    println!("{name}: {e}");
                    Ok(())
                }
                r => r.map_err(Failed::from),
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}
