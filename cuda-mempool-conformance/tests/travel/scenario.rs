//! Running one scenario of the travel test: the suite as a child of this test binary (the tests'
//! shared `common`, and the shim library's variants from `shimlib`, declared here), its report and
//! exit code (`Run`), and the checks and settings every scenario shares.

use conformance_model::{Precondition, Report, Trial};
use std::path::PathBuf;

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/shimlib.rs"]
mod shimlib;
pub(super) use common::report::Trials;
pub(super) use common::run_suite_if_asked;
pub(super) use shimlib::Variant;

/// What a scenario's run came to: its report and exit code.
pub(super) struct Run {
    pub(super) report: Report,
    pub(super) code: Option<i32>,
}

impl Run {
    pub(super) fn trial(&self, name: &str) -> Option<&Trial> {
        self.report.trial(name)
    }
    /// The precondition of the run that did not hold, if one did not.
    pub(super) fn precondition(&self) -> Option<&Precondition> {
        self.report.precondition.as_ref()?.as_ref()
    }
    /// No API has a failure counted against it.
    pub(super) fn no_api_failures(&self) -> Result<(), String> {
        let bad: Vec<String> = (self.report.apis.iter())
            .filter(|a| a.failed != 0)
            .map(|a| format!("{:?} ({} failed)", a.api, a.failed))
            .collect();
        if bad.is_empty() {
            Ok(())
        } else {
            Err(format!("failures counted against APIs: {}", bad.join(", ")))
        }
    }
}

pub(super) fn keep_dir(tag: &str) -> PathBuf {
    match std::env::var_os("CONFORMANCE_TRAVEL_KEEP") {
        Some(k) => PathBuf::from(k).join(tag),
        None => std::env::temp_dir().join(format!("cump-travel-{}-{tag}", std::process::id())),
    }
}

pub(super) fn fake_nvml() -> Result<PathBuf, String> {
    let p = std::env::var_os("CONFORMANCE_FAKE_NVML_SO")
        .map(PathBuf::from)
        .or_else(|| option_env!("CONFORMANCE_FAKE_NVML_BUILT").map(PathBuf::from))
        .ok_or("the fake NVML is built on Linux only; set CONFORMANCE_FAKE_NVML_SO")?;
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!("the fake NVML {} does not exist", p.display()))
    }
}

/// Run the suite under `preload` (a shim variant, if any) with `envs`.
pub(super) fn run(tag: &str, preload: Option<Variant>, envs: &[(&str, String)]) -> Result<Run, String> {
    let dir = keep_dir(tag);
    let mut c = common::suite()?;
    c.env("CONFORMANCE_REPORT_DIR", &dir);
    if let Some(v) = preload {
        c.env("LD_PRELOAD", shimlib::path(v)?);
    }
    c.envs(envs.iter().map(|(k, v)| (*k, v.as_str())));
    let out = c.output().map_err(|e| format!("cannot run the suite: {e}"))?;
    let report = common::report::try_read(&dir.join("report.json")).map_err(|e| {
        format!(
            "{tag}: no report ({e}; exit {:?}); its stderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    Ok(Run {
        report,
        code: out.status.code(),
    })
}

pub(super) fn faults(f: &str) -> (&'static str, String) {
    ("CONFORMANCE_SHIM_FAULTS", f.to_string())
}

/// Fails unless `cond`, with the report's totals and precondition beside `what`.
pub(super) fn need(r: &Run, cond: bool, what: &str) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(format!(
            "{what}; exit {:?}, totals {:?}, precondition {:?}",
            r.code, r.report.totals, r.report.precondition
        ))
    }
}

/// The machine has no GPU (the scenarios that fake one, or rely on cuInit finding none, need that).
pub(super) fn no_gpu() -> bool {
    !std::path::Path::new("/dev/nvidia0").exists()
}
