//! Generating one major's bindings and its ABI probe (C and Rust halves), all in memory.

use crate::allowlist::{self, Func};
use crate::common;
use crate::docs;
use crate::headers::Headers;
use crate::pins::{self, Pin};
use crate::table;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

pub struct Generated {
    /// (path relative to the workspace root, contents)
    pub files: Vec<(String, String)>,
    /// What this major contributes to the shared module (generated/common.rs).
    pub shared: common::Shared,
}

fn c_compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

/// Runs the C preprocessor over `#include "wrapper.h"` followed by `body`, with `defines`.
pub fn preprocess(root: &Path, include: &Path, defines: &[&str], body: &str) -> Result<String, String> {
    let src = format!("#include \"wrapper.h\"\n{body}");
    let cc = c_compiler();
    let mut child = Command::new(&cc)
        .args(["-E", "-P", "-x", "c"])
        .args(defines.iter().map(|d| format!("-D{d}")))
        .arg("-")
        .arg(format!("-I{}", root.display()))
        .arg(format!("-I{}", include.display()))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!("cannot run the C compiler `{cc}` to resolve cuda.h's macros ({e}); install gcc or set CC")
        })?;
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(src.as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("`{cc} -E` over wrapper.h failed ({})", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What each macro name expands to after cuda.h / cudaTypedefs.h (with `defines`), as the C
/// preprocessor sees it; and the preprocessed text itself.
fn expand(
    root: &Path,
    include: &Path,
    defines: &[&str],
    names: &[String],
) -> Result<(BTreeMap<String, String>, String), String> {
    let mut body = String::new();
    for n in names {
        writeln!(body, "XTASK_RESOLVE {n} XTASK_END").unwrap();
    }
    let text = preprocess(root, include, defines, &body)?;
    let resolved: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("XTASK_RESOLVE "))
        .map(|l| l.trim_end_matches("XTASK_END").trim().to_string())
        .collect();
    if resolved.len() != names.len() {
        return Err("preprocessor output lost some XTASK_RESOLVE lines".into());
    }
    Ok((names.iter().cloned().zip(resolved).collect(), text))
}

/// What each C API name resolves to after cuda.h's macros, in this major (no per-thread default
/// stream): e.g. cuMemAlloc -> cuMemAlloc_v2. Asks the C preprocessor itself.
fn resolve_names(root: &Path, include: &Path, names: &[&str]) -> Result<BTreeMap<String, String>, String> {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    Ok(expand(root, include, &[], &names)?.0)
}

/// The ABI version of every function: cudaTypedefs.h's `PFN_*` typedefs (and, where the header
/// still has them, its `#define PFN_x PFN_x_vN` macros), both as the C preprocessor sees them.
fn abi_versions(
    root: &Path,
    include: &Path,
    resolved: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, table::Abi>, String> {
    // (C name, per-thread) for every symbol.
    let mut wanted: Vec<(String, bool)> = Vec::new();
    let mut by_symbol: Vec<(String, (String, bool))> = Vec::new();
    for (c, sym) in resolved {
        let key = match sym.strip_suffix("_ptsz") {
            Some(base) if allowlist::PTSZ.contains(&sym.as_str()) => (base.to_string(), true),
            _ => (c.clone(), false),
        };
        wanted.push(key.clone());
        by_symbol.push((sym.clone(), key));
    }
    let mut macros = BTreeMap::new();
    let mut typedefs = std::collections::BTreeSet::new();
    for (defines, ptsz) in [(&[][..], false), (&["CUDA_API_PER_THREAD_DEFAULT_STREAM"][..], true)] {
        let names: Vec<String> = wanted
            .iter()
            .filter(|w| w.1 == ptsz)
            .map(|w| format!("PFN_{}", w.0))
            .collect();
        let (map, text) = expand(root, include, defines, &names)?;
        for (m, to) in map {
            if m != to {
                macros.insert((m["PFN_".len()..].to_string(), ptsz), to);
            }
        }
        if !ptsz {
            typedefs.extend(
                text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|t| t.starts_with("PFN_"))
                    .map(str::to_string),
            );
        }
    }
    // Ask the C compiler which candidate typedefs match the declaration of each bound symbol.
    let mut prog = String::from("#include <stdio.h>\nint main(void) {\n");
    let mut asked = Vec::new();
    for (sym, (c, ptsz)) in &by_symbol {
        for t in table::candidates(c, *ptsz, &typedefs) {
            writeln!(
                prog,
                "    printf(\"%d\\n\", __builtin_types_compatible_p({t}, __typeof__(&{sym})));"
            )
            .unwrap();
            asked.push(((c.clone(), *ptsz), t.clone()));
        }
    }
    prog.push_str("    return 0;\n}\n");
    let answers = compile_and_run(root, include, &prog)?;
    let answers: Vec<&str> = answers.lines().collect();
    if answers.len() != asked.len() {
        return Err("the typedef compatibility probe printed the wrong number of lines".into());
    }
    let mut compatible: BTreeMap<(String, bool), Vec<(String, bool)>> =
        wanted.iter().map(|w| (w.clone(), Vec::new())).collect();
    for ((key, t), a) in asked.into_iter().zip(answers) {
        compatible.get_mut(&key).unwrap().push((t, a.trim() == "1"));
    }
    let abis = table::abi_versions(&compatible, &macros)?;
    Ok(by_symbol
        .into_iter()
        .map(|(sym, key)| {
            let a = &abis[&key];
            (
                sym,
                table::Abi {
                    c_name: a.c_name.clone(),
                    version: a.version,
                    pfn: a.pfn.clone(),
                    per_thread: a.per_thread,
                },
            )
        })
        .collect())
}

/// Compiles `#include "wrapper.h"` + `src` against `include` and returns what the program prints.
fn compile_and_run(root: &Path, include: &Path, src: &str) -> Result<String, String> {
    let cc = c_compiler();
    let dir = root.join("target/xtask");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let c = dir.join(format!("probe-{}.c", std::process::id()));
    let exe = dir.join(format!("probe-{}", std::process::id()));
    std::fs::write(&c, format!("#include \"wrapper.h\"\n{src}")).map_err(|e| e.to_string())?;
    let out = Command::new(&cc)
        .args(["-std=gnu11", "-o"])
        .arg(&exe)
        .arg(&c)
        .arg(format!("-I{}", root.display()))
        .arg(format!("-I{}", include.display()))
        .output()
        .map_err(|e| format!("cannot run the C compiler `{cc}` ({e}); install gcc or set CC"))?;
    let _ = std::fs::remove_file(&c);
    if !out.status.success() {
        return Err(format!(
            "compiling the typedef probe failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let run = Command::new(&exe).output();
    let _ = std::fs::remove_file(&exe);
    let run = run.map_err(|e| format!("cannot run the typedef probe: {e}"))?;
    if !run.status.success() {
        return Err(format!("the typedef probe failed ({})", run.status));
    }
    Ok(String::from_utf8_lossy(&run.stdout).into_owned())
}

pub fn bindgen_version(root: &Path) -> Result<String, String> {
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l == "name = \"bindgen\"" {
            if let Some(v) = lines.next().and_then(|v| v.strip_prefix("version = \"")) {
                return Ok(v.trim_end_matches('"').to_string());
            }
        }
    }
    Err("Cargo.lock names no bindgen version".into())
}

fn rs_header(bindgen: &str, pin: &Pin, h: &Headers, what: &str) -> String {
    format!(
        "// @generated by `cargo xtask regen`: {what}. Do not edit by hand; edit xtask/ and regenerate.\n\
         // bindgen {bindgen} (rust_target 1.{}), wrapper.h over cuda.h CUDA_VERSION {} (pinned: {}=={}).\n",
        pins::RUST_TARGET_MINOR,
        h.cuda_version,
        pin.package,
        pin.version
    )
}

pub fn generate(root: &Path, pin: &Pin, h: &Headers) -> Result<Generated, String> {
    let major = pin.major;
    // C API names wanted in this major.
    let mut c_names: Vec<&str> = allowlist::POOL_APIS.iter().map(|p| p.0).collect();
    c_names.extend(allowlist::functions(major).map(|f: &Func| f.name));
    if major >= 13 {
        c_names.extend(allowlist::CUDA13_SELECTORS);
    }
    let mut resolved = resolve_names(root, &h.include, &c_names)?;
    for p in allowlist::PTSZ {
        resolved.insert(p.to_string(), p.to_string());
    }
    // The symbols never linked (table only): no `extern` declaration, a `global` free function.
    let table_only: BTreeSet<String> = allowlist::functions(major)
        .filter(|f| !f.linked)
        .map(|f| resolved[f.name].clone())
        .collect();

    let mut b = bindgen::Builder::default()
        .header(root.join(pins::WRAPPER).to_string_lossy())
        .clang_arg(format!("-I{}", h.include.display()))
        .clang_arg(format!("-I{}", root.display()))
        .rust_target(bindgen::RustTarget::stable(pins::RUST_TARGET_MINOR, 0).map_err(|e| e.to_string())?)
        .use_core()
        .ctypes_prefix("::core::ffi")
        .default_enum_style(bindgen::EnumVariation::NewType {
            is_bitfield: false,
            is_global: false,
        })
        .prepend_enum_name(false)
        .must_use_type("cudaError_enum")
        .must_use_type("CUresult")
        .generate_comments(false)
        .layout_tests(true)
        .derive_default(true)
        .derive_debug(true)
        .derive_eq(true)
        .derive_hash(true)
        .merge_extern_blocks(true)
        .sort_semantically(true)
        .allowlist_recursively(true)
        .formatter(bindgen::Formatter::Prettyplease);
    for sym in resolved.values() {
        b = b.allowlist_function(format!("^{sym}$"));
    }
    for t in allowlist::TYPES {
        b = b.allowlist_type(format!("^{t}$"));
    }
    for t in allowlist::BIT_SETS {
        b = b.bitfield_enum(format!("^({t}|{t}_enum)$"));
    }
    if major >= 13 {
        for t in allowlist::CUDA13_SELECTOR_PFNS {
            b = b.allowlist_type(format!("^{t}$"));
        }
    }
    for v in allowlist::VARS {
        b = b.allowlist_var(format!("^{v}$"));
    }
    let bindings = b
        .generate()
        .map_err(|e| format!("bindgen failed for CUDA {major}: {e}"))?
        .to_string();
    // No C union left for safe code to fill in part (CUDA 13's `CUmemLocation`).
    let (bindings, whole) = table::whole_unions(&bindings).map_err(|e| format!("CUDA {major}: {e}"))?;

    // Every requested function must be there under its resolved name.
    let mut missing = Vec::new();
    for (c, sym) in &resolved {
        if !bindings.contains(&format!("pub fn {sym}(")) {
            missing.push(format!("{c} (resolved to {sym})"));
        }
    }
    if !missing.is_empty() {
        return Err(format!("CUDA {major}: cuda.h declares no {}", missing.join(", ")));
    }
    let abis = abi_versions(root, &h.include, &resolved)?;
    let file = syn::parse_file(&bindings).map_err(|e| format!("cannot parse bindgen output for CUDA {major}: {e}"))?;
    let enums = table::enum_newtypes(&file);
    let enum_names: std::collections::BTreeSet<&str> = enums.iter().map(|(n, _)| n.as_str()).collect();
    // `pub use self::cudaError_enum as CUresult;`: the name a user knows each enum by.
    let mut aliases = BTreeMap::new();
    for l in bindings.lines() {
        if let Some((from, to)) = l
            .strip_prefix("pub use self::")
            .and_then(|r| r.strip_suffix(';'))
            .and_then(|r| r.split_once(" as "))
        {
            aliases.entry(from.to_string()).or_insert_with(|| to.to_string());
        }
    }
    let funcs = table::extern_fns(&file);
    let header_text = std::fs::read_to_string(h.include.join("cuda.h")).unwrap_or_default()
        + &std::fs::read_to_string(h.include.join("cudaTypedefs.h")).unwrap_or_default();
    // C names that cuda.h maps to a versioned symbol, as aliases a C programmer would recognise.
    let c_aliases: Vec<_> = resolved.iter().filter(|(c, s)| c != s).collect();
    let value_types = docs::value_types(&header_text);
    let tbl = table::table(
        major,
        &funcs,
        &abis,
        &header_text,
        &c_aliases,
        &value_types,
        &table_only,
    )?;

    // The opaque handles and CUresult are defined once, in `common`, for every major; the
    // table-only functions have no `extern` declaration.
    let shared = common::Shared::of(major, &file, &enums);
    let own = common::strip_shared(&bindings, &shared);
    let own = table::without_extern_fns(&own, &table_only).map_err(|e| format!("CUDA {major}: {e}"))?;

    // Own docs above the allocator functions; NVIDIA's comments are not carried over. Enum newtypes
    // lose bindgen's derived Debug (they get `name()` and a Debug that prints it, below), and the
    // extern block disappears under the `dynamic-loading` feature.
    let mut lines: Vec<String> = Vec::new();
    let mut in_extern = false;
    for line in own.lines() {
        in_extern = (in_extern && line != "}") || line == "extern \"C\" {";
        if let Some(rest) = line.trim_start().strip_prefix("pub fn ").filter(|_| in_extern) {
            let name = rest.split('(').next().unwrap_or("");
            let abi = abis
                .get(name)
                .ok_or_else(|| format!("CUDA {major}: no ABI version for {name}"))?;
            let indent = &line[..line.len() - line.trim_start().len()];
            for l in docs::function(name, &abi.bound(), "", &value_types)? {
                lines.push(format!("{indent}///{}{l}", if l.is_empty() { "" } else { " " }));
            }
        }
        if let Some(name) = line
            .trim_start()
            .strip_prefix("pub const ")
            .and_then(|r| r.split(':').next())
        {
            if let Some((_, ty)) = value_types.iter().find(|(n, _)| n == name) {
                let indent = &line[..line.len() - line.trim_start().len()];
                lines.push(format!("{indent}/// {}", docs::value_type(ty)));
            }
        }
        if line == "extern \"C\" {" {
            lines.push("#[cfg(not(feature = \"dynamic-loading\"))]".into());
        }
        if let Some(name) = line.strip_prefix("pub struct ").and_then(|r| r.split('(').next()) {
            if enum_names.contains(name) {
                let derive = lines
                    .iter_mut()
                    .rev()
                    .take(4)
                    .find(|l| l.starts_with("#[derive(Debug, "))
                    .ok_or_else(|| format!("CUDA {major}: no derive(Debug) above enum {name}"))?;
                *derive = derive.replacen("#[derive(Debug, ", "#[derive(", 1);
            }
        }
        lines.push(line.to_string());
    }
    let mut out = lines.join("\n");
    out.push('\n');

    out.push_str("\n// Written by `cargo xtask regen` itself (xtask/src/table/), not by bindgen.\n\n");
    out.push_str("pub use crate::EntryPoint;\n#[cfg(any(unix, windows))]\npub use crate::{Library, LoadError, LoadErrorKind};\n\n");
    out.push_str(&shared.reexport());
    let own_enums: Vec<_> = enums.iter().filter(|(n, _)| n != common::RESULT).cloned().collect();
    out.push_str(&table::enum_name_and_debug(&own_enums, &aliases, allowlist::BIT_SETS));
    out.push_str(&table::struct_traits(&file, &enums, &aliases, &whole)?);
    out.push('\n');
    for k in allowlist::HAND_CONSTS {
        writeln!(
            out,
            "/// {}\npub const {}: {} = {};",
            k.doc, k.name, k.rust_ty, k.rust_value
        )
        .unwrap();
    }
    // CUDA 13 moved `id` into an anonymous union.
    let union_id = file.items.iter().any(|i| {
        matches!(i, syn::Item::Struct(st) if st.ident == "CUmemLocation_st"
            && st.fields.iter().any(|f| f.ident.as_ref().is_some_and(|n| n == "__bindgen_anon_1")))
    });
    out.push_str("/// A `CUmemLocation` of the given type and id (CUDA 13 keeps `id` in an anonymous union).\n");
    out.push_str("pub const fn mem_location(type_: CUmemLocationType, id: ::core::ffi::c_int) -> CUmemLocation {\n");
    if union_id {
        out.push_str("    CUmemLocation {\n        type_,\n        __bindgen_anon_1: CUmemLocation_st__bindgen_ty_1::from_id(id),\n    }\n}\n");
    } else {
        out.push_str("    CUmemLocation { type_, id }\n}\n");
    }
    if !c_aliases.is_empty() {
        out.push_str("/// C API names as cuda.h's macros resolve them (no per-thread default stream); the module\n");
        out.push_str("/// re-exports them, so `cuMemAlloc` is `cuMemAlloc_v2` here too.\n");
        out.push_str("pub mod c_names {\n");
        for (c, s) in &c_aliases {
            writeln!(out, "    pub use super::{s} as {c};").unwrap();
        }
        out.push_str("}\n");
        out.push_str("pub use self::c_names::*;\n");
    }
    out.push('\n');
    out.push_str(&tbl.rust);
    out.push_str(&table::debug_test(&out)?);

    let bg = bindgen_version(root)?;
    let header = rs_header(
        &bg,
        pin,
        h,
        &format!("raw bindings, helpers and the EntryPoints table for CUDA {major}"),
    );
    let rs = format!("{header}\n{out}");
    let (abi_c, abi_rs) = abi_probe(&bindings, h, &bg, pin, major, &tbl, &whole)?;
    let mut files = vec![
        (pins::bindings_path(major), rs),
        (pins::abi_c_path(major), abi_c),
        (pins::abi_rs_path(major), abi_rs),
    ];
    if major == pins::ROOT_MAJOR {
        let header = rs_header(
            &bg,
            pin,
            h,
            "every free function of the crate root, stored as a function pointer of its C type",
        );
        files.push((
            pins::FREE_FUNCTIONS_PATH.to_string(),
            format!(
                "{header}//! Every free function of the crate root as `unsafe extern \"C\" fn` of its C type: this compiles\n\
                 //! only if each one is that type (or coerces to it) linked and with `dynamic-loading`.\n\
                 #![allow(non_snake_case)]\n\
                 use core::ffi::c_void;\n\
                 use cuda_mempool_sys::*;\n\n\
                 /// (symbol, address) of each free function.\n\
                 pub fn free_functions() -> Vec<(&'static str, *const c_void)> {{\n    \
                 let mut out = Vec::new();\n{}    out\n}}\n",
                tbl.pointers
            ),
        ));
    }
    Ok(Generated { files, shared })
}

const RUST_KEYWORDS: &[&str] = &[
    "type", "ref", "mut", "fn", "impl", "in", "match", "move", "loop", "use", "where", "self", "box",
];

/// The C spelling of a field bindgen renamed (keywords get a trailing underscore).
fn c_field(rust: &str) -> &str {
    match rust.strip_suffix('_') {
        Some(base) if RUST_KEYWORDS.contains(&base) => base,
        _ => rust,
    }
}

/// The ctest idea: from the very items bindgen produced, a C program (compiled against the same
/// cuda.h) and a Rust function that each list size, alignment and field offsets of every struct and
/// union, and the value of every constant. The test in cuda-mempool-sys/tests/abi.rs compares them.
fn abi_probe(
    rs: &str,
    h: &Headers,
    bg: &str,
    pin: &Pin,
    major: u32,
    tbl: &table::Table,
    whole: &[table::WholeUnion],
) -> Result<(String, String), String> {
    let file = syn::parse_file(rs).map_err(|e| format!("cannot parse bindgen output for CUDA {major}: {e}"))?;
    let header_text = std::fs::read_to_string(h.include.join("cuda.h")).unwrap_or_default()
        + &std::fs::read_to_string(h.include.join("cudaTypedefs.h")).unwrap_or_default();
    let mut c = String::new();
    let mut r = String::new();
    let mut entries = 0usize;
    let mut add = |key: String, c_expr: String, r_expr: String| {
        writeln!(c, "    printf(\"%s %lld\\n\", \"{key}\", (long long)({c_expr}));").unwrap();
        writeln!(r, "        (\"{key}\", ({r_expr}) as i128),").unwrap();
        entries += 1;
    };
    for item in &file.items {
        match item {
            syn::Item::Struct(s) => {
                let name = s.ident.to_string();
                let syn::Fields::Named(fields) = &s.fields else {
                    continue;
                };
                let names: Vec<String> = fields
                    .named
                    .iter()
                    .map(|f| f.ident.as_ref().unwrap().to_string())
                    .collect();
                if name.contains("__bindgen") || names.iter().any(|n| n == "_unused") {
                    continue; // anonymous in C, or opaque (incomplete) type
                }
                let c_ty = c_type_name(&header_text, "struct", &name);
                add(
                    format!("size {name}"),
                    format!("sizeof({c_ty})"),
                    format!("::core::mem::size_of::<B::{name}>()"),
                );
                add(
                    format!("align {name}"),
                    format!("_Alignof({c_ty})"),
                    format!("::core::mem::align_of::<B::{name}>()"),
                );
                for f in &names {
                    if f.starts_with("__bindgen") || f.starts_with("_bitfield") {
                        continue;
                    }
                    add(
                        format!("offset {name}.{f}"),
                        format!("offsetof({c_ty}, {})", c_field(f)),
                        format!("::core::mem::offset_of!(B::{name}, {f})"),
                    );
                }
            }
            syn::Item::Union(u) => {
                let name = u.ident.to_string();
                if name.contains("__bindgen") {
                    continue;
                }
                let c_ty = c_type_name(&header_text, "union", &name);
                add(
                    format!("size {name}"),
                    format!("sizeof({c_ty})"),
                    format!("::core::mem::size_of::<B::{name}>()"),
                );
                add(
                    format!("align {name}"),
                    format!("_Alignof({c_ty})"),
                    format!("::core::mem::align_of::<B::{name}>()"),
                );
            }
            syn::Item::Impl(imp) => {
                let syn::Type::Path(tp) = &*imp.self_ty else { continue };
                let ty = tp.path.segments.last().unwrap().ident.to_string();
                for ii in &imp.items {
                    if let syn::ImplItem::Const(k) = ii {
                        let k = k.ident.to_string();
                        add(format!("const {k}"), k.clone(), format!("B::{ty}::{k}.0"));
                    }
                }
            }
            syn::Item::Const(k) => {
                let k = k.ident.to_string();
                add(format!("const {k}"), k.clone(), format!("B::{k}"));
            }
            _ => {}
        }
    }
    for w in whole {
        for (key, c_expr, r_expr) in table::probe_entries(w, &c_type_name(&header_text, "struct", w.tagged.owner)) {
            add(key, c_expr, r_expr);
        }
    }
    for k in allowlist::HAND_CONSTS {
        add(
            format!("hand {}", k.name),
            k.c_expr.to_string(),
            k.probe_expr.to_string(),
        );
    }
    for (key, c_expr, r_expr) in &tbl.probe {
        add(key.clone(), c_expr.clone(), r_expr.clone());
    }
    let mut c_out = format!(
        "/* @generated by `cargo xtask regen`: ABI probe for CUDA {major}. Do not edit by hand.\n \
         * Compiled by cuda-mempool-sys/tests/abi.rs against cuda.h CUDA_VERSION {} (pinned: {}=={}); bindgen {bg}. */\n\
         #include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n#include \"wrapper.h\"\n\n",
        h.cuda_version, pin.package, pin.version
    );
    for p in allowlist::PTSZ {
        let base = p.trim_end_matches("_ptsz");
        writeln!(
            c_out,
            "_Static_assert(__builtin_types_compatible_p(__typeof__({base}), __typeof__({p})), \"wrapper.h: {p} differs from {base}\");"
        )
        .unwrap();
    }
    c_out.push_str("\n/* Every table entry: its Rust signature (as C) and cuda.h's declaration agree with the typedef of its ABI version. */\n");
    c_out.push_str(&tbl.c_asserts);
    writeln!(c_out, "\nint main(void) {{\n{c}    return 0;\n}}").unwrap();
    let r_out = format!(
        "{}// {entries} entries; the C half is cuda{major}.c beside this file.\n\
         pub fn entries() -> ::std::vec::Vec<(&'static str, i128)> {{\n    ::std::vec![\n{r}    ]\n}}\n",
        rs_header(bg, pin, h, &format!("Rust half of the ABI probe for CUDA {major}"))
    );
    Ok((c_out, r_out))
}

/// `struct X` where cuda.h declares a tag X, else the typedef name X.
fn c_type_name(header: &str, kw: &str, name: &str) -> String {
    let tagged = format!("{kw} {name}");
    let found = header.match_indices(&tagged).any(|(i, _)| {
        header[i + tagged.len()..]
            .chars()
            .next()
            .is_some_and(|ch| !(ch.is_alphanumeric() || ch == '_'))
    });
    if found {
        tagged
    } else {
        name.to_string()
    }
}
