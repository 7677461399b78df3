//! What the address-space trials and their `vaspace` child agree on: the steps, in order, the
//! bytes offered to import, and the messages (the request, and each step's answer as a type).

use serde::{Deserialize, Serialize};

pub(super) const KIB: usize = 1 << 10;
pub(super) const MIB: usize = 1 << 20;

/// The bytes the import trials offer, with this seed's pattern.
pub(super) const OFFER: usize = 64 * KIB;
pub(super) const SEED: u8 = 0x5a;

/// One measurement of the child.
#[derive(Clone, Copy)]
pub(super) enum Step {
    /// The first default-pool query of the process, then a second one and cuDeviceGetMemPool.
    DefaultPool,
    /// A pool of this maxSize created and destroyed.
    Create(usize),
    /// The offered pool imported, one pointer imported, freed, the pool destroyed.
    Import,
    /// Two graph allocation nodes, the graph destroyed.
    Graph,
    /// One call (create, import, free) under RLIMIT_AS.
    Rlimit(&'static str),
}

/// The child's steps, in the order it takes them: the default-pool query first (it must be the
/// process's first), the RLIMIT_AS calls last (each restores the limit, but a call that fails
/// under it may leave anything behind, and one that kills the child ends the run of steps).
pub(super) const STEPS: &[(&str, Step)] = &[
    ("default_pool", Step::DefaultPool),
    ("create_0", Step::Create(0)),
    ("create_2_mib", Step::Create(2 * MIB)),
    ("create_1_gib", Step::Create(1024 * MIB)),
    ("import", Step::Import),
    ("graph", Step::Graph),
    ("rlimit_create", Step::Rlimit("create")),
    ("rlimit_import", Step::Rlimit("import")),
    ("rlimit_free", Step::Rlimit("free")),
];

/// The parent to the child, the offered pool's fd riding along where there is one (its pointer's
/// export data in hex then in `data`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(super) enum ToChild {
    Measure {
        dev: i32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
    },
}

/// One step's answer, as the child sends it with `cases::messages::StepMsg`: what the step found
/// (one of the types below, or `cases::messages::LostStep` where it failed), and the device's
/// memory in bytes. Codes are `CUresult`'s numbers, sizes bytes of /proc/self/maps.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(super) struct OnDevice<T> {
    #[serde(flatten)]
    pub got: T,
    pub device: u64,
}

/// [`Step::DefaultPool`]: the first query's code and what it mapped, cuDeviceGetMemPool's code,
/// whether all three answered one pool, and what the second query and cuDeviceGetMemPool mapped.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub(super) struct DefaultPool {
    pub first: u32,
    pub current: u32,
    pub same: bool,
    pub took: u64,
    pub again: u64,
}

/// [`Step::Create`]: the creation's code and what it mapped; where it succeeded, the destruction's
/// code and what stays mapped of the creation's.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub(super) struct Create {
    pub create: u32,
    pub took: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destroy: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<u64>,
}

/// [`Step::Import`]: the pool import's code and what it mapped; where it succeeded, the pointer
/// import's and what it mapped, the read, the free, the destruction, and what stays mapped.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub(super) struct Import {
    pub pool: u32,
    pub pool_took: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ptr: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ptr_took: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destroy: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<u64>,
}

/// [`Step::Graph`]: the codes of the node of maxSize 0, of 2 MiB and of the second graph's, what
/// each mapped, and what stays mapped after the first graph's destruction and a trim.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub(super) struct Graph {
    pub node: u32,
    pub small: u32,
    pub again: u32,
    pub node_took: u64,
    pub small_took: u64,
    pub kept: u64,
    pub again_took: u64,
}

/// [`Step::Rlimit`]: the call's code, the stream's sync after it, the address space before it,
/// and the limit it ran under.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub(super) struct Rlimit {
    pub code: u32,
    pub synced: u32,
    pub vm_size: u64,
    pub limit: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::messages::keeps_its_text as same;
    use crate::harness::channel::{LostStep, Step as StepMsg};
    use serde_json::json;

    #[test]
    fn the_request_keeps_its_text() {
        same(
            ToChild::Measure {
                dev: 1,
                data: Some("ab".into()),
            },
            json!({"op": "measure", "dev": 1, "data": "ab"}),
        );
        // No pool offered: no data.
        same(
            ToChild::Measure { dev: 0, data: None },
            json!({"op": "measure", "dev": 0}),
        );
    }

    /// Each step's answer, the device's memory beside its findings, as the child wrote them.
    #[test]
    fn the_answers_keep_their_text() {
        let on = |got| OnDevice { got, device: 80 };
        same(
            on(DefaultPool {
                first: 0,
                current: 0,
                same: true,
                took: 4096,
                again: 0,
            }),
            json!({"first": 0, "current": 0, "same": true, "took": 4096, "again": 0, "device": 80}),
        );
        let on = |got| OnDevice { got, device: 80 };
        same(
            on(Create {
                create: 2,
                took: 0,
                ..Create::default()
            }),
            json!({"create": 2, "took": 0, "device": 80}),
        );
        same(
            on(Create {
                create: 0,
                took: 8,
                destroy: Some(0),
                kept: Some(0),
            }),
            json!({"create": 0, "took": 8, "destroy": 0, "kept": 0, "device": 80}),
        );
        let on = |got| OnDevice { got, device: 80 };
        same(
            on(Import {
                pool: 0,
                pool_took: 1,
                ptr: Some(0),
                ptr_took: Some(2),
                read_ok: Some(true),
                free: Some(0),
                destroy: Some(0),
                kept: Some(3),
            }),
            json!({"pool": 0, "pool_took": 1, "ptr": 0, "ptr_took": 2, "read_ok": true, "free": 0,
                   "destroy": 0, "kept": 3, "device": 80}),
        );
        let on = |got| OnDevice { got, device: 80 };
        same(
            on(Graph {
                node: 0,
                small: 0,
                again: 0,
                node_took: 5,
                small_took: 6,
                kept: 7,
                again_took: 8,
            }),
            json!({"node": 0, "small": 0, "again": 0, "node_took": 5, "small_took": 6, "kept": 7,
                   "again_took": 8, "device": 80}),
        );
        let on = |got| OnDevice { got, device: 80 };
        same(
            on(Rlimit {
                code: 2,
                synced: 0,
                vm_size: 10,
                limit: 20,
            }),
            json!({"code": 2, "synced": 0, "vm_size": 10, "limit": 20, "device": 80}),
        );
        // A step that failed in the child: why, its blame, and the device.
        let lost = OnDevice {
            got: LostStep::answer("the vaspace child reported: x".into(), Some(823)),
            device: 80,
        };
        let msg = StepMsg::Answer {
            key: "create_0".to_string(),
            value: lost,
        };
        assert_eq!(
            serde_json::to_value(&msg).unwrap(),
            json!({"op": "answer", "key": "create_0", "value":
                {"lost": "the vaspace child reported: x", "blame": 823, "device": 80}})
        );
        // An answer short of a finding is an error, not a panic.
        assert!(serde_json::from_value::<OnDevice<Graph>>(json!({"node": 0, "device": 1})).is_err());
    }
}
