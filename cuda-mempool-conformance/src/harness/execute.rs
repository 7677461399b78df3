//! Running one case's body in this process, now: capability check, blame, notes and observations
//! reset, panics caught, and the typed answer (failed where a gate's safety limit opened a held
//! stream: `verdict::forced_gates_fail`).

use crate::driver::cu::*;
use crate::driver::deadline::Deadline;
use crate::driver::fail::Fail;
use crate::harness::case::{Case, Env};
use crate::harness::child::{run_child_for, Role};
use crate::harness::outcome::{body_answer, from_line, Answer, Kind, Outcome};
use std::time::Instant;

// Test-only: CONFORMANCE_CRASH_TRIAL=<trial name> makes that trial crash its process on purpose
// (cuMemPoolSetAttribute with a NULL value, then abort), to show that a crash costs one trial.
use crate::harness::settings::CRASH_VAR;

fn crash_in_process(env: &Env) -> ! {
    env.bind();
    eprintln!("{CRASH_VAR}: crashing this process on purpose");
    if let Ok(p) = crate::driver::check::Pool::on_device(env.dev) {
        let a = CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
        let _ = unsafe { cuMemPoolSetAttribute(p.0, a, std::ptr::null_mut()) };
    }
    std::process::abort();
}

/// The device's free and total memory (cuMemGetInfo, unchecked: the harness's, not the trial's), if
/// it answers.
fn device_memory() -> Option<(usize, usize)> {
    let (mut free, mut total) = (0usize, 0usize);
    (unsafe { cuMemGetInfo_v2(&mut free, &mut total) } == crate::driver::check::SUCCESS).then_some((free, total))
}

/// Slack under the level before an exclusive trial that counts as back (contexts and pools of
/// other idle workers move a little).
const SETTLE_SLACK: usize = 512 << 20;
/// A rise of free memory smaller than this is no rise (settle's stability test).
const SETTLE_STEP: usize = 16 << 20;
/// How long free memory must stay flat for settle to stop waiting.
const SETTLE_STABLE: std::time::Duration = std::time::Duration::from_millis(100);

/// After an exclusive trial (it took most of the device's memory, or its children did): wait,
/// within [`Deadline::settle`], until the device's free memory is
/// back to about `before`, so that the next trial does not find the device still full while the
/// driver reclaims what ended processes held (seen on the H100: one OUT_OF_MEMORY in 18 runs).
/// Past the wait the trial's notes say so; its outcome is untouched.
///
/// Answers how long it waited, in seconds (the trial's timeline shows it).
///
/// It ends as soon as the level before is back, or as soon as free memory covers all that the
/// scheduler's turns may give out at once (`placement::budget_capacity`): the next trials then find their
/// memory whatever else is missing. Free memory that stops rising counts as settled too: what is still missing then is not coming
/// back (contexts of workers started during the trial: 504 MiB each on the H100, and every run's
/// first exclusive trial waited out its whole limit for three of them, 1512 MiB).
fn settle(before: usize, deadline: Deadline) -> f64 {
    let start = Instant::now();
    let waited = || start.elapsed().as_secs_f64();
    let limit = deadline.settle();
    let mut last: Option<(usize, Instant)> = None;
    loop {
        let memory = device_memory();
        let now = memory.map(|(free, _)| free);
        // Back to the level before, or everything the scheduler may give out is free again (the
        // measured condition: what is missing then is contexts started meanwhile, not coming back).
        let room = memory.is_some_and(|(f, t)| f as u64 >= crate::harness::placement::budget_capacity(t as u64));
        if room || !matches!(now, Some(f) if f + SETTLE_SLACK < before) {
            return waited();
        }
        let f = now.unwrap_or(0);
        match last {
            Some((g, since)) if f <= g + SETTLE_STEP => {
                if since.elapsed() >= SETTLE_STABLE {
                    return waited();
                }
            }
            _ => last = Some((f, Instant::now())),
        }
        if start.elapsed() >= limit {
            crate::driver::check::note(format!(
                "the device's free memory was {} MiB after {:.1} s, {} MiB before the trial: the next trials may \
                 find it short",
                now.unwrap_or(0) >> 20,
                start.elapsed().as_secs_f64(),
                before >> 20
            ));
            return waited();
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Run a case's body here, now: capability check, blame and notes reset, panics caught.
pub fn execute(case: &Case, env: &Env) -> Answer {
    let mut env = env.for_case(case);
    let name = case.trial_name();
    crate::driver::blame::reset();
    let _ = crate::driver::check::take_notes();
    let _ = crate::driver::check::take_forced_gates();
    let _ = crate::driver::observe::take();
    let _ = crate::driver::departures::take_known();
    crate::driver::departures::set_model(env.m.devices.get(env.dev as usize).map_or("", |d| d.name.as_str()));
    crate::driver::ledger::set_trial(&name);
    let start = Instant::now();
    let answer = |outcome: Outcome, kind, message: String| {
        let (observations, dropped) = crate::driver::observe::take();
        let mut notes = crate::driver::check::take_notes();
        if dropped > 0 {
            notes.push(format!("{dropped} more checked calls not recorded"));
        }
        Answer {
            secs: start.elapsed().as_secs_f64(),
            notes,
            observations,
            ..body_answer(
                outcome,
                kind,
                message,
                crate::driver::blame::get().filter(|b| Some(*b) != case.group.api()),
                crate::driver::blame::cause()
                    .filter(|_| outcome == Outcome::Failed)
                    .as_ref(),
                None,
            )
        }
    };
    if let Some((cap, why)) = case.missing(&env.m) {
        return answer(
            Outcome::Ignored,
            Kind::CannotRun,
            format!("needs `{}`: {why}", cap.name()),
        );
    }
    // A device trial in a process without the device's context (its retain was refused when the
    // worker started): asked again, and if still refused the trial fails saying so, instead of
    // every call it makes answering INVALID_CONTEXT.
    if env.ctx == 0 && case.needs.contains(&crate::harness::Cap::Gpu) && env.m.cu_init == 0 {
        match crate::harness::probe::try_retain_context(env.dev) {
            Ok(c) => env.ctx = c,
            Err(r) => {
                return answer(
                    Outcome::Failed,
                    Kind::Broken,
                    format!(
                        "not run: this worker could not retain device {}'s primary context \
                         (cuDevicePrimaryCtxRetain: {r}); the device may be out of memory or held by \
                         processes that outlived earlier trials (nvidia-smi lists them)",
                        env.dev
                    ),
                );
            }
        }
    }
    let env = &env;
    if env.settings.crash_trial.as_deref() == Some(name.as_str()) {
        crash_in_process(env);
    }
    env.bind();
    // A trial in its own process settles in its parent, once the process has ended and given
    // back what it held (`execute_in_child`).
    let before = if case.placement.need() == crate::harness::placement::Need::Device && !case.placement.own_process() {
        device_memory().map(|(free, _)| free)
    } else {
        None
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (case.body)(env)));
    // A thread left stuck in the driver holds it: no further call (`harness::bounded`).
    let settle_s = if crate::harness::bounded::stuck().is_some() {
        0.0
    } else {
        before.map_or(0.0, |b| settle(b, env.deadline()))
    };
    crate::driver::ledger::set_trial("");
    let known = crate::driver::departures::take_known();
    let (outcome, kind, message) = match result {
        Ok(Ok(())) if known.is_empty() => (Outcome::Passed, Kind::Plain, String::new()),
        Ok(Ok(())) => (Outcome::KnownDeparture, Kind::Departure, known.join("\n")),
        Ok(Err(Fail::Ignore(why))) => (Outcome::Ignored, Kind::CannotRun, why),
        Ok(Err(Fail::Changed(what))) => (Outcome::Changed, Kind::Departure, what),
        Ok(Err(Fail::Departure(what))) => (Outcome::Failed, Kind::Departure, what),
        Ok(Err(Fail::Wrong(what))) => (Outcome::Failed, Kind::Check, what),
        Err(p) => {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            (Outcome::Failed, Kind::Panic, format!("the case panicked: {what}"))
        }
    };
    let (outcome, kind, message) = crate::harness::verdict::forced_gates_fail((outcome, kind, message));
    let mut a = answer(outcome, kind, message);
    a.timing.settle_s = settle_s;
    a
}

/// The variable naming a file that holds the machine a `case:TRIAL` child runs on (the parent's
/// probe, as JSON): the child reads it instead of probing again.
pub const MACHINE_FILE_VAR: &str = "CONFORMANCE_CHILD_MACHINE";

/// Run a case's body in a fresh child of this binary (role `case:TRIAL`; `placement::Process::Own`),
/// within `deadline`'s trial deadline: the child's answer, or a broken one saying how the child
/// ended. A trial that has the device's memory to itself is settled here, once its process has
/// ended (the driver keeps some of what such a process held until it ends: R580 after a refused
/// graph launch).
pub fn execute_in_child(case: &Case, m: &crate::harness::Machine, deadline: Deadline) -> Answer {
    let timeout = deadline.trial();
    let start = Instant::now();
    let broken = |message: String, blame: Option<u32>| Answer {
        secs: start.elapsed().as_secs_f64(),
        ..body_answer(
            Outcome::Failed,
            Kind::Broken,
            message,
            blame.filter(|b| Some(*b) != case.group.api()),
            None,
            None,
        )
    };
    // The machine as this process knows it: the child reads it instead of probing again (a probe
    // costs about 0.25 s, on the critical path of the graph caps trials).
    let file = std::env::temp_dir().join(format!(
        "cump-machine-{}-{}",
        std::process::id(),
        crate::harness::child::starts()
    ));
    let given = {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&file)
            .and_then(|mut f| f.write_all(m.to_json().to_string().as_bytes()))
            .is_ok()
    };
    let path = file.to_string_lossy().into_owned();
    let envs: Vec<(&str, &str)> = if given { vec![(MACHINE_FILE_VAR, &path)] } else { vec![] };
    let before = (case.placement.need() == crate::harness::placement::Need::Device)
        .then(device_memory)
        .flatten()
        .map(|(free, _)| free);
    let out = run_child_for(&Role::Case(case.trial_name()), &envs, deadline, timeout);
    let _ = std::fs::remove_file(&file);
    let settle_s = before.map_or(0.0, |b| settle(b, deadline));
    let out = match out {
        Ok(out) => out,
        Err(e) => return broken(format!("its own process could not be started: {e}"), None),
    };
    let inside = out.inside.as_ref().map(|(api, call)| (*api, call.clone()));
    let mut answer = match (out.timed_out, out.signal(), out.last_json()) {
        (false, None, Some(line)) => {
            from_line(line).unwrap_or_else(|e| broken(format!("its own process answered no result ({e})"), None))
        }
        _ => {
            let tail: Vec<&str> = out.stderr.lines().rev().take(5).collect();
            broken(
                format!(
                    "its own process {}{}; its last lines: {}",
                    out.describe(),
                    inside
                        .as_ref()
                        .map_or(String::new(), |(api, call)| format!(" inside {call} ({api})")),
                    tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
                ),
                inside.map(|(api, _)| api),
            )
        }
    };
    // What settle said (the wait ran out) is this trial's.
    answer.notes.extend(crate::driver::check::take_notes());
    answer.timing.settle_s = settle_s;
    answer
}
