//! A module tree's imports and their cycles. Each `use` leaf and each path in code is made
//! absolute (`crate::`, `self::`, `super::`, a child's name; other paths leave the crate), then
//! followed to the module that holds what it names: through `pub use` re-exports (named and glob)
//! to the defining module, `#[macro_export]` macros to their file. A name reached through a
//! module's private `use`, or its own item, counts as that module: a child's `use super::{a, b}`
//! is an import of its parent, and a parent's `pub use child::X` one of its child. Cycles are the
//! strongly connected components of more than one module (Tarjan).

use super::tree::Module;
use std::collections::{BTreeMap, BTreeSet};

type Tree = BTreeMap<String, Module>;

fn parts(m: &str) -> Vec<String> {
    m.split("::").filter(|s| !s.is_empty()).map(String::from).collect()
}

/// `path`, written in `module`, from the crate root; None where it leaves the crate.
fn absolute(tree: &Tree, module: &str, path: &[String]) -> Option<Vec<String>> {
    let first = path.first()?.as_str();
    let mut base = match first {
        "crate" => Vec::new(),
        "self" => parts(module),
        "super" => {
            let mut b = parts(module);
            let ups = path.iter().take_while(|s| *s == "super").count();
            for _ in 0..ups {
                b.pop()?;
            }
            b.extend(path[ups..].iter().cloned());
            return Some(b);
        }
        child if tree[module].decls.children.iter().any(|c| c.0 == child) => {
            let mut b = parts(module);
            b.push(child.to_string());
            b.extend(path[1..].iter().cloned());
            return Some(b);
        }
        _ => return None,
    };
    base.extend(path[1..].iter().cloned());
    Some(base)
}

/// A module's re-exports by name (absolute targets) and its glob re-exports.
fn reexports(tree: &Tree, module: &str) -> (BTreeMap<String, Vec<String>>, Vec<Vec<String>>) {
    let (mut named, mut globs) = (BTreeMap::new(), Vec::new());
    for u in tree[module].decls.uses.iter().filter(|u| u.public) {
        let Some(target) = absolute(tree, module, &u.path) else {
            continue;
        };
        match &u.name {
            Some(n) if n != "_" => drop(named.insert(n.clone(), target)),
            Some(_) => {}
            None => globs.push(target),
        }
    }
    (named, globs)
}

/// Whether `module` has `name`: defines it, re-exports it or declares it as a child.
fn has(tree: &Tree, module: &str, name: &str) -> bool {
    tree.get(module).is_some_and(|m| {
        m.decls.items.contains(name)
            || m.decls.children.iter().any(|c| c.0 == name)
            || m.decls.uses.iter().any(|u| u.public && u.name.as_deref() == Some(name))
    })
}

/// The module that holds what the absolute path `p` names (None: not in this tree).
fn resolve(tree: &Tree, p: &[String], seen: &mut BTreeSet<(String, String)>) -> Option<String> {
    for n in (0..=p.len()).rev() {
        let m = p[..n].join("::");
        if !tree.contains_key(&m) {
            continue;
        }
        let Some(name) = p.get(n) else { return Some(m) };
        let (named, globs) = reexports(tree, &m);
        if let Some(target) = named.get(name) {
            if seen.insert((m.clone(), name.clone())) {
                let mut t = target.clone();
                t.extend(p[n + 1..].iter().cloned());
                return resolve(tree, &t, seen);
            }
        }
        if !tree[&m].decls.items.contains(name) {
            if m.is_empty() {
                if let Some((owner, _)) = tree.iter().find(|(_, x)| x.decls.macros.contains(name)) {
                    return Some(owner.clone());
                }
            }
            for g in globs {
                if has(tree, &g.join("::"), name) && seen.insert((m.clone(), format!("*{}", g.join("::")))) {
                    let mut t = g.clone();
                    t.extend(p[n..].iter().cloned());
                    return resolve(tree, &t, seen);
                }
            }
        }
        return Some(m);
    }
    None
}

/// Every module's imports: the other modules of the tree that its `use`s and paths name.
pub fn imports(tree: &Tree) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, module) in tree {
        let named = module.decls.uses.iter().map(|u| &u.path).chain(&module.decls.paths);
        let targets: BTreeSet<String> = named
            .filter_map(|p| absolute(tree, m, p))
            .filter_map(|p| resolve(tree, &p, &mut BTreeSet::new()))
            .filter(|t| t != m)
            .collect();
        out.insert(m.clone(), targets);
    }
    out
}

/// The cycles of `edges`: each strongly connected component of more than one module, sorted.
pub fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let l = self.low[v].min(self.low[w.as_str()]);
                    self.low.insert(v, l);
                } else if self.stack.contains(&w.as_str()) {
                    let l = self.low[v].min(self.index[w.as_str()]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    comp.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = Tarjan {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out.sort();
    t.out
}
