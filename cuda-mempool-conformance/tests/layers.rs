//! The conformance crate's layers, checked from its own `crate::…` paths: every import runs
//! downward (os → driver → harness → cases | report | run → suite), the three middle folders never
//! import one another, and no files import each other in a circle. Off Linux, where the suite
//! does not run, one test that fails saying so.

#[cfg(target_os = "linux")]
use std::collections::{BTreeMap, BTreeSet};
#[cfg(target_os = "linux")]
use std::path::Path;

/// Layer of each top-level module; modules of one rank but different names must not import each other.
#[cfg(target_os = "linux")]
const LAYERS: &[(&str, u32)] = &[
    ("os", 0),
    ("driver", 1),
    ("harness", 2),
    ("cases", 3),
    ("report", 3),
    ("run", 3),
    ("suite", 4),
];

#[cfg(target_os = "linux")]
fn rank(top: &str) -> u32 {
    LAYERS
        .iter()
        .find(|l| l.0 == top)
        .unwrap_or_else(|| panic!("module `{top}` has no layer in tests/layers.rs"))
        .1
}

/// Module path of every .rs file under `src` ("" for lib.rs; `harness::case`; `cases::xproc`).
#[cfg(target_os = "linux")]
fn files(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            files(&p, &format!("{prefix}{name}::"), out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let m = match name.as_str() {
                "lib" => String::new(),
                "mod" => prefix.trim_end_matches("::").to_string(),
                _ => format!("{prefix}{name}"),
            };
            out.insert(m, std::fs::read_to_string(&p).unwrap());
        }
    }
}

/// The modules a file names through `crate::…` (grouped `use crate::{a, b}` is not used here).
#[cfg(target_os = "linux")]
fn imports(text: &str, known: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines().map(|l| l.split("//").next().unwrap_or("")) {
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + 7..];
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let parts: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            // The longest prefix that is a file.
            if let Some(m) = (1..=parts.len())
                .rev()
                .map(|n| parts[..n].join("::"))
                .find(|m| known.contains_key(m))
            {
                out.insert(m);
            } else if parts.first() == Some(&"ensure") {
                // `crate::ensure!`, the macro driver/fail.rs exports at the crate root.
                out.insert("driver::fail".to_string());
            } else if let Some(top) = parts.first() {
                out.insert(top.to_string());
            }
        }
    }
    out
}

#[cfg(target_os = "linux")]
#[test]
fn imports_run_downward_without_cycles() {
    let mut known = BTreeMap::new();
    files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), "", &mut known);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut wrong = Vec::new();
    for (m, text) in &known {
        if m.is_empty() {
            continue;
        }
        let top = m.split("::").next().unwrap();
        for t in imports(text, &known) {
            let ttop = t.split("::").next().unwrap();
            if t == *m || ttop.is_empty() {
                continue;
            }
            let (a, b) = (rank(top), rank(ttop));
            if b > a || (a == b && top != ttop) {
                wrong.push(format!("{m} (layer {a}) imports {t} (layer {b})"));
            }
            edges.entry(m.clone()).or_default().insert(t);
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that do not run downward:\n{}",
        wrong.join("\n")
    );
    // A cycle: a module that reaches itself.
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = edges[start].iter().collect();
        while let Some(n) = todo.pop() {
            assert!(n != start, "import cycle through {start}");
            if seen.insert(n.clone()) {
                todo.extend(edges.get(n).into_iter().flatten());
            }
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn no_hand_written_file_over_700_lines() {
    let mut known = BTreeMap::new();
    files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), "", &mut known);
    let long: Vec<String> = known
        .iter()
        .filter(|(_, t)| t.lines().count() > 700)
        .map(|(m, t)| format!("{m}: {} lines", t.lines().count()))
        .collect();
    assert!(long.is_empty(), "split by concern: {long:?}");
}

#[cfg(not(target_os = "linux"))]
#[test]
fn linux_only() {
    panic!("{}", conformance::LINUX_ONLY);
}
