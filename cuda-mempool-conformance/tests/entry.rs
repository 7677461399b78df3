//! How the suite reaches the driver (CONFORMANCE_ENTRY): it links no driver symbol, so it starts
//! on any library; it gives the same results whichever way it fills its entry-point table; and a
//! missing driver library is a clear error, not a loader failure.
//!
//! CONFORMANCE_ENTRY_KEEP=DIR keeps each run's report under DIR/<mode>/.

use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

mod common;
use common::report::{self, Trials};
use conformance_model::{Outcome, Report};
const MODES: &[&str] = &["proc-address", "dlsym", "link"];

/// This binary runs the suite (as a child, below), so its symbols are the suite's.
fn links_no_driver_symbol() -> Result<(), Failed> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let nm = match Command::new("nm").args(["-D", "--undefined-only"]).arg(&exe).output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => return Err(format!("nm failed: {}", String::from_utf8_lossy(&o.stderr)).into()),
        Err(e) => return Err(format!("cannot run nm ({e}): install binutils").into()),
    };
    let driver: Vec<&str> = nm
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|s| s.starts_with("cu") && s.chars().nth(2).is_some_and(|c| c.is_ascii_uppercase()))
        .collect();
    if !driver.is_empty() {
        return Err(format!("the suite binary links driver symbols: {}", driver.join(", ")).into());
    }
    let needed = Command::new("readelf")
        .arg("-d")
        .arg(&exe)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .map_err(|e| format!("cannot run readelf ({e}): install binutils"))?;
    if needed.lines().any(|l| l.contains("(NEEDED)") && l.contains("libcuda")) {
        return Err("the suite binary names libcuda as a needed library".into());
    }
    println!("entry: no cu* symbol is undefined in the suite binary and libcuda is not NEEDED");
    Ok(())
}

/// Run the suite with `envs`; its report.
fn run_suite(tag: &str, envs: &[(&str, &str)]) -> Result<Report, String> {
    let keep = std::env::var_os("CONFORMANCE_ENTRY_KEEP").map(PathBuf::from);
    let report = match &keep {
        Some(k) => k.join(tag),
        None => std::env::temp_dir().join(format!("cump-entry-{}-{tag}", std::process::id())),
    };
    let _one = common::one_suite_at_a_time();
    let out = common::suite()?
        .env("CONFORMANCE_REPORT_DIR", &report)
        .envs(envs.iter().copied())
        .output()
        .map_err(|e| format!("cannot run the suite: {e}"))?;
    let read = report::try_read(&report.join("report.json")).map_err(|e| {
        format!(
            "the suite ({tag}) wrote no report ({e}); its stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&report);
    }
    read
}

fn outcomes(r: &Report) -> BTreeMap<String, Outcome> {
    r.trials().iter().map(|t| (t.trial.clone(), t.outcome)).collect()
}

fn same_results_in_every_mode() -> Result<(), Failed> {
    let mut first: Option<(&str, BTreeMap<String, Outcome>)> = None;
    for &mode in MODES {
        let j = run_suite(mode, &[("CONFORMANCE_ENTRY", mode)])?;
        let entry = j.machine.entry.as_deref().unwrap_or("");
        if !entry.starts_with(mode) {
            return Err(format!("the {mode} run's report names its entry path {entry:?}").into());
        }
        let o = outcomes(&j);
        let t = &j.totals;
        println!(
            "entry {mode}: {} passed, {} failed, {} ignored ({entry})",
            t.passed, t.failed, t.ignored
        );
        match &first {
            None => first = Some((mode, o)),
            Some((m0, o0)) => {
                if *o0 != o {
                    let diff: Vec<String> = o0
                        .iter()
                        .filter(|(k, v)| o.get(*k) != Some(*v))
                        .map(|(k, v)| format!("{k}: {v} under {m0}, {:?} under {mode}", o.get(k)))
                        .chain(
                            o.keys()
                                .filter(|k| !o0.contains_key(*k))
                                .map(|k| format!("{k}: only under {mode}")),
                        )
                        .collect();
                    return Err(format!("{m0} and {mode} differ:\n{}", diff.join("\n")).into());
                }
            }
        }
    }
    println!("entry: the three modes gave identical outcomes for every trial");
    Ok(())
}

fn missing_library_is_a_clear_error() -> Result<(), Failed> {
    let bogus = "/nonexistent/libcuda.so.1";
    let j = run_suite("no-library", &[("CUDA_MEMPOOL_SYS_LIBCUDA", bogus)])?;
    let why = j.precondition.clone().flatten().map(|p| p.cause).unwrap_or_default();
    if !why.contains(bogus) || !why.contains("could not be loaded") {
        return Err(format!("with no driver library, the report says {why:?}").into());
    }
    // Said once: one failing trial (suite::preconditions), none counted against an API.
    if j.totals.failed != 1 || j.apis.iter().any(|r| r.failed != 0) {
        return Err(format!("with no driver library the totals are {:?}", j.totals).into());
    }
    println!("entry: without a driver library the report says: {why}");
    Ok(())
}

/// The path of the system's libcuda.so.1, from the loader's cache.
fn system_libcuda() -> Result<String, String> {
    let out = Command::new("/sbin/ldconfig")
        .arg("-p")
        .output()
        .or_else(|_| Command::new("ldconfig").arg("-p").output())
        .map_err(|e| format!("cannot run ldconfig: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.trim_start().starts_with("libcuda.so.1 "))
        .and_then(|l| l.rsplit("=> ").next())
        .map(|p| p.trim().to_string())
        .ok_or_else(|| "no libcuda.so.1 in the loader's cache: install libcuda1 (Debian non-free)".into())
}

/// A libcuda that is not the driver's file, found through CUDA_MEMPOOL_SYS_LIBCUDA (here the
/// system's, copied under another folder: its file name carries no driver version), is a library
/// under test in the report, with its file's sha256: a matrix then tells two builds of a stand-in
/// apart (issue 47 left it "not the driver; no sha256 in the report").
fn stand_in_is_under_test_with_its_sha256() -> Result<(), Failed> {
    let dir = std::env::temp_dir().join(format!("cump-stand-in-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let copy = dir.join("libcuda.so.1");
    std::fs::copy(system_libcuda()?, &copy).map_err(|e| format!("cannot copy libcuda: {e}"))?;
    let copy = copy.display().to_string();
    let sum = Command::new("sha256sum")
        .arg(&copy)
        .output()
        .map_err(|e| format!("cannot run sha256sum: {e}"))?;
    let want = String::from_utf8_lossy(&sum.stdout)
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string();
    let j = run_suite("stand-in", &[("CUDA_MEMPOOL_SYS_LIBCUDA", &copy)]);
    let _ = std::fs::remove_dir_all(&dir);
    let j = j?;
    let libs = j.machine.under_test.as_deref().unwrap_or(&[]);
    let found = libs.iter().find(|l| l.path == copy);
    let Some(l) = found else {
        return Err(format!("the stand-in {copy} is not among the libraries under test: {libs:?}").into());
    };
    let by = l.named_by.as_str();
    let sha = l.file.as_ref().and_then(|f| f.as_ref().ok()).map(|f| f.sha256.as_str());
    if !by.starts_with("the loader") || sha != Some(want.as_str()) {
        return Err(
            format!("the stand-in is recorded as named by {by:?} with sha256 {sha:?}, its file's is {want}").into(),
        );
    }
    println!("entry: a stand-in libcuda is under test, sha256 {}", &want[..12]);
    Ok(())
}

pub fn main() -> ExitCode {
    if let Some(code) = common::run_suite_if_asked() {
        return code;
    }
    let args = Arguments::from_args();
    let trials = vec![
        Trial::test("entry::suite_links_no_driver_symbol", links_no_driver_symbol),
        Trial::test("entry::same_results_in_every_mode", same_results_in_every_mode),
        Trial::test(
            "entry::missing_library_is_a_clear_error",
            missing_library_is_a_clear_error,
        ),
        Trial::test(
            "entry::stand_in_is_under_test_with_its_sha256",
            stand_in_is_under_test_with_its_sha256,
        ),
    ];
    libtest_mimic::run(&args, trials).exit_code()
}
