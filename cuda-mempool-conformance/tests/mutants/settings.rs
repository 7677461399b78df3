//! The runner's own settings, read from the environment: the trial deadline of every run and how
//! many suites run at once, each suite's `--test-threads` (CONFORMANCE_MUTANTS_SUITE_THREADS), how
//! a mutant's trials are chosen (CONFORMANCE_MUTANTS_SELECT) and whether its run stops at the
//! first kill (CONFORMANCE_MUTANTS_STOP), and which mutants are judged at all
//! (CONFORMANCE_MUTANTS_NEEDS, CONFORMANCE_MUTANTS_ONLY). A SELECT, STOP or SUITE_THREADS value
//! it does not take is an error that names the variable and what it expects.

use std::path::PathBuf;
use std::time::Duration;

/// The trial deadline of every run (a hanging mutant costs about this much).
pub const DEADLINE: Duration = Duration::from_secs(10);
/// Default number of suites run at once without a GPU. With a GPU, one at a time: on an H100
/// (R580) eight suites side by side made each run take 90 s instead of 5 and failed most trials
/// of every run (contexts are created one at a time, the 10 s deadline passed), which would have
/// counted every mutant as killed.
pub const PARALLEL: usize = 4;

/// CONFORMANCE_MUTANTS_SUITE_THREADS=N: each suite runs at most N trials at once (its
/// `--test-threads`), so that several suites side by side (`--test-threads` of this runner) share
/// one GPU with a bounded number of workers each. Unset: the suite's own default.
const SUITE_THREADS_VAR: &str = "CONFORMANCE_MUTANTS_SUITE_THREADS";

pub fn suite_threads() -> Result<Option<usize>, String> {
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
pub const SELECT_VAR: &str = "CONFORMANCE_MUTANTS_SELECT";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Select {
    Calls,
    All,
}

impl Select {
    /// Its value of CONFORMANCE_MUTANTS_SELECT (and mutants.json's `select`).
    pub fn name(self) -> &'static str {
        match self {
            Select::Calls => "calls",
            Select::All => "all",
        }
    }
}

pub fn select_mode() -> Result<Select, String> {
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
pub const STOP_VAR: &str = "CONFORMANCE_MUTANTS_STOP";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stop {
    First,
    Never,
}

impl Stop {
    /// Its value of CONFORMANCE_MUTANTS_STOP (and mutants.json's `stop`).
    pub fn name(self) -> &'static str {
        match self {
            Stop::First => "first",
            Stop::Never => "never",
        }
    }
}

pub fn stop_mode() -> Result<Stop, String> {
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

/// CONFORMANCE_MUTANTS_NEEDS=peer,ipc: judge only the mutants that need one of these (e.g. the
/// peer mutants on a two-GPU machine, without the hour the rest would take there).
const NEEDS_VAR: &str = "CONFORMANCE_MUTANTS_NEEDS";

/// Why a mutant that needs `needs` is left out by CONFORMANCE_MUTANTS_NEEDS, if it is.
pub fn not_selected(needs: &str) -> Option<String> {
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
pub fn not_listed(name: &str) -> Option<String> {
    let only = std::env::var(ONLY_VAR).ok()?;
    if only.split(',').any(|n| n.trim() == name) {
        None
    } else {
        Some(format!("not selected: {ONLY_VAR} does not name it"))
    }
}

/// CONFORMANCE_MUTANTS_REPORT=DIR: where the report goes (none without it).
pub fn report_dir() -> Option<PathBuf> {
    std::env::var_os("CONFORMANCE_MUTANTS_REPORT").map(PathBuf::from)
}
