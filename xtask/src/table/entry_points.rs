//! The entry-point table of one major, entry by entry: each function's field, `ENTRIES` row,
//! loader lines, call method, `global` free function and stored pointer (feature-union), the call
//! methods under cuda.h's unversioned names, and the ABI probe's C assertions and probe entries
//! that tie each field to its cudaTypedefs.h typedef. The fixed text around the pieces is in
//! template.rs.

use super::abi::Abi;
use super::signatures::{c_ty, rs_ty, Func};
use super::template;
use crate::allowlist;
use crate::docs;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

fn version_text(v: u32) -> String {
    format!("{}.{}", v / 1000, v % 1000 / 10)
}

/// The table, its loaders and call methods (Rust), the probe's C assertions, and the probe entries
/// that tie the Rust table to the asserted typedefs.
pub struct Table {
    pub rust: String,
    /// Every free function stored as a function pointer of its C type (the feature-union crate's
    /// `free_functions.rs` body).
    pub pointers: String,
    pub c_asserts: String,
    /// (key, C expression, Rust expression)
    pub probe: Vec<(String, String, String)>,
}

pub fn table(
    major: u32,
    funcs: &[Func],
    abis: &BTreeMap<String, Abi>, // by symbol
    header: &str,
    c_names: &[(&String, &String)],   // (cuda.h's name, the symbol its macro resolves to)
    value_types: &[(String, String)], // (enumerator, value type) of this major's header
    table_only: &BTreeSet<String>,    // symbols never linked (allowlist.rs's `table_only`)
) -> Result<Table, String> {
    let mut fields = String::new();
    let mut entries = String::new();
    let mut from_fn = String::new();
    let mut linked = String::new();
    let mut empty = String::new();
    let mut addrs = String::new();
    let mut calls = String::new();
    let mut globals = String::new();
    let mut reexports = Vec::new();
    let mut always_global = Vec::new();
    let mut c_asserts = String::new();
    let mut probe = Vec::new();
    let mut pointers = String::new();
    let mut signatures = BTreeMap::new();
    for (i, f) in funcs.iter().enumerate() {
        let abi = abis
            .get(&f.symbol)
            .ok_or_else(|| format!("no ABI version for {}", f.symbol))?;
        let ret = rs_ty(&f.ret)?;
        if ret != "CUresult" {
            return Err(format!("{} returns {ret}, not CUresult", f.symbol));
        }
        let mut params_rs = Vec::new();
        let mut args = Vec::new();
        let mut params_c = Vec::new();
        for (n, t) in &f.params {
            if n == "__f" || n == "self" {
                return Err(format!("{}: a parameter is named {n}", f.symbol));
            }
            params_rs.push(format!("{n}: {}", rs_ty(t)?));
            args.push(n.clone());
            params_c.push(c_ty(t, header)?);
        }
        let fn_ty = format!(
            "::core::option::Option<unsafe extern \"C\" fn({}) -> CUresult>",
            params_rs.join(", ")
        );
        let sym = &f.symbol;
        let is_linked = !table_only.contains(sym);
        let what = format!(
            "`{}` at the ABI of CUDA {}{}",
            abi.c_name,
            version_text(abi.version),
            if abi.per_thread {
                ", per-thread default stream"
            } else {
                ""
            }
        );
        writeln!(fields, "    /// {what}.").unwrap();
        writeln!(fields, "    pub {sym}: {fn_ty},").unwrap();
        let flag = if abi.per_thread {
            "CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM"
        } else {
            "CU_GET_PROC_ADDRESS_LEGACY_STREAM"
        };
        writeln!(
            entries,
            "        crate::EntryPoint::new(\"{sym}\", \"{sym}\\0\", \"{c}\", \"{c}\\0\", {}, {}, CUdriverProcAddress_flags::{flag}.0 as u64, {is_linked}),",
            abi.version,
            abi.per_thread,
            c = abi.c_name
        )
        .unwrap();
        writeln!(
            from_fn,
            "            {sym}: ::core::mem::transmute::<*mut ::core::ffi::c_void, {fn_ty}>(resolve(&Self::ENTRIES[{i}])),"
        )
        .unwrap();
        writeln!(linked, "            {sym}: Some({sym}),").unwrap();
        writeln!(empty, "        {sym}: None,").unwrap();
        writeln!(
            addrs,
            "            match self.{sym} {{ Some(f) => f as *const ::core::ffi::c_void, None => ::core::ptr::null() }},"
        )
        .unwrap();
        writeln!(
            calls,
            "    /// Calls {what}; `CUDA_ERROR_NOT_FOUND` when the table has no `{sym}`.\n    \
             ///\n    /// # Safety\n    /// The table's contract for this entry ([`EntryPoints`]): `self.{sym}`, if set, is the \
             driver's `{c}` at this ABI (a loader's or `from_linked`'s table, unedited, is); and the rules of \
             the free function [`{sym}`].\n    \
             #[inline]\n    pub unsafe fn {sym}(&self, {}) -> CUresult {{\n        \
             match self.{sym} {{\n            Some(__f) => __f({}),\n            \
             None => CUresult::CUDA_ERROR_NOT_FOUND,\n        }}\n    }}",
            params_rs.join(", "),
            args.join(", "),
            c = abi.c_name
        )
        .unwrap();
        if is_linked {
            reexports.push(sym.clone());
        } else {
            always_global.push(sym.clone());
        }
        writeln!(
            pointers,
            "    let {sym}: unsafe extern \"C\" fn({}) -> CUresult = cuda_mempool_sys::{sym};\n    \
             out.push((\"{sym}\", {sym} as *const c_void));",
            params_rs.join(", ")
        )
        .unwrap();
        signatures.insert(sym.clone(), (params_rs.join(", "), args.join(", ")));
        let mut note = format!(
            "Here: a call through the process's table ([`table`]); [`LOAD_FAILED`] when the driver library could not be loaded, `CUDA_ERROR_NOT_FOUND` when it has no `{sym}`."
        );
        if !is_linked {
            note = format!(
                "Never linked (table only): this is the module's `{sym}` in every feature combination, so a program that calls or stores it still starts on a driver without it. {note}"
            );
        }
        for l in docs::function(sym, &abi.bound(), &note, value_types)? {
            writeln!(globals, "    ///{}{l}", if l.is_empty() { "" } else { " " }).unwrap();
        }
        writeln!(
            globals,
            "    #[inline(never)]\n    pub unsafe extern \"C\" fn {sym}({}) -> CUresult {{\n        \
             match table() {{\n            Some(__t) => __t.{sym}({}),\n            \
             None => no_table(),\n        }}\n    }}",
            params_rs.join(", "),
            args.join(", ")
        )
        .unwrap();
        let c_fn = format!(
            "CUresult (*)({})",
            if params_c.is_empty() {
                "void".into()
            } else {
                params_c.join(", ")
            }
        );
        writeln!(
            c_asserts,
            "_Static_assert(__builtin_types_compatible_p({}, {c_fn}), \"EntryPoints::{sym}: the Rust signature differs from {}\");",
            abi.pfn, abi.pfn
        )
        .unwrap();
        writeln!(
            c_asserts,
            "_Static_assert(__builtin_types_compatible_p({}, __typeof__(&{sym})), \"{sym}: cuda.h declares it differently from {}\");",
            abi.pfn, abi.pfn
        )
        .unwrap();
        probe.push((
            format!("table {sym} {} {}", abi.c_name, abi.pfn),
            format!("{}", abi.version * 2 + u32::from(abi.per_thread)),
            format!(
                "{{ let e = &B::EntryPoints::ENTRIES[{i}]; assert_eq!((e.symbol, e.c_name), (\"{sym}\", \"{}\")); e.cuda_version as i128 * 2 + e.per_thread as i128 }}",
                abi.c_name
            ),
        ));
    }
    let absent: Vec<&String> = table_only.iter().filter(|s| !signatures.contains_key(*s)).collect();
    if !absent.is_empty() {
        return Err(format!(
            "CUDA {major}: the table has no entry for the table-only {absent:?}"
        ));
    }
    for (pfn, c_fn, since) in allowlist::LOADER_PFNS {
        if major >= *since {
            writeln!(
                c_asserts,
                "_Static_assert(__builtin_types_compatible_p({pfn}, {c_fn}), \"cuda-mempool-sys/src/loader.rs: its {pfn} differs from cudaTypedefs.h\");"
            )
            .unwrap();
        }
    }
    // cuda.h's names for versioned symbols, as call methods beside the fields.
    for (c, sym) in c_names {
        let (params, args) = signatures
            .get(*sym)
            .ok_or_else(|| format!("CUDA {major}: C name {c} resolves to {sym}, which the table lacks"))?;
        writeln!(
            calls,
            "    /// cuda.h's `{c}`: calls [`{sym}`](Self::{sym}), the symbol its macro resolves to.\n    \
             ///\n    /// # Safety\n    /// As for [`{sym}`](Self::{sym}): the table's contract for that entry, and the \
             rules of the free function [`{sym}`].\n    \
             #[inline]\n    pub unsafe fn {c}(&self, {params}) -> CUresult {{\n        \
             self.{sym}({args})\n    }}"
        )
        .unwrap();
    }
    let first = &funcs.first().ok_or("no functions")?.symbol;
    let n = funcs.len();
    let rust = template::rust(template::Parts {
        major,
        n,
        first,
        fields: &fields,
        entries: &entries,
        empty: &empty,
        from_fn: &from_fn,
        linked: &linked,
        addrs: &addrs,
        calls: &calls,
        globals: &globals,
        reexports: &reexports.join(", "),
        table_only: &always_global,
    });
    Ok(Table {
        rust,
        pointers,
        c_asserts,
        probe,
    })
}
