//! `--expect FILE`: a fleet's inventory, so that a host that never reported cannot drop out of the
//! matrix unseen (aggregators that drop the nodes that never reported are a known fleet failure).
//!
//! The file: one host name (a report's `provenance.host`) or GPU model (a device's name, as
//! `NVIDIA H100 80GB HBM3`) per line, compared without regard to ASCII case; `#` starts a comment
//! to the end of its line; blank lines are skipped. An entry that no readable report has becomes a
//! red `missing` column, and the program's exit code is not zero. A file that cannot be read, is
//! not UTF-8, lists no entry or lists one twice is an error naming the file and the line.

use super::columns::{Column, Expected, Matrix};

/// The entries of `text` (the file `path`), with their lines.
pub(super) fn parse(path: &str, text: &str) -> Result<Vec<(usize, String)>, String> {
    let mut entries: Vec<(usize, String)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let entry = line.split('#').next().unwrap_or("").trim();
        if entry.is_empty() {
            continue;
        }
        if entry.chars().any(char::is_control) {
            return Err(format!(
                "--expect {path}: line {}: {entry:?} has a control character; one host name or GPU model a line",
                i + 1
            ));
        }
        if let Some((first, _)) = entries.iter().find(|(_, e)| e.eq_ignore_ascii_case(entry)) {
            return Err(format!(
                "--expect {path}: line {}: {entry:?} is listed twice (first on line {first})",
                i + 1
            ));
        }
        entries.push((i + 1, entry.to_string()));
    }
    if entries.is_empty() {
        return Err(format!(
            "--expect {path}: lists no host or GPU model (one a line, `#` comments)"
        ));
    }
    Ok(entries)
}

/// The entries of the file `path`.
pub(super) fn read(path: &str) -> Result<Vec<(usize, String)>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("--expect {path}: cannot read it ({e})"))?;
    let text = String::from_utf8(bytes).map_err(|e| format!("--expect {path}: is not UTF-8 text ({e})"))?;
    parse(path, &text)
}

/// Whether `column` has `entry`: a host of one of its runs, or one of its GPU models.
fn has(column: &Column, entry: &str) -> bool {
    column.runs.iter().any(|r| r.host.eq_ignore_ascii_case(entry))
        || column.origin.devices.iter().any(|d| d.eq_ignore_ascii_case(entry))
}

/// Match the entries against the matrix's columns; each missing one becomes a column of its own.
pub(super) fn apply(m: &mut Matrix, entries: &[(usize, String)]) {
    for (line, entry) in entries {
        let columns: Vec<usize> = m
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.missing.is_none() && has(c, entry))
            .map(|(i, _)| i + 1)
            .collect();
        if columns.is_empty() {
            m.columns.push(Column {
                label: format!("{entry} · missing"),
                missing: Some(entry.clone()),
                ..Column::default()
            });
        }
        m.expected.push(Expected {
            entry: entry.clone(),
            line: *line,
            columns,
        });
    }
}
