//! Many reports as one matrix (report::matrix), without a GPU or a browser: a committed H100 run cut
//! into two shards by CONFORMANCE_PARTITION's own rule merges back into one run, the whole run's
//! twin (one origin: one column), the same run on another machine is another column, every
//! committed report (of any age) reads, and the page fetches nothing. Off Linux, where the suite does not run, one test that fails saying so.

#[cfg(target_os = "linux")]
#[path = "common/report.rs"]
mod report;

#[cfg(target_os = "linux")]
mod linux {
    use super::report;
    use conformance::harness::settings::Partition;
    use conformance::report::matrix::{from_files, Column, Matrix};
    use conformance::suite::trials::shard_keeps;
    use conformance_model::{Outcome, Report};
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    /// A committed H100 run (issue 34's first run).
    const WHOLE: &str = "../docs/conformance/depth/h100-r580-2026-11-25-issue34/runs/run1-report.json";

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("cump-matrix-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn write(name: &str, r: &Report) -> String {
        let p = dir().join(name);
        std::fs::write(&p, r.to_json_text()).unwrap();
        p.to_string_lossy().into_owned()
    }

    fn whole() -> Report {
        report::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join(WHOLE))
    }

    /// Shard `k` of `n` of `whole` as that shard's run would report it: its trials (the `suite::`
    /// ones too), its API rows counted from them, and its partition.
    fn shard(whole: &Report, k: usize, n: usize) -> Report {
        let p = Partition::parse(&format!("{k}/{n}")).unwrap();
        let all = whole.trials.as_deref().unwrap();
        let names: BTreeSet<String> = all.iter().map(|t| t.trial.clone()).collect();
        let trials: Vec<_> = all
            .iter()
            .filter(|t| shard_keeps(p, &names, &t.trial))
            .cloned()
            .collect();
        let apis = (whole.apis.iter())
            .map(|a| {
                let own = |o: Outcome| trials.iter().filter(|t| t.api == a.index && t.outcome == o).count() as u64;
                let mut a = a.clone();
                a.passed = own(Outcome::Passed);
                a.failed = own(Outcome::Failed);
                a.ignored = own(Outcome::Ignored);
                a.changed = own(Outcome::Changed);
                if a.passed == 0 {
                    a.test_passed = "—".into();
                }
                a
            })
            .collect();
        Report {
            trials: Some(trials),
            apis,
            partition: Some(Some(conformance_model::Partition {
                k: p.k,
                n: p.n,
                by: "count".into(),
                ..Default::default()
            })),
            ..whole.clone()
        }
    }

    /// What two columns must share to be the same run's (the file names and the summed counts aside).
    fn content(c: &Column) -> impl PartialEq + std::fmt::Debug {
        let verdicts: Vec<_> = (c.apis.iter())
            .map(|a| (a.index, a.test_passed.clone(), a.judged, a.trials))
            .collect();
        (c.trials.clone(), c.totals.clone(), verdicts, c.origin.clone())
    }

    #[test]
    fn two_shards_merge_into_one_run_of_the_whole_runs_column() {
        let w = whole();
        let (a, b) = (
            write("shard1.json", &shard(&w, 1, 2)),
            write("shard2.json", &shard(&w, 2, 2)),
        );
        let whole_path = write("whole.json", &w);
        let alone: Matrix = from_files(std::slice::from_ref(&whole_path)).unwrap();
        let m: Matrix = from_files(&[whole_path, b, a]).unwrap();
        assert_eq!(
            m.columns.len(),
            1,
            "the whole run and its shards: one origin, one column"
        );
        let c = &m.columns[0];
        assert_eq!(c.runs.len(), 2, "the whole run, and its two shards as one run");
        assert_eq!(c.runs[0].shards, None);
        assert_eq!(c.runs[1].shards, Some((vec![1, 2], 2)));
        assert!(
            c.differs.is_empty(),
            "the shards put back together are the whole run: {:?}",
            c.differs
        );
        assert_eq!(content(&alone.columns[0]), content(c));
        assert_eq!(c.trials.len(), w.trials.as_ref().unwrap().len());
    }

    #[test]
    fn two_machines_are_two_columns() {
        let w = whole();
        let mut other = w.clone();
        other.machine.devices[0].name = "NVIDIA H200".into();
        let t5 = &mut other.trials.as_mut().unwrap()[5];
        t5.outcome = Outcome::Failed;
        t5.message = "cuMemPoolTrimTo returned CUDA_ERROR_INVALID_VALUE (1)".into();
        let m = from_files(&[write("h100.json", &w), write("h200.json", &other)]).unwrap();
        assert_eq!(m.columns.len(), 2);
        assert!(
            m.columns[0].label.starts_with("NVIDIA H100 80GB HBM3 · 580.159.04"),
            "{}",
            m.columns[0].label
        );
        assert!(
            m.columns[1].label.starts_with("NVIDIA H200 · 580.159.04"),
            "{}",
            m.columns[1].label
        );
        assert_eq!(m.columns[1].totals.get("failed"), Some(&1));
        let html = m.html().unwrap();
        assert!(
            html.contains("title=\"cuMemPoolTrimTo returned CUDA_ERROR_INVALID_VALUE (1)\""),
            "the failure's message is on its cell"
        );
        let t = &w.trials.as_ref().unwrap()[5].trial;
        assert!(
            m.markdown().contains(&format!("| `{t}` | passed | failed |")),
            "{}",
            m.markdown()
        );
    }

    /// Every committed report, old ones without `causes` or `partition` too, makes a page with no
    /// external asset.
    #[test]
    fn committed_reports_read_and_the_page_is_self_contained() {
        let mut found = Vec::new();
        let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/conformance")];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "json") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    // A report: its trials are records (a matrix.json's `trials` are names, and
                    // no report reads from it).
                    let read = report::parse(&text, &p.to_string_lossy());
                    if read.is_ok_and(|r| r.trials.as_ref().is_some_and(|t| !t.is_empty())) {
                        found.push(p.to_string_lossy().into_owned());
                    }
                }
            }
        }
        assert!(found.len() >= 10, "{found:?}");
        let m = from_files(&found).unwrap();
        // Every report is in exactly one column, of one run; a run of several reports is shards.
        assert_eq!(m.columns.iter().map(|c| c.reports.len()).sum::<usize>(), found.len());
        for r in m.columns.iter().flat_map(|c| &c.runs).filter(|r| r.reports.len() > 1) {
            assert!(r.shards.is_some(), "reports merged that are no shards: {:?}", r.reports);
        }
        // No API is ✓ where a trial of it was interrupted (the committed SIGTERM run's were).
        for c in &m.columns {
            for a in c.apis.iter().filter(|a| a.test_passed == "✓") {
                let cut = c
                    .trials
                    .iter()
                    .find(|(_, t)| t.api == a.index && (t.outcome == "interrupted" || t.not_in > 0));
                assert!(cut.is_none(), "{}: {} ✓ with {cut:?}", c.label, a.api);
            }
        }
        let html = m.html().unwrap();
        for external in ["src=\"http", "href=\"http", "<link", "<script src", "@import", "url("] {
            assert!(!html.contains(external), "the page must fetch nothing: {external}");
        }
        let out = dir().join("out");
        m.write(&out).unwrap();
        let back: Matrix = serde_json::from_str(&std::fs::read_to_string(out.join("matrix.json")).unwrap()).unwrap();
        assert_eq!(back, m, "matrix.json is the matrix");
    }
}

#[cfg(not(target_os = "linux"))]
#[test]
fn linux_only() {
    panic!("{}", conformance::LINUX_ONLY);
}
