//! `cargo test -p conformance [-- FILTER]`: the conformance suite (libtest-mimic, harness = false).
//!
//! Environment:
//!   CONFORMANCE_REQUIRE=gpu,ipc,peer,host-pool,host-numa,cuda13   missing capability = failure
//!   CONFORMANCE_REPORT_DIR=DIR   where report.md / report.json go (default: target/conformance-report)
//!
//! The same binary runs child roles (CONFORMANCE_CHILD) before libtest-mimic reads its arguments.

use conformance::harness::{self, Env, CHILD_ENV};
use conformance::{cases, probe, report};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

fn child(role: &str) -> ExitCode {
    let code = match role {
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

fn main() -> ExitCode {
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
    let trials = harness::trials(env.clone(), cases::all(), &required, &args);
    let conclusion = libtest_mimic::run(&args, trials);
    if args.list {
        return conclusion.exit_code();
    }
    let wall = start.elapsed().as_secs_f64();
    let records = harness::RECORDS.lock().unwrap().clone();
    let rows = report::rows(&env.m, &records);
    let date = report::now_utc();
    let md = report::markdown(&env.m, &rows, &records, &date, wall);
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
    if std::env::var_os("NEXTEST").is_some() {
        // One process per trial under nextest: its JUnit output is the report.
        return conclusion.exit_code();
    }
    let dir = report::report_dir();
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join("report.md"), &md))
        .and_then(|_| {
            let j = report::json(&env.m, &rows, &records, &date, wall);
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
    conclusion.exit_code()
}
