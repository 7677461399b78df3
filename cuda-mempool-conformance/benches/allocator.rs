//! `cargo bench -p conformance`: what the bindings cost over C, and what stream-ordered allocation
//! buys, on the installed driver. Under `cargo test` (no `--bench` argument) it is a smoke run
//! with tiny counts. Without a GPU it says so and exits 0.
//!
//! Groups:
//!   1 ffi      the same cuMemAllocAsync + cuMemFreeAsync loop in C (benches/ffi_loop.c, through the
//!              table's function pointers) and in Rust (through the sys crate's entry-point table),
//!              alternated in one process; Rust/C time ratio per round.
//!   2 pairs    allocate + free + synchronise, per pair: cuMemAllocAsync (default pool),
//!              cuMemAllocFromPoolAsync (own pool), cuMemAlloc/cuMemFree; 256 B to 256 MiB;
//!              release threshold 0 and UINT64_MAX.
//!   3 reuse    allocate on stream 2 after an event wait on stream 1's free, event-dependency
//!              reuse on and off.
//!   4 ipc      cuMemPoolExportPointer in this process, cuMemPoolImportPointer in a child.
//!   5 threads  allocation + free throughput (64 KiB, each thread on a stream of its own, one
//!              synchronisation per batch) with 1, 4 and 16 threads: one pool shared by all, and
//!              one pool per thread.
//!   6 capture  a captured allocation at graph launch against a direct one: cuGraphLaunch of a
//!              captured alloc + free, of an empty captured graph, and cuMemAllocAsync +
//!              cuMemFreeAsync, each followed by a synchronisation.
//!   7 api      ns per call of each of the 14 APIs on its common path (allocator/api_costs.rs); compare two
//!              runs (the plain driver, the same under a library's LD_PRELOAD) with
//!              `cargo xtask bench-diff OLD.json NEW.json`.
//!
//! Output: a table (median, min, max, iterations) and `bench.json` in BENCH_REPORT_DIR (default
//! target/bench-report/). BENCH_GROUPS=ffi,pairs runs only the groups named.
//!
//! Timing is hand-rolled (std::time::Instant) rather than criterion: the FFI group must alternate
//! two loops in one process and report their ratio, and every case needs its own synchronisation.

use conformance::driver::check::*;
use conformance::driver::cu::untracked;
use conformance::driver::cu::*;
use conformance::driver::timed;
use conformance::harness::channel::{hex, unhex, Channel, Peer};
use conformance::harness::child::Role;
use conformance::harness::settings::Settings;
use conformance::harness::{probe, Cap, Env, CHILD_VAR};
use serde_json::json;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Instant;

#[path = "allocator/api_costs.rs"]
mod api_costs;
#[path = "allocator/ipc.rs"]
mod ipc;
#[path = "allocator/measure.rs"]
mod measure;
use measure::{row, Row, Scale, FULL, SMOKE};

extern "C" {
    fn cump_c_alloc_free_loop(
        alloc: unsafe extern "C" fn(*mut CUdeviceptr, usize, CUstream) -> CUresult,
        release: unsafe extern "C" fn(CUdeviceptr, CUstream) -> CUresult,
        stream: CUstream,
        size: usize,
        iters: std::ffi::c_ulong,
    ) -> i32;
}

fn us(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e6
}

/// Group 1: Rust/C ratio of the same loop, alternating which goes first each round.
fn ffi(sc: Scale) -> R<Vec<Row>> {
    let s = Stream::new()?;
    // The Rust half calls through the entry-point table as the sys crate offers it (the `global`
    // functions), without the suite's tracking; the C half through the table's own pointers.
    let t = untracked::table().ok_or("no entry-point table installed")?;
    let (alloc, release) = (
        t.cuMemAllocAsync.ok_or("the table has no cuMemAllocAsync")?,
        t.cuMemFreeAsync.ok_or("the table has no cuMemFreeAsync")?,
    );
    // The timed Rust loop calls and compares codes, nothing else (driver/timed.rs, tested to
    // record and allocate nothing), as the C loop does; a failing code becomes a message after it.
    let stream = s.0;
    let rust_loop = |n: usize| -> R {
        timed::alloc_free_pairs(
            |p| unsafe { untracked::cuMemAllocAsync(p, 4096, stream) },
            |p| unsafe { untracked::cuMemFreeAsync(p, stream) },
            n,
        )
        .map_err(|r| format!("Rust loop: cuMemAllocAsync/cuMemFreeAsync returned {r}"))?;
        Ok(())
    };
    let c_loop = |n: usize| -> R {
        match unsafe { cump_c_alloc_free_loop(alloc, release, stream, 4096, n as std::ffi::c_ulong) } {
            0 => Ok(()),
            r => Err(format!("C loop: cuMemAllocAsync/cuMemFreeAsync returned {}", CUresult(r as u32)).into()),
        }
    };
    // Warm up both (pool growth, first-call costs).
    rust_loop(sc.ffi_iters)?;
    c_loop(sc.ffi_iters)?;
    s.sync()?;
    let (mut ratios, mut rust_ns, mut c_ns) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..sc.ffi_rounds {
        let time = |f: &dyn Fn(usize) -> R| -> R<f64> {
            let t = Instant::now();
            f(sc.ffi_iters)?;
            let dt = t.elapsed().as_secs_f64() * 1e9 / sc.ffi_iters as f64;
            s.sync()?;
            Ok(dt)
        };
        let (r, c) = if round % 2 == 0 {
            let r = time(&rust_loop)?;
            (r, time(&c_loop)?)
        } else {
            let c = time(&c_loop)?;
            (time(&rust_loop)?, c)
        };
        ratios.push(r / c);
        rust_ns.push(r);
        c_ns.push(c);
    }
    Ok(vec![
        row(
            "ffi",
            "Rust / C time ratio (alloc+free pair, 4 KiB)".into(),
            "ratio",
            ratios,
        ),
        row(
            "ffi",
            "Rust: cuMemAllocAsync + cuMemFreeAsync".into(),
            "ns/pair",
            rust_ns,
        ),
        row("ffi", "C: cuMemAllocAsync + cuMemFreeAsync".into(), "ns/pair", c_ns),
    ])
}

const SIZES: &[(usize, &str)] = &[
    (256, "256 B"),
    (4 << 10, "4 KiB"),
    (64 << 10, "64 KiB"),
    (1 << 20, "1 MiB"),
    (16 << 20, "16 MiB"),
    (256 << 20, "256 MiB"),
];

/// Group 2: allocate + free + synchronise, per pair.
fn pairs(e: &Env, sc: Scale) -> R<Vec<Row>> {
    let s = Stream::new()?;
    let own = Pool::on_device(e.dev)?;
    let def = default_pool(e.dev)?;
    let old_def = get_u64(def, CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)?;
    let mut rows = Vec::new();
    let result = (|| -> R {
        for &(size, label) in SIZES {
            let iters = if size >= 16 << 20 {
                sc.pair_iters_large
            } else {
                sc.pair_iters_small
            };
            for (threshold, tl) in [(0u64, "threshold 0"), (u64::MAX, "threshold max")] {
                set_u64(def, CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, threshold)?;
                set_u64(own.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, threshold)?;
                let mut a = Vec::new();
                let mut b = Vec::new();
                for _ in 0..iters {
                    let t = Instant::now();
                    let r = timed::alloc_free(None, size, s.0).and_then(|_| timed::sync(s.0));
                    a.push(us(t));
                    r.map_err(|r| format!("cuMemAllocAsync pair: {r}"))?;
                    let t = Instant::now();
                    let r = timed::alloc_free(Some(own.0), size, s.0).and_then(|_| timed::sync(s.0));
                    b.push(us(t));
                    r.map_err(|r| format!("cuMemAllocFromPoolAsync pair: {r}"))?;
                }
                rows.push(row(
                    "pairs",
                    format!("cuMemAllocAsync (default pool), {label}, {tl}"),
                    "us/pair",
                    a,
                ));
                rows.push(row(
                    "pairs",
                    format!("cuMemAllocFromPoolAsync (own pool), {label}, {tl}"),
                    "us/pair",
                    b,
                ));
            }
            let mut c = Vec::new();
            for _ in 0..iters {
                let t = Instant::now();
                let mut p: CUdeviceptr = 0;
                let r = timed::code(unsafe { untracked::cuMemAlloc_v2(&mut p, size) })
                    .and_then(|_| timed::code(unsafe { untracked::cuMemFree_v2(p) }));
                c.push(us(t));
                r.map_err(|r| format!("cuMemAlloc + cuMemFree: {r}"))?;
            }
            rows.push(row("pairs", format!("cuMemAlloc + cuMemFree, {label}"), "us/pair", c));
        }
        Ok(())
    })();
    set_u64(def, CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, old_def)?;
    result.map(|_| rows)
}

/// Group 3: free on stream 1, event, stream 2 waits, allocate on stream 2.
fn reuse(e: &Env, sc: Scale) -> R<Vec<Row>> {
    let mut rows = Vec::new();
    for (on, label) in [(1, "on"), (0, "off")] {
        let p = Pool::on_device(e.dev)?;
        set_u64(p.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
        set_i32(
            p.0,
            CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
            on,
        )?;
        set_i32(p.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, 0)?;
        set_i32(
            p.0,
            CUmemPool_attribute::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
            0,
        )?;
        let (s1, s2) = (Stream::new()?, Stream::new()?);
        let ev = Event::new(0)?;
        let (mut times, mut reused) = (Vec::new(), 0usize);
        for _ in 0..sc.reuse_iters {
            let t = Instant::now();
            let r = (|| {
                let a = timed::alloc_free(Some(p.0), 1 << 20, s1.0)?;
                timed::code(unsafe { untracked::cuEventRecord(ev.0, s1.0) })?;
                timed::code(unsafe { untracked::cuStreamWaitEvent(s2.0, ev.0, 0) })?;
                let b = timed::alloc_free(Some(p.0), 1 << 20, s2.0)?;
                timed::sync(s2.0)?;
                timed::sync(s1.0)?;
                Ok((a, b))
            })();
            times.push(us(t));
            let (a, b) = r.map_err(|r: CUresult| format!("reuse step: {r}"))?;
            reused += usize::from(a == b);
        }
        let n = times.len();
        rows.push(row(
            "reuse",
            format!("event-dependency reuse {label}: 1 MiB across streams ({reused}/{n} reused)"),
            "us/iter",
            times,
        ));
    }
    Ok(rows)
}

/// Group 5: alloc + free pairs per second with 1, 4 and 16 threads, one shared pool or one each.
fn threads(e: &Env, sc: Scale) -> R<Vec<Row>> {
    const SIZE: usize = 64 << 10;
    let mut rows = Vec::new();
    for n in [1usize, 4, 16] {
        for shared in [true, false] {
            let pools: Vec<Pool> = (0..if shared { 1 } else { n })
                .map(|_| Pool::on_device(e.dev))
                .collect::<R<_>>()?;
            for p in &pools {
                set_u64(p.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
            }
            // One stream per thread, made here: a thread that failed to make one would leave the
            // others waiting at the barrier.
            let streams: Vec<Stream> = (0..n).map(|_| Stream::new()).collect::<R<_>>()?;
            let mut rates = Vec::new();
            for _ in 0..sc.thread_rounds {
                let barrier = std::sync::Barrier::new(n + 1);
                let start = std::thread::scope(|scope| -> R<Instant> {
                    let handles: Vec<_> = (0..n)
                        .map(|t| {
                            let (pool, barrier) = (pools[if shared { 0 } else { t }].0 as usize, &barrier);
                            let s = streams[t].0 as usize;
                            scope.spawn(move || -> R {
                                e.bind();
                                let s = s as CUstream;
                                barrier.wait();
                                let r = timed::alloc_free_pairs(
                                    |p| unsafe { untracked::cuMemAllocFromPoolAsync(p, SIZE, pool as CUmemoryPool, s) },
                                    |p| unsafe { untracked::cuMemFreeAsync(p, s) },
                                    sc.thread_pairs,
                                )
                                .and_then(|_| timed::sync(s));
                                r.map_err(|r| format!("bench thread: {r}").into())
                            })
                        })
                        .collect();
                    barrier.wait();
                    let start = Instant::now();
                    for h in handles {
                        h.join().map_err(|_| "a bench thread panicked")??;
                    }
                    Ok(start)
                })?;
                rates.push((n * sc.thread_pairs) as f64 / start.elapsed().as_secs_f64());
            }
            rows.push(row(
                "threads",
                format!(
                    "{n} thread(s), {}: alloc + free of 64 KiB, {} per thread",
                    if shared {
                        "one shared pool"
                    } else {
                        "one pool per thread"
                    },
                    sc.thread_pairs
                ),
                "pairs/s",
                rates,
            ));
        }
    }
    Ok(rows)
}

/// Group 6: a captured allocation at launch against a direct one (1 MiB, synchronised each time).
fn capture(e: &Env, sc: Scale) -> R<Vec<Row>> {
    const SIZE: usize = 1 << 20;
    let s = Stream::new()?;
    // Capture `alloc`: a graph holding a 1 MiB alloc + free, or nothing.
    let graph = |alloc: bool| -> R<(CUgraph, CUgraphExec)> {
        ok("cuStreamBeginCapture", unsafe {
            cuStreamBeginCapture_v2(s.0, CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)
        })?;
        let work = if alloc {
            alloc_async(SIZE, s.0).and_then(|p| free_async(p, s.0))
        } else {
            Ok(())
        };
        let mut g = std::ptr::null_mut();
        let end = unsafe { cuStreamEndCapture(s.0, &mut g) };
        work?;
        ok("cuStreamEndCapture", end)?;
        let mut x = std::ptr::null_mut();
        ok("cuGraphInstantiateWithFlags", unsafe {
            cuGraphInstantiateWithFlags(&mut x, g, 0)
        })?;
        Ok((g, x))
    };
    let mut rows = Vec::new();
    for (alloc, label) in [
        (true, "cuGraphLaunch of a captured 1 MiB alloc + free, + sync"),
        (false, "cuGraphLaunch of an empty captured graph, + sync"),
    ] {
        let (g, x) = graph(alloc)?;
        let mut t = Vec::new();
        let run = (|| -> R {
            for _ in 0..sc.capture_iters {
                let t0 = Instant::now();
                let r = timed::code(unsafe { untracked::cuGraphLaunch(x, s.0) }).and_then(|_| timed::sync(s.0));
                t.push(us(t0));
                r.map_err(|r| format!("cuGraphLaunch + sync: {r}"))?;
            }
            Ok(())
        })();
        unsafe {
            let _ = cuGraphExecDestroy(x);
            let _ = cuGraphDestroy(g);
        }
        run?;
        rows.push(row("capture", label.into(), "us/iter", t));
    }
    // The direct pair with the default pool's threshold at 0 (each synchronisation returns the
    // memory) and raised (the pool keeps it, as the graph keeps its own).
    let def = default_pool(e.dev)?;
    let old = get_u64(def, CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)?;
    let direct = (|| -> R {
        for (threshold, label) in [(0u64, "threshold 0"), (u64::MAX, "threshold max")] {
            set_u64(def, CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, threshold)?;
            let mut t = Vec::new();
            for _ in 0..sc.capture_iters {
                let t0 = Instant::now();
                let r = timed::alloc_free(None, SIZE, s.0).and_then(|_| timed::sync(s.0));
                t.push(us(t0));
                r.map_err(|r| format!("cuMemAllocAsync pair + sync: {r}"))?;
            }
            rows.push(row(
                "capture",
                format!("cuMemAllocAsync + cuMemFreeAsync of 1 MiB (default pool, {label}), + sync"),
                "us/iter",
                t,
            ));
        }
        Ok(())
    })();
    set_u64(def, CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, old)?;
    direct?;
    ok("cuDeviceGraphMemTrim", unsafe { cuDeviceGraphMemTrim(e.dev) })?;
    Ok(rows)
}

/// Group 4: export pointer here, import pointer in a child (this binary, role bench-ipc).
fn ipc(e: &Env, sc: Scale) -> R<Vec<Row>> {
    let pool = Pool::ipc(e.dev)?;
    let fd = export_pool_fd(pool.0)?;
    let s = Stream::new()?;
    let ptrs: Vec<CUdeviceptr> = (0..sc.ipc_ptrs)
        .map(|_| alloc_from(pool.0, 64 << 10, s.0))
        .collect::<R<_>>()?;
    s.sync()?;
    let mut export_us = Vec::new();
    let mut data = Vec::new();
    for &p in &ptrs {
        let mut d = CUmemPoolPtrExportData::default();
        let t = Instant::now();
        let r = timed::code(unsafe { untracked::cuMemPoolExportPointer(&mut d, p) });
        export_us.push(us(t));
        r.map_err(|r| format!("cuMemPoolExportPointer: {r}"))?;
        data.push(hex(&d.reserved));
    }
    let deadline = e.deadline();
    let peer = Peer::spawn(&Role::BenchIpc, &[], deadline.trial(), None, deadline)?;
    let answer = peer
        .chan
        .send(&ipc::Exported { data }, Some(fd.as_raw_fd()))
        .and_then(|_| peer.chan.recv_as::<ipc::Imported>());
    let (ipc::Imported { import_us, pool_us }, _) = answer.map_err(|e| peer_fail(peer, e.to_string()))?;
    for p in ptrs {
        free_async(p, s.0)?;
    }
    s.sync()?;
    Ok(vec![
        row("ipc", "cuMemPoolExportPointer (exporter)".into(), "us/op", export_us),
        row(
            "ipc",
            "cuMemPoolImportPointer (importer process)".into(),
            "us/op",
            import_us,
        ),
        row(
            "ipc",
            "cuMemPoolImportFromShareableHandle (importer process)".into(),
            "us/op",
            vec![pool_us],
        ),
    ])
}

fn peer_fail(p: Peer, e: String) -> String {
    p.fail(e)
}

/// Child role bench-ipc: import the pool and every pointer, timing each import.
fn ipc_child(settings: Arc<Settings>) -> i32 {
    let env = Env::on(std::sync::Arc::new(probe::probe(&settings)), settings.clone(), 0);
    env.bind();
    let run = || -> R<()> {
        let chan = Channel::from_inherited(env.deadline())?;
        let (m, fd) = chan.recv_as::<ipc::Exported>()?;
        let fd = fd.ok_or("no fd")?;
        let mut pool = std::ptr::null_mut();
        let posix = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        let handle = fd.as_raw_fd() as isize as *mut std::ffi::c_void;
        let t = Instant::now();
        let r = timed::code(unsafe { untracked::cuMemPoolImportFromShareableHandle(&mut pool, handle, posix, 0) });
        let pool_us = us(t);
        r.map_err(|r| format!("import pool: {r}"))?;
        let pool = Pool(pool);
        let (mut times, mut ptrs) = (Vec::new(), Vec::new());
        for d in &m.data {
            let b = unhex(d)?;
            let mut data = CUmemPoolPtrExportData::default();
            data.reserved.copy_from_slice(&b);
            let mut p: CUdeviceptr = 0;
            let t = Instant::now();
            let r = timed::code(unsafe { untracked::cuMemPoolImportPointer(&mut p, pool.0, &mut data) });
            times.push(us(t));
            r.map_err(|r| format!("cuMemPoolImportPointer: {r}"))?;
            ptrs.push(p);
        }
        // Imported untracked (no ledger entry inside the timed call), so freed untracked too.
        for p in ptrs {
            timed::code(unsafe { untracked::cuMemFreeAsync(p, CU_STREAM_LEGACY) })
                .map_err(|r| format!("cuMemFreeAsync of an imported pointer: {r}"))?;
        }
        ok("sync", unsafe { cuStreamSynchronize(CU_STREAM_LEGACY) })?;
        chan.send(
            &ipc::Imported {
                import_us: times,
                pool_us,
            },
            None,
        )?;
        Ok(())
    };
    match run() {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("bench-ipc: {e}");
            1
        }
    }
}

/// A benchmark group: runs and returns its rows.
type Group<'a> = Box<dyn Fn() -> R<Vec<Row>> + 'a>;

pub fn main() -> std::process::ExitCode {
    // The suite's settings first, read once here and handed down (the probe fills the entry-point
    // table the way they say; every wait comes from their deadline).
    let settings = Settings::at_entry();
    if std::env::var(CHILD_VAR).as_deref() == Ok(Role::BenchIpc.name().as_str()) {
        return std::process::ExitCode::from(ipc_child(settings) as u8);
    }
    if std::env::args().any(|a| a == "--bench") {
        return bench(FULL, true, &settings);
    }
    // Under `cargo test` and nextest: one test, the smoke run (libtest-mimic answers --list,
    // --exact and the rest of the test-harness protocol).
    let args = libtest_mimic::Arguments::from_args();
    let smoke = libtest_mimic::Trial::test("allocator::smoke_run", move || {
        if bench(SMOKE, false, &settings) == std::process::ExitCode::SUCCESS {
            Ok(())
        } else {
            Err("the smoke run failed (see its output)".into())
        }
    });
    libtest_mimic::run(&args, vec![smoke]).exit_code()
}

fn bench(sc: Scale, full: bool, settings: &Arc<Settings>) -> std::process::ExitCode {
    let m = probe::probe(settings);
    if let Err(why) = m.has(Cap::Gpu) {
        println!("allocator bench: skipped, {why}; it needs a CUDA device with memory pools");
        return std::process::ExitCode::SUCCESS;
    }
    let env = Env::on(std::sync::Arc::new(m), settings.clone(), 0);
    env.bind();
    println!(
        "allocator bench ({}):\n{}",
        if full { "full" } else { "smoke run, tiny counts" },
        conformance::report::machine_text::summary(&env.m.answer())
    );
    let mut rows = Vec::new();
    let skipped = std::cell::RefCell::new(Vec::<String>::new());
    let mut groups: Vec<(&str, Group)> = vec![
        ("ffi", Box::new(move || ffi(sc))),
        ("pairs", Box::new(|| pairs(&env, sc))),
        ("reuse", Box::new(|| reuse(&env, sc))),
        ("threads", Box::new(|| threads(&env, sc))),
        ("capture", Box::new(|| capture(&env, sc))),
        ("api", Box::new(|| api_costs::api(&env, sc, &mut skipped.borrow_mut()))),
    ];
    if env.m.has(Cap::Ipc).is_ok() {
        groups.push(("ipc", Box::new(|| ipc(&env, sc))));
    } else {
        println!("ipc group skipped: device 0 cannot export POSIX fd pools");
    }
    // BENCH_GROUPS=ffi,pairs runs only those groups.
    if let Ok(only) = std::env::var("BENCH_GROUPS") {
        let only: Vec<&str> = only.split(',').map(str::trim).collect();
        let known: Vec<&str> = groups.iter().map(|g| g.0).collect();
        if let Some(bad) = only.iter().find(|g| !known.contains(g)) {
            eprintln!(
                "allocator bench: BENCH_GROUPS names {bad:?}; known groups: {}",
                known.join(", ")
            );
            return std::process::ExitCode::from(2);
        }
        groups.retain(|g| only.contains(&g.0));
    }
    let mut failed = false;
    for (name, g) in &groups {
        match g() {
            Ok(r) => rows.extend(r),
            Err(e) => {
                eprintln!("allocator bench: group {name} failed: {e}");
                failed = true;
            }
        }
    }
    println!("\n| group | case | median | min | max | unit | iterations |\n|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {:.4} | {:.4} | {:.4} | {} | {} |",
            r.group, r.case, r.median, r.min, r.max, r.unit, r.iters
        );
    }
    drop(groups);
    let skipped = skipped.into_inner();
    for s in &skipped {
        println!("skipped: {s}");
    }
    let dir = std::env::var_os("BENCH_REPORT_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            conformance::report::files::report_dir(settings)
                .parent()
                .map(|p| p.join("bench-report"))
                .unwrap_or_else(|| "bench-report".into())
        });
    let v = json!({
        "date": conformance::report::build::now_utc(),
        "mode": if full { "full" } else { "smoke" },
        "driver_version": env.m.driver_version,
        "devices": env.m.devices.iter().map(|d| json!({"name": d.name, "cc": format!("{}.{}", d.compute_capability.0, d.compute_capability.1)})).collect::<Vec<_>>(),
        "skipped": skipped,
        "rows": rows.iter().map(|r| json!({"group": r.group, "case": r.case, "unit": r.unit, "median": r.median, "min": r.min, "max": r.max, "iterations": r.iters})).collect::<Vec<_>>(),
    });
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join("bench.json"), serde_json::to_string_pretty(&v).unwrap() + "\n"));
    match written {
        Ok(()) => println!("allocator bench: wrote {}", dir.join("bench.json").display()),
        Err(e) => eprintln!(
            "allocator bench: cannot write to {} ({e}); set BENCH_REPORT_DIR",
            dir.display()
        ),
    }
    if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}
