//! The `vaspace` child: each step's call between two readings of /proc/self/maps, RLIMIT_AS set
//! around the calls that need it, and each answer sent to the parent as soon as it is known.

use super::steps::*;
use crate::cases::messages::recv;
use crate::cases::prelude::*;
use crate::harness::channel::{unhex, Channel};
use crate::harness::channel::{LostStep, Step as StepMsg};
use crate::harness::kept_children::KeptWord;
use serde::Serialize;
use serde_json::Value;
use std::os::fd::{AsRawFd, OwnedFd};

/// How far above its size at the time the RLIMIT_AS child's address space may grow: room for the
/// calls' own bookkeeping, far below the reservation public reports give (1 GiB and more).
const RLIMIT_MARGIN: u64 = 256 * MIB as u64;

/// A process's mappings, `[start, end)`, sorted and merged.
type Maps = Vec<(u64, u64)>;

/// This process's mappings now.
fn maps() -> R<Maps> {
    let text = std::fs::read_to_string("/proc/self/maps").map_err(|e| format!("/proc/self/maps: {e}"))?;
    let mut v: Maps = Vec::new();
    for line in text.lines() {
        let range = line.split_whitespace().next().unwrap_or("");
        let (a, b) = range.split_once('-').ok_or_else(|| format!("odd maps line {line:?}"))?;
        let a = u64::from_str_radix(a, 16).map_err(|e| format!("maps line {line:?}: {e}"))?;
        let b = u64::from_str_radix(b, 16).map_err(|e| format!("maps line {line:?}: {e}"))?;
        v.push((a, b));
    }
    v.sort_unstable();
    let mut merged: Maps = Vec::with_capacity(v.len());
    for (a, b) in v {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    Ok(merged)
}

/// The parts of `a` that `b` does not cover.
fn minus(a: &Maps, b: &Maps) -> Maps {
    let mut out = Vec::new();
    let mut j = 0;
    for &(mut s, e) in a {
        while j < b.len() && b[j].1 <= s {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            if b[k].0 > s {
                out.push((s, b[k].0));
            }
            s = s.max(b[k].1);
            k += 1;
        }
        if s < e {
            out.push((s, e));
        }
    }
    out
}

fn bytes(m: &Maps) -> u64 {
    m.iter().map(|(a, b)| b - a).sum()
}

/// Bytes mapped in `after` that `before` did not map.
fn appeared(before: &Maps, after: &Maps) -> u64 {
    bytes(&minus(after, before))
}

/// Of the mappings `new` (what a call mapped), the bytes `now` still maps.
fn still_mapped(new: &Maps, now: &Maps) -> u64 {
    bytes(new) - bytes(&minus(new, now))
}

/// Child role `vaspace`: every step of [`STEPS`] in order, each answer sent as soon as it is
/// known (a step that fails answers why; one that kills the child leaves the earlier answers).
/// `settings`: the child's, as its entry point read them.
pub fn child_main(settings: &std::sync::Arc<crate::harness::settings::Settings>) -> i32 {
    let chan = match Channel::from_inherited(settings.deadline()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("vaspace: {e}");
            return 1;
        }
    };
    let on = |dev| {
        Env::on(
            std::sync::Arc::new(crate::harness::probe::probe(settings)),
            settings.clone(),
            dev,
        )
    };
    // Started ahead (`harness::kept_children::warm`): the context first, then the wait for the trial.
    let mut early = None;
    if crate::harness::kept_children::started_ahead() {
        let dev = crate::cases::xproc::importer_device();
        early = Some((dev, on(dev)));
        if let Err(e) = chan
            .send(&KeptWord::Ready, None)
            .and_then(|()| chan.set_timeout(crate::harness::kept_children::KEPT_IDLE))
        {
            eprintln!("vaspace: {e}");
            return 1;
        }
    }
    let answer = recv(&chan).and_then(|(ToChild::Measure { dev, data }, fd)| {
        let env = match early {
            Some((d, env)) if d == dev => env,
            _ => on(dev),
        };
        env.bind();
        let mut device = None;
        for &(key, step) in STEPS {
            let got = measure(step, dev, fd.as_ref(), data.as_deref())
                .unwrap_or_else(|e| LostStep::answer(format!("the vaspace child reported: {e}"), blame::get()));
            blame::reset();
            // Read after the first step, which must be the process's first pool call.
            let device = match device {
                Some(d) => d,
                None => *device.insert(mem_info()?.1),
            };
            let value = OnDevice {
                got,
                device: device as u64,
            };
            chan.send(&StepMsg::Answer { key: key.into(), value }, None)?;
        }
        chan.send(&StepMsg::<Value>::Done, None)
    });
    match answer {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("vaspace: {e}");
            chan.send_error(e.message());
            1
        }
    }
}

/// One step; the offered pool's fd (the parent's, kept open for both imports) is imported
/// through a copy of its own each time, so that one import cannot spoil the other's.
fn measure(step: Step, dev: CUdevice, offered: Option<&OwnedFd>, data: Option<&str>) -> R<Value> {
    let own_copy = || -> R<OwnedFd> {
        let fd = offered.ok_or("no pool was offered to import")?;
        Ok(fd.try_clone().map_err(|e| format!("dup of the offered fd: {e}"))?)
    };
    match step {
        Step::DefaultPool => json(default_pool_query(dev)?),
        Step::Create(max) => json(create(dev, max)?),
        Step::Import => json(import(&own_copy()?, data)?),
        Step::Graph => json(graph(dev)?),
        Step::Rlimit("import") => json(rlimit(dev, "import", Some(&own_copy()?))?),
        Step::Rlimit(what) => json(rlimit(dev, what, None)?),
    }
}

/// A step's answer as it goes in the message.
fn json<T: Serialize>(got: T) -> R<Value> {
    crate::cases::messages::to_json(&got)
}

fn default_pool_query(dev: CUdevice) -> R<DefaultPool> {
    let (mut p1, mut p2, mut p3) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    let m0 = maps()?;
    let first = unsafe { cuDeviceGetDefaultMemPool(&mut p1, dev) };
    let m1 = maps()?;
    let _ = unsafe { cuDeviceGetDefaultMemPool(&mut p2, dev) };
    let current = unsafe { cuDeviceGetMemPool(&mut p3, dev) };
    let m2 = maps()?;
    Ok(DefaultPool {
        first: first.0,
        current: current.0,
        same: p1 == p2 && p1 == p3,
        took: appeared(&m0, &m1),
        again: appeared(&m1, &m2),
    })
}

fn create(dev: CUdevice, max: usize) -> R<Create> {
    let mut props = device_props(dev);
    props.maxSize = max;
    let mut p = std::ptr::null_mut();
    let m0 = maps()?;
    let r = unsafe { cuMemPoolCreate(&mut p, &props) };
    let m1 = maps()?;
    let mut v = Create {
        create: r.0,
        took: appeared(&m0, &m1),
        ..Create::default()
    };
    if r == SUCCESS {
        v.destroy = Some(unsafe { cuMemPoolDestroy(p) }.0);
        v.kept = Some(still_mapped(&minus(&m1, &m0), &maps()?));
    }
    Ok(v)
}

fn export_data(hex_data: Option<&str>) -> R<CUmemPoolPtrExportData> {
    let b = unhex(hex_data.ok_or("no export data")?)?;
    let mut d = CUmemPoolPtrExportData::default();
    ensure!(b.len() == d.reserved.len(), "export data has {} bytes", b.len());
    d.reserved.copy_from_slice(&b);
    Ok(d)
}

fn import(fd: &OwnedFd, hex_data: Option<&str>) -> R<Import> {
    let mut d = export_data(hex_data)?;
    let mut pool = std::ptr::null_mut();
    let m0 = maps()?;
    let r = import_pool_fd(fd.as_raw_fd(), &mut pool);
    let m1 = maps()?;
    let mut v = Import {
        pool: r.0,
        pool_took: appeared(&m0, &m1),
        ..Import::default()
    };
    if r != SUCCESS {
        return Ok(v);
    }
    let mut q: CUdeviceptr = 0;
    let rp = unsafe { cuMemPoolImportPointer(&mut q, pool, &mut d) };
    let m2 = maps()?;
    v.ptr = Some(rp.0);
    v.ptr_took = Some(appeared(&m1, &m2));
    if rp == SUCCESS {
        let mut host = vec![0u8; OFFER];
        let read = unsafe { cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), q, OFFER) };
        v.read_ok = Some(read == SUCCESS && host.iter().all(|&b| b == SEED));
        let s = Stream::new()?;
        v.free = Some(unsafe { cuMemFreeAsync(q, s.0) }.0);
        s.sync()?;
    }
    v.destroy = Some(unsafe { cuMemPoolDestroy(pool) }.0);
    v.kept = Some(still_mapped(&minus(&m2, &m0), &maps()?));
    Ok(v)
}

fn graph(dev: CUdevice) -> R<Graph> {
    let create: GraphCreate = proc_address(c"cuGraphCreate")?;
    let add: GraphAddMemAllocNode = proc_address(c"cuGraphAddMemAllocNode")?;
    let new_graph = || -> R<CUgraph> {
        let mut g: CUgraph = std::ptr::null_mut();
        ok("cuGraphCreate", unsafe { create(&mut g, 0) })?;
        Ok(g)
    };
    let node_of = |g: CUgraph, max: usize| {
        let mut params = CUDA_MEM_ALLOC_NODE_PARAMS {
            poolProps: device_props(dev),
            bytesize: 2 * MIB,
            ..Default::default()
        };
        params.poolProps.maxSize = max;
        let mut node: CUgraphNode = std::ptr::null_mut();
        unsafe { add(&mut node, g, std::ptr::null(), 0, &mut params) }
    };
    let g = new_graph()?;
    let m0 = maps()?;
    let node = node_of(g, 0);
    let m1 = maps()?;
    let small = node_of(g, 2 * MIB);
    let m2 = maps()?;
    let _ = unsafe { cuGraphDestroy(g) };
    let _ = unsafe { cuDeviceGraphMemTrim(dev) };
    let m3 = maps()?;
    // A second graph once the first is destroyed and the device's graph memory trimmed.
    let g = new_graph()?;
    let again = node_of(g, 0);
    let m4 = maps()?;
    let _ = unsafe { cuGraphDestroy(g) };
    let _ = unsafe { cuDeviceGraphMemTrim(dev) };
    Ok(Graph {
        node: node.0,
        small: small.0,
        again: again.0,
        node_took: appeared(&m0, &m1),
        small_took: appeared(&m1, &m2),
        kept: still_mapped(&minus(&m2, &m0), &m3),
        again_took: appeared(&m3, &m4),
    })
}

/// This process's address space now (VmSize), in bytes.
fn vm_size() -> R<u64> {
    let s = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("/proc/self/status: {e}"))?;
    let kb = s
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|l| l.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .ok_or("no VmSize in /proc/self/status")?;
    Ok(kb * 1024)
}

/// Set RLIMIT_AS's soft limit (the hard one kept, so that it can be raised again).
fn set_as_limit(soft: u64) -> R<u64> {
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    ensure!(
        unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut old) } == 0,
        "getrlimit failed"
    );
    let new = libc::rlimit {
        rlim_cur: soft.min(old.rlim_max),
        rlim_max: old.rlim_max,
    };
    ensure!(
        unsafe { libc::setrlimit(libc::RLIMIT_AS, &new) } == 0,
        "setrlimit(RLIMIT_AS, {soft}): {}",
        std::io::Error::last_os_error()
    );
    Ok(old.rlim_cur)
}

/// `step` (create, import, free) with the address space limited to its size now plus
/// `RLIMIT_MARGIN`; what it needs beforehand (a context, an allocation to free) made first, and
/// the limit restored after it.
fn rlimit(dev: CUdevice, step: &str, fd: Option<&OwnedFd>) -> R<Rlimit> {
    let s = Stream::new()?;
    let held = if step == "free" { alloc_async(2 * MIB, s.0)? } else { 0 };
    s.sync()?;
    let props = device_props(dev);
    let mut pool = std::ptr::null_mut();
    // Everything that can fail comes before the limit: the steps after this one run without it.
    let raw = match (step, fd) {
        ("import", None) => return Err("import without an fd".into()),
        (_, fd) => fd.map(|f| f.as_raw_fd()),
    };
    let vm = vm_size()?;
    let old = set_as_limit(vm + RLIMIT_MARGIN)?;
    let r = match (step, raw) {
        ("create", _) => unsafe { cuMemPoolCreate(&mut pool, &props) },
        ("import", Some(raw)) => import_pool_fd(raw, &mut pool),
        ("free", _) => unsafe { cuMemFreeAsync(held, s.0) },
        (other, _) => {
            set_as_limit(old)?;
            return Err(format!("unknown RLIMIT_AS step {other:?}").into());
        }
    };
    let synced = unsafe { cuStreamSynchronize(s.0) };
    set_as_limit(old)?;
    if step == "free" && r != SUCCESS {
        free_async(held, s.0)?;
    }
    if !pool.is_null() && r == SUCCESS {
        ok("cuMemPoolDestroy (after RLIMIT_AS)", unsafe { cuMemPoolDestroy(pool) })?;
    }
    s.sync()?;
    Ok(Rlimit {
        code: r.0,
        synced: synced.0,
        vm_size: vm,
        limit: vm + RLIMIT_MARGIN,
    })
}
