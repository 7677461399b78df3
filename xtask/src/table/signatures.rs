//! The functions bindgen declared, read back from its output with syn (`Func`: symbol, parameters,
//! return type), and their types spelled again: as Rust for the table's fields and methods, and
//! as C for the ABI probe's `__builtin_types_compatible_p` assertions against cudaTypedefs.h; and
//! bindgen's output without the declarations of the table-only functions (never linked).

use std::collections::BTreeSet;

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

/// bindgen's output without the `extern` declarations of `symbols` (prettyplease writes each one
/// from `    pub fn NAME(` to the line that ends in `;`), and without the attributes above them.
/// Every one of `symbols` must be declared there.
pub fn without_extern_fns(bindings: &str, symbols: &BTreeSet<String>) -> Result<String, String> {
    let mut out: Vec<&str> = Vec::new();
    let mut removed = BTreeSet::new();
    let (mut in_extern, mut skipping) = (false, false);
    for line in bindings.lines() {
        if skipping {
            skipping = !line.ends_with(';');
            continue;
        }
        in_extern = (in_extern && line != "}") || line == "extern \"C\" {";
        let name = line
            .trim_start()
            .strip_prefix("pub fn ")
            .and_then(|r| r.split('(').next())
            .filter(|n| in_extern && symbols.contains(*n));
        if let Some(name) = name {
            while out.last().is_some_and(|l| l.trim_start().starts_with("#[")) {
                out.pop();
            }
            removed.insert(name.to_string());
            skipping = !line.ends_with(';');
            continue;
        }
        out.push(line);
    }
    let absent: Vec<&String> = symbols.difference(&removed).collect();
    if !absent.is_empty() {
        return Err(format!(
            "no extern declaration of the table-only {absent:?} to leave out"
        ));
    }
    let mut s = out.join("\n");
    s.push('\n');
    Ok(s)
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

#[cfg(test)]
mod tests {
    use super::without_extern_fns;
    use std::collections::BTreeSet;

    #[test]
    fn table_only_declarations_are_left_out() {
        let src = "pub struct A;\nextern \"C\" {\n    pub fn cuInit(Flags: u32) -> CUresult;\n    pub fn cuLock(\n        pid: i32,\n        args: *mut X,\n    ) -> CUresult;\n    pub fn cuState(pid: i32) -> CUresult;\n}\npub fn cuLock() {}\n";
        let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
        let out = without_extern_fns(src, &set(&["cuLock", "cuState"])).unwrap();
        assert_eq!(
            out,
            "pub struct A;\nextern \"C\" {\n    pub fn cuInit(Flags: u32) -> CUresult;\n}\npub fn cuLock() {}\n"
        );
        assert_eq!(without_extern_fns(src, &set(&[])).unwrap(), src);
        assert!(without_extern_fns(src, &set(&["cuMissing"]))
            .unwrap_err()
            .contains("cuMissing"));
    }
}
