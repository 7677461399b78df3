//! Virtual address space (issue 38): what each pool call reserves, as a child's /proc/self/maps sees it.
//!
//! Each trial starts one `vaspace` child (this binary re-executed, reached over a `channel::Peer`)
//! that reads its maps before and after the call, so that the first default-pool query happens in
//! a fresh process. The figures (bytes that appeared, and their ratio to the device's memory) go
//! into the report as notes of a fixed wording, `vaspace <what>: <bytes> bytes, <ratio>x device
//! memory (<device> bytes)`, and as observations; only what is certain is judged: a destroyed pool
//! gives back what its creation (or import) took, and under RLIMIT_AS the calls answer a code (the
//! documentation allows SUCCESS or OUT_OF_MEMORY) instead of killing or hanging the process.

use crate::cases::prelude::*;
use crate::harness::channel::{hex, unhex, Channel, Peer};
use serde_json::{json, Value};
use std::ffi::{c_uint, CStr};
use std::os::fd::{AsRawFd, OwnedFd};

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// What may stay mapped after a pool's destruction out of what its creation or import mapped
/// (driver bookkeeping, a malloc arena): far below any reservation of a pool.
const KEPT_TOLERANCE: u64 = 64 * MIB as u64;
/// How far above its size at the time the RLIMIT_AS child's address space may grow: room for the
/// calls' own bookkeeping, far below the reservation public reports give (1 GiB and more).
const RLIMIT_MARGIN: u64 = 256 * MIB as u64;
/// The bytes the import trials offer, with this seed's pattern.
const OFFER: usize = 64 * KIB;
const SEED: u8 = 0x5a;

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

fn code_of(a: &Value, key: &str) -> R<CUresult> {
    let c = a[key]
        .as_u64()
        .ok_or_else(|| format!("the vaspace child's answer has no code {key}: {a}"))?;
    Ok(CUresult(c as u32))
}

fn u64_of(a: &Value, key: &str) -> u64 {
    a[key].as_u64().unwrap_or(0)
}

/// Start a `vaspace` child on the case's device, hand it `msg` (and `fd`), and wait for its answer.
fn ask(env: &Env, mut msg: Value, fd: Option<&OwnedFd>) -> R<Value> {
    msg["op"] = json!("measure");
    msg["dev"] = json!(env.dev);
    let peer = Peer::spawn(&Role::VaSpace, &[], crate::driver::deadline::importer_step())?;
    let got = peer
        .chan
        .send(&msg, fd.map(|f| f.as_raw_fd()))
        .and_then(|()| peer.chan.recv());
    match got {
        Ok((m, _)) if m["op"] == "answer" => {
            peer.finish()?;
            Ok(m["value"].clone())
        }
        Ok((m, _)) => Err(peer.fail(format!("the vaspace child answered {m}")).into()),
        Err(e) => Err(peer.fail(e.to_string()).into()),
    }
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
fn create_gives_back(e: &Env, max: usize, what: &str) -> R {
    let a = ask(e, json!({"name": "create", "max": max}), None)?;
    expect(
        &format!("cuMemPoolCreate(maxSize {what}, in the vaspace child)"),
        code_of(&a, "create")?,
        SUCCESS,
    )?;
    expect(
        &format!("cuMemPoolDestroy(maxSize {what}, in the vaspace child)"),
        code_of(&a, "destroy")?,
        SUCCESS,
    )?;
    let (took, kept, dev) = (u64_of(&a, "took"), u64_of(&a, "kept"), u64_of(&a, "device"));
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
    if kept > KEPT_TOLERANCE {
        blame::set(824);
        return Err(format!(
            "cuMemPoolDestroy left {kept} bytes mapped of the {took} that cuMemPoolCreate(maxSize {what}) mapped \
             (more than {KEPT_TOLERANCE}): the pool's address space is not given back"
        )
        .into());
    }
    Ok(())
}

/// One RLIMIT_AS trial: `step` run in a child whose address space may grow by `RLIMIT_MARGIN`
/// alone: a code (SUCCESS, or OUT_OF_MEMORY where the reservation does not fit), never a crash or
/// a hang (the child's loss fails the trial with where it died). Kills 822-rlimit-crashes.
fn under_rlimit(e: &Env, step: &str, call: &str) -> R {
    let o = if step == "import" {
        Some(Offer::new(e.dev)?)
    } else {
        None
    };
    let a = ask(e, json!({"name": "rlimit", "step": step}), o.as_ref().map(|o| &o.fd))?;
    let r = code_of(&a, "code")?;
    note(format!(
        "vaspace RLIMIT_AS {}: {call} answered {} (address space {} bytes, limit {} bytes)",
        step,
        code_name(r),
        u64_of(&a, "vm_size"),
        u64_of(&a, "limit")
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

/// The address-space cases.
pub fn cases() -> Vec<Case> {
    vec![
        // Figure: the first default-pool query of a fresh process (cuDeviceGetDefaultMemPool), then
        // a second one and cuDeviceGetMemPool; the same pool each time. Public figure (cuda-python
        // #2381): 2.00x device memory, for the life of the process. It judges only the codes and
        // that the second query maps nothing more than the tolerance; it exists for the figure.
        Case::gpu(823, "vaspace::first_default_pool_query_figure", |e| {
            let a = ask(e, json!({"name": "default_pool"}), None)?;
            expect(
                "cuDeviceGetDefaultMemPool (first, in the vaspace child)",
                code_of(&a, "first")?,
                SUCCESS,
            )?;
            expect(
                "cuDeviceGetMemPool (in the vaspace child)",
                code_of(&a, "current")?,
                SUCCESS,
            )?;
            let dev = u64_of(&a, "device");
            figure("first cuDeviceGetDefaultMemPool", u64_of(&a, "took"), dev);
            figure("second default-pool query", u64_of(&a, "again"), dev);
            ensure!(
                a["same"] == true,
                "the second default-pool query answered another pool than the first: {a}"
            );
            ensure!(
                u64_of(&a, "again") <= KEPT_TOLERANCE,
                "the second default-pool query mapped {} more bytes",
                u64_of(&a, "again")
            );
            Ok(())
        }),
        Case::gpu(823, "vaspace::create_max_size_0_destroy_gives_back", |e| {
            create_gives_back(e, 0, "0")
        }),
        Case::gpu(823, "vaspace::create_max_size_2_mib_destroy_gives_back", |e| {
            create_gives_back(e, 2 * MIB, "2 MiB")
        }),
        Case::gpu(823, "vaspace::create_max_size_1_gib_destroy_gives_back", |e| {
            create_gives_back(e, 1024 * MIB, "1 GiB")
        }),
        // Figures of one import of a shareable handle and of one pointer's export data (PyTorch
        // #186213: about 9/8 of device memory per handle); the import reads the exporter's bytes
        // and the imported pool's destruction gives back what the imports mapped. Kills
        // 829-import-keeps-address-space.
        Case::gpu(829, "vaspace::import_figures_and_destroy_gives_back", |e| {
            let o = Offer::new(e.dev)?;
            let a = ask(e, json!({"name": "import", "data": o.data()?}), Some(&o.fd))?;
            expect(
                "cuMemPoolImportFromShareableHandle (in the vaspace child)",
                code_of(&a, "pool")?,
                SUCCESS,
            )?;
            expect(
                "cuMemPoolImportPointer (in the vaspace child)",
                code_of(&a, "ptr")?,
                SUCCESS,
            )?;
            ensure!(
                a["read_ok"] == true,
                "the import does not read the exporter's bytes: {a}"
            );
            expect(
                "cuMemFreeAsync(the import, in the vaspace child)",
                code_of(&a, "free")?,
                SUCCESS,
            )?;
            expect(
                "cuMemPoolDestroy(the imported pool, in the vaspace child)",
                code_of(&a, "destroy")?,
                SUCCESS,
            )?;
            let dev = u64_of(&a, "device");
            figure("cuMemPoolImportFromShareableHandle", u64_of(&a, "pool_took"), dev);
            figure("cuMemPoolImportPointer", u64_of(&a, "ptr_took"), dev);
            let kept = u64_of(&a, "kept");
            note(format!(
                "vaspace imported pool destroyed: {kept} bytes of the imports' still mapped"
            ));
            if kept > KEPT_TOLERANCE {
                blame::set(829);
                return Err(format!(
                    "the imported pool's destruction left {kept} bytes mapped of what its imports mapped (more than \
                     {KEPT_TOLERANCE})"
                )
                .into());
            }
            Ok(())
        })
        .needs(Cap::Ipc),
        // Figures of cuGraphAddMemAllocNode with maxSize 0 and 2 MiB in the pool properties (public
        // figure: 2.00x device memory, maxSize ignored) and what the graph's destruction gives
        // back. Recorded only (nothing documents them): it fails where the node cannot be added.
        Case::gpu(820, "vaspace::graph_alloc_node_figures", |e| {
            let a = ask(e, json!({"name": "graph"}), None)?;
            expect(
                "cuGraphAddMemAllocNode(maxSize 0, in the vaspace child)",
                code_of(&a, "node")?,
                SUCCESS,
            )?;
            expect(
                "cuGraphAddMemAllocNode(maxSize 2 MiB, in the vaspace child)",
                code_of(&a, "small")?,
                SUCCESS,
            )?;
            let dev = u64_of(&a, "device");
            figure("cuGraphAddMemAllocNode maxSize 0", u64_of(&a, "node_took"), dev);
            figure("cuGraphAddMemAllocNode maxSize 2 MiB", u64_of(&a, "small_took"), dev);
            note(format!(
                "vaspace cuGraphDestroy: {} bytes of the nodes' still mapped",
                u64_of(&a, "kept")
            ));
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
    ]
}

/// Child role `vaspace`: one measurement, as the exporter's message names it; its answer.
pub fn child_main() -> i32 {
    let chan = match Channel::from_inherited() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("vaspace: {e}");
            return 1;
        }
    };
    let answer = chan.recv().and_then(|(m, fd)| {
        let dev = m["dev"].as_i64().unwrap_or(0) as CUdevice;
        let env = Env::on(std::sync::Arc::new(crate::harness::probe::probe()), dev);
        env.bind();
        let mut v = measure(&m, fd, dev)?;
        v["device"] = json!(mem_info()?.1);
        chan.send(&json!({"op": "answer", "value": v}), None)
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

fn measure(m: &Value, fd: Option<OwnedFd>, dev: CUdevice) -> R<Value> {
    match m["name"].as_str() {
        Some("default_pool") => default_pool_query(dev),
        Some("create") => create(dev, m["max"].as_u64().unwrap_or(0) as usize),
        Some("import") => import(&fd.ok_or("import without an fd")?, &m["data"]),
        Some("graph") => graph(dev),
        Some("rlimit") => rlimit(dev, m["step"].as_str().unwrap_or(""), fd),
        other => Err(format!("unknown measurement {other:?}").into()),
    }
}

fn default_pool_query(dev: CUdevice) -> R<Value> {
    let (mut p1, mut p2, mut p3) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    let m0 = maps()?;
    let first = unsafe { cuDeviceGetDefaultMemPool(&mut p1, dev) };
    let m1 = maps()?;
    let _ = unsafe { cuDeviceGetDefaultMemPool(&mut p2, dev) };
    let current = unsafe { cuDeviceGetMemPool(&mut p3, dev) };
    let m2 = maps()?;
    Ok(json!({
        "first": first.0, "current": current.0, "same": p1 == p2 && p1 == p3,
        "took": appeared(&m0, &m1), "again": appeared(&m1, &m2),
    }))
}

fn create(dev: CUdevice, max: usize) -> R<Value> {
    let mut props = device_props(dev);
    props.maxSize = max;
    let mut p = std::ptr::null_mut();
    let m0 = maps()?;
    let r = unsafe { cuMemPoolCreate(&mut p, &props) };
    let m1 = maps()?;
    let mut v = json!({"create": r.0, "took": appeared(&m0, &m1)});
    if r == SUCCESS {
        v["destroy"] = json!(unsafe { cuMemPoolDestroy(p) }.0);
        v["kept"] = json!(still_mapped(&minus(&m1, &m0), &maps()?));
    }
    Ok(v)
}

fn export_data(hex_data: &Value) -> R<CUmemPoolPtrExportData> {
    let b = unhex(hex_data.as_str().ok_or("no export data")?)?;
    let mut d = CUmemPoolPtrExportData::default();
    ensure!(b.len() == d.reserved.len(), "export data has {} bytes", b.len());
    d.reserved.copy_from_slice(&b);
    Ok(d)
}

fn import(fd: &OwnedFd, hex_data: &Value) -> R<Value> {
    let mut d = export_data(hex_data)?;
    let mut pool = std::ptr::null_mut();
    let m0 = maps()?;
    let r = import_pool_fd(fd.as_raw_fd(), &mut pool);
    let m1 = maps()?;
    let mut v = json!({"pool": r.0, "pool_took": appeared(&m0, &m1)});
    if r != SUCCESS {
        return Ok(v);
    }
    let mut q: CUdeviceptr = 0;
    let rp = unsafe { cuMemPoolImportPointer(&mut q, pool, &mut d) };
    let m2 = maps()?;
    v["ptr"] = json!(rp.0);
    v["ptr_took"] = json!(appeared(&m1, &m2));
    if rp == SUCCESS {
        let mut host = vec![0u8; OFFER];
        let read = unsafe { cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), q, OFFER) };
        v["read_ok"] = json!(read == SUCCESS && host.iter().all(|&b| b == SEED));
        let s = Stream::new()?;
        v["free"] = json!(unsafe { cuMemFreeAsync(q, s.0) }.0);
        s.sync()?;
    }
    v["destroy"] = json!(unsafe { cuMemPoolDestroy(pool) }.0);
    v["kept"] = json!(still_mapped(&minus(&m2, &m0), &maps()?));
    Ok(v)
}

/// cuGraphCreate and cuGraphAddMemAllocNode (CUDA 10.0 and 11.4 ABIs), beyond the table.
type GraphCreate = unsafe extern "C" fn(*mut CUgraph, c_uint) -> CUresult;
type AddMemAllocNode = unsafe extern "C" fn(
    *mut CUgraphNode,
    CUgraph,
    *const CUgraphNode,
    usize,
    *mut CUDA_MEM_ALLOC_NODE_PARAMS,
) -> CUresult;

fn function<F: Copy>(symbol: &CStr) -> R<F> {
    let (r, f) = beyond_table(symbol);
    ok(&format!("cuGetProcAddress({symbol:?})"), r)?;
    ensure!(
        !f.is_null(),
        "cuGetProcAddress({symbol:?}) answered SUCCESS and no function"
    );
    Ok(unsafe { std::mem::transmute_copy(&f) })
}

fn graph(dev: CUdevice) -> R<Value> {
    let create: GraphCreate = function(c"cuGraphCreate")?;
    let add: AddMemAllocNode = function(c"cuGraphAddMemAllocNode")?;
    let mut g: CUgraph = std::ptr::null_mut();
    ok("cuGraphCreate", unsafe { create(&mut g, 0) })?;
    let node_of = |max: usize| {
        let mut params = CUDA_MEM_ALLOC_NODE_PARAMS {
            poolProps: device_props(dev),
            bytesize: 2 * MIB,
            ..Default::default()
        };
        params.poolProps.maxSize = max;
        let mut node: CUgraphNode = std::ptr::null_mut();
        unsafe { add(&mut node, g, std::ptr::null(), 0, &mut params) }
    };
    let m0 = maps()?;
    let node = node_of(0);
    let m1 = maps()?;
    let small = node_of(2 * MIB);
    let m2 = maps()?;
    let _ = unsafe { cuGraphDestroy(g) };
    let _ = unsafe { cuDeviceGraphMemTrim(dev) };
    Ok(json!({
        "node": node.0, "small": small.0,
        "node_took": appeared(&m0, &m1), "small_took": appeared(&m1, &m2),
        "kept": still_mapped(&minus(&m2, &m0), &maps()?),
    }))
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
/// `RLIMIT_MARGIN`; what it needs beforehand (a context, an allocation to free) made first.
fn rlimit(dev: CUdevice, step: &str, fd: Option<OwnedFd>) -> R<Value> {
    let s = Stream::new()?;
    let held = if step == "free" { alloc_async(2 * MIB, s.0)? } else { 0 };
    s.sync()?;
    let props = device_props(dev);
    let mut pool = std::ptr::null_mut();
    let vm = vm_size()?;
    let old = set_as_limit(vm + RLIMIT_MARGIN)?;
    let r = match step {
        "create" => unsafe { cuMemPoolCreate(&mut pool, &props) },
        "import" => import_pool_fd(fd.as_ref().ok_or("import without an fd")?.as_raw_fd(), &mut pool),
        "free" => unsafe { cuMemFreeAsync(held, s.0) },
        other => {
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
    Ok(json!({"code": r.0, "synced": synced.0, "vm_size": vm, "limit": vm + RLIMIT_MARGIN}))
}
