//! Which trials run against a mutant (CONFORMANCE_MUTANTS_SELECT=calls, the default): those that
//! passed in the baseline and reached the mutant's API there (or have no record of what they
//! reached), plus the `harness::` and `suite::` trials; the mutants in [`BESIDE`] act outside their
//! API's hooks and get the whole suite either way, as every mutant does with `all`. Stopping at
//! the first kill, the chosen trials come as a list in [`first_kill_order`]. Also the selection's
//! own checks, run without the suite: the rule, table-driven, and BESIDE against the library's
//! sources (every mutant a shim file names without a hook of its API must be listed).

use super::baseline::Baseline;
use super::library::Mutant;
use super::order::{first_kill_order, hint};
use super::settings::{Select, Stop};
use conformance_model::{Outcome, Report};
use libtest_mimic::{Failed, Trial};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Mutants that act outside the hooks of their own API, so that a trial can meet them without
/// reaching it: with CONFORMANCE_MUTANTS_SELECT=calls they still run against the whole suite.
/// `selection::beside_names_every_mutant_outside_its_hooks` keeps the list whole.
pub const BESIDE: &[(&str, &str)] = &[
    (
        "checkpoint-attributes-reset",
        "named in mutants/checkpoint.c; acts in the next hook of any of the 14 APIs after the mutant engine's SIGUSR2 (BEGIN)",
    ),
    (
        "checkpoint-contents-lost",
        "named in mutants/checkpoint.c; acts in the next hook of any of the 14 APIs after the mutant engine's SIGUSR2 (BEGIN)",
    ),
    (
        "checkpoint-reserve-released",
        "named in mutants/checkpoint.c; acts in the next hook of any of the 14 APIs after the mutant engine's SIGUSR2 (BEGIN)",
    ),
    (
        "checkpoint-allocation-moved",
        "named in mutants/checkpoint.c; acts in the next hook of any of the 14 APIs after the mutant engine's SIGUSR2 (BEGIN)",
    ),
    (
        "checkpoint-threshold-forgotten",
        "named in mutants/checkpoint.c; acts in the next hook of any of the 14 APIs after the mutant engine's SIGUSR2 (BEGIN)",
    ),
    (
        "823-destroy-keeps-address-space",
        "named in mutants/vaspace.c; acts in 823's hook through BEGIN (address_space.c)",
    ),
    (
        "829-import-keeps-address-space",
        "named in mutants/vaspace.c; acts in 829's hook through BEGIN (address_space.c)",
    ),
    (
        "822-rlimit-crashes",
        "named in mutants/vaspace.c; acts in 822's, 823's and 829's hook through BEGIN (address_space.c)",
    ),
    (
        "829-concurrent-import-races",
        "named in mutants/vaspace.c; acts in 829's and 830's hook through BEGIN (address_space.c)",
    ),
    (
        "830-threads-refused-imports",
        "named in mutants/vaspace.c; acts in 830's hook through BEGIN (address_space.c)",
    ),
    (
        "820-graph-node-reserves-anew",
        "named in mutants/vaspace.c; acts in its hook of cuGraphAddMemAllocNode, beyond the 14 APIs",
    ),
    (
        "820-cap-bypass",
        "its cap acts in cuMemAlloc, cuMemFree (mutants/caps.c), cuMemGetInfo and cuDeviceTotalMem (cap.c)",
    ),
    (
        "820-cap-misses-graphs",
        "its cap acts in cuMemAlloc, cuMemFree (mutants/caps.c), cuMemGetInfo and cuDeviceTotalMem (cap.c) and \
         the stream-ordered calls (mutants/alloc.c)",
    ),
    (
        "822-cap-counts-reserved",
        "its cap acts in cuMemAlloc, cuMemFree (mutants/caps.c), cuMemGetInfo and cuDeviceTotalMem (cap.c) and \
         the stream-ordered calls (mutants/alloc.c)",
    ),
    (
        "820-counting-cap-misses-graphs",
        "its cap acts in cuMemAlloc (mutants/caps.c), cuMemGetInfo and cuDeviceTotalMem (cap.c) and the \
         stream-ordered calls (mutants/alloc.c)",
    ),
    (
        "828-mem-info-frozen",
        "named in mutants/caps.c; acts in cuMemGetInfo (precondition.c)",
    ),
    (
        "820-no-context-refuses-stream",
        "named in mutants/caps.c; acts in 820's hook through BEGIN (no_context.c)",
    ),
    (
        "821-no-context-refuses-stream",
        "named in mutants/caps.c; acts in 821's hook through BEGIN (no_context.c)",
    ),
    (
        "822-no-context-refuses-stream",
        "named in mutants/caps.c; acts in 822's hook through BEGIN (no_context.c)",
    ),
    (
        "820-cuMemAlloc-from-default-pool",
        "acts in cuMemAlloc (mutants/caps.c)",
    ),
    (
        "823-handle-types-overclaimed",
        "acts in cuDeviceGetAttribute (precondition.c), named in mutants/depth.c",
    ),
    (
        "823-host-pools-underclaimed",
        "acts in cuDeviceGetAttribute (precondition.c), named in mutants/depth.c",
    ),
    (
        "823-host-numa-pools-underclaimed",
        "acts in cuDeviceGetAttribute (precondition.c), named in mutants/depth.c",
    ),
    (
        "823-fabric-underclaimed",
        "acts in cuDeviceGetAttribute (precondition.c), named in mutants/depth.c",
    ),
    (
        "822-cuMemFree-refuses-pool-memory",
        "acts in cuMemFree (mutants/caps.c)",
    ),
    (
        "820-proc-address-ignores-ptds",
        "acts in cuGetProcAddress (misbehave.c): a trial that calls the per-thread variant reaches no hook of 820",
    ),
    (
        "822-proc-address-ignores-ptds",
        "acts in cuGetProcAddress (misbehave.c): a trial that looks the per-thread variant up reaches no hook of 822",
    ),
    (
        "821-ptsz-missing",
        "acts in cuGetProcAddress and dlsym (misbehave.c): the per-thread variant it takes away reaches no hook of 821",
    ),
    (
        "missing-833",
        "acts in cuGetProcAddress and dlsym (misbehave.c), when the worker fills its table",
    ),
    (
        "lookup-ignores-version",
        "acts in cuGetProcAddress (misbehave.c): entry::lookup_before_its_version_hands_out_nothing, every API's",
    ),
    (
        "lookup-initialises",
        "acts in cuGetProcAddress (misbehave.c): seen by suite::lookup_does_not_initialise, no hook of 820",
    ),
    (
        "825-non-ipc-pool-exported",
        "notes pools in cuMemPoolCreate's hook (mutants/pool.c); it changes answers only in 825's",
    ),
    (
        "826-non-ipc-pool-not-supported",
        "notes pools in cuMemPoolCreate's hook (mutants/pool.c); it changes answers only in 826's",
    ),
    (
        "823-broken-after-crash",
        "named in broken.c; crashes in 823's hook (mutants/pool.c), then answers in every API's hook through BEGIN",
    ),
];

/// Whether a trial is run against a mutant of API `api` (CONFORMANCE_MUTANTS_SELECT=calls): it
/// passed in the baseline (only those can kill), and it may reach `api` or is one of the harness's
/// or the run's own.
pub fn selects(trial: &str, baseline_outcome: Outcome, calls: Option<&[u32]>, api: u32) -> bool {
    baseline_outcome == Outcome::Passed && (reaches(calls, api) || always(trial))
}

/// Whether a trial with these calls may reach `api`: it did in the baseline, or nobody knows.
pub fn reaches(calls: Option<&[u32]>, api: u32) -> bool {
    calls.is_none_or(|c| c.contains(&api))
}

impl Baseline {
    /// The trials a mutant of API `api` runs against (CONFORMANCE_MUTANTS_SELECT=calls), and
    /// whether one of them may reach `api` (else the mutant cannot be seen).
    pub fn selected(&self, api: u32) -> (Vec<String>, bool) {
        let calls = |t: &String| self.calls.get(t).map(Vec::as_slice);
        let chosen: Vec<String> = self
            .outcomes
            .iter()
            .filter(|(t, (o, _))| selects(t, *o, calls(t), api))
            .map(|(t, _)| t.clone())
            .collect();
        let reached = chosen.iter().any(|t| reaches(calls(t), api));
        (chosen, reached)
    }
}

/// The trials every selection keeps: the harness's (fault injection) and the run's own.
fn always(trial: &str) -> bool {
    trial.starts_with("suite::") || trial.starts_with("harness::")
}

/// The trials mutant `m` runs against under `mode` (None: the whole suite, in the suite's order),
/// how they were chosen, and whether one of them may reach its API. Stopping at the first kill,
/// they come in [`first_kill_order`].
pub fn trials_for(
    m: &Mutant,
    b: &Baseline,
    mode: Select,
    stop: Stop,
) -> Result<(Option<Vec<String>>, &'static str, bool), String> {
    // The whole suite. Stopping at the first kill, as a list, to give it an order and to leave out
    // the trials that did not pass in the baseline: one of them failing again would stop the run
    // before any kill (they kill nothing either way).
    let whole = || (stop == Stop::First).then(|| b.passed());
    let (trials, select, reached) = match mode {
        Select::All => (whole(), "all", true),
        Select::Calls if BESIDE.iter().any(|(n, _)| *n == m.name) => (whole(), "beside", true),
        Select::Calls => {
            let (t, reached) = b.selected(m.api);
            (Some(t), "calls", reached)
        }
    };
    let trials = match (stop, trials) {
        (Stop::First, Some(t)) => {
            let hinted = hint()?.get(&m.name).map_or(&[][..], Vec::as_slice);
            Some(first_kill_order(t, m.api, &b.secs, hinted))
        }
        (_, t) => t,
    };
    Ok((trials, select, reached))
}

/// The selection's own checks (no run of the suite): the rule, table-driven, and [`BESIDE`] against
/// the library's sources.
pub fn selection_checks(mutants: &[Mutant]) -> Vec<Trial> {
    let rule = Trial::test("selection::runs_what_passed_and_reached_the_api", || {
        let both: &[u32] = &[820, 822];
        let none: &[u32] = &[];
        /// (trial, baseline outcome, calls, API of the mutant, selected)
        type Row<'a> = (&'a str, Outcome, Option<&'a [u32]>, u32, bool);
        let table: &[Row] = &[
            ("820_cuMemAllocAsync::a", Outcome::Passed, Some(both), 820, true),
            ("820_cuMemAllocAsync::a", Outcome::Passed, Some(both), 822, true),
            ("820_cuMemAllocAsync::a", Outcome::Passed, Some(both), 823, false),
            ("820_cuMemAllocAsync::a", Outcome::Failed, Some(both), 820, false),
            ("820_cuMemAllocAsync::a", Outcome::Ignored, None, 820, false),
            ("820_cuMemAllocAsync::a", Outcome::Changed, Some(both), 820, false),
            ("820_cuMemAllocAsync::a", Outcome::Passed, Some(none), 820, false),
            ("820_cuMemAllocAsync::a", Outcome::Passed, None, 833, true),
            ("suite::no_leaks", Outcome::Passed, None, 824, true),
            ("suite::no_leaks", Outcome::Passed, Some(none), 824, true),
            ("suite::no_leaks", Outcome::Failed, None, 824, false),
            ("harness::importer_dies", Outcome::Passed, Some(none), 829, true),
        ];
        let wrong: Vec<String> = table
            .iter()
            .filter(|(t, o, c, api, want)| selects(t, *o, *c, *api) != *want)
            .map(|(t, o, c, api, want)| format!("{t} ({o}, calls {c:?}) for API {api}: want {want}"))
            .collect();
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(wrong.join("\n").into())
        }
    });
    let names: BTreeMap<String, u32> = mutants.iter().map(|m| (m.name.clone(), m.api)).collect();
    let shim = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/shim"));
    let beside = Trial::test("selection::beside_names_every_mutant_outside_its_hooks", move || {
        beside_check(&shim, &names).map_err(Failed::from)
    })
    .with_ignored_flag(!PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/shim/shim.h")).is_file());
    let order = Trial::test(
        "selection::first_kill_order_runs_known_killers_then_the_api_quickest_first",
        || {
            let secs: BTreeMap<String, f64> = [
                ("833_x::slow", 2.0),
                ("833_x::quick", 0.1),
                ("820_y::a", 0.01),
                ("820_y::b", 0.5),
            ]
            .iter()
            .map(|(t, s)| (t.to_string(), *s))
            .collect();
            let chosen: Vec<String> = ["820_y::b", "833_x::slow", "suite::no_leaks", "833_x::quick", "820_y::a"]
                .iter()
                .map(|t| t.to_string())
                .collect();
            let got = first_kill_order(chosen, 833, &secs, &["820_y::b".to_string()]);
            let want = ["820_y::b", "833_x::quick", "833_x::slow", "820_y::a", "suite::no_leaks"];
            if got == want {
                Ok(())
            } else {
                Err(format!("{got:?}, want {want:?}").into())
            }
        },
    );
    let whole = Trial::test(
        "selection::a_whole_suite_run_that_stops_leaves_out_baseline_failures",
        || {
            let outcomes: BTreeMap<String, (Outcome, String)> = [
                ("a::passes", Outcome::Passed),
                ("a::fails", Outcome::Failed),
                ("a::ignored", Outcome::Ignored),
            ]
            .iter()
            .map(|(t, o)| (t.to_string(), (*o, String::new())))
            .collect();
            let b = Baseline {
                report: Report::default(),
                outcomes,
                calls: BTreeMap::new(),
                secs: BTreeMap::new(),
                wall: 0.0,
            };
            let m = Mutant {
                name: BESIDE[0].0.into(),
                api: 820,
                needs: "none".into(),
                kind: "mutant".into(),
                what: String::new(),
            };
            let mut wrong = Vec::new();
            for mode in [Select::All, Select::Calls] {
                let first = trials_for(&m, &b, mode, Stop::First)?.0;
                if first.as_deref() != Some(&["a::passes".to_string()][..]) {
                    wrong.push(format!("{mode:?}, first: {first:?}"));
                }
                let never = trials_for(&m, &b, mode, Stop::Never)?.0;
                if never.is_some() {
                    wrong.push(format!("{mode:?}, never: {never:?} (want the whole suite, None)"));
                }
            }
            if wrong.is_empty() {
                Ok(())
            } else {
                Err(wrong.join("\n").into())
            }
        },
    );
    vec![rule, beside, order, whole]
}

/// Every mutant a file of the library names (in any string) without a hook of its API in that file
/// (`BEGIN(api, ...)`) must be in [`BESIDE`], and every entry of BESIDE must be a mutant.
fn beside_check(shim: &std::path::Path, names: &BTreeMap<String, u32>) -> Result<(), String> {
    let mut files = Vec::new();
    for dir in [shim.to_path_buf(), shim.join("mutants")] {
        for e in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let p = e.map_err(|e| e.to_string())?.path();
            if p.extension().is_some_and(|x| x == "c") {
                files.push(p);
            }
        }
    }
    let mut missing = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let hooks: BTreeSet<u32> = text
            .split("BEGIN(")
            .skip(1)
            .filter_map(|rest| rest.split(',').next()?.trim().parse().ok())
            .collect();
        // Every other piece between double quotes is a string's contents.
        for quoted in text.split('"').skip(1).step_by(2) {
            if let Some(&api) = names.get(quoted) {
                if api != 0 && !hooks.contains(&api) && !BESIDE.iter().any(|(n, _)| *n == quoted) {
                    missing.push(format!(
                        "{quoted} (API {api}) is named in {}, which has no hook of {api}",
                        f.display()
                    ));
                }
            }
        }
    }
    missing.sort();
    missing.dedup();
    for (n, _) in BESIDE {
        if !names.contains_key(*n) {
            missing.push(format!("BESIDE lists {n}, which the library does not have"));
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "a mutant that acts outside its API's hooks must be in BESIDE (tests/mutants/selection.rs), or \
             CONFORMANCE_MUTANTS_SELECT=calls may leave out the trials that see it:\n{}",
            missing.join("\n")
        ))
    }
}
