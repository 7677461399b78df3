//! `cargo xtask expectations prune EXPECT.toml REPORT.json… [--write]`: the entries of an
//! expectation file (CONFORMANCE_EXPECT) that no report of the set needed, listed, and with
//! `--write` removed from the file.
//!
//! An entry was needed where a report shows its trial as the entry made it, read from the trial's
//! typed fields: its outcome an expected failure (`[[deviation]]`) or flaky (`[[flaky]]`), and its
//! `expected_by` this file (by name) and the entry's line. Where the trial passed, was not run, or
//! the entry's selectors did not match (the trial then failed, or passed, unexpected), the report
//! did not need it; nor did a report from before trials named their entry. The reports must come
//! from runs with this version of the file (the lines must agree).

use conformance_model::{Outcome, Report, Trial};
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    deviation: Vec<Entry>,
    #[serde(default)]
    flaky: Vec<Entry>,
}

/// The part of an entry prune reads; the suite checks the rest.
#[derive(Deserialize)]
struct Entry {
    trial: toml::Spanned<String>,
}

/// One entry of the file: its table, trial and the line of its `trial` key.
#[derive(Debug, PartialEq, Eq)]
struct Listed {
    table: &'static str,
    trial: String,
    line: usize,
}

impl Listed {
    /// The outcome the entry gives its trial in report.json.
    fn outcome(&self) -> Outcome {
        if self.table == "deviation" {
            Outcome::ExpectedFailure
        } else {
            Outcome::Flaky
        }
    }
    /// Whether it made trial `t` what it is: `t`'s outcome its own, `t` decided by this line of a
    /// file named `file_name`.
    fn decided(&self, file_name: &str, t: &Trial) -> bool {
        t.trial == self.trial
            && t.outcome == self.outcome()
            && t.expected_by.as_ref().is_some_and(|by| {
                by.line == self.line as u64 && Path::new(&by.file).file_name().is_some_and(|n| n == file_name)
            })
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn listed(path: &str, text: &str) -> Result<Vec<Listed>, String> {
    let f: File = toml::from_str(text).map_err(|e| format!("{path}: {e}"))?;
    let of = |table: &'static str, v: Vec<Entry>| {
        v.into_iter()
            .map(move |e| Listed {
                table,
                line: line_of(text, e.trial.span().start),
                trial: e.trial.into_inner(),
            })
            .collect::<Vec<_>>()
    };
    let mut all = of("deviation", f.deviation);
    all.extend(of("flaky", f.flaky));
    all.sort_by_key(|l| l.line);
    Ok(all)
}

/// Whether `report` needed `e` of the file named `file_name`.
fn needed(e: &Listed, file_name: &str, report: &Report) -> bool {
    report.trials.iter().flatten().any(|t| e.decided(file_name, t))
}

/// `text` without the tables whose `trial` key is on one of `lines`: from each one's `[[…]]` header
/// to the next header, keeping the comments just above that next header (they describe it).
fn without(text: &str, lines: &[usize]) -> String {
    let all: Vec<&str> = text.lines().collect();
    let header = |l: &str| l.trim_start().starts_with('[');
    let mut drop = vec![false; all.len()];
    for &line in lines {
        let Some(start) = (0..line.min(all.len())).rev().find(|&i| header(all[i])) else {
            continue;
        };
        let next = (start + 1..all.len()).find(|&i| header(all[i])).unwrap_or(all.len());
        let mut end = next;
        while end > start + 1 && all[end - 1].trim_start().starts_with('#') {
            end -= 1;
        }
        drop[start..end].iter_mut().for_each(|d| *d = true);
    }
    let mut out: String = all
        .iter()
        .zip(&drop)
        .filter(|(_, d)| !**d)
        .map(|(l, _)| format!("{l}\n"))
        .collect();
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// `prune EXPECT.toml REPORT.json… [--write]`.
pub fn main(args: &[String]) -> Result<(), String> {
    let usage = "usage: cargo xtask expectations prune EXPECT.toml REPORT.json... [--write]";
    let write = args.iter().any(|a| a == "--write");
    let rest: Vec<&String> = args.iter().filter(|a| *a != "--write").collect();
    let [cmd, file, reports @ ..] = rest.as_slice() else {
        return Err(usage.into());
    };
    if cmd.as_str() != "prune" || reports.is_empty() {
        return Err(usage.into());
    }
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let file_name = Path::new(file.as_str())
        .file_name()
        .map_or(file.to_string(), |n| n.to_string_lossy().into_owned());
    let mut loaded = Vec::new();
    for r in reports {
        let t = std::fs::read_to_string(r).map_err(|e| format!("{r}: {e}"))?;
        loaded.push(serde_json::from_str::<Report>(&t).map_err(|e| format!("{r} is not a report: {e}"))?);
    }
    let unused: Vec<Listed> = listed(file, &text)?
        .into_iter()
        .filter(|e| !loaded.iter().any(|r| needed(e, &file_name, r)))
        .collect();
    for e in &unused {
        println!(
            "{file} line {}: [[{}]] {}: needed by none of the {} report(s) (passed, not run, or out of scope everywhere)",
            e.line,
            e.table,
            e.trial,
            loaded.len()
        );
    }
    if write && !unused.is_empty() {
        let lines: Vec<usize> = unused.iter().map(|e| e.line).collect();
        std::fs::write(file, without(&text, &lines)).map_err(|e| format!("{file}: {e}"))?;
        println!("xtask: removed {} entr(y/ies) from {file}", unused.len());
    } else {
        println!(
            "xtask: {} of the entries are unused{}",
            unused.len(),
            if write { "" } else { " (--write removes them)" }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "# known\n[[deviation]]\ntrial = \"a::used\"\nreason = \"r\"\n\n# the flaky one\n[[flaky]]\ntrial = \"a::unused\"\nurl = \"u\"\nrate = \"1/20\"\nfirst_seen = 2026-11-25\n\n[[deviation]]\ntrial = \"a::passing\"\nreason = \"r\"\n";

    #[test]
    fn prune_lists_and_removes_the_unused_entries() {
        let report: Report = serde_json::from_value(serde_json::json!({"trials": [
            {"trial": "a::used", "outcome": "expected-failure", "message": "expected failure (dir/x.toml line 3: r): m",
             "expected_by": {"file": "dir/x.toml", "line": 3}},
            {"trial": "a::unused", "outcome": "failed", "message": "m"},
            // A message naming the entry is no decision of it.
            {"trial": "a::passing", "outcome": "expected-failure", "message": "expected failure (x.toml line 14: r)"},
            {"trial": "a::passing", "outcome": "passed", "message": ""},
        ]}))
        .unwrap();
        let all = listed("x.toml", FILE).unwrap();
        let unused: Vec<&Listed> = all.iter().filter(|e| !needed(e, "x.toml", &report)).collect();
        assert_eq!(
            unused.iter().map(|e| (e.trial.as_str(), e.line)).collect::<Vec<_>>(),
            [("a::unused", 8), ("a::passing", 14)]
        );
        // Another file's line 3 is not this entry.
        assert!(!needed(&all[0], "y.toml", &report));
        let pruned = without(FILE, &[8, 14]);
        assert_eq!(
            pruned,
            "# known\n[[deviation]]\ntrial = \"a::used\"\nreason = \"r\"\n\n# the flaky one\n"
        );
    }
}
