//! `cargo bench -p ffi-bench`: what cuda-mempool-sys's linked functions cost over C calling the same
//! exported symbols (issue 24's figure for linked symbols; the entry-point table's figure is the
//! conformance bench's `ffi` group). One process, one stream, 31 rounds of 16 blocks interleaved
//! ABBA (which loop leads alternates by round); each loop does cuMemAllocAsync + cuMemFreeAsync (4 KiB) and compares the code, nothing else.
//! Prints median, min and max of the Rust/C ratio and of ns per pair, and writes
//! `ffi-linked.json` in BENCH_REPORT_DIR (default target/bench-report/). Under `cargo test` (no
//! `--bench` argument) it is a smoke run with tiny counts. Without a GPU it says so and exits 0.

use cuda_mempool_sys::*;
use std::time::Instant;

extern "C" {
    fn ffi_bench_c_linked_loop(stream: CUstream, size: usize, iters: std::ffi::c_ulong) -> i32;
}

const SIZE: usize = 4096;
/// Blocks per round, half for each loop (a multiple of 4: ABBA).
const BLOCKS: usize = 16;

/// The Rust loop: the same as the C one, through the linked symbols.
fn rust_loop(stream: CUstream, iters: usize) -> Result<(), CUresult> {
    for _ in 0..iters {
        let mut p: CUdeviceptr = 0;
        unsafe { cuMemAllocAsync(&mut p, SIZE, stream) }.result()?;
        unsafe { cuMemFreeAsync(p, stream) }.result()?;
    }
    Ok(())
}

fn c_loop(stream: CUstream, iters: usize) -> Result<(), CUresult> {
    match unsafe { ffi_bench_c_linked_loop(stream, SIZE, iters as std::ffi::c_ulong) } {
        0 => Ok(()),
        r => Err(CUresult(r as u32)),
    }
}

fn check(what: &str, r: CUresult) -> Result<(), String> {
    r.result().map_err(|e| format!("{what}: {e}"))
}

/// Median, min, max.
fn stats(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[s.len() / 2], s[0], s[s.len() - 1])
}

struct Measured {
    ratio: Vec<f64>,
    rust_ns: Vec<f64>,
    c_ns: Vec<f64>,
}

fn measure(rounds: usize, iters: usize) -> Result<Measured, String> {
    let (mut dev, mut ctx, mut stream) = (0, std::ptr::null_mut(), std::ptr::null_mut());
    unsafe {
        check("cuDeviceGet", cuDeviceGet(&mut dev, 0))?;
        check("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&mut ctx, dev))?;
        check("cuCtxSetCurrent", cuCtxSetCurrent(ctx))?;
        check("cuStreamCreate", cuStreamCreate(&mut stream, 0))?;
    }
    let sync = || check("cuStreamSynchronize", unsafe { cuStreamSynchronize(stream) });
    // One block: `n` pairs of one loop, timed, then the stream drained (outside the timing).
    let block = |rust: bool, n: usize| -> Result<f64, String> {
        let t = Instant::now();
        let r = if rust { rust_loop(stream, n) } else { c_loop(stream, n) };
        let s = t.elapsed().as_secs_f64();
        r.map_err(|e| {
            format!(
                "{} loop: cuMemAllocAsync/cuMemFreeAsync returned {e}",
                if rust { "Rust" } else { "C" }
            )
        })?;
        sync()?;
        Ok(s)
    };
    // Warm up both (pool growth, first-call costs).
    block(true, iters)?;
    block(false, iters)?;
    // Each round: BLOCKS blocks of iters/BLOCKS pairs in the order ABBA ABBA... (A the Rust loop on
    // even rounds, the C loop on odd ones), so that a drift of the driver's speed within a round
    // falls on both loops alike.
    let per = (iters / BLOCKS).max(1);
    let mut m = Measured {
        ratio: Vec::new(),
        rust_ns: Vec::new(),
        c_ns: Vec::new(),
    };
    for round in 0..rounds {
        let (mut r, mut c) = (0.0, 0.0);
        for b in 0..BLOCKS {
            let a_first = matches!(b % 4, 0 | 3);
            let rust = a_first == (round % 2 == 0);
            let t = block(rust, per)?;
            if rust {
                r += t;
            } else {
                c += t;
            }
        }
        let pairs = (per * BLOCKS / 2) as f64;
        m.ratio.push(r / c);
        m.rust_ns.push(r * 1e9 / pairs);
        m.c_ns.push(c * 1e9 / pairs);
    }
    unsafe {
        check("cuStreamDestroy", cuStreamDestroy_v2(stream))?;
        check("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2(dev))?;
    }
    Ok(m)
}

/// Whether this build's bindings go through the entry-point table (build.rs).
const DYNAMIC: bool = matches!(env!("FFI_BENCH_DYNAMIC").as_bytes(), b"1");

fn main() -> std::process::ExitCode {
    let full = std::env::args().any(|a| a == "--bench");
    if full && DYNAMIC {
        eprintln!(
            "ffi-bench: cuda-mempool-sys was built with `dynamic-loading` (its features were unified with another \
             package of this build, the conformance suite's): this is not the linked-symbol figure. Build it on its \
             own: `cargo bench -p ffi-bench`"
        );
        return std::process::ExitCode::FAILURE;
    }
    // iters: pairs per round, half through each loop.
    let (rounds, iters) = if full { (31, 40_000) } else { (3, 160) };
    match unsafe { cuInit(0) } {
        CUresult::CUDA_SUCCESS => {}
        r => {
            println!("ffi-bench: no GPU to measure on (cuInit: {r}); nothing measured");
            return std::process::ExitCode::SUCCESS;
        }
    }
    let m = match measure(rounds, iters) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("ffi-bench: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut version = 0;
    let _ = unsafe { cuDriverGetVersion(&mut version) };
    let rows = [
        (
            "Rust / C time ratio (alloc+free pair, 4 KiB, linked symbols)",
            "ratio",
            &m.ratio,
        ),
        ("Rust: cuMemAllocAsync + cuMemFreeAsync (linked)", "ns/pair", &m.rust_ns),
        ("C: cuMemAllocAsync + cuMemFreeAsync (linked)", "ns/pair", &m.c_ns),
    ];
    println!("{rounds} rounds x {iters} pairs ({BLOCKS} blocks each, ABBA), driver API version {version}");
    let mut json = Vec::new();
    for (name, unit, v) in rows {
        let (med, min, max) = stats(v);
        println!("{name:<64} {unit:>8}  median {med:>10.4}  min {min:>10.4}  max {max:>10.4}");
        json.push(format!(
            "{{\"name\":{name:?},\"unit\":{unit:?},\"median\":{med},\"min\":{min},\"max\":{max},\"rounds\":{rounds},\"iters\":{iters}}}"
        ));
    }
    let dir = std::env::var_os("BENCH_REPORT_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from("target/bench-report"));
    let text = format!("{{\"driver_api_version\":{version},\"rows\":[{}]}}\n", json.join(","));
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(dir.join("ffi-linked.json"), text)) {
        eprintln!(
            "ffi-bench: cannot write {}: {e} (set BENCH_REPORT_DIR to a writable directory)",
            dir.display()
        );
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}
