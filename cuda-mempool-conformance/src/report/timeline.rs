//! Where a run's time went, from its trials' spans and timing (the run's records, or any
//! report.json): rows of workers, the critical path, each worker's idle share, and timeline.svg.
//!
//! A report written before trials carried their timing (`timing`: worker, turn wait, turn, settle
//! wait, children) still draws: its trials are laid out one row per overlapping lane.

use crate::harness::outcome::{Record, Timing, Turn};
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

/// Two instants this close are one (a turn given back and taken, a trial ending and the next one
/// of its worker asking for its turn).
const EPS: f64 = 1e-3;

/// One trial on the timeline: report.json's `trials` entry, the fields the timeline reads.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Bar {
    pub trial: String,
    pub outcome: String,
    /// Start and end, seconds since the run started.
    pub span: (f64, f64),
    pub timing: Timing,
}
impl Bar {
    fn len(&self) -> f64 {
        self.span.1 - self.span.0
    }
    fn exclusive(&self) -> bool {
        self.timing.turn == Some(Turn::Exclusive)
    }
}

/// The trials that ran (a span of some length), from the run's records.
pub fn of_records(records: &[Record]) -> Vec<Bar> {
    ran(records
        .iter()
        .map(|r| Bar {
            trial: r.trial.clone(),
            outcome: r.outcome.as_str().to_string(),
            span: r.span,
            timing: r.timing.clone(),
        })
        .collect())
}

/// The trials that ran, from a report.json of any age.
pub fn of_report(j: &serde_json::Value) -> Result<Vec<Bar>, String> {
    let trials = j.get("trials").ok_or("the report has no `trials`")?;
    let bars: Vec<Bar> = serde_json::from_value(trials.clone()).map_err(|e| format!("its trials: {e}"))?;
    Ok(ran(bars))
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
    /// The rest: the start-up before the first trial (probe, workers), worker starts and dispatch.
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
        let pred = (0..bars.len())
            .filter(|&i| i != cur && bars[i].span.1 <= before && !steps.contains(&i))
            .filter(|&i| !own_row || worker(i) == worker(cur))
            .max_by(|&x, &y| bars[x].span.1.total_cmp(&bars[y].span.1));
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
        path.wait_s += wait;
        path.gaps_s += gap - wait;
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
fn colour(outcome: &str) -> &'static str {
    match outcome {
        "passed" => "#4caf50",
        "failed" => "#e53935",
        "ignored" => "#bdbdbd",
        "changed" => "#ff9800",
        "expected-failure" => "#ab47bc",
        "known-departure" => "#8d6e63",
        "interrupted" => "#607d8b",
        "flaky" => "#fdd835",
        _ => "#90a4ae",
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
    let height = TOP + ROW * rows.len() as f64 + 50.0;
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
    writeln!(
        s,
        r##"<text x="{LEFT}" y="{:.1}">bars: trials by outcome (green passed, red failed, grey ignored); outlined: the critical path ({:.2} s); hatched: waiting for a turn; shaded across: exclusive turns; darker end: settle wait; thin lines under a bar: its child processes</text>"##,
        bottom + 34.0,
        path.end
    )
    .unwrap();
    s.push_str("</svg>\n");
    s
}

/// One trial's marks in its row at height `y`.
fn bar(s: &mut String, b: &Bar, y: f64, critical: bool, x: &dyn Fn(f64) -> f64) {
    let name = esc(&b.trial);
    let w = &b.timing;
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
        _ => "",
    };
    writeln!(
        s,
        r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{BAR}" fill="{}"{stroke}><title>{name}: {} ({:.2}–{:.2} s, {:.2} s{turn}{}{})</title></rect>"#,
        x(b.span.0),
        (x(b.span.1) - x(b.span.0)).max(0.5),
        colour(&b.outcome),
        esc(&b.outcome),
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
/// `--out`) and print its critical path and idle shares.
pub fn main(args: &[String]) -> ExitCode {
    let mut it = args.iter();
    let (mut report, mut out) = (None, None);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => out = it.next().cloned(),
            f if f.starts_with("--") => {}
            _ => report = report.or(Some(a.clone())),
        }
    }
    let Some(report) = report else {
        eprintln!("conformance: usage: --timeline REPORT.json [--out DIR]");
        return ExitCode::from(2);
    };
    let drawn = std::fs::read_to_string(&report)
        .map_err(|e| format!("{report}: {e}"))
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).map_err(|e| format!("{report}: {e}")))
        .and_then(|j| {
            let bars = of_report(&j).map_err(|e| format!("{report}: {e}"))?;
            let wall = j["wall_s"].as_f64();
            let dir = match &out {
                Some(d) => std::path::PathBuf::from(d),
                None => Path::new(&report).parent().map_or(".".into(), Path::to_path_buf),
            };
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let title = format!("{report}: {}", j["date"].as_str().unwrap_or(""));
            write(&dir, &bars, wall, &title).map_err(|e| format!("{}: {e}", dir.display()))?;
            Ok((bars, wall, dir))
        });
    match drawn {
        Ok((bars, wall, dir)) => {
            for line in crate::report::screen::time_lines(&bars, wall) {
                println!("{line}");
            }
            println!(
                "conformance: timeline written to {}",
                dir.join("timeline.svg").display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("conformance: --timeline: {e}");
            ExitCode::from(2)
        }
    }
}
