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
//! A trial known to fail now and then is listed as flaky: its failure is reported as `flaky`,
//! counted apart and not failing; its pass stays a pass.
//!
//! ```toml
//! [[flaky]]
//! trial = "825_cuMemPoolGetAttribute::used_mem_high_tracks_peak"
//! url = "https://github.com/OWNER/REPO/issues/12"
//! rate = "1/20"                  # failures seen / runs
//! first_seen = "2026-11-25"
//! ```
//!
//! Both kinds of entry take selectors, and apply only where every selector given matches (one not
//! given matches anywhere): `branch` (the driver branch, "580"), `gpu` (a substring of the device's
//! name, or its compute capability "9.0"), `library` (the library under test's file name, or its
//! sha256), `entry` (`proc-address`, `dlsym` or `link`: CONFORMANCE_ENTRY).
//!
//! A listed trial that fails (with the `observed` answer, when one is given) is an *expected
//! failure*: reported, not failing. A listed trial that passes is *unexpectedly passing*, which
//! fails, so that the file gets cleaned up. A listed trial that fails differently, and any unlisted
//! failure, fails as usual. A malformed file (an unknown key or a bad value), or an entry naming no
//! trial, stops the run before any trial, naming the file, the line and what is allowed.
//!
//! This file owns the format: it parses and checks it ([`parse`]) and writes its entries
//! ([`deviation_entry`], for `--expectations-from`).

use crate::harness::machine::Machine;
use crate::harness::outcome::{Outcome, Record};
use crate::harness::settings::{Settings, EXPECT_VAR};
use conformance_model::ExpectedBy;
use serde::Deserialize;
use std::str::FromStr;
use std::sync::OnceLock;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    deviation: Vec<Entry>,
    #[serde(default)]
    verified: Vec<Verified>,
    #[serde(default)]
    flaky: Vec<FlakyEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Verified {
    departure: Spanned<String>,
    branch: u32,
    #[allow(dead_code)]
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    trial: Spanned<String>,
    observed: Option<String>,
    reason: String,
    branch: Option<Spanned<toml::Value>>,
    gpu: Option<Spanned<String>>,
    library: Option<Spanned<String>>,
    entry: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FlakyEntry {
    trial: Spanned<String>,
    url: String,
    rate: Spanned<String>,
    first_seen: Spanned<toml::Value>,
    branch: Option<Spanned<toml::Value>>,
    gpu: Option<Spanned<String>>,
    library: Option<Spanned<String>>,
    entry: Option<Spanned<String>>,
}

/// Where an entry applies: each selector given must match; `None` matches anywhere.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    pub branch: Option<u32>,
    pub gpu: Option<Gpu>,
    pub library: Option<Library>,
    /// `proc-address`, `dlsym` or `link`.
    pub entry: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gpu {
    /// A substring of the device's name, compared without case.
    Name(String),
    /// A compute capability, "9.0".
    Cc(i32, i32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Library {
    FileName(String),
    /// 64 lowercase hex digits.
    Sha256(String),
}

#[derive(Clone, Debug)]
pub struct Known {
    pub trial: String,
    pub observed: Option<String>,
    pub reason: String,
    pub line: usize,
    pub scope: Scope,
}

/// A trial known to fail now and then (`[[flaky]]`).
#[derive(Clone, Debug)]
pub struct Flaky {
    pub trial: String,
    pub url: String,
    pub rate: String,
    pub first_seen: String,
    pub line: usize,
    pub scope: Scope,
}

#[derive(Clone, Debug)]
pub struct Expectations {
    pub path: String,
    pub known: Vec<Known>,
    pub flaky: Vec<Flaky>,
    /// (departure id or `*`, driver branch) the user verified.
    pub verified: Vec<(String, u32)>,
}

/// What the selectors are matched against: this run's machine, as the probe found it.
#[derive(Clone, Debug, Default)]
pub struct Here {
    pub branch: Option<u32>,
    /// Every device by ordinal: its name and compute capability.
    pub gpus: Vec<(String, (i32, i32))>,
    /// The libraries under test: file name and sha256 (when it could be read).
    pub libraries: Vec<(String, Option<String>)>,
    /// `proc-address`, `dlsym` or `link`.
    pub entry: String,
}

static LOADED: OnceLock<Option<Expectations>> = OnceLock::new();
static HERE: OnceLock<Here> = OnceLock::new();

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// One bad value: the file, its line, the key, what it holds and what is allowed.
fn bad<T>(path: &str, text: &str, key: &str, at: std::ops::Range<usize>, allowed: &str) -> Result<T, String> {
    Err(format!(
        "{EXPECT_VAR}={path}: line {}: {key} = {}: expected {allowed}",
        line_of(text, at.start),
        text.get(at).unwrap_or("?")
    ))
}

/// A driver branch: an integer or a string of digits ("580").
fn branch_of(v: &Spanned<toml::Value>) -> Option<u32> {
    match v.get_ref() {
        toml::Value::Integer(n) => u32::try_from(*n).ok(),
        toml::Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn sha256_like(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The selectors of an entry, checked.
fn scope(
    path: &str,
    text: &str,
    branch: Option<Spanned<toml::Value>>,
    gpu: Option<Spanned<String>>,
    library: Option<Spanned<String>>,
    entry: Option<Spanned<String>>,
) -> Result<Scope, String> {
    let branch = match branch {
        None => None,
        Some(b) => match branch_of(&b) {
            Some(n) => Some(n),
            None => {
                return bad(
                    path,
                    text,
                    "branch",
                    b.span(),
                    "a driver branch number, such as \"580\"",
                )
            }
        },
    };
    let gpu = match gpu {
        None => None,
        Some(g) if g.get_ref().trim().is_empty() => {
            return bad(
                path,
                text,
                "gpu",
                g.span(),
                "a part of the device's name, or a compute capability such as \"9.0\"",
            )
        }
        Some(g) => Some(match g.get_ref().split_once('.') {
            Some((a, b))
                if !a.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit()) && !b.is_empty() =>
            {
                Gpu::Cc(a.parse().unwrap_or(-1), b.parse().unwrap_or(-1))
            }
            _ => Gpu::Name(g.into_inner().to_lowercase()),
        }),
    };
    let library = match library {
        None => None,
        Some(l) if l.get_ref().is_empty() || l.get_ref().contains('/') => {
            return bad(
                path,
                text,
                "library",
                l.span(),
                "the library's file name (no directory) or its sha256",
            )
        }
        Some(l) if sha256_like(l.get_ref()) => Some(Library::Sha256(l.into_inner().to_lowercase())),
        Some(l) => Some(Library::FileName(l.into_inner())),
    };
    let entry = match entry {
        None => None,
        Some(e) if ENTRIES.contains(&e.get_ref().as_str()) => Some(e.into_inner()),
        Some(e) => {
            return bad(
                path,
                text,
                "entry",
                e.span(),
                "one of \"proc-address\", \"dlsym\", \"link\"",
            )
        }
    };
    Ok(Scope {
        branch,
        gpu,
        library,
        entry,
    })
}

/// The values of `entry` (CONFORMANCE_ENTRY's modes).
const ENTRIES: [&str; 3] = ["proc-address", "dlsym", "link"];

/// Parse an expectation file's text; errors name the line.
pub fn parse(path: &str, text: &str) -> Result<Expectations, String> {
    let file: File = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!("line {}: ", line_of(text, s.start)))
            .unwrap_or_default();
        format!("{EXPECT_VAR}={path}: {at}{}", e.message())
    })?;
    let mut known = Vec::new();
    for d in file.deviation {
        known.push(Known {
            line: line_of(text, d.trial.span().start),
            scope: scope(path, text, d.branch, d.gpu, d.library, d.entry)?,
            trial: d.trial.into_inner(),
            observed: d.observed,
            reason: d.reason,
        });
    }
    let mut flaky = Vec::new();
    for f in file.flaky {
        let rate_ok = f.rate.get_ref().split_once('/').is_some_and(
            |(a, b)| matches!((a.trim().parse::<u32>(), b.trim().parse::<u32>()), (Ok(x), Ok(y)) if x <= y && y > 0),
        );
        if !rate_ok {
            return bad(path, text, "rate", f.rate.span(), "failures / runs, such as \"1/20\"");
        }
        let first_seen = match f.first_seen.get_ref() {
            toml::Value::Datetime(d) if d.date.is_some() && d.time.is_none() => d.to_string(),
            toml::Value::String(s) if toml::value::Datetime::from_str(s).is_ok_and(|d| d.time.is_none()) => s.clone(),
            _ => {
                return bad(
                    path,
                    text,
                    "first_seen",
                    f.first_seen.span(),
                    "a date, such as \"2026-11-25\"",
                )
            }
        };
        flaky.push(Flaky {
            line: line_of(text, f.trial.span().start),
            scope: scope(path, text, f.branch, f.gpu, f.library, f.entry)?,
            trial: f.trial.into_inner(),
            url: f.url,
            rate: f.rate.into_inner(),
            first_seen,
        });
    }
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
        flaky,
        verified,
    })
}

/// One `[[deviation]]` entry as the file holds it, the form [`parse`] reads back: a blank line,
/// the header, `trial`, `observed` when given, and `reason` (`--expectations-from` writes these).
pub fn deviation_entry(trial: &str, observed: Option<&str>, reason: &str) -> String {
    let observed = observed.map(|o| format!("observed = {o:?}\n")).unwrap_or_default();
    format!("\n[[deviation]]\ntrial = {trial:?}\n{observed}reason = {reason:?}\n")
}

/// CONFORMANCE_EXPECT (of `settings`, as the process's entry point read them), read and parsed
/// (once: the entry point loads it, before any trial is judged; [`loaded`] is what it loaded).
pub fn load(settings: &Settings) -> Result<Option<&'static Expectations>, String> {
    if let Some(l) = LOADED.get() {
        return Ok(l.as_ref());
    }
    let e = match settings.expect.clone() {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(&path).map_err(|e| {
                format!("{EXPECT_VAR}={path}: cannot read it ({e}); point it at a TOML expectation file")
            })?;
            Some(parse(&path, &text)?)
        }
    };
    Ok(LOADED.get_or_init(|| e).as_ref())
}

/// The expectations this process's entry point loaded ([`load`]): None where CONFORMANCE_EXPECT
/// names none, or where the file could not be read (the coordinator refused the run then).
pub fn loaded() -> Option<&'static Expectations> {
    LOADED.get().and_then(Option::as_ref)
}

/// The sha256 of a file, in lowercase hex; None when it cannot be read.
fn sha256_of(path: &str) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| crate::harness::provenance::sha256_hex(&b))
}

impl Here {
    /// What `m` says of this run; a library's sha256 only when `hash` (an entry asks for one).
    pub fn of(m: &Machine, hash: bool) -> Here {
        Here {
            branch: crate::harness::identity::branch_of(&m.identity().version),
            gpus: m
                .devices
                .iter()
                .map(|d| (d.name.clone(), crate::harness::machine::cc(d)))
                .collect(),
            libraries: m
                .under_test()
                .iter()
                .map(|u| {
                    let name = std::path::Path::new(&u.path)
                        .file_name()
                        .map_or(u.path.clone(), |n| n.to_string_lossy().into_owned());
                    (name, hash.then(|| sha256_of(&u.path)).flatten())
                })
                .collect(),
            entry: m.entry().split_whitespace().next().unwrap_or("").to_string(),
        }
    }
}

/// Tell the expectations what this run's machine is (the coordinator, once the probe answered).
/// Until then only entries without selectors apply.
pub fn bind(m: &Machine) {
    let hash =
        matches!(LOADED.get(), Some(Some(e)) if e.scopes().any(|s| matches!(s.library, Some(Library::Sha256(_)))));
    let _ = HERE.set(Here::of(m, hash));
}

impl Scope {
    /// Whether this scope covers a trial that ran on device `dev` (any device, when unknown) of `here`.
    pub fn covers(&self, here: Option<&Here>, dev: Option<i32>) -> bool {
        if *self == Scope::default() {
            return true;
        }
        let Some(h) = here else { return false };
        let branch = self.branch.is_none_or(|b| h.branch == Some(b));
        let gpu = self.gpu.as_ref().is_none_or(|g| {
            let on = |(name, cc): &(String, (i32, i32))| match g {
                Gpu::Name(s) => name.to_lowercase().contains(s.as_str()),
                Gpu::Cc(a, b) => *cc == (*a, *b),
            };
            match dev.and_then(|d| h.gpus.get(d as usize)) {
                Some(one) => on(one),
                None => h.gpus.iter().any(on),
            }
        });
        let library = self.library.as_ref().is_none_or(|l| {
            h.libraries.iter().any(|(name, sha)| match l {
                Library::FileName(f) => name == f,
                Library::Sha256(s) => sha.as_deref() == Some(s.as_str()),
            })
        });
        let entry = self.entry.as_ref().is_none_or(|e| *e == h.entry);
        branch && gpu && library && entry
    }
}

impl Expectations {
    fn scopes(&self) -> impl Iterator<Item = &Scope> {
        self.known
            .iter()
            .map(|k| &k.scope)
            .chain(self.flaky.iter().map(|f| &f.scope))
    }

    /// Every entry must name a trial of this run; one that does not is a mistake in the file.
    pub fn check_trials(&self, trials: &[String]) -> Result<(), String> {
        let entries = self.known.iter().map(|k| (&k.trial, k.line));
        for (trial, line) in entries.chain(self.flaky.iter().map(|f| (&f.trial, f.line))) {
            if !trials.contains(trial) {
                return Err(format!(
                    "{EXPECT_VAR}={}: line {line}: no trial named {trial:?} (names are as `--list` prints them)",
                    self.path
                ));
            }
        }
        Ok(())
    }

    /// Turn a listed trial's failure into an expected failure (or a flaky one), and a known
    /// deviation's pass into a failure; true when the outcome changed. Only the entries whose
    /// selectors match this run's machine ([`bind`]) apply.
    pub fn apply(&self, r: &mut Record) -> bool {
        let here = HERE.get();
        if let Some(k) = self
            .known
            .iter()
            .find(|k| k.trial == r.trial && k.scope.covers(here, r.dev()))
        {
            return self.deviation(k, r);
        }
        let Some(f) = self
            .flaky
            .iter()
            .find(|f| f.trial == r.trial && f.scope.covers(here, r.dev()))
        else {
            return false;
        };
        if r.outcome != Outcome::Failed {
            return false;
        }
        r.outcome = Outcome::Flaky;
        r.expected_by = Some(self.entry(f.line));
        r.message = format!(
            "flaky ({} line {}: fails {} of runs, first seen {}, {}): {}",
            self.path, f.line, f.rate, f.first_seen, f.url, r.message
        );
        true
    }

    /// The entry on `line` of this file, as report.json names it.
    fn entry(&self, line: usize) -> ExpectedBy {
        ExpectedBy {
            file: self.path.clone(),
            line: line as u64,
            ..ExpectedBy::default()
        }
    }

    /// A known deviation `k` of `r`'s trial, applied.
    fn deviation(&self, k: &Known, r: &mut Record) -> bool {
        let at = format!("{} line {}", self.path, k.line);
        match r.outcome {
            Outcome::Failed => {
                let observed = r.observations().iter().find(|o| !o.ok).map(|o| o.observed.clone());
                let matches = match (&k.observed, &observed) {
                    (None, _) => true,
                    (Some(want), Some(got)) => got.contains(want.as_str()),
                    (Some(_), None) => false,
                };
                if matches {
                    r.outcome = Outcome::ExpectedFailure;
                    r.expected_by = Some(self.entry(k.line));
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
            Outcome::Passed | Outcome::Changed | Outcome::KnownDeparture => {
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

    #[test]
    fn a_written_deviation_reads_back() {
        let text = deviation_entry("a::b", Some("CUDA_ERROR_INVALID_VALUE"), "TODO: \"it\" fails\\here")
            + &deviation_entry("a::c", None, "r");
        assert_eq!(
            text,
            "\n[[deviation]]\ntrial = \"a::b\"\nobserved = \"CUDA_ERROR_INVALID_VALUE\"\nreason = \"TODO: \\\"it\\\" fails\\\\here\"\n\n[[deviation]]\ntrial = \"a::c\"\nreason = \"r\"\n"
        );
        let e = parse("x.toml", &text).unwrap();
        let read: Vec<_> = e
            .known
            .iter()
            .map(|k| (k.trial.as_str(), k.observed.as_deref(), k.reason.as_str(), k.line))
            .collect();
        assert_eq!(
            read,
            [
                ("a::b", Some("CUDA_ERROR_INVALID_VALUE"), "TODO: \"it\" fails\\here", 3),
                ("a::c", None, "r", 8)
            ]
        );
    }

    fn h100() -> Here {
        Here {
            branch: Some(580),
            gpus: vec![
                ("NVIDIA H100 80GB HBM3".into(), (9, 0)),
                ("NVIDIA A100-SXM4-40GB".into(), (8, 0)),
            ],
            libraries: vec![("libmisbehave.so".into(), Some("ab".repeat(32)))],
            entry: "proc-address".into(),
        }
    }

    fn scope_of(selectors: &str) -> Result<Scope, String> {
        let text = format!("[[deviation]]\ntrial = \"a::b\"\nreason = \"r\"\n{selectors}");
        parse("x.toml", &text).map(|e| e.known[0].scope.clone())
    }

    #[test]
    fn an_entry_applies_where_all_its_selectors_match() {
        let h = h100();
        let covers = |sel: &str, dev| scope_of(sel).unwrap().covers(Some(&h), dev);
        assert!(covers("", None));
        assert!(
            scope_of("").unwrap().covers(None, None),
            "no selector: anywhere, bound or not"
        );
        assert!(covers("branch = \"580\"", None) && covers("branch = 580", None));
        assert!(!covers("branch = \"999\"", None));
        assert!(covers("gpu = \"h100\"", Some(0)) && !covers("gpu = \"h100\"", Some(1)));
        assert!(covers("gpu = \"9.0\"", None) && !covers("gpu = \"9.0\"", Some(1)) && !covers("gpu = \"7.5\"", None));
        assert!(covers("library = \"libmisbehave.so\"", None) && !covers("library = \"libother.so\"", None));
        assert!(covers(&format!("library = \"{}\"", "AB".repeat(32)), None));
        assert!(covers("entry = \"proc-address\"", None) && !covers("entry = \"dlsym\"", None));
        assert!(covers(
            "branch = \"580\"\ngpu = \"H100\"\nentry = \"proc-address\"",
            Some(0)
        ));
        assert!(!covers("branch = \"580\"\ngpu = \"H100\"\nentry = \"link\"", Some(0)));
        // A selector cannot match before the machine is known.
        assert!(!scope_of("branch = \"580\"").unwrap().covers(None, None));
    }

    #[test]
    fn bad_keys_and_values_name_the_line_and_what_is_allowed() {
        let e = scope_of("platform = \"x\"").unwrap_err();
        assert!(
            e.contains("x.toml") && e.contains("line 4") && e.contains("platform") && e.contains("gpu"),
            "{e}"
        );
        let e = scope_of("branch = \"r580\"").unwrap_err();
        assert!(
            e.contains("line 4") && e.contains("branch") && e.contains("\"580\""),
            "{e}"
        );
        let e = scope_of("entry = \"dlopen\"").unwrap_err();
        assert!(e.contains("line 4") && e.contains("proc-address"), "{e}");
        let e = scope_of("library = \"/usr/lib/libx.so\"").unwrap_err();
        assert!(e.contains("file name"), "{e}");
        let flaky = |rest: &str| {
            parse(
                "x.toml",
                &format!("[[flaky]]\ntrial = \"a::b\"\nurl = \"https://example.org/1\"\n{rest}"),
            )
        };
        let ok = flaky("rate = \"1/20\"\nfirst_seen = 2026-11-25\ngpu = \"9.0\"").unwrap();
        assert_eq!((ok.flaky[0].line, ok.flaky[0].first_seen.as_str()), (2, "2026-11-25"));
        assert_eq!(ok.flaky[0].scope.gpu, Some(Gpu::Cc(9, 0)));
        assert!(flaky("rate = \"1/20\"\nfirst_seen = \"2026-11-25\"").is_ok());
        let e = flaky("rate = \"often\"\nfirst_seen = \"2026-11-25\"").unwrap_err();
        assert!(e.contains("line 4") && e.contains("rate") && e.contains("1/20"), "{e}");
        let e = flaky("rate = \"1/20\"\nfirst_seen = \"last week\"").unwrap_err();
        assert!(e.contains("line 5") && e.contains("first_seen"), "{e}");
        let e = flaky("rate = \"1/20\"").unwrap_err();
        assert!(e.contains("first_seen"), "{e}");
    }

    #[test]
    fn a_listed_flaky_failure_is_flaky_and_its_pass_stays_passed() {
        use crate::harness::case::Group;
        let e = parse(
            "x.toml",
            "[[flaky]]\ntrial = \"a::b\"\nurl = \"u\"\nrate = \"1/20\"\nfirst_seen = \"2026-11-25\"\n",
        )
        .unwrap();
        let rec = |o| {
            Record::new(
                "a::b",
                Group::Suite,
                o,
                crate::harness::outcome::Kind::Check,
                "m".into(),
            )
        };
        let mut failed = rec(Outcome::Failed);
        assert!(e.apply(&mut failed));
        assert_eq!(failed.outcome, Outcome::Flaky);
        assert!(
            failed.message.contains("x.toml line 2") && failed.message.contains("1/20"),
            "{}",
            failed.message
        );
        let by = failed.expected_by.as_ref().expect("the entry that decided it");
        assert_eq!((by.file.as_str(), by.line), ("x.toml", 2));
        let mut passed = rec(Outcome::Passed);
        assert!(!e.apply(&mut passed));
        assert_eq!(passed.outcome, Outcome::Passed);
        assert_eq!(passed.expected_by, None);
    }
}
