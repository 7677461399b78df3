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
