//! The run's one report (`model::Report`), built once from its machine, its records and what the
//! run knows of itself (`Facts`), its causes opened by where the library broke for good
//! (`broken`): report.json is its serialisation (`Report::to_json_text`), and report.md, JUnit,
//! the last screen and the timeline are drawn from it.

use crate::harness::machine::Machine;
use crate::harness::outcome::Record;
use crate::harness::settings::Partition;
use crate::report::{broken, causes, tables};
use conformance_model::{self as model, Extra, Report};
use std::time::SystemTime;

/// What the report says of the run beside its machine and records.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// When the report was written: "2026-11-25 18:28:57 UTC" (`date`), and the same instant in
    /// RFC 3339 (the provenance's `finished`).
    pub date: String,
    pub finished: String,
    pub wall_s: f64,
    /// Worker processes.
    pub workers: usize,
    /// The driver version and branch the declared departures were judged by.
    pub driver: (String, Option<u32>),
    /// CONFORMANCE_STRICT=documented.
    pub strict: bool,
    /// The shard this run was (CONFORMANCE_PARTITION=k/n).
    pub partition: Option<Partition>,
    /// The suite's own footprint on the device, where NVML could list it (issue 47).
    pub footprint: Option<model::Footprint>,
    /// The library's long wait at each new process's first GPU work and the run's plan for it
    /// (issue 58).
    pub first_wait: Option<model::FirstWait>,
}

impl Facts {
    /// The run's facts now, at its end; `strict`: CONFORMANCE_STRICT=documented, as the run's settings say.
    pub fn now(wall_s: f64, workers: usize, partition: Option<Partition>, strict: bool) -> Facts {
        let now = SystemTime::now();
        let (version, branch) = crate::driver::departures::driver();
        Facts {
            date: utc(now),
            finished: crate::harness::provenance::rfc3339(now),
            wall_s,
            workers,
            driver: (version.to_string(), branch),
            strict,
            partition,
            footprint: None,
            first_wait: None,
        }
    }
}

/// UTC date-time without a date crate ("2026-11-25 18:28:57 UTC").
fn utc(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = crate::harness::provenance::civil(t);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} UTC")
}

/// Now, as report.md's date says it ("2026-11-25 18:28:57 UTC").
pub fn now_utc() -> String {
    utc(SystemTime::now())
}

/// The report of a run on `m` whose trials came to `records` (in any order: the report lists
/// them by name).
pub fn report(m: &Machine, records: &[Record], f: &Facts) -> Report {
    let rows = tables::rows(m, records);
    let mut trials: Vec<&Record> = records.iter().collect();
    trials.sort_by(|a, b| a.trial.cmp(&b.trial));
    let broken = crate::harness::precondition::broken(m);
    let trials: Vec<model::Trial> = trials.into_iter().map(trial).collect();
    // The failures by cause, opened by the point where the library broke for good, if it did.
    let causes = broken::opening(&trials)
        .into_iter()
        .chain(causes::groups(records))
        .collect();
    Report {
        provenance: Some(provenance(m, &f.finished)),
        date: Some(f.date.clone()),
        wall_s: Some(f.wall_s),
        workers: f.workers as u64,
        footprint: f.footprint.clone(),
        first_wait: f.first_wait.clone(),
        machine: m.answer(),
        driver_version: Some(m.driver_version),
        cu_init: m.cu_init,
        totals: tables::totals(&rows),
        driver: Some(f.driver.0.clone()),
        driver_branch: Some(f.driver.1.map(u64::from)),
        driver_source: Some(m.identity().source.clone()),
        strict: Some(f.strict),
        precondition: Some(broken.map(|b| model::Precondition {
            what: b.which.what().to_string(),
            cause: b.cause,
            fix: b.fix,
            extra: Extra::new(),
        })),
        not_reached: Some(m.not_reached()),
        deviations: Some(tables::departures(records)),
        apis: rows.iter().filter(|r| r.group.api().is_some()).map(api_row).collect(),
        groups: rows.iter().filter(|r| r.group.api().is_none()).map(group_row).collect(),
        sets: Some(
            tables::sets(m, records)
                .into_iter()
                .map(|(title, rows)| model::Set {
                    title,
                    apis: rows.iter().map(set_row).collect(),
                    extra: Extra::new(),
                })
                .collect(),
        ),
        causes: Some(causes),
        partition: Some(f.partition.map(|Partition { k, n }| model::Partition {
            k,
            n,
            by: "count".to_string(),
            extra: Extra::new(),
        })),
        trials: Some(trials),
        extra: Extra::new(),
    }
}

/// The provenance the probe gathered, with what the report adds: when it was written, how the suite
/// reached the driver, the driver, the devices and the libraries under test.
fn provenance(m: &Machine, finished: &str) -> model::Provenance {
    model::Provenance {
        run: m.provenance().clone(),
        finished: finished.to_string(),
        entry: m.entry().to_string(),
        driver: m.identity().version.clone(),
        devices: m
            .devices
            .iter()
            .map(|d| model::ProvenanceDevice {
                ordinal: d.ordinal,
                name: d.name.clone(),
                uuid: d.uuid.clone().unwrap_or_default(),
                pci_bus_id: d.pci_bus_id.clone().unwrap_or_default(),
                extra: Extra::new(),
            })
            .collect(),
        libraries: m
            .under_test()
            .iter()
            .map(|l| model::Library {
                path: l.path.clone(),
                named_by: l.named_by.clone(),
                file: l.file.as_ref().and_then(|f| f.as_ref().ok()).cloned(),
                error: l.file.as_ref().and_then(|f| f.as_ref().err()).cloned(),
                extra: Extra::new(),
            })
            .collect(),
    }
}

fn api_row(r: &tables::Row) -> model::ApiRow {
    model::ApiRow {
        index: r.group.api().map(u64::from),
        api: r.name.clone(),
        supported: r.supported.clone(),
        test_passed: r.verdict().to_string(),
        passed: r.passed as u64,
        failed: r.failed as u64,
        ignored: r.ignored as u64,
        changed: r.changed as u64,
        known_departures: Some(r.known as u64),
        expected_failures: Some(r.expected as u64),
        flaky: Some(r.flaky as u64),
        secs: r.secs,
        extra: Extra::new(),
    }
}

fn group_row(r: &tables::Row) -> model::GroupRow {
    model::GroupRow {
        group: r.group.label(),
        test_passed: r.verdict().to_string(),
        passed: r.passed as u64,
        failed: r.failed as u64,
        ignored: r.ignored as u64,
        secs: r.secs,
        extra: Extra::new(),
    }
}

fn set_row(r: &tables::Row) -> model::SetRow {
    model::SetRow {
        index: r.group.api().map(u64::from),
        api: r.name.clone(),
        test_passed: r.verdict().to_string(),
        passed: r.passed as u64,
        failed: r.failed as u64,
        ignored: r.ignored as u64,
        changed: r.changed as u64,
        known_departures: Some(r.known as u64),
        supported: Some(r.supported.clone()),
        expected_failures: Some(r.expected as u64),
        secs: Some(r.secs),
        extra: Extra::new(),
    }
}

/// One trial of the report: the record's facts as they are (what each holds, and when `calls`,
/// `cause` and `timing` are there, is `harness::outcome::Record`'s setters' to say).
fn trial(r: &Record) -> model::Trial {
    r.facts().clone()
}
