//! The workspace's module structure, checked from its own paths. In the conformance crate every
//! import runs downward (model → os → driver → harness → cases | report | run → suite) and the three
//! middle folders never import one another; the ground floor, the run's vocabulary, is a crate of its
//! own (`conformance_model`, model/): any layer may import it, and it depends on serde and
//! serde_json alone (`the_model_is_the_ground_floor`). In every module tree of the workspace (the
//! conformance crate, each of its test and bench targets, the model, xtask, cuda-mempool-sys,
//! ffi-bench) no modules import one another in a circle, a child's `use super::{a, b}` and a
//! parent's `pub use child::X` counted (the reader: layers/source.rs, layers/tree.rs,
//! layers/graph.rs); a `mod.rs` only declares modules and re-exports; no hand-written file is over
//! 700 lines. Off Linux, where the suite does not run, one test that fails saying so.

#[cfg(target_os = "linux")]
#[path = "layers/graph.rs"]
mod graph;
#[cfg(target_os = "linux")]
#[path = "layers/source.rs"]
mod source;
#[cfg(target_os = "linux")]
#[path = "layers/tree.rs"]
mod tree;

#[cfg(target_os = "linux")]
use std::collections::{BTreeMap, BTreeSet};
#[cfg(target_os = "linux")]
use std::path::{Path, PathBuf};
#[cfg(target_os = "linux")]
use tree::Module;

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

/// The workspace's crates whose module trees are checked (their generated bindings left out).
#[cfg(target_os = "linux")]
const CRATES: &[&str] = &["cuda-mempool-conformance", "cuda-mempool-sys", "xtask", "ffi-bench"];

#[cfg(target_os = "linux")]
fn workspace() -> PathBuf {
    tree::normal(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
}

/// A file as the workspace names it (cuda-mempool-conformance/tests/mutants.rs).
#[cfg(target_os = "linux")]
fn shown(f: &Path) -> String {
    f.strip_prefix(workspace()).unwrap_or(f).display().to_string()
}

/// A file's text for the reader; a generated file's (bindgen's) is left unread.
#[cfg(target_os = "linux")]
fn source(f: &Path) -> Option<String> {
    let text = std::fs::read_to_string(f).ok()?;
    Some(if f.components().any(|c| c.as_os_str() == "generated") {
        String::new()
    } else {
        text
    })
}

/// Every module tree of the workspace's crates, by root file: a root is a .rs file that no other
/// file's tree holds as a module (lib.rs, main.rs, build.rs, tests/root/NAME.rs, examples; not
/// tests/NAME.rs, which tests/root/NAME.rs holds as its module `linux`).
#[cfg(target_os = "linux")]
fn workspace_trees() -> Vec<(PathBuf, BTreeMap<String, Module>)> {
    let mut files = Vec::new();
    for c in CRATES {
        sources(&workspace().join(c), &mut files);
    }
    let trees: Vec<(PathBuf, BTreeMap<String, Module>)> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|x| x == "rs"))
        .map(|f| (tree::normal(f), tree::tree(f, &source)))
        .collect();
    let held: BTreeSet<PathBuf> = trees
        .iter()
        .flat_map(|(root, t)| t.values().map(|m| m.file.clone()).filter(move |f| f != root))
        .collect();
    trees.into_iter().filter(|(root, _)| !held.contains(root)).collect()
}

/// The conformance crate's tree (src/lib.rs and every module under it).
#[cfg(target_os = "linux")]
fn src_tree() -> BTreeMap<String, Module> {
    tree::tree(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"), &source)
}

#[cfg(target_os = "linux")]
#[test]
fn imports_run_downward() {
    let tree = src_tree();
    let mut wrong = Vec::new();
    for (m, targets) in graph::imports(&tree) {
        let top = m.split("::").next().unwrap();
        for t in targets {
            let ttop = t.split("::").next().unwrap();
            if m.is_empty() || ttop.is_empty() {
                continue;
            }
            let (a, b) = (rank(top), rank(ttop));
            if b > a || (a == b && top != ttop) {
                wrong.push(format!("{m} (layer {a}) imports {t} (layer {b})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that do not run downward:\n{}",
        wrong.join("\n")
    );
}

/// No module tree of the workspace has modules that import one another in a circle: not a parent
/// and its child (the child's `use super::{…}`, the parent's `pub use child::…` or `child::f()`),
/// not siblings, not a chain of them.
#[cfg(target_os = "linux")]
#[test]
fn no_import_cycles_in_the_workspace() {
    let trees = workspace_trees();
    let root = |p: &str| trees.iter().find(|(r, _)| shown(r) == p).map(|(_, t)| t);
    // The reader sees what it must: the crate, the model crate, a test target's tree
    // through its Linux root, the sys crate's OS loaders.
    let lib = root("cuda-mempool-conformance/src/lib.rs").expect("no tree for the conformance crate");
    assert!(lib.len() > 100, "the conformance crate has only {} modules", lib.len());
    let holds = |r: &str, m: &str, f: &str| root(r).and_then(|t| t.get(m)).is_some_and(|x| shown(&x.file) == f);
    assert!(holds(
        "cuda-mempool-conformance/model/src/lib.rs",
        "trial",
        "cuda-mempool-conformance/model/src/trial.rs"
    ));
    assert!(holds(
        "cuda-mempool-conformance/tests/root/mutants.rs",
        "linux::verdict",
        "cuda-mempool-conformance/tests/mutants/verdict.rs"
    ));
    assert!(holds(
        "cuda-mempool-sys/src/lib.rs",
        "loader::windows",
        "cuda-mempool-sys/src/loader/windows.rs"
    ));
    let mut found = Vec::new();
    for (r, t) in &trees {
        for cycle in graph::cycles(&graph::imports(t)) {
            let named: Vec<String> = cycle
                .iter()
                .map(|m| format!("{} ({})", if m.is_empty() { "(root)" } else { m }, shown(&t[m].file)))
                .collect();
            found.push(format!("{}: {}", shown(r), named.join(" ↔ ")));
        }
    }
    assert!(
        found.is_empty(),
        "modules that import one another in a circle (move what a child takes from its parent into a \
         sibling both import):\n{}",
        found.join("\n")
    );
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

/// A tree of made-up files under p/ (p/lib.rs its root).
#[cfg(target_os = "linux")]
fn planted(files: &[(&str, &str)]) -> BTreeMap<String, Module> {
    let files: BTreeMap<PathBuf, String> = files.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())).collect();
    tree::tree(Path::new("p/lib.rs"), &|f: &Path| files.get(f).cloned())
}

#[cfg(target_os = "linux")]
fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// The reader on planted text: a child's grouped `use super::{…}` of its parent's item and a
/// parent's re-export of a child whose code names the parent are cycles, whatever the real code
/// does; a sibling reached through the parent's re-export, a `#[path]` module reached by `super::`,
/// a unit test's `super::*`, comments and literals are not.
#[cfg(target_os = "linux")]
#[test]
fn the_reader_sees_grouped_super_and_reexport_cycles() {
    let t = planted(&[
        ("p/lib.rs", "mod a;\nmod b;\nmod m;\npub fn helper() {}\nfn main() { a::run(); }\n"),
        ("p/a.rs", "use super::{b, helper};\npub fn run() { helper(); b::go(); }\n"),
        (
            "p/b.rs",
            "//! use super::helper;\n#[path = \"../shared/common.rs\"]\nmod common;\npub fn go() { let q = '\"'; \
             let r = r#\"super::helper \"#; common::f(q, r) }\n#[cfg(test)]\nmod tests {\n    use super::super::*;\n}\n",
        ),
        ("shared/common.rs", "pub fn f<'a>(_: char, _: &'a str) {}\n"),
        ("p/m/mod.rs", "mod c;\nmod d;\npub use c::Thing;\npub const LIMIT: u32 = 1;\n"),
        ("p/m/c.rs", "pub struct Thing;\nfn f() -> u32 {\n    super::LIMIT\n}\n"),
        ("p/m/d.rs", "use super::Thing;\nuse crate::b::{self as bee};\n"),
    ]);
    assert_eq!(shown(&t["b::common"].file), "shared/common.rs");
    let edges = graph::imports(&t);
    assert_eq!(edges["a"], set(&["", "b"]));
    assert_eq!(edges["b"], set(&["b::common"]));
    assert_eq!(edges["m"], set(&["m::c"]));
    assert_eq!(edges["m::d"], set(&["b", "m::c"]));
    assert_eq!(
        graph::cycles(&edges),
        vec![
            vec!["".to_string(), "a".to_string()],
            vec!["m".to_string(), "m::c".to_string()]
        ]
    );
    // The same tree with the parent's item moved into a sibling both import: no cycle left.
    let t = planted(&[
        ("p/lib.rs", "mod a;\nmod h;\nfn main() { a::run(); }\n"),
        ("p/a.rs", "use super::{h::helper};\npub fn run() { helper() }\n"),
        ("p/h.rs", "pub fn helper() {}\n"),
    ]);
    assert_eq!(graph::cycles(&graph::imports(&t)), Vec::<Vec<String>>::new());
}

/// The reader's pieces: literals and comments blanked in place, `use` trees expanded.
#[cfg(target_os = "linux")]
#[test]
fn the_reader_blanks_literals_and_expands_use_trees() {
    let (code, bare) = source::blank("let s = \"a::b\"; // c::d\nlet c = '\\''; x::y");
    assert_eq!(code.len(), bare.len());
    assert!(!code.contains("c::d") && code.contains("a::b") && !bare.contains("a::b") && bare.ends_with("x::y"));
    let d = tree::read("pub(crate) use super::{a::{self, B as C}, d::*};\nuse crate::e;\n");
    let uses: Vec<(String, Option<String>, bool)> = d
        .uses
        .iter()
        .map(|u| (u.path.join("::"), u.name.clone(), u.public))
        .collect();
    assert_eq!(
        uses,
        [
            ("super::a".to_string(), Some("a".to_string()), true),
            ("super::a::B".to_string(), Some("C".to_string()), true),
            ("super::d".to_string(), None, true),
            ("crate::e".to_string(), Some("e".to_string()), false),
        ]
    );
    assert_eq!(
        more_than_declarations("mod b;\npub use b::{\n    One,\n    Two,\n};\n"),
        Vec::<String>::new()
    );
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
