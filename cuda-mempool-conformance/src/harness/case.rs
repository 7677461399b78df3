//! The case model: what a case is (its group, needs, placement, declared crash, body), how it spreads
//! over a run's devices, the environment its body gets, and a result several cases share.

use crate::driver::cu::*;
use crate::driver::deadline::Deadline;
use crate::driver::departures::Policy;
use crate::driver::fail::{Fail, R};
use crate::harness::machine::{Cap, Machine};
use crate::harness::placement::{Need, Own, Placement, SERIAL};
use crate::harness::precondition::Precondition;
use crate::harness::probe::retain_context;
use crate::harness::settings::Settings;
use conformance_model::Selection;
use std::sync::{Arc, OnceLock};

/// What a case gets: the probed machine, the run's settings (as this process's entry point read
/// them, and so its deadline and departure policy), its device (whose primary context is current),
/// and for pair and multi-device cases the other devices.
#[derive(Clone)]
pub struct Env {
    pub m: Arc<Machine>,
    pub settings: Arc<Settings>,
    pub dev: CUdevice,
    /// A pair case's other device.
    pub peer: Option<CUdevice>,
    /// A multi-device case's devices (all reach each other); `dev` is the first.
    pub multi: Vec<CUdevice>,
    /// `dev`'s primary context, retained by this process (0 if none).
    pub ctx: usize,
}
impl Env {
    /// A process's environment on device `dev` (retaining its context when there is a device).
    pub fn on(m: Arc<Machine>, settings: Arc<Settings>, dev: CUdevice) -> Env {
        let ctx = if m.cu_init == 0 && !m.devices.is_empty() {
            retain_context(dev)
        } else {
            0
        };
        Env {
            m,
            settings,
            dev,
            peer: None,
            multi: Vec::new(),
            ctx,
        }
    }
    /// An environment on device 0 that retains no context (a coordinator, which never calls the
    /// library; a worker that could not make its context).
    pub fn without_context(m: Arc<Machine>, settings: Arc<Settings>) -> Env {
        Env {
            m,
            settings,
            dev: 0,
            peer: None,
            multi: Vec::new(),
            ctx: 0,
        }
    }
    /// The environment for one case: its device(s), their contexts retained on first use.
    pub fn for_case(&self, c: &Case) -> Env {
        let ctx = if c.dev == self.dev || self.ctx == 0 {
            self.ctx
        } else {
            retain_context(c.dev)
        };
        if self.ctx != 0 {
            for d in c.peer.iter().chain(&c.multi) {
                retain_context(*d);
            }
        }
        Env {
            m: self.m.clone(),
            settings: self.settings.clone(),
            dev: c.dev,
            peer: c.peer,
            multi: c.multi.clone(),
            ctx,
        }
    }
    /// How the case's departures, crashes and hangs are judged (`Settings::policy`).
    pub fn policy(&self) -> Policy {
        self.settings.policy()
    }
    /// The run's deadline, from which every wait of a case is derived (`driver::deadline`).
    pub fn deadline(&self) -> Deadline {
        self.settings.deadline()
    }
    /// Make this device's primary context current on this thread.
    pub fn bind(&self) {
        if self.ctx != 0 {
            let _ = unsafe { cuCtxSetCurrent(self.ctx as CUcontext) };
        }
    }
    /// The pair case's other device.
    pub fn peer(&self) -> R<CUdevice> {
        self.peer
            .ok_or_else(|| format!("no device shares peer access with device {}", self.dev).into())
    }
}

/// A trial's name without the devices [`Case::spread`] named in it (`::dev2`, `::dev0_dev1`): the
/// case's own name, the same on every machine.
pub fn without_device_suffix(trial: &str) -> &str {
    match trial.rsplit_once("::") {
        Some((base, last)) if last.starts_with("dev") && last[3..].starts_with(|c: char| c.is_ascii_digit()) => base,
        _ => trial,
    }
}

pub type Body = Arc<dyn Fn(&Env) -> R + Send + Sync>;

/// Where a trial belongs in the report: one of the 14 APIs, the harness's own checks of itself,
/// or the suite's checks of the run as a whole.
#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord)]
pub enum Group {
    Api(u32),
    /// The harness tested against injected faults (dying and hanging children).
    Harness,
    /// The run as a whole (`suite::no_leaks`).
    Suite,
}
impl Group {
    pub fn api(self) -> Option<u32> {
        match self {
            Group::Api(i) => Some(i),
            _ => None,
        }
    }
    pub fn label(self) -> String {
        match self {
            Group::Api(i) => format!("{i}_{}", crate::driver::api_name(i)),
            Group::Harness => "harness".into(),
            Group::Suite => "suite".into(),
        }
    }
}

/// A case whose input crashes the driver it was written against: the signals it was seen to die
/// by, the code the documentation promises instead, and the drivers the crash was seen on.
#[derive(Clone, Copy, Debug)]
pub struct Crash {
    pub signals: &'static [i32],
    pub documented: CUresult,
    pub seen_on: &'static str,
    /// Driver branches the crash is expected on (`driver/departures.rs`); outside them the documented
    /// code is.
    pub branches: (u32, u32),
    /// APIs the crash may land in after the case's own API accepted the input (a heap corrupted by
    /// the call under test, touched by a later call); empty: only inside the case's own API.
    pub later: &'static [u32],
    /// The crash is the driver reading or writing memory it freed: whether it comes, and where it
    /// lands, depends on the heap allocator's state (glibc's perturb and checks, another allocator,
    /// what ran before in the process). The documented answer then passes too (the heap hid it),
    /// and a crash by the signals anywhere after the case started is the declared one (issue 58).
    pub heap: bool,
}
pub const SIGSEGV: &[i32] = &[11];
/// A heap corrupted inside the driver: SIGSEGV where it is touched, or SIGABRT from the C
/// library's heap checks at a later free, depending on the allocator's state.
pub const SIGSEGV_OR_SIGABRT: &[i32] = &[11, 6];

/// How a case spreads over the devices a run uses (`harness/devices.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Per {
    /// Once per run (no device, or the machine as a whole).
    Once,
    /// Once per selected device.
    Device,
    /// Once per ordered peer-capable pair (owner, peer).
    Pair,
    /// Once, over the devices that all reach each other (three or more).
    Multi,
}

#[derive(Clone)]
pub struct Case {
    pub group: Group,
    pub name: String,
    pub needs: Vec<Cap>,
    pub per: Per,
    /// The device it runs on (the pool owner for pairs), once spread over the devices.
    pub dev: CUdevice,
    pub peer: Option<CUdevice>,
    pub multi: Vec<CUdevice>,
    /// What the trial name ends with once spread (`::dev2`, `::dev0_dev1`), when devices are named.
    pub suffix: String,
    pub crash: Option<Crash>,
    /// Where and how it runs: its process, its queue, its memory need, long-running or alone
    /// (`harness::placement`).
    pub placement: Placement,
    /// The run's preconditions it relies on: where one does not hold, it is not run
    /// (`harness::precondition`).
    pub relies: &'static [Precondition],
    /// What its lane's worker starts ahead, before the lane's first turn (`run::scheduler`): the
    /// child processes it will take (`harness::kept_children::warm`). Run once per lane for each distinct one.
    pub warm: Option<Warm>,
    pub body: Body,
}

/// A lane's start-ahead step (`Case::warm`), run in its worker with the case's environment.
pub type Warm = fn(&Env) -> R;

impl Case {
    pub fn new(
        api: u32,
        name: impl Into<String>,
        needs: &[Cap],
        body: impl Fn(&Env) -> R + Send + Sync + 'static,
    ) -> Case {
        Case {
            group: Group::Api(api),
            name: name.into(),
            needs: needs.to_vec(),
            per: if needs.contains(&Cap::Gpu) {
                Per::Device
            } else {
                Per::Once
            },
            dev: 0,
            peer: None,
            multi: Vec::new(),
            suffix: String::new(),
            crash: None,
            placement: Placement::default(),
            relies: crate::harness::precondition::DEFAULT,
            warm: None,
            body: Arc::new(body),
        }
    }
    pub fn gpu(api: u32, name: impl Into<String>, body: impl Fn(&Env) -> R + Send + Sync + 'static) -> Case {
        Self::new(api, name, &[Cap::Gpu], body)
    }
    /// A case of another group (harness, suite): once per run, on device 0.
    pub fn of(
        group: Group,
        name: impl Into<String>,
        needs: &[Cap],
        body: impl Fn(&Env) -> R + Send + Sync + 'static,
    ) -> Case {
        Case {
            group,
            per: Per::Once,
            ..Self::new(0, name, needs, body)
        }
    }
    /// Runs on every ordered peer-capable pair (needs `peer`).
    pub fn pair(mut self) -> Case {
        self.per = Per::Pair;
        self.needs(Cap::Peer)
    }
    /// Runs once over three or more devices that all reach each other (needs `multi-peer`).
    pub fn multi(mut self) -> Case {
        self.per = Per::Multi;
        self.needs(Cap::MultiPeer)
    }
    pub fn needs(mut self, cap: Cap) -> Case {
        self.needs.push(cap);
        self
    }
    /// In `lane` ([`Queue::Lane`](crate::harness::placement::Queue::Lane)).
    pub fn lane(mut self, lane: &'static str) -> Case {
        self.placement = self.placement.in_lane(lane);
        self
    }
    /// In `lane` only for its pace ([`Queue::Paced`](crate::harness::placement::Queue::Paced)): its
    /// trials do not depend on each other.
    pub fn paced(mut self, lane: &'static str) -> Case {
        self.placement = self.placement.paced_in(lane);
        self
    }
    pub fn serial(self) -> Case {
        self.lane(SERIAL)
    }
    /// It relies on these preconditions rather than the default ones.
    pub fn relies(mut self, on: &'static [Precondition]) -> Case {
        self.relies = on;
        self
    }
    /// The driver crashes on this input: see [`Crash`]. The body returns Ok when the call returned
    /// the documented code instead (the driver no longer crashes).
    pub fn crashes(mut self, signals: &'static [i32], documented: CUresult, seen_on: &'static str) -> Case {
        self.crash = Some(Crash {
            signals,
            documented,
            seen_on,
            branches: (580, 580),
            later: &[],
            heap: false,
        });
        self
    }
    /// The declared crash depends on the heap ([`Crash::heap`]).
    pub fn heap_dependent(mut self) -> Case {
        if let Some(c) = &mut self.crash {
            c.heap = true;
        }
        self
    }
    /// The declared crash may also land in one of `apis`, called after the case's own API accepted
    /// the input (see [`Crash::later`]).
    pub fn or_later_inside(mut self, apis: &'static [u32]) -> Case {
        if let Some(c) = &mut self.crash {
            c.later = apis;
        }
        self
    }
    /// Long-running ([`Placement::long_running`]).
    pub fn slow(mut self) -> Case {
        self.placement = self.placement.long_running();
        self
    }
    /// With no other trial in its process ([`Placement::alone_in_process`]).
    pub fn alone(mut self) -> Case {
        self.placement = self.placement.alone_in_process();
        self
    }
    /// Its lane's worker runs `f` before the lane's first turn ([`Case::warm`]).
    pub fn warmed_by(mut self, f: Warm) -> Case {
        self.warm = Some(f);
        self
    }
    /// It runs in a process of its own ([`Own::Leaves`]): what it leaves in the process goes
    /// with it.
    pub fn own_process(mut self) -> Case {
        self.placement = self.placement.in_own_process(Own::Leaves);
        self
    }
    /// It hands the driver a destroyed handle (a pool or stream after its destruction, a device
    /// pointer after its free): run in a process of its own so whatever the driver does with freed
    /// memory reaches no other trial. On R580 (H200, with glibc's heap checks) a worker that had
    /// run such a trial died later inside cuMemAllocFromPoolAsync or cuMemPoolDestroy, or aborted in
    /// cuMemPoolCreate on a corrupted heap, in trials that pass alone (issue 58). Every such trial
    /// is listed in `cases::all`'s tests ([`Own::FreedHandles`]).
    pub fn hands_freed_handles(mut self) -> Case {
        self.placement = self.placement.in_own_process(Own::FreedHandles);
        self
    }
    /// It makes calls the driver may leave unanswered, on watched threads
    /// ([`Process::Watched`](crate::harness::placement::Process::Watched)).
    pub fn may_hang(mut self) -> Case {
        self.placement = self.placement.watched();
        self
    }
    /// It needs the device alone ([`Need::Device`]).
    pub fn exclusive(self) -> Case {
        self.needing(Need::Device)
    }
    /// It asks for more memory than the device has ([`Need::Beyond`]).
    pub fn beyond_device(self) -> Case {
        self.needing(Need::Beyond)
    }
    /// It holds at most `num`/`den` of the device's memory ([`Need::Share`]).
    pub fn memory_share(self, num: u32, den: u32) -> Case {
        self.needing(Need::Share(num, den))
    }
    /// It holds at most `bytes` of device memory ([`Need::Bytes`]).
    pub fn memory_bytes(self, bytes: u64) -> Case {
        self.needing(Need::Bytes(bytes))
    }
    /// It needs `need` of the device's memory, alone in its process ([`Placement::needing`]).
    fn needing(mut self, need: Need) -> Case {
        self.placement = self.placement.needing(need);
        self
    }
    /// What it needs of the device's memory, as the scheduler takes it: a case that needs no
    /// device ([`Cap::Gpu`] not among its needs) holds no device memory.
    pub fn memory_need(&self) -> Need {
        self.placement.memory_need(self.needs.contains(&Cap::Gpu))
    }
    /// `820_cuMemAllocAsync::case`, `…::serial::case`, `harness::case`, `suite::case`.
    pub fn trial_name(&self) -> String {
        match (self.group, self.placement.lane()) {
            (Group::Api(_), Some(SERIAL)) => format!("{}::serial::{}{}", self.group.label(), self.name, self.suffix),
            _ => format!("{}::{}{}", self.group.label(), self.name, self.suffix),
        }
    }
    /// Why this case cannot run on `m`, if it cannot.
    pub fn missing(&self, m: &Machine) -> Option<(Cap, String)> {
        self.needs.iter().find_map(|c| {
            let r = match c {
                // A spread pair case has its pair by construction; an unspread one has none.
                Cap::Peer if self.per == Per::Pair => match self.peer {
                    Some(_) => m.has_on(Cap::Gpu, self.dev),
                    None => Err("no two devices this run uses share peer access".to_string()),
                },
                _ => m.has_on(*c, self.dev),
            };
            r.err().map(|why| (*c, why))
        })
    }
    /// This case spread over a run's devices.
    pub fn spread(&self, sel: &Selection) -> Vec<Case> {
        let one = |dev: CUdevice, peer: Option<CUdevice>, multi: Vec<CUdevice>, suffix: String| Case {
            dev,
            peer,
            multi,
            suffix,
            ..self.clone()
        };
        let first = sel.devices.first().copied().unwrap_or(0);
        match self.per {
            Per::Once => vec![self.clone()],
            Per::Device if sel.devices.is_empty() => vec![self.clone()],
            Per::Device => sel
                .devices
                .iter()
                .map(|&d| {
                    let suffix = if sel.explicit {
                        format!("::dev{d}")
                    } else {
                        String::new()
                    };
                    one(d, None, vec![], suffix)
                })
                .collect(),
            Per::Pair if sel.pairs.is_empty() => vec![one(first, None, vec![], String::new())],
            Per::Pair => sel
                .pairs
                .iter()
                .map(|&(a, b)| {
                    let suffix = if sel.explicit {
                        format!("::dev{a}_dev{b}")
                    } else {
                        String::new()
                    };
                    one(a, Some(b), vec![], suffix)
                })
                .collect(),
            Per::Multi => {
                let dev = sel.multi.first().copied().unwrap_or(first);
                vec![one(dev, None, sel.multi.clone(), String::new())]
            }
        }
    }
}

/// Lazily computed, shared result of one expensive observation (several trials read one child's
/// answers). Cases that share one belong to one lane, so it is computed once per run. A failure is
/// kept with its blame, which every trial that reads it then carries; a success leaves no blame on
/// the trial that happened to compute it. The APIs reached while computing it (`driver::calls`)
/// count for every trial that reads it, as if each had made those calls itself.
pub struct Shared<T>(OnceLock<(Made<T>, u16)>);
/// A shared result as computed: the value, or the failure with its blame.
type Made<T> = Result<T, (Fail, Option<u32>)>;
impl<T> Shared<T> {
    pub const fn new() -> Self {
        Shared(OnceLock::new())
    }
    pub fn get(&self, f: impl FnOnce() -> R<T>) -> R<&T> {
        use crate::driver::calls;
        let (r, reached) = self.0.get_or_init(|| {
            let earlier = calls::take().unwrap_or(0);
            let before = crate::driver::blame::get();
            let r = f().map_err(|e| (e, crate::driver::blame::get()));
            crate::driver::blame::reset();
            if let Some(b) = before {
                crate::driver::blame::set(b);
            }
            let reached = calls::take().unwrap_or(0);
            calls::add(earlier);
            (r, reached)
        });
        calls::add(*reached);
        match r {
            Ok(v) => Ok(v),
            Err((e, blame)) => {
                if let Some(b) = blame {
                    crate::driver::blame::set(*b);
                }
                Err(e.clone())
            }
        }
    }
}
impl<T> Default for Shared<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    /// The builders cases use land in the placement: a case of its own process runs in a child of
    /// its worker, a crash case of its own process in the worker, which ends after it, any other in
    /// the worker; a case that needs memory runs alone in its process.
    #[test]
    fn builders_place_the_case() {
        use super::*;
        use crate::harness::placement::InWorker;
        let plain = || Case::gpu(821, "x", |_| Ok(()));
        let crash = || plain().crashes(SIGSEGV, CUresult::CUDA_ERROR_INVALID_HANDLE, "test");
        let place = |c: Case| c.placement.in_worker(c.crash.is_some());
        assert_eq!(place(plain()), InWorker::Worker);
        assert_eq!(place(plain().own_process()), InWorker::Child);
        assert_eq!(place(plain().hands_freed_handles()), InWorker::Child);
        assert_eq!(place(crash()), InWorker::Worker);
        assert_eq!(place(crash().hands_freed_handles()), InWorker::WorkerThenEnd);
        assert!(plain()
            .hands_freed_handles()
            .own_process()
            .placement
            .hands_freed_handles());
        assert!(plain().memory_share(1, 2).placement.alone());
        assert_eq!(plain().serial().trial_name(), "821_cuMemAllocFromPoolAsync::serial::x");
    }

    #[test]
    fn device_suffixes_come_off_and_nothing_else() {
        use super::without_device_suffix as w;
        assert_eq!(w("830_x::large_import::dev2"), "830_x::large_import");
        assert_eq!(
            w("822_x::free_with_other_device_current::dev0_dev1"),
            "822_x::free_with_other_device_current"
        );
        assert_eq!(w("823_x::device_location"), "823_x::device_location");
        assert_eq!(w("823_x::dev_pool"), "823_x::dev_pool");
        assert_eq!(w("suite::no_leaks"), "suite::no_leaks");
    }
}
