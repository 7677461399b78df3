//! A report as the matrix reads it (through the model, `conformance_model`; a field a report lacks is left out,
//! never an error), and its origin: the GPU models, the driver, the library under test, the entry
//! mode and the settings, what tells columns apart.
//!
//! The library under test is named by its file and the short sha256 of it whenever it is not the
//! NVIDIA driver, however it was loaded: LD_PRELOAD, CONFORMANCE_LIBRARY, or a file standing in for
//! libcuda on the library path or through CUDA_MEMPOOL_SYS_LIBCUDA (the report records each with
//! its file's sha256, `machine.under_test[].file`; a report older than the stand-ins' entry there
//! has their path only, in `machine.resolved`, `machine.libcuda` and the run's environment: the
//! label says there is no sha256). The driver is a file `libcuda.so.VERSION` of the driver's version
//! (`identity::is_driver_file`; the soname libcuda.so.1 resolved); anything else is not the driver,
//! whatever its name.

use super::rows::{ApiRow, CauseRow, Cell};
use crate::harness::identity::is_driver_file;
use crate::harness::machine::NOTHING;
use conformance_model as model;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Where a report came from: what tells columns apart.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Origin {
    /// Each device's name (its GPU model).
    pub devices: Vec<String>,
    pub driver: String,
    /// The library under test, or the driver's file.
    pub library: String,
    /// Whether `library` is the NVIDIA driver.
    pub is_driver: bool,
    pub entry: String,
    /// The run's settings: its CONFORMANCE_* variables but those that only say where output goes.
    pub settings: Vec<(String, String)>,
}

/// Variables that say where output goes or how it is shown, not what is judged; the shards' own
/// (CONFORMANCE_PARTITION) are put back together by `fold`.
const NOT_SETTINGS: &[&str] = &[
    "CONFORMANCE_REPORT_DIR",
    "CONFORMANCE_JUNIT",
    "CONFORMANCE_VERBOSE",
    "CONFORMANCE_DEVICE_LOCK",
    "CONFORMANCE_PARTITION",
];

/// The variable through which the crate opens another file than libcuda.so.1.
const LIBCUDA_VAR: &str = "CUDA_MEMPOOL_SYS_LIBCUDA";

/// How many hex digits of a sha256 a label shows.
const SHORT_SHA: usize = 12;

pub(super) fn file_name(p: &str) -> String {
    Path::new(p)
        .file_name()
        .map_or(p.to_string(), |f| f.to_string_lossy().into_owned())
}

/// `name (sha256 0123456789ab)`, or why there is no sha256.
fn with_sha(name: &str, sha: Option<&str>) -> String {
    match sha.filter(|s| !s.is_empty()) {
        Some(s) => format!("{name} (sha256 {})", &s[..s.len().min(SHORT_SHA)]),
        None => format!("{name} (not the driver; no sha256 in the report)"),
    }
}

/// The library under test in words, and whether it is the driver.
fn library(r: &model::Report, driver: &str) -> (String, bool) {
    let m = &r.machine;
    let under_test: Vec<String> = m
        .under_test
        .iter()
        .flatten()
        .map(|u| {
            let sha = match &u.file {
                Some(Ok(f)) => Some(f.sha256.clone()),
                _ => r
                    .provenance
                    .iter()
                    .flat_map(|p| &p.libraries)
                    .find(|l| l.path == u.path)
                    .and_then(|l| l.file.as_ref().map(|f| f.sha256.clone())),
            };
            with_sha(&file_name(&u.path), sha.as_deref())
        })
        .collect();
    if !under_test.is_empty() {
        return (under_test.join(" + "), false);
    }
    // No library named: the files the APIs resolved to and the one CUDA_MEMPOOL_SYS_LIBCUDA named;
    // any that is not the driver's is the library under test. Those paths are as the loader named
    // them, links unresolved: a libcuda.so.1 beside the driver's file (`machine.libcuda`, resolved)
    // is the driver's own link.
    let libcuda = m
        .libcuda
        .as_deref()
        .filter(|l| !l.is_empty() && *l != "unknown" && *l != "none");
    let driver_dir = libcuda
        .filter(|l| is_driver_file(&file_name(l), driver))
        .and_then(|l| Path::new(l).parent());
    let is_driver = |p: &str| {
        let name = file_name(p);
        is_driver_file(&name, driver) || (name.starts_with("libcuda.so") && Path::new(p).parent() == driver_dir)
    };
    let apis: Vec<&str> = crate::driver::APIS.iter().map(|a| a.1).collect();
    let mut stand_ins: Vec<String> = m
        .resolved
        .iter()
        .flatten()
        .filter(|(symbol, o)| apis.contains(&symbol.as_str()) && o != NOTHING && o != "unknown")
        .map(|(_, o)| o)
        .chain(
            r.provenance
                .iter()
                .flat_map(|p| &p.run.environment)
                .filter(|(k, v)| k == LIBCUDA_VAR && !v.is_empty())
                .map(|(_, v)| v),
        )
        .filter(|p| !is_driver(p))
        .map(|p| with_sha(&file_name(p), None))
        .collect();
    stand_ins.sort();
    stand_ins.dedup();
    if !stand_ins.is_empty() {
        return (stand_ins.join(" + "), false);
    }
    match libcuda {
        Some(l) if is_driver_file(&file_name(l), driver) => (file_name(l), true),
        Some(l) => (with_sha(&file_name(l), None), false),
        None => ("?".into(), false),
    }
}

impl Origin {
    pub(super) fn of(r: &model::Report) -> Origin {
        let m = &r.machine;
        let known = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let driver = r
            .driver
            .as_deref()
            .and_then(known)
            .or_else(|| m.identity.as_ref().and_then(|i| known(&i.version)))
            .or_else(|| {
                r.driver_version
                    .and_then(|v| u64::try_from(v).ok())
                    .map(|v| format!("CUDA {v}"))
            })
            .unwrap_or_else(|| "?".into());
        let (library, is_driver) = library(r, &driver);
        let entry = m.entry.as_deref().unwrap_or("?");
        let settings = r
            .provenance
            .iter()
            .flat_map(|p| &p.run.environment)
            .filter(|(k, _)| k.starts_with("CONFORMANCE_") && !NOT_SETTINGS.contains(&k.as_str()))
            .cloned()
            .collect();
        Origin {
            devices: m.devices.iter().map(|d| d.name.clone()).collect(),
            driver,
            library,
            is_driver,
            entry: entry.split(" (").next().unwrap_or(entry).to_string(),
            settings,
        }
    }

    /// "GPU · driver · library · entry".
    pub fn label(&self) -> String {
        let devices = if self.devices.is_empty() {
            "no device".to_string()
        } else {
            self.devices.join(" + ")
        };
        format!("{devices} · {} · {} · {}", self.driver, self.library, self.entry)
    }

    /// The settings in words: `NAME=value, …`, or "default settings".
    pub fn settings_text(&self) -> String {
        if self.settings.is_empty() {
            return "default settings".into();
        }
        let s: Vec<String> = self.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        s.join(", ")
    }
}

/// A report as the matrix reads it.
pub(super) struct Report {
    pub path: String,
    pub origin: Origin,
    pub partition: Option<(usize, usize)>,
    pub host: String,
    pub uuids: Vec<String>,
    pub date: String,
    pub apis: Vec<ApiRow>,
    pub causes: Vec<CauseRow>,
    pub trials: BTreeMap<String, Cell>,
}

impl Report {
    pub(super) fn of(path: &str, r: &model::Report) -> Result<Report, String> {
        let trials = r
            .trials
            .as_deref()
            .ok_or_else(|| format!("--matrix: {path} has no trials (is it a conformance report.json?)"))?;
        let host = r
            .provenance
            .as_ref()
            .map(|p| p.run.host.clone())
            .or_else(|| r.machine.provenance.as_ref().map(|p| p.host.clone()))
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "?".into());
        Ok(Report {
            path: path.to_string(),
            origin: Origin::of(r),
            partition: r.shard(),
            host,
            uuids: r.machine.devices.iter().filter_map(|d| d.uuid.clone()).collect(),
            date: r.date.clone().unwrap_or_default(),
            apis: r.apis.iter().map(ApiRow::from).collect(),
            causes: r
                .causes
                .iter()
                .flatten()
                // The break's entry lists failures its causes below list again.
                .filter(|c| c.broken.is_none())
                .map(|c| CauseRow {
                    text: c.text.clone(),
                    count: c.count as usize,
                    trials: c.trials.clone(),
                })
                .collect(),
            trials: trials
                .iter()
                .map(|t| {
                    let cell = Cell {
                        outcome: t.outcome.as_str().to_string(),
                        message: t.message.clone(),
                        api: t.api,
                        not_in: 0,
                    };
                    (t.trial.clone(), cell)
                })
                .collect(),
        })
    }
}

pub(super) fn load(path: &str) -> Result<Report, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--matrix: cannot read {path}: {e}"))?;
    let r: model::Report = serde_json::from_str(&text).map_err(|e| format!("--matrix: {path} is not JSON ({e})"))?;
    Report::of(path, &r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_is_its_installed_file_of_its_version() {
        assert!(is_driver_file("libcuda.so.580.159.04", "580.159.04"));
        assert!(is_driver_file("libcuda.so.580.159.04", "?"));
        assert!(
            !is_driver_file("libcuda.so.1", "580.159.04"),
            "the soname, unresolved: a stand-in"
        );
        assert!(!is_driver_file("libcuda.so.570.1", "580.159.04"));
        assert!(!is_driver_file("libmisbehave.so", "?"));
    }
}
