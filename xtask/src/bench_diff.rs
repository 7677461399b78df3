//! `cargo xtask bench-diff OLD.json NEW.json`: two runs of the allocator bench (bench.json) side by
//! side, case by case, with the ratio of the medians (NEW / OLD). Run the bench on the plain driver
//! and again under a library's `LD_PRELOAD` to see what that library adds to each API.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// bench.json as the allocator bench writes it (benches/allocator.rs, `main`): the fields read here.
#[derive(Deserialize)]
struct BenchJson {
    rows: Vec<Loose<BenchRow>>,
    #[serde(default)]
    date: Option<Loose<String>>,
    /// The driver's version: a number as the bench writes it, a string in older files.
    #[serde(default)]
    driver_version: Option<Loose<String>>,
}

/// One row of bench.json (its `iterations` is not read).
#[derive(Deserialize)]
struct BenchRow {
    group: String,
    case: String,
    median: f64,
    min: f64,
    max: f64,
    unit: String,
}

/// A field read as a `T` where it is one, kept as it is otherwise: a row that is not one is named by
/// its index, and a date or driver version of another shape is still shown.
#[derive(Deserialize)]
#[serde(untagged)]
enum Loose<T> {
    Is(T),
    Not(Value),
}

struct Run {
    label: String,
    /// (group, case) -> (median, min, max, unit)
    rows: BTreeMap<(String, String), (f64, f64, f64, String)>,
}

fn load(path: &str) -> Result<Run, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "bench-diff: cannot read {path}: {e} (give two bench.json files written by `cargo bench -p conformance`)"
        )
    })?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| format!("bench-diff: {path} is not JSON ({e}); expected a bench.json of the allocator bench"))?;
    // Its date and driver version read whatever their shape, only a missing or ill-formed "rows"
    // fails this.
    let bench: BenchJson = serde_json::from_value(v).map_err(|_| {
        format!("bench-diff: {path} has no \"rows\" array; expected a bench.json of the allocator bench")
    })?;
    let mut out = BTreeMap::new();
    for (i, r) in bench.rows.into_iter().enumerate() {
        match r {
            Loose::Is(BenchRow {
                group,
                case,
                median,
                min,
                max,
                unit,
            }) => {
                out.insert((group, case), (median, min, max, unit));
            }
            Loose::Not(_) => {
                return Err(format!(
                    "bench-diff: {path}: row {i} lacks group, case, median, min, max or unit"
                ))
            }
        }
    }
    let date = match bench.date {
        Some(Loose::Is(d)) => d,
        _ => "no date".to_string(),
    };
    let driver = match bench.driver_version {
        Some(Loose::Is(s)) => s,
        Some(Loose::Not(v)) => v.to_string(),
        None => Value::Null.to_string(),
    };
    let label = format!("{path} ({date}, driver {driver})");
    Ok(Run { label, rows: out })
}

/// The comparison as Markdown; `only` keeps one group (e.g. `api`).
pub fn report(old: &str, new: &str, only: Option<&str>) -> Result<String, String> {
    let (a, b) = (load(old)?, load(new)?);
    let mut out = format!("OLD: {}\nNEW: {}\n\n", a.label, b.label);
    out.push_str("| group | case | OLD median | NEW median | NEW / OLD | unit |\n|---|---|---|---|---|---|\n");
    let mut shown = 0;
    for ((g, c), (m_old, _, _, unit)) in &a.rows {
        if only.is_some_and(|o| o != g) {
            continue;
        }
        match b.rows.get(&(g.clone(), c.clone())) {
            Some((m_new, _, _, _)) => {
                writeln!(
                    out,
                    "| {g} | {c} | {m_old:.1} | {m_new:.1} | {:.3} | {unit} |",
                    m_new / m_old
                )
                .unwrap();
                shown += 1;
            }
            None => writeln!(out, "| {g} | {c} | {m_old:.1} | (absent) | | {unit} |").unwrap(),
        }
    }
    for (g, c) in b.rows.keys().filter(|k| !a.rows.contains_key(*k)) {
        if only.is_none_or(|o| o == g) {
            writeln!(out, "| {g} | {c} | (absent) | | | |").unwrap();
        }
    }
    if shown == 0 {
        return Err(format!(
            "bench-diff: {old} and {new} share no case{}",
            only.map(|o| format!(" of group {o}")).unwrap_or_default()
        ));
    }
    out.push_str("\nNEW / OLD above 1 means NEW takes longer (for pairs/s, that NEW does more).\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ratios_and_clear_errors() {
        let dir = std::env::temp_dir().join(format!("bench-diff-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let w = |n: &str, med: f64| {
            let p = dir.join(n);
            let row = |c: &str| serde_json::json!({"group": "api", "case": c, "unit": "ns/call", "median": med, "min": med, "max": med});
            std::fs::write(
                &p,
                serde_json::json!({"date": "d", "driver_version": 13000, "rows": [row("828"), row("833")]}).to_string(),
            )
            .unwrap();
            p.to_string_lossy().into_owned()
        };
        let (a, b) = (w("a.json", 100.0), w("b.json", 150.0));
        let r = super::report(&a, &b, Some("api")).unwrap();
        assert!(r.contains("| api | 828 | 100.0 | 150.0 | 1.500 | ns/call |"), "{r}");
        assert!(r.starts_with(&format!("OLD: {a} (d, driver 13000)\n")), "{r}");
        std::fs::write(
            dir.join("row.json"),
            r#"{"driver_version": "13.0", "rows": [{"group": "api", "case": "828", "unit": "ns/call", "median": 1, "min": 1, "max": 1}, {"group": "api"}]}"#,
        )
        .unwrap();
        let e = super::report(&a, &dir.join("row.json").to_string_lossy(), None).unwrap_err();
        assert!(e.contains("row 1 lacks group"), "{e}");
        std::fs::write(
            dir.join("old.json"),
            r#"{"driver_version": "13.0", "rows": [{"group": "api", "case": "828", "unit": "ns/call", "median": 1, "min": 1, "max": 1}]}"#,
        )
        .unwrap();
        let r = super::report(&dir.join("old.json").to_string_lossy(), &b, None).unwrap();
        assert!(r.contains("(no date, driver 13.0)"), "{r}");
        assert!(super::report(&a, &b, Some("pairs"))
            .unwrap_err()
            .contains("share no case"));
        std::fs::write(dir.join("bad.json"), "{}").unwrap();
        let e = super::report(&a, &dir.join("bad.json").to_string_lossy(), None).unwrap_err();
        assert!(e.contains("no \"rows\""), "{e}");
        assert!(super::report(&a, "/nonexistent.json", None)
            .unwrap_err()
            .contains("cannot read"));
    }
}
