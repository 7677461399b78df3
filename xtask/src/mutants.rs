//! `cargo xtask mutants [--report DIR] [FILTER...]`: the conformance suite against every mutant of
//! the mutation library (`cargo test -p conformance --features selftest --test mutants`), the report written to DIR
//! (default target/mutants), the last committed run's killers tried first; fails when a mutant
//! survives or a run fails.

use crate::usage::USAGE;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `cargo xtask mutants [--report DIR] [FILTER...]` (`args`: what follows `mutants`).
pub fn mutants(root: &Path, args: &[String]) -> Result<(), String> {
    let (report, filters) = match args {
        [flag, dir, rest @ ..] if flag == "--report" => (PathBuf::from(dir), rest),
        [flag] if flag == "--report" => return Err(format!("--report needs a directory\n{USAGE}")),
        rest => (root.join("target").join("mutants"), rest),
    };
    let report = if report.is_absolute() {
        report
    } else {
        std::env::current_dir().map_err(|e| e.to_string())?.join(report)
    };
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args([
        "test",
        "-p",
        "conformance",
        "--features",
        "selftest",
        "--test",
        "mutants",
        "--",
    ])
    .args(filters)
    .env("CONFORMANCE_MUTANTS_REPORT", &report)
    .current_dir(root);
    // The last committed run's killers go first (the order changes no verdict, only its speed).
    let hint = root.join("docs/conformance/mutants.json");
    if std::env::var_os("CONFORMANCE_MUTANTS_HINT").is_none() && hint.is_file() {
        cmd.env("CONFORMANCE_MUTANTS_HINT", hint);
    }
    let status = cmd.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    println!("xtask mutants: report in {}", report.join("mutants.md").display());
    if status.success() {
        Ok(())
    } else {
        Err("a mutant survived or a run failed (see above)".into())
    }
}
