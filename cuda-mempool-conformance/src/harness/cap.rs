//! What a case may need that a machine may lack (`Cap`), by the names CONFORMANCE_REQUIRE takes.
//! Imports nothing of the crate, so that the settings and the machine both build on it.

/// Something a case may need that a machine may lack. Names are those of CONFORMANCE_REQUIRE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cap {
    /// A CUDA device with memory-pool support.
    Gpu,
    /// POSIX file descriptor export of pools (IPC).
    Ipc,
    /// Two devices that can access each other.
    Peer,
    /// Pools located in host memory (CU_MEM_LOCATION_TYPE_HOST).
    HostPool,
    /// Pools located on a host NUMA node.
    HostNuma,
    /// The CUDA 13 selectors cuMemGetDefaultMemPool / cuMemGetMemPool / cuMemSetMemPool.
    Cuda13,
    /// Fabric handles for pools (CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED).
    Fabric,
    /// Fabric handles and an IMEX channel to export them through (/dev/nvidia-caps-imex-channels).
    Imex,
    /// Three or more devices of the selection that all reach each other (multi-device cases).
    MultiPeer,
    /// A device that reports no memory-pool support (vGPU profiles, some embedded boards): the
    /// cases that check the APIs' answers there.
    PoolLess,
    /// The checkpoint leg: an engine (CONFORMANCE_CHECKPOINT) that can take a process of this run
    /// through a checkpoint and back (`harness::checkpoint`).
    Checkpoint,
}
pub const ALL_CAPS: &[(Cap, &str)] = &[
    (Cap::Gpu, "gpu"),
    (Cap::Ipc, "ipc"),
    (Cap::Peer, "peer"),
    (Cap::HostPool, "host-pool"),
    (Cap::HostNuma, "host-numa"),
    (Cap::Cuda13, "cuda13"),
    (Cap::Fabric, "fabric"),
    (Cap::Imex, "imex"),
    (Cap::MultiPeer, "multi-peer"),
    (Cap::PoolLess, "pool-less"),
    (Cap::Checkpoint, "checkpoint"),
];
impl Cap {
    pub fn name(self) -> &'static str {
        ALL_CAPS.iter().find(|c| c.0 == self).unwrap().1
    }
}
