//! The test-only mutation library (shim/, built by build.rs), for the tests that load it with
//! LD_PRELOAD: tests/shim.rs, tests/mutants.rs, tests/reports.rs.

use std::path::PathBuf;

/// The library as it ships (every path to the driver hooked), the variant that hooks only
/// cuGetProcAddress (`-DPROC_ADDRESS_ONLY`), or the one that hooks every path but cuGetProcAddress
/// (`-DNO_PROC_ADDRESS_HOOK`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[allow(dead_code)] // each test binary uses what it needs
pub enum Variant {
    EveryPath,
    ProcAddressOnly,
    NoProcAddress,
}

/// The library's path: CONFORMANCE_SHIM_SO (CONFORMANCE_SHIM_SO_PROC_ONLY,
/// CONFORMANCE_SHIM_SO_NO_PROC_ADDRESS) when set — a copy
/// carried to a machine without the build tree —, else the one build.rs made.
pub fn path(v: Variant) -> Result<PathBuf, String> {
    let (env, built) = match v {
        Variant::EveryPath => ("CONFORMANCE_SHIM_SO", option_env!("CONFORMANCE_SHIM_BUILT")),
        Variant::ProcAddressOnly => (
            "CONFORMANCE_SHIM_SO_PROC_ONLY",
            option_env!("CONFORMANCE_SHIM_BUILT_PROC_ONLY"),
        ),
        Variant::NoProcAddress => (
            "CONFORMANCE_SHIM_SO_NO_PROC_ADDRESS",
            option_env!("CONFORMANCE_SHIM_BUILT_NO_PROC_ADDRESS"),
        ),
    };
    let (p, from) = match std::env::var_os(env) {
        Some(p) => (PathBuf::from(p), env.to_string()),
        None => match built {
            Some(b) => (PathBuf::from(b), "the build (build.rs)".to_string()),
            None => {
                return Err(format!(
                    "the mutation library is built on Linux only; set {env} to a libmisbehave built from shim/"
                ))
            }
        },
    };
    if !p.is_file() {
        return Err(format!(
            "the mutation library {} (from {from}) does not exist: on a machine without the build tree, \
             copy it there and set {env}",
            p.display()
        ));
    }
    Ok(p)
}
