//! Every `CONFORMANCE_*` variable of the project, once: its name, who sets it, what it accepts, its
//! default and one line of what it does. The user's settings here are the reference page
//! (docs/guide/settings.md, its table checked against this one); a test finds every name the code,
//! the tests, the shim, the build, xtask and CI use in this table, and no name here unused, and
//! another that the suite parses a run's settings in one place, `settings::values` (once per
//! process, through `os::setting`).

/// Who sets a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// The person or CI job running the suite.
    User,
    /// A test of the suite's own, to show a behaviour on purpose (the user may, to reproduce it).
    TestOnly,
    /// The mutation runner (`tests/mutants.rs`, `cargo xtask mutants`) and the shim it preloads.
    Mutants,
    /// The crate's integration tests and CI scripts (where reports are kept, which build to use).
    Tests,
    /// The suite itself, for the child processes it starts (a protocol, not a setting).
    Child,
    /// build.rs, at compile time (read with `env!`).
    Build,
}

impl Who {
    /// How the reference page heads this kind.
    pub fn heading(self) -> &'static str {
        match self {
            Who::User => "settings of a run",
            Who::TestOnly => "test-only switches of a run",
            Who::Mutants => "the mutation runner and the shim",
            Who::Tests => "the crate's tests and CI",
            Who::Child => "set by the suite for its children",
            Who::Build => "set by build.rs",
        }
    }
}

/// One variable.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    pub name: &'static str,
    pub who: Who,
    /// What it accepts, as a user writes it.
    pub accepts: &'static str,
    /// Its value when unset.
    pub default: &'static str,
    /// One line: what it does.
    pub doc: &'static str,
}

const fn s(name: &'static str, who: Who, accepts: &'static str, default: &'static str, doc: &'static str) -> Setting {
    Setting {
        name,
        who,
        accepts,
        default,
        doc,
    }
}

use Who::*;

/// The table, by who sets it, then by name.
#[rustfmt::skip]
pub const SETTINGS: &[Setting] = &[
    s("CONFORMANCE_CHECKPOINT", User, "`driver` or `command:TEMPLATE` with `{pid}` (and `{step}`)", "none: no checkpoint leg", "the checkpoint leg: trials holding pool state are taken through a checkpoint and restore by this engine and judged after it"),
    s("CONFORMANCE_DEVICES", User, "`all` or a list `0,2,3`", "device 0, its first peer pair and the devices that all reach it", "which devices: single-device trials per device (`…::devN`), pair trials on every ordered peer pair (`…::devA_devB`)"),
    s("CONFORMANCE_DEVICE_LOCK", User, "a file path", "none: turns are this run's only", "suites naming one lock file give a trial that needs the device alone the device across all of them"),
    s("CONFORMANCE_ENTRY", User, "`proc-address`, `dlsym` or `link`", "`proc-address`", "how the table of the 14 entry points is filled: through cuGetProcAddress, dlsym, or the linked symbols"),
    s("CONFORMANCE_EXPECT", User, "a TOML file", "none", "known deviations of the library under test: listed failures become expected failures, listed passes fail"),
    s("CONFORMANCE_FAIL_FAST", User, "`1`", "off", "stop at the first failure: trials not started are recorded `stopped`, cheap trials first, exclusive ones last"),
    s("CONFORMANCE_FAIL_FAST_LEAD", User, "a count N", "0", "with CONFORMANCE_FAIL_FAST, the first N trials of CONFORMANCE_TRIALS_FILE run before any other starts"),
    s("CONFORMANCE_HELPER_CONNECTIONS", User, "1 to 32, or `inherit`", "1", "CUDA_DEVICE_MAX_CONNECTIONS of the helper children (importers, the rules' child), whose contexts are then made faster"),
    s("CONFORMANCE_JUNIT", User, "a file path", "none", "also write JUnit XML (skipped trials carry their reason)"),
    s("CONFORMANCE_LIBRARY", User, "a file path", "each LD_PRELOAD entry", "the library under test, for `suite::library_reached` and the report's resolution table"),
    s("CONFORMANCE_NVML", User, "a library path", "`libnvidia-ml.so.1`", "the NVML library asked for the driver's version and the devices' modes"),
    s("CONFORMANCE_PARTITION", User, "`k/n`", "the whole run", "run shard k of n (by count over the sorted trial names; the `suite::` trials in every shard)"),
    s("CONFORMANCE_REPORT_DIR", User, "a folder", "`target/conformance-report/`", "where report.md, report.json and the timeline go"),
    s("CONFORMANCE_REQUIRE", User, "`gpu,ipc,peer,host-pool,host-numa,cuda13,fabric,imex,pool-less,checkpoint`, any of them", "none", "a missing capability fails its trials instead of ignoring them (GPU CI: at least `gpu`)"),
    s("CONFORMANCE_RERUN_FAILED", User, "a count N", "0", "rerun each failure up to N times in fresh processes (also `--rerun-failed N`); a pass on a rerun is `flaky`"),
    s("CONFORMANCE_RUN_BUDGET", User, "seconds, above 0", "none", "the whole run's budget: when it runs out (or on SIGTERM, SIGINT, SIGHUP) no trial starts, unfinished trials are `interrupted`, the reports are written, exit 124 (a signal: 128 + it)"),
    s("CONFORMANCE_SCHEDULE", User, "`budget` or `serial`", "`budget`", "`serial` runs one trial at a time, each with the device alone, to show the schedule changes no verdict"),
    s("CONFORMANCE_STRESS_SECS", User, "seconds", "1", "how long the `load::` trials run (the trial deadline must exceed it by 5 s)"),
    s("CONFORMANCE_STRESS_SEED", User, "a number", "the clock", "the `load::` trials' seed (printed in every failure they report)"),
    s("CONFORMANCE_STRICT", User, "`documented`", "off", "every departure from the documentation fails, on every driver branch"),
    s("CONFORMANCE_TRIALS_FILE", User, "a file, one trial name a line", "every trial", "run only the trials named (and the `suite::` trials); with CONFORMANCE_FAIL_FAST, in the file's order"),
    s("CONFORMANCE_TRIAL_TIMEOUT", User, "seconds", "60", "how long a trial may go without an answer; every other wait derives from it"),
    s("CONFORMANCE_VERBOSE", User, "`0` or `1`", "0", "the last screen lists every ignored trial and every failure, not the reasons grouped"),
    s("CONFORMANCE_WORKERS", User, "`0`", "worker processes", "run the trials in this process (debugging: a crash then ends the run)"),
    s("CONFORMANCE_CRASH_TRIAL", TestOnly, "a trial name", "none", "that trial crashes its process on purpose; it alone fails"),
    s("CONFORMANCE_IPC_FAULT", TestOnly, "`die:STEP` or `hang:STEP`", "none", "IPC importer children abort or hang at STEP (`start`, `import`, `verify`, `write`, `free`)"),
    s("CONFORMANCE_PLANT_LEAK", TestOnly, "`alloc`, `pool`, `fd`, comma-separated", "none", "the `suite::planted_leak_*` trials leak on purpose; `suite::no_leaks` must name each"),
    s("CONFORMANCE_MUTANT", Mutants, "a mutant's name, or `list`", "none", "the shim breaks one API as that mutant does"),
    s("CONFORMANCE_MUTANTS_HINT", Mutants, "a mutants.json", "none", "a mutant's killers in that earlier run go first"),
    s("CONFORMANCE_MUTANTS_KEEP", Mutants, "`1`", "off", "keep each mutant run's report, stderr and trial list"),
    s("CONFORMANCE_MUTANTS_NEEDS", Mutants, "a capability (`peer`)", "every mutant", "judge only the mutants that need that capability"),
    s("CONFORMANCE_MUTANTS_ONLY", Mutants, "mutant names, comma-separated", "every mutant", "judge only the mutants named"),
    s("CONFORMANCE_MUTANTS_REPORT", Mutants, "a folder", "none", "write mutants.md and mutants.json there"),
    s("CONFORMANCE_MUTANTS_RESUME", Mutants, "mutants.json files, `:`-separated", "none", "go on from earlier parts of a run"),
    s("CONFORMANCE_MUTANTS_SELECT", Mutants, "`calls` or `all`", "`calls`", "run each mutant against the trials that reached its API in the baseline, or the whole suite"),
    s("CONFORMANCE_MUTANTS_STOP", Mutants, "`first` or `never`", "`first`", "stop each mutant's run at its first kill, or run it whole (the full matrix)"),
    s("CONFORMANCE_MUTANTS_SUITE_THREADS", Mutants, "a count", "the suite's own", "how many trials each suite run of the mutation runner has at once"),
    s("CONFORMANCE_SHIM_CALLS_FILE", Mutants, "a file path", "none", "the shim counts the calls it forwards there"),
    s("CONFORMANCE_SHIM_DELAY_MS", Mutants, "milliseconds", "0", "the shim delays every hooked call (a slow but faithful layer)"),
    s("CONFORMANCE_SHIM_FAULTS", Mutants, "fault names, comma-separated", "none", "the shim's faults of the same library, one or more at a time"),
    s("CONFORMANCE_SHIM_FIRST_WAIT_MS", Mutants, "milliseconds", "3000", "with the shim's `first-call-wait`, how long each process's first call of GPU work is held (a layer that time-slices the GPU)"),
    s("CONFORMANCE_ENTRY_KEEP", Tests, "a folder", "none", "tests/entry.rs keeps each mode's report there"),
    s("CONFORMANCE_FAKE_NVML_SO", Tests, "a library path", "the one build.rs made", "the fake NVML library tests/travel.rs uses"),
    s("CONFORMANCE_FAKE_NVML_VERSION", Tests, "a driver version", "the fake's own", "the version the fake NVML library answers"),
    s("CONFORMANCE_INTERRUPT_TEST_MARK", Tests, "a file path", "none", "tests/interrupt.rs's marker that the run under test has started"),
    s("CONFORMANCE_REPORTS_KEEP", Tests, "a folder", "none", "tests/reports.rs keeps its reports there"),
    s("CONFORMANCE_SHIM_KEEP", Tests, "a folder", "none", "tests/shim.rs keeps each faulted run's report there"),
    s("CONFORMANCE_SHIM_SO", Tests, "a library path", "the one build.rs made", "the shim library the tests and the mutation runner preload"),
    s("CONFORMANCE_SHIM_SO_NO_PROC_ADDRESS", Tests, "a library path", "the one build.rs made", "the shim built without its cuGetProcAddress hook"),
    s("CONFORMANCE_SHIM_SO_PROC_ONLY", Tests, "a library path", "the one build.rs made", "the shim that hooks only cuGetProcAddress"),
    s("CONFORMANCE_TEST_RUN_SUITE", Tests, "`1`", "off", "the crate's tests that run the whole suite on a GPU do so"),
    s("CONFORMANCE_TRAVEL_KEEP", Tests, "a folder", "none", "tests/travel.rs keeps every report there"),
    s("CONFORMANCE_CHECKPOINT_PID", Child, "a process id", "none", "the process a `checkpoint` child takes through the driver's engine"),
    s("CONFORMANCE_CHECKPOINT_STEP", Child, "`toggle`, `state`, `rescue` or `lock:MS`", "none", "what a `checkpoint` child does to that process"),
    s("CONFORMANCE_CHILD", Child, "a role", "none", "which role this process of the suite plays (worker, importer, a trial's own process…)"),
    s("CONFORMANCE_CHILD_MACHINE", Child, "a file path", "none", "a trial's own process reads the machine its parent probed from there"),
    s("CONFORMANCE_CHILD_READY", Child, "`1`", "off", "a child started ahead says when its context is made"),
    s("CONFORMANCE_CRUMB", Child, "a file path", "none", "where a process leaves the breadcrumb of the driver call it is in"),
    s("CONFORMANCE_EDGE_ROWS", Child, "`API:ARG:FROM:DEV`", "none", "the edge rows a fresh process runs after a hang"),
    s("CONFORMANCE_FIRST_WAIT_MS", Child, "milliseconds", "0", "the library's wait at a new process's first GPU work that the run plans with; every wait takes it on top"),
    s("CONFORMANCE_IMPORTER_DEVICE", Child, "a device ordinal", "0", "the device an importer child works on"),
    s("CONFORMANCE_IMPORTER_GRANT", Child, "`1`", "off", "the importer grants its device access to each pool it imports"),
    s("CONFORMANCE_UNINIT_LOOKUP", Child, "`1`", "off", "the uninit child looks the 14 APIs up and counts devices, no cuInit"),
    s("CONFORMANCE_UNINIT_SKIP", Child, "API indexes, comma-separated", "none", "the APIs an uninit child skips (already answered)"),
    s("CONFORMANCE_WORKER_CALLS_FILE", Child, "a file path", "none", "where a worker finds the shim's call counts"),
    s("CONFORMANCE_WORKER_CONTEXT", Child, "`0` or `1`", "1", "whether a worker makes a context"),
    s("CONFORMANCE_WORKER_ID", Child, "a number", "none", "a worker's number"),
    s("CONFORMANCE_CHECKPOINT_ENGINE_BUILT", Build, "a program path", "set by build.rs", "the checkpoint leg's outside engine build.rs made (`command:` engines, the mutant engines)"),
    s("CONFORMANCE_FAKE_NVML_BUILT", Build, "a library path", "set by build.rs", "the fake NVML library build.rs made"),
    s("CONFORMANCE_GIT_COMMIT", Build, "a commit", "set by build.rs", "the commit the suite was built from (the report's provenance)"),
    s("CONFORMANCE_GIT_DIRTY", Build, "`0` or `1`", "set by build.rs", "whether the tree had changes when built"),
    s("CONFORMANCE_SHIM_BUILT", Build, "a library path", "set by build.rs", "the shim library build.rs made"),
    s("CONFORMANCE_SHIM_BUILT_NO_PROC_ADDRESS", Build, "a library path", "set by build.rs", "the shim build.rs made without its cuGetProcAddress hook"),
    s("CONFORMANCE_SHIM_BUILT_PROC_ONLY", Build, "a library path", "set by build.rs", "the shim build.rs made that hooks only cuGetProcAddress"),
];

/// The entry for `name`, if the table has it.
pub fn find(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.name == name)
}

/// The reference page's tables, one per kind of setter (docs/guide/settings.md holds it between
/// its markers; a test keeps them equal).
pub fn reference_tables() -> String {
    let kinds = [User, TestOnly, Mutants, Tests, Child, Build];
    let mut out = String::new();
    for who in kinds {
        out.push_str(&format!(
            "\n### {}\n\n| variable | accepts | unset | what it does |\n|---|---|---|---|\n",
            who.heading()
        ));
        for st in SETTINGS.iter().filter(|st| st.who == who) {
            out.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                st.name, st.accepts, st.default, st.doc
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    /// Every `CONFORMANCE_…` name in the text files under `dir`.
    fn names_under(dir: &Path, out: &mut BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                names_under(&p, out);
            } else if let Ok(text) = std::fs::read_to_string(&p) {
                names_in(&text, out);
            }
        }
    }

    fn names_in(text: &str, out: &mut BTreeSet<String>) {
        let mut rest = text;
        while let Some(i) = rest.find("CONFORMANCE_") {
            let name: String = rest[i..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            rest = &rest[i + name.len()..];
            let name = name.trim_end_matches('_');
            if name.len() > "CONFORMANCE_".len() {
                out.insert(name.to_string());
            }
        }
    }

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    /// What the project's code, tests, shim, build, xtask and CI name, the table has, and the
    /// table names nothing they do not (this file left out).
    #[test]
    fn the_table_names_every_variable_the_project_uses() {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut used = BTreeSet::new();
        for d in ["tests", "shim", "benches"] {
            names_under(&crate_dir.join(d), &mut used);
        }
        let own: BTreeSet<String> = SETTINGS.iter().map(|s| s.name.to_string()).collect();
        // This file names them all; the rest of src/ counts.
        let mut elsewhere = BTreeSet::new();
        for e in walk(&crate_dir.join("src")) {
            if !e.ends_with("harness/settings/table.rs") {
                if let Ok(t) = std::fs::read_to_string(&e) {
                    names_in(&t, &mut elsewhere);
                }
            }
        }
        used.extend(elsewhere);
        names_in(
            &std::fs::read_to_string(crate_dir.join("build.rs")).unwrap_or_default(),
            &mut used,
        );
        names_under(&repo().join("xtask").join("src"), &mut used);
        names_under(&repo().join(".ci"), &mut used);
        let missing: Vec<_> = used.difference(&own).collect();
        assert!(
            missing.is_empty(),
            "used but not in harness/settings/table.rs: {missing:?}"
        );
        let unused: Vec<_> = own.difference(&used).collect();
        assert!(
            unused.is_empty(),
            "in harness/settings/table.rs but used nowhere: {unused:?}"
        );
        let mut names: Vec<_> = SETTINGS.iter().map(|s| s.name).collect();
        names.dedup();
        assert_eq!(names.len(), SETTINGS.len(), "a name twice in the table");
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut v = Vec::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                v.extend(walk(&p));
            } else {
                v.push(p);
            }
        }
        v
    }

    /// The lines of the files under src/ (but `skip`) that call one of `calls` with an argument not
    /// in `allowed`, as `FILE:LINE`.
    fn calls_outside(calls: &[&str], allowed: &[&str], skip: &[&str]) -> Vec<String> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut wrong = Vec::new();
        for f in walk(&src) {
            let rel = f.strip_prefix(&src).unwrap_or(&f).display().to_string();
            if skip.iter().any(|s| rel.starts_with(s)) {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            for (n, line) in text.lines().enumerate() {
                let bad = calls.iter().any(|call| {
                    line.find(call).is_some_and(|i| {
                        let arg = line[i + call.len()..].split(')').next().unwrap_or("");
                        !allowed.contains(&arg)
                    })
                });
                if bad {
                    wrong.push(format!("{rel}:{}", n + 1));
                }
            }
        }
        wrong
    }

    /// One place reads the environment (`os`): elsewhere in src/ it is read only for variables
    /// that are not the suite's (the driver's, the loader's, nextest's) and for the report's
    /// record of it.
    #[test]
    fn only_os_reads_the_environment() {
        let others = [
            "\"CUDA_VISIBLE_DEVICES\"",
            "Library::ENV",
            "\"LD_PRELOAD\"",
            "\"NEXTEST\"",
            "MAX_CONNECTIONS_VAR",
        ];
        let calls = ["std::env::var(", "std::env::var_os(", "env::var(", "env::var_os("];
        // os.rs is the one place; this file names the calls in its checks.
        let wrong = calls_outside(&calls, &others, &["os.rs", "harness/settings/table.rs"]);
        assert!(wrong.is_empty(), "the environment read outside os: {wrong:?}");
    }

    /// One place reads and parses a run's settings (`settings::values`, once per process): elsewhere
    /// in src/ `os::setting` reads only what the suite tells its own children (a protocol, `Child`
    /// in the table) and the IPC importers' test-only fault switch.
    #[test]
    fn only_the_settings_read_a_run_s_settings() {
        let protocol = [
            "CHILD_VAR",
            "CRUMB_VAR",
            "READY_VAR",
            "MACHINE_FILE_VAR",
            "IMPORTER_DEVICE_VAR",
            "IMPORTER_GRANT_VAR",
            "LOOKUP_VAR",
            "SKIP_VAR",
            "EDGE_ROWS_VAR",
            "CALLS_FILE_VAR",
            "CONTEXT_VAR",
            "FAULT_VAR",
            "PID_VAR",
            "STEP_VAR",
        ];
        let calls = ["os::setting(", "os::setting_os("];
        let wrong = calls_outside(&calls, &protocol, &["os.rs", "harness/settings/"]);
        assert!(wrong.is_empty(), "settings read outside harness::settings: {wrong:?}");
    }

    /// The reference page holds the table's rows between its markers, as `reference_tables` makes
    /// them (UPDATE_SETTINGS_PAGE=1 writes them there).
    #[test]
    fn the_reference_page_is_the_table() {
        let page = repo().join("docs").join("guide").join("settings.md");
        let (begin, end) = ("<!-- settings table: begin -->", "<!-- settings table: end -->");
        let text = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        let (Some(a), Some(b)) = (text.find(begin), text.find(end)) else {
            panic!("{} lacks the markers {begin} and {end}", page.display());
        };
        let want = reference_tables();
        let have = &text[a + begin.len()..b];
        if have != want {
            if std::env::var_os("UPDATE_SETTINGS_PAGE").is_some() {
                std::fs::write(&page, format!("{}{begin}{want}{}", &text[..a], &text[b..])).unwrap();
            } else {
                panic!(
                    "{} differs from harness/settings/table.rs: run `UPDATE_SETTINGS_PAGE=1 cargo test -p conformance --features selftest --lib \
                     settings` to write the table there",
                    page.display()
                );
            }
        }
    }
}
