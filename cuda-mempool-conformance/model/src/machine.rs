//! The machine the run found (`machine`): the driver library and how the suite reached it, the
//! devices, the libraries under test, the probe's findings.

use crate::field::{nullable, Extra, Nullable};
use crate::provenance::{LibraryFile, RunProvenance};
use serde::{Deserialize, Serialize};

/// What the probe found before the trials ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Machine {
    /// The driver's version and where it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// Why the driver library could not be loaded (null when it was).
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub load_error: Nullable<String>,
    /// What a cuInit hidden in the lookup returned, where one ran.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub hidden_init: Nullable<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_secs: Option<f64>,
    /// What the library made the probe's child wait at its first GPU work (issue 58; reports since,
    /// where the probe measured it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_work: Option<FirstWork>,
    /// Each API's symbol and the function it resolved to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Vec<(String, String)>>,
    /// LD_PRELOAD's libraries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preloaded: Option<Vec<String>>,
    /// Why the library under test was not reached (null when it was).
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub not_reached: Nullable<String>,
    /// How each way of filling the table resolved the APIs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<PathAnswer>>,
    /// The libraries under test (CONFORMANCE_LIBRARY's, else LD_PRELOAD's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub under_test: Option<Vec<UnderTest>>,
    /// The APIs a path hands to another object than the library under test, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bypasses: Option<Vec<String>>,
    /// Whether the lookup initialised the driver: `{"Ok": code}` or `{"Err": why}`.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub lookup_init: Nullable<Result<i64, String>>,
    pub driver_version: i64,
    /// The driver library's path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub libcuda: Option<String>,
    #[serde(rename = "cuInit")]
    pub cu_init: i64,
    pub devices: Vec<Device>,
    /// GPUs on the host, the suite's or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_gpus: Option<u64>,
    /// Whether device i can access device j.
    pub peer: Vec<Vec<bool>>,
    /// (PhOS index, whether the library exports it).
    pub exported: Vec<(u64, bool)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p2p: Option<Vec<P2p>>,
    /// The devices, pairs and multi-device sets the run chose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selection: Option<Selection>,
    /// Whether the CUDA 13 pool selectors exist.
    pub cuda13_selectors: bool,
    /// How the suite reached the driver (CONFORMANCE_ENTRY), in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// Symbols the driver library lacks.
    pub missing: Vec<String>,
    pub imex_channels: bool,
    /// Why the probe failed, if it did.
    pub probe_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<RunProvenance>,
    /// Whether the driver has the checkpoint engine (issue 57): present, and true, only where it
    /// does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint_api: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The probe's measure of the first GPU work of a new process (`harness::first_work`), in seconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FirstWork {
    /// Device 0's primary context retained and made current.
    pub context_s: f64,
    /// The first round of stream work: an allocation from the default pool, a memset of it, its
    /// free and a synchronize.
    pub first_s: f64,
    /// The same round again.
    pub again_s: f64,
    #[serde(flatten)]
    pub extra: Extra,
}

impl FirstWork {
    /// What the first round took beyond the second: the wait.
    pub fn wait_s(&self) -> f64 {
        (self.first_s - self.again_s).max(0.0)
    }
}

/// The driver's version and where it was read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Identity {
    /// "580.159.04"; empty when no source could say.
    pub version: String,
    /// The source `version` came from, in words, or "none".
    pub source: String,
    /// Every source asked, with its answer or why it had none.
    pub sources: Vec<(String, String)>,
    /// The kernel module's version.
    pub module: Option<String>,
    /// The version in the libcuda file's name.
    pub libcuda: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One device the run saw; UUID, PCI bus, PCI ids and modes are absent from older reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Device {
    pub ordinal: i64,
    pub name: String,
    pub compute_capability: (i64, i64),
    pub total_mem: u64,
    pub memory_pools: bool,
    pub handle_types: u64,
    pub host_pools: bool,
    pub host_numa_pools: bool,
    pub host_numa_id: i64,
    pub fabric: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci_ids: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modes: Option<String>,
    /// The physical memory as NVML says it, where it does (issue 47).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_mem: Option<u64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// How one way of filling the table (an entry mode) resolved the APIs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PathAnswer {
    pub mode: EntryMode,
    pub error: Option<String>,
    /// Each API's symbol and the object its entry resolved to.
    pub objects: Vec<(String, String)>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A way of filling the suite's table of the driver's entry points (CONFORMANCE_ENTRY); its serde
/// name is CONFORMANCE_ENTRY's value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryMode {
    /// cuGetProcAddress, as the CUDA runtime does.
    #[default]
    ProcAddress,
    /// dlsym on the library's handle.
    Dlsym,
    /// The default namespace, the library opened RTLD_GLOBAL (a program linked against it).
    Link,
}

impl EntryMode {
    /// Every way, in CONFORMANCE_ENTRY's order.
    pub const ALL: [EntryMode; 3] = [EntryMode::ProcAddress, EntryMode::Dlsym, EntryMode::Link];

    /// Its name, as CONFORMANCE_ENTRY and report.json write it.
    pub fn name(self) -> &'static str {
        match self {
            EntryMode::ProcAddress => "proc-address",
            EntryMode::Dlsym => "dlsym",
            EntryMode::Link => "link",
        }
    }

    /// The way named `name`, if one is.
    pub fn from_name(name: &str) -> Option<EntryMode> {
        EntryMode::ALL.into_iter().find(|e| e.name() == name)
    }
}

impl std::fmt::Display for EntryMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A library under test, as the probe found it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UnderTest {
    pub path: String,
    /// LD_PRELOAD or CONFORMANCE_LIBRARY.
    pub named_by: String,
    /// The symbols of the APIs (and cuGetProcAddress) it defines.
    pub exports: Vec<String>,
    /// Why it could not be opened, if it could not.
    pub error: Option<String>,
    /// Its file, or why it could not be read: `{"Ok": …}` or `{"Err": why}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<Result<LibraryFile, String>>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The link between two devices.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct P2p {
    pub a: i64,
    pub b: i64,
    pub performance_rank: i64,
    pub native_atomics: bool,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The devices the run chose (CONFORMANCE_DEVICES), its ordered pairs and its multi-device set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Selection {
    /// Whether the devices were named.
    pub explicit: bool,
    /// Device ordinals (CUdevice).
    pub devices: Vec<i32>,
    /// Ordered pairs (owner, peer) that can access each other.
    pub pairs: Vec<(i32, i32)>,
    /// Devices that all reach each other.
    pub multi: Vec<i32>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry mode's serde name is its CONFORMANCE_ENTRY name, and reads back.
    #[test]
    fn entry_modes_are_named_as_conformance_entry_writes_them() {
        for e in EntryMode::ALL {
            let text = serde_json::to_string(&e).unwrap();
            assert_eq!(text, format!("\"{}\"", e.name()));
            assert_eq!(serde_json::from_str::<EntryMode>(&text).unwrap(), e);
            assert_eq!(EntryMode::from_name(e.name()), Some(e));
        }
        assert_eq!(EntryMode::from_name("dlopen"), None);
    }
}
