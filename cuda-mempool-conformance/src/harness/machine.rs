//! The machine as probed: capabilities a case may need, devices, pool support, handle types, peers,
//! and which object answers each API on each path to the driver.

use crate::driver::check::*;
use crate::driver::cu::*;
pub use crate::harness::cap::{Cap, ALL_CAPS};
use crate::harness::first_work::FirstWork;
use crate::harness::identity::Identity;
use crate::harness::settings::{Engine, Settings};
use conformance_model::{LibraryFile, RunProvenance};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default)]
pub struct Device {
    pub ordinal: i32,
    pub name: String,
    pub cc: (i32, i32),
    pub pools: bool,
    pub handle_types: u32,
    pub host_pools: bool,
    pub host_numa_pools: bool,
    pub host_numa_id: i32,
    pub fabric: bool,
    pub total_mem: usize,
    /// cuDeviceGetUuid_v2's answer as nvidia-smi writes it ("GPU-1f2e…"), or "unknown".
    pub uuid: String,
    /// cuDeviceGetPCIBusId's answer ("0000:3b:00.0"), or "unknown".
    pub pci_bus_id: String,
    /// The model's identity: PCI vendor, device and subsystem IDs ("10de:2335 (subsystem
    /// 10de:18bf)", `harness::gpu_model`), or "unknown".
    pub pci_ids: String,
    /// MIG and virtualization mode as NVML says them, or why unknown.
    pub modes: String,
    /// The physical memory as NVML says it (None where it does not): above `total_mem` by more
    /// than the driver keeps for itself, the device is capped ([`Device::cap`]).
    pub physical_mem: Option<u64>,
}

/// The share of its physical memory a device's reported total may lack before the probe calls it
/// capped: the driver itself keeps some (H100, R580: cuDeviceTotalMem 79.2 GiB of NVML's 79.6).
pub const CAP_BELOW: f64 = 0.9;

impl Device {
    /// (reported, physical) where a layer caps the device: cuDeviceTotalMem's total below
    /// [`CAP_BELOW`] of NVML's physical memory (issue 47).
    pub fn cap(&self) -> Option<(u64, u64)> {
        let (reported, physical) = (self.total_mem as u64, self.physical_mem?);
        (reported > 0 && (reported as f64) < CAP_BELOW * physical as f64).then_some((reported, physical))
    }
}

#[derive(Clone, Debug, Default)]
pub struct Machine {
    /// cuDriverGetVersion's answer (13000 for CUDA 13.0).
    pub driver_version: i32,
    /// The driver's version and branch, and where they came from.
    pub identity: Identity,
    pub libcuda: String,
    /// Why the driver library could not be loaded, if it could not.
    pub load_error: Option<String>,
    /// cuInit's answer in a child with every device hidden (CUDA_VISIBLE_DEVICES=""), asked by the
    /// coordinator after the probe; None where it was not asked (in-process mode) or gave none.
    pub hidden_init: Option<i32>,
    /// How long the probe's child took, start to answer (the coordinator's measure of how fast a
    /// process of this run starts: waits for children scale with it).
    pub startup_secs: f64,
    /// What the library made the probe's child wait at its first GPU work (`harness::first_work`),
    /// where the probe measured it (cuInit succeeded, device 0 has pools); left out of its start-up
    /// figure above.
    pub first_work: Option<FirstWork>,
    /// How many GPUs the host has, whatever this process is shown (`harness::gpu_model::host_gpus`).
    pub host_gpus: usize,
    /// Each entry point the table has and the object it resolved to (`dladdr`), in the mode used.
    pub resolved: Vec<(String, String)>,
    /// The libraries LD_PRELOAD names.
    pub preloaded: Vec<String>,
    /// How each way of filling the table (proc-address, dlsym, link) resolved the 14 APIs, asked
    /// by the probe whatever mode the run uses (resolution and `dladdr` only, nothing called).
    pub paths: Vec<PathAnswer>,
    /// The libraries under test: CONFORMANCE_LIBRARY's, else LD_PRELOAD's, with what they export.
    pub under_test: Vec<UnderTest>,
    /// cuDeviceGetCount's answer in a child that looked up the 14 APIs with cuGetProcAddress and
    /// never called cuInit (`cases::uninit`, asked by the coordinator after the probe), or why
    /// that child gave none; None where it was not asked.
    pub lookup_init: Option<Result<i32, String>>,
    /// cuInit's answer.
    pub init: i32,
    pub devices: Vec<Device>,
    /// peer[i][j]: device i can access device j.
    pub peer: Vec<Vec<bool>>,
    /// Which of the 14 APIs the entry-point table has, by index.
    pub exported: Vec<(u32, bool)>,
    pub selectors: bool,
    /// The library has the driver's checkpoint engine: cuCheckpointProcess{GetState,Lock,Checkpoint,
    /// Restore,Unlock} (R570+).
    pub checkpoint_api: bool,
    /// How the suite reaches the driver (CONFORMANCE_ENTRY), in words.
    pub entry: String,
    /// Table entries the library lacks (symbol names).
    pub missing: Vec<String>,
    /// /dev/nvidia-caps-imex-channels exists (fabric handles can be exported through it).
    pub imex_channels: bool,
    /// Why the probe could not answer (it ran in a child that died or hung), if it could not.
    pub probe_error: Option<String>,
    /// Per ordered pair (a, b), a ≠ b: cuDeviceGetP2PAttribute's performance rank and native
    /// atomic support.
    pub p2p: Vec<P2p>,
    /// The devices this run uses (CONFORMANCE_DEVICES), decided by the coordinator after the probe.
    pub selection: Selection,
    /// Where the run's report comes from (the suite's build, host, settings), gathered by the
    /// coordinator.
    pub provenance: RunProvenance,
    /// The run's checkpoint engine (CONFORMANCE_CHECKPOINT), from the settings of the process that
    /// holds this machine (`probe`, `from_json`): what the `checkpoint` capability depends on. Not
    /// part of the probe's answer (each process has its own settings).
    pub checkpoint: Engine,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct P2p {
    pub a: i32,
    pub b: i32,
    pub rank: i32,
    pub atomic: bool,
}

/// How one way of filling the table resolved the 14 APIs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathAnswer {
    /// The mode's name (CONFORMANCE_ENTRY's value).
    pub mode: String,
    /// Why the table could not be filled this way, if it could not.
    pub error: Option<String>,
    /// Each API's symbol and the object its entry resolved to (`dladdr`); NOTHING where the path
    /// hands out no function.
    pub objects: Vec<(String, String)>,
}

/// What a path hands out where it has no function for an API.
pub const NOTHING: &str = "nothing (missing)";

/// A library under test, and which of the driver's symbols it defines itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnderTest {
    pub path: String,
    /// The variable that named it: LD_PRELOAD or CONFORMANCE_LIBRARY.
    pub named_by: String,
    /// The symbols of the 14 APIs, cuGetProcAddress and cuGetProcAddress_v2 that it defines (found
    /// in it, not in a library it depends on).
    pub exports: Vec<String>,
    /// Why it could not be opened, if it could not.
    pub error: Option<String>,
    /// Its file (size, sha256, `cu*` exports), or why it could not be read.
    pub file: Result<LibraryFile, String>,
}

impl Default for UnderTest {
    fn default() -> UnderTest {
        UnderTest {
            path: String::new(),
            named_by: String::new(),
            exports: Vec::new(),
            error: None,
            file: Err("not read".into()),
        }
    }
}

/// The driver's symbols that make a library a stand-in for the driver when it defines them.
pub const LOOKUP_SYMBOLS: &[&str] = &["cuGetProcAddress", "cuGetProcAddress_v2"];

/// The same file: equal canonical paths, else equal file names (a bare LD_PRELOAD name).
pub fn same_file(a: &str, b: &str) -> bool {
    let canon = |p: &str| std::fs::canonicalize(p).ok();
    match (canon(a), canon(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.rsplit('/').next() == b.rsplit('/').next(),
    }
}

/// "libcuda.so.580.159.04 (14 of the 14 APIs)": the APIs of `resolved` by the object they
/// resolved to.
pub fn by_object(resolved: &[(String, String)]) -> String {
    let mut by: Vec<(String, usize)> = Vec::new();
    for (_, api) in crate::driver::APIS {
        let object = resolved
            .iter()
            .find(|(sym, _)| sym == api)
            .map_or(NOTHING, |(_, o)| o.as_str());
        match by.iter_mut().find(|(o, _)| o == object) {
            Some(e) => e.1 += 1,
            None => by.push((object.to_string(), 1)),
        }
    }
    let parts: Vec<String> = by.iter().map(|(o, n)| format!("{o} ({n} of the 14 APIs)")).collect();
    parts.join(", ")
}

/// The 14 APIs of `resolved` by the object they resolved to, and the way the table was filled
/// (`entry`): "libcuda.so.580.159.04 (14 of the 14 APIs) [proc-address (…)]".
pub fn answered_by(resolved: &[(String, String)], entry: &str) -> String {
    format!("{} [{entry}]", by_object(resolved))
}

impl Machine {
    /// Whether the machine has `cap` as device 0 sees it.
    pub fn has(&self, cap: Cap) -> Result<(), String> {
        self.has_on(cap, 0)
    }

    /// Whether the machine has `cap` for a case on device `dev`.
    pub fn has_on(&self, cap: Cap, dev: i32) -> Result<(), String> {
        let d = self.devices.get(dev.max(0) as usize);
        if let Some(e) = &self.probe_error {
            return Err(format!("the probe failed: {e}"));
        }
        if let Some(e) = &self.load_error {
            return Err(format!("the driver library could not be loaded: {e}"));
        }
        let why = match cap {
            Cap::PoolLess if self.init != 0 => "no CUDA device".into(),
            Cap::PoolLess if d.is_some_and(|d| !d.pools) => return Ok(()),
            Cap::PoolLess => format!("device {dev} supports memory pools (these cases are for a device without)"),
            Cap::Gpu if self.init != 0 => format!(
                "no CUDA device (cuInit returned {})",
                code_name(CUresult(self.init as u32))
            ),
            Cap::Gpu if !d.is_some_and(|d| d.pools) => format!("device {dev} does not support memory pools"),
            Cap::Gpu => return Ok(()),
            _ if self.init != 0 => "no CUDA device".into(),
            Cap::Ipc if d.is_some_and(|d| d.handle_types & 1 != 0) => return Ok(()),
            Cap::Ipc => format!("device {dev} cannot export pools as POSIX file descriptors"),
            Cap::Peer if self.selection.peer_of(dev).is_some() => return Ok(()),
            Cap::Peer => format!(
                "no device shares peer access with device {dev} among those this run uses ({} device(s) here)",
                self.devices.len()
            ),
            Cap::MultiPeer if self.selection.multi.len() >= 3 => return Ok(()),
            Cap::MultiPeer => format!(
                "needs three devices that all reach each other; the largest such group this run uses is {:?}",
                self.selection.multi
            ),
            Cap::HostPool if d.is_some_and(|d| d.host_pools) => return Ok(()),
            Cap::HostPool => format!("device {dev} reports no support for host-located pools"),
            Cap::HostNuma if d.is_some_and(|d| d.host_numa_pools) => return Ok(()),
            Cap::HostNuma => format!("device {dev} reports no support for host-NUMA pools"),
            Cap::Cuda13 if self.selectors => return Ok(()),
            Cap::Cuda13 => format!("driver {} has no CUDA 13 pool selectors", self.driver_version),
            Cap::Fabric | Cap::Imex if !d.is_some_and(|d| d.fabric) => {
                format!("device {dev} reports no fabric handle support")
            }
            Cap::Fabric => return Ok(()),
            Cap::Imex if self.imex_channels => return Ok(()),
            Cap::Imex => "no IMEX channel on this host (/dev/nvidia-caps-imex-channels is absent)".into(),
            Cap::Checkpoint => {
                match crate::harness::checkpoint::unavailable(
                    &self.checkpoint,
                    self.checkpoint_api,
                    self.driver_version,
                ) {
                    None => return Ok(()),
                    Some(why) => why,
                }
            }
        };
        Err(why)
    }

    /// The wait at each new process's first GPU work this run plans with (`harness::first_work`):
    /// the probe's, where it is long for the run's trial deadline; zero otherwise.
    pub fn planned_wait(&self) -> std::time::Duration {
        crate::harness::first_work::planned(self.first_work.as_ref(), crate::driver::deadline::timeout())
    }

    /// The 14 APIs' entries by the object they resolved to: "libcuda.so.580.159.04 (14)".
    pub fn answered_by(&self) -> String {
        answered_by(&self.resolved, &self.entry)
    }

    /// Where a library under test defines one of the 14 APIs and some path hands out another
    /// object's function (or none) for it: one line per library and path, naming the APIs, what
    /// that path hands out, and the applications that take it. Empty when every path reaches it,
    /// or no library under test defines a driver symbol.
    pub fn bypasses(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for lib in self.under_test.iter().filter(|l| l.error.is_none()) {
            for path in self.paths.iter().filter(|p| p.error.is_none()) {
                let missed: Vec<String> = path
                    .objects
                    .iter()
                    .filter(|(api, o)| lib.exports.contains(api) && !same_file(o, &lib.path))
                    .map(|(api, o)| format!("{api} → {o}"))
                    .collect();
                if missed.is_empty() {
                    continue;
                }
                let apps = crate::driver::cu::Entry::all()
                    .find(|e| e.name() == path.mode)
                    .map_or("", |e| e.applications());
                lines.push(format!(
                    "{} ({}) defines {} of them, but the {} path hands out another object's function: {}; {} take \
                     this path and bypass it",
                    lib.path,
                    lib.named_by,
                    missed.len(),
                    path.mode,
                    missed.join(", "),
                    apps
                ));
            }
        }
        lines
    }

    /// The libraries under test that define none of the driver's symbols (an allocator, a
    /// profiler), in words: nothing to reach, a note only.
    pub fn not_stand_ins(&self) -> Vec<String> {
        self.under_test
            .iter()
            .filter(|l| l.error.is_none() && l.exports.is_empty())
            .map(|l| format!("{} ({}) defines none of the driver's symbols", l.path, l.named_by))
            .collect()
    }

    /// Why the library under test was not reached: LD_PRELOAD names libraries, and no entry point
    /// resolved into any of them in the mode this run used.
    pub fn not_reached(&self) -> Option<String> {
        if self.preloaded.is_empty() || self.resolved.is_empty() {
            return None;
        }
        let file = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
        let preloaded: Vec<String> = self.preloaded.iter().map(|p| file(p)).collect();
        // Reached: one of the 14 APIs resolved into it (cuGetProcAddress alone is not an answer).
        let reached = self
            .resolved
            .iter()
            .filter(|(sym, _)| crate::driver::APIS.iter().any(|(_, a)| a == sym))
            .any(|(_, o)| preloaded.contains(&file(o)));
        (!reached).then(|| {
            format!(
                "LD_PRELOAD names {}, but no entry point resolved into it in mode {}: this report is about {}, \
                 not about the preloaded library (try CONFORMANCE_ENTRY=proc-address, dlsym or link, whichever path \
                 the library hooks)",
                preloaded.join(", "),
                self.entry,
                self.answered_by()
            )
        })
    }

    pub fn to_json(&self) -> serde_json::Value {
        let mut j = serde_json::json!({
            "identity": self.identity,
            "load_error": self.load_error,
            "hidden_init": self.hidden_init,
            "startup_secs": self.startup_secs,
            "resolved": self.resolved,
            "preloaded": self.preloaded,
            "not_reached": self.not_reached(),
            "paths": self.paths,
            "under_test": self.under_test,
            "bypasses": self.bypasses(),
            "lookup_init": self.lookup_init,
            "driver_version": self.driver_version,
            "libcuda": self.libcuda,
            "cuInit": self.init,
            "devices": self.devices.iter().map(|d| {
                let mut j = serde_json::json!({
                "ordinal": d.ordinal, "name": d.name, "compute_capability": [d.cc.0, d.cc.1],
                "total_mem": d.total_mem, "memory_pools": d.pools, "handle_types": d.handle_types,
                "host_pools": d.host_pools, "host_numa_pools": d.host_numa_pools,
                "host_numa_id": d.host_numa_id, "fabric": d.fabric, "uuid": d.uuid, "pci_bus_id": d.pci_bus_id,
                "pci_ids": d.pci_ids, "modes": d.modes,
                });
                // Issue 47: NVML's physical memory, where it says it (reports before lack it).
                if let Some(p) = d.physical_mem {
                    j["physical_mem"] = p.into();
                }
                j
            }).collect::<Vec<_>>(),
            "host_gpus": self.host_gpus,
            "peer": self.peer,
            "exported": self.exported.iter().map(|e| serde_json::json!([e.0, e.1])).collect::<Vec<_>>(),
            "p2p": self.p2p.iter().map(|p| serde_json::json!({"a": p.a, "b": p.b,
                "performance_rank": p.rank, "native_atomics": p.atomic})).collect::<Vec<_>>(),
            "selection": self.selection.to_json(),
            "cuda13_selectors": self.selectors,
            "entry": self.entry,
            "missing": self.missing,
            "imex_channels": self.imex_channels,
            "probe_error": self.probe_error,
            "provenance": self.provenance,
        });
        // Issue 57: only where the driver has it, so that reports of machines without it read as before.
        if self.checkpoint_api {
            j["checkpoint_api"] = true.into();
        }
        // Issue 58: only where the probe measured it, likewise.
        if let Some(f) = &self.first_work {
            j["first_work"] = f.to_json();
        }
        j
    }

    /// The machine a probe's answer `j` describes, in a process whose entry point read `settings`.
    pub fn from_json(j: &serde_json::Value, settings: &Settings) -> Result<Machine, String> {
        let bad = |what: &str| format!("probe answer: bad or missing {what}: {j}");
        let int = |v: &serde_json::Value, what: &str| v.as_i64().ok_or_else(|| bad(what));
        let flag = |v: &serde_json::Value| v.as_bool().unwrap_or(false);
        let mut m = Machine {
            identity: serde_json::from_value(j["identity"].clone()).map_err(|e| bad(&format!("identity ({e})")))?,
            load_error: j["load_error"].as_str().map(String::from),
            hidden_init: j["hidden_init"].as_i64().map(|v| v as i32),
            startup_secs: j["startup_secs"].as_f64().unwrap_or(0.0),
            first_work: FirstWork::from_json(&j["first_work"]),
            host_gpus: j["host_gpus"].as_u64().unwrap_or(0) as usize,
            resolved: serde_json::from_value(j["resolved"].clone()).unwrap_or_default(),
            preloaded: serde_json::from_value(j["preloaded"].clone()).unwrap_or_default(),
            paths: serde_json::from_value(j["paths"].clone()).unwrap_or_default(),
            under_test: serde_json::from_value(j["under_test"].clone()).unwrap_or_default(),
            lookup_init: serde_json::from_value(j["lookup_init"].clone()).unwrap_or_default(),
            driver_version: int(&j["driver_version"], "driver_version")? as i32,
            libcuda: j["libcuda"].as_str().unwrap_or("unknown").to_string(),
            init: int(&j["cuInit"], "cuInit")? as i32,
            selectors: flag(&j["cuda13_selectors"]),
            checkpoint_api: flag(&j["checkpoint_api"]),
            entry: j["entry"].as_str().unwrap_or("").to_string(),
            missing: j["missing"]
                .as_array()
                .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
                .unwrap_or_default(),
            imex_channels: flag(&j["imex_channels"]),
            probe_error: j["probe_error"].as_str().map(String::from),
            selection: Selection::from_json(&j["selection"]),
            provenance: serde_json::from_value(j["provenance"].clone()).unwrap_or_default(),
            p2p: j["p2p"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|p| P2p {
                            a: p["a"].as_i64().unwrap_or(0) as i32,
                            b: p["b"].as_i64().unwrap_or(0) as i32,
                            rank: p["performance_rank"].as_i64().unwrap_or(-1) as i32,
                            atomic: p["native_atomics"].as_bool().unwrap_or(false),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            checkpoint: settings.checkpoint.value(),
            ..Machine::default()
        };
        crate::driver::departures::set_driver(&m.identity.version);
        crate::driver::hangs::set_host_gpus(m.host_gpus);
        // Every process that reads the machine plans with the same wait (`driver::deadline`).
        crate::driver::deadline::set_first_wait(m.planned_wait());
        for d in j["devices"].as_array().ok_or_else(|| bad("devices"))? {
            m.devices.push(Device {
                ordinal: int(&d["ordinal"], "ordinal")? as i32,
                name: d["name"].as_str().unwrap_or("").to_string(),
                cc: (
                    int(&d["compute_capability"][0], "compute capability")? as i32,
                    int(&d["compute_capability"][1], "compute capability")? as i32,
                ),
                pools: flag(&d["memory_pools"]),
                handle_types: int(&d["handle_types"], "handle_types")? as u32,
                host_pools: flag(&d["host_pools"]),
                host_numa_pools: flag(&d["host_numa_pools"]),
                host_numa_id: int(&d["host_numa_id"], "host_numa_id")? as i32,
                fabric: flag(&d["fabric"]),
                total_mem: d["total_mem"].as_u64().unwrap_or(0) as usize,
                uuid: d["uuid"].as_str().unwrap_or("unknown").to_string(),
                pci_bus_id: d["pci_bus_id"].as_str().unwrap_or("unknown").to_string(),
                pci_ids: d["pci_ids"].as_str().unwrap_or("unknown").to_string(),
                modes: d["modes"].as_str().unwrap_or("unknown").to_string(),
                physical_mem: d["physical_mem"].as_u64(),
            });
        }
        for row in j["peer"].as_array().ok_or_else(|| bad("peer"))? {
            m.peer.push(
                row.as_array()
                    .ok_or_else(|| bad("peer row"))?
                    .iter()
                    .map(flag)
                    .collect(),
            );
        }
        for e in j["exported"].as_array().ok_or_else(|| bad("exported"))? {
            m.exported.push((int(&e[0], "exported index")? as u32, flag(&e[1])));
        }
        Ok(m)
    }

    /// A machine about which nothing is known because the probe itself failed.
    pub fn failed(why: String) -> Machine {
        Machine {
            init: CUresult::CUDA_ERROR_UNKNOWN.0 as i32,
            libcuda: "unknown".into(),
            probe_error: Some(why),
            exported: crate::driver::APIS.iter().map(|a| (a.0, false)).collect(),
            ..Machine::default()
        }
    }
}

/// The devices, pairs and multi-device group a run uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// The user named the devices (`all` or a list): names carry the devices.
    pub explicit: bool,
    pub devices: Vec<i32>,
    /// Ordered pairs (owner, peer) that can access each other.
    pub pairs: Vec<(i32, i32)>,
    /// Devices that all reach each other (multi-device cases need three).
    pub multi: Vec<i32>,
}

impl Selection {
    /// Every device a process of this run may hold a context of.
    pub fn used(&self) -> Vec<i32> {
        let mut v: Vec<i32> = self.devices.clone();
        v.extend(self.pairs.iter().flat_map(|&(a, b)| [a, b]));
        if self.multi.len() >= 3 {
            v.extend(&self.multi);
        }
        v.sort_unstable();
        v.dedup();
        v
    }
    /// The first device that `dev` shares peer access with, in this selection.
    pub fn peer_of(&self, dev: i32) -> Option<i32> {
        self.pairs.iter().find(|p| p.0 == dev).map(|p| p.1)
    }
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"explicit": self.explicit, "devices": self.devices,
            "pairs": self.pairs.iter().map(|p| [p.0, p.1]).collect::<Vec<_>>(), "multi": self.multi})
    }
    pub fn from_json(j: &serde_json::Value) -> Selection {
        let ints = |v: &serde_json::Value| -> Vec<i32> {
            v.as_array()
                .map(|a| a.iter().filter_map(|x| x.as_i64().map(|x| x as i32)).collect())
                .unwrap_or_default()
        };
        Selection {
            explicit: j["explicit"].as_bool().unwrap_or(false),
            devices: ints(&j["devices"]),
            pairs: j["pairs"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| Some((p[0].as_i64()? as i32, p[1].as_i64()? as i32)))
                        .collect()
                })
                .unwrap_or_default(),
            multi: ints(&j["multi"]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cap is a reported total below 0.9 of NVML's physical memory: the H100's own reserve is none,
    /// half the device is one, and without NVML's figure nothing is said.
    #[test]
    fn a_cap_is_a_total_well_below_the_physical_memory() {
        let d = |total: usize, physical: Option<u64>| Device {
            total_mem: total,
            physical_mem: physical,
            ..Device::default()
        };
        // H100 80 GB, R580: cuDeviceTotalMem against NVML's total.
        assert_eq!(d(85_029_158_912, Some(85_520_809_984)).cap(), None);
        assert_eq!(
            d(42_514_579_456, Some(85_520_809_984)).cap(),
            Some((42_514_579_456, 85_520_809_984))
        );
        assert_eq!(d(16 << 30, None).cap(), None);
        assert_eq!(d(0, Some(1 << 30)).cap(), None);
    }

    /// The physical memory travels to the children with the machine, and is left out where unknown.
    #[test]
    fn physical_memory_round_trips_and_is_absent_when_unknown() {
        let mut m = Machine::default();
        m.devices.push(Device {
            physical_mem: Some(80 << 30),
            ..Device::default()
        });
        m.devices.push(Device::default());
        let j = m.to_json();
        assert_eq!(j["devices"][0]["physical_mem"], serde_json::json!(80u64 << 30));
        assert!(j["devices"][1].get("physical_mem").is_none());
        let back = Machine::from_json(&j, &Settings::unset()).unwrap();
        assert_eq!(back.devices[0].physical_mem, Some(80 << 30));
        assert_eq!(back.devices[1].physical_mem, None);
    }
}
