//! A driver call the driver may never answer, made on a watched thread and given up after a bound
//! (a fraction of the trial deadline, `Deadline::driver_hang`): the trial goes on, and the process
//! knows from then on that a thread of its own is stuck inside the driver (on R580 such a thread
//! holds the process's driver: no other call of any thread answers, issue 45's calibration), so
//! it makes no further driver call: a worker retires after the trial, a child exits at once.

use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a watched call came to.
#[derive(Debug)]
pub enum Bounded<T> {
    /// It returned within the bound, with this.
    Answered(T),
    /// No answer within the bound (the thread is left inside the driver).
    Hung(Duration),
}

/// The call a thread of this process was left stuck in, if any.
static STUCK: Mutex<Option<String>> = Mutex::new(None);

/// Make `f` (a call named `what`) on a new thread and wait at most `bound` for it.
pub fn call<T: Send + 'static>(what: &str, bound: Duration, f: impl FnOnce() -> T + Send + 'static) -> Bounded<T> {
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    let handle = std::thread::Builder::new()
        .name("bounded-call".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .unwrap_or_else(|e| panic!("{what}: no thread could be started for the watched call: {e}"));
    match rx.recv_timeout(bound) {
        Ok(v) => Bounded::Answered(v),
        // The call panicked (its sender dropped without an answer): the panic is the trial's.
        Err(mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => panic!("{what}: the watched call ended without an answer"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            let mut s = STUCK.lock().unwrap_or_else(|p| p.into_inner());
            s.get_or_insert_with(|| what.to_string());
            Bounded::Hung(start.elapsed())
        }
    }
}

/// The call a thread of this process is stuck in (this process must make no further driver call).
pub fn stuck() -> Option<String> {
    STUCK.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Flush what was written and end this process now, without exit handlers: the driver's own would
/// wait for the lock the stuck thread holds.
pub fn exit_now(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: _exit ends the process; nothing after it runs.
    unsafe { libc::_exit(code) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer within the bound comes back; a call past it is given up near the bound and the
    /// process is marked stuck (a mutant that waits for the thread, or forgets it, fails here).
    #[test]
    fn answers_and_hangs() {
        assert!(matches!(
            call("quick", Duration::from_secs(5), || 7),
            Bounded::Answered(7)
        ));
        assert_eq!(stuck(), None);
        let start = Instant::now();
        let got = call("slow", Duration::from_millis(100), || {
            std::thread::sleep(Duration::from_secs(30))
        });
        assert!(matches!(got, Bounded::Hung(d) if d >= Duration::from_millis(100)));
        assert!(start.elapsed() < Duration::from_secs(5), "waited {:?}", start.elapsed());
        assert_eq!(stuck().as_deref(), Some("slow"));
        // A panic is the caller's, not a hang (a mutant that reads it as a hang fails here).
        let p = std::panic::catch_unwind(|| call("panics", Duration::from_secs(5), || panic!("boom")));
        assert!(p.is_err());
    }
}
