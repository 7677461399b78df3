//! The machine as probed: capabilities a case may need, devices, pool support, handle types, peers,
//! and which object answers each API on each path to the driver. Its facts are the model's
//! (`conformance_model::Machine`): the probe's answer, the hand-off to every process of the run and
//! the report's `machine` are that one type's serialisation.

use crate::driver::check::*;
use crate::driver::cu::*;
pub use crate::harness::cap::{Cap, ALL_CAPS};
use crate::harness::settings::{Engine, Settings};
use conformance_model::{self as model, Device, Identity, P2p, PathAnswer, RunProvenance, Selection, UnderTest};
use serde::Deserialize;
use std::sync::LazyLock;

/// The machine a process of the run holds: the facts the probe found and the coordinator added
/// (`selection`, `provenance`, `hidden_init`, `lookup_init`, the probe's `startup_secs`), and what
/// this process's own settings make of them. Reads as its facts (`Deref`); where a fact is
/// optional in the model (older reports lack it), the accessors below read it as the probe writes it.
#[derive(Clone, Debug)]
pub struct Machine {
    /// What the machine is: every key the probe's answer carries is present (`blank`).
    pub facts: model::Machine,
    /// The run's checkpoint engine (CONFORMANCE_CHECKPOINT), from the settings of the process that
    /// holds this machine (`probe`, `from_json`): what the `checkpoint` capability depends on. Not
    /// part of the probe's answer (each process has its own settings).
    pub checkpoint: Engine,
}

impl std::ops::Deref for Machine {
    type Target = model::Machine;
    fn deref(&self) -> &model::Machine {
        &self.facts
    }
}

impl std::ops::DerefMut for Machine {
    fn deref_mut(&mut self) -> &mut model::Machine {
        &mut self.facts
    }
}

impl Default for Machine {
    fn default() -> Machine {
        Machine {
            facts: blank(),
            checkpoint: Engine::default(),
        }
    }
}

/// The machine `facts` describe, under the default checkpoint engine (tests, fixtures).
impl From<model::Machine> for Machine {
    fn from(facts: model::Machine) -> Machine {
        Machine {
            facts,
            checkpoint: Engine::default(),
        }
    }
}

/// The facts of a machine of which nothing is known yet, every key of the probe's answer present
/// (the probe writes them all, null or empty where it has nothing); `not_reached` and `bypasses`
/// are derived where the machine is written (`Machine::answer`), `first_work` and `checkpoint_api`
/// present only where the probe has them.
pub fn blank() -> model::Machine {
    model::Machine {
        identity: Some(Identity::default()),
        load_error: Some(None),
        hidden_init: Some(None),
        startup_secs: Some(0.0),
        resolved: Some(Vec::new()),
        preloaded: Some(Vec::new()),
        paths: Some(Vec::new()),
        under_test: Some(Vec::new()),
        lookup_init: Some(None),
        libcuda: Some(String::new()),
        host_gpus: Some(0),
        p2p: Some(Vec::new()),
        selection: Some(Selection::default()),
        entry: Some(String::new()),
        provenance: Some(RunProvenance::default()),
        ..model::Machine::default()
    }
}

/// Device `ordinal` of which nothing else is known yet: its UUID, PCI bus, PCI ids and modes
/// present and empty, as the probe writes them all.
pub fn blank_device(ordinal: i32) -> Device {
    Device {
        ordinal: ordinal.into(),
        uuid: Some(String::new()),
        pci_bus_id: Some(String::new()),
        pci_ids: Some(String::new()),
        modes: Some(String::new()),
        ..Device::default()
    }
}

/// A library under test at `path`, named by `named_by`, before it is examined.
pub fn blank_under_test(path: &str, named_by: &str) -> UnderTest {
    UnderTest {
        path: path.to_string(),
        named_by: named_by.to_string(),
        file: Some(Err("not read".into())),
        ..UnderTest::default()
    }
}

/// The share of its physical memory a device's reported total may lack before the probe calls it
/// capped: the driver itself keeps some (H100, R580: cuDeviceTotalMem 79.2 GiB of NVML's 79.6).
pub const CAP_BELOW: f64 = 0.9;

/// (reported, physical) where a layer caps device `d`: cuDeviceTotalMem's total below
/// [`CAP_BELOW`] of NVML's physical memory (issue 47).
pub fn capped(d: &Device) -> Option<(u64, u64)> {
    let (reported, physical) = (d.total_mem, d.physical_mem?);
    (reported > 0 && (reported as f64) < CAP_BELOW * physical as f64).then_some((reported, physical))
}

/// Device `d`'s compute capability (major, minor).
pub fn cc(d: &Device) -> (i32, i32) {
    (d.compute_capability.0 as i32, d.compute_capability.1 as i32)
}

/// A device's text fact (UUID, PCI bus id, PCI ids, modes), "unknown" where absent.
pub fn said(fact: &Option<String>) -> &str {
    fact.as_deref().unwrap_or("unknown")
}

/// Every device a process of a run of selection `sel` may hold a context of.
pub fn used(sel: &Selection) -> Vec<i32> {
    let mut v: Vec<i32> = sel.devices.clone();
    v.extend(sel.pairs.iter().flat_map(|&(a, b)| [a, b]));
    if sel.multi.len() >= 3 {
        v.extend(&sel.multi);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// The first device that `dev` shares peer access with, in selection `sel`.
pub fn peer_of(sel: &Selection, dev: i32) -> Option<i32> {
    sel.pairs.iter().find(|p| p.0 == dev).map(|p| p.1)
}

/// What a path hands out where it has no function for an API.
pub const NOTHING: &str = "nothing (missing)";

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

static NO_IDENTITY: LazyLock<Identity> = LazyLock::new(Identity::default);
static NO_SELECTION: LazyLock<Selection> = LazyLock::new(Selection::default);
static NO_PROVENANCE: LazyLock<RunProvenance> = LazyLock::new(RunProvenance::default);

/// The facts the model keeps optional, read as the probe writes them (empty where absent).
impl Machine {
    pub fn identity(&self) -> &Identity {
        self.facts.identity.as_ref().unwrap_or(&NO_IDENTITY)
    }
    /// Why the driver library could not be loaded, if it could not.
    pub fn load_error(&self) -> Option<&str> {
        self.facts.load_error.as_ref().and_then(Option::as_deref)
    }
    /// cuInit's answer in a child with every device hidden, where the coordinator asked it.
    pub fn hidden_init(&self) -> Option<i64> {
        self.facts.hidden_init.flatten()
    }
    /// How long the probe's child took, start to answer, less its measure of the first GPU work.
    pub fn startup_secs(&self) -> f64 {
        self.facts.startup_secs.unwrap_or(0.0)
    }
    pub fn resolved(&self) -> &[(String, String)] {
        self.facts.resolved.as_deref().unwrap_or_default()
    }
    pub fn preloaded(&self) -> &[String] {
        self.facts.preloaded.as_deref().unwrap_or_default()
    }
    pub fn paths(&self) -> &[PathAnswer] {
        self.facts.paths.as_deref().unwrap_or_default()
    }
    pub fn under_test(&self) -> &[UnderTest] {
        self.facts.under_test.as_deref().unwrap_or_default()
    }
    /// cuDeviceGetCount's answer in a child that never called cuInit, or why it gave none, where
    /// the coordinator asked it.
    pub fn lookup_init(&self) -> Option<&Result<i64, String>> {
        self.facts.lookup_init.as_ref().and_then(Option::as_ref)
    }
    /// The driver library's path, "unknown" where absent.
    pub fn libcuda(&self) -> &str {
        self.facts.libcuda.as_deref().unwrap_or("unknown")
    }
    pub fn host_gpus(&self) -> usize {
        self.facts.host_gpus.unwrap_or(0) as usize
    }
    pub fn p2p(&self) -> &[P2p] {
        self.facts.p2p.as_deref().unwrap_or_default()
    }
    /// The devices this run uses, decided by the coordinator after the probe.
    pub fn selection(&self) -> &Selection {
        self.facts.selection.as_ref().unwrap_or(&NO_SELECTION)
    }
    /// How the suite reaches the driver (CONFORMANCE_ENTRY), in words.
    pub fn entry(&self) -> &str {
        self.facts.entry.as_deref().unwrap_or_default()
    }
    pub fn provenance(&self) -> &RunProvenance {
        self.facts.provenance.as_ref().unwrap_or(&NO_PROVENANCE)
    }
    /// The library has the driver's checkpoint engine (R570+).
    pub fn checkpoint_api(&self) -> bool {
        self.facts.checkpoint_api == Some(true)
    }
    /// Every device a process of this run may hold a context of.
    pub fn used(&self) -> Vec<i32> {
        used(self.selection())
    }
    /// The first device that `dev` shares peer access with, among those this run uses.
    pub fn peer_of(&self, dev: i32) -> Option<i32> {
        peer_of(self.selection(), dev)
    }
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
        if let Some(e) = self.load_error() {
            return Err(format!("the driver library could not be loaded: {e}"));
        }
        let why = match cap {
            Cap::PoolLess if self.cu_init != 0 => "no CUDA device".into(),
            Cap::PoolLess if d.is_some_and(|d| !d.memory_pools) => return Ok(()),
            Cap::PoolLess => format!("device {dev} supports memory pools (these cases are for a device without)"),
            Cap::Gpu if self.cu_init != 0 => format!(
                "no CUDA device (cuInit returned {})",
                code_name(CUresult(self.cu_init as u32))
            ),
            Cap::Gpu if !d.is_some_and(|d| d.memory_pools) => format!("device {dev} does not support memory pools"),
            Cap::Gpu => return Ok(()),
            _ if self.cu_init != 0 => "no CUDA device".into(),
            Cap::Ipc if d.is_some_and(|d| d.handle_types & 1 != 0) => return Ok(()),
            Cap::Ipc => format!("device {dev} cannot export pools as POSIX file descriptors"),
            Cap::Peer if self.peer_of(dev).is_some() => return Ok(()),
            Cap::Peer => format!(
                "no device shares peer access with device {dev} among those this run uses ({} device(s) here)",
                self.devices.len()
            ),
            Cap::MultiPeer if self.selection().multi.len() >= 3 => return Ok(()),
            Cap::MultiPeer => format!(
                "needs three devices that all reach each other; the largest such group this run uses is {:?}",
                self.selection().multi
            ),
            Cap::HostPool if d.is_some_and(|d| d.host_pools) => return Ok(()),
            Cap::HostPool => format!("device {dev} reports no support for host-located pools"),
            Cap::HostNuma if d.is_some_and(|d| d.host_numa_pools) => return Ok(()),
            Cap::HostNuma => format!("device {dev} reports no support for host-NUMA pools"),
            Cap::Cuda13 if self.cuda13_selectors => return Ok(()),
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
                    self.checkpoint_api(),
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
    /// the probe's, where it is long for the user's trial deadline `timeout`; zero otherwise.
    pub fn planned_wait(&self, timeout: std::time::Duration) -> std::time::Duration {
        crate::harness::first_work::planned(self.first_work.as_ref(), timeout)
    }

    /// The settings a process holding this machine hands down: `settings`, planning with this
    /// machine's wait at each new process's first GPU work (its [`Machine::planned_wait`] for the
    /// user's deadline). The coordinator's once it has probed, a worker's once it is told the machine
    /// (a worker started before the probe could not be handed the wait).
    pub fn planned_settings(&self, settings: &Settings) -> std::sync::Arc<Settings> {
        let wait = self.planned_wait(settings.trial_timeout.value());
        std::sync::Arc::new(settings.with_first_wait(wait))
    }

    /// The 14 APIs' entries by the object they resolved to: "libcuda.so.580.159.04 (14)".
    pub fn answered_by(&self) -> String {
        answered_by(self.resolved(), self.entry())
    }

    /// Where a library under test defines one of the 14 APIs and some path hands out another
    /// object's function (or none) for it: one line per library and path, naming the APIs, what
    /// that path hands out, and the applications that take it. Empty when every path reaches it,
    /// or no library under test defines a driver symbol.
    pub fn bypasses(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for lib in self.under_test().iter().filter(|l| l.error.is_none()) {
            for path in self.paths().iter().filter(|p| p.error.is_none()) {
                let missed: Vec<String> = path
                    .objects
                    .iter()
                    .filter(|(api, o)| lib.exports.contains(api) && !same_file(o, &lib.path))
                    .map(|(api, o)| format!("{api} → {o}"))
                    .collect();
                if missed.is_empty() {
                    continue;
                }
                let apps = crate::driver::entry::applications(path.mode);
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
        self.under_test()
            .iter()
            .filter(|l| l.error.is_none() && l.exports.is_empty())
            .map(|l| format!("{} ({}) defines none of the driver's symbols", l.path, l.named_by))
            .collect()
    }

    /// Why the library under test was not reached: LD_PRELOAD names libraries, and no entry point
    /// resolved into any of them in the mode this run used.
    pub fn not_reached(&self) -> Option<String> {
        if self.preloaded().is_empty() || self.resolved().is_empty() {
            return None;
        }
        let file = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
        let preloaded: Vec<String> = self.preloaded().iter().map(|p| file(p)).collect();
        // Reached: one of the 14 APIs resolved into it (cuGetProcAddress alone is not an answer).
        let reached = self
            .resolved()
            .iter()
            .filter(|(sym, _)| crate::driver::APIS.iter().any(|(_, a)| a == sym))
            .any(|(_, o)| preloaded.contains(&file(o)));
        (!reached).then(|| {
            format!(
                "LD_PRELOAD names {}, but no entry point resolved into it in mode {}: this report is about {}, \
                 not about the preloaded library (try CONFORMANCE_ENTRY=proc-address, dlsym or link, whichever path \
                 the library hooks)",
                preloaded.join(", "),
                self.entry(),
                self.answered_by()
            )
        })
    }

    /// The facts as they are written, with what is derived from them (`not_reached`, `bypasses`):
    /// the probe's answer, the hand-off to every process of the run and the report's `machine`.
    pub fn answer(&self) -> model::Machine {
        model::Machine {
            not_reached: Some(self.not_reached()),
            bypasses: Some(self.bypasses()),
            ..self.facts.clone()
        }
    }

    /// The probe's answer and the hand-off to the run's processes, as JSON ([`Machine::answer`]).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self.answer()).expect("a machine is JSON")
    }

    /// The machine a probe's answer `j` describes, in a process whose entry point read `settings`.
    pub fn from_json(j: &serde_json::Value, settings: &Settings) -> Result<Machine, String> {
        let facts = model::Machine::deserialize(j).map_err(|e| format!("probe answer: not a machine ({e}): {j}"))?;
        Machine::from_answer(facts, settings).map_err(|e| format!("{e}: {j}"))
    }

    /// The machine a probe's answer describes, already read (the coordinator's hand-off to a
    /// worker, `ToWorker::Machine`): Err where it has no identity, which every probe's answer has.
    pub fn from_answer(facts: model::Machine, settings: &Settings) -> Result<Machine, String> {
        if facts.identity.is_none() {
            return Err("probe answer: no identity".into());
        }
        Ok(Machine::held(facts, settings))
    }

    /// The machine `facts` describe, held by a process whose entry point read `settings`: every
    /// process that holds it judges departures by its driver (the wait it plans with came with the
    /// settings: `Settings::first_wait`).
    pub fn held(facts: model::Machine, settings: &Settings) -> Machine {
        let m = Machine {
            facts,
            checkpoint: settings.checkpoint.value(),
        };
        crate::driver::departures::set_driver(&m.identity().version);
        crate::driver::hangs::set_host_gpus(m.host_gpus());
        m
    }

    /// A machine about which nothing is known because the probe itself failed.
    pub fn failed(why: String) -> Machine {
        Machine::from(model::Machine {
            cu_init: CUresult::CUDA_ERROR_UNKNOWN.0.into(),
            libcuda: Some("unknown".into()),
            probe_error: Some(why),
            exported: crate::driver::APIS.iter().map(|a| (u64::from(a.0), false)).collect(),
            ..blank()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process that holds the machine plans with the wait its probe measured where it is long for
    /// the deadline (a worker started before the probe learns it here), and with none otherwise.
    #[test]
    fn the_machine_hands_its_planned_wait_to_the_settings() {
        let settings = Settings::unset();
        let mut m = Machine::default();
        assert_eq!(
            m.planned_settings(&settings).deadline().first_wait(),
            std::time::Duration::ZERO
        );
        m.first_work = Some(conformance_model::FirstWork {
            context_s: 0.1,
            first_s: 3.2,
            again_s: 0.2,
            ..Default::default()
        });
        let planned = m.planned_settings(&settings).deadline();
        assert_eq!(planned.first_wait(), m.planned_wait(settings.trial_timeout.value()));
        assert!(planned.first_wait() >= std::time::Duration::from_secs(2), "{planned:?}");
        assert!(planned.trial() > settings.deadline().trial());
        m.first_work.as_mut().unwrap().first_s = 0.25;
        assert_eq!(
            m.planned_settings(&settings).deadline().first_wait(),
            std::time::Duration::ZERO,
            "a short wait"
        );
    }

    /// A cap is a reported total below 0.9 of NVML's physical memory: the H100's own reserve is none,
    /// half the device is one, and without NVML's figure nothing is said.
    #[test]
    fn a_cap_is_a_total_well_below_the_physical_memory() {
        let d = |total: u64, physical: Option<u64>| Device {
            total_mem: total,
            physical_mem: physical,
            ..Device::default()
        };
        // H100 80 GB, R580: cuDeviceTotalMem against NVML's total.
        assert_eq!(capped(&d(85_029_158_912, Some(85_520_809_984))), None);
        assert_eq!(
            capped(&d(42_514_579_456, Some(85_520_809_984))),
            Some((42_514_579_456, 85_520_809_984))
        );
        assert_eq!(capped(&d(16 << 30, None)), None);
        assert_eq!(capped(&d(0, Some(1 << 30))), None);
    }

    /// The physical memory travels to the children with the machine, and is left out where unknown.
    #[test]
    fn physical_memory_round_trips_and_is_absent_when_unknown() {
        let mut m = Machine::default();
        m.devices.push(Device {
            physical_mem: Some(80 << 30),
            ..blank_device(0)
        });
        m.devices.push(blank_device(1));
        let j = m.to_json();
        let text = |d: &Device| serde_json::to_string(d).unwrap();
        assert!(text(&m.devices[0]).contains(&format!("\"physical_mem\":{}", 80u64 << 30)));
        assert!(!text(&m.devices[1]).contains("physical_mem"));
        let back = Machine::from_json(&j, &Settings::unset()).unwrap();
        assert_eq!(back.devices[0].physical_mem, Some(80 << 30));
        assert_eq!(back.devices[1].physical_mem, None);
        assert_eq!(back.answer(), m.answer());
    }

    /// What is not a probe's answer is refused, not read as a machine of no devices.
    #[test]
    fn an_answer_without_identity_is_refused() {
        assert!(Machine::from_json(&serde_json::json!({}), &Settings::unset()).is_err());
        assert!(Machine::from_json(&serde_json::json!([1]), &Settings::unset()).is_err());
    }
}
