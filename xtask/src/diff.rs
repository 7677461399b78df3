//! `cargo xtask diff OLD.json NEW.json`: what changed between two conformance reports, the suite's
//! own `--diff` run through cargo; exit status 1 when the new report regressed (see docs/ci.md).

use crate::exec::suite_mode;
use std::path::Path;

/// `cargo xtask diff OLD NEW`: the suite's `--diff` (see docs/ci.md).
pub fn diff(root: &Path, old: &str, new: &str) -> Result<(), String> {
    let abs = |p: &str| {
        std::fs::canonicalize(p)
            .map(Into::into)
            .map_err(|e| format!("{p}: {e}"))
    };
    let status = suite_mode(root, "--diff", &[abs(old)?, abs(new)?])?;
    match status.code() {
        Some(0) => Ok(()),
        Some(1) => Err("the new report regressed (see the table above)".into()),
        _ => Err(format!("the diff could not be made ({status})")),
    }
}
