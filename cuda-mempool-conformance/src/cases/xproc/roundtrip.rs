//! IPC round trips (825, 826, 829, 830): the exporter here, importers in the `ipc-import` role;
//! pools and pointers exported, imported, verified both ways, and freed in order.

use super::common::*;
use super::messages::{FromImporter, PoolMeta, ToImporter};
use crate::cases::messages::{recv, recv_one};
use crate::cases::prelude::*;
use crate::harness::channel::{hex, unhex, Peer};
use crate::harness::kept_children;
use crate::os::{fd_diff, fd_table, open_fds};
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

/// One exported pool in the parent: its allocations, their seeds and export data.
pub(super) struct Exported {
    /// Held so the pool is destroyed (after its allocations are freed) when this is dropped.
    _pool: Pool,
    fd: Option<OwnedFd>,
    ptrs: Vec<(CUdeviceptr, usize, u8)>,
}

impl Drop for Exported {
    /// Free whatever is still allocated (a failed round trip returns early): a pool destroyed with
    /// live allocations keeps its resources, an open /dev/nvidiactl among them, until they are freed.
    fn drop(&mut self) {
        // Work still queued on the exporter's (non-blocking) stream must finish first.
        let _ = unsafe { cuCtxSynchronize() };
        for &(p, _, _) in &self.ptrs {
            let _ = unsafe { cuMemFreeAsync(p, CU_STREAM_LEGACY) };
        }
        let _ = unsafe { cuStreamSynchronize(CU_STREAM_LEGACY) };
    }
}

/// What a round trip should do.
pub struct Spec {
    /// Per pool, the sizes of its allocations.
    pub pools: Vec<Vec<usize>>,
    pub importers: usize,
    /// Passed to the importers as CONFORMANCE_IPC_FAULT.
    pub fault: Option<&'static str>,
    /// Bound on each wait for an importer after its first (None: the run's, [`Deadline::importer_step`]:
    /// half the deadline, so that an importer that hangs fails the trial with its breadcrumb rather
    /// than costing the whole worker, and never under 5 s, which an importer's start-up can take on a
    /// busy GPU; a fault trial's is short, [`Deadline::hung_step`]).
    pub timeout: Option<Duration>,
    /// The device the importers work on, in their own numbering (default: the exporter's).
    pub importer_device: Option<CUdevice>,
    /// The importers grant their device access to the imported pools (needed when it is not the
    /// pools' device).
    pub importer_grants: bool,
    /// CUDA_VISIBLE_DEVICES for the importers (another order of the devices).
    pub visible: Option<String>,
    /// The device ordinal the importers must see the imported memory on, in their numbering.
    pub expect_ordinal: Option<i32>,
    /// Importers started for this round trip alone, never kept ones (`harness::kept_children`): the
    /// trial counts the exporter's fds, which a kept importer's channel would change.
    pub fresh: bool,
    /// The checkpoint leg: which side the run's engine takes through a checkpoint, where.
    pub checkpoint: Option<Side>,
}

/// The side of a round trip the checkpoint leg checkpoints (`harness::checkpoint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The exporter, once it has exported the pools and pointers and before any importer has them:
    /// the importers then import what was exported before the checkpoint.
    Exporter,
    /// Each importer, once it has imported and checked the memory (its mappings then cross the
    /// checkpoint): it then writes and frees as usual.
    Importer,
}

impl Spec {
    pub(super) fn new(pools: Vec<Vec<usize>>, importers: usize) -> Spec {
        Spec {
            pools,
            importers,
            fault: None,
            timeout: None,
            importer_device: None,
            importer_grants: false,
            visible: None,
            expect_ordinal: None,
            fresh: false,
            checkpoint: None,
        }
    }

    /// Whether kept importers may serve it: not when they must start with another environment
    /// (a fault to inject, other devices visible, another device, grants), nor when it asks for
    /// fresh ones.
    fn reuses(&self) -> bool {
        !self.fresh
            && self.checkpoint.is_none()
            && self.fault.is_none()
            && self.visible.is_none()
            && self.importer_device.is_none()
            && !self.importer_grants
    }

    /// Which importers it takes: kept ones where it [`reuses`](Spec::reuses), its own when it asks
    /// for fresh ones (it counts the fds their start makes), else any that served no trial.
    fn take(&self) -> kept_children::Take {
        match (self.reuses(), self.fresh) {
            (true, _) => kept_children::Take::Kept,
            (false, true) => kept_children::Take::New,
            (false, false) => kept_children::Take::Unused,
        }
    }

    /// The bound on each wait for an importer after its first, under the run's `deadline`.
    pub(super) fn step(&self, deadline: Deadline) -> Duration {
        self.timeout.unwrap_or(deadline.importer_step())
    }
}

/// The checkpoint leg on an importer that has mapped the exporter's memory. R580's own engine checkpoints
/// it, then cannot restore it (Restore answers OPERATING_SYSTEM and the process stays checkpointed):
/// a declared departure of the engine (`checkpoint_importer_not_restored`), after which the
/// importer is lost (killed by the suite) and the round trip ends there, judged: false.
fn checkpoint_importer(env: &Env, p: &Peer) -> R<bool> {
    let pid = p.pid().ok_or("the importer has no process to checkpoint")? as i32;
    let trip = checkpoint::trip(&env.m.checkpoint, pid, env.deadline())?;
    note(format!("checkpoint leg, importer {pid}: {}", trip.describe()));
    // The engine's answer to the restore: the driver's code; a command's, where the process was
    // left checkpointed, the driver's departure's (the same row).
    let restore = match trip.steps.iter().find(|s| s.step.ends_with("restore")) {
        Some(s) if s.code != 0 && trip.state == checkpoint::CHECKPOINTED => CUresult::CUDA_ERROR_OPERATING_SYSTEM,
        Some(s) if s.step == "restore" => CUresult(s.code as u32),
        Some(s) => CUresult(if s.code == 0 { 0 } else { 999 }),
        None => CUresult(999),
    };
    let judged = expect_code(
        &env.policy(),
        "checkpoint_importer_not_restored",
        "cuCheckpointProcessRestore",
        restore,
    );
    if trip.failed().is_some() || trip.state != checkpoint::RUNNING {
        let rescued = checkpoint::rescue(pid, env.deadline());
        judged?;
        note(format!("the importer was lost to the checkpoint: {rescued}"));
        return Ok(false);
    }
    judged.map(|()| true)
}

/// The checkpoint leg, the exporter checkpointed between export and import, and the importer's
/// writes did not reach the exporter's memory (`mismatch`): R580's engine restores the exporter's
/// allocations into new memory, while what it exported before still names the memory of before,
/// which the importer then maps (the engine's declared departure `checkpoint_earlier_exports_stale`,
/// judged as one of behaviour).
fn stale_exports(policy: &Policy, mismatch: Fail) -> R<String> {
    note(format!(
        "the importer imported what was exported before the checkpoint, and its writes did not reach the exporter's \
         restored allocation: {}",
        mismatch.message()
    ));
    expect_behaviour(
        policy,
        "checkpoint_earlier_exports_stale",
        "cuMemPoolImportPointer of exports made before the checkpoint",
        false,
    )?;
    Ok(
        "the importer mapped the exporter's memory of before the checkpoint, as the engine's declared departure says"
            .into(),
    )
}

/// Exporter side of the round trip. Returns a one-line summary (bytes, time).
pub fn round_trip(env: &Env, spec: &Spec) -> R<String> {
    let start = Instant::now();
    // Importers first: their start-up (cuInit, a context) overlaps the exporter's work. The first
    // wait for each also covers that start-up, so it gets the ordinary bound.
    let dev = spec.importer_device.unwrap_or(env.dev).to_string();
    let mut envs: Vec<(&str, &str)> = vec![(IMPORTER_DEVICE_VAR, &dev)];
    envs.extend(spec.fault.map(|f| (FAULT_VAR, f)));
    if spec.importer_grants {
        envs.push((IMPORTER_GRANT_VAR, "1"));
    }
    if let Some(v) = &spec.visible {
        envs.push(("CUDA_VISIBLE_DEVICES", v));
    }
    let mut peers = Vec::new();
    let starts = crate::harness::child::starts();
    for _ in 0..spec.importers {
        peers.push(kept_children::take(
            &Role::IpcImport,
            &envs,
            env.deadline().importer_start().max(spec.step(env.deadline())),
            spec.take(),
            &env.settings,
        )?);
    }
    let started = crate::harness::child::starts() - starts;
    let mut phases: Vec<(&str, Duration)> = Vec::new();
    let s = Stream::new()?;
    let mut exported = Vec::new();
    for (pi, sizes) in spec.pools.iter().enumerate() {
        let pool = Pool::ipc(env.dev)?;
        let fd = export_pool_fd(pool.0)?;
        let mut ptrs = Vec::new();
        for (ai, &n) in sizes.iter().enumerate() {
            let seed = (pi * 16 + ai) as u8 ^ 0x3c;
            let p = alloc_from(pool.0, n, s.0)?;
            let host = pattern(seed, n);
            ok("cuMemcpyHtoDAsync", unsafe {
                cuMemcpyHtoDAsync_v2(p, host.as_ptr().cast(), n, s.0)
            })?;
            ptrs.push((p, n, seed));
        }
        exported.push(Exported {
            _pool: pool,
            fd: Some(fd),
            ptrs,
        });
    }
    let ev = Event::new(CUevent_flags::CU_EVENT_INTERPROCESS.0)?;
    ev.record(s.0)?;
    let mut evh = CUipcEventHandle::default();
    ok("cuIpcGetEventHandle", unsafe { cuIpcGetEventHandle(&mut evh, ev.0) })?;
    let mut meta = Vec::new();
    for e in &exported {
        let data: Vec<String> = e
            .ptrs
            .iter()
            .map(|&(p, _, _)| export_ptr(p).map(|d| hex(&d.reserved)))
            .collect::<R<_>>()?;
        let sizes: Vec<usize> = e.ptrs.iter().map(|x| x.1).collect();
        let seeds: Vec<u8> = e.ptrs.iter().map(|x| x.2).collect();
        meta.push(PoolMeta { sizes, seeds, data });
    }
    phases.push(("exported", start.elapsed()));
    if spec.checkpoint == Some(Side::Exporter) {
        let trip = checkpoint::round_trip(&env.m.checkpoint, std::process::id() as i32, env.deadline())?;
        note(format!("checkpoint leg, the exporter: {}", trip.describe()));
        phases.push(("exporter checkpointed", start.elapsed()));
    }
    // None: an importer was lost to the checkpoint leg (`checkpoint_importer`).
    let go = ToImporter::Go {
        pools: meta,
        event: hex(&event_handle_bytes(&evh)),
    };
    let talk = |peers: &mut Vec<Peer>, phases: &mut Vec<(&str, Duration)>| -> R<Option<Vec<(usize, usize)>>> {
        for p in peers.iter() {
            for (i, e) in exported.iter().enumerate() {
                let fd = e.fd.as_ref().map(|f| f.as_raw_fd());
                p.chan.send(&ToImporter::Pool { index: i }, fd)?;
            }
            p.chan.send(&go, None)?;
        }
        for p in peers.iter() {
            let (got, _) = recv_one(&p.chan, "verified", |m| match m {
                FromImporter::Verified { ordinal } => Some(ordinal),
                _ => None,
            })?;
            if let Some(want) = spec.expect_ordinal {
                ensure!(
                    got == want,
                    "the importer (CUDA_VISIBLE_DEVICES={:?}) sees the imported memory on device {got}, \
                     expected {want}: the pool's physical device",
                    spec.visible
                );
            }
            // From here on every wait is bounded by the spec (short in the fault trials) and by
            // what is left of the deadline; the first one also covered the importer's start-up.
            let left = (env.deadline().trial() / 10 * 9).saturating_sub(start.elapsed());
            p.chan
                .set_timeout(spec.step(env.deadline()).min(left.max(Duration::from_secs(1))))?;
        }
        phases.push(("verified", start.elapsed()));
        if spec.checkpoint == Some(Side::Importer) {
            for p in peers.iter() {
                if !checkpoint_importer(env, p)? {
                    return Ok(None);
                }
            }
            phases.push(("importers checkpointed", start.elapsed()));
        }
        for (i, p) in peers.iter().enumerate() {
            p.chan
                .send(&if i == 0 { ToImporter::Write } else { ToImporter::Skip }, None)?;
            recv_one(&p.chan, "written", |m: FromImporter| {
                (m == FromImporter::Written).then_some(())
            })?;
        }
        phases.push(("written", start.elapsed()));
        let mut done = Vec::new();
        for p in peers.iter() {
            p.chan.send(&ToImporter::Free, None)?;
            let (fds, _) = recv_one(&p.chan, "done", |m| match m {
                FromImporter::Done { fds_start, fds_end } => Some((fds_start, fds_end)),
                _ => None,
            })?;
            done.push(fds);
        }
        phases.push(("freed", start.elapsed()));
        Ok(Some(done))
    };
    let done = match talk(&mut peers, &mut phases) {
        Ok(Some(d)) => d,
        Ok(None) => {
            for p in peers.drain(..) {
                let _ = p.fail("lost to the checkpoint".into());
            }
            return Ok("an importer was lost to the checkpoint, as the engine's declared departure says".into());
        }
        Err(e) => {
            // Report the first importer whose death explains the failure, reap them all.
            let mut msgs = Vec::new();
            for p in peers.drain(..) {
                msgs.push(p.fail(e.to_string()));
            }
            return Err(msgs.into_iter().next().map_or(e, Fail::from));
        }
    };
    for p in peers.drain(..) {
        kept_children::give_back(p)?;
    }
    for (i, &(a, b)) in done.iter().enumerate() {
        ensure!(a == b, "importer {i} leaked fds: {a} open after init, {b} at the end");
    }
    // Importers freed first; now the exporter checks importer 0's writes, then frees.
    let mut bytes = 0usize;
    for e in &exported {
        for &(p, n, seed) in &e.ptrs {
            let mut host = vec![0u8; n];
            ok("cuMemcpyDtoHAsync", unsafe {
                cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), p, n, s.0)
            })?;
            s.sync()?;
            match check_pattern("exporter reading the importer's writes", &host, seed ^ 0xa5) {
                Err(f) if spec.checkpoint == Some(Side::Exporter) => return stale_exports(&env.policy(), f),
                r => r?,
            }
            bytes += n;
        }
    }
    // Dropping frees every allocation (after the importers freed theirs), then destroys the pools.
    drop(exported);
    let phases: Vec<String> = phases
        .iter()
        .map(|(p, t)| format!("{p} {:.0}", t.as_secs_f64() * 1e3))
        .collect();
    Ok(format!(
        "{} pool(s), {} allocation(s), {bytes} bytes, {} importer(s), {started} of them started for it: {:.1} ms \
         (ms since start: {})",
        spec.pools.len(),
        spec.pools.iter().map(Vec::len).sum::<usize>(),
        spec.importers,
        start.elapsed().as_secs_f64() * 1e3,
        phases.join(", ")
    ))
}

/// Child role `ipc-import`.
pub fn import_main(env: &Env) -> i32 {
    serve("importer", env, importer)
}

pub(super) fn importer(env: &Env, chan: &crate::harness::channel::Channel) -> R {
    env.bind();
    fault_at("start");
    let s = Stream::new()?;
    let fds_start = open_fds();
    let mut pools = Vec::new();
    let (pools_meta, event) = loop {
        let (m, fd) = recv(chan)?;
        match m {
            ToImporter::Pool { .. } => {
                let fd = fd.ok_or("pool message without an fd")?;
                fault_at("import");
                let mut p = std::ptr::null_mut();
                let r = import_pool_fd(fd.as_raw_fd(), &mut p);
                if !crate::os::fd_is_open(fd.as_raw_fd()) {
                    // Not closed twice (the fd was ours to close).
                    std::mem::forget(fd);
                    return Err(
                        "cuMemPoolImportFromShareableHandle closed the fd it imported from, which stays \
                         the caller's"
                            .into(),
                    );
                }
                drop(fd);
                ok("cuMemPoolImportFromShareableHandle", r)?;
                if crate::os::setting(IMPORTER_GRANT_VAR).as_deref() == Some("1") {
                    let d = CUmemAccessDesc {
                        location: mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, env.dev),
                        flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                    };
                    ok("cuMemPoolSetAccess(importer grants its own device)", unsafe {
                        cuMemPoolSetAccess(p, &d, 1)
                    })?;
                }
                pools.push(Pool(p));
            }
            ToImporter::Go { pools, event } => break (pools, event),
            m => return Err(format!("unexpected message {}", crate::cases::messages::to_json(&m)?).into()),
        }
    };
    let evh_bytes = unhex(&event)?;
    let mut evh = CUipcEventHandle::default();
    for (d, b) in evh.reserved.iter_mut().zip(&evh_bytes) {
        *d = *b as _;
    }
    let mut ev = std::ptr::null_mut();
    ok("cuIpcOpenEventHandle", unsafe { cuIpcOpenEventHandle(&mut ev, evh) })?;
    let ev = Event(ev);
    ok("cuStreamWaitEvent", unsafe { cuStreamWaitEvent(s.0, ev.0, 0) })?;
    let mut bufs = Vec::new();
    for (pool, meta) in pools.iter().zip(&pools_meta) {
        for (i, d) in meta.data.iter().enumerate() {
            let mut data = data_from_hex(d)?;
            let mut p: CUdeviceptr = 0;
            ok("cuMemPoolImportPointer", unsafe {
                cuMemPoolImportPointer(&mut p, pool.0, &mut data)
            })?;
            let n = *meta.sizes.get(i).ok_or("bad size")?;
            let seed = *meta.seeds.get(i).ok_or("bad seed")?;
            bufs.push((p, n, seed));
        }
    }
    fault_at("verify");
    for &(p, n, seed) in &bufs {
        let mut host = vec![0u8; n];
        ok("cuMemcpyDtoHAsync", unsafe {
            cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), p, n, s.0)
        })?;
        s.sync()?;
        check_pattern("importer reading the exporter's pattern", &host, seed)?;
    }
    // The device the imported memory lives on, as this process numbers devices.
    let mut ordinal: i32 = -1;
    if let Some(&(p, _, _)) = bufs.first() {
        ok("cuPointerGetAttribute(DEVICE_ORDINAL)", unsafe {
            cuPointerGetAttribute(
                (&mut ordinal as *mut i32).cast(),
                CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                p,
            )
        })?;
    }
    chan.send(&FromImporter::Verified { ordinal }, None)?;
    let (write, _) = recv_one(chan, "write", |m| match m {
        ToImporter::Write => Some(true),
        ToImporter::Skip => Some(false),
        _ => None,
    })?;
    if write {
        fault_at("write");
        for &(p, n, seed) in &bufs {
            let host = pattern(seed ^ 0xa5, n);
            ok("cuMemcpyHtoDAsync", unsafe {
                cuMemcpyHtoDAsync_v2(p, host.as_ptr().cast(), n, s.0)
            })?;
            s.sync()?;
        }
    }
    chan.send(&FromImporter::Written, None)?;
    recv_one(chan, "free", |m: ToImporter| (m == ToImporter::Free).then_some(()))?;
    fault_at("free");
    for &(p, _, _) in &bufs {
        free_async(p, s.0)?;
    }
    s.sync()?;
    drop(ev);
    drop(pools);
    drop(s);
    let fds_end = open_fds();
    chan.send(&FromImporter::Done { fds_start, fds_end }, None)?;
    Ok(())
}

/// (api, case, spec) round trips.
pub(super) fn round_trips() -> Vec<(u32, &'static str, Spec)> {
    vec![
        // Sizes from 1 byte to 256 MiB, in four trials that run side by side (one trial of all six
        // sizes was the run's longest serial step): the odd small ones together in one pool, then
        // an odd size past a page, and two large ones alone.
        // The large ones first: the trials run in one lane (`ROUND_TRIP_LANE`), longest first.
        (830, "round_trip_size_256_mib", Spec::new(vec![vec![256 * MIB]], 1)),
        (830, "round_trip_size_64_mib", Spec::new(vec![vec![64 * MIB]], 1)),
        (
            830,
            "round_trip_sizes_1_byte_to_4_kib",
            Spec::new(vec![vec![1, 3, 4 * KIB]], 1),
        ),
        (
            830,
            "round_trip_size_1_mib_and_7_bytes",
            Spec::new(vec![vec![MIB + 7]], 1),
        ),
        (830, "round_trip_64_allocations", Spec::new(vec![vec![64 * KIB; 64]], 1)),
        (
            829,
            "round_trip_three_pools",
            Spec::new(vec![vec![MIB], vec![2 * MIB, 3], vec![5 * MIB]], 1),
        ),
        (
            829,
            "round_trip_two_importers_at_once",
            Spec::new(vec![vec![MIB, 17 * MIB]], 2),
        ),
    ]
}

/// The round-trip cases.
pub(super) fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for (api, name, spec) in round_trips() {
        v.push(
            Case::gpu(api, name, move |e| {
                let summary = round_trip(e, &spec)?;
                note(summary);
                Ok(())
            })
            .needs(Cap::Ipc)
            .slow()
            .lane(ROUND_TRIP_LANE),
        );
    }
    // The checkpoint leg across processes: the exporter checkpointed between export and import (the
    // importer imports a pool handle and pointers exported before it), and the importer checkpointed
    // with the exporter's memory mapped.
    for (api, name, side) in [
        (829, "checkpoint::import_of_exports_made_before", Side::Exporter),
        (830, "checkpoint::importer_checkpointed", Side::Importer),
    ] {
        v.push(
            Case::gpu(api, name, move |e| {
                let spec = Spec {
                    checkpoint: Some(side),
                    ..Spec::new(vec![vec![MIB, 3 * MIB + 5]], 1)
                };
                note(round_trip(e, &spec)?);
                Ok(())
            })
            .needs(Cap::Ipc)
            .needs(Cap::Checkpoint)
            .own_process(),
        );
    }
    // Across devices: the importer works on the peer device and grants it access itself; data
    // goes both ways, and the importer sees the memory on the pool's device.
    v.push(
        Case::gpu(829, "round_trip_importer_on_peer_device", |e| {
            let spec = Spec {
                importer_device: Some(e.peer()?),
                importer_grants: true,
                expect_ordinal: Some(e.dev),
                ..Spec::new(vec![vec![MIB, 3 * MIB + 5]], 1)
            };
            note(round_trip(e, &spec)?);
            Ok(())
        })
        .needs(Cap::Ipc)
        .pair()
        .slow(),
    );
    // An importer that numbers the devices the other way round (CUDA_VISIBLE_DEVICES reversed)
    // works on the pool's physical device under its own number: the pool is resolved by the
    // physical device, and the importer sees the memory on that device's new ordinal.
    v.push(
        Case::gpu(829, "importer_with_devices_reordered", |e| {
            let n = e.m.devices.len();
            if n < 2 {
                return ignore("reordering the devices needs two of them");
            }
            let ours: Vec<String> = match std::env::var("CUDA_VISIBLE_DEVICES") {
                Ok(v) if !v.trim().is_empty() => v.split(',').map(|s| s.trim().to_string()).collect(),
                _ => (0..n).map(|i| i.to_string()).collect(),
            };
            ensure!(
                ours.len() == n,
                "CUDA_VISIBLE_DEVICES lists {} devices, the driver shows {n}",
                ours.len()
            );
            let reversed: Vec<String> = ours.iter().rev().cloned().collect();
            let theirs = (n - 1) as i32 - e.dev;
            let spec = Spec {
                importer_device: Some(theirs),
                visible: Some(reversed.join(",")),
                expect_ordinal: Some(theirs),
                ..Spec::new(vec![vec![MIB]], 1)
            };
            note(format!(
                "importer's CUDA_VISIBLE_DEVICES={}: {}",
                reversed.join(","),
                round_trip(e, &spec)?
            ));
            Ok(())
        })
        .needs(Cap::Ipc)
        .slow(),
    );
    v.push(
        Case::gpu(826, "exporter_leaks_no_fd", |e| {
            warm_up_ipc_events(e.deadline())?;
            let before = fd_table();
            let spec = Spec {
                fresh: true,
                ..Spec::new(vec![vec![MIB], vec![MIB]], 2)
            };
            round_trip(e, &spec)?;
            let after = fd_table();
            ensure!(
                before == after,
                "fds differ after the round trip: {}",
                fd_diff(&before, &after)
            );
            Ok(())
        })
        .needs(Cap::Ipc)
        .alone()
        .slow(),
    );
    v
}
