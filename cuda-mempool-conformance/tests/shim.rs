//! The suite against a misbehaving libcuda: shim/misbehave.c, loaded with LD_PRELOAD, breaks three
//! APIs on purpose (824 and 833 return wrong codes, 827 returns garbage flags). This test runs the
//! whole suite under it, in a child, and checks that the report marks exactly those APIs as not
//! passing (on a machine without a GPU only the before-cuInit and no-device trials run, which
//! catch 824 and 833 but cannot reach 827's garbage output).
//!
//! CONFORMANCE_SHIM_SO=path uses a prebuilt shim (e.g. on a GPU machine without a C compiler);
//! otherwise the shim is compiled with $CC (default `cc`) into a temporary directory.

use libtest_mimic::{Arguments, Failed, Trial};
use std::path::PathBuf;
use std::process::{Command, ExitCode};

const RUN_SUITE: &str = "CONFORMANCE_SHIM_RUN_SUITE";
const SHIM_SOURCE: &str = include_str!("../shim/misbehave.c");

fn shim() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("CONFORMANCE_SHIM_SO") {
        return Ok(PathBuf::from(p));
    }
    let dir = std::env::temp_dir().join(format!("cump-shim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let src = dir.join("misbehave.c");
    std::fs::write(&src, SHIM_SOURCE).map_err(|e| e.to_string())?;
    let so = dir.join("libmisbehave.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-o"])
        .arg(&so)
        .arg(&src)
        .arg("-ldl")
        .output()
        .map_err(|e| {
            format!("cannot run the C compiler `{cc}` ({e}): install gcc, set CC, or set CONFORMANCE_SHIM_SO")
        })?;
    if !out.status.success() {
        return Err(format!(
            "compiling the shim failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(so)
}

fn check() -> Result<(), Failed> {
    let so = shim()?;
    let report = std::env::temp_dir().join(format!("cump-shim-report-{}", std::process::id()));
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .env(RUN_SUITE, "1")
        .env("LD_PRELOAD", &so)
        .env("CONFORMANCE_REPORT_DIR", &report)
        .env_remove("CONFORMANCE_REQUIRE")
        .arg("--test-threads=4")
        .output()
        .map_err(|e| format!("cannot run the suite: {e}"))?;
    let text = std::fs::read_to_string(report.join("report.json")).map_err(|e| {
        format!(
            "the suite under the shim wrote no report ({e}); its stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let _ = std::fs::remove_dir_all(&report);
    let j: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let failing: Vec<u64> = j["apis"]
        .as_array()
        .ok_or("report has no apis")?
        .iter()
        .filter(|a| a["test_passed"] != "✓")
        .filter_map(|a| a["index"].as_u64())
        .collect();
    let gpu = j["cuInit"] == 0;
    let expected: Vec<u64> = if gpu { vec![824, 827, 833] } else { vec![824, 833] };
    for a in j["apis"].as_array().unwrap() {
        println!(
            "  {} {}: {} ({} passed, {} failed)",
            a["index"], a["api"], a["test_passed"], a["passed"], a["failed"]
        );
    }
    if failing == expected {
        println!(
            "shim: the report marks exactly {expected:?} as not passing ({})",
            if gpu { "GPU" } else { "no GPU" }
        );
        Ok(())
    } else {
        Err(format!("the report marks {failing:?} as not passing; the shim breaks {expected:?}").into())
    }
}

fn main() -> ExitCode {
    if std::env::var_os(RUN_SUITE).is_some() {
        return conformance::suite::main();
    }
    let args = Arguments::from_args();
    let trials = vec![Trial::test("shim::report_marks_exactly_the_broken_apis", check)];
    libtest_mimic::run(&args, trials).exit_code()
}
