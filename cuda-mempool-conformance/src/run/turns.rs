//! Turns at the device: shared with other trials, or the device alone for an exclusive trial;
//! this run's only, or machine-wide through a lock file (CONFORMANCE_DEVICE_LOCK).

use std::sync::{Condvar, Mutex};

/// Turns at the device: any number of shared turns at once, or one exclusive turn and nothing
/// else. A waiting exclusive turn goes before any shared turn asked for after it, so it waits only
/// for the trials already running (each bounded by its deadline), never for a stream of new ones.
#[derive(Default)]
pub(crate) struct Turns {
    state: Mutex<TurnState>,
    changed: Condvar,
}
#[derive(Default)]
struct TurnState {
    shared: usize,
    exclusive: bool,
    /// Exclusive turns asked for and not yet given.
    waiting: usize,
}
/// A turn held; given back when dropped (the machine-wide lock with it).
pub(crate) struct Turn<'a> {
    turns: &'a Turns,
    exclusive: bool,
    _machine: Option<std::fs::File>,
}

/// CONFORMANCE_DEVICE_LOCK=path: a lock file that makes turns machine-wide: suites that name the same
/// file (the mutation runner's side-by-side runs, two CI jobs on one GPU) give an exclusive trial the
/// device alone across all of them. Unset: turns are this run's only (measured on the H100: three
/// suites side by side with it were slower than one at a time, docs/conformance/mutants-selection/).
pub const DEVICE_LOCK_VAR: &str = "CONFORMANCE_DEVICE_LOCK";

fn device_lock_path() -> Option<std::path::PathBuf> {
    std::env::var_os(DEVICE_LOCK_VAR)
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
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
fn machine_turn(exclusive: bool) -> Option<std::fs::File> {
    machine_turn_at(device_lock_path()?, exclusive)
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
    /// Wait for a turn: the device alone when `exclusive`, else shared.
    pub(crate) fn take(&self, exclusive: bool) -> Turn<'_> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if exclusive {
            st.waiting += 1;
            while st.exclusive || st.shared > 0 {
                st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
            }
            st.waiting -= 1;
            st.exclusive = true;
        } else {
            while st.exclusive || st.waiting > 0 {
                st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
            }
            st.shared += 1;
        }
        drop(st);
        Turn {
            turns: self,
            exclusive,
            _machine: machine_turn(exclusive),
        }
    }
    /// Whether an exclusive turn is held or waited for: no other trial can start meanwhile.
    pub(crate) fn exclusive_now(&self) -> bool {
        let st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.exclusive || st.waiting > 0
    }
}
impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut st = self.turns.state.lock().unwrap_or_else(|p| p.into_inner());
        if self.exclusive {
            st.exclusive = false;
        } else {
            st.shared -= 1;
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
        let running = turns.take(false);
        let (ex_in, sh_in) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let ex = {
            let (turns, ex_in, sh_in) = (turns.clone(), ex_in.clone(), sh_in.clone());
            std::thread::spawn(move || {
                let t = turns.take(true);
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
                let _t = turns.take(false);
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
