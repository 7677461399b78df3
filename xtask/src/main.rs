//! Project automation. This file parses the command line and dispatches to the task's module (one
//! module per task); the tasks:
//!
//!   cargo xtask regen [--check] [--cuda-include DIR]
//!       Regenerate cuda-mempool-sys/src/generated/cudaNN.rs and the ABI probe under
//!       cuda-mempool-sys/tests/abi/ for every pinned CUDA major (from the root's wrapper.h), the
//!       cudarc example's CUresult map (also from cudarc's source, found by `cargo metadata`) and
//!       the crate's copy of wrapper.h. `--check` writes nothing and fails if a committed file
//!       differs from what would be generated.
//!   cargo xtask ci
//!       Everything CI checks: formatting, clippy (warnings denied), rustdoc (warnings denied),
//!       `regen --check`, the ABI check with every major, all tests (linked and `dynamic-loading`),
//!       the feature-union workspace (a cuda-12 and a cuda-13 dependent in one build), the cudarc
//!       example's CUresult map against cudarc for CUDA 11.8, 12.2, 12.6 and 13.0, the packaged
//!       crate's tests from the unpacked .crate, the MSRV build (installed with rustup), the suite
//!       under nextest (`--profile ci`, JUnit), `.ci/gpu-job` with no GPU required, the matrix page of the committed H100 reports drawn by
//!       headless Chromium (its counts equal to matrix.json, a screenshot kept), and Windows:
//!       clippy for x86_64-pc-windows-msvc and -gnu, and the `dynamic-loading` example and the
//!       crate's tests cross-built for x86_64-pc-windows-gnu and run under Wine (no driver there).
//!       `.ci/run` installs the system packages and then runs this.
//!   cargo xtask docs
//!       The docs coverage check alone (also part of `ci`): every public function of
//!       cuda-mempool-sys documented, `# Safety` on every unsafe one, NVIDIA's reference linked
//!       from every bound one.
//!   cargo xtask bench-diff OLD.json NEW.json [--group G]
//!       Two allocator bench runs (bench.json) case by case: medians and NEW / OLD (what a library
//!       under LD_PRELOAD adds per API, say, with `--group api`).
//!   cargo xtask diff OLD.json NEW.json
//!       What changed between two conformance reports (exit 1 if anything regressed).
//!   cargo xtask matrix REPORT.json… [--out DIR] [--expect FILE]
//!       Many conformance reports as one matrix (the suite's `--matrix`): shards of one run merged
//!       into one run, the runs of one GPU model, driver, library, entry mode and settings into one
//!       column (its hosts counted, those that differ named), other machines, drivers, libraries as
//!       columns; DIR/matrix.md, matrix.json and a self-contained matrix.html (default
//!       target/matrix). `--expect FILE` (one host name or GPU model a line, `#` comments): each
//!       without a readable report is a red `missing` column, and the exit is not zero. `ci`
//!       checks the committed H100 reports' page in headless Chromium (`cargo xtask matrix --ci`:
//!       that step alone).
//!   cargo xtask mutants [--report DIR] [FILTER...]
//!       The suite once per mutant of the mutation library (cuda-mempool-conformance/shim/), each
//!       time only the trials that reached the mutant's API (CONFORMANCE_MUTANTS_SELECT=all: all):
//!       which trials kill which mutant, and the survivors (a survivor fails). Each run stops at
//!       its first kill, trying first the trials that killed the mutant in the committed
//!       docs/conformance/mutants.json (CONFORMANCE_MUTANTS_STOP=never: the whole matrix). Writes
//!       DIR/mutants.md and DIR/mutants.json (default target/mutants; the committed
//!       docs/conformance/mutants.md comes from a GPU machine, .ci/gpu/mutants.sh).
//!   cargo xtask expectations prune EXPECT.toml REPORT.json... [--write]
//!       The entries of an expectation file (CONFORMANCE_EXPECT) that none of the reports needed
//!       (their trial passed, was not run, or the entry's selectors matched nowhere); `--write`
//!       removes them.

mod allowlist;
mod bench_diff;
mod ci;
mod common;
mod coverage;
mod cudarc;
mod deploy;
mod diff;
mod docs;
mod exec;
mod expectations;
mod fn_docs;
mod gen;
mod headers;
mod matrix;
mod mutants;
mod pins;
mod regen;
mod table;
mod usage;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use usage::USAGE;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("regen") => parse_regen(&args[1..]).and_then(|(check, inc)| regen::regen(&root(), check, inc.as_deref())),
        Some("ci") if args.len() == 1 => ci::ci(&root()),
        Some("docs") if args.len() == 1 => coverage::check(&root()).map(|s| println!("xtask: {s}")),
        Some("diff") if args.len() == 3 => diff::diff(&root(), &args[1], &args[2]),
        Some("bench-diff") if args.len() == 3 || (args.len() == 5 && args[3] == "--group") => {
            bench_diff::report(&args[1], &args[2], args.get(4).map(String::as_str)).map(|r| print!("{r}"))
        }
        Some("mutants") => mutants::mutants(&root(), &args[1..]),
        Some("expectations") => expectations::main(&args[1..]),
        Some("matrix") => matrix::matrix(&root(), &args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(format!("unknown or missing command\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse_regen(args: &[String]) -> Result<(bool, Option<PathBuf>), String> {
    let (mut check, mut inc) = (false, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--check" => check = true,
            "--cuda-include" => {
                let dir = it
                    .next()
                    .ok_or("--cuda-include needs a directory (the one holding cuda.h)")?;
                let dir = PathBuf::from(dir);
                if !dir.join("cuda.h").is_file() {
                    return Err(format!("--cuda-include {}: no cuda.h there", dir.display()));
                }
                inc = Some(dir);
            }
            other => return Err(format!("regen: unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok((check, inc))
}

fn root() -> PathBuf {
    // xtask/ sits in the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}
