//! What the suite would catch: the suite, once per mutant of the mutation library (shim/,
//! LD_PRELOAD, `CONFORMANCE_MUTANT=name`), against a baseline run under the same library with no
//! mutant switched on. A mutant is killed when a trial that passed in the baseline fails under it;
//! one that no trial fails SURVIVES, and its trial here fails (unless it is listed in
//! [`EQUIVALENT`], with the reason no program can tell it from the real driver). Mutants whose
//! API the machine cannot exercise (no GPU, no second GPU, ...) are ignored with that reason, so
//! on a machine without a GPU (CI) this checks the mutants the no-device trials can judge.
//!
//!   cargo test -p conformance --test mutants                 every mutant this machine can judge
//!   cargo test -p conformance --test mutants -- mutant::823  a subset, by the usual name filter
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
//!   [`BESIDE`] and run against the whole suite; a trial here checks that every mutant the shim
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

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

mod common;
#[path = "mutants/resume.rs"]
mod resume;
#[path = "common/shimlib.rs"]
mod shimlib;

/// The trial deadline of every run (a hanging mutant costs about this much).
const DEADLINE: Duration = Duration::from_secs(10);
/// Default number of suites run at once without a GPU. With a GPU, one at a time: on an H100
/// (R580) eight suites side by side made each run take 90 s instead of 5 and failed most trials
/// of every run (contexts are created one at a time, the 10 s deadline passed), which would have
/// counted every mutant as killed.
const PARALLEL: usize = 4;

/// CONFORMANCE_MUTANTS_SUITE_THREADS=N: each suite runs at most N trials at once (its
/// `--test-threads`), so that several suites side by side (`--test-threads` of this runner) share
/// one GPU with a bounded number of workers each. Unset: the suite's own default.
const SUITE_THREADS_VAR: &str = "CONFORMANCE_MUTANTS_SUITE_THREADS";

fn suite_threads() -> Result<Option<usize>, String> {
    match std::env::var(SUITE_THREADS_VAR) {
        Err(_) => Ok(None),
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!(
                "{SUITE_THREADS_VAR}={v:?}: expected a number of trials at once per suite, at least 1"
            )),
        },
    }
}

/// CONFORMANCE_MUTANTS_SELECT=calls|all: each mutant against the trials that reached its API in the
/// baseline (default), or against the whole suite.
const SELECT_VAR: &str = "CONFORMANCE_MUTANTS_SELECT";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Select {
    Calls,
    All,
}

impl Select {
    /// Its value of CONFORMANCE_MUTANTS_SELECT (and mutants.json's `select`).
    fn name(self) -> &'static str {
        match self {
            Select::Calls => "calls",
            Select::All => "all",
        }
    }
}

fn select_mode() -> Result<Select, String> {
    match std::env::var(SELECT_VAR) {
        Err(_) => Ok(Select::Calls),
        Ok(v) => match v.trim() {
            "calls" => Ok(Select::Calls),
            "all" => Ok(Select::All),
            _ => Err(format!(
                "{SELECT_VAR}={v:?}: expected calls (each mutant against the trials that reached its API in the \
                 baseline, the default) or all (the whole suite for every mutant)"
            )),
        },
    }
}

/// CONFORMANCE_MUTANTS_STOP=first|never: each mutant's run stops at its first kill (the default:
/// the suite's CONFORMANCE_FAIL_FAST), or runs every selected trial (the whole trial-to-mutant matrix).
const STOP_VAR: &str = "CONFORMANCE_MUTANTS_STOP";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stop {
    First,
    Never,
}

impl Stop {
    /// Its value of CONFORMANCE_MUTANTS_STOP (and mutants.json's `stop`).
    fn name(self) -> &'static str {
        match self {
            Stop::First => "first",
            Stop::Never => "never",
        }
    }
}

fn stop_mode() -> Result<Stop, String> {
    match std::env::var(STOP_VAR) {
        Err(_) => Ok(Stop::First),
        Ok(v) => match v.trim() {
            "first" => Ok(Stop::First),
            "never" => Ok(Stop::Never),
            _ => Err(format!(
                "{STOP_VAR}={v:?}: expected first (a mutant's run stops at its first kill, the default) or never \
                 (every selected trial runs: the whole trial-to-mutant matrix)"
            )),
        },
    }
}

/// CONFORMANCE_MUTANTS_HINT=mutants.json: a previous run's report. With STOP=first, the trials that
/// killed a mutant there run first against it (the order changes no verdict, only how soon a kill
/// comes).
const HINT_VAR: &str = "CONFORMANCE_MUTANTS_HINT";

/// Each mutant's killers in the hint file (empty without one).
fn hint() -> Result<&'static BTreeMap<String, Vec<String>>, String> {
    static H: OnceLock<Result<BTreeMap<String, Vec<String>>, String>> = OnceLock::new();
    H.get_or_init(|| {
        let Some(path) = std::env::var_os(HINT_VAR).filter(|p| !p.is_empty()) else {
            return Ok(BTreeMap::new());
        };
        let j = resume::read_report(HINT_VAR, std::path::Path::new(&path))?;
        let mutants = j["mutants"].as_array().ok_or_else(|| {
            format!(
                "{HINT_VAR}={}: no \"mutants\" list; expected the mutants.json a mutation run writes",
                path.to_string_lossy()
            )
        })?;
        Ok(mutants
            .iter()
            .filter_map(|m| {
                let killers = m["killed_by"]
                    .as_array()?
                    .iter()
                    .filter_map(|t| t.as_str().map(String::from));
                Some((m["name"].as_str()?.to_string(), killers.collect()))
            })
            .collect())
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The earlier parts' verdicts (CONFORMANCE_MUTANTS_RESUME), read once.
fn earlier() -> Result<&'static resume::Earlier, String> {
    static E: OnceLock<Result<resume::Earlier, String>> = OnceLock::new();
    E.get_or_init(|| resume::read(select_mode()?.name(), stop_mode()?.name()))
        .as_ref()
        .map_err(Clone::clone)
}

/// The order a fail-fast run takes `chosen` in for a mutant of API `api`: the trials that killed it
/// in the hint's run (`hinted`), then its API's own trials (`820_...`), then the rest; each group by
/// the baseline's time, quickest first. (The suite runs its exclusive trials last whatever this says.)
fn first_kill_order(mut chosen: Vec<String>, api: u32, secs: &BTreeMap<String, f64>, hinted: &[String]) -> Vec<String> {
    let own = format!("{api}_");
    let key = |t: &String| {
        let class = if hinted.contains(t) {
            0
        } else if t.starts_with(&own) {
            1
        } else {
            2
        };
        (class, (secs.get(t).copied().unwrap_or(f64::MAX) * 1e6) as u64)
    };
    chosen.sort_by_key(key);
    chosen
}

/// Mutants that act outside the hooks of their own API, so that a trial can meet them without
/// reaching it: with CONFORMANCE_MUTANTS_SELECT=calls they still run against the whole suite.
/// `selection::beside_names_every_mutant_outside_its_hooks` keeps the list whole.
const BESIDE: &[(&str, &str)] = &[
    (
        "823-destroy-keeps-address-space",
        "named in mutants/vaspace.c; acts in 823's hook through BEGIN (address_space.c)",
    ),
    (
        "829-import-keeps-address-space",
        "named in mutants/vaspace.c; acts in 829's hook through BEGIN (address_space.c)",
    ),
    (
        "822-rlimit-crashes",
        "named in mutants/vaspace.c; acts in 822's, 823's and 829's hook through BEGIN (address_space.c)",
    ),
    (
        "829-concurrent-import-races",
        "named in mutants/vaspace.c; acts in 829's and 830's hook through BEGIN (address_space.c)",
    ),
    (
        "820-cap-bypass",
        "its cap acts in cuMemAlloc, cuMemFree (mutants/caps.c), cuMemGetInfo and cuDeviceTotalMem (cap.c)",
    ),
    (
        "820-cap-misses-graphs",
        "its cap acts in cuMemAlloc, cuMemFree (mutants/caps.c), cuMemGetInfo and cuDeviceTotalMem (cap.c) and \
         the stream-ordered calls (mutants/alloc.c)",
    ),
    (
        "822-cap-counts-reserved",
        "its cap acts in cuMemAlloc, cuMemFree (mutants/caps.c), cuMemGetInfo and cuDeviceTotalMem (cap.c) and \
         the stream-ordered calls (mutants/alloc.c)",
    ),
    (
        "820-no-context-refuses-stream",
        "named in mutants/caps.c; acts in 820's hook through BEGIN (no_context.c)",
    ),
    (
        "821-no-context-refuses-stream",
        "named in mutants/caps.c; acts in 821's hook through BEGIN (no_context.c)",
    ),
    (
        "822-no-context-refuses-stream",
        "named in mutants/caps.c; acts in 822's hook through BEGIN (no_context.c)",
    ),
    (
        "820-cuMemAlloc-from-default-pool",
        "acts in cuMemAlloc (mutants/caps.c)",
    ),
    (
        "823-handle-types-overclaimed",
        "acts in cuDeviceGetAttribute (precondition.c), named in mutants/depth.c",
    ),
    (
        "823-host-pools-underclaimed",
        "acts in cuDeviceGetAttribute (precondition.c), named in mutants/depth.c",
    ),
    (
        "823-host-numa-pools-underclaimed",
        "acts in cuDeviceGetAttribute (precondition.c), named in mutants/depth.c",
    ),
    (
        "823-fabric-underclaimed",
        "acts in cuDeviceGetAttribute (precondition.c), named in mutants/depth.c",
    ),
    (
        "822-cuMemFree-refuses-pool-memory",
        "acts in cuMemFree (mutants/caps.c)",
    ),
    (
        "820-proc-address-ignores-ptds",
        "acts in cuGetProcAddress (misbehave.c): a trial that calls the per-thread variant reaches no hook of 820",
    ),
    (
        "821-ptsz-missing",
        "acts in cuGetProcAddress and dlsym (misbehave.c): the per-thread variant it takes away reaches no hook of 821",
    ),
    (
        "missing-833",
        "acts in cuGetProcAddress and dlsym (misbehave.c), when the worker fills its table",
    ),
    (
        "lookup-ignores-version",
        "acts in cuGetProcAddress (misbehave.c): entry::lookup_before_its_version_hands_out_nothing, every API's",
    ),
    (
        "lookup-initialises",
        "acts in cuGetProcAddress (misbehave.c): seen by suite::lookup_does_not_initialise, no hook of 820",
    ),
    (
        "825-non-ipc-pool-exported",
        "notes pools in cuMemPoolCreate's hook (mutants/pool.c); it changes answers only in 825's",
    ),
    (
        "826-non-ipc-pool-not-supported",
        "notes pools in cuMemPoolCreate's hook (mutants/pool.c); it changes answers only in 826's",
    ),
];

/// Whether a trial is run against a mutant of API `api` (CONFORMANCE_MUTANTS_SELECT=calls): it
/// passed in the baseline (only those can kill), and it may reach `api` or is one of the harness's
/// or the run's own.
fn selects(trial: &str, baseline_outcome: &str, calls: Option<&[u32]>, api: u32) -> bool {
    baseline_outcome == "passed" && (reaches(calls, api) || always(trial))
}

/// Whether a trial with these calls may reach `api`: it did in the baseline, or nobody knows.
fn reaches(calls: Option<&[u32]>, api: u32) -> bool {
    calls.is_none_or(|c| c.contains(&api))
}

/// The trials every selection keeps: the harness's (fault injection) and the run's own.
fn always(trial: &str) -> bool {
    trial.starts_with("suite::") || trial.starts_with("harness::")
}

/// Mutants that no program can tell from the real driver, with the reason. A listed mutant that
/// is killed fails (the reason was wrong: remove it from the list).
const EQUIVALENT: &[(&str, &str)] = &[];

/// Why a trial that kills no mutant exists, by trial-name prefix or suffix (`*` at either end).
const REASONS: &[(&str, &str)] = &[
    (
        "harness::*",
        "tests the harness (a dying or hanging importer fails its trial), not the driver",
    ),
    (
        "*::capture::relaunch_while_allocation_live_refused",
        "cuGraphLaunch's rule for a live graph allocation (refused without AUTO_FREE_ON_LAUNCH): no mutant of \
         the 14 APIs reaches it; the capture trials rely on it",
    ),
    (
        "*::capture::auto_free_on_launch_relaunch_frees_first",
        "cuGraphLaunch's AUTO_FREE_ON_LAUNCH rule: no mutant of the 14 APIs reaches it",
    ),
    (
        "*_driver_behaviour",
        "records what R580 answers where the documentation says otherwise or nothing: a library answering the \
         documented code shows as changed, any other answer fails it",
    ),
    (
        "*::count_zero_null_map_invalid_value",
        "a declared departure (R580 refuses what the documentation accepts): the documented answer shows as \
         changed, any other fails it",
    ),
    (
        "*_crashes_driver",
        "records an input R580 crashes on: the documented refusal shows as changed; a crash anywhere else than \
         where it was declared, or any other answer, fails it",
    ),
    (
        "*::serial::current_pool_is_default_pool_initially",
        "the starting state (cuDeviceGetMemPool, none of the 14 APIs) the 820 pool-selection trials rely on",
    ),
    (
        "suite::preconditions",
        "says once that a precondition of the run is broken (tests/travel.rs breaks them one by one)",
    ),
    (
        "suite::no_leaks",
        "the leak check: fails when a run leaves pools, allocations, fds or children behind",
    ),
];

#[derive(Clone, Debug)]
struct Mutant {
    name: String,
    api: u32,
    needs: String,
    kind: String,
    what: String,
}

/// What one run under a mutant showed.
#[derive(Clone, Debug, Default)]
struct Verdict {
    /// Trials that passed in the baseline and failed here, with their messages.
    killers: Vec<(String, String)>,
    /// Trials whose declared driver departure stopped reproducing (noticed, not failed).
    changed: Vec<String>,
    wall: f64,
    status: String,
    /// How its trials were chosen: `calls`, `all`, or `beside` (the whole suite under `calls`: it
    /// acts outside its API's hooks).
    select: &'static str,
    /// How many trials its run ran (the suite's own included).
    ran: usize,
    /// How many it did not, having stopped at the first kill (CONFORMANCE_MUTANTS_STOP=first).
    stopped: usize,
    /// Why it was not run at all, if it was not (no trial reached its API).
    unreached: Option<String>,
}

fn scratch() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| std::env::temp_dir().join(format!("cump-mutants-{}", std::process::id())))
}

/// The library's own list (`CONFORMANCE_MUTANT=list`: it prints and exits at load), less the
/// machine's faults (API 0, shim/precondition.c): they sabotage no API but what every run finds (a
/// coordinator that crashes, a device that is not there), so no trial can be said to kill them.
fn list() -> Result<Vec<Mutant>, String> {
    let out = common::suite()?
        .env("LD_PRELOAD", shimlib::path(shimlib::Variant::EveryPath)?)
        .env("CONFORMANCE_MUTANT", "list")
        .output()
        .map_err(|e| format!("cannot list the mutants: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "CONFORMANCE_MUTANT=list failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.splitn(5, '\t').collect();
            match f[..] {
                [name, api, needs, kind, what] => Ok(Mutant {
                    name: name.into(),
                    api: api.parse().map_err(|_| format!("bad API in {l:?}"))?,
                    needs: needs.into(),
                    kind: kind.into(),
                    what: what.into(),
                }),
                _ => Err(format!("the library's list has a malformed line: {l:?}")),
            }
        })
        .filter(|m| !matches!(m, Ok(m) if m.api == 0))
        .collect()
}

/// Longest a whole suite may take under a mutant (about 5 s on an H100 without one): past it the
/// run is killed (its workers go with it) and the mutant's verdict is an error.
const SUITE_LIMIT: Duration = Duration::from_secs(300);
/// The load trials' settings for every run, the same in the baseline and under each mutant.
const STRESS: [(&str, &str); 2] = [
    ("CONFORMANCE_STRESS_SECS", "1"),
    ("CONFORMANCE_STRESS_SEED", "20261122"),
];

/// What the baseline's machine has, required of every run: a mutant that hides a capability
/// (the probe's device, say) then fails trials instead of turning them into ignored ones.
fn required() -> String {
    [
        ("gpu", "gpu"),
        ("ipc", "ipc"),
        ("peer", "peer"),
        ("multi", "multi-peer"),
    ]
    .iter()
    .filter(|(needs, _)| missing(needs).is_none())
    .map(|(_, cap)| *cap)
    .collect::<Vec<_>>()
    .join(",")
}

/// The suite under the library, with `mutant` switched on (None: the baseline): the whole suite, or
/// only `trials` (and the `suite::` trials).
/// The suite's CONFORMANCE_FAIL_FAST_LEAD: its first trials that run before any other starts.
const LEAD_VAR: &str = "CONFORMANCE_FAIL_FAST_LEAD";
/// How many of a mutant's known killers lead its run: the quickest one. A kill there ends the run
/// with one worker started (H100, R580, 2026-11-25: 0.24 s a mutant, median of 246, against 1.4 s
/// when the lanes' workers and children started beside the killer; the whole library 200.6 s,
/// was 438.6 s); without one the run goes on as before.
const LEAD: usize = 1;

/// How many of `trials` (in [`first_kill_order`]) lead `mutant`'s run: its hinted killers at the
/// front, at most [`LEAD`].
fn lead(mutant: Option<&str>, trials: Option<&[String]>) -> Result<usize, String> {
    let (Some(m), Some(t)) = (mutant, trials) else {
        return Ok(0);
    };
    let hinted = hint()?.get(m).map_or(&[][..], Vec::as_slice);
    Ok(t.iter().take_while(|x| hinted.contains(x)).take(LEAD).count())
}

fn run(mutant: Option<&str>, trials: Option<&[String]>, fail_fast: bool) -> Result<(Value, f64, String), String> {
    use wait_timeout::ChildExt;
    let tag = mutant.unwrap_or("baseline");
    let dir = scratch().join(tag);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let chosen = dir.join("trials");
    if let Some(t) = trials {
        std::fs::write(&chosen, t.join("\n") + "\n").map_err(|e| format!("{}: {e}", chosen.display()))?;
    }
    let err_path = dir.join("stderr");
    let err = std::fs::File::create(&err_path).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut cmd = common::suite()?;
    cmd.env("LD_PRELOAD", shimlib::path(shimlib::Variant::EveryPath)?)
        .env("CONFORMANCE_REPORT_DIR", &dir)
        .env("CONFORMANCE_TRIAL_TIMEOUT", DEADLINE.as_secs().to_string())
        .env("CONFORMANCE_REQUIRE", required())
        .envs(STRESS)
        .stdout(std::process::Stdio::null())
        .stderr(err);
    if trials.is_some() {
        cmd.env("CONFORMANCE_TRIALS_FILE", &chosen);
    }
    if fail_fast {
        cmd.env("CONFORMANCE_FAIL_FAST", "1");
        cmd.env(LEAD_VAR, lead(mutant, trials)?.to_string());
    } else {
        cmd.env_remove("CONFORMANCE_FAIL_FAST");
        cmd.env_remove(LEAD_VAR);
    }
    match mutant {
        Some(m) => cmd.env("CONFORMANCE_MUTANT", m),
        None => cmd.env_remove("CONFORMANCE_MUTANT"),
    };
    if let Some(n) = suite_threads()? {
        cmd.arg(format!("--test-threads={n}"));
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot run the suite: {e}"))?;
    let status = match child.wait_timeout(SUITE_LIMIT).map_err(|e| e.to_string())? {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "the suite under {tag} ran past {} s and was killed",
                SUITE_LIMIT.as_secs()
            ));
        }
    };
    let wall = start.elapsed().as_secs_f64();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let tail: String = stderr
        .lines()
        .rev()
        .take(15)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n");
    if status.code().is_none() {
        return Err(format!(
            "the suite under {tag} did not exit normally ({status}); the report is the suite's promise whatever \
             the library does. Its stderr ends:\n{tail}"
        ));
    }
    let text = std::fs::read_to_string(dir.join("report.json"))
        .map_err(|e| format!("the suite under {tag} wrote no report ({e}), exit {status}; its stderr ends:\n{tail}"))?;
    keep_or_remove(&dir, tag);
    let j: Value = serde_json::from_str(&text).map_err(|e| format!("report under {tag}: {e}"))?;
    Ok((j, wall, status.to_string()))
}

/// CONFORMANCE_MUTANTS_KEEP=1 keeps each run's report.json, stderr and trial list under
/// REPORT_DIR/runs/<mutant> (to see why and when a trial killed a mutant); otherwise they go.
fn keep_or_remove(dir: &std::path::Path, tag: &str) {
    let keep = std::env::var("CONFORMANCE_MUTANTS_KEEP").is_ok_and(|v| v == "1");
    if let Some(to) = report_dir().filter(|_| keep).map(|r| r.join("runs").join(tag)) {
        let _ = std::fs::remove_dir_all(&to);
        if std::fs::create_dir_all(&to).is_ok() {
            for f in ["report.json", "stderr", "trials"] {
                let _ = std::fs::copy(dir.join(f), to.join(f));
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Each trial's `"calls"` in a report, where it has them.
fn calls(j: &Value) -> BTreeMap<String, Vec<u32>> {
    j["trials"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let apis = t["calls"]
                .as_array()?
                .iter()
                .filter_map(|a| a.as_u64().map(|a| a as u32));
            Some((t["trial"].as_str()?.to_string(), apis.collect()))
        })
        .collect()
}

fn outcomes(j: &Value) -> BTreeMap<String, (String, String)> {
    j["trials"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some((
                t["trial"].as_str()?.to_string(),
                (
                    t["outcome"].as_str().unwrap_or("").to_string(),
                    t["message"].as_str().unwrap_or("").to_string(),
                ),
            ))
        })
        .collect()
}

/// The baseline: the suite under the library with no mutant. A library that forwards everything
/// is the real driver, so its failures are the driver's own: a trial failing here cannot judge a
/// mutant (kills count only trials that passed here) and is listed in mutants.md as such. The
/// baseline's capabilities decide which mutants can be judged.
struct Baseline {
    report: Value,
    outcomes: BTreeMap<String, (String, String)>,
    /// Each trial's APIs reached (`"calls"`), where the report has them.
    calls: BTreeMap<String, Vec<u32>>,
    /// Each trial's time.
    secs: BTreeMap<String, f64>,
    wall: f64,
}

impl Baseline {
    /// The trials that passed (only they can kill).
    fn passed(&self) -> Vec<String> {
        self.outcomes
            .iter()
            .filter(|(_, (o, _))| o == "passed")
            .map(|(t, _)| t.clone())
            .collect()
    }

    /// The trials a mutant of API `api` runs against (CONFORMANCE_MUTANTS_SELECT=calls), and
    /// whether one of them may reach `api` (else the mutant cannot be seen).
    fn selected(&self, api: u32) -> (Vec<String>, bool) {
        let calls = |t: &String| self.calls.get(t).map(Vec::as_slice);
        let chosen: Vec<String> = self
            .outcomes
            .iter()
            .filter(|(t, (o, _))| selects(t, o, calls(t), api))
            .map(|(t, _)| t.clone())
            .collect();
        let reached = chosen.iter().any(|t| reaches(calls(t), api));
        (chosen, reached)
    }
}

fn baseline() -> Result<&'static Baseline, String> {
    static B: OnceLock<Result<Baseline, String>> = OnceLock::new();
    B.get_or_init(|| {
        let (report, wall, status) = run(None, None, false)?;
        let outcomes = outcomes(&report);
        let calls = calls(&report);
        let secs = report["trials"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| Some((t["trial"].as_str()?.to_string(), t["secs"].as_f64()?)))
            .collect();
        let failed: Vec<&String> = outcomes
            .iter()
            .filter(|(_, (o, _))| o == "failed")
            .map(|(t, _)| t)
            .collect();
        if !failed.is_empty() {
            eprintln!(
                "mutants: {} trial(s) fail on this driver with no mutant switched on ({status}); they judge no \
                 mutant: {failed:?}",
                failed.len()
            );
        }
        Ok(Baseline {
            report,
            outcomes,
            calls,
            secs,
            wall,
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// This machine as the suite sees it (the suite's own probe, its default device selection): it
/// decides which mutants can be judged, the same way whether the tests are listed (nextest) or run.
fn machine() -> &'static conformance::harness::Machine {
    static M: OnceLock<conformance::harness::Machine> = OnceLock::new();
    M.get_or_init(|| {
        use conformance::harness::devices::{select, Request};
        let mut m = conformance::harness::probe::probe();
        m.selection = select(&Request::Default, &m, false).unwrap_or_default();
        m
    })
}

/// CONFORMANCE_MUTANTS_NEEDS=peer,ipc: judge only the mutants that need one of these (e.g. the
/// peer mutants on a two-GPU machine, without the hour the rest would take there).
const NEEDS_VAR: &str = "CONFORMANCE_MUTANTS_NEEDS";

/// Why a mutant that needs `needs` is left out by CONFORMANCE_MUTANTS_NEEDS, if it is.
fn not_selected(needs: &str) -> Option<String> {
    let only = std::env::var(NEEDS_VAR).ok()?;
    if only.split(',').any(|n| n.trim() == needs) {
        None
    } else {
        Some(format!("not selected: {NEEDS_VAR}={only}"))
    }
}

/// CONFORMANCE_MUTANTS_ONLY=name,name: judge only these mutants (e.g. the ones a change added),
/// each still against the whole suite.
const ONLY_VAR: &str = "CONFORMANCE_MUTANTS_ONLY";

/// Why mutant `name` is left out by CONFORMANCE_MUTANTS_ONLY, if it is.
fn not_listed(name: &str) -> Option<String> {
    let only = std::env::var(ONLY_VAR).ok()?;
    if only.split(',').any(|n| n.trim() == name) {
        None
    } else {
        Some(format!("not selected: {ONLY_VAR} does not name it"))
    }
}

/// Whether this machine can show mutants that need `needs`; else why not.
fn missing(needs: &str) -> Option<String> {
    use conformance::harness::Cap;
    let cap = match needs {
        "none" => return None,
        "gpu" => Cap::Gpu,
        "ipc" => Cap::Ipc,
        "peer" => Cap::Peer,
        "multi" => Cap::MultiPeer,
        other => return Some(format!("unknown `needs` {other:?} in the library's list")),
    };
    // Every capability beyond `gpu` needs a GPU first.
    let m = machine();
    m.has(Cap::Gpu).and_then(|()| m.has(cap)).err()
}

static VERDICTS: Mutex<BTreeMap<String, Result<Verdict, String>>> = Mutex::new(BTreeMap::new());
/// The run's start and every mutant, so that the report can be rewritten as each verdict comes in
/// (a run stopped early still leaves what it judged).
static RUN: OnceLock<(Instant, Vec<Mutant>)> = OnceLock::new();

fn report_dir() -> Option<PathBuf> {
    std::env::var_os("CONFORMANCE_MUTANTS_REPORT").map(PathBuf::from)
}

fn rewrite_report() -> Result<(), String> {
    static ONE: Mutex<()> = Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|p| p.into_inner());
    match (report_dir(), RUN.get()) {
        (Some(dir), Some((start, mutants))) => write_report(&dir, mutants, start.elapsed().as_secs_f64()),
        _ => Ok(()),
    }
}

/// The trials mutant `m` runs against under `mode` (None: the whole suite, in the suite's order),
/// how they were chosen, and whether one of them may reach its API. Stopping at the first kill,
/// they come in [`first_kill_order`].
fn trials_for(
    m: &Mutant,
    b: &Baseline,
    mode: Select,
    stop: Stop,
) -> Result<(Option<Vec<String>>, &'static str, bool), String> {
    // The whole suite. Stopping at the first kill, as a list, to give it an order and to leave out
    // the trials that did not pass in the baseline: one of them failing again would stop the run
    // before any kill (they kill nothing either way).
    let whole = || (stop == Stop::First).then(|| b.passed());
    let (trials, select, reached) = match mode {
        Select::All => (whole(), "all", true),
        Select::Calls if BESIDE.iter().any(|(n, _)| *n == m.name) => (whole(), "beside", true),
        Select::Calls => {
            let (t, reached) = b.selected(m.api);
            (Some(t), "calls", reached)
        }
    };
    let trials = match (stop, trials) {
        (Stop::First, Some(t)) => {
            let hinted = hint()?.get(&m.name).map_or(&[][..], Vec::as_slice);
            Some(first_kill_order(t, m.api, &b.secs, hinted))
        }
        (_, t) => t,
    };
    Ok((trials, select, reached))
}

fn judge(m: &Mutant, mode: Select, stop: Stop) -> Result<(), Failed> {
    let b = baseline()?;
    let result = (|| {
        let (trials, select, reached) = trials_for(m, b, mode, stop)?;
        if !reached {
            return Ok(Verdict {
                select,
                unreached: Some(format!("no trial that passed in the baseline calls API {}", m.api)),
                ..Verdict::default()
            });
        }
        let (j, wall, status) = run(Some(&m.name), trials.as_deref(), stop == Stop::First)?;
        let records = j["trials"].as_array().map_or(&[][..], Vec::as_slice);
        let stopped = records.iter().filter(|t| t["kind"] == "stopped").count();
        let mut v = Verdict {
            wall,
            status,
            select,
            ran: records.len() - stopped,
            stopped,
            ..Verdict::default()
        };
        for (trial, (outcome, msg)) in outcomes(&j) {
            let before = b.outcomes.get(&trial).map(|(o, _)| o.as_str());
            match outcome.as_str() {
                "failed" if before == Some("passed") => v.killers.push((trial, msg)),
                "changed" if before == Some("passed") => v.changed.push(trial),
                _ => {}
            }
        }
        Ok::<Verdict, String>(v)
    })();
    VERDICTS.lock().unwrap().insert(m.name.clone(), result.clone());
    if let Err(e) = rewrite_report() {
        eprintln!("mutants: cannot write the report: {e}");
    }
    conclude(m, &result?)
}

/// A mutant's trial verdict from what its run showed (here, or in an earlier part): killed or
/// declared equivalent passes, a survivor fails.
fn conclude(m: &Mutant, v: &Verdict) -> Result<(), Failed> {
    let equivalent = EQUIVALENT.iter().find(|(n, _)| *n == m.name);
    match (v.killers.is_empty(), equivalent) {
        (false, None) => {
            println!(
                "mutant {} killed by {} trial(s), first {}",
                m.name,
                v.killers.len(),
                v.killers[0].0
            );
            Ok(())
        }
        (true, Some((_, why))) => {
            println!("mutant {} survives, declared equivalent: {why}", m.name);
            Ok(())
        }
        (false, Some(_)) => Err(format!(
            "mutant {} is declared equivalent but {} killed it: remove it from EQUIVALENT",
            m.name, v.killers[0].0
        )
        .into()),
        (true, None) => Err(format!(
            "mutant {} SURVIVED ({}: {}): {}{}",
            m.name,
            m.api,
            m.what,
            v.unreached
                .clone()
                .unwrap_or_else(|| "no trial that passes on this driver failed under it".into()),
            if v.changed.is_empty() {
                String::new()
            } else {
                format!(" (noticed only as changed departures: {:?})", v.changed)
            }
        )
        .into()),
    }
}

/// The selection's own checks (no run of the suite): the rule, table-driven, and [`BESIDE`] against
/// the library's sources.
fn selection_checks(mutants: &[Mutant]) -> Vec<Trial> {
    let rule = Trial::test("selection::runs_what_passed_and_reached_the_api", || {
        let both: &[u32] = &[820, 822];
        let none: &[u32] = &[];
        /// (trial, baseline outcome, calls, API of the mutant, selected)
        type Row<'a> = (&'a str, &'a str, Option<&'a [u32]>, u32, bool);
        let table: &[Row] = &[
            ("820_cuMemAllocAsync::a", "passed", Some(both), 820, true),
            ("820_cuMemAllocAsync::a", "passed", Some(both), 822, true),
            ("820_cuMemAllocAsync::a", "passed", Some(both), 823, false),
            ("820_cuMemAllocAsync::a", "failed", Some(both), 820, false),
            ("820_cuMemAllocAsync::a", "ignored", None, 820, false),
            ("820_cuMemAllocAsync::a", "changed", Some(both), 820, false),
            ("820_cuMemAllocAsync::a", "passed", Some(none), 820, false),
            ("820_cuMemAllocAsync::a", "passed", None, 833, true),
            ("suite::no_leaks", "passed", None, 824, true),
            ("suite::no_leaks", "passed", Some(none), 824, true),
            ("suite::no_leaks", "failed", None, 824, false),
            ("harness::importer_dies", "passed", Some(none), 829, true),
        ];
        let wrong: Vec<String> = table
            .iter()
            .filter(|(t, o, c, api, want)| selects(t, o, *c, *api) != *want)
            .map(|(t, o, c, api, want)| format!("{t} ({o}, calls {c:?}) for API {api}: want {want}"))
            .collect();
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(wrong.join("\n").into())
        }
    });
    let names: BTreeMap<String, u32> = mutants.iter().map(|m| (m.name.clone(), m.api)).collect();
    let shim = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/shim"));
    let beside = Trial::test("selection::beside_names_every_mutant_outside_its_hooks", move || {
        beside_check(&shim, &names).map_err(Failed::from)
    })
    .with_ignored_flag(!PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/shim/shim.h")).is_file());
    let order = Trial::test(
        "selection::first_kill_order_runs_known_killers_then_the_api_quickest_first",
        || {
            let secs: BTreeMap<String, f64> = [
                ("833_x::slow", 2.0),
                ("833_x::quick", 0.1),
                ("820_y::a", 0.01),
                ("820_y::b", 0.5),
            ]
            .iter()
            .map(|(t, s)| (t.to_string(), *s))
            .collect();
            let chosen: Vec<String> = ["820_y::b", "833_x::slow", "suite::no_leaks", "833_x::quick", "820_y::a"]
                .iter()
                .map(|t| t.to_string())
                .collect();
            let got = first_kill_order(chosen, 833, &secs, &["820_y::b".to_string()]);
            let want = ["820_y::b", "833_x::quick", "833_x::slow", "820_y::a", "suite::no_leaks"];
            if got == want {
                Ok(())
            } else {
                Err(format!("{got:?}, want {want:?}").into())
            }
        },
    );
    let whole = Trial::test(
        "selection::a_whole_suite_run_that_stops_leaves_out_baseline_failures",
        || {
            let outcomes: BTreeMap<String, (String, String)> = [
                ("a::passes", "passed"),
                ("a::fails", "failed"),
                ("a::ignored", "ignored"),
            ]
            .iter()
            .map(|(t, o)| (t.to_string(), (o.to_string(), String::new())))
            .collect();
            let b = Baseline {
                report: Value::Null,
                outcomes,
                calls: BTreeMap::new(),
                secs: BTreeMap::new(),
                wall: 0.0,
            };
            let m = Mutant {
                name: BESIDE[0].0.into(),
                api: 820,
                needs: "none".into(),
                kind: "mutant".into(),
                what: String::new(),
            };
            let mut wrong = Vec::new();
            for mode in [Select::All, Select::Calls] {
                let first = trials_for(&m, &b, mode, Stop::First)?.0;
                if first.as_deref() != Some(&["a::passes".to_string()][..]) {
                    wrong.push(format!("{mode:?}, first: {first:?}"));
                }
                let never = trials_for(&m, &b, mode, Stop::Never)?.0;
                if never.is_some() {
                    wrong.push(format!("{mode:?}, never: {never:?} (want the whole suite, None)"));
                }
            }
            if wrong.is_empty() {
                Ok(())
            } else {
                Err(wrong.join("\n").into())
            }
        },
    );
    vec![rule, beside, order, whole]
}

/// Stopping at the first kill changes no verdict: the first no-device mutant of the library, run
/// both ways (fail-fast and whole), is killed both ways, and the fail-fast run's trials that did
/// not run are recorded `stopped`, naming the failure that stopped them.
fn stop_check(mutants: &[Mutant], mode: Select) -> Trial {
    let m = mutants
        .iter()
        .find(|m| m.needs == "none" && m.kind == "mutant")
        .cloned();
    Trial::test("stop::first_kill_gives_the_verdict_of_a_whole_run", move || {
        let m = m.as_ref().ok_or("the library has no no-device mutant")?;
        let b = baseline()?;
        let mut kills = Vec::new();
        for stop in [Stop::First, Stop::Never] {
            let (trials, _, _) = trials_for(m, b, mode, stop)?;
            let (j, _, _) = run(Some(&m.name), trials.as_deref(), stop == Stop::First)?;
            let records = j["trials"].as_array().map_or(&[][..], Vec::as_slice);
            let killers: Vec<&str> = records
                .iter()
                .filter(|t| t["outcome"] == "failed")
                .filter_map(|t| t["trial"].as_str())
                .filter(|t| b.outcomes.get(*t).is_some_and(|(o, _)| o == "passed"))
                .collect();
            for t in records.iter().filter(|t| t["kind"] == "stopped") {
                let msg = t["message"].as_str().unwrap_or("");
                if stop == Stop::Never || !killers.iter().any(|k| msg.contains(&format!("`{k}` failed first"))) {
                    return Err(format!(
                        "{:?} run under {}: a stopped trial that names no failure of the run: {t}",
                        stop, m.name
                    )
                    .into());
                }
            }
            kills.push(killers.len());
        }
        match kills[..] {
            [first, never] if first > 0 && never > 0 => Ok(()),
            _ => Err(format!(
                "{}: killers stopping at the first kill / running every trial: {kills:?}",
                m.name
            )
            .into()),
        }
    })
}

/// Every mutant a file of the library names (in any string) without a hook of its API in that file
/// (`BEGIN(api, ...)`) must be in [`BESIDE`], and every entry of BESIDE must be a mutant.
fn beside_check(shim: &std::path::Path, names: &BTreeMap<String, u32>) -> Result<(), String> {
    let mut files = Vec::new();
    for dir in [shim.to_path_buf(), shim.join("mutants")] {
        for e in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let p = e.map_err(|e| e.to_string())?.path();
            if p.extension().is_some_and(|x| x == "c") {
                files.push(p);
            }
        }
    }
    let mut missing = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let hooks: BTreeSet<u32> = text
            .split("BEGIN(")
            .skip(1)
            .filter_map(|rest| rest.split(',').next()?.trim().parse().ok())
            .collect();
        // Every other piece between double quotes is a string's contents.
        for quoted in text.split('"').skip(1).step_by(2) {
            if let Some(&api) = names.get(quoted) {
                if api != 0 && !hooks.contains(&api) && !BESIDE.iter().any(|(n, _)| *n == quoted) {
                    missing.push(format!(
                        "{quoted} (API {api}) is named in {}, which has no hook of {api}",
                        f.display()
                    ));
                }
            }
        }
    }
    missing.sort();
    missing.dedup();
    for (n, _) in BESIDE {
        if !names.contains_key(*n) {
            missing.push(format!("BESIDE lists {n}, which the library does not have"));
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "a mutant that acts outside its API's hooks must be in BESIDE (tests/mutants.rs), or \
             CONFORMANCE_MUTANTS_SELECT=calls may leave out the trials that see it:\n{}",
            missing.join("\n")
        ))
    }
}

/// The reason a trial that kills nothing exists, if one is recorded.
/// Patterns match the trial's name without its device suffix (`::dev0`, `::dev0_dev1`).
fn reason(trial: &str) -> Option<&'static str> {
    let trial = conformance::harness::case::without_device_suffix(trial);
    REASONS.iter().find_map(|(pat, why)| {
        let hit = match (pat.strip_suffix('*'), pat.strip_prefix('*')) {
            (Some(prefix), _) => trial.starts_with(prefix),
            (_, Some(suffix)) => trial.ends_with(suffix),
            _ => trial == *pat,
        };
        hit.then_some(*why)
    })
}

/// DIR/mutants.md and DIR/mutants.json.
fn write_report(dir: &PathBuf, mutants: &[Mutant], wall: f64) -> Result<(), String> {
    let b = baseline()?;
    let e = earlier()?;
    let (part_wall, wall, parts) = (wall, wall + e.wall, e.parts + 1);
    let verdicts = VERDICTS.lock().unwrap().clone();
    let mut by_trial: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let (mut killed, mut survived, mut judged) = (0, 0, 0);
    let mut rows = Vec::new();
    let mut jm = Vec::new();
    for m in mutants {
        let (mut status, killers, changed, exit) = match verdicts.get(&m.name) {
            None => match missing(&m.needs).or_else(|| not_selected(&m.needs)) {
                Some(why) => (format!("not run: {why}"), vec![], vec![], String::new()),
                None => (
                    "not judged (filtered out, or the run stopped first)".to_string(),
                    vec![],
                    vec![],
                    String::new(),
                ),
            },
            Some(Err(e)) => (
                format!("ERROR: {}", e.lines().next().unwrap_or("")),
                vec![],
                vec![],
                String::new(),
            ),
            Some(Ok(v)) => {
                judged += 1;
                for (t, _) in &v.killers {
                    by_trial.entry(t.clone()).or_default().insert(m.name.clone());
                }
                let s = if !v.killers.is_empty() {
                    killed += 1;
                    "killed".to_string()
                } else if let Some((_, why)) = EQUIVALENT.iter().find(|(n, _)| *n == m.name) {
                    format!("equivalent: {why}")
                } else {
                    survived += 1;
                    "SURVIVED".to_string()
                };
                (
                    s,
                    v.killers.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>(),
                    v.changed.clone(),
                    v.status.clone(),
                )
            }
        };
        let (wall_m, select, ran, stopped, unreached) = match verdicts.get(&m.name) {
            Some(Ok(v)) => (
                v.wall,
                Some(v.select),
                Some(v.ran),
                Some(v.stopped),
                v.unreached.clone(),
            ),
            _ => (0.0, None, None, None, None),
        };
        if let Some(r) = unreached.as_ref().filter(|_| status == "SURVIVED") {
            status = format!("SURVIVED: {r}");
        }
        jm.push(json!({
            "name": m.name, "api": m.api, "needs": m.needs, "kind": m.kind, "what": m.what,
            "status": status, "exit": exit, "killed_by": killers, "changed": changed, "wall_s": wall_m,
            "select": select, "trials_run": ran, "trials_stopped": stopped,
        }));
        let shown: Vec<String> = killers.iter().take(4).map(|t| format!("`{t}`")).collect();
        let more = if killers.len() > 4 {
            format!(" and {} more", killers.len() - 4)
        } else {
            String::new()
        };
        rows.push(format!(
            "| `{}` | {} | {} | {} | {}{} | {} |",
            m.name,
            m.api,
            m.needs,
            status,
            shown.join(", "),
            more,
            m.what.replace('|', "\\|")
        ));
    }
    let baseline_failed: Vec<&String> = b
        .outcomes
        .iter()
        .filter(|(_, (o, _))| o == "failed")
        .map(|(t, _)| t)
        .collect();
    let machine = &b.report["machine"];
    let device = machine["devices"][0]["name"].as_str().unwrap_or("no GPU");
    let ndev = machine["devices"].as_array().map_or(0, Vec::len);
    let devices = if ndev == 0 {
        "no GPU".to_string()
    } else {
        format!("{ndev} × {device}")
    };
    let driver = b.report["driver"].as_str().unwrap_or("?");
    let date = b.report["date"].as_str().unwrap_or("?");
    let rate = if judged > 0 {
        format!("{:.1} %", 100.0 * f64::from(killed) / f64::from(judged))
    } else {
        "—".into()
    };
    let mode = select_mode().unwrap_or(Select::Calls);
    let stop = stop_mode().unwrap_or(Stop::First);
    let (runs, trial_runs, stopped) = verdicts
        .values()
        .filter_map(|v| v.as_ref().ok())
        .filter(|v| v.unreached.is_none())
        .fold((0, 0, 0), |(n, t, s), v| (n + 1, t + v.ran, s + v.stopped));
    let stops = match stop {
        Stop::First => format!(
            " Each run stopped at its first kill (`{STOP_VAR}=first`, the suite's `CONFORMANCE_FAIL_FAST=1`): \
             {stopped} selected trials were not run, so a mutant's killers below are those that failed before \
             its run stopped, and a trial's kills are a lower bound; `{STOP_VAR}=never` gives the whole matrix."
        ),
        Stop::Never => format!(" Every selected trial ran (`{STOP_VAR}=never`)."),
    };
    let how = match mode {
        Select::All => "Each mutant ran the whole suite".to_string(),
        Select::Calls => format!(
            "Each mutant ran only the trials that reached its API in the baseline (`{SELECT_VAR}=calls`; the \
             whole suite for the {} that act outside their API's hooks): {trial_runs} trials over {runs} runs, \
             where the whole suite has {}",
            BESIDE.len(),
            b.outcomes.len()
        ),
    };
    let mut md = String::new();
    md.push_str("# Mutation run\n\n");
    md.push_str(&format!(
        "Machine: {devices}, driver {driver}, {date} (the baseline report's date). Mutants in the \
         library: {}; judged here: {judged}; killed: {killed}; survived: {survived}; kill rate {rate}. \
         Wall time of the whole run: {wall:.1} s{} (baseline run {:.1} s). {how}. Every run was under \
         `CONFORMANCE_MUTANT=<name>` with a {} s trial deadline; a mutant is killed when a trial that \
         passed in the baseline fails.{stops}\n\n",
        mutants.len(),
        if parts > 1 {
            format!(
                ", in {parts} parts (`{}`: this part {part_wall:.1} s, each earlier part's verdicts taken as they were)",
                resume::RESUME_VAR
            )
        } else {
            String::new()
        },
        b.wall,
        DEADLINE.as_secs()
    ));
    if !baseline_failed.is_empty() {
        md.push_str(&format!(
            "Trials that fail on this driver with no mutant on (they judge no mutant): {}.\n\n",
            baseline_failed
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    md.push_str("## Each mutant and the trials that killed it\n\n");
    md.push_str("| mutant | API | needs | status | killed by | what it breaks |\n|---|---|---|---|---|---|\n");
    for r in &rows {
        md.push_str(r);
        md.push('\n');
    }
    md.push_str("\n## Each trial and the mutants it kills\n\n| trial | kills |\n|---|---|\n");
    let mut none = Vec::new();
    for (trial, (outcome, _)) in &b.outcomes {
        match by_trial.get(trial) {
            Some(ms) => md.push_str(&format!(
                "| `{trial}` | {} |\n",
                ms.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
            )),
            None => none.push((trial.clone(), outcome.clone())),
        }
    }
    if stop == Stop::First {
        md.push_str(&format!(
            "\n## Trials that kill no mutant here\n\nNot known from this run: its runs stopped at their first \
             kill. `{STOP_VAR}=never` lists them, with the reason each exists.\n"
        ));
        none.clear();
    } else {
        md.push_str(
            "\n## Trials that kill no mutant here\n\nIgnored trials could not run on this machine; the others \
             with the reason they exist.\n\n| trial | baseline | why it exists |\n|---|---|---|\n",
        );
    }
    for (trial, outcome) in &none {
        let why = if outcome == "ignored" {
            "ignored on this machine (see the report for the reason)"
        } else {
            reason(trial).unwrap_or("NO REASON RECORDED")
        };
        md.push_str(&format!("| `{trial}` | {outcome} | {why} |\n"));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(dir.join("mutants.md"), md).map_err(|e| e.to_string())?;
    let j = json!({
        "machine": {"devices": ndev, "device": device, "driver": driver, "date": date},
        "wall_s": wall, "parts": parts, "baseline_wall_s": b.wall, "judged": judged, "killed": killed, "survived": survived,
        "select": mode.name(),
        "stop": stop.name(),
        "baseline_failed": baseline_failed,
        "mutants": jm,
        "trials": by_trial,
        "trials_killing_none": (stop == Stop::Never).then(|| none.iter().map(|(t, o)| json!({"trial": t, "baseline": o,
            "reason": if o == "ignored" { None } else { reason(t) }})).collect::<Vec<_>>()),
    });
    std::fs::write(dir.join("mutants.json"), serde_json::to_string_pretty(&j).unwrap()).map_err(|e| e.to_string())
}

pub fn main() -> std::process::ExitCode {
    if let Some(code) = common::run_suite_if_asked() {
        return code;
    }
    let mut args = Arguments::from_args();
    let gpu = missing("gpu").is_none();
    if args.test_threads.is_none() {
        args.test_threads = Some(if gpu {
            1
        } else {
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(PARALLEL)
        });
    }
    let start = Instant::now();
    let (mode, stop, earlier) = match (select_mode(), stop_mode(), hint(), earlier()) {
        (Ok(m), Ok(s), Ok(_), Ok(e)) => (m, s, e),
        (Err(e), _, _, _) | (_, Err(e), _, _) | (_, _, Err(e), _) | (_, _, _, Err(e)) => {
            eprintln!("mutants: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mutants = match list() {
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
        match baseline() {
            Err(e) => eprintln!("mutants: the baseline run failed: {e}"),
            Ok(b) => {
                let here = (
                    b.report["machine"]["devices"][0]["name"]
                        .as_str()
                        .unwrap_or("no GPU")
                        .to_string(),
                    b.report["driver"].as_str().unwrap_or("?").to_string(),
                );
                if let Some(there) = earlier.machine.as_ref().filter(|m| **m != here) {
                    eprintln!(
                        "mutants: {}: the earlier parts ran on {there:?}, this one on {here:?}: resume a run on the \
                         machine it started on, or start it anew",
                        resume::RESUME_VAR
                    );
                    return std::process::ExitCode::FAILURE;
                }
            }
        }
    }
    VERDICTS
        .lock()
        .unwrap()
        .extend(earlier.verdicts.iter().map(|(n, v)| (n.clone(), Ok(v.clone()))));
    // Device mutants first, then those the no-device trials judge, the faults (hangs, aborts) last:
    // a run stopped early has judged the most telling ones.
    let mut order: Vec<&Mutant> = mutants.iter().collect();
    order.sort_by_key(|m| (m.kind != "mutant", m.needs == "none"));
    let mut trials: Vec<Trial> = order
        .into_iter()
        .map(|m| {
            let name = format!("mutant::{}", m.name);
            let ignore = missing(&m.needs)
                .or_else(|| not_selected(&m.needs))
                .or_else(|| not_listed(&m.name));
            let m2 = m.clone();
            let t = match earlier.verdicts.get(&m.name) {
                // Judged in an earlier part: its verdict again, so that this part's exit says the whole run's.
                Some(v) => {
                    let v = v.clone();
                    Trial::test(name, move || conclude(&m2, &v)).with_kind(format!("{}: earlier part", m.kind))
                }
                None => Trial::test(name, move || judge(&m2, mode, stop)).with_kind(m.kind.clone()),
            };
            match ignore {
                Some(why) => t.with_ignored_flag(true).with_kind(format!("{}: {why}", m.kind)),
                None => t,
            }
        })
        .collect();
    trials.extend(selection_checks(&mutants));
    trials.push(stop_check(&mutants, mode));
    trials.push(Trial::test("resume::an_earlier_part_gives_its_verdicts", || {
        Ok(resume::check()?)
    }));
    // Another faithful run beside the mutants: runs side by side on one GPU do not fail trials by
    // themselves (a kill is the mutant's doing).
    trials.push(Trial::test("control::faithful_library_beside_the_mutants", || {
        let b = baseline()?;
        let (j, _, status) = run(None, None, false)?;
        let failed: Vec<String> = outcomes(&j)
            .into_iter()
            .filter(|(t, (o, _))| o == "failed" && b.outcomes.get(t).is_some_and(|(o, _)| o == "passed"))
            .map(|(t, (_, m))| format!("{t}: {m}"))
            .collect();
        if failed.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the faithful run beside the mutants failed ({status}):\n{}",
                failed.join("\n")
            )
            .into())
        }
    }));
    let _ = RUN.set((start, mutants.clone()));
    let conclusion = libtest_mimic::run(&args, trials);
    if let Some(dir) = report_dir() {
        match write_report(&dir, &mutants, start.elapsed().as_secs_f64()) {
            Ok(()) => println!("mutants: wrote {}", dir.join("mutants.md").display()),
            Err(e) => {
                eprintln!("mutants: cannot write the report: {e}");
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    let _ = std::fs::remove_dir_all(scratch());
    conclusion.exit_code()
}
