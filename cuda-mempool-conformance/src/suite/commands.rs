//! Commands that run no trial, each on reports already written: `--diff`, `--matrix`,
//! `--timeline`, `--expectations-from`.

use crate::report::{diff, expectations, matrix, screen, timeline};
use std::process::ExitCode;

/// Commands that run no trial: `--diff OLD.json NEW.json`, `--matrix REPORT.json… [--out DIR] [--expect FILE]`,
/// `--timeline REPORT.json [--out DIR]`, `--expectations-from REPORT.json`.
pub(super) fn command(argv: &[String]) -> Option<ExitCode> {
    if let Some(i) = argv.iter().position(|a| a == "--diff") {
        return Some(diff::main(&argv[i + 1..]));
    }
    if let Some(i) = argv.iter().position(|a| a == "--timeline") {
        return Some(redraw_timeline(&argv[i + 1..]));
    }
    if let Some(i) = argv.iter().position(|a| a == "--matrix") {
        return Some(matrix::main(&argv[i + 1..]));
    }
    let i = argv.iter().position(|a| a == "--expectations-from")?;
    Some(match argv.get(i + 1).map(|p| expectations::from_report(p)) {
        Some(Ok(text)) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Some(Err(e)) => {
            eprintln!("conformance: --expectations-from: {e}");
            ExitCode::from(2)
        }
        None => {
            eprintln!("conformance: usage: --expectations-from REPORT.json");
            ExitCode::from(2)
        }
    })
}

/// `--timeline REPORT.json [--out DIR]`: timeline.svg drawn from a report, and where its time went.
fn redraw_timeline(args: &[String]) -> ExitCode {
    match timeline::redraw(args) {
        Ok((bars, wall, svg)) => {
            for line in screen::time_lines(&bars, wall) {
                println!("{line}");
            }
            println!("conformance: timeline written to {}", svg.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("conformance: --timeline: {e}");
            ExitCode::from(2)
        }
    }
}
