//! A made-up run for the renderers' tests: a machine of two named devices (so row sets are drawn)
//! with a library under test that is bypassed and not reached, a broken precondition, and records
//! of every outcome (failures with and without a cause, a blame, a declared departure seen,
//! ignores for two reasons, interruptions, trials per device, per pair and over many devices), in
//! the order trials finish, not by name.

use crate::driver::blame::Cause;
use crate::driver::check::code_name;
use crate::driver::cu::CUresult;
use crate::driver::observe::Observation;
use crate::harness::case::{Group, Per};
use crate::harness::machine::{blank, blank_device, Machine};
use crate::harness::outcome::{Kind, Outcome, Record, Timing, Turn};
use conformance_model::ChildSpan;
use conformance_model::{
    self as model, Device, EntryMode, Extra, Identity, LibraryFile, P2p, PathAnswer, RunProvenance, Selection,
    UnderTest,
};

/// The report of a run on a default machine whose trials came to `records`, in `wall_s`.
pub fn report_of(records: &[Record], wall_s: f64) -> conformance_model::Report {
    let facts = crate::report::build::Facts {
        wall_s,
        ..Default::default()
    };
    crate::report::build::report(&Machine::default(), records, &facts)
}

/// The fixture's facts: when its report is written, its wall time and workers, its driver, its shard.
pub fn facts() -> crate::report::build::Facts {
    crate::report::build::Facts {
        date: DATE.into(),
        finished: FINISHED.into(),
        wall_s: WALL_S,
        workers: WORKERS,
        driver: ("580.159.04".into(), Some(580)),
        strict: false,
        partition: Some(crate::harness::settings::Partition { k: 2, n: 3 }),
        footprint: None,
        first_wait: None,
    }
}

/// When the fixture's report is written, its wall time and workers.
pub const DATE: &str = "2026-11-27 01:05:58 UTC";
pub const FINISHED: &str = "2026-11-27T01:05:58Z";
pub const WALL_S: f64 = 7.3125;
pub const WORKERS: usize = 4;

const LIBCUDA: &str = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
const LAYER: &str = "/opt/layer/liblayer.so";

fn device(ordinal: i32, uuid: &str, bus: &str) -> Device {
    Device {
        name: "NVIDIA H200".into(),
        compute_capability: (9, 0),
        memory_pools: true,
        handle_types: 9,
        host_pools: true,
        host_numa_pools: ordinal == 0,
        host_numa_id: 0,
        fabric: true,
        total_mem: 150_110_011_392,
        uuid: Some(uuid.into()),
        pci_bus_id: Some(bus.into()),
        pci_ids: Some("10de:2335 (subsystem 10de:18bf)".into()),
        modes: Some("MIG off, virtualization passthrough".into()),
        physical_mem: None,
        ..blank_device(ordinal)
    }
}

fn p2p(a: i64, b: i64, native_atomics: bool) -> P2p {
    P2p {
        a,
        b,
        performance_rank: 0,
        native_atomics,
        extra: Extra::new(),
    }
}

/// The machine: every API resolved into libcuda but 833, which the driver lacks; the layer
/// preloaded and defining cuMemAllocAsync, reached by no path.
pub fn machine() -> Machine {
    let apis = crate::driver::APIS;
    let resolved: Vec<(String, String)> = apis
        .iter()
        .filter(|(i, _)| *i != 833)
        .map(|(_, a)| (a.to_string(), LIBCUDA.to_string()))
        .collect();
    let facts = model::Machine {
        checkpoint_api: None,
        driver_version: 13000,
        identity: Some(Identity {
            version: "580.159.04".into(),
            source: "NVML (libnvidia-ml.so.1)".into(),
            sources: vec![
                ("NVML (libnvidia-ml.so.1)".into(), "580.159.04".into()),
                ("the libcuda file name".into(), "none".into()),
            ],
            module: Some("580.159.04".into()),
            libcuda: None,
            extra: Extra::new(),
        }),
        libcuda: Some(LIBCUDA.into()),
        load_error: Some(None),
        // Not CUDA_ERROR_NO_DEVICE: a broken precondition.
        hidden_init: Some(Some(0)),
        startup_secs: Some(0.375),
        // The committed fixture predates the measure: none, so that it renders as before.
        first_work: None,
        host_gpus: Some(2),
        resolved: Some(resolved.clone()),
        preloaded: Some(vec![LAYER.into()]),
        paths: Some(vec![
            PathAnswer {
                mode: EntryMode::ProcAddress,
                error: None,
                objects: resolved,
                extra: Extra::new(),
            },
            PathAnswer {
                mode: EntryMode::Link,
                error: Some("no linked driver".into()),
                objects: vec![],
                extra: Extra::new(),
            },
        ]),
        under_test: Some(vec![
            UnderTest {
                path: LAYER.into(),
                named_by: "LD_PRELOAD".into(),
                exports: vec!["cuMemAllocAsync".into()],
                error: None,
                file: Some(Ok(LibraryFile {
                    file: LAYER.into(),
                    size: 123_456,
                    sha256: "ab".repeat(32),
                    cu_exports: 3,
                    ..LibraryFile::default()
                })),
                extra: Extra::new(),
            },
            UnderTest {
                path: "libgone.so".into(),
                named_by: "LD_PRELOAD".into(),
                exports: vec![],
                error: Some("libgone.so: cannot open shared object file".into()),
                file: Some(Err("not found".into())),
                extra: Extra::new(),
            },
        ]),
        lookup_init: Some(Some(Ok(3))),
        cu_init: 0,
        devices: vec![
            device(0, "GPU-00000000-1111-2222-3333-444444444444", "0000:00:06.0"),
            device(1, "GPU-55555555-6666-7777-8888-999999999999", "0000:00:07.0"),
        ],
        peer: vec![vec![true, true], vec![true, true]],
        exported: apis.iter().map(|(i, _)| (u64::from(*i), *i != 833)).collect(),
        cuda13_selectors: true,
        entry: Some("proc-address (cuGetProcAddress of libcuda.so.1)".into()),
        missing: vec!["cuMemPoolTrimTo".into()],
        imex_channels: false,
        probe_error: None,
        p2p: Some(vec![p2p(0, 1, true), p2p(1, 0, false)]),
        selection: Some(Selection {
            explicit: true,
            devices: vec![0, 1],
            pairs: vec![(0, 1), (1, 0)],
            multi: vec![0, 1],
            extra: Extra::new(),
        }),
        provenance: Some(RunProvenance {
            suite_version: "0.1.0".into(),
            commit: "b1f6b88023b27146add2ec05df086beb20a9a12d".into(),
            dirty: Some(false),
            host: "vm".into(),
            kernel: "6.18.44".into(),
            os: "Ubuntu 24.04.3 LTS".into(),
            environment: vec![
                ("CONFORMANCE_REPORT_DIR".into(), "/root/out".into()),
                ("CUDA_HOME".into(), "/usr/local/cuda".into()),
            ],
            started: "2026-11-27T01:05:51Z".into(),
            ..RunProvenance::default()
        }),
        ..blank()
    };
    Machine {
        facts,
        checkpoint: crate::harness::settings::Engine::Off,
    }
}

/// A record that ran on a device for `secs`, from `start` in run seconds.
fn ran(trial: &str, group: Group, outcome: Outcome, kind: Kind, message: &str, per: Per, dev: i32) -> Record {
    Record::new(trial, group, outcome, kind, message.into()).with(|r| {
        r.device_answer = true;
        r.set_dev(Some(dev));
        r.per = per;
    })
}

fn timed(r: Record, start: f64, secs: f64, worker: &str) -> Record {
    r.with(|r| {
        r.secs = secs;
        r.span = (start, start + secs);
        r.set_timing(Timing {
            worker: Some(worker.into()),
            wait_s: 0.0625,
            turn: Some(Turn::Shared),
            ..Timing::default()
        });
    })
}

fn check(api: u32, call: &str, expected: &str, observed: &str, ok: bool, deviation: Option<&str>) -> Observation {
    Observation {
        api: Some(api.into()),
        call: call.into(),
        documented: "CUDA_ERROR_INVALID_VALUE".into(),
        expected: expected.into(),
        observed: observed.into(),
        ok,
        deviation: deviation.map(String::from),
        ..Observation::default()
    }
}

/// The run's records, in the order its trials finished.
pub fn records() -> Vec<Record> {
    let api = Group::Api;
    let success = code_name(CUresult::CUDA_SUCCESS);
    let mut v = vec![
        timed(
            ran(
                "820_cuMemAllocAsync::size_zero::dev0",
                api(820),
                Outcome::Passed,
                Kind::Plain,
                "",
                Per::Device,
                0,
            ),
            0.5,
            1.25,
            "general 0",
        )
        .with(|r| {
            r.notes = vec!["a note".into(), "another".into()];
            r.set_calls(Some(0b11));
            r.observations = Some(vec![check(
                820,
                "cuMemAllocAsync(size 0)",
                &success,
                &success,
                true,
                Some("size_zero_succeeds"),
            )]);
        }),
        timed(
            ran(
                "820_cuMemAllocAsync::size_zero::dev1",
                api(820),
                Outcome::Passed,
                Kind::Plain,
                "",
                Per::Device,
                1,
            ),
            0.5,
            1.125,
            "general 1",
        ),
        timed(
            ran(
                "821_cuMemAllocFromPoolAsync::frees_what_it_got",
                api(821),
                Outcome::Failed,
                Kind::Check,
                "cuMemFreeAsync(p): expected CUDA_SUCCESS, got CUDA_ERROR_INVALID_VALUE\nsecond line",
                Per::Device,
                0,
            ),
            1.75,
            0.5,
            "general 0",
        )
        .with(|r| {
            r.blame = Some(822);
            r.set_cause(Some(&Cause::returned("cuMemFreeAsync(p)", CUresult(1))));
            r.observations = Some(vec![
                check(
                    822,
                    "cuMemFreeAsync(NULL)",
                    "CUDA_ERROR_INVALID_VALUE (1)",
                    "CUDA_ERROR_INVALID_VALUE (1)",
                    true,
                    None,
                ),
                check(
                    822,
                    "cuMemFreeAsync(p)",
                    "CUDA_SUCCESS (0)",
                    "CUDA_ERROR_INVALID_VALUE (1)",
                    false,
                    None,
                ),
            ]);
        }),
        timed(
            ran(
                "822_cuMemFreeAsync::hangs",
                api(822),
                Outcome::Failed,
                Kind::Hung,
                "no answer within 10 s",
                Per::Device,
                1,
            ),
            1.75,
            3.5,
            "lane ipc",
        )
        .with(|r| {
            r.set_cause(Some(&Cause::hung(&Some((822, "cuMemFreeAsync".into())))));
        }),
        timed(
            ran(
                "822_cuMemFreeAsync::again",
                api(822),
                Outcome::Failed,
                Kind::Check,
                "same cause",
                Per::Device,
                0,
            ),
            2.25,
            0.25,
            "general 0",
        )
        .with(|r| {
            r.set_cause(Some(&Cause::returned("cuMemFreeAsync(q)", CUresult(1))));
        }),
        timed(
            ran(
                "823_cuMemPoolCreate::wrong_value",
                api(823),
                Outcome::Failed,
                Kind::Check,
                "attribute read 3, expected 4\n⏎ detail",
                Per::Device,
                0,
            ),
            2.5,
            0.375,
            "general 0",
        ),
        timed(
            ran(
                "825_cuMemPoolExportPointer::departs",
                api(825),
                Outcome::KnownDeparture,
                Kind::Departure,
                "departure size_zero_succeeds reproduced on branch 590",
                Per::Device,
                0,
            ),
            2.875,
            0.125,
            "general 0",
        ),
        timed(
            ran(
                "826_cuMemPoolExportToShareableHandle::listed",
                api(826),
                Outcome::ExpectedFailure,
                Kind::Expectation,
                "expected failure (CONFORMANCE_EXPECT): it fails\nhere",
                Per::Device,
                1,
            ),
            3.0,
            0.25,
            "general 1",
        ),
        timed(
            ran(
                "827_cuMemPoolGetAccess::sometimes::dev0_dev1",
                api(827),
                Outcome::Flaky,
                Kind::Check,
                "failed, passed when rerun",
                Per::Pair,
                0,
            ),
            3.25,
            0.625,
            "lane peer",
        ),
        timed(
            ran(
                "828_cuMemPoolGetAttribute::no_longer_crashes",
                api(828),
                Outcome::Changed,
                Kind::Crash,
                "returned CUDA_ERROR_INVALID_VALUE instead of SIGSEGV",
                Per::Multi,
                0,
            ),
            3.5,
            0.75,
            "general 1",
        ),
        timed(
            ran(
                "830_cuMemPoolImportPointer::pair::dev1_dev0",
                api(830),
                Outcome::Passed,
                Kind::Plain,
                "",
                Per::Pair,
                1,
            ),
            4.0,
            2.0,
            "lane peer",
        ),
        timed(
            ran(
                "831_cuMemPoolSetAccess::many",
                api(831),
                Outcome::Passed,
                Kind::Plain,
                "",
                Per::Multi,
                0,
            ),
            4.25,
            1.5,
            "general 0",
        ),
        timed(
            ran(
                "832_cuMemPoolSetAttribute::exclusive",
                api(832),
                Outcome::Passed,
                Kind::Plain,
                "",
                Per::Device,
                0,
            ),
            5.25,
            0.875,
            "lane ipc",
        )
        .with(|r| {
            r.set_timing(Timing {
                settle_s: 0.25,
                children: vec![ChildSpan {
                    role: "ipc-import".into(),
                    span: (5.0, 5.5),
                    ..ChildSpan::default()
                }],
                worker_start: Some((0.0, 0.5)),
                turn: Some(Turn::Exclusive),
                ..r.timing()
            });
        }),
        Record::new(
            "harness::fault_injection_caught",
            Group::Harness,
            Outcome::Passed,
            Kind::Plain,
            String::new(),
        )
        .with(|r| {
            r.secs = 0.0625;
        }),
        Record::new(
            "suite::no_leaks",
            Group::Suite,
            Outcome::Failed,
            Kind::Leak,
            "left 2 MiB in the default pool".into(),
        )
        .with(|r| {
            r.secs = 0.5;
        }),
        Record::new(
            "suite::preconditions",
            Group::Suite,
            Outcome::ExpectedFailure,
            Kind::Precondition,
            "precondition not met, listed".into(),
        ),
    ];
    for (i, why) in ["needs `ipc`: device 0 cannot export", "needs `imex`: no channel"]
        .iter()
        .enumerate()
    {
        for k in 0..(3 - 2 * i) {
            v.push(ran(
                &format!("824_cuMemPoolDestroy::ignored_{i}_{k}::dev{}", k % 2),
                api(824),
                Outcome::Ignored,
                Kind::Missing,
                why,
                Per::Device,
                k as i32 % 2,
            ));
        }
    }
    for name in [
        "829_cuMemPoolImportFromShareableHandle::cut",
        "833_cuMemPoolTrimTo::not_run",
    ] {
        v.push(Record::new(
            name,
            api(name[..3].parse().unwrap()),
            Outcome::Interrupted,
            Kind::Interrupted,
            "interrupted: SIGTERM after 6.0 s".into(),
        ));
    }
    v
}
