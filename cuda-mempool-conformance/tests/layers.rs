//! The conformance crate's layers, checked from its own paths (`crate::…`, `super::…`, `self::…`
//! and a module's own children): every import runs downward (model → os → driver → harness → cases
//! | report | run → suite), the three middle folders never import one another, no files import each
//! other in a circle, and a `mod.rs` only declares modules and re-exports. The ground floor, the
//! result vocabulary, is a crate of its own (`conformance_model`, model/): any layer may import it,
//! and it depends on serde and serde_json alone (`the_model_is_the_ground_floor`). Off Linux, where
//! the suite does not run, one test that fails saying so.

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

/// Module path of every .rs file under `src` ("" for lib.rs; `harness::case`; `cases::xproc`) with its
/// text, and the module paths that are a folder's `mod.rs` (or lib.rs) in `mods`.
#[cfg(target_os = "linux")]
fn files_with(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>, mods: &mut BTreeSet<String>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            files_with(&p, &format!("{prefix}{name}::"), out, mods);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let m = match name.as_str() {
                "lib" => String::new(),
                "mod" => prefix.trim_end_matches("::").to_string(),
                _ => format!("{prefix}{name}"),
            };
            if name == "lib" || name == "mod" {
                mods.insert(m.clone());
            }
            out.insert(m, std::fs::read_to_string(&p).unwrap());
        }
    }
}

/// A file's text before its unit tests (`#[cfg(test)] mod …`: their `super::` is the file itself,
/// and what tests import is no layer's business).
#[cfg(target_os = "linux")]
fn production(text: &str) -> &str {
    let mut at = 0;
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if l.trim() == "#[cfg(test)]" && lines.peek().is_some_and(|n| n.trim_start().starts_with("mod ")) {
            return &text[..at];
        }
        at += l.len() + 1;
    }
    text
}

/// The modules `module`'s file names: through `crate::…`, `super::…` (each `super` one step up),
/// `self::…`, and the child modules it declares (`mod name;`, then `name::…`). A `mod.rs` naming
/// its own children is its front door, not an import, and is left out (a mod.rs only declares and
/// re-exports: `mod_rs_files_only_declare`). Grouped `use crate::{a, b}` is not used here.
#[cfg(target_os = "linux")]
fn imports(module: &str, is_mod: bool, text: &str, known: &BTreeMap<String, String>) -> BTreeSet<String> {
    let text = production(text);
    let parts_of = |m: &str| -> Vec<String> { m.split("::").filter(|s| !s.is_empty()).map(String::from).collect() };
    let children: BTreeSet<String> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l
                .strip_prefix("pub(crate) ")
                .or_else(|| l.strip_prefix("pub "))
                .unwrap_or(l);
            l.strip_prefix("mod ")?.strip_suffix(';').map(|n| n.trim().to_string())
        })
        .collect();
    let mut out = BTreeSet::new();
    for line in text.lines().map(|l| l.split("//").next().unwrap_or("")) {
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < line.len() {
            // A path starts where no identifier character or `::` comes before it.
            let starts =
                i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
            let path: String = line[i..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            if !starts || path.is_empty() {
                i += line[i..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            i += path.len();
            let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            if segs.len() < 2 && !path.ends_with("::") {
                continue;
            }
            let mut base: Vec<String> = match segs.first().copied() {
                Some("crate") => {
                    segs.remove(0);
                    Vec::new()
                }
                Some("self") => {
                    segs.remove(0);
                    parts_of(module)
                }
                Some("super") => {
                    let mut b = parts_of(module);
                    while segs.first() == Some(&"super") {
                        segs.remove(0);
                        b.pop();
                    }
                    b
                }
                Some(child) if children.contains(child) => {
                    if is_mod {
                        continue;
                    }
                    parts_of(module)
                }
                _ => continue,
            };
            base.extend(segs.iter().map(|s| s.to_string()));
            // The longest prefix that is a file.
            if let Some(m) = (1..=base.len())
                .rev()
                .map(|n| base[..n].join("::"))
                .find(|m| known.contains_key(m))
            {
                out.insert(m);
            } else if base.first().map(String::as_str) == Some("ensure") {
                // `crate::ensure!`, the macro driver/fail.rs exports at the crate root.
                out.insert("driver::fail".to_string());
            } else if let Some(top) = base.first() {
                out.insert(top.clone());
            }
        }
    }
    if is_mod {
        // A mod.rs's `use` of its own folder is its front door.
        out.retain(|t| !(t.starts_with(module) && (module.is_empty() || t[module.len()..].starts_with("::"))));
    }
    out
}

/// The crate's modules under src/ with their text, and which of them are a folder's mod.rs.
#[cfg(target_os = "linux")]
fn src_modules() -> (BTreeMap<String, String>, BTreeSet<String>) {
    let (mut known, mut mods) = (BTreeMap::new(), BTreeSet::new());
    files_with(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        "",
        &mut known,
        &mut mods,
    );
    (known, mods)
}

#[cfg(target_os = "linux")]
#[test]
fn imports_run_downward_without_cycles() {
    let (known, mods) = src_modules();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut wrong = Vec::new();
    for (m, text) in &known {
        if m.is_empty() {
            continue;
        }
        let top = m.split("::").next().unwrap();
        for t in imports(m, mods.contains(m), text, &known) {
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
    // A cycle: a module that reaches itself (each such module named once, with what it imports).
    let mut cycles = Vec::new();
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = edges[start].iter().collect();
        while let Some(n) = todo.pop() {
            if n == start {
                cycles.push(format!("{start} (imports {:?})", edges[start]));
                break;
            }
            if seen.insert(n.clone()) {
                todo.extend(edges.get(n).into_iter().flatten());
            }
        }
    }
    assert!(cycles.is_empty(), "modules on an import cycle:\n{}", cycles.join("\n"));
}

/// The lines of a `mod.rs` that are neither comments, attributes, module declarations nor `use`s.
#[cfg(target_os = "linux")]
fn more_than_declarations(text: &str) -> Vec<String> {
    let mut extra = Vec::new();
    let mut in_use = false;
    for line in text.lines() {
        let l = line.split("//").next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        if in_use {
            in_use = !l.ends_with(';');
            continue;
        }
        let bare = ["pub(crate) ", "pub(super) ", "pub "]
            .iter()
            .find_map(|v| l.strip_prefix(v))
            .unwrap_or(l);
        if l.starts_with("#[") || l.starts_with("#![") || (bare.starts_with("mod ") && l.ends_with(';')) {
            continue;
        }
        if bare.starts_with("use ") {
            in_use = !l.ends_with(';');
            continue;
        }
        extra.push(line.to_string());
    }
    extra
}

/// A folder's `mod.rs` declares its modules and re-exports; what it would hold besides belongs to
/// a file named for it (a mod.rs with code makes its children's `super::` a way back up).
#[cfg(target_os = "linux")]
#[test]
fn mod_rs_files_only_declare() {
    let (known, mods) = src_modules();
    let wrong: Vec<String> = mods
        .iter()
        .filter(|m| !m.is_empty())
        .filter_map(|m| {
            let extra = more_than_declarations(&known[m]);
            (!extra.is_empty()).then(|| {
                format!(
                    "src/{}/mod.rs: {} line(s), first: {}",
                    m.replace("::", "/"),
                    extra.len(),
                    extra[0].trim()
                )
            })
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "mod.rs files that hold more than declarations and re-exports:\n{}",
        wrong.join("\n")
    );
}

/// The checks' own readers, on made-up text: a `super::` and a child path are followed, a unit
/// test's `super::*` and a mod.rs's front door are not, and code in a mod.rs is found.
#[cfg(target_os = "linux")]
#[test]
fn the_readers_follow_relative_paths() {
    let known: BTreeMap<String, String> = ["a", "a::b", "a::c", "d"]
        .iter()
        .map(|m| (m.to_string(), String::new()))
        .collect();
    let file = "use super::c::Thing;\nuse crate::d::x;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::a::c;\n}\n";
    assert_eq!(
        imports("a::b", false, file, &known),
        BTreeSet::from(["a::c".to_string(), "d".to_string()])
    );
    let parent = "mod b;\nmod c;\npub use b::Thing;\nuse self::c::Other;\nuse crate::d::y;\n";
    assert_eq!(imports("a", true, parent, &known), BTreeSet::from(["d".to_string()]));
    let holder = "mod b;\nfn run() { b::go() }\n";
    assert_eq!(
        imports("a::x", false, holder, &known),
        BTreeSet::from(["a".to_string()])
    );
    assert_eq!(more_than_declarations(parent), Vec::<String>::new());
    assert_eq!(
        more_than_declarations("//! doc\nmod b;\npub use b::{\n    One,\n    Two,\n};\nfn f() {}\n"),
        ["fn f() {}"]
    );
}

/// Every source file of the workspace under `dir` (the generated bindings' folders left out).
#[cfg(target_os = "linux")]
fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        let name = p.file_name().unwrap_or_default().to_string_lossy().to_string();
        if p.is_dir() {
            if !["generated", "target", ".git", "node_modules"].contains(&name.as_str()) {
                sources(&p, out);
            }
        } else if [".rs", ".c", ".h", ".sh", ".py"].iter().any(|x| name.ends_with(x)) {
            out.push(p);
        }
    }
}

/// The model crate (model/) is the ground floor: its dependencies are serde and serde_json alone
/// (no driver, nothing of the suite), and its sources name no crate of the workspace.
#[cfg(target_os = "linux")]
#[test]
fn the_model_is_the_ground_floor() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("model");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let deps: Vec<&str> = manifest
        .split("\n[")
        .filter(|section| section.starts_with("dependencies]"))
        .flat_map(|section| section.lines().skip(1))
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split('=').next().map(str::trim))
        .collect();
    assert_eq!(deps, ["serde", "serde_json"], "the model depends on serde alone");
    assert!(!manifest.contains("[build-dependencies]"), "the model builds nothing");
    let mut files = Vec::new();
    sources(&dir.join("src"), &mut files);
    assert!(files.iter().any(|f| f.ends_with("lib.rs")), "model/src/lib.rs is there");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for name in ["conformance::", "cuda_mempool_sys", "conformance_model::"] {
            assert!(
                !text.contains(name),
                "{} names {name}: the model imports nothing",
                f.display()
            );
        }
    }
}

/// No hand-written file of the workspace (the suite, its tests, benches and shim, the sys crate,
/// xtask, the benches crate, CI scripts) is over 700 lines: one concern a file.
#[cfg(target_os = "linux")]
#[test]
fn no_hand_written_file_over_700_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for d in [
        "cuda-mempool-conformance",
        "cuda-mempool-sys",
        "xtask",
        "ffi-bench",
        ".ci",
    ] {
        sources(&root.join(d), &mut files);
    }
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).ok()?;
            // Generated files say so on their first line.
            if text.lines().next().is_some_and(|l| l.contains("@generated")) {
                return None;
            }
            let n = text.lines().count();
            (n > 700).then(|| format!("{}: {n} lines", f.strip_prefix(&root).unwrap_or(f).display()))
        })
        .collect();
    assert!(
        files.len() > 100,
        "found only {} source files: is the workspace there?",
        files.len()
    );
    assert!(long.is_empty(), "split by concern: {long:?}");
}

#[cfg(not(target_os = "linux"))]
#[test]
fn linux_only() {
    panic!("{}", conformance::LINUX_ONLY);
}
