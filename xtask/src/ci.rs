//! `cargo xtask ci`: everything CI checks, in order, stopping at the first failure: what must be
//! installed (preflight), formatting, clippy and rustdoc with warnings denied, the docs coverage,
//! the fleet files, Windows (ci/windows.rs), `regen --check`, the ABI check and all tests, nextest,
//! Miri over the generated types (ci/miri.rs), `.ci/gpu-job`, the matrix page in headless
//! Chromium, and what a user of the crate builds: the feature-union workspace, the cudarc example's
//! conversions under each CUDA version of cudarc (the cudarc-versions package), the packaged crate
//! and the MSRV (ci/package.rs).

mod miri;
mod package;
mod windows;

use crate::exec::{run, runs};
use crate::{coverage, deploy, matrix, regen};
use package::{CUDARC_VERSIONS, FEATURE_UNION};
use std::path::Path;
use std::process::Command;

/// What must be installed before the checks can mean anything; says how to get it.
fn preflight() -> Result<(), String> {
    let ldconfig = Command::new("/sbin/ldconfig")
        .arg("-p")
        .output()
        .or_else(|_| Command::new("ldconfig").arg("-p").output());
    let libs = ldconfig
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut missing = Vec::new();
    let has_cuda = libs.contains("libcuda.so ")
        || std::env::var_os("CUDA_MEMPOOL_SYS_LIB_DIR").is_some()
        || std::env::var_os("CUDA_PATH").is_some();
    if !has_cuda {
        missing.push("libcuda.so (Debian: the `libcuda1` package from the non-free component)");
    }
    if !libs.contains("libclang") && std::env::var_os("LIBCLANG_PATH").is_none() {
        missing.push("libclang (Debian: `libclang-dev`), needed by bindgen for `regen --check`");
    }
    if !runs(windows::MINGW_GCC, &["--version"]) {
        missing.push("x86_64-w64-mingw32-gcc (Debian: `gcc-mingw-w64-x86-64`), the linker for x86_64-pc-windows-gnu");
    }
    if windows::wine().is_none() {
        missing.push("wine (Debian: `wine64`), to run the Windows build");
    }
    if !runs("chromium", &["--version"]) && !runs("chromium-browser", &["--version"]) {
        missing.push("chromium (Debian: `chromium`), to open the matrix page headless");
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "missing on this machine:\n  - {}\nrun `sudo bash .ci/install-deps` (Debian) or install them, then run `cargo xtask ci` again",
        missing.join("\n  - ")
    ))
}

/// Free disk a fresh `cargo xtask ci` needs under target/ (measured: see [`disk`]).
const NEED_GIB: u64 = 8;

/// Free space on the filesystem holding `root`, in GiB, from `df -Pk`; `None` where df cannot say.
fn free_gib(root: &Path) -> Option<u64> {
    let out = Command::new("df").arg("-Pk").arg(root).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let kib: u64 = text.lines().nth(1)?.split_whitespace().nth(3)?.parse().ok()?;
    Some(kib / (1024 * 1024))
}

/// Enough free disk for every build of the run, said before the first one: a linker that runs out
/// of disk dies with SIGBUS, naming nothing. A fresh run filled 4.7 GiB of target/ (2 CPUs, Debian 12,
/// 2026-11-27, 18 min), with dependencies built without debug info and no incremental caches; the
/// rest is margin.
fn disk(root: &Path) -> Result<(), String> {
    let Some(free) = free_gib(root) else {
        println!("xtask ci: df cannot say how much disk is free; going on");
        return Ok(());
    };
    println!("xtask ci: {free} GiB free on the disk holding target/ (a fresh run needs about {NEED_GIB})");
    if free >= NEED_GIB {
        return Ok(());
    }
    Err(format!(
        "only {free} GiB free on the disk holding {}; a fresh `cargo xtask ci` needs about {NEED_GIB} GiB \
         for its builds: free some (`cargo clean` removes target/), then run it again",
        root.display()
    ))
}

/// `cargo xtask ci`: every check, in order; the first failure ends it.
pub fn ci(root: &Path) -> Result<(), String> {
    preflight()?;
    disk(root)?;
    // No incremental caches: CI builds each crate once, and they only fill the disk.
    std::env::set_var("CARGO_INCREMENTAL", "0");
    let require = [
        ("CUDA_MEMPOOL_REQUIRE_ABI", "1"),
        ("CUDA_MEMPOOL_SYS_REQUIRE_LIBCUDA", "1"),
    ];
    run(root, "formatting", &["fmt", "--all", "--check"], &[])?;
    for (what, dir) in [
        ("formatting (feature-union workspace)", FEATURE_UNION),
        ("formatting (cudarc-versions package)", CUDARC_VERSIONS),
    ] {
        run(
            root,
            what,
            &[
                "fmt",
                "--all",
                "--check",
                "--manifest-path",
                &format!("{dir}/Cargo.toml"),
            ],
            &[],
        )?;
    }
    run(
        root,
        "clippy",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            // The conformance suite's own test targets need their feature (`cargo selftest`).
            "--features",
            "conformance/selftest",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    run(
        root,
        "clippy (every feature of cuda-mempool-sys)",
        &[
            "clippy",
            "-p",
            "cuda-mempool-sys",
            "--all-targets",
            "--all-features",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    for features in ["cuda-11", "cuda-13", "cuda-12,dynamic-loading", "cuda-13,std"] {
        run(
            root,
            features,
            &[
                "check",
                "-p",
                "cuda-mempool-sys",
                "--locked",
                "--no-default-features",
                "--features",
                features,
            ],
            &[],
        )?;
    }
    for features in [
        &["--features", "cuda-11,cuda-12,cuda-13,std"][..],
        &["--all-features"][..],
    ] {
        let mut args = vec!["doc", "-p", "cuda-mempool-sys", "--no-deps", "--locked"];
        args.extend(features);
        run(
            root,
            "rustdoc (warnings denied)",
            &args,
            &[("RUSTDOCFLAGS", "-D warnings")],
        )?;
    }
    println!("xtask ci: {}", coverage::check(root)?);
    // The fleet files (deploy/) against GitHub's workflow schema and Kubernetes' schemas.
    deploy::check(root)?;
    windows::windows(root)?;
    println!("xtask ci: regen --check");
    regen::regen(root, true, None)?;
    // The ABI test must run here: the headers are present (regen --check fetched them). Every major
    // linked, then every major through the tables only (dynamic-loading).
    for features in [&["--features", "cuda-11,cuda-12,cuda-13"][..], &["--all-features"][..]] {
        let mut args = vec!["test", "-p", "cuda-mempool-sys", "--locked"];
        args.extend(features);
        run(root, "cuda-mempool-sys tests", &args, &require)?;
    }
    miri::uninit(root)?;
    run(root, "tests", &["test", "--workspace", "--locked"], &require)?;
    // The conformance suite's own tests (`cargo selftest`, .cargo/config.toml): not part of
    // `cargo test -p conformance`, which runs the suite alone.
    run(root, "conformance self-tests", &["selftest", "--locked"], &require)?;
    // The same suite under nextest (one process per trial), with its JUnit (`.config/nextest.toml`).
    nextest(root)?;
    // The GPU-CI job's own script, end to end on this machine (no GPU: it requires nothing).
    gpu_job(root)?;
    // The committed H100 reports as one page, drawn by headless Chromium, its counts checked.
    matrix::ci(root)?;
    package::feature_union(root)?;
    package::cudarc_versions(root)?;
    package::package(root)?;
    package::msrv(root)?;
    println!("xtask ci: all checks passed");
    Ok(())
}

/// `cargo nextest run -p conformance --profile ci`: every trial in its own process; JUnit in
/// target/nextest/ci/junit.xml.
fn nextest(root: &Path) -> Result<(), String> {
    let has = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        return Err(
            "cargo-nextest is not installed: `cargo install cargo-nextest --locked`, then run \
                    `cargo xtask ci` again"
                .into(),
        );
    }
    run(
        root,
        "nextest",
        &["nextest", "run", "-p", "conformance", "--profile", "ci", "--locked"],
        &[],
    )
}

/// `.ci/gpu-job` as a GPU runner would run it, here with no capability required.
fn gpu_job(root: &Path) -> Result<(), String> {
    println!("xtask ci: .ci/gpu-job (no GPU required here)");
    let out = root.join("target").join("gpu-job-check");
    let status = Command::new("bash")
        .arg(root.join(".ci").join("gpu-job"))
        .env("GPU_JOB_OUT", &out)
        .env("GPU_JOB_REQUIRE", "")
        .env(
            "GPU_JOB_BASELINE",
            root.join("docs").join("conformance").join("no-gpu-r535.json"),
        )
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run .ci/gpu-job: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            ".ci/gpu-job failed ({status}); its outputs are in {}",
            out.display()
        ))
    }
}
