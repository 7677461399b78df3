//! `CONFORMANCE_EXPECT=path`: a user's list of the known deviations of the library under test, so
//! that a CI fails on regressions and not on differences already known and accepted.
//!
//! ```toml
//! [[deviation]]
//! trial = "833_cuMemPoolTrimTo::trim_to_zero_releases_unused"
//! observed = "CUDA_SUCCESS"     # optional: the answer the library gives (code name or number)
//! reason = "our pool trims lazily, at the next allocation"
//! ```
//!
//! A team that checked a driver branch records it, so that the departures declared in
//! `driver/departures.rs` are expected there as on the branches they were verified on:
//!
//! ```toml
//! [[verified]]
//! departure = "size_zero_succeeds"   # or "*": every declared departure
//! branch = 570
//! reason = "checked on our R570 fleet, 2026-11"
//! ```
//!
//! A listed trial that fails (with the `observed` answer, when one is given) is an *expected
//! failure*: reported, not failing. A listed trial that passes is *unexpectedly passing*, which
//! fails, so that the file gets cleaned up. A listed trial that fails differently, and any unlisted
//! failure, fails as usual. A malformed file, or an entry naming no trial, stops the run before any
//! trial, naming the line.

use crate::harness::outcome::{Outcome, Record};
use serde::Deserialize;
use std::sync::OnceLock;

pub const EXPECT_VAR: &str = "CONFORMANCE_EXPECT";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    deviation: Vec<Entry>,
    #[serde(default)]
    verified: Vec<Verified>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Verified {
    departure: toml::Spanned<String>,
    branch: u32,
    #[allow(dead_code)]
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    trial: toml::Spanned<String>,
    observed: Option<String>,
    reason: String,
}

#[derive(Clone, Debug)]
pub struct Known {
    pub trial: String,
    pub observed: Option<String>,
    pub reason: String,
    pub line: usize,
}

#[derive(Clone, Debug)]
pub struct Expectations {
    pub path: String,
    pub known: Vec<Known>,
    /// (departure id or `*`, driver branch) the user verified.
    pub verified: Vec<(String, u32)>,
}

static LOADED: OnceLock<Option<Expectations>> = OnceLock::new();

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parse an expectation file's text; errors name the line.
pub fn parse(path: &str, text: &str) -> Result<Expectations, String> {
    let file: File = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!("line {}: ", line_of(text, s.start)))
            .unwrap_or_default();
        format!("{EXPECT_VAR}={path}: {at}{}", e.message())
    })?;
    let known = file
        .deviation
        .into_iter()
        .map(|d| Known {
            line: line_of(text, d.trial.span().start),
            trial: d.trial.into_inner(),
            observed: d.observed,
            reason: d.reason,
        })
        .collect();
    let mut verified = Vec::new();
    for v in file.verified {
        let line = line_of(text, v.departure.span().start);
        let id = v.departure.into_inner();
        if id != "*" && !crate::driver::departures::ALL.iter().any(|d| d.id == id) {
            return Err(format!(
                "{EXPECT_VAR}={path}: line {line}: no declared departure {id:?} (the ids are in the report's \
                 departures table, or \"*\" for all)"
            ));
        }
        verified.push((id, v.branch));
    }
    Ok(Expectations {
        path: path.to_string(),
        known,
        verified,
    })
}

/// CONFORMANCE_EXPECT, read and parsed (once).
pub fn load() -> Result<Option<&'static Expectations>, String> {
    if let Some(l) = LOADED.get() {
        return Ok(l.as_ref());
    }
    let e = match std::env::var(EXPECT_VAR) {
        Err(_) => None,
        Ok(path) if path.trim().is_empty() => None,
        Ok(path) => {
            let text = std::fs::read_to_string(&path).map_err(|e| {
                format!("{EXPECT_VAR}={path}: cannot read it ({e}); point it at a TOML expectation file")
            })?;
            Some(parse(&path, &text)?)
        }
    };
    let loaded = LOADED.get_or_init(|| e).as_ref();
    crate::driver::departures::set_verified(loaded.map(|e| e.verified.clone()).unwrap_or_default());
    Ok(loaded)
}

impl Expectations {
    /// Every entry must name a trial of this run; one that does not is a mistake in the file.
    pub fn check_trials(&self, trials: &[String]) -> Result<(), String> {
        for k in &self.known {
            if !trials.contains(&k.trial) {
                return Err(format!(
                    "{EXPECT_VAR}={}: line {}: no trial named {:?} (names are as `--list` prints them)",
                    self.path, k.line, k.trial
                ));
            }
        }
        Ok(())
    }

    /// Turn a listed trial's failure into an expected failure, and its pass into a failure; true
    /// when the outcome changed.
    pub fn apply(&self, r: &mut Record) -> bool {
        let Some(k) = self.known.iter().find(|k| k.trial == r.trial) else {
            return false;
        };
        let at = format!("{} line {}", self.path, k.line);
        match r.outcome {
            Outcome::Failed => {
                let observed = r.observations.iter().find(|o| !o.ok).map(|o| o.observed.clone());
                let matches = match (&k.observed, &observed) {
                    (None, _) => true,
                    (Some(want), Some(got)) => got.contains(want.as_str()),
                    (Some(_), None) => false,
                };
                if matches {
                    r.outcome = Outcome::Expected;
                    r.message = format!("expected failure ({at}: {}): {}", k.reason, r.message);
                    return true;
                } else {
                    r.message = format!(
                        "fails, but not as {at} expects (observed {}, listed {:?}): {}",
                        observed.as_deref().unwrap_or("no failed call"),
                        k.observed.as_deref().unwrap_or(""),
                        r.message
                    );
                }
            }
            Outcome::Passed | Outcome::Changed | Outcome::Known => {
                r.outcome = Outcome::Failed;
                r.message = format!(
                    "unexpectedly passing: {at} lists it as a known deviation ({}); remove that entry",
                    k.reason
                );
                return true;
            }
            _ => {}
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_files_name_the_line() {
        let e = parse("x.toml", "[[deviation]]\ntrial = 3\nreason = \"r\"\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        let e = parse("x.toml", "[[deviation]]\ntrial = \"a\"\nreason = \"r\"\ncolour = 1\n").unwrap_err();
        assert!(e.contains("colour"), "{e}");
        let ok = parse("x.toml", "\n[[deviation]]\ntrial = \"a::b\"\nreason = \"r\"\n").unwrap();
        assert_eq!(ok.known[0].line, 3);
        let e = ok.check_trials(&["c".into()]).unwrap_err();
        assert!(e.contains("line 3") && e.contains("a::b"), "{e}");
    }
}
