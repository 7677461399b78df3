//! Issue 48's rule: every trial can fail for the reason in its name. A trial whose body, and every
//! function of the crate it reaches by name, holds no outcome-bearing statement (`ensure!`,
//! `expect(`, `ok(`, `Err(`, an assertion) only records what it sees: it passes whatever the
//! library does. Such a trial fails this test unless [`ALLOWED`] names it with a reason. Read from
//! the sources (no GPU needed): each `Case::gpu(`, `Case::new(` and `Case::of(` under `src/cases/`.

#[cfg(target_os = "linux")]
use std::collections::{BTreeMap, BTreeSet};

/// Record-only trials kept on purpose, each with why (none today).
#[cfg(target_os = "linux")]
const ALLOWED: &[(&str, &str)] = &[];

/// What makes a statement outcome-bearing: a check that fails the trial.
#[cfg(target_os = "linux")]
const ASSERTS: &[&str] = &[
    "ensure!",
    "expect",
    "expect_op",
    "Err",
    "assert!",
    "assert_eq!",
    "assert_ne!",
    "panic!",
    "unreachable!",
];

/// Functions that check a call's answer (setup: the call answered SUCCESS), not the trial's claim:
/// reaching them bears no outcome.
#[cfg(target_os = "linux")]
const SETUP: &[&str] = &["ok"];

/// `src` with comments, string and char literals blanked (same length, newlines kept), so that
/// braces and words inside them are not read as code.
#[cfg(target_os = "linux")]
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in out.iter_mut().take(to).skip(from) {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |k| i + k);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = src[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
                blank(&mut out, i, end);
                i = end;
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = src[start..].find(&close).map_or(b.len(), |k| start + k + close.len());
                // Keep the quotes so that a name in the literal can still be found as a literal.
                blank(&mut out, start, end - close.len());
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j.min(b.len()));
                i = j + 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
                let esc = b.get(i + 1) == Some(&b'\\');
                let close = if esc {
                    src[i + 2..].find('\'').map(|k| i + 2 + k)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 2)
                } else {
                    None
                };
                match close {
                    Some(end) => {
                        blank(&mut out, i + 1, end);
                        i = end + 1;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8 boundaries of ASCII")
}

/// The end (exclusive) of the bracketed group that opens at `open` (`(`, `{` or `[`).
#[cfg(target_os = "linux")]
fn group_end(code: &str, open: usize) -> usize {
    let mut depth = 0i32;
    for (k, c) in code[open..].char_indices() {
        match c {
            '(' | '{' | '[' => depth += 1,
            ')' | '}' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return open + k + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

#[cfg(target_os = "linux")]
fn ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether `code` holds the word `w` (not inside a longer identifier; a macro's `!` included).
#[cfg(target_os = "linux")]
fn has_word(code: &str, w: &str) -> bool {
    let b = code.as_bytes();
    let mut from = 0;
    while let Some(k) = code[from..].find(w) {
        let at = from + k;
        let before = at == 0 || !ident_char(b[at - 1]);
        let end = at + w.len();
        let after = w.ends_with('!') || end >= b.len() || !ident_char(b[end]);
        if before && after {
            return true;
        }
        from = at + 1;
    }
    false
}

/// The functions `code` reaches: those it calls (`name(`, `.name(`, `path::name(`), and a
/// trailing argument that names a function (`Case::gpu(820, "x", judged)`).
#[cfg(target_os = "linux")]
fn calls(code: &str) -> BTreeSet<String> {
    let b = code.as_bytes();
    let mut v = BTreeSet::new();
    for (k, _) in code.match_indices('(') {
        let mut s = k;
        while s > 0 && ident_char(b[s - 1]) {
            s -= 1;
        }
        if s < k {
            v.insert(code[s..k].to_string());
        }
    }
    let last = code.trim_end_matches(|c: char| c == ')' || c.is_whitespace() || c == ',');
    let tail: String = last
        .chars()
        .rev()
        .take_while(|&c| c.is_alphanumeric() || c == '_')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    if !tail.is_empty() {
        v.insert(tail);
    }
    v
}

/// Every `fn NAME … { body }` of `code`, by name (functions of one name anywhere merged).
#[cfg(target_os = "linux")]
fn functions(code: &str, into: &mut BTreeMap<String, String>) {
    let b = code.as_bytes();
    let mut from = 0;
    while let Some(k) = code[from..].find("fn ") {
        let at = from + k;
        from = at + 3;
        if at > 0 && ident_char(b[at - 1]) {
            continue;
        }
        let name: String = code[at + 3..]
            .chars()
            .take_while(|&c| c.is_alphanumeric() || c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body: the first `{` after the signature, unless a `;` ends a declaration first.
        let rest = &code[at..];
        let (Some(brace), semi) = (rest.find('{'), rest.find(';')) else {
            continue;
        };
        if semi.is_some_and(|s| s < brace) {
            continue;
        }
        let end = group_end(code, at + brace);
        into.entry(name).or_default().push_str(&code[at + brace..end]);
    }
}

/// Whether `code`, or a function of `fns` it reaches by name, bears an outcome.
#[cfg(target_os = "linux")]
fn asserts(code: &str, fns: &BTreeMap<String, String>, seen: &mut BTreeSet<String>) -> bool {
    if ASSERTS.iter().any(|w| has_word(code, w)) {
        return true;
    }
    calls(code).into_iter().any(|name| {
        !SETUP.contains(&name.as_str())
            && seen.insert(name.clone())
            && fns.get(&name).is_some_and(|body| asserts(body, fns, seen))
    })
}

/// Whether a table row (data: a name, functions named as values) names a function that asserts.
#[cfg(target_os = "linux")]
fn row_asserts(row: &str, fns: &BTreeMap<String, String>) -> bool {
    row.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !SETUP.contains(w))
        .any(|w| fns.get(w).is_some_and(|body| asserts(body, fns, &mut BTreeSet::new())))
}

/// Each trial constructor of `src` (`Case::gpu(`, `Case::new(`, `Case::of(`): its name as written
/// (the first string literal of its arguments, `format!` templates included) and the code it runs:
/// its arguments, and where they call a row of a table the trial loops over (`for &(name, body)
/// in ROWS`), each row's functions ([`rows`]).
#[cfg(target_os = "linux")]
fn trials(src: &str) -> Vec<(String, Vec<String>)> {
    let code = code_only(src);
    let mut v = Vec::new();
    for pat in ["Case::gpu(", "Case::new(", "Case::of("] {
        for (k, _) in code.match_indices(pat) {
            let open = k + pat.len() - 1;
            let end = group_end(&code, open);
            let args = &src[open..end];
            let name = args
                .split('"')
                .nth(1)
                .map_or_else(|| "(a name made at run time)".to_string(), str::to_string);
            let mut bodies = vec![code[open..end].to_string()];
            bodies.extend(rows(&code, k, &code[open..end]));
            v.push((name, bodies));
        }
    }
    v
}

/// Where the trial at `at` sits in `for PATTERN in TABLE` and its arguments call a name the pattern
/// binds: each row's text of TABLE's initialiser (a row is the trial's body then).
#[cfg(target_os = "linux")]
fn rows(code: &str, at: usize, args: &str) -> Vec<String> {
    let Some(f) = code[..at].rfind("for ") else {
        return Vec::new();
    };
    let head = &code[f + 4..at];
    let Some((pattern, rest)) = head.split_once(" in ") else {
        return Vec::new();
    };
    let table: String = rest
        .trim_start()
        .chars()
        .take_while(|&c| c.is_alphanumeric() || c == '_')
        .collect();
    let bound: BTreeSet<String> = pattern
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    if table.is_empty() || calls(args).is_disjoint(&bound) {
        return Vec::new();
    }
    let Some(def) = [format!("const {table}"), format!("static {table}")]
        .iter()
        .find_map(|d| code.find(d.as_str()))
    else {
        return Vec::new();
    };
    // The initialiser's brackets (after `=`: the type may hold brackets too, `&[Row]`).
    let Some(open) = code[def..]
        .find('=')
        .and_then(|eq| code[def + eq..].find('[').map(|k| def + eq + k))
    else {
        return Vec::new();
    };
    let end = group_end(code, open);
    // The rows: the groups one level inside the table's brackets.
    let mut v = Vec::new();
    let mut i = open + 1;
    while i < end - 1 {
        match code.as_bytes()[i] {
            b'(' | b'{' | b'[' => {
                let e = group_end(code, i);
                v.push(code[i..e].to_string());
                i = e;
            }
            _ => i += 1,
        }
    }
    v
}

/// The record-only trials of the sources `files` (path, text), with the crate's functions from
/// `all` (path, text).
#[cfg(target_os = "linux")]
fn record_only(files: &[(String, String)], all: &[(String, String)]) -> Vec<String> {
    let mut fns = BTreeMap::new();
    for (_, text) in all {
        functions(&code_only(text), &mut fns);
    }
    let mut v = Vec::new();
    for (path, text) in files {
        for (name, bodies) in trials(text) {
            // Looping over a table whose rows name the body: every row's functions must assert.
            let rows = &bodies[1..];
            let asserting = asserts(&bodies[0], &fns, &mut BTreeSet::new())
                || (!rows.is_empty() && rows.iter().all(|r| row_asserts(r, &fns)));
            if !asserting {
                v.push(format!("{path}: {name}"));
            }
        }
    }
    v
}

#[cfg(target_os = "linux")]
fn sources(dir: &std::path::Path, into: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, into);
        } else if p.extension().is_some_and(|e| e == "rs") {
            into.push((p.display().to_string(), std::fs::read_to_string(&p).unwrap()));
        }
    }
}

/// No trial of the suite records without asserting, but those [`ALLOWED`] names.
#[cfg(target_os = "linux")]
#[test]
fn no_trial_only_records() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (mut all, mut cases) = (Vec::new(), Vec::new());
    sources(&src, &mut all);
    sources(&src.join("cases"), &mut cases);
    let cases: Vec<_> = cases
        .into_iter()
        .map(|(p, t)| (p.rsplit_once("/src/").map_or(p.clone(), |x| x.1.to_string()), t))
        .collect();
    let found = record_only(&cases, &all);
    assert!(
        !cases.is_empty() && !all.is_empty(),
        "no sources under {}",
        src.display()
    );
    let allowed = |f: &String| ALLOWED.iter().any(|(n, _)| f.ends_with(&format!(": {n}")));
    let bad: Vec<&String> = found.iter().filter(|f| !allowed(f)).collect();
    assert!(
        bad.is_empty(),
        "trials that only record (no ensure!/expect/ok/Err/assert in them or in what they call): {bad:#?}\n\
         make each assert what its name claims, or add it to ALLOWED in tests/record_only.rs with a reason"
    );
    let stale: Vec<&str> = ALLOWED
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !found.iter().any(|f| f.ends_with(&format!(": {n}"))))
        .collect();
    assert!(
        stale.is_empty(),
        "ALLOWED names trials that assert now (remove them): {stale:?}"
    );
}

/// The rule fires: a trial that only notes is found, through a helper too, and a table-driven one
/// with a row that only notes; one that asserts, directly or in a helper it calls or in every row,
/// is not; words in strings and comments do not count.
#[cfg(target_os = "linux")]
#[test]
fn the_rule_finds_a_trial_that_only_records() {
    let file = r#"
        fn figures(e: &Env) -> R { note(format!("ok(1) // Err( ensure!")); Ok(()) }
        fn judged(e: &Env) -> R { ensure!(1 == 1, "x"); Ok(()) }
        fn cases() -> Vec<Case> {
            vec![
                Case::gpu(820, "only_notes", |e| { note("seen: expect(".into()); Ok(()) }),
                Case::gpu(820, "notes_through_a_helper", |e| figures(e)),
                Case::gpu(820, "asserts", |e| { let r = 0; ensure!(r == 0, "r"); Ok(()) }),
                Case::gpu(820, "asserts_in_a_helper", judged),
                // Case::gpu(820, "commented_out", |e| Ok(())),
            ]
        }
        fn notes_only(e: &Env) -> R { note("x".into()); Ok(()) }
        const ROWS: &[(&str, fn(&Env) -> R)] = &[("a", judged), ("b", notes_only)];
        const GOOD: &[(&str, fn(&Env) -> R)] = &[("c", judged)];
        fn tables() -> Vec<Case> {
            let mut v = Vec::new();
            for &(name, body) in ROWS {
                v.push(Case::gpu(820, name, move |e| body(e)));
            }
            for &(name, body) in GOOD {
                v.push(Case::gpu(820, name, move |e| body(e)));
            }
            v
        }
    "#;
    let files = vec![("cases/x.rs".to_string(), file.to_string())];
    let found = record_only(&files, &files);
    assert_eq!(
        found,
        [
            "cases/x.rs: only_notes",
            "cases/x.rs: notes_through_a_helper",
            "cases/x.rs: (a name made at run time)"
        ]
    );
}

#[cfg(not(target_os = "linux"))]
#[test]
fn linux_only() {
    panic!("the conformance suite runs on Linux only; its source checks with it");
}
