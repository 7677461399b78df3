//! Where and how a case runs, declared on it (`Case::placement`): which process, which queue, what
//! it needs of the device's memory, whether it is long-running and whether it runs with no other
//! trial in its process. The invariants between them hold here, by construction; the order the
//! run's queues take from it is `run::order`'s.

/// Where and how a case runs. Built through `Case`'s builders (`lane`, `paced`, `slow`, `alone`,
/// `own_process`, `hands_freed_handles`, `may_hang`, `exclusive` …), read through the methods below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    process: Process,
    queue: Queue,
    need: Need,
    slow: bool,
    alone: bool,
}

/// Which process a case runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Process {
    /// Its worker's, beside the trials before and after it (in-process mode: the coordinator's).
    Shared,
    /// Its worker's, but it makes calls the driver may leave unanswered, on watched threads
    /// (`harness::bounded`): a stuck one holds its process's driver, so where trials share the
    /// coordinator's process (in-process mode) it runs in a process of its own; a worker retires
    /// after one is stuck.
    Watched,
    /// A fresh child process of its own (role `case:TRIAL`), whose end gives back whatever the
    /// driver keeps for the process after the trial and takes along whatever the trial did to the
    /// process. A crash case runs in its worker all the same, whose death is the verdict the
    /// coordinator reads, and the worker ends after it ([`Placement::in_worker`]).
    Own(Own),
}

/// Why a case runs in a process of its own ([`Process::Own`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Own {
    /// What the trial leaves in the process must go with it: R580 keeps the memory a graph launch
    /// that it refused OUT_OF_MEMORY had taken until the process ends (issue 34's graph caps
    /// trials); the checkpoint leg's trials checkpoint and restore their own process.
    Leaves,
    /// It hands the driver a handle the driver has freed: a destroyed pool or stream (a pointer to
    /// the driver's own heap, freed by cuMemPoolDestroy or cuStreamDestroy) or a device pointer
    /// already freed. What the driver then reads or writes of freed memory must reach no other
    /// trial (issue 58; every such trial is listed in `cases::all`'s tests).
    FreedHandles,
}

/// Which queue a case's trials wait in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// The general queue, served by any general worker.
    General,
    /// A lane: its trials run one after another in a worker of their own, [`SERIAL`] (they change
    /// the current pool or default-pool attributes), or a lane whose cases share one expensive
    /// answer (a child process's observations).
    Lane(&'static str),
    /// A lane that only paces it (one at a time, for the bare device's sake): where processes start
    /// slowly (`run::order::slow_starts`) it runs in the general queue, beside the others.
    Paced(&'static str),
}

/// Where a worker runs a case ([`Placement::in_worker`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InWorker {
    /// In the worker, which goes on with the next trial.
    Worker,
    /// In a fresh `case:TRIAL` child of the worker, which goes on with the next trial.
    Child,
    /// In the worker, which ends after it: no later trial shares its process.
    WorkerThenEnd,
}

impl Default for Placement {
    /// A worker's, the general queue, a little of the device, short, beside others.
    fn default() -> Placement {
        Placement {
            process: Process::Shared,
            queue: Queue::General,
            need: Need::Small,
            slow: false,
            alone: false,
        }
    }
}

impl Placement {
    /// In `lane` (a paced case stays paced, in `lane`).
    pub fn in_lane(self, lane: &'static str) -> Placement {
        let queue = match self.queue {
            Queue::Paced(_) => Queue::Paced(lane),
            _ => Queue::Lane(lane),
        };
        Placement { queue, ..self }
    }
    /// In `lane` only for its pace ([`Queue::Paced`]).
    pub fn paced_in(self, lane: &'static str) -> Placement {
        Placement {
            queue: Queue::Paced(lane),
            ..self
        }
    }
    /// Long-running: queued first, so that it overlaps the many short ones.
    pub fn long_running(self) -> Placement {
        Placement { slow: true, ..self }
    }
    /// With no other trial in its process (it compares process-wide counts such as open fds).
    /// Workers run one trial at a time anyway; this matters where trials share one process.
    pub fn alone_in_process(self) -> Placement {
        Placement { alone: true, ..self }
    }
    /// It needs `need` of the device's memory; alone in its process too, which is what an
    /// in-process run can honour (an out-of-memory answer there would be another trial's).
    pub fn needing(self, need: Need) -> Placement {
        Placement {
            need,
            ..self.alone_in_process()
        }
    }
    /// In a process of its own, for `why`. Handing freed handles stays the reason once given.
    pub fn in_own_process(self, why: Own) -> Placement {
        let why = match self.process {
            Process::Own(Own::FreedHandles) => Own::FreedHandles,
            _ => why,
        };
        Placement {
            process: Process::Own(why),
            ..self
        }
    }
    /// It may leave a watched call unanswered ([`Process::Watched`]); one of its own process
    /// already stays so.
    pub fn watched(self) -> Placement {
        let process = match self.process {
            Process::Shared => Process::Watched,
            p => p,
        };
        Placement { process, ..self }
    }

    /// Which process it runs in.
    pub fn process(&self) -> Process {
        self.process
    }
    /// Which queue it is declared in.
    pub fn queue(&self) -> Queue {
        self.queue
    }
    /// Its lane, paced or not.
    pub fn lane(&self) -> Option<&'static str> {
        match self.queue {
            Queue::General => None,
            Queue::Lane(l) | Queue::Paced(l) => Some(l),
        }
    }
    /// The lane its trials wait in: none where processes start slowly (`slow_starts`) and the
    /// lane only paces it.
    pub fn lane_in_run(&self, slow_starts: bool) -> Option<&'static str> {
        match self.queue {
            Queue::Paced(_) if slow_starts => None,
            _ => self.lane(),
        }
    }
    /// What it declares it needs of the device's memory.
    pub fn need(&self) -> Need {
        self.need
    }
    /// What it needs of the device's memory, as the scheduler takes it: a case that needs no
    /// device (`gpu` false) holds no device memory.
    pub fn memory_need(&self, gpu: bool) -> Need {
        match self.need {
            Need::Small if !gpu => Need::Nothing,
            n => n,
        }
    }
    /// Long-running ([`Placement::long_running`]).
    pub fn slow(&self) -> bool {
        self.slow
    }
    /// With no other trial in its process ([`Placement::alone_in_process`]).
    pub fn alone(&self) -> bool {
        self.alone
    }
    /// In a process of its own ([`Process::Own`]).
    pub fn own_process(&self) -> bool {
        matches!(self.process, Process::Own(_))
    }
    /// It hands the driver freed handles ([`Own::FreedHandles`]).
    pub fn hands_freed_handles(&self) -> bool {
        self.process == Process::Own(Own::FreedHandles)
    }
    /// Where a worker runs it: a case of its own process in a child, unless it `crashes` (a declared
    /// crash): that runs in the worker all the same (the worker's death is the crash the
    /// coordinator judges; a child's would come back as a broken answer), and the worker ends after
    /// it, so that no later trial shares its process either.
    pub fn in_worker(&self, crashes: bool) -> InWorker {
        match (self.own_process(), crashes) {
            (false, _) => InWorker::Worker,
            (true, false) => InWorker::Child,
            (true, true) => InWorker::WorkerThenEnd,
        }
    }
    /// Where trials share the coordinator's process (in-process mode), whether it runs in a child of
    /// its own (a crash case always does, `run::runner`): one of its own process, or watched.
    pub fn child_in_process(&self) -> bool {
        self.process != Process::Shared
    }
}

/// What a trial needs of the device's memory while it runs (`run::turns` schedules by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// None: it needs no device (its children, if any, see none), so it runs beside anything.
    Nothing,
    /// A little: the default for a trial on a device (`run::turns` counts a 64th of
    /// the device each).
    Small,
    /// At most this share (numerator, denominator) of the device's memory.
    Share(u32, u32),
    /// At most these bytes of device memory.
    Bytes(u64),
    /// It asks for more than the device has, and must be refused: meanwhile the driver may take
    /// every free byte (and is slow beside processes creating contexts), so it runs beside no trial
    /// that holds memory; beside others of its kind it may (each is refused whatever the others do).
    Beyond,
    /// The device alone: it reads device-wide free memory, or holds most of it and asks for more
    /// (a context made meanwhile would move the one, and may come up broken beside the other).
    Device,
}
/// The device memory the trials running at once may hold: three quarters of the device's total, or
/// all of it but 16 GiB where that is more, the rest left to the contexts of the run's processes
/// (504 MiB each on the H100, R580; a run keeps up to about twenty: 10 GiB), the driver's own
/// reserve and other users of the device. On a large device a quarter is far more than they take
/// (the H200's 35 GiB), and a trial of three quarters then ran beside nothing (issue 45).
pub fn budget_capacity(total: u64) -> u64 {
    (total / 4 * 3).max(total.saturating_sub(RESERVE_BESIDE_TRIALS))
}
/// The least device memory the turns leave to what is not a trial ([`budget_capacity`]).
const RESERVE_BESIDE_TRIALS: u64 = 16 << 30;

impl Need {
    /// It keeps every memory-holding trial off the device while it runs (`Beyond`, `Device`).
    pub fn heavy(self) -> bool {
        matches!(self, Need::Beyond | Need::Device)
    }
}

/// The lane of cases that change device state visible to the whole process.
pub const SERIAL: &str = "serial";
/// The lane of cases that hold GiB each (the large imports, the reserve trials of most of the
/// device): one at a time, so that one of them waiting for memory never holds the other queues'
/// turns back (issue 45), and beside the rest of the run rather than after it.
pub const LARGE: &str = "large";

#[cfg(test)]
mod tests {
    use super::*;

    /// Handing freed handles is a process of its own, whatever comes before or after it; a watched
    /// case of its own process stays so; a paced case moved to another lane stays paced.
    #[test]
    fn the_invariants_hold_whatever_the_builders_order() {
        let p = Placement::default();
        let freed = p.in_own_process(Own::FreedHandles);
        assert!(freed.own_process() && freed.hands_freed_handles());
        assert!(freed.in_own_process(Own::Leaves).hands_freed_handles());
        assert!(freed.watched().hands_freed_handles());
        assert_eq!(
            p.watched().in_own_process(Own::Leaves).process(),
            Process::Own(Own::Leaves)
        );
        assert_eq!(
            p.in_own_process(Own::Leaves).watched().process(),
            Process::Own(Own::Leaves)
        );
        assert_eq!(p.watched().process(), Process::Watched);
        assert_eq!(p.paced_in(LARGE).in_lane("x").queue(), Queue::Paced("x"));
        assert_eq!(p.in_lane("x").queue(), Queue::Lane("x"));
        let n = p.needing(Need::Device);
        assert!(n.alone() && n.need() == Need::Device);
    }

    /// A case of its own process runs in a child of its worker, a crash case of its own process in
    /// the worker, which ends after it; any other case runs in the worker, which goes on. In-process,
    /// a case of its own process or a watched one runs in a child.
    #[test]
    fn where_a_case_runs() {
        let p = Placement::default();
        assert_eq!(p.in_worker(false), InWorker::Worker);
        assert_eq!(p.in_worker(true), InWorker::Worker);
        assert_eq!(p.watched().in_worker(false), InWorker::Worker);
        assert_eq!(p.in_own_process(Own::Leaves).in_worker(false), InWorker::Child);
        assert_eq!(p.in_own_process(Own::FreedHandles).in_worker(false), InWorker::Child);
        assert_eq!(
            p.in_own_process(Own::FreedHandles).in_worker(true),
            InWorker::WorkerThenEnd
        );
        assert!(!p.child_in_process());
        assert!(p.watched().child_in_process() && p.in_own_process(Own::Leaves).child_in_process());
    }

    /// A paced case leaves its lane where processes start slowly; a lane's case never does.
    #[test]
    fn a_paced_case_leaves_its_lane_where_processes_start_slowly() {
        let p = Placement::default();
        assert_eq!(p.lane_in_run(false), None);
        assert_eq!(p.in_lane("x").lane_in_run(true), Some("x"));
        assert_eq!(p.paced_in(LARGE).lane_in_run(false), Some(LARGE));
        assert_eq!(p.paced_in(LARGE).lane_in_run(true), None);
        assert_eq!(p.memory_need(false), Need::Nothing);
        assert_eq!(p.memory_need(true), Need::Small);
        assert_eq!(p.needing(Need::Beyond).memory_need(false), Need::Beyond);
    }
}
