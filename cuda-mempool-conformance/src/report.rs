//! The report: one row per API (PhOS table style), printed and written as Markdown and JSON.

use crate::harness::Record;
use crate::probe::Machine;
use std::fmt::Write as _;
use std::path::PathBuf;

pub struct Row {
    pub index: u32,
    pub api: &'static str,
    pub supported: bool,
    pub passed: usize,
    pub failed: usize,
    pub ignored: usize,
}
impl Row {
    /// ✓ when every case that ran passed and at least one ran; ✗ on any failure; – when none ran.
    pub fn verdict(&self) -> &'static str {
        if self.failed > 0 {
            "✗"
        } else if self.passed > 0 {
            "✓"
        } else {
            "–"
        }
    }
}

pub fn rows(m: &Machine, records: &[Record]) -> Vec<Row> {
    crate::APIS
        .iter()
        .map(|(idx, api)| {
            let rs = records.iter().filter(|r| r.api == *idx);
            let count = |o: &str| rs.clone().filter(|r| r.outcome == o).count();
            Row {
                index: *idx,
                api,
                supported: m.exported.iter().any(|(i, e)| i == idx && *e),
                passed: count("passed"),
                failed: count("failed"),
                ignored: count("ignored"),
            }
        })
        .collect()
}

/// CONFORMANCE_REPORT_DIR, else `conformance-report/` under the cargo target dir this binary was
/// built in (found from its own path at run time), else under the current directory.
pub fn report_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CONFORMANCE_REPORT_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let exe = std::env::current_exe().ok();
    let target = exe
        .as_deref()
        .and_then(|e| e.ancestors().find(|a| a.file_name().is_some_and(|n| n == "target")));
    match target {
        Some(t) => t.join("conformance-report"),
        None => PathBuf::from("conformance-report"),
    }
}

pub fn markdown(m: &Machine, rows: &[Row], records: &[Record], date: &str, wall_s: f64) -> String {
    let mut s = String::new();
    writeln!(s, "# CUDA stream-ordered allocator conformance\n").unwrap();
    writeln!(s, "Date: {date}. Wall time: {wall_s:.1} s.\n").unwrap();
    writeln!(s, "```\n{}```\n", m.summary()).unwrap();
    writeln!(
        s,
        "| Index | API | Supported | Test Passed | passed | failed | ignored |"
    )
    .unwrap();
    writeln!(s, "|---|---|---|---|---|---|---|").unwrap();
    for r in rows {
        writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.index,
            r.api,
            if r.supported { "✓" } else { "✗" },
            r.verdict(),
            r.passed,
            r.failed,
            r.ignored
        )
        .unwrap();
    }
    let (p, f, i) = rows
        .iter()
        .fold((0, 0, 0), |a, r| (a.0 + r.passed, a.1 + r.failed, a.2 + r.ignored));
    writeln!(s, "\nTotal: {p} passed, {f} failed, {i} ignored.").unwrap();
    let mut failed: Vec<&Record> = records.iter().filter(|r| r.outcome == "failed").collect();
    failed.sort_by(|a, b| a.trial.cmp(&b.trial));
    if !failed.is_empty() {
        writeln!(s, "\n## Failed\n").unwrap();
        for r in failed {
            writeln!(s, "- `{}`: {}", r.trial, r.message.replace('\n', " ")).unwrap();
        }
    }
    let mut ignored: Vec<&Record> = records.iter().filter(|r| r.outcome == "ignored").collect();
    ignored.sort_by(|a, b| a.trial.cmp(&b.trial));
    if !ignored.is_empty() {
        writeln!(s, "\n## Ignored (with reasons)\n").unwrap();
        for r in ignored {
            writeln!(s, "- `{}`: {}", r.trial, r.message).unwrap();
        }
    }
    let mut passed: Vec<&Record> = records.iter().filter(|r| r.outcome == "passed").collect();
    passed.sort_by(|a, b| a.trial.cmp(&b.trial));
    writeln!(s, "\n## Passed\n").unwrap();
    for r in passed {
        writeln!(s, "- `{}`", r.trial).unwrap();
    }
    s
}

pub fn json(m: &Machine, rows: &[Row], records: &[Record], date: &str, wall_s: f64) -> serde_json::Value {
    let mut recs: Vec<&Record> = records.iter().collect();
    recs.sort_by(|a, b| a.trial.cmp(&b.trial));
    serde_json::json!({
        "date": date,
        "wall_s": wall_s,
        "driver_version": m.driver_version,
        "libcuda": m.libcuda,
        "cuInit": m.init,
        "devices": m.devices.iter().map(|d| serde_json::json!({
            "ordinal": d.ordinal, "name": d.name, "compute_capability": format!("{}.{}", d.cc.0, d.cc.1),
            "total_mem": d.total_mem, "memory_pools": d.pools, "handle_types": d.handle_types,
            "host_pools": d.host_pools, "host_numa_pools": d.host_numa_pools, "fabric": d.fabric,
        })).collect::<Vec<_>>(),
        "peer": m.peer,
        "cuda13_selectors": m.selectors,
        "apis": rows.iter().map(|r| serde_json::json!({
            "index": r.index, "api": r.api, "supported": r.supported, "test_passed": r.verdict(),
            "passed": r.passed, "failed": r.failed, "ignored": r.ignored,
        })).collect::<Vec<_>>(),
        "trials": recs.iter().map(|r| serde_json::json!({
            "trial": r.trial, "api": r.api, "outcome": r.outcome, "message": r.message,
        })).collect::<Vec<_>>(),
    })
}

/// UTC date-time without a date crate: from the system clock.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86400, secs % 86400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!(
        "{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
