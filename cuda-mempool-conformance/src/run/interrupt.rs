//! A run cut short: SIGTERM, SIGINT or SIGHUP to the coordinator, or CONFORMANCE_RUN_BUDGET running
//! out. Once cut, no trial starts (`Stop::skipped` records it `interrupted`), every live worker's
//! process group is killed (a worker and the children it started: no orphan keeps the GPU; the
//! trials they were running are recorded `interrupted` too), and the suite writes its reports from
//! what finished. A second signal ends the process at once, with 128 + that signal.

use crate::run::clock::since_start;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The signals that interrupt a run.
pub const SIGNALS: [i32; 3] = [SIGTERM, SIGINT, SIGHUP];
/// The exit code of a run whose budget ran out (as timeout(1) exits).
pub const BUDGET_EXIT: u8 = 124;

/// What cut the run short.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Why {
    Signal(i32),
    Budget(Duration),
}

/// What cut the run short, and when (seconds since the run started).
#[derive(Clone, Copy, Debug)]
pub struct Cut {
    pub why: Why,
    pub after: f64,
}
impl Cut {
    /// "interrupted: SIGTERM after 42.1 s", "interrupted: the run budget of 120 s ran out".
    pub fn text(&self) -> String {
        match self.why {
            Why::Signal(s) => format!("interrupted: {} after {:.1} s", signal_name(s), self.after),
            Why::Budget(b) => format!("interrupted: the run budget of {} s ran out", b.as_secs_f64()),
        }
    }
    /// The run's exit code: 128 + the signal (as a shell reports a process the signal ended), or
    /// BUDGET_EXIT.
    pub fn exit_code(&self) -> u8 {
        match self.why {
            Why::Signal(s) => (128 + s).clamp(1, 255) as u8,
            Why::Budget(_) => BUDGET_EXIT,
        }
    }
}

fn signal_name(s: i32) -> String {
    signal_hook::low_level::signal_name(s).map_or_else(|| format!("signal {s}"), String::from)
}

static CUT: OnceLock<Cut> = OnceLock::new();
/// The live workers, each the leader of its own process group.
static WORKERS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// What cut the run short, once something has.
pub fn cut() -> Option<Cut> {
    CUT.get().copied()
}

/// Cut the run short (the first cut is the one kept) and kill every live worker's process group;
/// whether this was the first cut.
pub fn cut_short(why: Why) -> bool {
    if CUT
        .set(Cut {
            why,
            after: since_start(),
        })
        .is_err()
    {
        return false;
    }
    for &group in WORKERS.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
    true
}

/// A worker started, the leader of its own process group: killed with its children when the run
/// is cut. False (and it is killed at once) when the run is cut already.
pub fn track(pid: u32) -> bool {
    let mut live = WORKERS.lock().unwrap_or_else(|p| p.into_inner());
    if CUT.get().is_some() {
        let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
        return false;
    }
    live.insert(pid as i32);
    true
}

/// A worker reaped: its process id may be reused, so it is no longer killed.
pub fn untrack(pid: u32) {
    WORKERS.lock().unwrap_or_else(|p| p.into_inner()).remove(&(pid as i32));
}

/// Watch for the signals and, with `budget`, for the run's budget to run out. On the first cut
/// `on_cut` runs on the watching thread (the suite's last resort: its reports, should the trials
/// not end). A second signal ends the process at once (`signal_hook::flag`: the shutdown is
/// registered before the flag that arms it, so the first signal only arms it).
pub fn watch(budget: Option<Duration>, on_cut: impl Fn(Cut) + Send + Sync + 'static) -> Result<(), String> {
    let on_cut = Arc::new(on_cut);
    let armed = Arc::new(AtomicBool::new(false));
    for s in SIGNALS {
        signal_hook::flag::register_conditional_shutdown(s, 128 + s, armed.clone())
            .and_then(|_| signal_hook::flag::register(s, armed.clone()))
            .map_err(|e| format!("cannot watch for {}: {e}", signal_name(s)))?;
    }
    let mut signals =
        signal_hook::iterator::Signals::new(SIGNALS).map_err(|e| format!("cannot watch for signals: {e}"))?;
    let f = on_cut.clone();
    std::thread::spawn(move || {
        for s in signals.forever() {
            if cut_short(Why::Signal(s)) {
                f(cut().expect("cut"));
            }
        }
    });
    if let Some(b) = budget {
        std::thread::spawn(move || {
            std::thread::sleep(b.saturating_sub(Duration::from_secs_f64(since_start())));
            if cut_short(Why::Budget(b)) {
                on_cut(cut().expect("cut"));
            }
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_says_what_and_when_and_exits_not_zero() {
        let sig = Cut {
            why: Why::Signal(SIGTERM),
            after: 42.13,
        };
        assert_eq!(sig.text(), "interrupted: SIGTERM after 42.1 s");
        assert_eq!(sig.exit_code(), 143);
        let int = Cut {
            why: Why::Signal(SIGINT),
            after: 1.0,
        };
        assert_eq!(int.exit_code(), 130);
        let budget = Cut {
            why: Why::Budget(Duration::from_secs(120)),
            after: 120.0,
        };
        assert_eq!(budget.text(), "interrupted: the run budget of 120 s ran out");
        assert_eq!(budget.exit_code(), BUDGET_EXIT);
    }
}
