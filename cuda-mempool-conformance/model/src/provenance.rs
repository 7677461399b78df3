//! Where a report came from (`provenance`, and the machine's own `provenance`): the suite's build,
//! the host, the settings, the devices and the libraries under test.

use crate::field::Extra;
use serde::{Deserialize, Serialize};

/// The run's provenance as the probe records it (`machine.provenance`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunProvenance {
    /// The conformance crate's version.
    pub suite_version: String,
    /// The commit it was built from, or "unknown".
    pub commit: String,
    /// Whether the tree differed from the commit; null where unknown.
    pub dirty: Option<bool>,
    pub host: String,
    /// uname's release.
    pub kernel: String,
    /// /etc/os-release's PRETTY_NAME.
    pub os: String,
    /// Every CONFORMANCE_* and CUDA_* variable, [name, value], sorted.
    pub environment: Vec<(String, String)>,
    /// When the run started (RFC 3339).
    pub started: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The report's provenance: the run's, and what the report adds (when it finished, how the suite
/// reached the driver, the devices and the libraries under test). Its keys the model does not name
/// are kept in the run's `extra`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Provenance {
    /// The run's provenance as the probe recorded it, its keys at this level.
    #[serde(flatten)]
    pub run: RunProvenance,
    /// When the report was written (RFC 3339).
    pub finished: String,
    /// How the suite reached the driver, in words.
    pub entry: String,
    /// The driver version, empty when unknown.
    pub driver: String,
    pub devices: Vec<ProvenanceDevice>,
    pub libraries: Vec<Library>,
}

/// A device as the provenance names it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProvenanceDevice {
    pub ordinal: i64,
    pub name: String,
    /// GPU-…, or unknown.
    pub uuid: String,
    pub pci_bus_id: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A library under test as the provenance names it: its file, or why that could not be read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Library {
    pub path: String,
    pub named_by: String,
    pub file: Option<LibraryFile>,
    pub error: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A library's file: what tells two builds of it apart.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LibraryFile {
    /// The file read.
    pub file: String,
    pub size: u64,
    /// Lower-case hex.
    pub sha256: String,
    /// Its `cu*` dynamic exports.
    pub cu_exports: u64,
    #[serde(flatten)]
    pub extra: Extra,
}
