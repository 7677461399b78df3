//! Stream-ordered allocation under stream capture (trials named `…::capture::…`): what
//! cuMemAllocAsync (820), cuMemAllocFromPoolAsync (821) and cuMemFreeAsync (822) do on a capturing
//! stream in each capture mode — graph memory nodes instead of allocations, the address fixed at
//! capture, relaunch rules with and without CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH, graph
//! memory accounting and trimming — and what the pool APIs answer while a stream captures, and
//! that one which answers success there has taken effect.
//!
//! Every trial runs alone in its process (`alone`): a stream capturing in global mode makes
//! other threads' unsafe calls fail. Each ends its capture on every path, destroys its graphs and
//! trims the device's graph memory, and checks that none is left.

use crate::cases::prelude::*;

use CUmemPool_attribute as A;
use CUstreamCaptureMode as M;
const MIB: usize = 1 << 20;

/// The three capture modes, by name.
const MODES: &[(&str, M)] = &[
    ("global", M::CU_STREAM_CAPTURE_MODE_GLOBAL),
    ("thread_local", M::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
    ("relaxed", M::CU_STREAM_CAPTURE_MODE_RELAXED),
];

/// A graph; destroyed on drop.
struct Graph(CUgraph);
impl Drop for Graph {
    fn drop(&mut self) {
        let _ = unsafe { cuGraphDestroy(self.0) };
    }
}

/// An instantiated graph; destroyed on drop.
struct Exec(CUgraphExec);
impl Exec {
    fn new(g: &Graph, flags: u64) -> R<Exec> {
        let mut e = std::ptr::null_mut();
        ok("cuGraphInstantiateWithFlags", unsafe {
            cuGraphInstantiateWithFlags(&mut e, g.0, flags)
        })?;
        Ok(Exec(e))
    }
    fn launch(&self, s: CUstream) -> CUresult {
        unsafe { cuGraphLaunch(self.0, s) }
    }
}
impl Drop for Exec {
    fn drop(&mut self) {
        let _ = unsafe { cuGraphExecDestroy(self.0) };
    }
}

fn status(s: CUstream) -> R<CUstreamCaptureStatus> {
    let mut st = CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    ok("cuStreamIsCapturing", unsafe { cuStreamIsCapturing(s, &mut st) })?;
    Ok(st)
}

/// Capture `work` on `s` in `mode`. The capture is ended whatever `work` returns; the graph comes
/// back with `work`'s value and what cuStreamEndCapture answered.
fn capture<T>(s: CUstream, mode: M, work: impl FnOnce(CUstream) -> R<T>) -> R<(R<T>, CUresult, Option<Graph>)> {
    /// Ends the capture if `work` panics (the stream would stay capturing for the next trial).
    struct Open(CUstream, bool);
    impl Drop for Open {
        fn drop(&mut self) {
            if self.1 {
                let mut g = std::ptr::null_mut();
                unsafe {
                    let _ = cuStreamEndCapture(self.0, &mut g);
                    if !g.is_null() {
                        let _ = cuGraphDestroy(g);
                    }
                }
            }
        }
    }
    ok("cuStreamBeginCapture", unsafe { cuStreamBeginCapture_v2(s, mode) })?;
    let mut open = Open(s, true);
    let out = work(s);
    open.1 = false;
    let mut g = std::ptr::null_mut();
    let end = unsafe { cuStreamEndCapture(s, &mut g) };
    Ok((out, end, (!g.is_null()).then_some(Graph(g))))
}

/// A graph allocation live after a launch: freed (and the stream synchronised) on every path, so
/// that a failing check leaves no graph memory behind for the worker's next trial.
struct LiveGraphAlloc<'a> {
    p: CUdeviceptr,
    s: &'a Stream,
    live: bool,
}
impl LiveGraphAlloc<'_> {
    fn free(&mut self) -> R {
        self.live = false;
        free_async(self.p, self.s.0)?;
        self.s.sync()
    }
}
impl Drop for LiveGraphAlloc<'_> {
    fn drop(&mut self) {
        if self.live {
            unsafe {
                let _ = cuMemFreeAsync(self.p, self.s.0);
                let _ = cuStreamSynchronize(self.s.0);
            }
        }
    }
}

/// Fill `n` bytes at `p` with `b` on `s` and wait for it.
fn fill(p: CUdeviceptr, n: usize, b: u8, s: &Stream) -> R {
    ok("cuMemsetD8Async", unsafe { cuMemsetD8Async(p, b, n, s.0) })?;
    s.sync()
}

/// The graph's nodes and their types.
fn nodes(g: &Graph) -> R<Vec<(CUgraphNode, CUgraphNodeType)>> {
    let mut n = 0usize;
    ok("cuGraphGetNodes(count)", unsafe {
        cuGraphGetNodes(g.0, std::ptr::null_mut(), &mut n)
    })?;
    let mut v = vec![std::ptr::null_mut(); n];
    ok("cuGraphGetNodes", unsafe {
        cuGraphGetNodes(g.0, v.as_mut_ptr(), &mut n)
    })?;
    v.truncate(n);
    v.into_iter()
        .map(|node| {
            let mut t = CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
            ok("cuGraphNodeGetType", unsafe { cuGraphNodeGetType(node, &mut t) })?;
            Ok((node, t))
        })
        .collect()
}

fn graph_mem(dev: CUdevice, a: CUgraphMem_attribute) -> R<u64> {
    let mut v: u64 = 0;
    ok("cuDeviceGetGraphMemAttribute", unsafe {
        cuDeviceGetGraphMemAttribute(dev, a, (&mut v as *mut u64).cast())
    })?;
    Ok(v)
}

/// The device's graph memory (used, reserved) once trimmed: what a trial starts from. Graph memory
/// is per device, so an earlier trial in the same process that failed with a graph allocation
/// live leaves it behind; each trial answers only for its own.
fn graph_memory_trimmed(dev: CUdevice) -> R<(u64, u64)> {
    ok("cuDeviceGraphMemTrim", unsafe { cuDeviceGraphMemTrim(dev) })?;
    let used = graph_mem(dev, CUgraphMem_attribute::CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT)?;
    let reserved = graph_mem(dev, CUgraphMem_attribute::CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT)?;
    Ok((used, reserved))
}

/// After the graphs are gone: trimming returns all the graph memory the trial took.
fn graph_memory_released(dev: CUdevice, start: (u64, u64)) -> R {
    let (used, reserved) = graph_memory_trimmed(dev)?;
    ensure!(
        used <= start.0 && reserved <= start.1,
        "graph memory after the graphs were destroyed and trimmed: {used} used, {reserved} reserved \
         ({} and {} when the trial began)",
        start.0,
        start.1
    );
    Ok(())
}

/// Read `n` bytes at `p` (synchronously) and check they all equal `b`.
fn holds(p: CUdeviceptr, n: usize, b: u8, what: &str) -> R {
    let mut host = vec![0u8; n];
    ok("cuMemcpyDtoH", unsafe {
        cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), p, n)
    })?;
    ensure!(
        host.iter().all(|&x| x == b),
        "{what}: memory at {p:#x} does not hold the {b:#x} the graph wrote"
    );
    Ok(())
}

/// Which allocation call a trial captures.
#[derive(Clone, Copy)]
enum Via {
    /// cuMemAllocAsync (820), which draws from the device's current pool outside capture.
    Current,
    /// cuMemAllocFromPoolAsync (821) from a pool of the suite's own.
    OwnPool,
}

fn alloc_via(via: Via, pool: CUmemoryPool, size: usize, s: CUstream) -> R<CUdeviceptr> {
    match via {
        Via::Current => alloc_async(size, s),
        Via::OwnPool => alloc_from(pool, size, s),
    }
}

/// Capture alloc + memset + free in `mode`: the calls succeed without allocating from the pool,
/// the graph holds one alloc and one free node for that address and size, and it launches twice.
fn alloc_free_nodes(dev: CUdevice, mode: M, via: Via) -> R {
    let own = Pool::on_device(dev)?;
    let pool = match via {
        Via::Current => current_pool(dev)?,
        Via::OwnPool => own.0,
    };
    let used = || get_u64(pool, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
    let before = used()?;
    let graph_start = graph_memory_trimmed(dev)?;
    let s = Stream::new()?;
    let (work, end, g) = capture(s.0, mode, |c| {
        let p = alloc_via(via, pool, MIB, c)?;
        ensure!(p != 0, "a captured allocation returned success and a null pointer");
        ok("cuMemsetD8Async", unsafe { cuMemsetD8Async(p, 0x5a, MIB, c) })?;
        free_async(p, c)?;
        let st = status(c)?;
        Ok((p, st))
    })?;
    let (p, st) = work?;
    ok("cuStreamEndCapture", end)?;
    // Read after the capture ended (whether attribute queries are allowed during a capture is a
    // trial of its own): the graph has not run yet.
    let during = used()?;
    let g = g.ok_or("cuStreamEndCapture returned success and no graph")?;
    ensure!(
        st == CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE,
        "the capture was {st:?} after the captured allocation and free"
    );
    ensure!(
        during == before,
        "the pool's used memory went from {before} to {during} by capturing: a captured allocation \
         must not allocate until the graph runs"
    );
    let ns = nodes(&g)?;
    let of = |t: CUgraphNodeType| ns.iter().filter(|(_, x)| *x == t).map(|(n, _)| *n).collect::<Vec<_>>();
    let (allocs, frees) = (
        of(CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_ALLOC),
        of(CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_FREE),
    );
    ensure!(
        allocs.len() == 1 && frees.len() == 1,
        "the graph holds {} alloc and {} free nodes (node types {:?}), expected one of each",
        allocs.len(),
        frees.len(),
        ns.iter().map(|(_, t)| *t).collect::<Vec<_>>()
    );
    let mut params = CUDA_MEM_ALLOC_NODE_PARAMS::default();
    ok("cuGraphMemAllocNodeGetParams", unsafe {
        cuGraphMemAllocNodeGetParams(allocs[0], &mut params)
    })?;
    ensure!(
        params.dptr == p && params.bytesize == MIB,
        "the alloc node says {} bytes at {:#x}; the captured call returned {p:#x} for {MIB}",
        params.bytesize,
        params.dptr
    );
    ensure!(
        location_id(&params.poolProps.location) == dev,
        "the alloc node's memory is on device {}, the pool's is {dev}",
        location_id(&params.poolProps.location)
    );
    let mut freed: CUdeviceptr = 0;
    ok("cuGraphMemFreeNodeGetParams", unsafe {
        cuGraphMemFreeNodeGetParams(frees[0], &mut freed)
    })?;
    ensure!(freed == p, "the free node frees {freed:#x}, not the captured {p:#x}");
    {
        let x = Exec::new(&g, 0)?;
        // The high-water mark is per device and survives trimming: reset it, so that it shows
        // this launch's allocation.
        let mut zero: u64 = 0;
        ok("cuDeviceSetGraphMemAttribute(USED_MEM_HIGH, 0)", unsafe {
            cuDeviceSetGraphMemAttribute(
                dev,
                CUgraphMem_attribute::CU_GRAPH_MEM_ATTR_USED_MEM_HIGH,
                (&mut zero as *mut u64).cast(),
            )
        })?;
        ok("cuGraphLaunch", x.launch(s.0))?;
        ok("cuGraphLaunch (again)", x.launch(s.0))?;
        s.sync()?;
        let high = graph_mem(dev, CUgraphMem_attribute::CU_GRAPH_MEM_ATTR_USED_MEM_HIGH)?;
        ensure!(
            high >= MIB as u64,
            "graph memory high-water mark {high} after the launch, below the {MIB} bytes the graph allocates"
        );
    }
    drop(g);
    ensure!(used()? == before, "the pool's used memory changed after the graph ran");
    graph_memory_released(dev, graph_start)
}

/// Capture an allocation (and a fill) that the graph does not free. After a launch the memory is
/// there at the captured address; relaunching while it is live is refused without
/// AUTO_FREE_ON_LAUNCH and frees-then-reallocates with it.
fn freed_outside(dev: CUdevice, auto_free: bool) -> R {
    let graph_start = graph_memory_trimmed(dev)?;
    let s = Stream::new()?;
    let (work, end, g) = capture(s.0, M::CU_STREAM_CAPTURE_MODE_GLOBAL, |c| {
        let p = alloc_async(MIB, c)?;
        ok("cuMemsetD8Async", unsafe { cuMemsetD8Async(p, 0x5a, MIB, c) })?;
        Ok(p)
    })?;
    let p = work?;
    ok("cuStreamEndCapture", end)?;
    let g = g.ok_or("cuStreamEndCapture returned success and no graph")?;
    let flags = if auto_free {
        CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0 as u64
    } else {
        0
    };
    let x = Exec::new(&g, flags)?;
    ok("cuGraphLaunch", x.launch(s.0))?;
    let mut live = LiveGraphAlloc { p, s: &s, live: true };
    s.sync()?;
    holds(p, MIB, 0x5a, "after the first launch")?;
    // Zeroed, so that what a relaunch writes shows.
    fill(p, MIB, 0, &s)?;
    let again = x.launch(s.0);
    s.sync()?;
    if auto_free {
        ok("cuGraphLaunch (allocation live, AUTO_FREE_ON_LAUNCH)", again)?;
        holds(p, MIB, 0x5a, "after the relaunch")?;
    } else {
        // cuGraphLaunch's documentation: relaunching a graph whose allocation is still live fails
        // with INVALID_VALUE unless it was instantiated with AUTO_FREE_ON_LAUNCH.
        expect(
            "cuGraphLaunch (allocation live, no AUTO_FREE_ON_LAUNCH)",
            again,
            CUresult::CUDA_ERROR_INVALID_VALUE,
        )?;
        holds(p, MIB, 0, "after the refused relaunch")?;
    }
    // Zeroed and freed outside the graph, after the launch; the graph launches again and
    // allocates and fills the same address.
    fill(p, MIB, 0, &s)?;
    live.free()?;
    ok("cuGraphLaunch (after the free)", x.launch(s.0))?;
    let mut live = LiveGraphAlloc { p, s: &s, live: true };
    s.sync()?;
    holds(p, MIB, 0x5a, "after the launch that followed the free")?;
    live.free()?;
    drop(x);
    drop(g);
    graph_memory_released(dev, graph_start)
}

/// One pool call made while a stream captures: what it answers, and whether the capture survives.
struct DuringCapture {
    api: u32,
    name: &'static str,
    /// The call's expected answer: a declared departure of the driver (`driver/departures.rs`), or a
    /// documented code.
    want: Want,
    /// Whether the capture is still active after the call is refused (it must be after a success).
    survives: bool,
    /// The call, given the capturing stream and the pools made before the capture began.
    op: fn(CUstream, &Pools) -> CUresult,
    needs: Option<Cap>,
}

/// The pools a call during capture may use, made before the capture began.
struct Pools {
    own: Pool,
    /// An IPC-capable pool (POSIX fd handles), where the trial needs one.
    ipc: Option<Pool>,
}

fn trim_op(_: CUstream, p: &Pools) -> CUresult {
    unsafe { cuMemPoolTrimTo(p.own.0, 0) }
}
fn get_attr_op(_: CUstream, p: &Pools) -> CUresult {
    let mut v: u64 = 0;
    unsafe {
        cuMemPoolGetAttribute(
            p.own.0,
            A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
            (&mut v as *mut u64).cast(),
        )
    }
}
fn set_attr_op(_: CUstream, p: &Pools) -> CUresult {
    let mut v: u64 = 4 * MIB as u64;
    unsafe {
        cuMemPoolSetAttribute(
            p.own.0,
            A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut v as *mut u64).cast(),
        )
    }
}
fn ipc_pool_alloc_op(s: CUstream, pools: &Pools) -> CUresult {
    let Some(ipc) = &pools.ipc else {
        return CUresult::CUDA_ERROR_UNKNOWN;
    };
    let mut p: CUdeviceptr = 0;
    let r = unsafe { cuMemAllocFromPoolAsync(&mut p, MIB, ipc.0, s) };
    if r == SUCCESS {
        let _ = unsafe { cuMemFreeAsync(p, s) };
    }
    r
}
fn legacy_alloc_op(_: CUstream, _: &Pools) -> CUresult {
    let mut p: CUdeviceptr = 0;
    let r = unsafe { cuMemAllocAsync(&mut p, MIB, CU_STREAM_LEGACY) };
    if r == SUCCESS {
        let _ = unsafe { cuMemFreeAsync(p, CU_STREAM_LEGACY) };
    }
    r
}

enum Want {
    Departure(&'static str),
    Documented(CUresult),
}

/// The documentation does not list the pool calls among those a global-mode capture prohibits, nor
/// what they answer during one: R580's answers (580.159.04, H100, 2026-11-22) are declared
/// departures, hence the `_driver_behaviour` names; other drivers are held to the calls' own error
/// lists (success, and the capture goes on).
const DURING: &[DuringCapture] = &[
    // R580: the pool calls that are not stream-ordered count as unsafe in a global-mode capture:
    // refused with STREAM_CAPTURE_UNSUPPORTED, and the capture is invalidated.
    DuringCapture {
        api: 833,
        name: "trim_to_unsupported_and_invalidates_driver_behaviour",
        want: Want::Departure("trim_during_global_capture_unsupported"),
        survives: false,
        op: trim_op,
        needs: None,
    },
    DuringCapture {
        api: 828,
        name: "get_attribute_unsupported_and_invalidates_driver_behaviour",
        want: Want::Departure("get_attribute_during_global_capture_unsupported"),
        survives: false,
        op: get_attr_op,
        needs: None,
    },
    DuringCapture {
        api: 832,
        name: "set_attribute_unsupported_and_invalidates_driver_behaviour",
        want: Want::Departure("set_attribute_during_global_capture_unsupported"),
        survives: false,
        op: set_attr_op,
        needs: None,
    },
    // Graph allocations cannot be shared between processes. R580 refuses an exportable pool with
    // NOT_SUPPORTED, and the capture goes on.
    DuringCapture {
        api: 821,
        name: "ipc_capable_pool_refused_capture_survives_driver_behaviour",
        want: Want::Departure("ipc_pool_alloc_during_capture_not_supported"),
        survives: true,
        op: ipc_pool_alloc_op,
        needs: Some(Cap::Ipc),
    },
    // The legacy stream synchronises with every blocking stream, the capturing one included: an
    // implicit dependency on a capture, which global mode refuses (STREAM_CAPTURE_IMPLICIT) and
    // which invalidates the capture (as the documentation describes for the legacy stream).
    DuringCapture {
        api: 820,
        name: "alloc_on_legacy_stream_implicit_and_invalidates",
        want: Want::Documented(CUresult::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT),
        survives: false,
        op: legacy_alloc_op,
        needs: None,
    },
];

fn during_capture(e: &Env, d: &DuringCapture) -> R {
    let pools = Pools {
        own: Pool::on_device(e.dev)?,
        ipc: match d.needs {
            Some(Cap::Ipc) => Some(Pool::ipc(e.dev)?),
            _ => None,
        },
    };
    // A blocking stream, so that the legacy stream's implicit synchronisation applies to it.
    let mut raw = std::ptr::null_mut();
    ok("cuStreamCreate", unsafe { cuStreamCreate(&mut raw, 0) })?;
    let s = Stream(raw);
    let (work, end, g) = capture(s.0, M::CU_STREAM_CAPTURE_MODE_GLOBAL, |c| {
        let r = (d.op)(c, &pools);
        let st = status(c)?;
        Ok((r, st))
    })?;
    drop(g);
    let (r, st) = work?;
    let survived = st == CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE;
    note(format!(
        "during global capture: {}, capture {:?}, cuStreamEndCapture {}",
        code_name(r),
        st,
        code_name(end)
    ));
    let what = format!("{} during a global-mode capture", crate::driver::api_name(d.api));
    let checked = match d.want {
        Want::Departure(id) => expect_code(id, &what, r),
        Want::Documented(code) => expect(&what, r, code),
    };
    let survives = r == SUCCESS || d.survives;
    let ended = if survives {
        ok("cuStreamEndCapture", end)
    } else {
        expect(
            "cuStreamEndCapture (capture invalidated)",
            end,
            CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
        )
    };
    checked?;
    ensure!(
        survived == survives,
        "after {what} the capture is {st:?}; expected it {}",
        if survives { "still active" } else { "invalidated" }
    );
    ended
}

/// A pool call that is not stream-ordered, made while a stream captures.
#[derive(Clone, Copy)]
enum PoolCall {
    /// cuMemPoolSetAttribute(RELEASE_THRESHOLD, 7 MiB) on a new pool.
    SetThreshold,
    /// cuMemPoolTrimTo(0) on a pool holding 32 MiB reserved and nothing in use.
    TrimToZero,
}
const THRESHOLD: u64 = 7 * MIB as u64;

/// In any capture mode, `call` either takes effect (it answers success, the capture goes on, and
/// once it has ended the pool shows the call's effect) or is refused and invalidates the capture.
/// A success that did nothing fails: an interposer that defers or drops pool calls while a capture
/// is under way. The capturing stream is blocking, as a default-flag stream of an application is.
fn takes_effect_or_invalidates(e: &Env, mode: M, call: PoolCall) -> R {
    let pool = Pool::on_device(e.dev)?;
    if let PoolCall::TrimToZero = call {
        set_u64(pool.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
        let s = Stream::new()?;
        let a = alloc_from(pool.0, 32 * MIB, s.0)?;
        free_async(a, s.0)?;
        s.sync()?;
        let r = get_u64(pool.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
        ensure!(r >= 32 * MIB as u64, "only {r} bytes reserved before the capture");
    }
    let mut raw = std::ptr::null_mut();
    ok("cuStreamCreate", unsafe { cuStreamCreate(&mut raw, 0) })?;
    let s = Stream(raw);
    let (work, end, g) = capture(s.0, mode, |c| {
        let r = match call {
            PoolCall::SetThreshold => {
                let mut v = THRESHOLD;
                unsafe {
                    cuMemPoolSetAttribute(
                        pool.0,
                        A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                        (&mut v as *mut u64).cast(),
                    )
                }
            }
            PoolCall::TrimToZero => unsafe { cuMemPoolTrimTo(pool.0, 0) },
        };
        Ok((r, status(c)?))
    })?;
    drop(g);
    let (r, st) = work?;
    note(format!(
        "during the capture: {}, capture {st:?}, cuStreamEndCapture {}",
        code_name(r),
        code_name(end)
    ));
    let what = match call {
        PoolCall::SetThreshold => "cuMemPoolSetAttribute(RELEASE_THRESHOLD) during a capture",
        PoolCall::TrimToZero => "cuMemPoolTrimTo(0) during a capture",
    };
    if r != SUCCESS {
        return expect(
            &format!("cuStreamEndCapture after {what} was refused ({})", code_name(r)),
            end,
            CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
        );
    }
    ensure!(
        st == CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE,
        "{what} answered success and left the capture {st:?}"
    );
    ok("cuStreamEndCapture", end)?;
    match call {
        PoolCall::SetThreshold => {
            let v = get_u64(pool.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)?;
            ensure!(
                v == THRESHOLD,
                "{what} answered success, but the threshold reads {v} after the capture, not {THRESHOLD}"
            );
        }
        PoolCall::TrimToZero => {
            let v = get_u64(pool.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
            ensure!(
                v == 0,
                "{what} answered success, but {v} bytes are still reserved after the capture"
            );
        }
    }
    Ok(())
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for &(mode_name, mode) in MODES {
        for (api, via) in [(820, Via::Current), (821, Via::OwnPool)] {
            v.push(
                Case::gpu(
                    api,
                    format!("capture::alloc_and_free_become_graph_nodes_{mode_name}_mode"),
                    move |e| alloc_free_nodes(e.dev, mode, via),
                )
                .alone(),
            );
        }
    }
    v.push(
        Case::gpu(820, "capture::relaunch_while_allocation_live_refused", |e| {
            freed_outside(e.dev, false)
        })
        .alone(),
    );
    v.push(
        Case::gpu(820, "capture::auto_free_on_launch_relaunch_frees_first", |e| {
            freed_outside(e.dev, true)
        })
        .alone(),
    );
    for &(mode_name, mode) in MODES {
        // Kills 832-noop-during-capture.
        v.push(
            Case::gpu(
                832,
                format!("capture::set_attribute_during_{mode_name}_capture_takes_effect_or_invalidates"),
                move |e| takes_effect_or_invalidates(e, mode, PoolCall::SetThreshold),
            )
            .alone(),
        );
        // Kills 833-noop-during-capture.
        v.push(
            Case::gpu(
                833,
                format!("capture::trim_to_during_{mode_name}_capture_takes_effect_or_invalidates"),
                move |e| takes_effect_or_invalidates(e, mode, PoolCall::TrimToZero),
            )
            .alone(),
        );
    }
    for d in DURING {
        let mut c = Case::gpu(d.api, format!("capture::during_global_capture_{}", d.name), move |e| {
            during_capture(e, d)
        })
        .alone();
        if let Some(cap) = d.needs {
            c = c.needs(cap);
        }
        v.push(c);
    }
    v
}
