//! Where a run's time went, from its trials' spans and timing (its report, or any report.json):
//! rows of workers, the critical path, each worker's idle share, and timeline.svg.
//!
//! A report written before trials carried their timing (`timing`: worker, turn wait, turn, settle
//! wait, children) still draws: its trials are laid out one row per overlapping lane.

use conformance_model::{Outcome, Report, Timing, Turn};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Two instants this close are one (a turn given back and taken, a trial ending and the next one
/// of its worker asking for its turn).
const EPS: f64 = 1e-3;

/// One trial on the timeline: the fields of a report's `trials` entry that the timeline reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bar {
    pub trial: String,
    pub outcome: Outcome,
    /// Start and end, seconds since the run started.
    pub span: (f64, f64),
    pub timing: Timing,
}
impl Bar {
    fn len(&self) -> f64 {
        self.span.1 - self.span.0
    }
    /// Whether its turn kept every memory holder off the device (the heavy phases).
    fn exclusive(&self) -> bool {
        matches!(self.timing.turn, Some(Turn::Exclusive | Turn::Beyond))
    }
}

/// The trials that ran (a span of some length), from a report of any age: the run's own, or a
/// report.json read back.
pub fn of_report(r: &Report) -> Result<Vec<Bar>, String> {
    let trials = r.trials.as_deref().ok_or("the report has no `trials`")?;
    Ok(ran(trials
        .iter()
        .map(|t| Bar {
            trial: t.trial.clone(),
            outcome: t.outcome,
            span: t.span,
            timing: t.timing.clone().unwrap_or_default(),
        })
        .collect()))
}

fn ran(mut bars: Vec<Bar>) -> Vec<Bar> {
    bars.retain(|b| b.span.1 > b.span.0);
    bars.sort_by(|a, b| a.span.0.total_cmp(&b.span.0).then(a.trial.cmp(&b.trial)));
    bars
}

/// One row of the picture: a worker (or, without one named, a lane of trials that do not overlap)
/// and its trials, by index into the bars.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub name: String,
    pub bars: Vec<usize>,
}

/// The rows: each named worker's (`general 0`, `general 1`, …, then the lanes by name), then the
/// trials no worker is named for, each in the first `row N` free at its start.
pub fn rows(bars: &[Bar]) -> Vec<Row> {
    let mut named: Vec<Row> = Vec::new();
    let mut loose: Vec<(Row, f64)> = Vec::new();
    for (i, b) in bars.iter().enumerate() {
        match &b.timing.worker {
            Some(w) => match named.iter_mut().find(|r| &r.name == w) {
                Some(r) => r.bars.push(i),
                None => named.push(Row {
                    name: w.clone(),
                    bars: vec![i],
                }),
            },
            None => {
                let asked = b.span.0 - b.timing.wait_s;
                match loose.iter_mut().find(|(_, free)| *free <= asked + EPS) {
                    Some((r, free)) => {
                        r.bars.push(i);
                        *free = b.span.1;
                    }
                    None => {
                        let name = format!("row {}", loose.len() + 1);
                        loose.push((Row { name, bars: vec![i] }, b.span.1));
                    }
                }
            }
        }
    }
    named.sort_by_key(
        |r| match r.name.strip_prefix("general ").and_then(|n| n.parse::<u32>().ok()) {
            Some(n) => (0, n, String::new()),
            None => (1, 0, r.name.clone()),
        },
    );
    named.extend(loose.into_iter().map(|(r, _)| r));
    named
}

/// The chain of trials that decided when the last one ended, and what the time along it was.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Critical {
    /// Indices into the bars, in time order: each began when the one before it ended (it was
    /// waiting for its turn, which that one gave back, or for its worker, which that one held).
    pub steps: Vec<usize>,
    /// When the last trial ended: the path's length.
    pub end: f64,
    /// Seconds of trials along it, of which exclusive ones and settle waits.
    pub trials_s: f64,
    pub exclusive_s: f64,
    pub settle_s: f64,
    /// Seconds between them spent waiting for a turn at the device.
    pub wait_s: f64,
    /// Seconds between them spent starting the worker the next one ran in (`Timing::worker_start`).
    pub starts_s: f64,
    /// The rest: the start-up before the first trial (probe, workers started ahead) and dispatch.
    pub gaps_s: f64,
}

/// Walk back from the trial that ended last: a trial that waited for its turn began when the trial
/// that gave the turn back ended (the latest end before its start, on any row); one that did not
/// wait began when its worker's previous trial ended (its own row's latest end before it asked).
/// Without timing (older reports) every step is the latest end before the start, on any row.
pub fn critical_path(bars: &[Bar]) -> Critical {
    let Some(last) = (0..bars.len()).max_by(|&a, &b| bars[a].span.1.total_cmp(&bars[b].span.1)) else {
        return Critical::default();
    };
    let worker = |i: usize| bars[i].timing.worker.as_deref();
    let mut steps = vec![last];
    let mut cur = last;
    loop {
        let b = &bars[cur];
        let asked = b.span.0 - b.timing.wait_s;
        let own_row = b.timing.worker.is_some() && b.timing.wait_s <= EPS;
        let before = if own_row { asked } else { b.span.0 } + EPS;
        let latest = |same_row: bool| {
            (0..bars.len())
                .filter(|&i| i != cur && bars[i].span.1 <= before && !steps.contains(&i))
                .filter(|&i| !same_row || worker(i) == worker(cur))
                .max_by(|&x, &y| bars[x].span.1.total_cmp(&bars[y].span.1))
        };
        // A row's first trial (a worker started beside a stuck one) came after whatever ended last
        // before it on any row, not after the run's start.
        let pred = latest(own_row).or_else(|| if own_row { latest(false) } else { None });
        match pred {
            Some(p) => {
                steps.push(p);
                cur = p;
            }
            None => break,
        }
    }
    steps.reverse();
    let mut path = Critical {
        end: bars[last].span.1,
        ..Critical::default()
    };
    let mut free = 0.0;
    for &i in &steps {
        let b = &bars[i];
        let gap = (b.span.0 - free).max(0.0);
        let wait = b.timing.wait_s.clamp(0.0, gap);
        let start = b
            .timing
            .worker_start
            .map_or(0.0, |(from, to)| (to.min(b.span.0) - from.max(free)).max(0.0))
            .min(gap - wait);
        path.wait_s += wait;
        path.starts_s += start;
        path.gaps_s += gap - wait - start;
        path.trials_s += b.len();
        path.settle_s += b.timing.settle_s;
        if b.exclusive() {
            path.exclusive_s += b.len();
        }
        free = b.span.1;
    }
    path.steps = steps;
    path
}

/// Each row's idle share: the part of the time from the run's start to the last trial's end in
/// which none of its trials ran (a turn wait is idle).
pub fn idle(bars: &[Bar], rows: &[Row]) -> Vec<(String, f64)> {
    let end = bars.iter().map(|b| b.span.1).fold(0.0, f64::max);
    rows.iter()
        .map(|r| {
            let mut spans: Vec<(f64, f64)> = r.bars.iter().map(|&i| bars[i].span).collect();
            spans.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (mut busy, mut reach) = (0.0, 0.0_f64);
            for (s, e) in spans {
                busy += (e - s.max(reach)).max(0.0);
                reach = reach.max(e);
            }
            let share = if end > 0.0 { 1.0 - busy / end } else { 0.0 };
            (r.name.clone(), share.clamp(0.0, 1.0))
        })
        .collect()
}

/// The picture's geometry, in pixels.
const WIDTH: f64 = 1400.0;
const LEFT: f64 = 110.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const ROW: f64 = 26.0;
const BAR: f64 = 14.0;

/// A trial's colour by its outcome.
fn colour(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "#4caf50",
        Outcome::Failed => "#e53935",
        Outcome::Ignored => "#bdbdbd",
        Outcome::Changed => "#ff9800",
        Outcome::ExpectedFailure => "#ab47bc",
        Outcome::KnownDeparture => "#8d6e63",
        Outcome::Interrupted => "#607d8b",
        Outcome::Flaky => "#fdd835",
    }
}

/// Text for XML: markup characters escaped.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// A step for the axis: 1, 2 or 5 times a power of ten, about ten ticks over `end`.
fn tick(end: f64) -> f64 {
    let raw = (end / 10.0).max(1e-3);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

/// timeline.svg: one row per worker, each trial a bar coloured by its outcome (the critical path
/// outlined, its settle wait darker at its end), its turn wait hatched before it, its child
/// processes thin bars under it, exclusive turns shaded across every row, a time axis in seconds;
/// every mark has a hover title. `wall`: the run's wall time (None: the last trial's end).
pub fn svg(bars: &[Bar], wall: Option<f64>, title: &str) -> String {
    let rows = rows(bars);
    let path = critical_path(bars);
    let end = wall.unwrap_or(0.0).max(path.end).max(EPS);
    let height = TOP + ROW * rows.len() as f64 + 64.0;
    let x = |t: f64| LEFT + (WIDTH - LEFT - RIGHT) * t.max(0.0) / end;
    let mut s = String::new();
    writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">
<defs><pattern id="wait" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff3e0"/><line x1="0" y1="0" x2="0" y2="6" stroke="#fb8c00" stroke-width="2"/></pattern></defs>
<rect width="100%" height="100%" fill="white"/>
<text x="{LEFT}" y="16" font-size="13">{}</text>"##,
        esc(title)
    )
    .unwrap();
    let bottom = TOP + ROW * rows.len() as f64;
    let step = tick(end);
    let mut t = 0.0;
    while t <= end + EPS {
        writeln!(
            s,
            r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{bottom}" stroke="#eeeeee"/><text x="{0:.1}" y="{1}" text-anchor="middle">{t} s</text>"##,
            x(t),
            bottom + 14.0
        )
        .unwrap();
        t = ((t + step) / step).round() * step;
    }
    for b in bars.iter().filter(|b| b.exclusive()) {
        writeln!(
            s,
            r##"<rect x="{:.1}" y="{TOP}" width="{:.1}" height="{:.1}" fill="#7e57c2" fill-opacity="0.15"><title>exclusive turn: {} ({:.2}–{:.2} s): the device alone</title></rect>"##,
            x(b.span.0),
            (x(b.span.1) - x(b.span.0)).max(0.5),
            bottom - TOP,
            esc(&b.trial),
            b.span.0,
            b.span.1
        )
        .unwrap();
    }
    for (k, row) in rows.iter().enumerate() {
        let y = TOP + ROW * k as f64 + 3.0;
        writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT - 6.0,
            y + BAR - 3.0,
            esc(&row.name)
        )
        .unwrap();
        for &i in &row.bars {
            bar(&mut s, &bars[i], y, path.steps.contains(&i), &x);
        }
    }
    // The legend in two lines, each within the picture's width.
    writeln!(
        s,
        r##"<text x="{LEFT}" y="{:.1}">bars: trials by outcome (green passed, red failed, grey ignored); outlined: the critical path ({:.2} s); hatched: waiting for a turn;</text>
<text x="{LEFT}" y="{:.1}">blue-grey: a worker process starting; shaded across: exclusive turns; darker end: settle wait; thin lines under a bar: its child processes</text>"##,
        bottom + 34.0,
        path.end,
        bottom + 48.0
    )
    .unwrap();
    s.push_str("</svg>\n");
    s
}

/// One trial's marks in its row at height `y`.
fn bar(s: &mut String, b: &Bar, y: f64, critical: bool, x: &dyn Fn(f64) -> f64) {
    let name = esc(&b.trial);
    let w = &b.timing;
    if let Some((from, to)) = w.worker_start {
        writeln!(
            s,
            r##"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{BAR}" fill="#b0bec5"><title>{name}: its worker process started ({from:.2}–{to:.2} s, {:.2} s)</title></rect>"##,
            x(from),
            (x(to) - x(from)).max(0.5),
            to - from
        )
        .unwrap();
    }
    if w.wait_s > EPS {
        writeln!(
            s,
            r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{BAR}" fill="url(#wait)"><title>{name} waited {:.2} s for its turn</title></rect>"#,
            x(b.span.0 - w.wait_s),
            (x(b.span.0) - x(b.span.0 - w.wait_s)).max(0.5),
            w.wait_s
        )
        .unwrap();
    }
    let stroke = if critical {
        r##" stroke="#000000" stroke-width="1.5""##
    } else {
        r##" stroke="#ffffff" stroke-width="0.5""##
    };
    let turn = match w.turn {
        Some(Turn::Exclusive) => ", the device alone",
        Some(Turn::Beyond) => ", beyond the device: beside no memory holder",
        Some(Turn::Free) => ", needs no device",
        _ => "",
    };
    writeln!(
        s,
        r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{BAR}" fill="{}"{stroke}><title>{name}: {} ({:.2}–{:.2} s, {:.2} s{turn}{}{})</title></rect>"#,
        x(b.span.0),
        (x(b.span.1) - x(b.span.0)).max(0.5),
        colour(b.outcome),
        esc(b.outcome.as_str()),
        b.span.0,
        b.span.1,
        b.len(),
        if w.wait_s > EPS { format!(", after {:.2} s waiting for its turn", w.wait_s) } else { String::new() },
        if critical { ", on the critical path" } else { "" }
    )
    .unwrap();
    if w.settle_s > EPS {
        let from = (b.span.1 - w.settle_s).max(b.span.0);
        writeln!(
            s,
            r##"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{BAR}" fill="#000000" fill-opacity="0.3"><title>{name}: {:.2} s waiting for the device's memory to come back</title></rect>"##,
            x(from),
            (x(b.span.1) - x(from)).max(0.5),
            w.settle_s
        )
        .unwrap();
    }
    for (k, c) in w.children.iter().enumerate() {
        let cy = y + BAR + 2.0 + 2.5 * (k % 3) as f64;
        writeln!(
            s,
            r##"<rect x="{:.1}" y="{cy:.1}" width="{:.1}" height="2" fill="#1e88e5"><title>{name}: child {} ({:.2}–{:.2} s)</title></rect>"##,
            x(c.span.0),
            (x(c.span.1) - x(c.span.0)).max(0.5),
            esc(&c.role),
            c.span.0,
            c.span.1
        )
        .unwrap();
    }
}

/// Write timeline.svg into `dir`.
pub fn write(dir: &Path, bars: &[Bar], wall: Option<f64>, title: &str) -> std::io::Result<()> {
    std::fs::write(dir.join("timeline.svg"), svg(bars, wall, title))
}

/// `--timeline REPORT.json [--out DIR]`: draw timeline.svg from a report (beside it without
/// `--out`); the trials drawn, the report's wall time and the picture's path (the caller prints
/// where the time went: `screen::time_lines`). Flags other than `--out` are skipped (libtest's own).
pub fn redraw(args: &[String]) -> Result<(Vec<Bar>, Option<f64>, PathBuf), String> {
    let mut it = args.iter();
    let (mut report, mut out) = (None, None);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(it.next().ok_or("--out needs a folder")?)),
            f if f.starts_with("--") => {}
            _ => report = report.or(Some(a.clone())),
        }
    }
    let report = report.ok_or("usage: --timeline REPORT.json [--out DIR]")?;
    let text = std::fs::read_to_string(&report).map_err(|e| format!("{report}: {e}"))?;
    let r: Report = serde_json::from_str(&text).map_err(|e| format!("{report}: {e}"))?;
    let bars = of_report(&r).map_err(|e| format!("{report}: {e}"))?;
    let wall = r.wall_s;
    let dir = out.unwrap_or_else(|| Path::new(&report).parent().map_or(".".into(), Path::to_path_buf));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let title = format!("{report}: {}", r.date.as_deref().unwrap_or(""));
    write(&dir, &bars, wall, &title).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok((bars, wall, dir.join("timeline.svg")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use conformance_model::ChildSpan;

    fn bar(trial: &str, worker: Option<&str>, span: (f64, f64), wait_s: f64, exclusive: bool) -> Bar {
        Bar {
            trial: trial.into(),
            outcome: Outcome::Passed,
            span,
            timing: Timing {
                worker: worker.map(String::from),
                wait_s,
                turn: Some(if exclusive { Turn::Exclusive } else { Turn::Shared }),
                ..Timing::default()
            },
        }
    }

    /// Two general workers and a lane: `x` (exclusive) waits for `a` and `b`, then `c` waits for
    /// `x`, then `d` follows `c` on its worker. The path walks back d ← c (its worker) ← x (the turn
    /// it gave back) ← b (the last of the trials x waited for) ← its worker's start; the lane's
    /// long trial `l`, which ended before `d`, is on no path. The sums add up to the end.
    #[test]
    fn the_critical_path_follows_turns_and_workers() {
        let bars = ran(vec![
            bar("a", Some("general 0"), (0.5, 1.0), 0.0, false),
            bar("b", Some("general 1"), (0.5, 1.5), 0.0, false),
            bar("x", Some("general 0"), (1.5, 3.5), 0.5, true),
            bar("c", Some("general 1"), (3.5, 4.0), 2.0, false),
            bar("d", Some("general 1"), (4.1, 5.0), 0.0, false),
            bar("l", Some("ipc"), (0.6, 4.9), 0.0, false),
        ]);
        let p = critical_path(&bars);
        let names: Vec<&str> = p.steps.iter().map(|&i| bars[i].trial.as_str()).collect();
        assert_eq!(names, ["b", "x", "c", "d"]);
        assert_eq!(p.end, 5.0);
        assert!((p.trials_s - 4.4).abs() < 1e-9, "{p:?}");
        assert!((p.exclusive_s - 2.0).abs() < 1e-9, "{p:?}");
        assert!((p.gaps_s - 0.6).abs() < 1e-9, "{p:?}");
        assert!(
            (p.trials_s + p.wait_s + p.starts_s + p.gaps_s - p.end).abs() < 1e-9,
            "{p:?}"
        );
        let rows = rows(&bars);
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["general 0", "general 1", "ipc"]);
        let idle = idle(&bars, &rows);
        assert!((idle[0].1 - 0.5).abs() < 1e-9, "{idle:?}");
        assert!((idle[2].1 - 0.14).abs() < 1e-9, "{idle:?}");
    }

    /// A worker started late (a spare beside a stuck trial) begins its row after whatever ended last
    /// on another row, not after the run's start: its first trial's gap is not "start-up".
    #[test]
    fn a_late_row_continues_from_another_row() {
        let bars = ran(vec![
            bar("a", Some("general 0"), (0.5, 9.0), 0.0, false),
            bar("s", Some("general 6"), (9.2, 12.0), 0.0, false),
        ]);
        let p = critical_path(&bars);
        let names: Vec<&str> = p.steps.iter().map(|&i| bars[i].trial.as_str()).collect();
        assert_eq!(names, ["a", "s"]);
        assert!((p.gaps_s - 0.7).abs() < 1e-9, "{p:?}");
    }

    /// A worker started for a trial counts as a start only where it fills the path's gap: one
    /// started 1.5-2.4 s for a trial that began at 2.5 s, after a path step that ended at 2.0 s,
    /// adds 0.4 s of starting and 0.1 s of gap.
    #[test]
    fn a_worker_start_counts_only_where_it_fills_the_gap() {
        let mut bars = ran(vec![
            bar("a", Some("general 0"), (0.0, 2.0), 0.0, true),
            bar("b", Some("ipc"), (2.5, 3.0), 0.0, false),
        ]);
        bars[1].timing.worker_start = Some((1.5, 2.4));
        let p = critical_path(&bars);
        assert_eq!(p.steps.len(), 2);
        assert!(
            (p.starts_s - 0.4).abs() < 1e-9 && (p.gaps_s - 0.1).abs() < 1e-9,
            "{p:?}"
        );
    }

    /// A waited turn counts as waiting only up to the gap it fills: a trial that waited 2 s for a
    /// turn given back 0.3 s before it began adds 0.3 s of wait, the rest overlapping the trial
    /// before it.
    #[test]
    fn a_wait_counts_only_where_nothing_on_the_path_ran() {
        let bars = ran(vec![
            bar("a", Some("general 0"), (0.0, 1.0), 0.0, true),
            bar("b", Some("general 1"), (1.3, 2.0), 2.0, false),
        ]);
        let p = critical_path(&bars);
        assert_eq!(p.steps.len(), 2);
        assert!((p.wait_s - 0.3).abs() < 1e-9 && p.gaps_s.abs() < 1e-9, "{p:?}");
    }

    /// A report without timing: its trials laid out one row per overlapping lane, and the path
    /// goes through whichever trial ended last before each start.
    #[test]
    fn a_report_without_timing_draws_rows_of_overlapping_trials() {
        let r: Report = serde_json::from_value(serde_json::json!({"trials": [
            {"trial": "a", "outcome": "passed", "span": [0.0, 2.0]},
            {"trial": "b", "outcome": "failed", "span": [0.5, 1.0]},
            {"trial": "c", "outcome": "passed", "span": [1.2, 3.0]},
            {"trial": "d", "outcome": "passed", "span": [2.1, 2.5]},
            {"trial": "never", "outcome": "ignored", "span": [0.0, 0.0]},
        ]}))
        .unwrap();
        let bars = of_report(&r).unwrap();
        assert_eq!(bars.len(), 4);
        let rows = rows(&bars);
        let by_row: Vec<Vec<&str>> = rows
            .iter()
            .map(|r| r.bars.iter().map(|&i| bars[i].trial.as_str()).collect())
            .collect();
        assert_eq!(by_row, [vec!["a", "d"], vec!["b", "c"]]);
        let p = critical_path(&bars);
        let names: Vec<&str> = p.steps.iter().map(|&i| bars[i].trial.as_str()).collect();
        assert_eq!(names, ["b", "c"]);
    }

    /// Every `&` in `text` begins one of XML's five entities.
    fn entities_ok(text: &str) -> bool {
        text.match_indices('&').all(|(i, _)| {
            ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                .iter()
                .any(|e| text[i..].starts_with(e))
        })
    }

    /// Elements nest and close, attributes are quoted, `&` starts only an entity: enough of XML's
    /// well-formedness to catch a broken picture (no XML parser is a dependency).
    fn well_formed(xml: &str) -> Result<(), String> {
        let mut open: Vec<String> = Vec::new();
        let mut rest = xml;
        while let Some(i) = rest.find(['<', '&']) {
            let text = &rest[..i];
            if text.contains('>') {
                return Err(format!("a bare > in {text:?}"));
            }
            rest = &rest[i..];
            if rest.starts_with('&') {
                let end = rest.find(';').ok_or("an unterminated entity")?;
                if !entities_ok(&rest[..=end]) {
                    return Err(format!("unknown entity {}", &rest[..=end]));
                }
                rest = &rest[end + 1..];
                continue;
            }
            let end = rest.find('>').ok_or("an unterminated tag")?;
            let tag = &rest[1..end];
            rest = &rest[end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                match open.pop() {
                    Some(o) if o == name => {}
                    o => return Err(format!("</{name}> closes {o:?}")),
                }
                continue;
            }
            let body = tag.strip_suffix('/').unwrap_or(tag);
            let name = body.split_whitespace().next().ok_or("an empty tag")?;
            let attrs = &body[name.len()..];
            if !attrs.matches('"').count().is_multiple_of(2) || attrs.contains('<') || !entities_ok(attrs) {
                return Err(format!("bad attributes in <{tag}>"));
            }
            if !tag.ends_with('/') {
                open.push(name.to_string());
            }
        }
        match open.as_slice() {
            [] if rest.trim().is_empty() => Ok(()),
            o => Err(format!("left open: {o:?}")),
        }
    }

    /// The picture is well-formed XML, one root, with every trial's name escaped in its title, the
    /// critical path outlined, waits hatched and children drawn; and so is every committed
    /// report's (older ones have no timing).
    #[test]
    fn the_picture_is_well_formed() {
        let mut bars = vec![
            bar("820::a<b>&\"c\"", Some("general 0"), (0.2, 1.0), 0.1, true),
            bar("821::d", Some("ipc"), (1.0, 2.0), 0.0, false),
        ];
        bars[1].timing.children = vec![ChildSpan {
            role: "ipc-import".into(),
            span: (1.1, 1.8),
            ..ChildSpan::default()
        }];
        bars[0].timing.settle_s = 0.2;
        bars[0].timing.worker_start = Some((0.0, 0.1));
        let s = svg(&ran(bars), Some(2.5), "a <run> & more");
        well_formed(&s).unwrap();
        assert!(s.starts_with("<svg ") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("820::a&lt;b&gt;&amp;&quot;c&quot;"), "{s}");
        for mark in [
            "url(#wait)",
            "ipc-import",
            "stroke-width=\"1.5\"",
            "exclusive turn",
            "2.5 s",
        ] {
            assert!(s.contains(mark), "{mark} missing");
        }
        let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs")];
        let mut seen = 0;
        while let Some(d) = dirs.pop() {
            for p in std::fs::read_dir(&d).unwrap().flatten().map(|e| e.path()) {
                if p.is_dir() {
                    dirs.push(p);
                    continue;
                }
                if p.extension().is_none_or(|x| x != "json") {
                    continue;
                }
                // Reports (trials and a wall time); other JSON (matrix.json, mutants.json) is not.
                let r = match serde_json::from_str::<Report>(&std::fs::read_to_string(&p).unwrap()) {
                    Ok(r) if r.trials.is_some() && r.wall_s.is_some() => r,
                    _ => continue,
                };
                let bars = of_report(&r).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                well_formed(&svg(&bars, r.wall_s, "committed")).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                seen += 1;
            }
        }
        assert!(seen >= 2, "committed reports drawn: {seen}");
    }

    #[test]
    fn the_axis_ticks_are_round() {
        assert_eq!(tick(9.4), 1.0);
        assert_eq!(tick(346.0), 50.0);
        assert_eq!(tick(0.5), 0.05);
    }
}
