//! Compiles the C half of the FFI-overhead benchmark (benches/ffi_loop.c) with `cc`, the
//! test-only mutation library (shim/: `libmisbehave.so`; `libmisbehave-proc-only.so`, the
//! variant that hooks only cuGetProcAddress; `libmisbehave-no-proc-address.so`, the variant that
//! hooks every path but cuGetProcAddress) that tests/shim.rs, tests/mutants.rs and
//! tests/reports.rs load with LD_PRELOAD, and the test-only stand-in NVML
//! (shim/fake_nvml/: `libfake-nvml.so`), and the checkpoint leg's outside engine
//! (shim/engine/: `cump-checkpoint-engine`, CONFORMANCE_CHECKPOINT_ENGINE_BUILT). The libraries' paths reach the tests as
//! CONFORMANCE_SHIM_BUILT, CONFORMANCE_SHIM_BUILT_PROC_ONLY, CONFORMANCE_SHIM_BUILT_NO_PROC_ADDRESS
//! and CONFORMANCE_FAKE_NVML_BUILT (compile-time variables). It also records the commit the suite is
//! built from for every report's provenance (CONFORMANCE_GIT_COMMIT, CONFORMANCE_GIT_DIRTY).
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    git_commit();
    // The suite is Linux-only (elsewhere every test target says so in one sentence, src/lib.rs's
    // LINUX_ONLY): compile nothing, so that a missing C compiler for the target (MSVC's cl.exe,
    // say) is no error.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    println!("cargo:rerun-if-changed=benches/ffi_loop.c");
    cc::Build::new()
        .file("benches/ffi_loop.c")
        .warnings(true)
        .compile("cump_ffi_loop");

    // LD_PRELOAD, dlvsym and RTLD_NEXT: glibc on Linux.
    println!("cargo:rerun-if-changed=shim");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // shim/*.c (the plumbing and what the groups share) and shim/mutants/*.c (one file per group);
    // not shim/fake_nvml/, a library of its own (read_dir does not descend into it).
    let mut sources: Vec<PathBuf> = ["shim", "shim/mutants"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{dir}/ is part of the package: {e}")))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    sources.sort();
    for (file, define, var) in [
        ("libmisbehave.so", None, "CONFORMANCE_SHIM_BUILT"),
        (
            "libmisbehave-proc-only.so",
            Some("-DPROC_ADDRESS_ONLY"),
            "CONFORMANCE_SHIM_BUILT_PROC_ONLY",
        ),
        (
            "libmisbehave-no-proc-address.so",
            Some("-DNO_PROC_ADDRESS_HOOK"),
            "CONFORMANCE_SHIM_BUILT_NO_PROC_ADDRESS",
        ),
    ] {
        let so = out.join(file);
        shared_library(&so, &sources, define);
        println!("cargo:rustc-env={var}={}", so.display());
    }
    let nvml = out.join("libfake-nvml.so");
    shared_library(&nvml, &[PathBuf::from("shim/fake_nvml/fake_nvml.c")], None);
    println!("cargo:rustc-env=CONFORMANCE_FAKE_NVML_BUILT={}", nvml.display());
    // The checkpoint leg's outside engine and its mutant engines (shim/engine/, issue 57): a program.
    let engine = out.join("cump-checkpoint-engine");
    compile(&engine, &[PathBuf::from("shim/engine/checkpoint_engine.c")], &["-ldl"]);
    println!(
        "cargo:rustc-env=CONFORMANCE_CHECKPOINT_ENGINE_BUILT={}",
        engine.display()
    );
}

/// One program from `sources`, with the compiler `cc` would use for the target.
fn compile(exe: &Path, sources: &[PathBuf], libs: &[&str]) {
    let compiler = cc::Build::new().get_compiler();
    let status = compiler
        .to_command()
        .args(["-O2", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(exe)
        .args(sources)
        .args(libs)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run the C compiler {:?} for {}: {e}",
                compiler.path(),
                exe.display()
            )
        });
    assert!(
        status.success(),
        "compiling {} failed ({status}); the compiler's messages are above",
        exe.display()
    );
}

/// One shared library from `sources`, with the compiler `cc` would use for the target.
fn shared_library(so: &Path, sources: &[PathBuf], define: Option<&str>) {
    let compiler = cc::Build::new().get_compiler();
    let mut cmd = compiler.to_command();
    cmd.args(["-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror"])
        .args(define)
        .arg("-o")
        .arg(so)
        .args(sources)
        .args(["-ldl", "-lpthread"]);
    let status = cmd.status().unwrap_or_else(|e| {
        panic!(
            "cannot run the C compiler {:?} for {}: {e}",
            compiler.path(),
            so.display()
        )
    });
    assert!(
        status.success(),
        "compiling {} failed ({status}); the compiler's messages are above",
        so.display()
    );
}

/// `git` in this package's folder: its trimmed output, or None (no git, not a repository).
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// CONFORMANCE_GIT_COMMIT (`git rev-parse HEAD`) and CONFORMANCE_GIT_DIRTY ("true" when tracked
/// files differ from it, else "false"), or "unknown" for both where this package is not a tracked
/// part of a git work tree (a build from a crates.io package, or no git): never an error. Reruns
/// when HEAD, the branch or the index moves (an edit not yet added is seen at the next commit or
/// `git add`).
fn git_commit() {
    let tracked = git(&["ls-files", "--error-unmatch", "build.rs"]).is_some();
    let commit = git(&["rev-parse", "HEAD"]).filter(|c| tracked && c.len() >= 40);
    let dirty = commit
        .as_ref()
        .and_then(|_| git(&["status", "--porcelain", "--untracked-files=no"]).map(|s| (!s.is_empty()).to_string()));
    if commit.is_some() {
        let branch = git(&["symbolic-ref", "-q", "HEAD"]);
        let watched = ["HEAD", "index", "packed-refs"]
            .into_iter()
            .map(String::from)
            .chain(branch);
        for p in watched.filter_map(|w| git(&["rev-parse", "--git-path", &w])) {
            if Path::new(&p).exists() {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
    println!(
        "cargo:rustc-env=CONFORMANCE_GIT_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    println!(
        "cargo:rustc-env=CONFORMANCE_GIT_DIRTY={}",
        dirty.as_deref().unwrap_or("unknown")
    );
}
