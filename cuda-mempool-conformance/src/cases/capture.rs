//! Stream-ordered allocation under stream capture (trials named `…::capture::…`): what
//! cuMemAllocAsync (820), cuMemAllocFromPoolAsync (821) and cuMemFreeAsync (822) do on a capturing
//! stream in each capture mode — graph memory nodes instead of allocations, the address fixed at
//! capture, relaunch rules with and without CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH, graph
//! memory accounting and trimming. What the pool APIs answer while a stream captures is
//! `pool_calls`'s.
//!
//! Every trial runs alone in its process (`alone`): a stream capturing in global mode makes
//! other threads' unsafe calls fail. Each ends its capture on every path, destroys its graphs and
//! trims the device's graph memory, and checks that none is left.

mod pool_calls;

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
pub(super) struct Graph(pub(super) CUgraph);
impl Drop for Graph {
    fn drop(&mut self) {
        let _ = unsafe { cuGraphDestroy(self.0) };
    }
}

/// An instantiated graph; destroyed on drop.
pub(super) struct Exec(pub(super) CUgraphExec);
impl Exec {
    fn new(g: &Graph, flags: u64) -> R<Exec> {
        let mut e = std::ptr::null_mut();
        ok("cuGraphInstantiateWithFlags", unsafe {
            cuGraphInstantiateWithFlags(&mut e, g.0, flags)
        })?;
        Ok(Exec(e))
    }
    pub(super) fn launch(&self, s: CUstream) -> CUresult {
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
pub(super) fn capture<T>(
    s: CUstream,
    mode: M,
    work: impl FnOnce(CUstream) -> R<T>,
) -> R<(R<T>, CUresult, Option<Graph>)> {
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

/// A graph allocation live after a launch (or a pool's allocation a trial keeps live): freed (and
/// the stream synchronised) on every path, so that a failing check leaves no memory behind for the
/// worker's next trial.
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
    v.extend(pool_calls::cases());
    v
}
