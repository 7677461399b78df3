//! Allocations and frees captured into a graph (820, 821, 822): graph memory nodes instead of
//! allocations, the address fixed at capture, relaunch rules with and without AUTO_FREE_ON_LAUNCH,
//! and the device's graph memory given back.

use super::graph::{capture, status, Exec, Graph, LiveGraphAlloc, MODES};
use crate::cases::prelude::*;

use CUmemPool_attribute as A;
use CUstreamCaptureMode as M;
const MIB: usize = 1 << 20;

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

/// The captured allocation trials, each alone in its process.
pub(super) fn cases() -> Vec<Case> {
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
    v
}
