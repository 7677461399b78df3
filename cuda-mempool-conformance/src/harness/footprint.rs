//! The suite's own footprint on a device (issue 47): which of the processes NVML lists on the GPU
//! are this run's (its coordinator and what descends from it), what they hold, and a sampler that
//! follows it over a run for the report.

use conformance_model::Footprint;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// One process NVML lists on a GPU: its pid (as this process's namespace sees it, where it does)
/// and the device memory it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    pub pid: u32,
    pub bytes: u64,
}

/// What the suite's processes hold on a device at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Suite {
    /// The suite's processes NVML lists.
    pub processes: u64,
    /// What they hold together.
    pub bytes: u64,
    /// What this process holds of it.
    pub own: u64,
    /// Processes NVML lists whose pid this process cannot see (another pid namespace): whose they
    /// are is unknown.
    pub hidden: u64,
}

impl Suite {
    /// "3 of this suite's processes hold 1,536 MiB (this one 512 MiB)", or that none holds anything.
    pub fn text(&self) -> String {
        if self.processes == 0 && self.hidden > 0 {
            return format!(
                "NVML lists {} processes on the device whose pids this process cannot see (another pid namespace): \
                 what this suite holds there is unknown",
                self.hidden
            );
        }
        if self.processes == 0 {
            return "NVML lists none of this suite's processes on the device: this suite holds nothing".into();
        }
        format!(
            "{} of this suite's processes hold {} MiB (this one {} MiB)",
            self.processes,
            self.bytes >> 20,
            self.own >> 20
        )
    }
}

/// nvmlProcessInfo_t (nvml.h, the v2/v3 layout nvmlDeviceGetComputeRunningProcesses_v3 fills).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct ProcessInfo {
    pid: u32,
    used: u64,
    gpu_instance: u32,
    compute_instance: u32,
}

/// NVML_VALUE_NOT_AVAILABLE: a process's memory NVML cannot say (some containers, MIG).
const NOT_AVAILABLE: u64 = u64::MAX;

type Init = unsafe extern "C" fn() -> i32;
type ByBus = unsafe extern "C" fn(*const std::ffi::c_char, *mut *mut c_void) -> i32;
type Procs = unsafe extern "C" fn(*mut c_void, *mut u32, *mut ProcessInfo) -> i32;

/// One NVML session, bound to one GPU ([`Nvml::bind`]); shut down when dropped.
pub struct Nvml {
    dev: *mut c_void,
    by_bus: ByBus,
    procs: Procs,
    shutdown: Option<Init>,
}

// SAFETY: NVML is thread-safe (nvml.h); the device handle is an opaque pointer it owns.
unsafe impl Send for Nvml {}

impl Nvml {
    /// A session of `library` (nvmlInit_v2), or why none.
    pub fn init(library: &str) -> Result<Nvml, String> {
        let h = crate::os::dlopen_local(library)?;
        let (Some(init), Some(by_bus), Some(procs)) = (
            h.symbol("nvmlInit_v2"),
            h.symbol("nvmlDeviceGetHandleByPciBusId_v2"),
            h.symbol("nvmlDeviceGetComputeRunningProcesses_v3"),
        ) else {
            return Err(format!("{library} lacks the NVML calls for a GPU's processes"));
        };
        // SAFETY: NVML's documented signatures (nvml.h); handles are opaque pointers.
        unsafe {
            let init: Init = std::mem::transmute(init);
            let r = init();
            if r != 0 {
                return Err(format!("nvmlInit_v2 answered {r}"));
            }
            Ok(Nvml {
                dev: std::ptr::null_mut(),
                by_bus: std::mem::transmute::<*mut c_void, ByBus>(by_bus),
                procs: std::mem::transmute::<*mut c_void, Procs>(procs),
                shutdown: h.symbol("nvmlShutdown").map(|f| std::mem::transmute(f)),
            })
        }
    }

    /// Bind the session to the GPU at PCI bus id `bus` ("0000:3b:00.0").
    pub fn bind(&mut self, bus: &str) -> Result<(), String> {
        let bus_c = std::ffi::CString::new(bus).map_err(|e| e.to_string())?;
        let mut dev = std::ptr::null_mut();
        // SAFETY: a NUL-terminated bus id and an out-pointer for the handle.
        let r = unsafe { (self.by_bus)(bus_c.as_ptr(), &mut dev) };
        if r != 0 || dev.is_null() {
            return Err(format!("nvmlDeviceGetHandleByPciBusId_v2({bus}) answered {r}"));
        }
        self.dev = dev;
        Ok(())
    }

    /// The compute processes on the bound GPU and what each holds (those NVML cannot say left out).
    pub fn processes(&self) -> Result<Vec<Held>, String> {
        if self.dev.is_null() {
            return Err("no GPU bound".into());
        }
        let mut v = vec![ProcessInfo::default(); 256];
        let mut n = v.len() as u32;
        // SAFETY: `v` has room for `n` entries of the layout NVML writes.
        let r = unsafe { (self.procs)(self.dev, &mut n, v.as_mut_ptr()) };
        if r != 0 {
            return Err(format!("nvmlDeviceGetComputeRunningProcesses_v3 answered {r}"));
        }
        v.truncate(n as usize);
        Ok(v.iter()
            .filter(|p| p.used != NOT_AVAILABLE)
            .map(|p| Held {
                pid: p.pid,
                bytes: p.used,
            })
            .collect())
    }
}

impl Drop for Nvml {
    fn drop(&mut self) {
        if let Some(s) = self.shutdown {
            // SAFETY: one nvmlShutdown per nvmlInit_v2.
            unsafe { s() };
        }
    }
}

/// A process's parent, from /proc (None where it is not visible here).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid …": comm may hold spaces and parentheses; the last ')' ends it.
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// Whether `pid` is `root` or descends from it, through `parent_of` (at most 64 steps up).
pub fn descends(pid: u32, root: u32, parent_of: impl Fn(u32) -> Option<u32>) -> bool {
    let mut p = pid;
    for _ in 0..64 {
        if p == root {
            return true;
        }
        match parent_of(p) {
            Some(q) if q != p && q != 0 => p = q,
            _ => return false,
        }
    }
    false
}

/// The run's coordinator: the farthest ancestor of this process (itself included) that runs the
/// same executable, through `parent_of` and `exe_of`.
pub fn root_of(me: u32, parent_of: impl Fn(u32) -> Option<u32>, exe_of: impl Fn(u32) -> Option<String>) -> u32 {
    let exe = exe_of(me);
    let (mut root, mut p) = (me, me);
    for _ in 0..64 {
        match parent_of(p) {
            Some(q) if q != p && q != 0 => p = q,
            _ => break,
        }
        if exe.is_some() && exe_of(p) == exe {
            root = p;
        }
    }
    root
}

fn exe_of(pid: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .map(|p| p.display().to_string())
}

/// This run's coordinator's pid, as this process sees it.
pub fn coordinator() -> u32 {
    root_of(std::process::id(), parent_of, exe_of)
}

/// What the suite's processes (descendants of `root`) hold among `listed`, this process being `me`.
pub fn of_suite(listed: &[Held], root: u32, me: u32, parent_of: impl Fn(u32) -> Option<u32>) -> Suite {
    let mut s = Suite {
        hidden: listed
            .iter()
            .filter(|h| h.pid != root && parent_of(h.pid).is_none())
            .count() as u64,
        ..Suite::default()
    };
    for h in listed.iter().filter(|h| descends(h.pid, root, &parent_of)) {
        s.processes += 1;
        s.bytes += h.bytes;
        if h.pid == me {
            s.own = h.bytes;
        }
    }
    s
}

/// What the suite's processes hold on the GPU at `bus` now, asked of NVML (one session, about 0.1
/// s); or why NVML could not say.
pub fn suite_now(bus: &str, nvml: &str) -> Result<Suite, String> {
    let mut nvml = Nvml::init(nvml)?;
    nvml.bind(bus)?;
    let listed = nvml.processes()?;
    Ok(of_suite(&listed, coordinator(), std::process::id(), parent_of))
}

/// What the samples of a run add up to.
#[derive(Default)]
struct Tally {
    seen: std::collections::BTreeSet<u32>,
    peak_processes: u64,
    peak_bytes: u64,
    least: Option<u64>,
    samples: u64,
    /// The most processes listed at once whose pids this process cannot see.
    hidden: u64,
}

impl Tally {
    fn add(&mut self, listed: &[Held], root: u32, parent_of: impl Fn(u32) -> Option<u32>) {
        let ours: Vec<&Held> = listed.iter().filter(|h| descends(h.pid, root, &parent_of)).collect();
        self.samples += 1;
        let hidden = listed
            .iter()
            .filter(|h| h.pid != root && parent_of(h.pid).is_none())
            .count() as u64;
        self.hidden = self.hidden.max(hidden);
        self.seen.extend(ours.iter().map(|h| h.pid));
        self.peak_processes = self.peak_processes.max(ours.len() as u64);
        self.peak_bytes = self.peak_bytes.max(ours.iter().map(|h| h.bytes).sum());
        if let Some(m) = ours.iter().map(|h| h.bytes).filter(|&b| b > 0).min() {
            self.least = Some(self.least.map_or(m, |l| l.min(m)));
        }
    }

    fn footprint(&self, every: Duration) -> Footprint {
        Footprint {
            source: format!(
                "NVML's per-process memory, {} samples {} ms apart{}",
                self.samples,
                every.as_millis(),
                match self.hidden {
                    0 => String::new(),
                    n => format!("; up to {n} processes listed whose pids this namespace cannot see, not counted"),
                }
            ),
            processes: self.seen.len() as u64,
            peak_processes: self.peak_processes,
            peak_bytes: self.peak_bytes,
            context_bytes: self.least.unwrap_or(0),
            ..Footprint::default()
        }
    }
}

/// How often the sampler asks NVML.
const EVERY: Duration = Duration::from_millis(250);

/// The run's sampler: a thread that opens NVML at once, is told the GPU ([`watch`]), then samples
/// the suite's processes on it until [`end`].
struct Sampler {
    stop: Arc<AtomicBool>,
    bus: std::sync::mpsc::Sender<Option<String>>,
    ready: std::sync::mpsc::Receiver<bool>,
    thread: std::thread::JoinHandle<Option<Footprint>>,
}

static RUNNING: Mutex<Option<Sampler>> = Mutex::new(None);
static ENDED: OnceLock<Option<Footprint>> = OnceLock::new();

/// How long [`watch`] waits for the sampler's first sample.
const READY_WITHIN: Duration = Duration::from_secs(2);

/// Coordinator: open NVML on a thread of its own now (its start, about 0.1 s, overlaps the probe);
/// nothing is sampled before [`watch`].
pub fn begin(nvml: &str) {
    let library = nvml.to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let halt = stop.clone();
    let (bus, bus_rx) = std::sync::mpsc::channel::<Option<String>>();
    let (ready_tx, ready) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new().name("footprint".into()).spawn(move || {
        let nvml = Nvml::init(&library);
        let bound = match (nvml, bus_rx.recv().ok().flatten()) {
            (Ok(mut n), Some(b)) => n.bind(&b).map(|_| n),
            (Err(e), _) => Err(e),
            (_, None) => Err("no GPU to watch".into()),
        };
        let (root, mut tally) = (std::process::id(), Tally::default());
        let nvml = match bound.and_then(|n| n.processes().map(|l| (n, l))) {
            Ok((n, listed)) => {
                tally.add(&listed, root, parent_of);
                let _ = ready_tx.send(true);
                n
            }
            Err(_) => {
                let _ = ready_tx.send(false);
                return None;
            }
        };
        loop {
            // Sleep in short steps: `end` should not wait out a whole interval.
            for _ in 0..EVERY.as_millis() / 25 {
                if halt.load(Ordering::SeqCst) {
                    return Some(tally.footprint(EVERY));
                }
                std::thread::sleep(Duration::from_millis(25));
            }
            if let Ok(listed) = nvml.processes() {
                tally.add(&listed, root, parent_of);
            }
        }
    });
    if let Ok(thread) = spawned {
        *RUNNING.lock().unwrap_or_else(|p| p.into_inner()) = Some(Sampler {
            stop,
            bus,
            ready,
            thread,
        });
    }
}

/// Coordinator: sample the GPU at `bus` (None: none to watch, the sampler ends), once NVML has
/// listed its processes the first time, 2 s at most: the leak check's baseline, taken after, then
/// holds whatever NVML opened.
pub fn watch(bus: Option<&str>) {
    let mut running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
    let Some(s) = running.as_ref() else {
        return;
    };
    let _ = s.bus.send(bus.map(String::from));
    if s.ready.recv_timeout(READY_WITHIN) != Ok(true) {
        if let Some(s) = running.take() {
            s.stop.store(true, Ordering::SeqCst);
        }
    }
}

/// Stop sampling (before the coordinator's leak check: NVML's session is shut down) and the run's
/// footprint; None where NVML could not list the GPU's processes. Every call answers the same.
pub fn end() -> Option<Footprint> {
    ENDED
        .get_or_init(|| {
            let s = RUNNING.lock().unwrap_or_else(|p| p.into_inner()).take()?;
            s.stop.store(true, Ordering::SeqCst);
            drop(s.bus);
            s.thread.join().ok().flatten()
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 ← 10 (coordinator) ← 11, 12 ← 13; 20 a stranger under 1.
    fn parent(p: u32) -> Option<u32> {
        match p {
            10 | 20 => Some(1),
            11 | 12 => Some(10),
            13 => Some(12),
            _ => None,
        }
    }

    #[test]
    fn the_suite_is_the_coordinator_and_its_descendants() {
        assert!(descends(13, 10, parent));
        assert!(descends(10, 10, parent));
        assert!(!descends(20, 10, parent));
        assert!(!descends(99, 10, parent));
        let listed = [
            Held {
                pid: 11,
                bytes: 500 << 20,
            },
            Held {
                pid: 13,
                bytes: 600 << 20,
            },
            Held {
                pid: 20,
                bytes: 9 << 30,
            },
        ];
        let s = of_suite(&listed, 10, 13, parent);
        assert_eq!(
            s,
            Suite {
                processes: 2,
                bytes: 1100 << 20,
                own: 600 << 20,
                hidden: 0
            }
        );
        assert_eq!(s.text(), "2 of this suite's processes hold 1100 MiB (this one 600 MiB)");
        assert!(of_suite(&listed[2..], 10, 13, parent)
            .text()
            .ends_with("this suite holds nothing"));
        let stranger = [Held { pid: 77, bytes: 1 }];
        assert!(of_suite(&stranger, 10, 13, parent)
            .text()
            .ends_with("what this suite holds there is unknown"));
    }

    /// The coordinator is the farthest ancestor running the same executable.
    #[test]
    fn the_coordinator_is_the_farthest_ancestor_of_the_same_program() {
        let exe = |p: u32| Some(if p == 1 { "init" } else { "conformance" }.to_string());
        assert_eq!(root_of(13, parent, exe), 10);
        assert_eq!(root_of(10, parent, exe), 10);
    }

    /// Peaks are of one sample; the context is the least a process held.
    #[test]
    fn a_tally_keeps_the_peak_and_the_least() {
        let mut t = Tally::default();
        t.add(
            &[Held { pid: 11, bytes: 500 }, Held { pid: 20, bytes: 7000 }],
            10,
            parent,
        );
        t.add(
            &[Held { pid: 11, bytes: 900 }, Held { pid: 13, bytes: 480 }],
            10,
            parent,
        );
        let f = t.footprint(EVERY);
        assert_eq!(
            (f.processes, f.peak_processes, f.peak_bytes, f.context_bytes),
            (2, 2, 1380, 480)
        );
        assert_eq!(f.source, "NVML's per-process memory, 2 samples 250 ms apart");
    }
}
