//! Compiles the C half of the FFI-overhead benchmark (benches/ffi_loop.c) with `cc`, the
//! test-only mutation library (shim/: `libmisbehave.so`; `libmisbehave-proc-only.so`, the
//! variant that hooks only cuGetProcAddress; `libmisbehave-no-proc-address.so`, the variant that
//! hooks every path but cuGetProcAddress) that tests/shim.rs, tests/mutants.rs and
//! tests/reports.rs load with LD_PRELOAD, and the test-only stand-in NVML
//! (shim/fake_nvml/: `libfake-nvml.so`). The libraries' paths reach the tests as
//! CONFORMANCE_SHIM_BUILT, CONFORMANCE_SHIM_BUILT_PROC_ONLY, CONFORMANCE_SHIM_BUILT_NO_PROC_ADDRESS
//! and CONFORMANCE_FAKE_NVML_BUILT (compile-time variables).
use std::path::{Path, PathBuf};

fn main() {
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
