//! The parts of a major's module that bindgen does not write, derived from bindgen's own output and
//! from the headers: `name()` and `Debug` for every enum newtype, the hand constants and
//! `mem_location`, and the entry-point table `EntryPoints` (one field per function, the ABI version
//! each is resolved at, loaders, call methods). Also the C assertions the ABI probe makes about the
//! table.

use crate::allowlist;
use crate::docs;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// How one table entry is resolved at run time.
pub struct Abi {
    /// cuda.h's name, the one cuGetProcAddress is asked for (`cuMemAlloc`, `cuMemAllocAsync`).
    pub c_name: String,
    /// The CUDA version whose ABI the bindings declare (3020 for `cuMemAlloc_v2`).
    pub version: u32,
    /// The cudaTypedefs.h typedef of that ABI (`PFN_cuMemAlloc_v3020`).
    pub pfn: String,
    pub per_thread: bool,
}

impl Abi {
    /// What docs.rs needs of it.
    pub fn bound(&self) -> crate::docs::Bound<'_> {
        crate::docs::Bound {
            c_name: &self.c_name,
            version: self.version,
            pfn: &self.pfn,
            per_thread: self.per_thread,
        }
    }
}

/// The ABI version of each entry, from cudaTypedefs.h as the C compiler sees it.
///
/// `compatible[(c_name, per_thread)]`: every `PFN_<name>_v<N>[_ptsz]` typedef visible to a C program
/// (the superseded ones behind `__CUDA_API_VERSION_INTERNAL` are not), with whether the C compiler
/// finds it compatible with cuda.h's declaration of the symbol the bindings bind. Exactly one
/// visible typedef must be: a name can have several current ABIs under different symbols (CUDA 13
/// declares both `cuCtxGetDevice(CUdevice *)`, PFN `_v2000`, and `cuCtxGetDevice_v2(CUdevice *,
/// CUcontext)`, PFN `_v13000`), so "the newest typedef" would be wrong.
/// `macros`: what the unversioned `PFN_<name>` macro expands to, where the header still defines it
/// (CUDA 11 and 12 do; CUDA 13 dropped the macros); it must name the same typedef.
pub fn abi_versions(
    compatible: &BTreeMap<(String, bool), Vec<(String, bool)>>,
    macros: &BTreeMap<(String, bool), String>,
) -> Result<BTreeMap<(String, bool), Abi>, String> {
    let mut out = BTreeMap::new();
    let mut bad = Vec::new();
    for ((c, ptsz), candidates) in compatible {
        let prefix = format!("PFN_{c}_v");
        let version = |t: &str| -> Option<u32> {
            let rest = t.strip_prefix(&prefix)?;
            let digits = if *ptsz { rest.strip_suffix("_ptsz")? } else { rest };
            digits.parse().ok()
        };
        let ok: Vec<&String> = candidates.iter().filter(|(_, yes)| *yes).map(|(t, _)| t).collect();
        let all: Vec<&str> = candidates.iter().map(|(t, _)| t.as_str()).collect();
        let macro_to = macros.get(&(c.clone(), *ptsz));
        let pfn = match (ok.as_slice(), macro_to) {
            ([one], None) => (*one).clone(),
            ([one], Some(m)) if *one == m => m.clone(),
            (several, Some(m)) if several.len() > 1 && several.contains(&m) => m.clone(),
            (_, m) => {
                bad.push(format!(
                    "{c}{}: of the typedefs {all:?}, {ok:?} match cuda.h's declaration{}",
                    if *ptsz { " (per-thread)" } else { "" },
                    m.map(|m| format!("; the PFN_{c} macro says {m}")).unwrap_or_default()
                ));
                continue;
            }
        };
        let Some(version) = version(&pfn) else {
            bad.push(format!("{pfn}: no version in its name"));
            continue;
        };
        out.insert(
            (c.clone(), *ptsz),
            Abi {
                c_name: c.clone(),
                version,
                pfn,
                per_thread: *ptsz,
            },
        );
    }
    if bad.is_empty() {
        Ok(out)
    } else {
        Err(bad.join("\n"))
    }
}

/// The visible typedefs that may be `name`'s ABIs: `PFN_<name>_v<digits>` (`_ptsz` for per-thread).
pub fn candidates<'a>(name: &str, per_thread: bool, typedefs: &'a BTreeSet<String>) -> Vec<&'a String> {
    let prefix = format!("PFN_{name}_v");
    typedefs
        .iter()
        .filter(|t| {
            t.strip_prefix(&prefix)
                .and_then(|r| if per_thread { r.strip_suffix("_ptsz") } else { Some(r) })
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect()
}

/// One function of bindgen's extern block.
pub struct Func {
    pub symbol: String,
    /// (name, Rust type as written)
    pub params: Vec<(String, syn::Type)>,
    pub ret: syn::Type,
}

pub fn extern_fns(file: &syn::File) -> Vec<Func> {
    let mut out = Vec::new();
    for item in &file.items {
        let syn::Item::ForeignMod(m) = item else { continue };
        for fi in &m.items {
            let syn::ForeignItem::Fn(f) = fi else { continue };
            let params = f
                .sig
                .inputs
                .iter()
                .map(|a| match a {
                    syn::FnArg::Typed(pt) => {
                        let name = match &*pt.pat {
                            syn::Pat::Ident(i) => i.ident.to_string(),
                            _ => "arg".into(),
                        };
                        (name, (*pt.ty).clone())
                    }
                    syn::FnArg::Receiver(_) => unreachable!("extern fn with self"),
                })
                .collect();
            let ret = match &f.sig.output {
                syn::ReturnType::Type(_, t) => (**t).clone(),
                syn::ReturnType::Default => syn::parse_quote!(()),
            };
            out.push(Func {
                symbol: f.sig.ident.to_string(),
                params,
                ret,
            });
        }
    }
    out
}

/// A Rust type from bindgen's signatures, written back as Rust (no spaces inside paths).
pub fn rs_ty(t: &syn::Type) -> Result<String, String> {
    match t {
        syn::Type::Ptr(p) => Ok(format!(
            "*{} {}",
            if p.mutability.is_some() { "mut" } else { "const" },
            rs_ty(&p.elem)?
        )),
        syn::Type::Path(p) if p.qself.is_none() => {
            let segs: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| {
                    if s.arguments.is_empty() {
                        Ok(s.ident.to_string())
                    } else {
                        Err(format!("generic path in a signature: {}", s.ident))
                    }
                })
                .collect::<Result<_, _>>()?;
            Ok(format!(
                "{}{}",
                if p.path.leading_colon.is_some() { "::" } else { "" },
                segs.join("::")
            ))
        }
        syn::Type::Tuple(t) if t.elems.is_empty() => Ok("()".into()),
        _ => Err("a function signature uses a type the table generator does not know (not a pointer or a path)".into()),
    }
}

/// The same type as C spells it, for the probe's `__builtin_types_compatible_p` against cuda.h's
/// `PFN_*` typedefs. Named types keep their names (bindgen keeps cuda.h's typedef names); the few
/// primitive ones map to their C spelling; `X_st` / `X_enum` tags get their keyword.
pub fn c_ty(t: &syn::Type, header: &str) -> Result<String, String> {
    match t {
        syn::Type::Ptr(p) => Ok(format!(
            "{} {}*",
            c_ty(&p.elem, header)?,
            if p.mutability.is_some() { "" } else { "const " }
        )),
        syn::Type::Path(p) => {
            let last = p.path.segments.last().unwrap().ident.to_string();
            let prim = match last.as_str() {
                "c_char" => "char",
                "c_schar" => "signed char",
                "c_uchar" => "unsigned char",
                "c_short" => "short",
                "c_ushort" => "unsigned short",
                "c_int" => "int",
                "c_uint" => "unsigned int",
                "c_long" => "long",
                "c_ulong" => "unsigned long",
                "c_longlong" => "long long",
                "c_ulonglong" => "unsigned long long",
                "c_void" => "void",
                "c_float" | "f32" => "float",
                "c_double" | "f64" => "double",
                "usize" => "size_t",
                "isize" => "ptrdiff_t",
                "u8" => "uint8_t",
                "i8" => "int8_t",
                "u16" => "uint16_t",
                "i16" => "int16_t",
                "u32" => "uint32_t",
                "i32" => "int32_t",
                "u64" => "uint64_t",
                "i64" => "int64_t",
                _ => "",
            };
            if !prim.is_empty() {
                return Ok(prim.into());
            }
            for kw in ["struct", "union", "enum"] {
                let tagged = format!("{kw} {last}");
                if header.match_indices(&tagged).any(|(i, _)| {
                    header[i + tagged.len()..]
                        .chars()
                        .next()
                        .is_some_and(|ch| !(ch.is_alphanumeric() || ch == '_'))
                }) {
                    return Ok(tagged);
                }
            }
            Ok(last)
        }
        syn::Type::Tuple(t) if t.elems.is_empty() => Ok("void".into()),
        _ => Err("a function signature uses a type the table generator cannot write in C".into()),
    }
}

/// Enum newtypes: `#[repr(transparent)] struct X(pub int)` with an `impl X { pub const A: X = X(n); }`.
/// (name, [(constant, value text)]) in the order bindgen wrote the constants.
pub fn enum_newtypes(file: &syn::File) -> Vec<(String, Vec<(String, i128)>)> {
    let mut tuple_structs = BTreeSet::new();
    for item in &file.items {
        if let syn::Item::Struct(s) = item {
            if matches!(&s.fields, syn::Fields::Unnamed(f) if f.unnamed.len() == 1) {
                tuple_structs.insert(s.ident.to_string());
            }
        }
    }
    let mut out: Vec<(String, Vec<(String, i128)>)> = Vec::new();
    for item in &file.items {
        let syn::Item::Impl(imp) = item else { continue };
        if imp.trait_.is_some() {
            continue;
        }
        let syn::Type::Path(tp) = &*imp.self_ty else { continue };
        let ty = tp.path.segments.last().unwrap().ident.to_string();
        if !tuple_structs.contains(&ty) {
            continue;
        }
        let mut consts = Vec::new();
        for ii in &imp.items {
            let syn::ImplItem::Const(k) = ii else { continue };
            // `X(5)` or `X(-1)`
            let syn::Expr::Call(call) = &k.expr else { continue };
            let Some(arg) = call.args.first() else { continue };
            let v = match arg {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(i), ..
                }) => i.base10_parse::<i128>().ok(),
                syn::Expr::Unary(syn::ExprUnary {
                    op: syn::UnOp::Neg(_),
                    expr,
                    ..
                }) => match &**expr {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(i), ..
                    }) => i.base10_parse::<i128>().ok().map(|v| -v),
                    _ => None,
                },
                _ => None,
            };
            if let Some(v) = v {
                consts.push((k.ident.to_string(), v));
            }
        }
        match out.iter_mut().find(|(n, _)| *n == ty) {
            Some((_, c)) => c.extend(consts),
            None => out.push((ty, consts)),
        }
    }
    out
}

/// `name()` and `Debug` for every enum newtype: the constant's name, or `None` / `Alias(value)` for a
/// value these headers do not name. Where cuda.h gives one value several names, the first one
/// declared wins.
pub fn enum_name_and_debug(enums: &[(String, Vec<(String, i128)>)], aliases: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    for (ty, consts) in enums {
        let shown = aliases.get(ty).unwrap_or(ty);
        let example = consts.first().map(|(n, _)| format!(" (`{n}`)")).unwrap_or_default();
        let mut seen = BTreeSet::new();
        writeln!(out, "impl {ty} {{").unwrap();
        writeln!(
            out,
            "    /// The constant's name in cuda.h{example}, or `None` for a value these headers do not name."
        )
        .unwrap();
        writeln!(
            out,
            "    pub const fn name(self) -> ::core::option::Option<&'static str> {{"
        )
        .unwrap();
        writeln!(out, "        match self.0 {{").unwrap();
        for (name, v) in consts {
            if seen.insert(*v) {
                writeln!(out, "            {v} => Some(\"{name}\"),").unwrap();
            }
        }
        writeln!(out, "            _ => None,\n        }}\n    }}\n}}").unwrap();
        writeln!(out, "impl ::core::fmt::Debug for {ty} {{").unwrap();
        writeln!(
            out,
            "    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {{"
        )
        .unwrap();
        writeln!(out, "        match self.name() {{").unwrap();
        writeln!(out, "            Some(n) => f.write_str(n),").unwrap();
        writeln!(out, "            None => ::core::write!(f, \"{shown}({{}})\", self.0),").unwrap();
        writeln!(out, "        }}\n    }}\n}}").unwrap();
    }
    out
}

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
    c_names: &[(&String, &String)], // (cuda.h's name, the symbol its macro resolves to)
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
            "        crate::EntryPoint::new(\"{sym}\", \"{sym}\\0\", \"{c}\", \"{c}\\0\", {}, {}, CUdriverProcAddress_flags::{flag}.0 as u64),",
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
             ///\n    /// # Safety\n    /// The rules of the free function [`{sym}`].\n    \
             #[inline]\n    pub unsafe fn {sym}(&self, {}) -> CUresult {{\n        \
             match self.{sym} {{\n            Some(__f) => __f({}),\n            \
             None => CUresult::CUDA_ERROR_NOT_FOUND,\n        }}\n    }}",
            params_rs.join(", "),
            args.join(", ")
        )
        .unwrap();
        reexports.push(sym.clone());
        writeln!(
            pointers,
            "    let {sym}: unsafe extern \"C\" fn({}) -> CUresult = cuda_mempool_sys::{sym};\n    \
             out.push((\"{sym}\", {sym} as *const c_void));",
            params_rs.join(", ")
        )
        .unwrap();
        signatures.insert(sym.clone(), (params_rs.join(", "), args.join(", ")));
        let note = format!(
            "Here: a call through the process's table ([`table`]); [`LOAD_FAILED`] when the driver library could not be loaded, `CUDA_ERROR_NOT_FOUND` when it has no `{sym}`."
        );
        for l in docs::function(sym, &abi.bound(), &note)? {
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
             ///\n    /// # Safety\n    /// The rules of the free function [`{sym}`].\n    \
             #[inline]\n    pub unsafe fn {c}(&self, {params}) -> CUresult {{\n        \
             self.{sym}({args})\n    }}"
        )
        .unwrap();
    }
    let first = &funcs.first().ok_or("no functions")?.symbol;
    let n = funcs.len();
    let reexports = reexports.join(", ");
    let rust = format!(
        r#"/// Every function of this module as an optional function pointer, filled at run time.
///
/// Fields carry the symbol names of the functions (`cuMemAlloc_v2`, `cuMemAllocAsync_ptsz`, …); a
/// field is `None` when the driver library lacks that entry point. Each field has a call method of
/// the same name and arguments that returns `CUDA_ERROR_NOT_FOUND` for a missing entry.
/// [`ENTRIES`](Self::ENTRIES) describes every field (in field order) and [`missing`](Self::missing)
/// lists the absent ones.
///
/// Fill it with [`load`](Self::load) (the driver's `cuGetProcAddress`, Unix and Windows),
/// [`from_dlsym`](Self::from_dlsym) (`dlsym`; `GetProcAddress` on Windows),
/// `from_default_namespace` (`dlsym(RTLD_DEFAULT, …)`, Unix), [`from_linked`](Self::from_linked)
/// (the module's free functions), or your own resolver with [`from_fn`](Self::from_fn). Besides
/// the fields' names, the table has a call method for each C name cuda.h maps to a versioned
/// symbol (`cuMemAlloc` calls `cuMemAlloc_v2`).
///
/// # Safety of the call methods
/// Each call method is as unsafe as the C function it calls: the arguments must satisfy that
/// function's contract in cuda.h.
#[derive(Clone, Copy)]
pub struct EntryPoints {{
{fields}}}

#[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
impl EntryPoints {{
    /// How many entry points the table has.
    pub const LEN: usize = {n};

    /// Each field's symbol, the C name and CUDA version `cuGetProcAddress` is asked for, and the
    /// per-thread-default-stream flag, in field order.
    pub const ENTRIES: &'static [crate::EntryPoint; {n}] = &[
{entries}    ];

    /// A table with no entry point: every call returns `CUDA_ERROR_NOT_FOUND`.
    pub const EMPTY: Self = Self {{
{empty}    }};

    /// Fills the table with what `resolve` returns for each entry, null meaning missing.
    ///
    /// # Safety
    /// Every non-null pointer `resolve` returns must be a function with the signature of the field
    /// it fills (the C function the entry describes, at that entry's CUDA version), valid for as
    /// long as the table is used.
    pub unsafe fn from_fn<F: FnMut(&'static crate::EntryPoint) -> *mut ::core::ffi::c_void>(mut resolve: F) -> Self {{
        Self {{
{from_fn}        }}
    }}

    /// The module's free functions themselves, in every feature combination. Linked (no
    /// `dynamic-loading`) they are the driver's symbols, and referencing them all links them all:
    /// a program that calls this does not link (or start) against a driver that lacks one of them.
    /// With `dynamic-loading` (enabled by any crate of the graph) they are [`global`]'s functions:
    /// each entry calls through the process's table, which loads the driver on first use, so no
    /// entry is `None` and a call answers [`global::LOAD_FAILED`] without a driver library
    /// ([`mode`] tells which).
    pub fn from_linked() -> Self {{
        Self {{
{linked}        }}
    }}

    /// The driver library (`libcuda.so.1`; `nvcuda.dll` from System32 on Windows; or the file
    /// named by `CUDA_MEMPOOL_SYS_LIBCUDA`), opened and resolved through its `cuGetProcAddress`
    /// ([`from_proc_address`](Self::from_proc_address)). The library is never closed.
    #[cfg(any(unix, windows))]
    pub fn load() -> ::core::result::Result<Self, crate::LoadError> {{
        Self::from_proc_address(&crate::Library::open_default()?)
    }}

    /// [`load`](Self::load) from the library at `path` (a file name is searched for as
    /// `crate::Library::open` does).
    ///
    /// # Safety
    /// Opening a library runs its initialisers, and its entry points are trusted to have cuda.h's
    /// signatures: `path` must be a CUDA driver library (or a faithful stand-in).
    #[cfg(any(unix, windows))]
    pub unsafe fn from_library(path: &str) -> ::core::result::Result<Self, crate::LoadError> {{
        Self::from_proc_address(&crate::Library::open(path)?)
    }}

    /// Each entry from the library's `cuGetProcAddress_v2` (`cuGetProcAddress` before CUDA 12.0),
    /// asked for the entry's C name at its CUDA version, with the per-thread-default-stream flag
    /// for `_ptsz` entries. Fails only when the library has neither function (drivers before 11.3).
    #[cfg(any(unix, windows))]
    pub fn from_proc_address(library: &crate::Library) -> ::core::result::Result<Self, crate::LoadError> {{
        let resolver = library.proc_address()?;
        // SAFETY: the driver returns the entry point of the requested name and ABI version, which
        // is the signature of the field (checked against cudaTypedefs.h by the ABI probe).
        Ok(unsafe {{ Self::from_fn(|e| resolver.resolve(e)) }})
    }}

    /// Each entry from `dlsym(library, symbol)` (`GetProcAddress` on Windows): the symbol the
    /// library exports under the field's name, whatever CUDA version it reports.
    #[cfg(any(unix, windows))]
    pub fn from_dlsym(library: &crate::Library) -> Self {{
        // SAFETY: a driver library exports each symbol with cuda.h's signature for that symbol.
        unsafe {{ Self::from_fn(|e| library.symbol(e.symbol_cstr())) }}
    }}

    /// Each entry from `dlsym(RTLD_DEFAULT, symbol)`: what the dynamic linker binds for a linked
    /// program (`LD_PRELOAD` libraries first). Entries of a library opened by [`load`](Self::load)
    /// are not there (it is opened `RTLD_LOCAL`).
    #[cfg(unix)]
    pub fn from_default_namespace() -> Self {{
        // SAFETY: as for `from_dlsym`; the process's libraries export cuda.h's symbols.
        unsafe {{ Self::from_fn(|e| crate::loader::default_namespace_symbol(e.symbol_cstr())) }}
    }}

    /// The address of each entry (null where missing), in field order.
    pub fn addresses(&self) -> [*const ::core::ffi::c_void; {n}] {{
        [
{addrs}        ]
    }}

    /// The entries the table lacks.
    pub fn missing(&self) -> impl Iterator<Item = &'static crate::EntryPoint> {{
        Self::ENTRIES
            .iter()
            .zip(self.addresses())
            .filter(|(_, p)| p.is_null())
            .map(|(e, _)| e)
    }}

    /// The symbol names of the entries the table lacks.
    pub fn missing_symbols(&self) -> impl Iterator<Item = &'static str> {{
        self.missing().map(|e| e.symbol)
    }}

{calls}
}}

impl ::core::default::Default for EntryPoints {{
    fn default() -> Self {{
        Self::EMPTY
    }}
}}

impl ::core::fmt::Debug for EntryPoints {{
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {{
        f.debug_map()
            .entries(Self::ENTRIES.iter().map(|e| e.symbol).zip(self.addresses()))
            .finish()
    }}
}}

/// The module's functions as free functions that call through one table for the whole process.
/// With the `dynamic-loading` feature the module's own functions are these, so code written
/// against the C names compiles and runs the same in every feature combination.
///
/// The table loads itself on the first call ([`EntryPoints::load`], once per process, thread-safe),
/// unless one was [`install`](global::install)ed before. A function answers
/// [`LOAD_FAILED`](global::LOAD_FAILED) when the driver library could not be loaded (`load_error`
/// says why) and `CUDA_ERROR_NOT_FOUND` when the library lacks its entry.
pub mod global {{
    use super::*;
    use ::core::sync::atomic::{{AtomicPtr, AtomicU8, Ordering}};

    static TABLE: AtomicPtr<EntryPoints> = AtomicPtr::new(::core::ptr::null_mut());
    /// 0: not loaded yet; 1: loading; 2: a table is there; 3: loading failed.
    static STATE: AtomicU8 = AtomicU8::new(0);
    #[cfg(any(unix, windows))]
    static LOAD_ERROR: AtomicPtr<crate::LoadError> = AtomicPtr::new(::core::ptr::null_mut());

    /// What every function answers when the driver library could not be loaded:
    /// `CUresult::CUDA_MEMPOOL_SYS_LOAD_FAILED`, the crate's own code, outside the driver's range (no
    /// driver answer reads as it); distinct from a missing entry's `CUDA_ERROR_NOT_FOUND`.
    pub const LOAD_FAILED: CUresult = CUresult::CUDA_MEMPOOL_SYS_LOAD_FAILED;

    /// Make `table` the one every function of this module calls through, from now on, in every
    /// crate of the process (call it before the first call: a process has one table; the last one
    /// installed wins).
    ///
    /// With `dynamic-loading`, [`EntryPoints::from_linked`] holds this module's own functions:
    /// installing it changes nothing (it is the process's table already), rather than making each
    /// call call itself.
    ///
    /// # Safety
    /// Every entry of `table` must be the driver's function of that name (or one with the same
    /// contract: an interposer's), for the whole life of the process: every caller of this
    /// module's safe-to-name functions, in any crate, relies on what it reaches (an entry that
    /// answers `cuStreamSynchronize` with `cuStreamQuery` makes their reads race). No entry may be
    /// one of this module's own functions (besides a whole `from_linked()` table, above).
    pub unsafe fn install(table: &'static EntryPoints) {{
        if table.addresses()[0] == {first} as *const ::core::ffi::c_void {{
            return;
        }}
        TABLE.store(table as *const EntryPoints as *mut EntryPoints, Ordering::Release);
        STATE.store(2, Ordering::Release);
    }}

    /// The process's table: the installed one, else the driver's, loaded on first use; `None`
    /// when it could not be loaded (or, where loading is not supported, none was installed).
    #[inline]
    pub fn table() -> ::core::option::Option<&'static EntryPoints> {{
        // SAFETY: only `install` and `load_once` store here, only pointers to tables that live
        // forever.
        if let Some(t) = unsafe {{ TABLE.load(Ordering::Acquire).as_ref() }} {{
            return Some(t);
        }}
        load_once();
        unsafe {{ TABLE.load(Ordering::Acquire).as_ref() }}
    }}

    /// Load the driver's table, once: the first caller loads, the others wait for it.
    #[cfg(any(unix, windows))]
    fn load_once() {{
        loop {{
            match STATE.compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire) {{
                Ok(_) => {{
                    match EntryPoints::load() {{
                        Ok(t) => {{
                            let t = alloc::boxed::Box::leak(alloc::boxed::Box::new(t));
                            TABLE.store(t, Ordering::Release);
                            STATE.store(2, Ordering::Release);
                        }}
                        Err(e) => {{
                            LOAD_ERROR.store(alloc::boxed::Box::leak(alloc::boxed::Box::new(e)), Ordering::Release);
                            STATE.store(3, Ordering::Release);
                        }}
                    }}
                    return;
                }}
                Err(1) => ::core::hint::spin_loop(),
                Err(_) => return,
            }}
        }}
    }}
    #[cfg(not(any(unix, windows)))]
    fn load_once() {{}}

    /// Where this module's table stands, without loading it: [`Mode::NotYetLoaded`](crate::Mode),
    /// [`Mode::Loaded`](crate::Mode) (loaded or installed) or [`Mode::NotLoaded`](crate::Mode) with
    /// the reason. The module's [`mode`] says whether its free functions call
    /// through it.
    pub fn state() -> crate::Mode {{
        match STATE.load(Ordering::Acquire) {{
            2 => crate::Mode::Loaded,
            #[cfg(any(unix, windows))]
            3 => match load_error() {{
                Some(e) => crate::Mode::NotLoaded(e),
                None => crate::Mode::NotYetLoaded,
            }},
            _ => crate::Mode::NotYetLoaded,
        }}
    }}

    /// Why the driver library could not be loaded, once a call tried and failed.
    #[cfg(any(unix, windows))]
    pub fn load_error() -> ::core::option::Option<&'static crate::LoadError> {{
        // SAFETY: stored once by `load_once`, leaked: it lives forever.
        unsafe {{ LOAD_ERROR.load(Ordering::Acquire).as_ref() }}
    }}

    // The functions below are `inline(never)`: each has one address in the process (an inlined
    // copy per codegen unit would have its own), which `from_linked` stores and `install` compares.

    #[cold]
    fn no_table() -> CUresult {{
        if STATE.load(Ordering::Acquire) == 3 {{
            LOAD_FAILED
        }} else {{
            CUresult::CUDA_ERROR_NOT_FOUND
        }}
    }}

{globals}
}}

/// Under `dynamic-loading` the module's functions are [`global`]'s: the same names and types
/// (`unsafe extern "C" fn`) as the linked ones.
#[cfg(feature = "dynamic-loading")]
pub use self::global::{{{reexports}}};

/// How this module's free functions reach the driver: [`Mode::Linked`](crate::Mode) without
/// `dynamic-loading` (the linked symbols), else where [`global`]'s table stands
/// ([`global::state`]). It loads nothing.
pub fn mode() -> crate::Mode {{
    if cfg!(feature = "dynamic-loading") {{
        global::state()
    }} else {{
        crate::Mode::Linked
    }}
}}
"#
    );
    Ok(Table {
        rust,
        pointers,
        c_asserts,
        probe,
    })
}
