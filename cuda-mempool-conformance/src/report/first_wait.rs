//! The library's long wait at each new process's first GPU work (issue 58), in words: one line, the
//! library's behaviour and how the run planned with it, that opens report.md and the last screen
//! (after the break for good, if any) and that the coordinator prints before the trials start.

use conformance_model::{FirstWait, Report};

/// "The library under test holds each new process about 28.0 s at its first GPU work (…): its
/// behaviour, not a failure. The run plans with it: …", from the plan and the probe's figures
/// (`first`: the first round and the second, seconds, where the machine has them).
pub fn text(w: &FirstWait, first: Option<(f64, f64)>) -> String {
    let measured = match first {
        Some((first, again)) => format!(
            "the probe's first allocation, memset, free and synchronize took {first:.2} s, the same again {again:.2} s; "
        ),
        None => String::new(),
    };
    let workers = if w.default_workers == 0 {
        "its trials in this process (CONFORMANCE_WORKERS=0)".to_string()
    } else if w.workers == w.default_workers {
        format!("{} general worker processes", w.workers)
    } else {
        format!(
            "{} general worker processes instead of {}",
            w.workers, w.default_workers
        )
    };
    let budget = match w.budget_s {
        Some(b) => format!(
            "; under the run budget of {b} s no trial starts once less than a trial's deadline is left, and each \
             such trial says so"
        ),
        None => String::new(),
    };
    // How many waits the deadline makes room for, as the plan recorded it.
    let room = if w.wait_s > 0.0 {
        ((w.deadline_s - w.trial_timeout_s) / w.wait_s).round()
    } else {
        0.0
    };
    format!(
        "The library under test holds each new process about {:.1} s at its first GPU work ({measured}long past \
         {:.1} s, a sixtieth of the trial deadline): its behaviour, not a failure. The run plans with it: {workers}, \
         each trial's deadline {:.1} s ({} s and room for {room} such waits), at most about {} new processes (workers, \
         lanes, trials' own processes and importers): up to {:.0} s of such waits{budget}.",
        w.wait_s,
        w.long_after_s,
        w.deadline_s,
        w.trial_timeout_s,
        w.processes,
        w.waits_s()
    )
}

/// The line of report `r`, where the library's wait was long (None otherwise, and for every report
/// before issue 58).
pub fn line(r: &Report) -> Option<String> {
    let w = r.first_wait.as_ref()?;
    let first = r.machine.first_work.as_ref().map(|f| (f.first_s, f.again_s));
    Some(text(w, first))
}

#[cfg(test)]
mod tests {
    use super::*;
    use conformance_model::{self as model, FirstWork};

    fn plan() -> FirstWait {
        FirstWait {
            wait_s: 28.04,
            long_after_s: 1.0,
            workers: 2,
            default_workers: 4,
            trial_timeout_s: 60.0,
            deadline_s: 116.08,
            processes: 40,
            budget_s: None,
            extra: Default::default(),
        }
    }

    /// The line names the wait, the probe's two rounds, the threshold and the plan; a budget adds its
    /// clause; a report without the plan has no line.
    #[test]
    fn the_line_names_the_wait_and_the_plan() {
        let mut r = Report {
            first_wait: Some(plan()),
            ..Report::default()
        };
        r.machine.first_work = Some(FirstWork {
            context_s: 0.3,
            first_s: 28.3,
            again_s: 0.26,
            extra: Default::default(),
        });
        assert_eq!(
            line(&r).unwrap(),
            "The library under test holds each new process about 28.0 s at its first GPU work (the probe's first \
             allocation, memset, free and synchronize took 28.30 s, the same again 0.26 s; long past 1.0 s, a sixtieth \
             of the trial deadline): its behaviour, not a failure. The run plans with it: 2 general worker processes \
             instead of 4, each trial's deadline 116.1 s (60 s and room for 2 such waits), at most about 40 new \
             processes (workers, lanes, trials' own processes and importers): up to 1122 s of such waits."
        );
        let budget = FirstWait {
            budget_s: Some(600.0),
            workers: 2,
            default_workers: 2,
            ..plan()
        };
        let t = text(&budget, None);
        assert!(
            t.contains("(long past 1.0 s") && t.contains(": 2 general worker processes, each"),
            "{t}"
        );
        assert!(t.ends_with("under the run budget of 600 s no trial starts once less than a trial's deadline is left, and each such trial says so."), "{t}");
        assert_eq!(line(&model::Report::default()), None);
    }
}
