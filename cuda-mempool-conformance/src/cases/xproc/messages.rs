//! What the exporter and its importers say to each other, as serde types whose JSON text is the
//! messages': the round trip's, a scenario's, the concurrent imports' and the imported-pool rules'
//! (a kept importer's trial starts with `harness::kept_children::KeptWord::As`). Export data and
//! event handles travel in hex.

use serde::{Deserialize, Serialize};

/// The exporter to a round trip's importer (`roundtrip`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(super) enum ToImporter {
    /// One exported pool, its fd riding along: `{"op": "pool", "index": I}`.
    Pool { index: usize },
    /// Every pool sent: what to import from each, in order, and the IPC event to wait for.
    Go { pools: Vec<PoolMeta>, event: String },
    /// Write the pattern back (the first importer).
    Write,
    /// Write nothing (the others).
    Skip,
    /// Free every import.
    Free,
}

/// One exported pool's allocations, in order: sizes, pattern seeds, export data.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(super) struct PoolMeta {
    pub sizes: Vec<usize>,
    pub seeds: Vec<u8>,
    pub data: Vec<String>,
}

/// A round trip's importer to the exporter (`roundtrip`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(super) enum FromImporter {
    /// Every import reads the exporter's bytes; the device the memory is on, in its numbering
    /// (-1: it imported nothing).
    Verified { ordinal: i32 },
    /// Written (or skipped, as told).
    Written,
    /// Every import freed: its open fds after its start and at the end.
    Done { fds_start: usize, fds_end: usize },
}

/// An importer's one answer to a scenario or a concurrent import: `{"op": "answer", "value": T}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(super) enum Reply<T> {
    Answer { value: T },
}

/// The scenario an `ipc-scenario` importer takes (`scenarios`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(super) enum Scenario {
    ZeroData,
    Interior,
    FreeSync,
    Twice,
    Large,
    FreeHeld,
}

/// The exporter to an `ipc-scenario` importer, the pool's fd riding along.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(super) enum ToScenario {
    /// Take `name` on the export data (of allocations of `size` bytes).
    Scenario {
        name: Scenario,
        data: Vec<String>,
        size: usize,
    },
}

/// What a scenario's importer answers: each scenario the codes (`CUresult`'s number) and
/// findings it has, the others absent.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub(super) struct ScenarioAnswer {
    /// zero_data: the all-zero data's import, then the genuine data's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zero: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub genuine: Option<u32>,
    /// interior: the whole allocation's import and the interior's, the distance between the two
    /// imports, and the read through the interior's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interior: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<u32>,
    /// The last bytes read back as the exporter wrote them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail_ok: Option<bool>,
    /// free_sync, large, free_held: the import.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub import: Option<u32>,
    /// The first bytes read back as the exporter wrote them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free: Option<u32>,
    /// The imported pool's destruction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destroy: Option<u32>,
    /// twice: both imports, whether they are one address, both read before a free, the first's
    /// free, the sync after it, the second's read after that, and its free.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub second: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_first: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_after: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_second: Option<u32>,
    /// large: the reads of the first and the last bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail: Option<u32>,
    /// free_held: how long the free on the held stream took, and whether it returned while the
    /// stream was held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub returned_while_held: Option<bool>,
}

/// How an `ipc-concurrent` importer's threads import (`concurrent`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(super) enum Shape {
    /// Each thread imports the pool from its own dup of the fd, then the pointer into it.
    Handle,
    /// The pool imported once, every thread imports the pointer into it.
    OnePool,
    /// A pool per thread imported beforehand, the pointers imported at once.
    OwnPools,
}

impl Shape {
    /// Its name on the wire and in the trials' names.
    pub(super) fn name(self) -> &'static str {
        match self {
            Shape::Handle => "handle",
            Shape::OnePool => "one_pool",
            Shape::OwnPools => "own_pools",
        }
    }
}

/// The exporter to an `ipc-concurrent` importer, the pool's fd riding along.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(super) enum ToConcurrent {
    /// `threads` threads import as `shape` says, the pointer's export data `data`.
    Concurrent { shape: Shape, threads: usize, data: String },
}

/// What an `ipc-concurrent` importer answers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub(super) struct ConcurrentAnswer {
    pub threads: Vec<ThreadAnswer>,
    /// Each imported address freed, in thread order.
    pub frees: Vec<Release>,
    /// Each pool import destroyed, in order.
    pub destroys: Vec<Release>,
    /// Distinct pools and addresses among the imports.
    pub pools: usize,
    pub addresses: usize,
    /// Its open fds before the imports and after their release.
    pub fds_before: usize,
    pub fds_after: usize,
}

/// One thread's imports: the pool's code and the pointer's (`CUresult`'s number; -1: not tried),
/// and whether the pointer reads the exporter's bytes.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct ThreadAnswer {
    pub pool: i32,
    pub ptr: i32,
    pub read_ok: bool,
}

/// One release (a free or a destroy): its code, and whether it released what an earlier one did.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Release {
    pub code: u32,
    pub again: bool,
}

/// The exporter to an `ipc-rules` importer, the pool's fd riding along; it answers each step with
/// a `cases::messages::Step` of a [`RuleStep`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(super) enum ToRules {
    /// `data`: the genuine pointer's export data (one); `foreign`: another pool's; `peer`: the
    /// device the exporter granted access (null: no peer pair); `skip`: the steps answered already.
    Rules {
        data: Vec<String>,
        foreign: String,
        peer: Option<i32>,
        #[serde(default)]
        skip: Vec<String>,
    },
}

/// One rule step's answer: its code (`CUresult`'s number) and what it observed, or why it could not
/// be taken (and whom to blame, 0: none).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct RuleStep {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u32>,
    /// The import left the caller's fd open.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fd_open: Option<bool>,
    /// A second import answered what the first did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same: Option<bool>,
    /// The imported pointer reads the exporter's bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_ok: Option<bool>,
    /// cuMemPoolGetAccess's flags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flags: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blame: Option<u32>,
}

impl RuleStep {
    /// A step that answered `code` alone.
    pub(super) fn code(code: u32) -> RuleStep {
        RuleStep {
            code: Some(code),
            ..RuleStep::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::messages::keeps_its_text as same;
    use crate::cases::messages::parse;
    use crate::harness::channel::Step;
    use serde_json::json;

    #[test]
    fn round_trip_messages_keep_their_text() {
        same(ToImporter::Pool { index: 2 }, json!({"op": "pool", "index": 2}));
        same(
            ToImporter::Go {
                pools: vec![PoolMeta {
                    sizes: vec![1, 4096],
                    seeds: vec![0x3c, 0x3d],
                    data: vec!["00ff".into(), "a0".into()],
                }],
                event: "0102".into(),
            },
            json!({"op": "go", "pools": [{"sizes": [1, 4096], "seeds": [60, 61], "data": ["00ff", "a0"]}],
                   "event": "0102"}),
        );
        same(ToImporter::Write, json!({"op": "write"}));
        same(ToImporter::Skip, json!({"op": "skip"}));
        same(ToImporter::Free, json!({"op": "free"}));
        same(
            FromImporter::Verified { ordinal: -1 },
            json!({"op": "verified", "ordinal": -1}),
        );
        same(FromImporter::Written, json!({"op": "written"}));
        same(
            FromImporter::Done {
                fds_start: 40,
                fds_end: 41,
            },
            json!({"op": "done", "fds_start": 40, "fds_end": 41}),
        );
        // Today's text, as the other end wrote it.
        let go: ToImporter = serde_json::from_str(
            r#"{"event":"ab","op":"go","pools":[{"data":["01"],"seeds":[60],"sizes":[1048576]}]}"#,
        )
        .unwrap();
        assert!(matches!(go, ToImporter::Go { ref pools, .. } if pools[0].sizes == [1 << 20]));
        // A message of another kind, or one short of a field, is no message of these.
        assert!(parse::<FromImporter>(&json!({"op": "verified"})).is_err());
        assert!(parse::<ToImporter>(&json!({"op": "answer", "value": 1})).is_err());
    }

    #[test]
    fn scenario_messages_keep_their_text() {
        same(
            ToScenario::Scenario {
                name: Scenario::FreeHeld,
                data: vec!["00".into()],
                size: 65536,
            },
            json!({"op": "scenario", "name": "free_held", "data": ["00"], "size": 65536}),
        );
        for (s, name) in [
            (Scenario::ZeroData, "zero_data"),
            (Scenario::Interior, "interior"),
            (Scenario::FreeSync, "free_sync"),
            (Scenario::Twice, "twice"),
            (Scenario::Large, "large"),
            (Scenario::FreeHeld, "free_held"),
        ] {
            same(s, json!(name));
        }
        assert!(parse::<Scenario>(&json!("unknown")).is_err());
        // Only the keys a scenario set go on the wire.
        same(
            Reply::Answer {
                value: ScenarioAnswer {
                    zero: Some(1),
                    genuine: Some(0),
                    ..Default::default()
                },
            },
            json!({"op": "answer", "value": {"zero": 1, "genuine": 0}}),
        );
        let all = ScenarioAnswer {
            zero: Some(1),
            genuine: Some(0),
            base: Some(0),
            interior: Some(0),
            delta: Some(-4096),
            read: Some(0),
            tail_ok: Some(true),
            import: Some(0),
            head_ok: Some(false),
            free: Some(0),
            destroy: Some(0),
            first: Some(0),
            second: Some(0),
            same: Some(true),
            before_ok: Some(true),
            free_first: Some(0),
            sync: Some(0),
            read_after: Some(1),
            after_ok: Some(false),
            free_second: Some(1),
            head: Some(0),
            tail: Some(0),
            free_ms: Some(0.5),
            returned_while_held: Some(true),
        };
        same(
            all,
            json!({"zero": 1, "genuine": 0, "base": 0, "interior": 0, "delta": -4096, "read": 0,
                   "tail_ok": true, "import": 0, "head_ok": false, "free": 0, "destroy": 0, "first": 0,
                   "second": 0, "same": true, "before_ok": true, "free_first": 0, "sync": 0,
                   "read_after": 1, "after_ok": false, "free_second": 1, "head": 0, "tail": 0,
                   "free_ms": 0.5, "returned_while_held": true}),
        );
        // free_held's answer as the importer wrote it.
        let a: Reply<ScenarioAnswer> = serde_json::from_str(
            r#"{"op":"answer","value":{"destroy":0,"free":0,"free_ms":0.02,"import":0,"returned_while_held":true}}"#,
        )
        .unwrap();
        let Reply::Answer { value } = a;
        assert_eq!(
            (value.import, value.returned_while_held, value.zero),
            (Some(0), Some(true), None)
        );
    }

    #[test]
    fn concurrent_messages_keep_their_text() {
        for (s, name) in [
            (Shape::Handle, "handle"),
            (Shape::OnePool, "one_pool"),
            (Shape::OwnPools, "own_pools"),
        ] {
            same(s, json!(name));
            assert_eq!(s.name(), name);
        }
        same(
            ToConcurrent::Concurrent {
                shape: Shape::OwnPools,
                threads: 16,
                data: "ff".into(),
            },
            json!({"op": "concurrent", "shape": "own_pools", "threads": 16, "data": "ff"}),
        );
        same(
            Reply::Answer {
                value: ConcurrentAnswer {
                    threads: vec![ThreadAnswer {
                        pool: 2,
                        ptr: -1,
                        read_ok: false,
                    }],
                    frees: vec![Release { code: 0, again: false }],
                    destroys: vec![Release { code: 1, again: true }],
                    pools: 1,
                    addresses: 1,
                    fds_before: 40,
                    fds_after: 40,
                },
            },
            json!({"op": "answer", "value": {
                "threads": [{"pool": 2, "ptr": -1, "read_ok": false}], "frees": [{"code": 0, "again": false}],
                "destroys": [{"code": 1, "again": true}], "pools": 1, "addresses": 1, "fds_before": 40,
                "fds_after": 40}}),
        );
        // An answer short of a field is an error, not a panic.
        assert!(parse::<Reply<ConcurrentAnswer>>(&json!({"op": "answer", "value": {"threads": []}})).is_err());
    }

    #[test]
    fn rules_messages_keep_their_text() {
        same(
            ToRules::Rules {
                data: vec!["aa".into()],
                foreign: "bb".into(),
                peer: None,
                skip: vec!["import".into()],
            },
            json!({"op": "rules", "data": ["aa"], "foreign": "bb", "peer": null, "skip": ["import"]}),
        );
        same(
            ToRules::Rules {
                data: vec![],
                foreign: "".into(),
                peer: Some(1),
                skip: vec![],
            },
            json!({"op": "rules", "data": [], "foreign": "", "peer": 1, "skip": []}),
        );
        same(RuleStep::code(1), json!({"code": 1}));
        same(
            RuleStep {
                fd_open: Some(true),
                ..RuleStep::code(0)
            },
            json!({"code": 0, "fd_open": true}),
        );
        same(
            RuleStep {
                flags: Some(3),
                ..RuleStep::code(0)
            },
            json!({"code": 0, "flags": 3}),
        );
        same(
            RuleStep {
                same: Some(false),
                bytes_ok: Some(true),
                ..RuleStep::code(0)
            },
            json!({"code": 0, "same": false, "bytes_ok": true}),
        );
        same(
            RuleStep {
                not_run: Some("no peer-capable device pair".into()),
                blame: Some(0),
                ..RuleStep::default()
            },
            json!({"not_run": "no peer-capable device pair", "blame": 0}),
        );
        same(
            Step::Answer {
                key: "trim".into(),
                value: RuleStep::code(1),
            },
            json!({"op": "answer", "key": "trim", "value": {"code": 1}}),
        );
    }
}
