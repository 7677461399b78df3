//! The report (CONFORMANCE_MUTANTS_REPORT=DIR): DIR/mutants.md, each mutant and the trials that
//! killed it, each trial and the mutants it kills, and (with CONFORMANCE_MUTANTS_STOP=never) the
//! trials that kill none with the reason each exists ([`REASONS`]); and DIR/mutants.json, the same
//! for machines, which a later run reads back as its hint or as an earlier part. Both are
//! rewritten as each verdict comes in, so that a run stopped early still leaves what it judged,
//! and once more when the run ends.

use super::baseline::baseline;
use super::library::{missing, Mutant};
use super::record::{EQUIVALENT, VERDICTS};
use super::resume::{self, earlier};
use super::saved::{self, KillsNone, MutantsJson, SavedMachine, SavedMutant};
use super::selection::BESIDE;
use super::settings::{not_selected, report_dir, select_mode, stop_mode, Select, Stop, DEADLINE, SELECT_VAR, STOP_VAR};
use conformance_model::Outcome;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

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

/// The run's start and every mutant, so that the report can be rewritten as each verdict comes in
/// (a run stopped early still leaves what it judged).
pub static RUN: OnceLock<(Instant, Vec<Mutant>)> = OnceLock::new();

/// The report again, with the verdicts so far (nothing without a report directory, or before the
/// run has started).
pub fn rewrite_report() -> Result<(), String> {
    static ONE: Mutex<()> = Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|p| p.into_inner());
    match (report_dir(), RUN.get()) {
        (Some(dir), Some((start, mutants))) => write_report(&dir, mutants, start.elapsed().as_secs_f64()),
        _ => Ok(()),
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
pub fn write_report(dir: &PathBuf, mutants: &[Mutant], wall: f64) -> Result<(), String> {
    let b = baseline()?;
    let e = earlier()?;
    let (part_wall, wall, parts) = (wall, wall + e.wall, e.parts + 1);
    let verdicts = VERDICTS.lock().unwrap().clone();
    let mut by_trial: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let (mut killed, mut survived, mut judged) = (0u32, 0u32, 0u32);
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
        jm.push(SavedMutant {
            name: Some(m.name.clone()),
            api: Some(m.api),
            needs: Some(m.needs.clone()),
            kind: Some(m.kind.clone()),
            what: Some(m.what.clone()),
            status: Some(status.clone()),
            exit,
            killed_by: killers.clone(),
            changed,
            wall_s: wall_m,
            select: select.map(String::from),
            trials_run: ran.map(|n| n as u64),
            trials_stopped: stopped.map(|n| n as u64),
        });
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
        .filter(|(_, (o, _))| *o == Outcome::Failed)
        .map(|(t, _)| t)
        .collect();
    let devices = &b.report.machine.devices;
    let device = devices.first().map_or("no GPU", |d| d.name.as_str());
    let ndev = devices.len();
    let devices = if ndev == 0 {
        "no GPU".to_string()
    } else {
        format!("{ndev} × {device}")
    };
    let driver = b.report.driver.as_deref().unwrap_or("?");
    let date = b.report.date.as_deref().unwrap_or("?");
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
            None => none.push((trial.clone(), *outcome)),
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
        let why = if *outcome == Outcome::Ignored {
            "ignored on this machine (see the report for the reason)"
        } else {
            reason(trial).unwrap_or("NO REASON RECORDED")
        };
        md.push_str(&format!("| `{trial}` | {outcome} | {why} |\n"));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(dir.join("mutants.md"), md).map_err(|e| e.to_string())?;
    let j = MutantsJson {
        machine: SavedMachine {
            devices: Some(ndev as u64),
            device: Some(device.to_string()),
            driver: Some(driver.to_string()),
            date: Some(date.to_string()),
        },
        wall_s: Some(wall),
        parts: Some(parts),
        baseline_wall_s: Some(b.wall),
        judged: Some(u64::from(judged)),
        killed: Some(u64::from(killed)),
        survived: Some(u64::from(survived)),
        select: Some(mode.name().to_string()),
        stop: Some(stop.name().to_string()),
        baseline_failed: baseline_failed.into_iter().cloned().collect(),
        mutants: Some(jm),
        trials: by_trial,
        trials_killing_none: (stop == Stop::Never).then(|| {
            none.iter()
                .map(|(t, o)| KillsNone {
                    trial: t.clone(),
                    baseline: *o,
                    reason: if *o == Outcome::Ignored {
                        None
                    } else {
                        reason(t).map(String::from)
                    },
                })
                .collect()
        }),
    };
    std::fs::write(dir.join("mutants.json"), saved::text(&j)).map_err(|e| e.to_string())
}
