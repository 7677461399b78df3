//! Turns at the device, by what each trial needs of its memory (`harness::placement::Need`): trials
//! run side by side while the memory they may hold fits the device's budget; a trial that asks
//! for more than the device has runs beside none that holds memory; a trial that needs the device
//! alone gets it. This run's only, or machine-wide through a lock file (CONFORMANCE_DEVICE_LOCK).

use crate::harness::placement::Need;
use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex};

/// The memory turns share: the device's total (as the probe reported it) and the part of it that
/// trials may hold at once, the rest left to the contexts of the run's processes (504 MiB each on
/// the H100, R580), the driver's own reserve and other users of the device.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    pub total: u64,
    pub capacity: u64,
}
impl Budget {
    /// The part of `total` trials may hold at once (`placement::budget_capacity`).
    pub fn of_device(total: u64) -> Budget {
        Budget {
            total,
            capacity: crate::harness::placement::budget_capacity(total),
        }
    }
    /// The bytes a trial of `need` counts for (0 for one that waits for the device instead).
    pub fn bytes(&self, need: Need) -> u64 {
        match need {
            Need::Small => self.total / SMALL_PARTS,
            Need::Share(n, d) => self.total / u64::from(d.max(1)) * u64::from(n),
            Need::Bytes(b) => b,
            Need::Nothing | Need::Beyond | Need::Device => 0,
        }
    }
}
/// A small trial counts for this fraction (1/64) of the device.
const SMALL_PARTS: u64 = 64;

/// Turns at the device. Whoever waits for a heavier turn goes before lighter turns asked for after
/// it (a waiting `Device` turn before any new turn, a waiting `Beyond` turn before new memory
/// turns), and memory turns are served in the order asked: each waits only for trials already
/// running (each bounded by its deadline), never for a stream of new ones.
pub(crate) struct Turns {
    budget: Budget,
    serial: bool,
    /// CONFORMANCE_DEVICE_LOCK, from the run's settings ([`Turns::with_device_lock`]).
    device_lock: Option<std::path::PathBuf>,
    state: Mutex<TurnState>,
    changed: Condvar,
}
#[derive(Default)]
struct TurnState {
    /// Bytes held by the memory turns running, and how many they are.
    used: u64,
    holders: usize,
    /// `Beyond` turns running.
    beyond: usize,
    device: bool,
    waiting_device: usize,
    waiting_beyond: usize,
    /// Memory turns asked for and not yet given, by ticket (served lowest first).
    waiting: BTreeSet<u64>,
    next_ticket: u64,
    /// Heavy trials the run queued first and has not finished: no memory turn starts before them
    /// (a lane's long first trial would otherwise hold them, and so every later trial, back: under
    /// compute-sanitizer that stalled every general worker for 70 s).
    heavy_first: usize,
    /// Lanes still starting their processes ahead of the heavy trials: no heavy turn starts before
    /// them (a context made meanwhile would slow a request beyond the device, and change what a
    /// trial that has the device alone measures).
    starting: usize,
}
impl TurnState {
    /// The device is not free to be had alone: a turn of any kind is held, or a lane is starting.
    /// (H100, R580, 2026-11-26: a context made while a graph trial held 0.6 of the device and was
    /// refused a second 0.6 came up broken: its first cuStreamCreate answered INVALID_CONTEXT.)
    fn device_taken(&self) -> bool {
        self.device || self.beyond > 0 || self.holders > 0 || self.starting > 0
    }
    /// A request beyond the device must wait: the device is held alone or waited for, memory is
    /// held, or a lane is starting.
    fn beyond_kept_off(&self) -> bool {
        self.device || self.waiting_device > 0 || self.holders > 0 || self.starting > 0
    }
}

/// A turn held; given back when dropped (the machine-wide lock with it).
pub(crate) struct Turn<'a> {
    turns: &'a Turns,
    kind: Held,
    _machine: Option<std::fs::File>,
}
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Held {
    Free,
    Memory(u64),
    Beyond,
    Device,
}

impl Default for Turns {
    /// An unbounded budget (unit tests; the scheduler passes the device's).
    fn default() -> Turns {
        Turns::new(Turns::unbounded(), false)
    }
}

/// `path` (created if need be; read-only where another user made it), or None when it cannot be
/// opened: the turns are then this run's only.
fn open_lock(path: &std::path::Path) -> Option<std::fs::File> {
    let rw = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path);
    rw.or_else(|_| std::fs::File::open(path)).ok()
}

fn flock(f: &std::fs::File, op: libc::c_int) {
    use std::os::fd::AsRawFd;
    while unsafe { libc::flock(f.as_raw_fd(), op) } != 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

/// This turn, machine-wide: a shared or exclusive flock on the lock file, taken through the
/// `.intent` file beside it so that a waiting exclusive turn goes before shared turns asked for after
/// it in any process (flock alone would let a stream of shared turns starve it). Each turn opens its
/// own descriptions: flock locks belong to an open file description, not to a thread.
fn machine_turn(lock: Option<&std::path::Path>, exclusive: bool) -> Option<std::fs::File> {
    machine_turn_at(lock?.to_path_buf(), exclusive)
}

fn machine_turn_at(path: std::path::PathBuf, exclusive: bool) -> Option<std::fs::File> {
    let main = open_lock(&path)?;
    let mut intent_path = path.into_os_string();
    intent_path.push(".intent");
    let intent = open_lock(std::path::Path::new(&intent_path));
    let op = if exclusive { libc::LOCK_EX } else { libc::LOCK_SH };
    if let Some(i) = &intent {
        flock(i, op);
    }
    flock(&main, op);
    drop(intent);
    Some(main)
}
impl Turns {
    /// A budget no trials fill (no device was probed).
    pub(crate) fn unbounded() -> Budget {
        Budget::of_device(u64::MAX / 2)
    }
    pub(crate) fn new(budget: Budget, serial: bool) -> Turns {
        Turns {
            budget,
            serial,
            device_lock: None,
            state: Mutex::new(TurnState::default()),
            changed: Condvar::new(),
        }
    }

    /// CONFORMANCE_DEVICE_LOCK=path (of the run's settings): a lock file that makes turns
    /// machine-wide: suites that name the same file (the mutation runner's side-by-side runs, two CI
    /// jobs on one GPU) give an exclusive trial the device alone across all of them. None: turns are
    /// this run's only (measured on the H100: three suites side by side with it were slower than one
    /// at a time, docs/conformance/mutants-selection/).
    pub(crate) fn with_device_lock(mut self, path: Option<std::path::PathBuf>) -> Turns {
        self.device_lock = path;
        self
    }

    /// Wait for a turn fit for `need`: none for `Nothing` (but in a serial run), the device alone
    /// for `Device`, beside no memory holder for `Beyond`, else room in the budget.
    pub(crate) fn take(&self, need: Need) -> Turn<'_> {
        let need = self.as_run(need);
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let kind = match need {
            Need::Nothing => Held::Free,
            Need::Device => {
                st.waiting_device += 1;
                while st.device_taken() {
                    st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
                }
                st.waiting_device -= 1;
                st.device = true;
                Held::Device
            }
            Need::Beyond => {
                st.waiting_beyond += 1;
                while st.beyond_kept_off() {
                    st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
                }
                st.waiting_beyond -= 1;
                st.beyond += 1;
                Held::Beyond
            }
            Need::Small | Need::Share(..) | Need::Bytes(_) => {
                let bytes = self.budget.bytes(need);
                let ticket = st.next_ticket;
                st.next_ticket += 1;
                st.waiting.insert(ticket);
                while !self.fits(&st, ticket, bytes) {
                    st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
                }
                st.waiting.remove(&ticket);
                st.used += bytes;
                st.holders += 1;
                Held::Memory(bytes)
            }
        };
        drop(st);
        // The next ticket may fit now too.
        self.changed.notify_all();
        let machine = match kind {
            Held::Free => None,
            Held::Memory(_) => machine_turn(self.device_lock.as_deref(), false),
            Held::Beyond | Held::Device => machine_turn(self.device_lock.as_deref(), true),
        };
        Turn {
            turns: self,
            kind,
            _machine: machine,
        }
    }

    /// `n` heavy trials go before every memory turn (the run's first phase); each ends with
    /// [`Turns::heavy_done`].
    pub(crate) fn heavy_first(&self, n: usize) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).heavy_first = n;
    }
    /// One of the heavy trials queued first is done (run, or not run).
    pub(crate) fn heavy_done(&self) {
        self.count_down(|st| &mut st.heavy_first);
    }

    /// `n` lanes start their processes before any heavy turn; each ends with [`Turns::lane_started`].
    pub(crate) fn lanes_starting(&self, n: usize) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).starting = n;
    }
    /// One of the lanes counted by [`Turns::lanes_starting`] has its processes up (or gave up).
    pub(crate) fn lane_started(&self) {
        self.count_down(|st| &mut st.starting);
    }
    /// One less of the gate's count `which`; the turns waiting on it look again.
    fn count_down(&self, which: fn(&mut TurnState) -> &mut usize) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let n = which(&mut st);
        *n = n.saturating_sub(1);
        drop(st);
        self.changed.notify_all();
    }

    /// Wait until the heavy trials queued first are done, or `stopped` (checked whenever a turn
    /// changes): the lanes start their processes after them.
    pub(crate) fn wait_heavy_first(&self, stopped: &dyn Fn() -> bool) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        while st.heavy_first > 0 && !stopped() {
            st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// The need a turn is taken for: in a serial run, every turn is the device alone.
    fn as_run(&self, need: Need) -> Need {
        if self.serial {
            Need::Device
        } else {
            need
        }
    }

    /// Whether the memory turn `ticket` of `bytes` may start: no earlier memory turn waiting, and
    /// [`Turns::room`] for it.
    fn fits(&self, st: &TurnState, ticket: u64, bytes: u64) -> bool {
        st.waiting.first() == Some(&ticket) && self.room(st, bytes)
    }

    /// Whether a memory turn of `bytes` has room now: no heavier turn held or waiting, the heavy
    /// trials queued first done, and room in the budget (or nothing else holding memory: a need
    /// beyond the budget runs alone rather than never).
    fn room(&self, st: &TurnState, bytes: u64) -> bool {
        !st.device
            && st.heavy_first == 0
            && st.waiting_device == 0
            && st.beyond == 0
            && st.waiting_beyond == 0
            && (st.holders == 0 || st.used + bytes <= self.budget.capacity)
    }

    /// Whether a turn for `need` asked for now would have to wait for others (a serial run's always
    /// may, but for the first).
    pub(crate) fn would_wait(&self, need: Need) -> bool {
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match self.as_run(need) {
            Need::Nothing => false,
            // Another turn waiting for the device goes first.
            Need::Device => st.device_taken() || st.waiting_device > 0,
            Need::Beyond => st.beyond_kept_off(),
            // Behind the memory turns already waiting, or no room.
            need => !st.waiting.is_empty() || !self.room(&st, self.budget.bytes(need)),
        }
    }

    /// Whether a heavy turn (`Device`, `Beyond`) is held or waited for: no trial that holds memory
    /// can start meanwhile.
    pub(crate) fn exclusive_now(&self) -> bool {
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.device || st.beyond > 0 || st.waiting_device > 0 || st.waiting_beyond > 0
    }
}
impl Turn<'_> {
    /// The kind of turn held, as the report names it.
    pub(crate) fn kind(&self) -> crate::harness::outcome::Turn {
        use crate::harness::outcome::Turn as T;
        match self.kind {
            Held::Free => T::Free,
            Held::Memory(_) => T::Shared,
            Held::Beyond => T::Beyond,
            Held::Device => T::Exclusive,
        }
    }
}
impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut st = self.turns.state.lock().unwrap_or_else(|p| p.into_inner());
        match self.kind {
            Held::Free => return,
            Held::Memory(b) => {
                st.used -= b;
                st.holders -= 1;
            }
            Held::Beyond => st.beyond -= 1,
            Held::Device => st.device = false,
        }
        drop(st);
        self.turns.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    /// Once an exclusive turn waits, a shared turn asked for after it waits too: the exclusive one
    /// gets the device when the trial already running ends, then the shared one.
    #[test]
    fn a_waiting_exclusive_turn_goes_before_later_shared_ones() {
        let turns = Arc::new(Turns::default());
        let running = turns.take(Need::Small);
        let (ex_in, sh_in) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let ex = {
            let (turns, ex_in, sh_in) = (turns.clone(), ex_in.clone(), sh_in.clone());
            std::thread::spawn(move || {
                let t = turns.take(Need::Device);
                ex_in.store(true, Ordering::SeqCst);
                assert!(
                    !sh_in.load(Ordering::SeqCst),
                    "a later shared turn ran beside the exclusive one"
                );
                let _ = rx.recv();
                drop(t);
            })
        };
        while !turns.exclusive_now() {
            std::thread::sleep(Duration::from_millis(1));
        }
        let sh = {
            let (turns, sh_in) = (turns.clone(), sh_in.clone());
            std::thread::spawn(move || {
                let _t = turns.take(Need::Small);
                sh_in.store(true, Ordering::SeqCst);
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            !sh_in.load(Ordering::SeqCst),
            "a shared turn went before the waiting exclusive one"
        );
        assert!(
            !ex_in.load(Ordering::SeqCst),
            "the exclusive turn began beside a running trial"
        );
        drop(running);
        while !ex_in.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            !sh_in.load(Ordering::SeqCst),
            "a shared turn began beside the exclusive one"
        );
        tx.send(()).unwrap();
        ex.join().unwrap();
        sh.join().unwrap();
        assert!(sh_in.load(Ordering::SeqCst));
        assert!(!turns.exclusive_now());
    }

    /// Runs `needs` side by side (each holds its turn a few milliseconds) and answers which pairs
    /// overlapped.
    fn overlaps(turns: Turns, needs: &[Need]) -> Vec<(usize, usize)> {
        let turns = Arc::new(turns);
        let start = std::time::Instant::now();
        let threads: Vec<_> = needs
            .iter()
            .map(|&n| {
                let turns = turns.clone();
                std::thread::spawn(move || {
                    let t = turns.take(n);
                    let a = start.elapsed();
                    std::thread::sleep(Duration::from_millis(40));
                    let b = start.elapsed();
                    drop(t);
                    (a, b)
                })
            })
            .collect();
        let spans: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let mut v = Vec::new();
        for i in 0..spans.len() {
            for j in i + 1..spans.len() {
                if spans[i].0 < spans[j].1 && spans[j].0 < spans[i].1 {
                    v.push((i, j));
                }
            }
        }
        v
    }

    /// Memory turns share the budget: two of 5/8 never run at once under a budget of 3/4, a small
    /// one runs beside either; a trial that needs nothing runs beside a `Device` turn, a memory
    /// turn never does; `Beyond` turns run beside each other and beside no memory turn.
    #[test]
    fn turns_share_the_budget_by_need() {
        let budget = || Budget::of_device(64 << 30);
        let v = overlaps(
            Turns::new(budget(), false),
            &[Need::Share(5, 8), Need::Share(5, 8), Need::Small],
        );
        assert!(!v.contains(&(0, 1)), "two 5/8 shares ran at once: {v:?}");
        assert!(
            v.contains(&(0, 2)) || v.contains(&(1, 2)),
            "the small one ran beside neither: {v:?}"
        );
        let v = overlaps(Turns::new(budget(), false), &[Need::Device, Need::Nothing, Need::Small]);
        assert!(!v.contains(&(0, 2)), "a memory turn ran beside the device's: {v:?}");
        let v = overlaps(Turns::new(budget(), false), &[Need::Beyond, Need::Beyond, Need::Small]);
        assert!(v.contains(&(0, 1)), "two beyond-the-device turns did not share: {v:?}");
        assert!(
            !v.contains(&(0, 2)) && !v.contains(&(1, 2)),
            "a memory turn ran beside a beyond one: {v:?}"
        );
        let nothing_beside_device = overlaps(Turns::new(budget(), false), &[Need::Device, Need::Nothing]);
        assert_eq!(
            nothing_beside_device,
            [(0, 1)],
            "a trial that needs nothing waited for the device"
        );
        let serial = overlaps(
            Turns::new(budget(), true),
            &[Need::Nothing, Need::Small, Need::Beyond, Need::Beyond],
        );
        assert!(serial.is_empty(), "a serial schedule ran trials at once: {serial:?}");
    }

    /// While heavy trials queued first are not done, no memory turn starts (a lane's included), but
    /// the heavy ones and the trials that need nothing do; the last `heavy_done` lets them in.
    #[test]
    fn memory_turns_wait_for_the_heavy_trials_queued_first() {
        let turns = Arc::new(Turns::new(Budget::of_device(64 << 30), false));
        turns.heavy_first(2);
        let (tx, rx) = std::sync::mpsc::channel();
        let t = {
            let turns = turns.clone();
            std::thread::spawn(move || {
                let _t = turns.take(Need::Small);
                tx.send(()).unwrap();
            })
        };
        assert!(turns.would_wait(Need::Small));
        assert!(!turns.would_wait(Need::Nothing));
        drop(turns.take(Need::Beyond));
        turns.heavy_done();
        assert!(
            rx.recv_timeout(Duration::from_millis(100)).is_err(),
            "a memory turn started with a heavy trial queued first still to come"
        );
        drop(turns.take(Need::Device));
        turns.heavy_done();
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(()));
        t.join().unwrap();
    }

    /// While lanes start their processes no heavy turn starts (the trials that need nothing do);
    /// the last `lane_started` lets the heavy ones in.
    #[test]
    fn heavy_turns_wait_for_the_lanes_starting() {
        let turns = Arc::new(Turns::new(Budget::of_device(64 << 30), false));
        turns.lanes_starting(2);
        let (tx, rx) = std::sync::mpsc::channel();
        let ts: Vec<_> = [Need::Beyond, Need::Device]
            .into_iter()
            .map(|need| {
                let (turns, tx) = (turns.clone(), tx.clone());
                std::thread::spawn(move || {
                    let _t = turns.take(need);
                    tx.send(need).unwrap();
                })
            })
            .collect();
        assert!(turns.would_wait(Need::Device) && turns.would_wait(Need::Beyond));
        drop(turns.take(Need::Nothing));
        turns.lane_started();
        assert!(
            rx.recv_timeout(Duration::from_millis(100)).is_err(),
            "a heavy turn started with a lane still starting"
        );
        turns.lane_started();
        for _ in 0..2 {
            rx.recv_timeout(Duration::from_secs(5))
                .expect("a heavy turn once the lanes are up");
        }
        ts.into_iter().for_each(|t| t.join().unwrap());
    }

    /// Two descriptions of one lock file conflict even in one process (as two suites' do): a shared
    /// turn waits while an exclusive one is held, and gets in once it is given back.
    #[test]
    fn machine_turns_exclude_across_descriptions() {
        let path = std::env::temp_dir().join(format!("cump-lock-test-{}", std::process::id()));
        let held = machine_turn_at(path.clone(), true).expect("lock file");
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.clone();
        let t = std::thread::spawn(move || {
            let got = machine_turn_at(p, false);
            tx.send(got.is_some()).unwrap();
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(200)).is_err(),
            "a shared turn got in beside an exclusive one"
        );
        drop(held);
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(true));
        t.join().unwrap();
        let _ = std::fs::remove_file(&path);
        let mut intent = path.into_os_string();
        intent.push(".intent");
        let _ = std::fs::remove_file(intent);
    }
}
