//! Issue 58's scenarios of the travel test: the trials that hand the driver a freed handle run
//! where nothing they do reaches another trial, and a library that holds each new process at its
//! first GPU work is named and planned with (with and without a run budget).

use super::scenario::{faults, keep_dir, need, no_gpu, run, Run, Trials, Variant};
use conformance_model::{Kind, Outcome, Trial};

/// The trials that hand the driver a freed handle (`Case::hands_freed_handles`, issue 58; the
/// table in `cases::all`'s tests) other than the crash cases.
const HANDS_FREED: &[&str] = &[
    "822_cuMemFreeAsync::double_free",
    "822_cuMemFreeAsync::accounting::pool_usable_after_a_refused_double_free",
    "824_cuMemPoolDestroy::destroy_twice",
];

/// Those that also declare a crash that depends on the heap (R580 reads the destroyed handle's
/// freed memory): each runs in its worker, which ends after it.
const HANDS_FREED_CRASHING: &[&str] = &[
    "820_cuMemAllocAsync::destroyed_stream_crashes_driver",
    "821_cuMemAllocFromPoolAsync::destroyed_pool",
    "824_cuMemPoolDestroy::interposer::no_current_context_succeeds",
];

/// Issue 58: each trial that hands the driver a freed handle runs in a process of its own, and
/// its answer comes back from it. On the fake device where there is no GPU (the real one where
/// there is): each such trial's `timing.children` holds a span of role `case:TRIAL`, and its
/// answer is the child's, not a broken one (the child ends without exit handlers once it has
/// answered); the declared crash cases among them run in their worker (which ends after each), and a
/// neighbour without the builder, so none of them starts a child.
pub(super) fn freed_handles_run_alone() -> Result<(), String> {
    let plain = "821_cuMemAllocFromPoolAsync::null_pool_invalid_value";
    let dir = keep_dir("freed-handles-list");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let list = dir.join("trials.txt");
    let names: Vec<&str> = HANDS_FREED
        .iter()
        .chain(HANDS_FREED_CRASHING)
        .copied()
        .chain([plain])
        .collect();
    std::fs::write(&list, names.join("\n") + "\n").map_err(|e| e.to_string())?;
    let mut envs = vec![("CONFORMANCE_TRIALS_FILE", list.display().to_string())];
    let preload = if no_gpu() {
        envs.push(faults("fake-device"));
        Some(Variant::EveryPath)
    } else {
        None
    };
    let r = run("freed-handles", preload, &envs)?;
    let children = |t: &Trial| -> Vec<String> {
        (t.timing.iter())
            .flat_map(|timing| &timing.children)
            .map(|c| c.role.clone())
            .collect()
    };
    for name in HANDS_FREED {
        let t = r.trial(name).ok_or(format!("{name} is not in the report"))?;
        let roles = children(t);
        need(
            &r,
            roles.contains(&format!("case:{name}")),
            &format!("{name} did not run in a process of its own: its children are {roles:?}"),
        )?;
        need(
            &r,
            t.kind != Some(Kind::Broken),
            &format!("{name}'s own process gave no answer: {:?}", t.message),
        )?;
    }
    for name in HANDS_FREED_CRASHING.iter().copied().chain([plain]) {
        let t = r.trial(name).ok_or(format!("{name} is not in the report"))?;
        let roles = children(t);
        need(
            &r,
            !roles.iter().any(|c| c.starts_with("case:")),
            &format!("{name} ran in a child of its own: {roles:?}"),
        )?;
    }
    Ok(())
}

/// The shim's hold at each new process's first GPU work in the scenarios below, in milliseconds.
const FIRST_WAIT_MS: &str = "3000";

/// The faults and settings of a run under `first-call-wait` (on the fake device where there is no
/// GPU), and of the same run without it: a trial deadline of 10 s without a GPU (the fake device's
/// trials answer at once: a wait of 3 s is then long against it, and the waits derived from it,
/// crash cases' 3.3 s and short children's 1.7 s, are shorter than the wait), the default 60 s on one.
fn first_wait_envs(with_wait: bool) -> (Option<Variant>, Vec<(&'static str, String)>) {
    let mut f: Vec<&str> = Vec::new();
    if no_gpu() {
        f.push("fake-device");
    }
    if with_wait {
        f.push("first-call-wait");
    }
    let mut envs = vec![("CONFORMANCE_SHIM_FIRST_WAIT_MS", FIRST_WAIT_MS.to_string())];
    if no_gpu() {
        envs.push(("CONFORMANCE_TRIAL_TIMEOUT", "10".to_string()));
    }
    if !f.is_empty() {
        envs.push(faults(&f.join(",")));
    }
    (Some(Variant::EveryPath), envs)
}

/// The trials of `r` that hung, or were interrupted (cut short or not run), by name.
fn hung_or_interrupted(r: &Run) -> Vec<String> {
    (r.report.trials().iter())
        .filter(|t| t.kind == Some(Kind::Hung) || t.outcome == Outcome::Interrupted)
        .map(|t| format!("{:?} ({:?}: {:?})", t.trial, t.kind, t.message))
        .collect()
}

/// Issue 58: a library that holds each new process at its first GPU work (the shim's
/// `first-call-wait`, 3 s; a layer that time-slices the GPU between processes). The probe measures
/// the wait (report.json's `machine.first_work`), the report names it as the library's behaviour
/// at its top (report.json's `first_wait`, report.md's first line after the title's), the run plans
/// with it (two general workers at most, every wait with the wait on top), and every trial is judged
/// as without the wait: none hung, none interrupted, the same verdicts (without a GPU, trial by
/// trial; on one, the same totals) and exit code.
pub(super) fn first_call_wait_is_planned_with() -> Result<(), String> {
    let (preload, envs) = first_wait_envs(false);
    let plain = run("first-call-wait-plain", preload, &envs)?;
    let (preload, envs) = first_wait_envs(true);
    let r = run("first-call-wait", preload, &envs)?;
    let fw = &r.report.machine.first_work;
    let measured = fw.as_ref().map_or(0.0, |fw| fw.first_s - fw.again_s);
    need(
        &r,
        measured >= 2.5,
        &format!("the probe did not measure the wait: {fw:?}"),
    )?;
    let plan = &r.report.first_wait;
    need(
        &r,
        plan.as_ref().is_some_and(|p| p.wait_s >= 2.5 && p.workers <= 2),
        &format!("the report has no plan for the wait: {plan:?}"),
    )?;
    need(
        &r,
        plain.report.first_wait.is_none(),
        "a run without the wait plans with one",
    )?;
    let md = std::fs::read_to_string(keep_dir("first-call-wait").join("report.md")).map_err(|e| e.to_string())?;
    let said = "holds each new process about 3.0 s at its first GPU work";
    need(
        &r,
        md.find(said).is_some_and(|i| Some(i) < md.find("| Index |")) && md.contains("its behaviour, not a failure"),
        &format!("report.md does not open with the wait ({said:?})"),
    )?;
    let bad = hung_or_interrupted(&r);
    need(
        &r,
        bad.is_empty(),
        &format!("{} trials hung or were interrupted: {}", bad.len(), bad.join("; ")),
    )?;
    if no_gpu() {
        let verdicts = |run: &Run| -> std::collections::BTreeMap<String, String> {
            (run.report.trials().iter())
                .map(|t| (t.trial.clone(), format!("{} {:?}", t.outcome, t.kind)))
                .collect()
        };
        let (a, b) = (verdicts(&plain), verdicts(&r));
        let differ: Vec<String> = a
            .iter()
            .filter(|(k, v)| b.get(*k) != Some(*v))
            .map(|(k, v)| format!("{k}: {v} without the wait, {:?} with it", b.get(k)))
            .collect();
        need(
            &r,
            differ.is_empty() && a.len() == b.len(),
            &format!("verdicts differ from a run without the wait: {}", differ.join("; ")),
        )?;
    } else {
        need(
            &r,
            r.report.totals == plain.report.totals,
            &format!("totals differ from a run without the wait's {:?}", plain.report.totals),
        )?;
    }
    need(
        &r,
        r.code == plain.code,
        "exit code differs from a run without the wait's",
    )
}

/// Issue 58, under a run budget too short for the waits: no trial starts once the budget leaves
/// less than a trial's deadline (its waits included), and each trial not started says so, naming
/// the wait; none is cut short by the budget, none hangs, and the run exits as one whose budget ran
/// out (124). Without a GPU only (the fake device's trials answer within moments of their waits).
pub(super) fn first_call_wait_under_a_budget_says_why_not() -> Result<(), String> {
    if !no_gpu() {
        return Err("skip: the budget's timing is the fake device's (its trials answer at once)".into());
    }
    let (preload, mut envs) = first_wait_envs(true);
    envs.push(("CONFORMANCE_RUN_BUDGET", "30".to_string()));
    let r = run("first-call-wait-budget", preload, &envs)?;
    let trials = r.report.trials();
    let held: Vec<&Trial> = trials.iter().filter(|t| t.outcome == Outcome::Interrupted).collect();
    let why = "not run: the run budget of 30 s left less than a trial's deadline";
    let other: Vec<String> = held
        .iter()
        .filter(|t| !t.message.starts_with(why))
        .map(|t| format!("{:?}: {:?}", t.trial, t.message))
        .collect();
    need(
        &r,
        other.is_empty(),
        &format!(
            "trials interrupted otherwise than for want of room: {}",
            other.join("; ")
        ),
    )?;
    need(
        &r,
        held.first().is_some_and(|t| {
            t.message
                .contains("the wait the library under test holds each new process")
        }),
        "no trial held back, or its message does not name the wait",
    )?;
    need(
        &r,
        !trials.iter().any(|t| t.kind == Some(Kind::Hung)) && trials.len() > held.len(),
        "a trial hung, or none was judged",
    )?;
    need(
        &r,
        r.report.first_wait.as_ref().and_then(|p| p.budget_s) == Some(30.0),
        "the plan does not name the budget",
    )?;
    need(
        &r,
        r.code == Some(124),
        "the run does not exit as one whose budget ran out",
    )
}
