//! The matrix on hand-made reports: shards merge, machines stay apart, hosts of one origin fold,
//! an interrupted or partly judged API is no ✓, a library that is not the driver is named by its
//! sha256, and `--expect` turns a host without a report into a missing column and a non-zero exit.

use super::origin::Report;
use super::program::matrix_of;
use super::*;
use conformance_model as model;
use std::collections::BTreeSet;
use std::process::ExitCode;

/// A report of `device` on `host` with `trials` (`(name, outcome)`, the API from the name).
fn hand_made(k_n: Option<(usize, usize)>, device: &str, host: &str, trials: &[(&str, &str)]) -> model::Report {
    let apis: BTreeSet<u64> = trials.iter().filter_map(|(t, _)| api_of(t)).collect();
    model::Report {
        date: Some("2026-11-26 10:00:00 UTC".into()),
        driver: Some("580.159.04".into()),
        provenance: Some(model::Provenance {
            run: model::RunProvenance {
                host: host.into(),
                environment: vec![("CONFORMANCE_REPORT_DIR".into(), format!("/out/{host}"))],
                ..Default::default()
            },
            ..Default::default()
        }),
        machine: model::Machine {
            devices: vec![model::Device {
                name: device.into(),
                ..Default::default()
            }],
            libcuda: Some("/x/libcuda.so.580.159.04".into()),
            entry: Some("proc-address (cuGetProcAddress of libcuda.so.1)".into()),
            ..Default::default()
        },
        partition: Some(k_n.map(|(k, n)| model::Partition {
            k,
            n,
            by: "count".into(),
            ..Default::default()
        })),
        apis: (apis.iter())
            .map(|i| model::ApiRow {
                index: Some(*i),
                api: format!("api{i}"),
                supported: "✓".into(),
                test_passed: "✓".into(),
                passed: 1,
                ..Default::default()
            })
            .collect(),
        trials: Some(
            (trials.iter())
                .map(|(t, o)| model::Trial {
                    trial: t.to_string(),
                    api: api_of(t),
                    outcome: model::Outcome::parse(o).unwrap(),
                    message: format!("{t} {o}"),
                    ..Default::default()
                })
                .collect(),
        ),
        ..Default::default()
    }
}

fn api_of(trial: &str) -> Option<u64> {
    trial.split("::").next().and_then(|i| i.parse().ok())
}

fn read(r: &model::Report, path: &str) -> Report {
    Report::of(path, r).unwrap()
}

fn report(k_n: Option<(usize, usize)>, device: &str, trials: &[(&str, &str)]) -> Report {
    read(&hand_made(k_n, device, "vm", trials), &format!("{device}-{k_n:?}.json"))
}

fn matrix(reports: Vec<Report>) -> Matrix {
    matrix_of(reports, Vec::new())
}

fn api(c: &Column, index: u64) -> &ApiRow {
    c.apis.iter().find(|a| a.index == Some(index)).unwrap()
}

#[test]
fn shards_merge_and_machines_stay_apart() {
    let a = report(
        Some((1, 2)),
        "H100",
        &[("820::a", "passed"), ("suite::no_leaks", "passed")],
    );
    let b = report(
        Some((2, 2)),
        "H100",
        &[("821::b", "failed"), ("suite::no_leaks", "failed")],
    );
    let c = report(
        None,
        "H200",
        &[
            ("820::a", "passed"),
            ("821::b", "passed"),
            ("suite::no_leaks", "passed"),
        ],
    );
    let m = matrix(vec![a, c, b]);
    assert_eq!(m.columns.len(), 2, "{:?}", m.columns);
    let shards = &m.columns[0];
    assert_eq!(shards.runs.len(), 1);
    assert_eq!(shards.runs[0].shards, Some((vec![1, 2], 2)));
    assert_eq!(shards.trials.len(), 3);
    assert_eq!(
        shards.trials["suite::no_leaks"].outcome, "failed",
        "the worst shard's outcome stands"
    );
    assert_eq!(shards.totals["failed"], 2);
    assert!(m.columns[1]
        .label
        .starts_with("H200 · 580.159.04 · libcuda.so.580.159.04 · proc-address"));
    assert!(
        m.html().unwrap().contains("821::b failed"),
        "the message is in the page"
    );
    assert!(
        m.markdown().contains("| `821::b` | failed | passed |"),
        "{}",
        m.markdown()
    );
}

#[test]
fn an_api_with_interrupted_trials_is_no_pass() {
    // The report itself says ✓ for 820 (as the committed SIGTERM run did): the matrix does not.
    let r = report(
        None,
        "H100",
        &[
            ("820::a", "passed"),
            ("820::b", "interrupted"),
            ("820::c", "interrupted"),
            ("820::d", "ignored"),
            ("821::a", "passed"),
            ("821::b", "ignored"),
        ],
    );
    let m = matrix(vec![r]);
    let c = &m.columns[0];
    assert_eq!(
        api(c, 820).test_passed,
        "◐ 1/3 judged",
        "the ignored trial does not apply"
    );
    assert_eq!((api(c, 820).judged, api(c, 820).trials), (1, 3));
    assert_eq!(api(c, 821).test_passed, "✓", "every trial that applies judged");
    assert!(
        m.markdown().contains("| 820 | api820 | ◐ 1/3 judged / ✓ |"),
        "{}",
        m.markdown()
    );
    let html = m.html().unwrap();
    assert!(html.contains("<td class=\"v partial\""), "the grid marks it partial");
    assert!(
        html.find("id=\"api-grid\"") < html.find("id=\"totals\""),
        "the page opens with the API × column grid"
    );
}

#[test]
fn a_failed_api_is_a_failure_even_partly_judged() {
    assert_eq!(verdict::mark("✓", 1, 0, 3), "✗");
    assert_eq!(verdict::mark("✗", 0, 3, 3), "✗");
    assert_eq!(verdict::mark("—", 0, 0, 2), "◐ 0/2 judged");
    assert_eq!(verdict::mark("—", 0, 0, 0), "—");
    assert_eq!(verdict::mark("✓", 0, 35, 35), "✓");
}

#[test]
fn hosts_of_one_origin_fold_and_the_one_that_differs_is_named() {
    let trials = [("820::a", "passed"), ("820::b", "passed")];
    let hosts: Vec<Report> = ["n1", "n2", "n3"]
        .iter()
        .map(|h| {
            let mut j = hand_made(None, "H100", h, &trials);
            if *h == "n2" {
                j.trials.as_mut().unwrap()[1].outcome = model::Outcome::Failed;
            }
            read(&j, &format!("{h}.json"))
        })
        .collect();
    let other = read(&hand_made(None, "H200", "n4", &trials), "n4.json");
    let m = matrix(hosts.into_iter().chain([other]).collect());
    assert_eq!(m.columns.len(), 2, "one column per GPU model, driver and library");
    let c = &m.columns[0];
    assert_eq!((c.runs.len(), c.hosts), (3, 3));
    assert!(c.label.ends_with(" · 3 runs, 3 host(s)"), "{}", c.label);
    assert_eq!(c.differs.len(), 1);
    assert_eq!(c.differs[0].run, "n2 (n2.json)");
    assert_eq!(c.differs[0].trials, ["820::b: failed"]);
    assert_eq!(c.trials["820::b"].outcome, "failed");
    assert!(c.trials["820::b"]
        .message
        .starts_with("across 3 runs: failed in n2 (n2.json); passed in 2"));
}

#[test]
fn runs_of_other_settings_stay_apart_and_say_so() {
    let mut budget = hand_made(None, "H100", "vm", &[("820::a", "passed")]);
    budget.provenance.as_mut().unwrap().run.environment = vec![("CONFORMANCE_RUN_BUDGET".into(), "3".into())];
    let plain = hand_made(None, "H100", "vm", &[("820::a", "passed")]);
    let m = matrix(vec![read(&plain, "plain.json"), read(&budget, "budget.json")]);
    assert_eq!(m.columns.len(), 2);
    assert!(
        m.columns[0].label.ends_with(" · default settings"),
        "{}",
        m.columns[0].label
    );
    assert!(
        m.columns[1].label.ends_with(" · CONFORMANCE_RUN_BUDGET=3"),
        "{}",
        m.columns[1].label
    );
}

#[test]
fn a_library_that_is_not_the_driver_is_named_by_its_sha256() {
    // A layer installed as libcuda.so.1, named by CONFORMANCE_LIBRARY: its file's sha256 is recorded.
    let sha = "449f53a4caae4ffd21984ac23845f8e1929a34a1287f3da16cd16be343932743";
    let mut j = hand_made(None, "H100", "vm", &[("820::a", "passed")]);
    j.machine.under_test = Some(vec![model::UnderTest {
        path: "/opt/layer/libcuda.so.1".into(),
        named_by: "CONFORMANCE_LIBRARY".into(),
        file: Some(Ok(model::LibraryFile {
            file: "/opt/layer/libcuda.so.1".into(),
            size: 1,
            sha256: sha.into(),
            cu_exports: 14,
            ..Default::default()
        })),
        ..Default::default()
    }]);
    let o = read(&j, "layer.json").origin;
    assert_eq!(o.library, "libcuda.so.1 (sha256 449f53a4caae)");
    assert!(!o.is_driver);
    // The same layer found first on the library path, named by nothing: the report has its path
    // only; it is not the driver's file, and the label says so.
    let mut j = hand_made(None, "H100", "vm", &[("820::a", "passed")]);
    j.machine.libcuda = Some("/opt/layer/libcuda.so.1".into());
    let o = read(&j, "path.json").origin;
    assert_eq!(o.library, "libcuda.so.1 (not the driver; no sha256 in the report)");
    // The APIs resolved to another file than the driver's.
    let mut j = hand_made(None, "H100", "vm", &[("820::a", "passed")]);
    j.machine.resolved = Some(vec![
        ("cuMemAllocAsync".into(), "/opt/layer/libcuda.so.1".into()),
        ("cuInit".into(), "/x/libcuda.so.580.159.04".into()),
    ]);
    assert!(read(&j, "resolved.json")
        .origin
        .library
        .starts_with("libcuda.so.1 (not the driver"));
    // The driver itself, its APIs found through its own link beside it.
    let mut j = hand_made(None, "H100", "vm", &[("820::a", "passed")]);
    j.machine.resolved = Some(vec![("cuMemAllocAsync".into(), "/x/libcuda.so.1".into())]);
    let d = read(&j, "d.json").origin;
    assert_eq!((d.library.as_str(), d.is_driver), ("libcuda.so.580.159.04", true));
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("cump-matrix-unit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn an_expected_host_without_a_report_is_missing_and_the_exit_is_not_zero() {
    let d = scratch("expect");
    let n1 = d.join("n1.json");
    std::fs::write(
        &n1,
        hand_made(None, "H100", "n1", &[("820::a", "passed")]).to_json_text(),
    )
    .unwrap();
    let broken = d.join("n3.json");
    // fixture: a report that is no JSON, to be named unreadable.
    std::fs::write(&broken, "{ not json").unwrap();
    let inventory = d.join("fleet.txt");
    std::fs::write(&inventory, "# the fleet\nn1\nn2   # never reported\nn3\nh100\n").unwrap();
    let s = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let m = from_files_expecting(&[s(&n1), s(&broken)], &s(&inventory)).unwrap();
    assert_eq!(m.missing(), ["n2", "n3"]);
    assert_eq!(m.unreadable.len(), 1, "the broken report is named, not fatal");
    assert_eq!(m.expected[3].columns, [1], "a GPU model matches without regard to case");
    let md = m.markdown();
    assert!(md.contains("**c2**: **missing**: n2"), "{md}");
    assert!(
        md.contains("| 820 | api820 | ✓ / ✓ | **missing** | **missing** |"),
        "{md}"
    );
    assert!(m.html().unwrap().contains("<td class=\"v missing\">missing</td>"));
    let out = d.join("out");
    let args = [
        s(&n1),
        s(&broken),
        "--expect".into(),
        s(&inventory),
        "--out".into(),
        s(&out),
    ];
    assert_eq!(main(&args), ExitCode::from(INCOMPLETE));
    assert!(out.join("matrix.html").exists(), "the page is written all the same");
    std::fs::write(&inventory, "n1\n").unwrap();
    let args = [s(&n1), "--expect".into(), s(&inventory), "--out".into(), s(&out)];
    assert_eq!(main(&args), ExitCode::SUCCESS, "every expected host reported");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_bad_inventory_is_an_error_naming_the_file_and_the_line() {
    let e = expect::parse("fleet.txt", "# nothing\n\n").unwrap_err();
    assert!(e.contains("fleet.txt") && e.contains("lists no host"), "{e}");
    let e = expect::parse("fleet.txt", "n1\nN1 # again\n").unwrap_err();
    assert!(e.contains("fleet.txt: line 2") && e.contains("first on line 1"), "{e}");
    let e = expect::read("/nonexistent/fleet.txt").unwrap_err();
    assert!(e.starts_with("--expect /nonexistent/fleet.txt: cannot read it"), "{e}");
    assert_eq!(
        expect::parse("f", "NVIDIA H100 80GB HBM3 # a model\nnode-7\n").unwrap(),
        [(1, "NVIDIA H100 80GB HBM3".to_string()), (2, "node-7".to_string())]
    );
}
