//! matrix.md: the API × column grid first (each column's Test Passed, then Supported), the columns
//! (their runs, hosts and what differs), the expected inventory, the causes per column, and the
//! trials that differ or fail.

use super::{Column, Matrix};
use conformance_model::Outcome;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// What a missing column shows in every cell.
pub(super) const MISSING: &str = "missing";

impl Matrix {
    /// The trials whose outcome is not the same in every column, or that failed somewhere.
    pub(super) fn notable(&self) -> Vec<&String> {
        self.trials
            .iter()
            .filter(|t| {
                let o: BTreeSet<Option<&str>> = self
                    .columns
                    .iter()
                    .filter(|c| c.missing.is_none())
                    .map(|c| c.trials.get(*t).map(|x| x.outcome.as_str()))
                    .collect();
                o.len() > 1 || o.contains(&Some(Outcome::Failed.as_str()))
            })
            .collect()
    }

    /// Every API index any column has, in order, with its name.
    pub(super) fn api_index(&self) -> Vec<(Option<u64>, String)> {
        let s: BTreeSet<(Option<u64>, String)> = self
            .columns
            .iter()
            .flat_map(|c| c.apis.iter().map(|a| (a.index, a.api.clone())))
            .collect();
        s.into_iter().collect()
    }

    /// matrix.md.
    pub fn markdown(&self) -> String {
        let mut s = String::from("# Conformance matrix\n\n");
        s += "Test Passed: ✓ every trial of the API that applies was judged, in every run of the column, and \
              none failed; ◐ k/n judged: only k of its n trials were (the others interrupted or absent from a \
              run); ✗ a failure is held against it; — no trial of it could ask a device.\n";
        s += "\n## APIs: Test Passed / Supported\n\n| Index | API |";
        for i in 1..=self.columns.len() {
            write!(s, " c{i} |").unwrap();
        }
        s += "\n|---|---|";
        s += &"---|".repeat(self.columns.len());
        s += "\n";
        for (index, api) in self.api_index() {
            write!(s, "| {} | {api} |", index.map_or("—".into(), |i| i.to_string())).unwrap();
            for c in &self.columns {
                let a = c.apis.iter().find(|a| a.index == index && a.api == api);
                let cell = match (a, &c.missing) {
                    (_, Some(_)) => format!("**{MISSING}**"),
                    (Some(a), None) => format!("{} / {}", a.test_passed, a.supported),
                    (None, None) => String::new(),
                };
                write!(s, " {cell} |").unwrap();
            }
            s += "\n";
        }
        s += "\n## Columns\n\n";
        for (i, c) in self.columns.iter().enumerate() {
            column(&mut s, i, c);
        }
        self.inventory(&mut s);
        s += "\n## Causes of failures\n";
        for (i, c) in self.columns.iter().enumerate().filter(|(_, c)| c.missing.is_none()) {
            writeln!(s, "\n### c{}: {}\n", i + 1, c.label).unwrap();
            if c.causes.is_empty() {
                s += "none\n";
            }
            for cause in &c.causes {
                writeln!(s, "- {} × {}", cause.count, cause.text).unwrap();
            }
        }
        let notable = self.notable();
        writeln!(
            s,
            "\n## Trials that differ between columns or fail ({})\n",
            notable.len()
        )
        .unwrap();
        s += "| Trial |";
        for i in 1..=self.columns.len() {
            write!(s, " c{i} |").unwrap();
        }
        s += "\n|---|";
        s += &"---|".repeat(self.columns.len());
        s += "\n";
        for t in notable {
            write!(s, "| `{t}` |").unwrap();
            for c in &self.columns {
                let o = match (&c.missing, c.trials.get(t)) {
                    (Some(_), _) => MISSING,
                    (None, Some(x)) => x.outcome.as_str(),
                    (None, None) => "absent",
                };
                write!(s, " {o} |").unwrap();
            }
            s += "\n";
        }
        s
    }

    /// The `--expect` entries and the reports that could not be read, where there are any.
    fn inventory(&self, s: &mut String) {
        if !self.expected.is_empty() {
            s.push_str("\n## Expected hosts and GPU models (`--expect`)\n\n");
            for e in &self.expected {
                let cols: Vec<String> = e.columns.iter().map(|c| format!("c{c}")).collect();
                let at = if cols.is_empty() {
                    format!("**{MISSING}**: no readable report")
                } else {
                    cols.join(", ")
                };
                writeln!(s, "- {} (line {}): {at}", e.entry, e.line).unwrap();
            }
        }
        if !self.unreadable.is_empty() {
            s.push_str("\n## Reports that could not be read\n\n");
            for u in &self.unreadable {
                writeln!(s, "- {}: {}", u.path, u.why).unwrap();
            }
        }
    }
}

/// One column's entry in the list of columns.
fn column(s: &mut String, i: usize, c: &Column) {
    if let Some(entry) = &c.missing {
        writeln!(
            s,
            "- **c{}**: **{MISSING}**: {entry}, expected, has no readable report",
            i + 1
        )
        .unwrap();
        return;
    }
    let totals: Vec<String> = c.totals.iter().map(|(o, n)| format!("{n} {o}")).collect();
    writeln!(
        s,
        "- **c{}**: {} ({}): {}; {}; {} run(s) on {} host(s), from {}",
        i + 1,
        c.label,
        c.date,
        totals.join(", "),
        c.origin.settings_text(),
        c.runs.len(),
        c.hosts,
        c.reports.join(", ")
    )
    .unwrap();
    for d in &c.differs {
        let shown: Vec<&str> = d.trials.iter().take(5).map(String::as_str).collect();
        let more = d.trials.len().saturating_sub(shown.len());
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        writeln!(
            s,
            "  - differs: {}: {} trial(s): {}{more}",
            d.run,
            d.trials.len(),
            shown.join(", ")
        )
        .unwrap();
    }
}
