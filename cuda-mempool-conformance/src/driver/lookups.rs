//! The descriptors the library under test opened while this process looked an entry point up at
//! run time (`cu::beyond_table`, `cu::look_up`: cuGetProcAddress asked in a trial): a layer that
//! initialises the driver inside cuGetProcAddress opens its device files there. The leak check sets
//! them apart (`harness::leaks`): they are the look-up's, which `suite::lookup_does_not_initialise`
//! judges, not a leak of the trial that happened to look something up (issue 58).
//!
//! Each look-up costs a listing of /proc/self/fd before and after it. A descriptor another thread
//! of the same process opens during those microseconds is taken for the look-up's too; the suite's
//! trials look up before they start their threads.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// fd → its target, for each descriptor that appeared during a look-up (the latest one to use the
/// number).
static OPENED: Mutex<BTreeMap<i32, String>> = Mutex::new(BTreeMap::new());

/// Run the look-up `f`, noting the descriptors that appeared while it ran.
pub fn watch<T>(f: impl FnOnce() -> T) -> T {
    let before = crate::os::fd_table();
    let r = f();
    let after = crate::os::fd_table();
    let new: Vec<(i32, String)> = after.into_iter().filter(|(fd, t)| before.get(fd) != Some(t)).collect();
    if !new.is_empty() {
        OPENED.lock().unwrap_or_else(|p| p.into_inner()).extend(new);
    }
    r
}

/// Whether descriptor `fd`, open on `target`, appeared during a look-up of this process.
pub fn opened_by_lookup(fd: i32, target: &str) -> bool {
    OPENED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&fd)
        .is_some_and(|t| t == target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_look_up_opens_is_noted_and_nothing_else() {
        let kept = watch(|| std::fs::File::open("/dev/null").unwrap());
        let fd = std::os::fd::AsRawFd::as_raw_fd(&kept);
        let target = crate::os::fd_table()[&fd].clone();
        assert!(opened_by_lookup(fd, &target));
        assert!(!opened_by_lookup(fd, "/somewhere/else"));
        let other = std::fs::File::open("/dev/null").unwrap();
        let other_fd = std::os::fd::AsRawFd::as_raw_fd(&other);
        assert!(!opened_by_lookup(other_fd, &target), "opened outside a look-up");
    }
}
