//! What the address-space trials and their `vaspace` child agree on: the steps, in order, and
//! the bytes offered to import.

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
