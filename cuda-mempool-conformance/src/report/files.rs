//! Where a run's report goes (CONFORMANCE_REPORT_DIR) and the files it writes there, each drawn from
//! the one report: report.md, report.json and timeline.svg.

use crate::report::timeline::{self, Bar};
use conformance_model::Report;
use std::path::{Path, PathBuf};

/// CONFORMANCE_REPORT_DIR (of `settings`), else `conformance-report/` under the cargo target dir this
/// binary was built in (found from its own path at run time), else under the current directory.
pub fn report_dir(settings: &crate::harness::settings::Settings) -> PathBuf {
    if let Some(d) = settings.report_dir.clone() {
        return d;
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

/// report.md, report.json and timeline.svg (of `bars`, the report's trials that ran) in `dir`.
pub fn write(dir: &Path, r: &Report, bars: &[Bar]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("report.md"), crate::report::markdown::render(r))?;
    std::fs::write(dir.join("report.json"), r.to_json_text())?;
    let title = format!("conformance run of {}", r.date.as_deref().unwrap_or_default());
    timeline::write(dir, bars, r.wall_s, &title)
}
