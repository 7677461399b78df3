//! What the exporter and the importers of the IPC trials share: byte patterns, export data in
//! hex, the importer's device and switches, and the fault switch (the waits are the run's
//! `Deadline`'s).

use crate::cases::prelude::*;
use crate::harness::channel::{unhex, Channel, Got};
use crate::harness::kept_children::KeptWord;

pub(super) const E_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
pub(super) const POSIX: CUmemAllocationHandleType = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
pub const FAULT_VAR: &str = "CONFORMANCE_IPC_FAULT";
/// The lane of the trials served by kept importers (`harness::kept_children`: one `ipc-kept` process
/// serves the round trips, the scenarios and the concurrent imports), of the rules and of the
/// vaspace trials: one worker runs them all, so the run makes one worker's context and four
/// children's (two kept importers, the rules' and the vaspace child) started ahead for them, not
/// five workers' and seven children's (the driver creates contexts one at a time machine-wide:
/// issue 36).
pub const IPC_LANE: &str = "ipc";
pub(super) const ROUND_TRIP_LANE: &str = IPC_LANE;
pub(super) const SCENARIO_LANE: &str = IPC_LANE;
pub(super) const CONCURRENT_LANE: &str = IPC_LANE;
/// The large imports, one at a time, each with an importer of its own (`scenarios`).
pub(super) const LARGE_LANE: &str = crate::harness::placement::LARGE;

/// Position-dependent bytes, so a shifted or partial copy cannot pass.
/// Every 8-byte word holds a mix of its index and the seed, so each byte depends on its position
/// (a shifted or partial copy fails) while 256 MiB still takes milliseconds to make.
pub(crate) fn pattern(seed: u8, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    let mut chunks = v.chunks_exact_mut(8);
    for (i, c) in (&mut chunks).enumerate() {
        c.copy_from_slice(&word(seed, i));
    }
    let tail = chunks.into_remainder();
    let k = tail.len();
    tail.copy_from_slice(&word(seed, n / 8)[..k]);
    v
}

/// The `i`-th 8-byte word of [`pattern`]'s bytes for `seed`.
fn word(seed: u8, i: usize) -> [u8; 8] {
    ((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(seed).wrapping_mul(0x0101_0101_0101_0101))
        .to_le_bytes()
}

/// Whether `got` is [`pattern`]'s bytes for `seed`, compared a 64-bit word at a time with no
/// second buffer (256 MiB in 10 ms, against 180 ms for a byte-wise comparison with a made copy);
/// Err names the first byte that differs.
pub(crate) fn check_pattern(what: &str, got: &[u8], seed: u8) -> R {
    let mut words = got.chunks_exact(8);
    let at = (&mut words)
        .enumerate()
        .position(|(i, c)| u64::from_le_bytes(c.try_into().unwrap()) != u64::from_le_bytes(word(seed, i)))
        .or_else(|| {
            let (tail, i) = (words.remainder(), got.len() / 8);
            (*tail != word(seed, i)[..tail.len()]).then_some(i)
        });
    let Some(i) = at else {
        return Ok(());
    };
    let (c, want) = (&got[i * 8..(i * 8 + 8).min(got.len())], word(seed, i));
    let k = c.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
    Err(format!(
        "{what}: byte {} of {} is {:#04x}, expected {:#04x}",
        i * 8 + k,
        got.len(),
        c[k],
        want[k]
    )
    .into())
}

pub(super) fn export_ptr(p: CUdeviceptr) -> R<CUmemPoolPtrExportData> {
    let mut d = CUmemPoolPtrExportData::default();
    ok("cuMemPoolExportPointer", unsafe { cuMemPoolExportPointer(&mut d, p) })?;
    Ok(d)
}

/// Export data as the messages carry it, in hex (`messages`).
pub(super) fn data_from_hex(s: &str) -> R<CUmemPoolPtrExportData> {
    let b = unhex(s)?;
    let mut d = CUmemPoolPtrExportData::default();
    ensure!(b.len() == d.reserved.len(), "export data has {} bytes", b.len());
    d.reserved.copy_from_slice(&b);
    Ok(d)
}

pub(super) fn event_handle_bytes(h: &CUipcEventHandle) -> Vec<u8> {
    h.reserved.iter().map(|&c| c as u8).collect()
}

/// One-time, per-process resources appear before a leak check's first snapshot: the driver's
/// shared-memory file (/dev/shm/cuda.shm.*) at the first IPC event handle, and the socketpair Rust's
/// std keeps after its first process spawn (a fresh process per trial under nextest has neither).
pub(super) fn warm_up_ipc_events(deadline: Deadline) -> R {
    static DONE: std::sync::OnceLock<R> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        crate::harness::child::run_child(&Role::Noop, &[], deadline)?;
        let ev = Event::new(CUevent_flags::CU_EVENT_INTERPROCESS.0)?;
        let mut h = CUipcEventHandle::default();
        ok("cuIpcGetEventHandle", unsafe { cuIpcGetEventHandle(&mut h, ev.0) })
    })
    .clone()
}

/// CONFORMANCE_IMPORTER_DEVICE=N: the device an importer child works on (default 0).
pub const IMPORTER_DEVICE_VAR: &str = "CONFORMANCE_IMPORTER_DEVICE";
/// CONFORMANCE_IMPORTER_GRANT=1: the importer grants its device access to each imported pool.
pub(super) const IMPORTER_GRANT_VAR: &str = "CONFORMANCE_IMPORTER_GRANT";

/// The device this importer child works on.
pub fn importer_device() -> CUdevice {
    crate::os::setting(IMPORTER_DEVICE_VAR)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

pub(super) fn fault_at(step: &str) {
    let Some(f) = crate::os::setting(FAULT_VAR) else {
        return;
    };
    match f.split_once(':') {
        Some(("die", s)) if s == step => {
            eprintln!("importer: fault injected, aborting at step {step}");
            std::process::abort();
        }
        Some(("hang", s)) if s == step => {
            eprintln!("importer: fault injected, hanging at step {step}");
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
        _ => {}
    }
}

/// A lane's start-ahead step (`Case::warm`): `n` children in `role` on the case's device, the
/// environment its trials take them with (two for the round trips: one trial has two importers).
pub(super) fn warm(e: &Env, role: Role, n: usize) -> R {
    let dev = e.dev.to_string();
    crate::harness::kept_children::warm(
        &role,
        &[(IMPORTER_DEVICE_VAR, &dev)],
        n,
        e.deadline().importer_start(),
        &e.settings,
    )
}

pub(super) const KIB: usize = 1 << 10;
pub(super) const MIB: usize = 1 << 20;

/// Set once this importer handed cuMemPoolDestroy a pool it had already passed to it (the
/// concurrent imports' further destroys, one per import: [`handed_a_destroyed_pool`]).
static HANDED_DESTROYED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// This importer is about to hand cuMemPoolDestroy a pool it already passed to it: where the
/// driver counted no imports, a pointer to its freed heap (`Case::hands_freed_handles`). From then
/// on it is not clean ([`clean`]: no later trial takes it) and it ends without exit handlers
/// ([`serve`]: the driver's would run on whatever that did to the heap).
pub(super) fn handed_a_destroyed_pool() {
    HANDED_DESTROYED.store(true, std::sync::atomic::Ordering::SeqCst);
}

fn handed_destroyed() -> bool {
    HANDED_DESTROYED.load(std::sync::atomic::Ordering::SeqCst)
}

/// An importer role's body over the channel it inherited, once per trial for as long as the
/// parent keeps it (`harness::kept_children`): a failure goes to stderr and to the exporter (with its
/// blame) and ends the child; the exit code says whether it failed. Between trials the parent
/// either closes the channel (the child exits 0) or asks whether it is clean ([`clean`]). One that
/// handed the driver a destroyed pool ([`handed_a_destroyed_pool`]) ends without exit handlers.
pub(super) fn serve(who: &str, env: &Env, body: impl Fn(&Env, &Channel) -> R) -> i32 {
    let code = serve_trials(who, env, body);
    if handed_destroyed() {
        crate::harness::bounded::exit_now(code);
    }
    code
}

fn serve_trials(who: &str, env: &Env, body: impl Fn(&Env, &Channel) -> R) -> i32 {
    let chan = match Channel::from_inherited(env.deadline()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{who}: {e}");
            return 1;
        }
    };
    let mut fds_after_first: Option<usize> = None;
    let fail = |e: &Fail| {
        eprintln!("{who}: {e}");
        chan.send_error(e.message());
        1
    };
    // Started ahead of its trial (`harness::kept_children::warm`): its context is made (`env`), and its
    // first trial may come much later.
    if crate::harness::kept_children::started_ahead() {
        if let Err(e) = chan
            .send(&KeptWord::Ready, None)
            .and_then(|()| chan.set_timeout(crate::harness::kept_children::KEPT_IDLE))
        {
            return fail(&e);
        }
    }
    loop {
        if let Err(e) = body(env, &chan) {
            return fail(&e);
        }
        match chan.poll() {
            Got::Closed => return 0,
            Got::Msg(m, _) if KeptWord::of(&m) == Some(KeptWord::Check) => {
                if let Err(e) = clean(&mut fds_after_first).and_then(|()| chan.send(&KeptWord::Clean, None)) {
                    return fail(&e);
                }
                // Kept: the next trial may come much later; the parent bounds its own waits.
                if let Err(e) = chan.set_timeout(crate::harness::kept_children::KEPT_IDLE) {
                    return fail(&e);
                }
            }
            Got::Msg(m, _) => return fail(&format!("unexpected message between trials: {m}").into()),
            Got::Timeout => return fail(&"no word from the parent after the trial".into()),
            Got::Error(e) => return fail(&e.into()),
        }
    }
}

/// Whether this importer is as clean as before the trial: nothing on the ledger (every pool it
/// imported destroyed, every pointer freed), its context without an error, no more fds open
/// than after its first trial (which made its once-per-process files), and no destroyed pool ever
/// handed to the driver ([`handed_a_destroyed_pool`]). Err says what is left.
fn clean(fds_after_first: &mut Option<usize>) -> R {
    ensure!(
        !handed_destroyed(),
        "the importer handed cuMemPoolDestroy a pool it had already destroyed: it serves no later trial"
    );
    let left = crate::driver::ledger::outstanding();
    ensure!(left.is_empty(), "the importer still holds: {}", left.join("; "));
    ok("cuCtxSynchronize(the importer's context after the trial)", unsafe {
        cuCtxSynchronize()
    })?;
    let now = crate::os::open_fds();
    match *fds_after_first {
        Some(before) => ensure!(
            now <= before,
            "the importer has {now} fds open, {before} after its first trial"
        ),
        None => *fds_after_first = Some(now),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An importer that handed the driver a destroyed pool is not clean, whatever else holds (it
    /// says so before any driver call): no later trial takes it.
    #[test]
    fn an_importer_that_handed_a_destroyed_pool_is_not_clean() {
        handed_a_destroyed_pool();
        let e = clean(&mut Some(usize::MAX))
            .expect_err("clean after a destroyed pool")
            .to_string();
        assert!(e.contains("already destroyed"), "{e}");
    }

    /// The check passes the pattern of its seed only, and names the first byte that differs,
    /// in a whole word or in the tail past the last one.
    #[test]
    fn the_check_names_the_first_wrong_byte() {
        for n in [0, 1, 7, 8, 9, 4100, MIB + 7] {
            let mut v = pattern(0x3c, n);
            check_pattern("p", &v, 0x3c).unwrap();
            if n == 0 {
                continue;
            }
            assert!(check_pattern("p", &v, 0x3d).is_err(), "{n} bytes: another seed passed");
            for at in [0, n / 2, n - 1] {
                let keep = v[at];
                v[at] ^= 0x40;
                let e = check_pattern("p", &v, 0x3c)
                    .expect_err("a flipped byte passed")
                    .to_string();
                assert!(
                    e.contains(&format!("byte {at} of {n} ")),
                    "{n} bytes, flipped {at}: {e}"
                );
                v[at] = keep;
            }
        }
    }
}
