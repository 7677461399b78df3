//! Running other programs for the tasks: cargo (the one running xtask, or `cargo` on PATH) or any
//! program, in a folder, with extra environment, echoed as `xtask ci: …` and failing with a
//! sentence naming the step; whether a program runs at all; and the conformance suite's own modes
//! (`--diff`, `--matrix`) through `cargo test`.

use std::path::Path;
use std::process::Command;

/// Runs `cargo args` in `root` (see [`run_in`]).
pub fn run(root: &Path, what: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    run_in(root, what, &cargo(), args, envs)
}

/// The cargo running xtask (`CARGO`), else `cargo` on PATH.
pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Runs `program args` in `dir`; fails with `what` when it does.
pub fn run_in(dir: &Path, what: &str, program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    let shown = if program == cargo() { "cargo" } else { program };
    println!("xtask ci: {shown} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(dir)
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}

/// Whether `program args` runs and succeeds.
pub fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The suite's own mode `mode` (`--diff`, `--matrix`) with `args`, run from `root` through cargo
/// (the suite's test binary runs from the crate's folder: every path in `args` absolute); its exit
/// status.
pub fn suite_mode(root: &Path, mode: &str, args: &[std::ffi::OsString]) -> Result<std::process::ExitStatus, String> {
    Command::new(cargo())
        .args(["test", "-q", "-p", "conformance", "--test", "conformance", "--", mode])
        .args(args)
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))
}
