//! The enum newtypes bindgen wrote (`#[repr(transparent)] struct X(pub int)` and its constants),
//! read back with syn, and the `name()` method and `Debug` impl written for each: the constant's
//! name in cuda.h, or the type and the raw value for a value these headers do not name.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

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
/// declared wins. For a bit set (`bit_sets`, by either name) whose value no constant names, `Debug`
/// lists the single-bit constants it holds, `A | B`, and what is left in hex, `Alias(0x40)`.
pub fn enum_name_and_debug(
    enums: &[(String, Vec<(String, i128)>)],
    aliases: &BTreeMap<String, String>,
    bit_sets: &[&str],
) -> String {
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
        if bit_sets.contains(&ty.as_str()) || bit_sets.contains(&shown.as_str()) {
            out.push_str(&bit_set_debug(shown, consts));
        } else {
            writeln!(out, "        match self.name() {{").unwrap();
            writeln!(out, "            Some(n) => f.write_str(n),").unwrap();
            writeln!(out, "            None => ::core::write!(f, \"{shown}({{}})\", self.0),").unwrap();
            writeln!(out, "        }}").unwrap();
        }
        writeln!(out, "    }}\n}}").unwrap();
    }
    out
}

/// The body of a bit set's `fmt`: its name when a constant names the value, else each named single
/// bit it holds (first name declared), then the rest in hex.
fn bit_set_debug(shown: &str, consts: &[(String, i128)]) -> String {
    let mut seen = BTreeSet::new();
    let bits: Vec<String> = consts
        .iter()
        .filter(|(_, v)| *v > 0 && (*v & (*v - 1)) == 0 && seen.insert(*v))
        .map(|(n, v)| format!("({v:#x}, \"{n}\")"))
        .collect();
    format!(
        "        if let Some(n) = self.name() {{\n            return f.write_str(n);\n        }}\n        \
         const BITS: &[(::core::ffi::c_uint, &str)] = &[{}];\n        \
         let mut rest = self.0;\n        let mut sep = \"\";\n        \
         for &(bit, name) in BITS {{\n            if rest & bit != 0 {{\n                \
         ::core::write!(f, \"{{}}{{}}\", sep, name)?;\n                rest &= !bit;\n                \
         sep = \" | \";\n            }}\n        }}\n        \
         if rest != 0 || sep.is_empty() {{\n            \
         ::core::write!(f, \"{{}}{shown}({{:#x}})\", sep, rest)?;\n        }}\n        Ok(())\n",
        bits.join(", ")
    )
}
