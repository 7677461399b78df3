//! What each setting of a run accepts: its name, its typed value and the parser that turns its text
//! into that value or into an error naming the variable and what it accepts. Pure functions of the
//! text (None: unset); reading the environment is `values`' job.

use crate::driver::deadline::{DEFAULT_TRIAL_TIMEOUT, FIRST_WAIT_VAR};
use crate::driver::entry::Entry;
use crate::harness::cap::{Cap, ALL_CAPS};
use std::time::Duration;

pub use crate::driver::departures::STRICT_VAR;
pub const DEVICES_VAR: &str = "CONFORMANCE_DEVICES";
pub const DEVICE_LOCK_VAR: &str = "CONFORMANCE_DEVICE_LOCK";
pub const ENTRY_VAR: &str = "CONFORMANCE_ENTRY";
pub const EXPECT_VAR: &str = "CONFORMANCE_EXPECT";
pub const FAIL_FAST_VAR: &str = "CONFORMANCE_FAIL_FAST";
pub const LEAD_VAR: &str = "CONFORMANCE_FAIL_FAST_LEAD";
pub const HELPER_CONNECTIONS_VAR: &str = "CONFORMANCE_HELPER_CONNECTIONS";
/// The driver's own setting, which the helpers then inherit as every other process does.
pub const MAX_CONNECTIONS_VAR: &str = "CUDA_DEVICE_MAX_CONNECTIONS";
pub const JUNIT_VAR: &str = "CONFORMANCE_JUNIT";
/// CONFORMANCE_LIBRARY=path: the library under test, where LD_PRELOAD does not name it (a layer
/// installed as libcuda.so.1 on the library path, or opened through CUDA_MEMPOOL_SYS_LIBCUDA).
pub const LIBRARY_VAR: &str = "CONFORMANCE_LIBRARY";
pub const NVML_VAR: &str = "CONFORMANCE_NVML";
pub const PARTITION_VAR: &str = "CONFORMANCE_PARTITION";
pub const REPORT_DIR_VAR: &str = "CONFORMANCE_REPORT_DIR";
pub const REQUIRE_VAR: &str = "CONFORMANCE_REQUIRE";
pub const RERUN_VAR: &str = "CONFORMANCE_RERUN_FAILED";
pub const RUN_BUDGET_VAR: &str = "CONFORMANCE_RUN_BUDGET";
pub const SCHEDULE_VAR: &str = "CONFORMANCE_SCHEDULE";
pub const STRESS_SECS_VAR: &str = "CONFORMANCE_STRESS_SECS";
pub const STRESS_SEED_VAR: &str = "CONFORMANCE_STRESS_SEED";
pub const TRIALS_FILE_VAR: &str = "CONFORMANCE_TRIALS_FILE";
pub const TRIAL_TIMEOUT_VAR: &str = "CONFORMANCE_TRIAL_TIMEOUT";
pub const VERBOSE_VAR: &str = "CONFORMANCE_VERBOSE";
pub const WORKERS_VAR: &str = "CONFORMANCE_WORKERS";
pub const CRASH_VAR: &str = "CONFORMANCE_CRASH_TRIAL";
pub const CHECKPOINT_VAR: &str = "CONFORMANCE_CHECKPOINT";
pub const PLANT_VAR: &str = "CONFORMANCE_PLANT_LEAK";

/// The leaks CONFORMANCE_PLANT_LEAK may plant (`harness::leaks::plant`).
pub const PLANTS: &[&str] = &["alloc", "pool", "fd"];

/// What CONFORMANCE_DEVICES asks for (its syntax, checked before the probe).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    Default,
    All,
    List(Vec<i32>),
}

/// Shard `k` of `n` (1 ≤ k ≤ n): CONFORMANCE_PARTITION, and a report's record of the shard it was
/// (report.json's `partition` holds `k` and `n` beside how it was cut).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Partition {
    pub k: usize,
    pub n: usize,
}

/// CONFORMANCE_DEVICES: `all`, a list of indexes, or the default (unset or blank).
pub fn devices(v: Option<&str>) -> Result<Request, String> {
    let Some(v) = v.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(Request::Default);
    };
    if v == "all" {
        return Ok(Request::All);
    }
    let mut list = Vec::new();
    for item in v.split(',').map(str::trim) {
        let d: i32 = item.parse().ok().filter(|d| *d >= 0).ok_or_else(|| {
            format!("{DEVICES_VAR}={v:?}: {item:?} is not a device index; expected `all` or indexes such as 0,2,3")
        })?;
        if list.contains(&d) {
            return Err(format!("{DEVICES_VAR}={v:?}: device {d} is listed twice"));
        }
        list.push(d);
    }
    Ok(Request::List(list))
}

/// CONFORMANCE_ENTRY: `proc-address` (unset), `dlsym` or `link`.
pub fn entry(v: Option<&str>) -> Result<Entry, String> {
    let Some(v) = v else {
        return Ok(Entry::ProcAddress);
    };
    Entry::from_name(v.trim()).ok_or_else(|| {
        format!(
            "{ENTRY_VAR}={v:?}: expected one of {} (how the suite resolves the driver's entry points; default \
             proc-address)",
            Entry::ALL.map(Entry::name).join(", ")
        )
    })
}

/// The checkpoint leg's engine (CONFORMANCE_CHECKPOINT): what takes a process under test through a
/// checkpoint and back (`harness::checkpoint`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// No leg: its trials are ignored, saying how to turn it on.
    #[default]
    Off,
    /// The driver's own engine, `cuCheckpointProcess{Lock,Checkpoint,Restore,Unlock}` (R570+),
    /// called from a child of the suite on the process under test.
    Driver,
    /// An outside tool: the template, run by `sh -c` with `{pid}` replaced, once to checkpoint and
    /// once to restore (`{step}`, where present, is `checkpoint` then `restore`; without it the
    /// same command twice, as `cuda-checkpoint --toggle --pid {pid}` wants).
    Command(String),
}

/// CONFORMANCE_CHECKPOINT: unset (no leg), `driver`, or `command:TEMPLATE` naming `{pid}`.
pub fn checkpoint(v: Option<&str>) -> Result<Engine, String> {
    let Some(v) = v.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(Engine::Off);
    };
    if v == "driver" {
        return Ok(Engine::Driver);
    }
    match v.strip_prefix("command:").map(str::trim) {
        Some(t) if t.contains("{pid}") => Ok(Engine::Command(t.to_string())),
        Some(t) => Err(format!(
            "{CHECKPOINT_VAR}={v:?}: the command {t:?} does not name {{pid}}, the process to checkpoint; \
             write it as `command:cuda-checkpoint --toggle --pid {{pid}}`, say"
        )),
        None => Err(format!(
            "{CHECKPOINT_VAR}={v:?}: expected `driver` (the driver's cuCheckpointProcess* calls) or \
             `command:TEMPLATE` (a tool run with {{pid}} to checkpoint, then to restore; {{step}} says which)"
        )),
    }
}

/// CONFORMANCE_STRICT: unset (or empty) for the default policy, `documented` for strict.
pub fn strict(v: Option<&str>) -> Result<bool, String> {
    match v.map(str::trim) {
        None | Some("") => Ok(false),
        Some("documented") => Ok(true),
        Some(v) => Err(format!(
            "{STRICT_VAR}={v:?}: the one value is `documented` (every departure from the documentation fails, \
             even on a driver branch it was verified on); unset it for the default policy"
        )),
    }
}

/// CONFORMANCE_TRIAL_TIMEOUT=SECS: how long one trial may go without an answer.
pub fn trial_timeout(v: Option<&str>) -> Result<Duration, String> {
    match v {
        None => Ok(DEFAULT_TRIAL_TIMEOUT),
        Some(v) => match v.trim().parse::<f64>() {
            Ok(s) if (1.0..=86400.0).contains(&s) => Ok(Duration::from_secs_f64(s)),
            _ => Err(format!(
                "{TRIAL_TIMEOUT_VAR}={v:?}: expected a number of seconds from 1 to 86400 (default {})",
                DEFAULT_TRIAL_TIMEOUT.as_secs()
            )),
        },
    }
}

/// CONFORMANCE_FIRST_WAIT_MS (set by the suite for its children, `harness::child`): the wait the
/// run plans with at each new process's first GPU work, whole milliseconds up to a day (unset: none).
pub fn first_wait(v: Option<&str>) -> Result<Duration, String> {
    match v.map(str::trim) {
        None => Ok(Duration::ZERO),
        Some(v) => match v.parse::<u64>() {
            Ok(ms) if ms <= 86_400_000 => Ok(Duration::from_millis(ms)),
            _ => Err(format!(
                "{FIRST_WAIT_VAR}={v:?}: expected whole milliseconds from 0 to 86400000; the suite sets it for its \
                 own children: unset it"
            )),
        },
    }
}

/// CONFORMANCE_REQUIRE=gpu,ipc,...: capabilities whose absence is a failure, not an ignore.
pub fn required(v: Option<&str>) -> Result<Vec<Cap>, String> {
    let Some(v) = v else {
        return Ok(vec![]);
    };
    let mut caps = Vec::new();
    for name in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match ALL_CAPS.iter().find(|c| c.1 == name) {
            Some(c) => caps.push(c.0),
            None => {
                let known: Vec<&str> = ALL_CAPS.iter().map(|c| c.1).collect();
                return Err(format!(
                    "{REQUIRE_VAR}={v:?}: unknown capability {name:?}; known: {} (comma-separated)",
                    known.join(", ")
                ));
            }
        }
    }
    Ok(caps)
}

/// CONFORMANCE_RUN_BUDGET=SECS: the whole run's wall-time budget (unset: none). When it runs out
/// the run is interrupted (`run::interrupt`): no trial starts, the rest are recorded `interrupted`.
pub fn run_budget(v: Option<&str>) -> Result<Option<Duration>, String> {
    match v.map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => match v.parse::<f64>() {
            Ok(s) if s > 0.0 && s <= 7.0 * 86400.0 => Ok(Some(Duration::from_secs_f64(s))),
            _ => Err(format!(
                "{RUN_BUDGET_VAR}={v:?}: expected the run's budget in seconds, a number above 0 and at most \
                 604800 (e.g. {RUN_BUDGET_VAR}=120); unset it for no budget"
            )),
        },
    }
}

/// CONFORMANCE_VERBOSE=0|1 (unset: 0): 1 prints every ignored trial and every failure on the
/// terminal's last screen, not only the reasons and the first ones.
pub fn verbose(v: Option<&str>) -> Result<bool, String> {
    match v.map(str::trim) {
        None | Some("0") | Some("") => Ok(false),
        Some("1") => Ok(true),
        Some(v) => Err(format!(
            "{VERBOSE_VAR}={v:?}: expected 1 (the last screen lists every ignored trial and failure) or 0 \
             (grouped by reason, the default)"
        )),
    }
}

/// CONFORMANCE_HELPER_CONNECTIONS=N|inherit (unset: 1): CUDA_DEVICE_MAX_CONNECTIONS for the
/// suite's helper children (importers, the rules' child; `Role::helper`), whose context the driver
/// then creates about three times faster (one at a time machine-wide: issue 36). `inherit`, or a
/// CUDA_DEVICE_MAX_CONNECTIONS of the run's own (`own`), leaves them as every other process (None).
/// Workers and trials' own processes always keep the driver's default: their trials hold streams.
pub fn helper_connections(v: Option<&str>, own: bool) -> Result<Option<u32>, String> {
    let n = match v.map(str::trim) {
        None | Some("") => Some(1),
        Some("inherit") => None,
        Some(v) => match v.parse::<u32>() {
            Ok(n @ 1..=32) => Some(n),
            _ => {
                return Err(format!(
                    "{HELPER_CONNECTIONS_VAR}={v:?}: expected the helper children's {MAX_CONNECTIONS_VAR}, a \
                     number from 1 to 32, or `inherit` (they get the run's own); unset it for 1"
                ))
            }
        },
    };
    Ok(n.filter(|_| !own))
}

/// CONFORMANCE_WORKERS=0 runs every trial in this process (as a run under nextest always does);
/// 1 or unset: worker processes.
pub fn in_process(v: Option<&str>, nextest: bool) -> Result<bool, String> {
    if nextest {
        return Ok(true);
    }
    match v {
        None => Ok(false),
        Some("0") => Ok(true),
        Some("1") => Ok(false),
        Some(v) => Err(format!(
            "{WORKERS_VAR}={v:?}: expected 0 (run trials in this process) or 1 (worker processes, the default); \
             the number of workers is --test-threads"
        )),
    }
}

/// CONFORMANCE_PARTITION=k/n (None: unset or empty, the whole run: a CI matrix without shards may
/// set it to nothing).
pub fn partition(v: Option<&str>) -> Result<Option<Partition>, String> {
    v.filter(|v| !v.trim().is_empty()).map(Partition::parse).transpose()
}

impl Partition {
    /// `k/n`, with 1 ≤ k ≤ n; anything else is an error naming the variable and the form.
    pub fn parse(v: &str) -> Result<Partition, String> {
        let bad = |why: &str| format!("{PARTITION_VAR}={v:?}: {why}; expected k/n with 1 <= k <= n (e.g. 2/4)");
        let (k, n) = v.trim().split_once('/').ok_or_else(|| bad("no '/'"))?;
        let num = |x: &str| {
            x.trim()
                .parse::<usize>()
                .map_err(|_| bad(&format!("{x:?} is not a count")))
        };
        let (k, n) = (num(k)?, num(n)?);
        if n == 0 || k == 0 || k > n {
            return Err(bad(&format!("shard {k} is not one of 1..={n}")));
        }
        Ok(Partition { k, n })
    }
}

/// CONFORMANCE_FAIL_FAST=0|1 (unset: 0).
pub fn fail_fast(v: Option<&str>) -> Result<bool, String> {
    match v.map(str::trim) {
        None | Some("0") | Some("") => Ok(false),
        Some("1") => Ok(true),
        Some(v) => Err(format!(
            "{FAIL_FAST_VAR}={v:?}: expected 1 (stop at the first failure: trials not yet started are \
             recorded ignored) or 0 (run every trial, the default)"
        )),
    }
}

/// CONFORMANCE_FAIL_FAST_LEAD=N (unset: 0, no lead).
pub fn lead(v: Option<&str>) -> Result<usize, String> {
    match v.map(str::trim) {
        None | Some("") => Ok(0),
        Some(n) => n.parse().map_err(|_| {
            format!(
                "{LEAD_VAR}={n:?}: expected a count of trials (the first N of CONFORMANCE_TRIALS_FILE run before \
                 any other starts, in a CONFORMANCE_FAIL_FAST=1 run), e.g. 2"
            )
        }),
    }
}

/// CONFORMANCE_SCHEDULE: `budget` (unset) or `serial`; true for serial.
pub fn serial(v: Option<&str>) -> Result<bool, String> {
    match v {
        None | Some("") | Some("budget") => Ok(false),
        Some("serial") => Ok(true),
        Some(v) => Err(format!(
            "{SCHEDULE_VAR}={v:?}: expected `budget` (trials side by side while their memory needs fit, the \
             default) or `serial` (one trial at a time, each with the device alone)"
        )),
    }
}

/// CONFORMANCE_STRESS_SECS: how long the load trials run (default 1 s).
pub fn stress_secs(v: Option<&str>) -> Result<Duration, String> {
    match v {
        None => Ok(Duration::from_secs(1)),
        Some(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| format!("{STRESS_SECS_VAR}={v:?}: expected a number of seconds, more than 0 (e.g. 60)")),
    }
}

/// Whether load trials of `secs` fit in the trial deadline `deadline`, with time to spare for the
/// start and the final checks.
pub fn stress_fits(secs: Duration, deadline: Duration) -> Result<(), String> {
    let need = secs + Duration::from_secs(5);
    if need > deadline {
        return Err(format!(
            "{STRESS_SECS_VAR}={} s does not fit in the trial deadline of {} s: set {TRIAL_TIMEOUT_VAR} to at \
             least {}",
            secs.as_secs_f64(),
            deadline.as_secs(),
            need.as_secs_f64().ceil()
        ));
    }
    Ok(())
}

/// CONFORMANCE_STRESS_SEED (None: unset, the clock's at each trial).
pub fn stress_seed(v: Option<&str>) -> Result<Option<u64>, String> {
    v.map(|v| {
        v.trim()
            .parse()
            .map_err(|_| format!("{STRESS_SEED_VAR}={v:?}: expected an unsigned integer"))
    })
    .transpose()
}

/// CONFORMANCE_RERUN_FAILED=N (unset or blank: 0).
pub fn rerun_failed(v: Option<&str>) -> Result<u32, String> {
    match v.map(str::trim) {
        Some(v) if !v.is_empty() => rerun_count(v, &format!("{RERUN_VAR}=")),
        _ => Ok(0),
    }
}

/// A count of reruns `v`, given as `what` (the variable or `--rerun-failed`).
pub fn rerun_count(v: &str, what: &str) -> Result<u32, String> {
    v.parse::<u32>()
        .map_err(|_| format!("{what} {v:?}: expected how many times to rerun a failed trial (0: never)"))
}

/// CONFORMANCE_PLANT_LEAK: which leaks to plant (test-only).
pub fn plants(v: Option<&str>) -> Result<Vec<&'static str>, String> {
    let Some(v) = v else {
        return Ok(vec![]);
    };
    let mut out = Vec::new();
    for name in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match PLANTS.iter().find(|p| **p == name) {
            Some(p) => out.push(*p),
            None => {
                return Err(format!(
                    "{PLANT_VAR}={v:?}: unknown leak {name:?}; known: {} (comma-separated; test-only)",
                    PLANTS.join(", ")
                ))
            }
        }
    }
    Ok(out)
}

/// CONFORMANCE_LIBRARY, checked without loading it (the coordinator loads nothing of the library
/// under test): None when unset; a path that is not a readable ELF file is refused, naming what to do.
pub fn library(v: Option<&str>) -> Result<Option<String>, String> {
    let Some(v) = v else {
        return Ok(None);
    };
    let fix = "set it to the path of the shared library under test (the layer that stands in for libcuda), or unset \
               it to judge what LD_PRELOAD names";
    if v.trim().is_empty() {
        return Err(format!("{LIBRARY_VAR} is set but empty: {fix}"));
    }
    let mut magic = [0u8; 4];
    match std::fs::File::open(v).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic)) {
        Err(e) => Err(format!("{LIBRARY_VAR}={v:?}: cannot read it ({e}): {fix}")),
        Ok(()) if magic != *b"\x7fELF" => Err(format!(
            "{LIBRARY_VAR}={v:?} is not a shared library (no ELF header): {fix}"
        )),
        Ok(()) => Ok(Some(v.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helper_connections_values() {
        assert_eq!(helper_connections(None, false), Ok(Some(1)));
        assert_eq!(helper_connections(Some(" 4 "), false), Ok(Some(4)));
        assert_eq!(helper_connections(Some("inherit"), false), Ok(None));
        assert_eq!(helper_connections(None, true), Ok(None), "the run's own setting wins");
        for bad in ["0", "33", "-1", "one"] {
            let e = helper_connections(Some(bad), false).unwrap_err();
            assert!(e.contains(HELPER_CONNECTIONS_VAR) && e.contains("inherit"), "{e}");
        }
    }

    #[test]
    fn checkpoint_engines() {
        assert_eq!(checkpoint(None), Ok(Engine::Off));
        assert_eq!(checkpoint(Some(" ")), Ok(Engine::Off));
        assert_eq!(checkpoint(Some("driver")), Ok(Engine::Driver));
        assert_eq!(
            checkpoint(Some("command: cuda-checkpoint --toggle --pid {pid}")),
            Ok(Engine::Command("cuda-checkpoint --toggle --pid {pid}".into()))
        );
        let e = checkpoint(Some("command:cuda-checkpoint --toggle")).unwrap_err();
        assert!(e.contains(CHECKPOINT_VAR) && e.contains("{pid}"), "{e}");
        let e = checkpoint(Some("criu")).unwrap_err();
        assert!(e.contains("driver") && e.contains("command:TEMPLATE"), "{e}");
    }

    #[test]
    fn run_budget_values() {
        assert_eq!(run_budget(None), Ok(None));
        assert_eq!(run_budget(Some(" ")), Ok(None));
        assert_eq!(run_budget(Some("120")), Ok(Some(Duration::from_secs(120))));
        assert_eq!(run_budget(Some("0.5")), Ok(Some(Duration::from_millis(500))));
        for v in ["0", "-3", "2m", "inf", "NaN", "1e9"] {
            let e = run_budget(Some(v)).expect_err(v);
            assert!(e.contains(RUN_BUDGET_VAR) && e.contains("in seconds"), "{e}");
        }
    }

    #[test]
    fn fail_fast_values() {
        for (v, want) in [(None, Some(false)), (Some("0"), Some(false)), (Some(" 1"), Some(true))] {
            assert_eq!(fail_fast(v).ok(), want, "{v:?}");
        }
        for v in ["yes", "2", "true"] {
            let e = fail_fast(Some(v)).expect_err(v);
            assert!(e.contains(FAIL_FAST_VAR) && e.contains("expected 1"), "{e}");
        }
        assert_eq!(lead(None), Ok(0));
        assert_eq!(lead(Some(" 2")), Ok(2));
        let e = lead(Some("two")).expect_err("not a count");
        assert!(e.contains(LEAD_VAR) && e.contains("expected a count"), "{e}");
    }

    /// A shard outside 1..=n, or not `k/n`, is refused naming the variable and the form.
    #[test]
    fn partition_values() {
        assert_eq!(partition(None), Ok(None));
        assert_eq!(partition(Some(" ")), Ok(None));
        assert_eq!(partition(Some(" 2/3 ")), Ok(Some(Partition { k: 2, n: 3 })));
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", "/", "1/2/3"] {
            let e = Partition::parse(bad).unwrap_err();
            assert!(e.contains(PARTITION_VAR) && e.contains("k/n"), "{bad}: {e}");
        }
    }
}
