//! The address-space trials: one `vaspace` child's answers gathered once per device and run,
//! and each trial judging its own.

use super::steps::*;
use crate::cases::messages::text;
use crate::cases::prelude::*;
use crate::harness::channel::LostStep;
use crate::harness::channel::{hex, CLOSED};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};

/// What may stay mapped after a pool's destruction out of what its creation or import mapped
/// (driver bookkeeping, a malloc arena): far below any reservation of a pool, and below half of
/// what the call mapped ([`kept_too_much`]).
const KEPT_TOLERANCE: u64 = 64 * MIB as u64;

/// Whether `kept` of the `took` bytes a call mapped is more than bookkeeping: over the tolerance,
/// or half of what the call mapped or more (R580 maps 64 MiB for a pool of maxSize 2 MiB: a fixed
/// 64 MiB tolerance let a destroy that gave nothing back pass; issue 48).
fn kept_too_much(kept: u64, took: u64) -> bool {
    kept > KEPT_TOLERANCE || (kept > 0 && kept >= took / 2)
}

/// The figure of one call: a note of the fixed wording, and an observation.
fn figure(what: &str, b: u64, device: u64) {
    let ratio = b as f64 / device.max(1) as f64;
    let line = format!("vaspace {what}: {b} bytes, {ratio:.3}x device memory ({device} bytes)");
    observe::value(
        format!("/proc/self/maps around {what}"),
        format!("{b} bytes, {ratio:.3}x device memory"),
    );
    note(line);
}

/// A code the child's answer `a` may lack (`key` names it): Err where it does.
fn code_of<T: Serialize>(a: &OnDevice<T>, got: Option<u32>, key: &str) -> R<CUresult> {
    let c = got.ok_or_else(|| format!("the vaspace child's answer has no code {key}: {}", text(a)))?;
    Ok(CUresult(c))
}

/// The lane of the address-space trials (one child answers them all): the IPC trials' lane, whose
/// worker is idle enough, so that the run makes one worker's context fewer (issue 36).
const LANE: &str = crate::cases::xproc::IPC_LANE;

/// The child's answers by step; a step it did not answer reads `{"lost": why, "blame": api}`.
type Answers = BTreeMap<String, Value>;

/// The child's answers for device `dev` (one child per device and run).
fn answers_for(dev: CUdevice) -> &'static Shared<Answers> {
    static BY_DEVICE: std::sync::Mutex<BTreeMap<CUdevice, &'static Shared<Answers>>> =
        std::sync::Mutex::new(BTreeMap::new());
    let mut by = BY_DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    by.entry(dev).or_insert_with(|| Box::leak(Box::new(Shared::new())))
}

/// Start the `vaspace` child on the case's device (offering it a pool to import where the
/// machine has IPC) and gather its answers as they come. Where it dies or hangs, the step in
/// flight and every later one read as lost, naming that step and the API it was inside.
fn measure_all(env: &Env) -> R<Answers> {
    let offer = env
        .m
        .has_on(Cap::Ipc, env.dev)
        .ok()
        .map(|()| Offer::new(env.dev).and_then(|o| o.data().map(|d| (o, d))));
    let (mut data, mut fd, mut unoffered) = (None, None, None);
    match &offer {
        Some(Ok((o, d))) => {
            data = Some(d.clone());
            fd = Some(o.fd.as_raw_fd());
        }
        Some(Err(e)) => {
            unoffered = Some(LostStep::answer(
                format!("offering a pool to import: {e}"),
                blame::get(),
            ))
        }
        None => {}
    }
    let msg = ToChild::Measure { dev: env.dev, data };
    let dev = env.dev.to_string();
    let peer = crate::harness::kept_children::take(
        &Role::VaSpace,
        &[(crate::cases::xproc::IMPORTER_DEVICE_VAR, &dev)],
        env.deadline().shared_child_step(),
        crate::harness::kept_children::Take::Unused,
        &env.settings,
    )?;
    let mut answers = Answers::new();
    let ended = match peer.chan.send(&msg, fd) {
        Err(e) => Some(e.to_string()),
        // All nine steps within most of this one trial's deadline: past it the steps left read as
        // lost (the trial fails naming the step) rather than the worker being killed as hung, its
        // cache with it, and the next trial starting the child again.
        Ok(()) => {
            let step = env.deadline().shared_child_step();
            let until = std::time::Instant::now() + env.deadline().trial() / 10 * 9;
            peer.chan.answers_until_done_by(&mut answers, Some((until, step)))
        }
    };
    match ended {
        None => {
            peer.finish()?;
        }
        Some(e) => {
            let Some(at) = STEPS.iter().position(|(k, _)| !answers.contains_key(*k)) else {
                return Err(peer.fail(e).into());
            };
            // Closed: the child is dying or exiting, and gets the reaping bound to show its signal.
            let closed = e == CLOSED;
            let lost = peer.lost(e, closed);
            let (inside, why) = (lost.inside, lost.message);
            let died = STEPS[at].0;
            let lost = format!("the vaspace child stopped in this step: {why}");
            answers.insert(died.into(), LostStep::answer(lost, inside));
            for (k, _) in &STEPS[at + 1..] {
                let lost = format!("the vaspace child stopped in the earlier step {died}: {why}");
                answers.insert(k.to_string(), LostStep::answer(lost, inside));
            }
        }
    }
    if let Some(u) = unoffered {
        for k in ["import", "rlimit_import"] {
            answers.insert(k.into(), u.clone());
        }
    }
    Ok(answers)
}

/// The lane's start-ahead step (`Case::warm`): the child, with its context made, before the
/// lane's first turn.
fn warm(e: &Env) -> R {
    let dev = e.dev.to_string();
    let var = crate::cases::xproc::IMPORTER_DEVICE_VAR;
    crate::harness::kept_children::warm(
        &Role::VaSpace,
        &[(var, &dev)],
        1,
        e.deadline().shared_child_step(),
        &e.settings,
    )
}

/// The child's answer for `step`, for a trial: what it found, or why there is none (and whom to
/// blame).
fn answer<T: DeserializeOwned>(env: &Env, step: &str) -> R<OnDevice<T>> {
    let a = answers_for(env.dev).get(|| measure_all(env))?;
    let v = crate::harness::channel::step_answer(a, step, "the vaspace child")?;
    Ok(OnDevice::deserialize(&v).map_err(|e| format!("the vaspace child's answer for step {step}: {e}: {v}"))?)
}

/// An exported IPC pool with one allocation holding `SEED`'s bytes: its fd, the allocation's
/// export data in hex; dropping it frees the allocation (the child has freed its import by then).
struct Offer {
    p: CUdeviceptr,
    s: Stream,
    fd: OwnedFd,
    _pool: Pool,
}

impl Offer {
    fn new(dev: CUdevice) -> R<Offer> {
        let pool = Pool::ipc(dev)?;
        let fd = export_pool_fd(pool.0)?;
        let s = Stream::new()?;
        let p = alloc_from(pool.0, OFFER, s.0)?;
        let o = Offer { p, s, fd, _pool: pool };
        let bytes = vec![SEED; OFFER];
        ok("cuMemcpyHtoDAsync", unsafe {
            cuMemcpyHtoDAsync_v2(o.p, bytes.as_ptr().cast(), OFFER, o.s.0)
        })?;
        o.s.sync()?;
        Ok(o)
    }

    fn data(&self) -> R<String> {
        let mut d = CUmemPoolPtrExportData::default();
        ok("cuMemPoolExportPointer", unsafe {
            cuMemPoolExportPointer(&mut d, self.p)
        })?;
        Ok(hex(&d.reserved))
    }
}

impl Drop for Offer {
    fn drop(&mut self) {
        let _ = unsafe { cuMemFreeAsync(self.p, self.s.0) };
        let _ = self.s.sync();
    }
}

/// A pool creation of `max` bytes (0: no limit): its figure, and the destruction gives its address
/// space back. Kills 823-destroy-keeps-address-space.
fn create_gives_back(e: &Env, step: &str, max: usize, what: &str) -> R {
    let a = answer::<Create>(e, step)?;
    expect(
        &format!("cuMemPoolCreate(maxSize {what}, in the vaspace child)"),
        CUresult(a.got.create),
        SUCCESS,
    )?;
    expect(
        &format!("cuMemPoolDestroy(maxSize {what}, in the vaspace child)"),
        code_of(&a, a.got.destroy, "destroy")?,
        SUCCESS,
    )?;
    let (took, kept, dev) = (a.got.took, a.got.kept.unwrap_or(0), a.device);
    figure(&format!("cuMemPoolCreate maxSize {what}"), took, dev);
    note(format!(
        "vaspace cuMemPoolDestroy maxSize {what}: {kept} bytes of the creation's still mapped"
    ));
    if max > 0 && took < max as u64 {
        note(format!(
            "vaspace cuMemPoolCreate maxSize {what}: less than maxSize appeared in /proc/self/maps (the reservation \
             may come out of one the driver made before)"
        ));
    }
    if kept_too_much(kept, took) {
        blame::set(824);
        return Err(format!(
            "cuMemPoolDestroy left {kept} bytes mapped of the {took} that cuMemPoolCreate(maxSize {what}) mapped \
             (half of them or more than {KEPT_TOLERANCE}): the pool's address space is not given back"
        )
        .into());
    }
    Ok(())
}

/// One RLIMIT_AS trial: `step` run in the child with its address space allowed to grow by
/// `RLIMIT_MARGIN` alone: a code (SUCCESS, or OUT_OF_MEMORY where the reservation does not fit),
/// never a crash or a hang (the child's loss fails the trial with the step it died in). Kills
/// 822-rlimit-crashes (which aborts the child in the first of these steps).
fn under_rlimit(e: &Env, step: &str, call: &str) -> R {
    let a = answer::<Rlimit>(e, &format!("rlimit_{step}"))?;
    let r = CUresult(a.got.code);
    note(format!(
        "vaspace RLIMIT_AS {}: {call} answered {} (address space {} bytes, limit {} bytes)",
        step,
        code_name(r),
        a.got.vm_size,
        a.got.limit
    ));
    if r != SUCCESS && r != CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        return expect(
            &format!("{call} under RLIMIT_AS (in the vaspace child)"),
            r,
            CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        );
    }
    Ok(())
}

/// The address-space cases, in one lane (one child answers them all).
pub fn cases() -> Vec<Case> {
    let v = vec![
        // Figure: the first default-pool query of a fresh process (cuDeviceGetDefaultMemPool), then
        // a second one and cuDeviceGetMemPool; the same pool each time. Public figure (cuda-python
        // #2381): 2.00x device memory, for the life of the process. It judges only the codes and
        // that the second query maps nothing more than the tolerance; it exists for the figure.
        Case::gpu(823, "vaspace::first_default_pool_query_figure", |e| {
            let a = answer::<DefaultPool>(e, "default_pool")?;
            expect(
                "cuDeviceGetDefaultMemPool (first, in the vaspace child)",
                CUresult(a.got.first),
                SUCCESS,
            )?;
            expect(
                "cuDeviceGetMemPool (in the vaspace child)",
                CUresult(a.got.current),
                SUCCESS,
            )?;
            let dev = a.device;
            figure("first cuDeviceGetDefaultMemPool", a.got.took, dev);
            figure("second default-pool query", a.got.again, dev);
            ensure!(
                a.got.same,
                "the second default-pool query answered another pool than the first: {}",
                text(&a)
            );
            ensure!(
                a.got.again <= KEPT_TOLERANCE,
                "the second default-pool query mapped {} more bytes",
                a.got.again
            );
            Ok(())
        }),
        Case::gpu(823, "vaspace::create_max_size_0_destroy_gives_back", |e| {
            create_gives_back(e, "create_0", 0, "0")
        }),
        // Kills 823-small-pool-keeps-address-space too (issue 48).
        Case::gpu(823, "vaspace::create_max_size_2_mib_destroy_gives_back", |e| {
            create_gives_back(e, "create_2_mib", 2 * MIB, "2 MiB")
        }),
        Case::gpu(823, "vaspace::create_max_size_1_gib_destroy_gives_back", |e| {
            create_gives_back(e, "create_1_gib", 1024 * MIB, "1 GiB")
        }),
        // Figures of one import of a shareable handle and of one pointer's export data (PyTorch
        // #186213: about 9/8 of device memory per handle); the import reads the exporter's bytes
        // and the imported pool's destruction gives back what the imports mapped. Kills
        // 829-import-keeps-address-space.
        Case::gpu(829, "vaspace::import_figures_and_destroy_gives_back", |e| {
            let a = answer::<Import>(e, "import")?;
            expect(
                "cuMemPoolImportFromShareableHandle (in the vaspace child)",
                CUresult(a.got.pool),
                SUCCESS,
            )?;
            expect(
                "cuMemPoolImportPointer (in the vaspace child)",
                code_of(&a, a.got.ptr, "ptr")?,
                SUCCESS,
            )?;
            ensure!(
                a.got.read_ok == Some(true),
                "the import does not read the exporter's bytes: {}",
                text(&a)
            );
            expect(
                "cuMemFreeAsync(the import, in the vaspace child)",
                code_of(&a, a.got.free, "free")?,
                SUCCESS,
            )?;
            expect(
                "cuMemPoolDestroy(the imported pool, in the vaspace child)",
                code_of(&a, a.got.destroy, "destroy")?,
                SUCCESS,
            )?;
            let dev = a.device;
            figure("cuMemPoolImportFromShareableHandle", a.got.pool_took, dev);
            figure("cuMemPoolImportPointer", a.got.ptr_took.unwrap_or(0), dev);
            let kept = a.got.kept.unwrap_or(0);
            note(format!(
                "vaspace imported pool destroyed: {kept} bytes of the imports' still mapped"
            ));
            let took = a.got.pool_took + a.got.ptr_took.unwrap_or(0);
            if kept_too_much(kept, took) {
                blame::set(829);
                return Err(format!(
                    "the imported pool's destruction left {kept} bytes mapped of the {took} its imports mapped (half \
                     of them or more than {KEPT_TOLERANCE})"
                )
                .into());
            }
            Ok(())
        })
        .needs(Cap::Ipc),
        // Figures of cuGraphAddMemAllocNode with maxSize 0 and 2 MiB in the pool properties (public
        // figure: 2.00x device memory, maxSize ignored) and what the graph's destruction and a trim
        // leave mapped (R580: all of it, the device's graph reservation, for the process's life).
        // Judged: a graph made after that maps no more than the tolerance (the reservation is
        // reused, not made anew for each graph; issue 48). Kills 820-graph-node-reserves-anew
        // (reached through `beyond_table`, which asks the cuGetProcAddress applications find).
        Case::gpu(820, "vaspace::graph_alloc_node_figures", |e| {
            let a = answer::<Graph>(e, "graph")?;
            expect(
                "cuGraphAddMemAllocNode(maxSize 0, in the vaspace child)",
                CUresult(a.got.node),
                SUCCESS,
            )?;
            expect(
                "cuGraphAddMemAllocNode(maxSize 2 MiB, in the vaspace child)",
                CUresult(a.got.small),
                SUCCESS,
            )?;
            let dev = a.device;
            figure("cuGraphAddMemAllocNode maxSize 0", a.got.node_took, dev);
            figure("cuGraphAddMemAllocNode maxSize 2 MiB", a.got.small_took, dev);
            note(format!(
                "vaspace cuGraphDestroy and cuDeviceGraphMemTrim: {} bytes of the nodes' still mapped",
                a.got.kept
            ));
            expect(
                "cuGraphAddMemAllocNode(a second graph, after the first's destruction, in the vaspace child)",
                CUresult(a.got.again),
                SUCCESS,
            )?;
            let again = a.got.again_took;
            figure("cuGraphAddMemAllocNode in a second graph", again, dev);
            ensure!(
                again <= KEPT_TOLERANCE,
                "a graph made after the first was destroyed and the device's graph memory trimmed mapped {again} \
                 more bytes (more than {KEPT_TOLERANCE}; the first's node mapped {}): the address space is \
                 reserved anew for each graph",
                a.got.node_took
            );
            Ok(())
        }),
        // Under RLIMIT_AS too small for a pool's reservation (Netflix/vmaf PR #1382 saw
        // OUT_OF_MEMORY from cuMemFreeAsync under `ulimit -v`): a code, not a crash or a hang.
        Case::gpu(823, "vaspace::rlimit_as_create_answers_a_code", |e| {
            under_rlimit(e, "create", "cuMemPoolCreate(maxSize 0)")
        }),
        Case::gpu(829, "vaspace::rlimit_as_import_answers_a_code", |e| {
            under_rlimit(e, "import", "cuMemPoolImportFromShareableHandle")
        })
        .needs(Cap::Ipc),
        Case::gpu(822, "vaspace::rlimit_as_free_answers_a_code", |e| {
            under_rlimit(e, "free", "cuMemFreeAsync")
        }),
    ];
    v.into_iter().map(|c| c.lane(LANE).warmed_by(warm)).collect()
}
