//! A run cut short still reports, tested without a GPU: the suite in a child under the shim's slow
//! fault (every hooked call sleeps, so the before-cuInit trials run for seconds, in a child of a
//! worker), sent SIGTERM mid-run or given a CONFORMANCE_RUN_BUDGET shorter than the run. Each
//! checks the report (what finished kept, the rest `interrupted`, totals that agree), JUnit, the
//! exit code, the time it took, and that no process of the run outlives it.

use libtest_mimic::{Arguments, Failed, Trial};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod common;
use common::report::{self, Trials};
use conformance_model::{Kind, Outcome, Report, Trial as Record};
#[path = "common/shimlib.rs"]
mod shimlib;

/// Set in the suite's environment, so that every process of the run (workers, their children)
/// carries it and can be found in /proc afterwards.
const MARK_VAR: &str = "CONFORMANCE_INTERRUPT_TEST_MARK";
/// The slow fault's delay: the two long before-cuInit trials then take about 7 s each.
const DELAY_MS: &str = "500";

/// What a cut run came to.
struct Cut {
    report: Report,
    junit: String,
    stdout: String,
    code: Option<i32>,
    wall: Duration,
    /// When the trials started (libtest's "running N tests"), since the suite was started.
    trials_from: Duration,
}

/// Run the suite under the slow fault with `envs`; `signal_after`: send SIGTERM that long after
/// the trials started (libtest's "running N tests" line).
fn cut_run(tag: &str, envs: &[(&str, &str)], signal_after: Option<Duration>) -> Result<Cut, String> {
    let _one = common::one_suite_at_a_time();
    let dir = std::env::temp_dir().join(format!("cump-interrupt-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mark = format!("{}-{tag}", std::process::id());
    let junit = dir.join("junit.xml");
    let mut c = common::suite()?;
    c.env("CONFORMANCE_REPORT_DIR", &dir)
        .env("CONFORMANCE_JUNIT", &junit)
        .env("LD_PRELOAD", shimlib::path(shimlib::Variant::EveryPath)?)
        .env("CONFORMANCE_SHIM_FAULTS", "slow")
        .env("CONFORMANCE_SHIM_DELAY_MS", DELAY_MS)
        .env("CONFORMANCE_TRIAL_TIMEOUT", "90")
        .env(MARK_VAR, &mark)
        .envs(envs.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = c.spawn().map_err(|e| format!("cannot run the suite: {e}"))?;
    let (tx, rx) = mpsc::channel();
    let out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if line.starts_with("running ") {
                let _ = tx.send(Instant::now());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let err = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || std::io::read_to_string(err).unwrap_or_default());
    let trials_from = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(t) => t - start,
        Err(_) => {
            let _ = child.kill();
            return Err(format!("{tag}: the trials never started"));
        }
    };
    if let Some(after) = signal_after {
        std::thread::sleep(after);
        kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).map_err(|e| format!("kill: {e}"))?;
    }
    let status = {
        use wait_timeout::ChildExt;
        match child.wait_timeout(Duration::from_secs(90)).map_err(|e| e.to_string())? {
            Some(s) => s,
            None => {
                let _ = child.kill();
                return Err(format!("{tag}: the run did not end within 90 s"));
            }
        }
    };
    let wall = start.elapsed();
    let stdout = reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let left = survivors(&mark);
    if !left.is_empty() {
        return Err(format!("{tag}: processes of the run outlived it: {left:?}"));
    }
    let report = report::try_read(&dir.join("report.json"))
        .map_err(|e| format!("{tag}: no report ({e}; exit {status:?}); stderr:\n{stderr}"))?;
    Ok(Cut {
        report,
        junit: std::fs::read_to_string(&junit).unwrap_or_default(),
        stdout,
        code: status.code(),
        wall,
        trials_from,
    })
}

/// The processes whose environment carries `MARK_VAR=mark`, once those killed have had a moment
/// to go (a SIGKILL is delivered at once, the reaping of orphans a little later).
fn survivors(mark: &str) -> Vec<String> {
    let needle = format!("{MARK_VAR}={mark}");
    let mut left = Vec::new();
    for _ in 0..40 {
        left = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
            .filter(|e| environ_has(&e.path(), &needle))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    left
}

fn environ_has(proc_dir: &Path, needle: &str) -> bool {
    std::fs::read(proc_dir.join("environ"))
        .map(|b| b.split(|&c| c == 0).any(|v| v == needle.as_bytes()))
        .unwrap_or(false)
}

impl Cut {
    fn trials(&self) -> &[Record] {
        self.report.trials()
    }
    fn with(&self, outcome: Outcome) -> Vec<&Record> {
        self.trials().iter().filter(|t| t.outcome == outcome).collect()
    }
    /// Some trials finished and were kept, the others are interrupted with `text` (and kind
    /// `interrupted`), the totals count them, the last screen and JUnit say so.
    fn reports_the_rest_interrupted(&self, text: &str) -> Result<(), String> {
        let cut = self.with(Outcome::Interrupted);
        let bad: Vec<&Record> = cut
            .iter()
            .copied()
            .filter(|t| t.kind != Some(Kind::Interrupted) || !t.message.starts_with(text))
            .collect();
        let checks = [
            (!cut.is_empty(), "no trial is recorded interrupted".to_string()),
            (bad.is_empty(), format!("interrupted records without {text:?}: {bad:?}")),
            (
                !self.with(Outcome::Passed).is_empty(),
                "no trial that finished before the cut was kept".into(),
            ),
            (
                self.report.totals.interrupted == Some(cut.len() as u64),
                format!("totals {:?} for {} interrupted trials", self.report.totals, cut.len()),
            ),
            (
                self.report.trial("suite::no_leaks").is_some(),
                "suite::no_leaks has no record".into(),
            ),
            (
                self.stdout
                    .lines()
                    .any(|l| l.starts_with("conformance: ") && l.contains(text)),
                format!("no summary line saying {text:?} on stdout"),
            ),
            (
                self.junit.contains("type=\"interrupted\""),
                "JUnit has no interrupted error".into(),
            ),
        ];
        match checks.into_iter().find(|(ok, _)| !ok) {
            None => Ok(()),
            Some((_, why)) => Err(format!("{why}; exit {:?}, totals {:?}", self.code, self.report.totals)),
        }
    }
}

/// SIGTERM while a before-cuInit trial runs (in its worker's child, the slow fault making each
/// call take half a second): exit 143, the trial cut short and the rest not run recorded
/// interrupted, nothing of the run left.
fn sigterm_mid_run() -> Result<(), String> {
    let r = cut_run("sigterm", &[], Some(Duration::from_millis(1500)))?;
    r.reports_the_rest_interrupted("interrupted: SIGTERM after")?;
    // Without a GPU nearly every trial is ignored up front and this one runs for seconds: the
    // signal comes while it runs. With one, other trials may be running then instead.
    let no_gpu = !Path::new("/dev/nvidia0").exists();
    let long = r
        .report
        .trial("820_cuMemAllocAsync::before_cuInit_not_initialized")
        .ok_or("no record of the long before-cuInit trial")?;
    if no_gpu && long.outcome != Outcome::Interrupted {
        return Err(format!("the trial running at the signal came to {long:?}"));
    }
    match r.code {
        Some(143) => Ok(()),
        c => Err(format!("exit {c:?}, not 143 (128 + SIGTERM)")),
    }
}

/// A budget shorter than the run: it ends soon after the budget, exit 124, the rest interrupted.
/// Soon after the budget, or after the probe if that took longer (the probe is not cut short: under
/// the slow fault on a GPU it makes many slow calls).
fn budget_runs_out() -> Result<(), String> {
    let budget: f64 = 4.0;
    let r = cut_run("budget", &[("CONFORMANCE_RUN_BUDGET", "4")], None)?;
    r.reports_the_rest_interrupted("interrupted: the run budget of 4 s ran out")?;
    let from = r.trials_from.as_secs_f64();
    if r.wall.as_secs_f64() > budget.max(from) + 4.0 {
        return Err(format!(
            "the run took {:.1} s under a budget of {budget} s (its trials from {from:.1} s)",
            r.wall.as_secs_f64()
        ));
    }
    match r.code {
        Some(124) => Ok(()),
        c => Err(format!("exit {c:?}, not 124")),
    }
}

/// A bad budget is refused before any trial runs, naming the variable and what to write.
fn bad_budget_refused() -> Result<(), String> {
    let mut c = common::suite()?;
    let out = c
        .env("CONFORMANCE_RUN_BUDGET", "2m")
        .output()
        .map_err(|e| format!("cannot run the suite: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && err.contains("CONFORMANCE_RUN_BUDGET=\"2m\"") && err.contains("in seconds") {
        Ok(())
    } else {
        Err(format!("exit {:?}, stderr: {err}", out.status.code()))
    }
}

type Scenario = fn() -> Result<(), String>;

pub fn main() -> ExitCode {
    if let Some(code) = common::run_suite_if_asked() {
        return code;
    }
    let args = Arguments::from_args();
    let trials: &[(&str, Scenario)] = &[
        (
            "interrupt::sigterm_mid_run_reports_the_rest_interrupted",
            sigterm_mid_run,
        ),
        ("interrupt::a_run_budget_ends_the_run_and_reports", budget_runs_out),
        ("interrupt::a_bad_budget_is_refused", bad_budget_refused),
    ];

    let trials = trials
        .iter()
        .map(|&(name, f)| Trial::test(name, move || f().map_err(Failed::from)))
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}
