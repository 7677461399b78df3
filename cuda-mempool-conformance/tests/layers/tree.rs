//! A target's module tree, read from its root file: every `mod` declaration followed (`#[path]`
//! too, and each file's folder for its children), and what each module declares: its children,
//! its `use` trees (grouped, `self`, `*`, `as`; which of them are `pub`), the paths its code names,
//! the names it defines and the macros it exports. Unit-test modules (`#[cfg(test)] mod x { … }`)
//! are skipped: what tests import is no structure's business.

use super::source::{blank, tokens, Tok};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// A leaf of a `use` tree: its path as written (`self` leaves folded into their prefix), the name
/// it binds (None for a glob), and whether it is a re-export (`pub`, `pub(crate)`, …).
#[derive(Clone, Debug, PartialEq)]
pub struct Use {
    pub path: Vec<String>,
    pub name: Option<String>,
    pub public: bool,
}

/// What one file declares and names.
#[derive(Clone, Debug, Default)]
pub struct Decls {
    /// `mod name;` children, each with its `#[path]`, if any.
    pub children: Vec<(String, Option<String>)>,
    pub uses: Vec<Use>,
    /// Paths of two segments or more in code (`super::x::f`, `child::T`); in an inline module,
    /// its own `super`s already taken off.
    pub paths: Vec<Vec<String>>,
    /// Names of items defined here (fn, const, static, struct, enum, type, trait, union).
    pub items: BTreeSet<String>,
    /// `#[macro_export] macro_rules! name`: at the crate root, whatever file defines them.
    pub macros: BTreeSet<String>,
}

/// Index of the token that closes the bracket opened at `i`.
fn closing(t: &[Tok], i: usize) -> usize {
    let (open, close) = match t[i].s {
        "(" => ("(", ")"),
        "[" => ("[", "]"),
        _ => ("{", "}"),
    };
    let mut depth = 0;
    for (k, tok) in t.iter().enumerate().skip(i) {
        if tok.s == open {
            depth += 1;
        } else if tok.s == close {
            depth -= 1;
            if depth == 0 {
                return k;
            }
        }
    }
    t.len() - 1
}

/// The leaves of the `use` tree in `t` (the tokens between `use` and `;`), under `prefix`.
fn leaves(t: &[&str], prefix: &[String], public: bool, out: &mut Vec<Use>) {
    let mut path = prefix.to_vec();
    let mut i = 0;
    while i < t.len() {
        match t[i] {
            "::" => i += 1,
            "*" => {
                out.push(Use {
                    path,
                    name: None,
                    public,
                });
                return;
            }
            "{" => {
                // Split the group at its top-level commas.
                let (mut depth, mut start) = (0, i + 1);
                for k in i + 1..t.len() {
                    match t[k] {
                        "{" => depth += 1,
                        "}" if depth > 0 => depth -= 1,
                        "," | "}" if depth == 0 => {
                            if k > start {
                                leaves(&t[start..k], &path, public, out);
                            }
                            start = k + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            "as" => {
                let name = t.get(i + 1).map(|s| s.to_string());
                out.push(Use { path, name, public });
                return;
            }
            "self" if !path.is_empty() => {
                let name = path.last().cloned();
                let name = if t.get(i + 1) == Some(&"as") {
                    t.get(i + 2).map(|s| s.to_string())
                } else {
                    name
                };
                out.push(Use { path, name, public });
                return;
            }
            s => {
                path.push(s.to_string());
                i += 1;
            }
        }
    }
    if let Some(name) = path.last().cloned() {
        out.push(Use {
            path,
            name: Some(name),
            public,
        });
    }
}

/// A path written `levels` inline modules deep, as the file's module reads it: each level's `super`
/// is that inline module's parent (the file's module, or the next level out).
fn lift(path: &mut Vec<String>, levels: usize) {
    for _ in 0..levels {
        match path.first().map(String::as_str) {
            Some("super") if path.get(1).map(String::as_str) == Some("super") => drop(path.remove(0)),
            Some("super") => path[0] = "self".to_string(),
            _ => break,
        }
    }
}

/// The declarations of a file's text.
pub fn read(text: &str) -> Decls {
    let (code, bare) = blank(text);
    let t = tokens(&bare);
    let mut d = Decls::default();
    let mut attrs: Vec<&str> = Vec::new();
    let mut public = false;
    // Brace depth, and the depths at which the inline (non-test) modules we are in opened.
    let (mut depth, mut inline): (usize, Vec<usize>) = (0, Vec::new());
    let mut i = 0;
    while i < t.len() {
        let s = t[i].s;
        let next = t.get(i + 1).map_or("", |n| n.s);
        match s {
            "#" if next == "[" || (next == "!" && t.get(i + 2).is_some_and(|n| n.s == "[")) => {
                let open = if next == "[" { i + 1 } else { i + 2 };
                let close = closing(&t, open);
                if next == "[" {
                    attrs.push(&code[t[i].at..t[close].at + 1]);
                }
                i = close + 1;
                continue;
            }
            "pub" => {
                public = true;
                i += if next == "(" { closing(&t, i + 1) + 1 - i } else { 1 };
                continue;
            }
            "mod" if t.get(i + 2).is_some_and(|n| n.s == ";" || n.s == "{") => {
                let test = attrs.iter().any(|a| {
                    a.starts_with("#[cfg(") && a.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == "test")
                });
                if t[i + 2].s == ";" {
                    let path = attrs.iter().find_map(|a| {
                        let rest = a.strip_prefix("#[path")?.trim_start().strip_prefix('=')?.trim();
                        Some(rest.trim_end_matches(']').trim().trim_matches('"').to_string())
                    });
                    d.children.push((next.to_string(), path));
                    i += 3;
                } else if test {
                    i = closing(&t, i + 2) + 1;
                } else {
                    depth += 1;
                    inline.push(depth);
                    i += 3;
                }
            }
            "use" => {
                let end = (i..t.len()).find(|&k| t[k].s == ";").unwrap_or(t.len());
                let words: Vec<&str> = t[i + 1..end].iter().map(|k| k.s).collect();
                let from = d.uses.len();
                leaves(&words, &[], public, &mut d.uses);
                for u in &mut d.uses[from..] {
                    lift(&mut u.path, inline.len());
                }
                i = end + 1;
            }
            "macro_rules" if next == "!" => {
                if attrs.iter().any(|a| a.contains("macro_export")) {
                    d.macros.insert(t.get(i + 2).map_or("", |n| n.s).to_string());
                }
                i += 3;
            }
            "fn" | "const" | "static" | "struct" | "enum" | "type" | "trait" | "union" if !next.is_empty() => {
                d.items.insert(next.to_string());
                i += 1;
            }
            "{" => {
                depth += 1;
                i += 1;
            }
            "}" => {
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ if next == "::"
                && (i == 0 || t[i - 1].s != "::")
                && s.chars().all(|c| c.is_alphanumeric() || c == '_') =>
            {
                let mut path = vec![s.to_string()];
                let mut k = i + 1;
                while k + 1 < t.len() && t[k].s == "::" && t[k + 1].s.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    path.push(t[k + 1].s.to_string());
                    k += 2;
                }
                lift(&mut path, inline.len());
                if path.len() > 1 {
                    d.paths.push(path);
                }
                i = k;
            }
            _ => i += 1,
        }
        attrs.clear();
        public = false;
    }
    d
}

/// One module of a tree: its file and declarations.
#[derive(Clone, Debug)]
pub struct Module {
    pub file: PathBuf,
    pub decls: Decls,
}

/// A path with `.` and `..` taken out (no file system look-up).
pub fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if !out.as_os_str().is_empty() => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// The module tree whose root file is `root`, by module path ("" the root, `a::b`); `source`
/// gives a file's text, None where there is no such file.
pub fn tree(root: &Path, source: &dyn Fn(&Path) -> Option<String>) -> BTreeMap<String, Module> {
    let mut out = BTreeMap::new();
    let dir = root.parent().unwrap_or(Path::new("")).to_path_buf();
    walk(&normal(root), String::new(), &dir, source, &mut out);
    out
}

fn walk(
    file: &Path,
    module: String,
    dir: &Path,
    source: &dyn Fn(&Path) -> Option<String>,
    out: &mut BTreeMap<String, Module>,
) {
    let Some(text) = source(file) else { return };
    let decls = read(&text);
    // A file's children: `#[path]` beside the file (the file then being a folder's root for its
    // own children), else `dir/name.rs` or `dir/name/mod.rs` (their children in `dir/name/`).
    for (name, path) in &decls.children {
        let child = if module.is_empty() {
            name.clone()
        } else {
            format!("{module}::{name}")
        };
        if out.contains_key(&child) || module.split("::").count() > 32 {
            continue;
        }
        let (f, d) = match path {
            Some(p) => {
                let f = normal(&file.parent().unwrap_or(Path::new("")).join(p));
                let d = f.parent().unwrap_or(Path::new("")).to_path_buf();
                (f, d)
            }
            None => {
                let flat = normal(&dir.join(format!("{name}.rs")));
                let f = if source(&flat).is_some() {
                    flat
                } else {
                    normal(&dir.join(name).join("mod.rs"))
                };
                (f, dir.join(name))
            }
        };
        walk(&f, child, &d, source, out);
    }
    out.insert(
        module,
        Module {
            file: file.to_path_buf(),
            decls,
        },
    );
}
