//! The suite's `main`, shared by `tests/conformance.rs` and any harness that runs the suite under
//! a different libcuda (tests/shim.rs).

use crate::channel::{fd_diff, fd_table};
use crate::driver::*;
use crate::harness::{self, Env, CHILD_ENV};
use crate::{cases, probe, report};
use crate::cu::*;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

fn child(role: &str) -> ExitCode {
    let code = match role {
        "noop" => 0,
        "uninit" => cases::uninit::child_main(false),
        "nodevice" => cases::uninit::child_main(true),
        "ipc-import" | "ipc-rules" => {
            let env = Env {
                m: probe::probe(),
                dev: 0,
            };
            if role == "ipc-import" {
                cases::xproc::import_main(&env)
            } else {
                cases::xproc::rules_main(&env)
            }
        }
        _ => match role.strip_prefix("case:") {
            Some(trial) => {
                let env = Env {
                    m: probe::probe(),
                    dev: 0,
                };
                harness::child_case(&env, &cases::all(), trial)
            }
            None => {
                eprintln!("{CHILD_ENV}={role:?}: unknown child role");
                2
            }
        },
    };
    ExitCode::from(code as u8)
}

/// The suite's entry point: child roles first, then the trials, the report and the leak check.
pub fn main() -> ExitCode {
    if let Ok(role) = std::env::var(CHILD_ENV) {
        return child(&role);
    }
    let args = libtest_mimic::Arguments::from_args();
    let required = match harness::required_caps() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::from(2);
        }
    };
    let start = Instant::now();
    let m = probe::probe();
    if !args.list {
        println!("conformance: machine\n{}", m.summary());
    }
    let env = Arc::new(Env { m, dev: 0 });
    let under_nextest = std::env::var_os("NEXTEST").is_some();
    let before = (!args.list && !under_nextest).then(|| snapshot(&env));
    let trials = harness::trials(env.clone(), cases::all(), &required, &args);
    let conclusion = libtest_mimic::run(&args, trials);
    if args.list {
        return conclusion.exit_code();
    }
    let leaks = before.map(|b| leak_check(&env, &b)).unwrap_or_default();
    let wall = start.elapsed().as_secs_f64();
    let records = harness::RECORDS.lock().unwrap().clone();
    let rows = report::rows(&env.m, &records);
    let date = report::now_utc();
    let mut md = report::markdown(&env.m, &rows, &records, &date, wall);
    if !under_nextest {
        let line = if leaks.is_empty() {
            "none".to_string()
        } else {
            leaks.join("; ")
        };
        md = md.replacen(
            "\n| Index",
            &format!("\nLeak check (device free memory, open fds, child processes): {line}.\n\n| Index"),
            1,
        );
    }
    // The table and the totals line, as in the Markdown report.
    println!();
    for line in md.lines().filter(|l| l.starts_with('|') || l.starts_with("Total:")) {
        println!("{line}");
    }
    let ignored: Vec<_> = records.iter().filter(|r| r.outcome == "ignored").collect();
    if !ignored.is_empty() {
        println!("ignored trials and why:");
        for r in ignored {
            println!("  {}: {}", r.trial, r.message);
        }
    }
    for l in &leaks {
        eprintln!("conformance: LEAK: {l}");
    }
    if under_nextest {
        // One process per trial under nextest: its JUnit output is the report.
        return conclusion.exit_code();
    }
    let dir = report::report_dir();
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join("report.md"), &md))
        .and_then(|_| {
            let mut j = report::json(&env.m, &rows, &records, &date, wall);
            j["leaks"] = serde_json::json!(leaks);
            std::fs::write(
                dir.join("report.json"),
                serde_json::to_string_pretty(&j).unwrap() + "\n",
            )
        });
    match written {
        Ok(()) => println!("conformance: report written to {}", dir.display()),
        Err(e) => eprintln!(
            "conformance: cannot write the report to {} ({e}); set CONFORMANCE_REPORT_DIR",
            dir.display()
        ),
    }
    if !leaks.is_empty() {
        return ExitCode::from(101);
    }
    conclusion.exit_code()
}

/// What the process holds, to compare before and after the trials.
struct Snapshot {
    free: Option<usize>,
    fds: BTreeMap<i32, String>,
}

/// Make the driver create its one-time, per-process resources (stream and event machinery, the
/// IPC shared-memory file, the default pool's first block) so they are in both snapshots.
fn warm_up(env: &Env) -> R {
    env.bind();
    let s = Stream::new()?;
    let s2 = Stream::new()?;
    let ev = Event::new(CUevent_flags::CU_EVENT_INTERPROCESS.0)?;
    let mut h = CUipcEventHandle::default();
    ok("cuIpcGetEventHandle", unsafe { cuIpcGetEventHandle(&mut h, ev.0) })?;
    // The driver loads its internal fill and copy code on first use (device memory it keeps).
    let n = 4 << 20;
    let p = alloc_async(n, s.0)?;
    let q = alloc_async(n, s.0)?;
    let mut host = vec![0u8; 4096];
    unsafe {
        ok("cuMemsetD8Async", cuMemsetD8Async(p, 1, n, s.0))?;
        ok("cuMemsetD32Async", cuMemsetD32Async(p, 1, n / 4, s.0))?;
        ok("cuMemsetD8", cuMemsetD8_v2(q, 1, n))?;
        ok("cuMemsetD32", cuMemsetD32_v2(q, 1, n / 4))?;
        ok("cuMemcpyAsync", cuMemcpyAsync(q, p, n, s.0))?;
        ok("cuMemcpy", cuMemcpy(q, p, n))?;
        ok(
            "cuMemcpyHtoDAsync",
            cuMemcpyHtoDAsync_v2(p, host.as_ptr().cast(), 4096, s.0),
        )?;
        ok(
            "cuMemcpyDtoHAsync",
            cuMemcpyDtoHAsync_v2(host.as_mut_ptr().cast(), p, 4096, s.0),
        )?;
        ok("cuMemcpyHtoD", cuMemcpyHtoD_v2(p, host.as_ptr().cast(), 4096))?;
        ok("cuMemcpyDtoH", cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), p, 4096))?;
    }
    let gate = Gate::close(s.0)?;
    gate.open();
    ev.record(s.0)?;
    ok("cuStreamWaitEvent", unsafe { cuStreamWaitEvent(s2.0, ev.0, 0) })?;
    free_async(p, s2.0)?;
    free_async(q, s2.0)?;
    s2.sync()?;
    s.sync()
}

fn device_free(env: &Env) -> Option<usize> {
    env.bind();
    unsafe {
        let _ = cuCtxSynchronize();
        if let Ok(d) = default_pool(env.dev) {
            let _ = cuMemPoolTrimTo(d, 0);
        }
    }
    mem_free().ok()
}

fn snapshot(env: &Env) -> Snapshot {
    // Rust's std keeps a socketpair open after the first process spawn: spawn one first.
    if let Err(e) = harness::run_child("noop", &[]) {
        eprintln!("conformance: leak-check warm-up failed: {e}");
    }
    let gpu = env.m.has(probe::Cap::Gpu).is_ok();
    if gpu {
        if let Err(e) = warm_up(env) {
            eprintln!("conformance: leak-check warm-up failed: {e}");
        }
    }
    Snapshot {
        free: if gpu { device_free(env) } else { None },
        fds: fd_table(),
    }
}

/// Child processes of this process (Linux: /proc/self/task/*/children).
fn children() -> Vec<String> {
    let mut v = Vec::new();
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for t in tasks.flatten() {
            if let Ok(c) = std::fs::read_to_string(t.path().join("children")) {
                v.extend(c.split_whitespace().map(String::from));
            }
        }
    }
    v
}

/// Device memory, fds and child processes after the trials, against the snapshot before them.
fn leak_check(env: &Env, before: &Snapshot) -> Vec<String> {
    let mut leaks = Vec::new();
    if let (Some(a), Some(b)) = (before.free, device_free(env)) {
        if a != b {
            leaks.push(format!(
                "device free memory {a} bytes before the trials, {b} after ({} bytes {})",
                a.abs_diff(b),
                if b < a { "fewer" } else { "more" }
            ));
        }
    }
    let after = fd_table();
    if after != before.fds {
        leaks.push(format!("open fds differ: {}", fd_diff(&before.fds, &after)));
    }
    let kids = children();
    if !kids.is_empty() {
        leaks.push(format!("child processes still running: {}", kids.join(", ")));
    }
    leaks
}
