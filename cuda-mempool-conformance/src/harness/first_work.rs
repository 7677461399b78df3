//! What the library under test makes a new process wait at its first GPU work (issue 58): the
//! probe's measure of it, and whether the run plans with it. A layer that time-slices the GPU
//! between processes holds a new process at its first copy or launch until its slice comes (about
//! 28 s under one such layer); every process of the suite (a worker, an importer, a trial's own
//! process) then pays it once, and a run that does not know spends its deadlines on it.
//!
//! The measure, in the probe's child: device 0's primary context made current, then one round of
//! kernel-free stream work, twice: a 4 KiB allocation from the device's default pool
//! (cuMemAllocAsync), a memset of it (cuMemsetD8Async), its free (cuMemFreeAsync) and a synchronize
//! of the stream (the legacy default stream). The wait is what the first round took beyond the
//! second: a layer slow on every call (a tracer, a sanitizer; the shim's `slow`) is as slow on both
//! and waits nothing, and a slow but correct layer is never a failure.

use crate::driver::check::SUCCESS;
use crate::driver::cu::*;
use conformance_model::FirstWork;
use std::time::{Duration, Instant};

/// The whole measure of `f`, which the probe's start-up figure leaves out (`probe::probe_in_child`).
pub fn total_s(f: &FirstWork) -> f64 {
    f.context_s + f.first_s + f.again_s
}

/// The share of the trial deadline past which the wait is long, and the run plans with it: a
/// sixtieth (1 s at the default 60 s). It is the shortest wait of the suite that a new process's
/// first GPU work can fall in (`Deadline::hung_step`'s floor: an importer told to hang is given a
/// sixtieth of the deadline to reach its step), and the bar a slow start already has
/// (`run::order::slow_starts`). Below it every wait of the suite covers the wait as it is; a device
/// without such a layer answers both rounds alike. Scaled with the deadline: a user who raised it
/// for a slow layer has room for more.
pub const LONG_AFTER: u32 = 60;

/// The wait past which it is long for a run of trial deadline `trial`.
pub fn long_after(trial: Duration) -> Duration {
    trial / LONG_AFTER
}

/// The wait a run of trial deadline `trial` plans with: the measured one where it is long (over
/// [`long_after`]), else zero.
pub fn planned(first: Option<&FirstWork>, trial: Duration) -> Duration {
    match first.map(|f| Duration::from_secs_f64(f.wait_s())) {
        Some(w) if w > long_after(trial) => w,
        _ => Duration::ZERO,
    }
}

/// The bytes of each round's allocation.
const BYTES: usize = 4096;

/// One round of kernel-free stream work on the current context's device, on the legacy default
/// stream: allocate from the default pool, set, free, synchronize. Its answers are not the
/// measure's business (on a device that refuses, the round is short anyway).
fn round() -> f64 {
    let start = Instant::now();
    let stream: CUstream = std::ptr::null_mut();
    let mut p: CUdeviceptr = 0;
    // SAFETY: a fresh out-pointer, the legacy stream, and a pointer the allocation handed out.
    unsafe {
        if cuMemAllocAsync(&mut p, BYTES, stream) == SUCCESS {
            let _ = cuMemsetD8Async(p, 0, BYTES, stream);
            let _ = cuMemFreeAsync(p, stream);
        }
        let _ = cuStreamSynchronize(stream);
    }
    start.elapsed().as_secs_f64()
}

/// The measure in the probe's child (cuInit has succeeded, and the device has pools): the context
/// `retain` hands out (the probe's, of device 0) made current, then two rounds. None where the
/// context cannot be had.
pub fn measure(retain: impl FnOnce() -> Option<usize>) -> Option<FirstWork> {
    let start = Instant::now();
    let ctx = retain()?;
    // SAFETY: a context this process retained.
    if unsafe { cuCtxSetCurrent(ctx as CUcontext) } != SUCCESS {
        return None;
    }
    let context_s = start.elapsed().as_secs_f64();
    let first_s = round();
    let again_s = round();
    Some(FirstWork {
        context_s,
        first_s,
        again_s,
        ..FirstWork::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fw(first_s: f64, again_s: f64) -> FirstWork {
        FirstWork {
            context_s: 0.2,
            first_s,
            again_s,
            ..FirstWork::default()
        }
    }

    /// The wait is the first round beyond the second: a layer slow on every call waits nothing.
    #[test]
    fn the_wait_is_the_first_round_beyond_the_second() {
        assert!((fw(28.3, 0.3).wait_s() - 28.0).abs() < 1e-9);
        assert_eq!(fw(1.4, 1.4).wait_s(), 0.0);
        assert_eq!(fw(0.001, 0.002).wait_s(), 0.0);
        assert!((total_s(&fw(28.3, 0.3)) - 28.8).abs() < 1e-9);
    }

    /// Long past a sixtieth of the deadline: 28 s of 60 is, 0.5 s of 60 is not, 3 s of 300 is not.
    #[test]
    fn long_past_a_sixtieth_of_the_deadline() {
        let t = |s| Duration::from_secs(s);
        assert_eq!(planned(Some(&fw(28.3, 0.3)), t(60)), Duration::from_secs_f64(28.0));
        assert_eq!(planned(Some(&fw(0.5, 0.0)), t(60)), Duration::ZERO);
        assert_eq!(planned(Some(&fw(3.0, 0.0)), t(300)), Duration::ZERO);
        assert_eq!(planned(Some(&fw(3.0, 0.0)), t(10)), t(3));
        assert_eq!(planned(None, t(60)), Duration::ZERO);
    }
}
