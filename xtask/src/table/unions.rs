//! CUDA's C unions, written as values whose every byte each constructor writes: bindgen's
//! `pub union` lets safe code build one through a field narrower than the union (CUDA 13's
//! `localized`, 2 of `CUmemLocation`'s 4 union bytes) and leave the rest uninitialised, which any
//! read of the wider field (`id`, in `Debug`, `==` or `Hash`) then exposes. Each union of bindgen's
//! output becomes a `#[repr(transparent)]` struct around its widest field, an integer, kept private,
//! with a constructor, a reader and a setter per C field; the ABI probe checks its size, alignment and
//! where each view lies (`probe_entries`).

use crate::allowlist::{TaggedUnion, TAGGED_UNIONS};
use std::fmt::Write as _;

/// One C union as the generator rewrote it.
#[derive(Debug)]
pub struct WholeUnion {
    /// bindgen's name for it (`CUmemLocation_st__bindgen_ty_1`).
    pub name: String,
    /// The struct holding it and which of its fields is meant when.
    pub tagged: &'static TaggedUnion,
    /// The field of the owner that holds it (`__bindgen_anon_1` for an anonymous union).
    pub owner_field: String,
    /// The C fields, in declaration order: each has `from_F`, `F()` and `set_F`.
    pub fields: Vec<String>,
    /// The widest field: an integer as wide as the union, stored as it is.
    carrier: (String, String),
    /// Every other field: (name, struct type, its byte fields in order).
    views: Vec<(String, String, Vec<String>)>,
}

/// The width in bytes of an integer type bindgen writes, by its last path segment.
fn int_width(ty: &str) -> Option<usize> {
    match ty {
        "c_char" | "c_schar" | "c_uchar" | "i8" | "u8" => Some(1),
        "c_short" | "c_ushort" | "i16" | "u16" => Some(2),
        "c_int" | "c_uint" | "i32" | "u32" => Some(4),
        "c_longlong" | "c_ulonglong" | "i64" | "u64" => Some(8),
        _ => None,
    }
}

/// The last identifier of a path type, if the type is a path.
fn last(t: &syn::Type) -> Option<String> {
    match t {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// The named fields of a struct of `file`, as (name, type's last segment).
fn struct_fields(file: &syn::File, name: &str) -> Option<Vec<(String, String)>> {
    file.items.iter().find_map(|i| match i {
        syn::Item::Struct(s) if s.ident == name => match &s.fields {
            syn::Fields::Named(n) => Some(
                n.named
                    .iter()
                    .map(|f| (f.ident.as_ref().unwrap().to_string(), last(&f.ty).unwrap_or_default()))
                    .collect(),
            ),
            _ => None,
        },
        _ => None,
    })
}

/// What the union `u` of `file` becomes, or why the generator cannot rewrite it.
fn plan(file: &syn::File, u: &syn::ItemUnion) -> Result<WholeUnion, String> {
    let name = u.ident.to_string();
    let (tagged, owner_field) = TAGGED_UNIONS
        .iter()
        .find_map(|t| {
            struct_fields(file, t.owner)?
                .into_iter()
                .find(|(_, ty)| *ty == name)
                .map(|(f, _)| (t, f))
        })
        .ok_or_else(|| format!("union {name}: no struct of allowlist::TAGGED_UNIONS holds it"))?;
    let fields: Vec<(String, String)> = u
        .fields
        .named
        .iter()
        .map(|f| (f.ident.as_ref().unwrap().to_string(), last(&f.ty).unwrap_or_default()))
        .collect();
    let widest = fields.iter().filter_map(|(_, t)| int_width(t)).max().unwrap_or(0);
    let carrier = fields
        .iter()
        .find(|(_, t)| int_width(t) == Some(widest))
        .cloned()
        .ok_or_else(|| format!("union {name}: no integer field to hold its bytes"))?;
    let mut views = Vec::new();
    for (f, ty) in fields.iter().filter(|(f, _)| *f != carrier.0) {
        let bytes = struct_fields(file, ty)
            .filter(|fs| fs.iter().all(|(_, t)| int_width(t) == Some(1)))
            .ok_or_else(|| {
                format!("union {name}: field {f} ({ty}) is neither the widest integer nor a struct of bytes")
            })?;
        if bytes.len() > widest {
            return Err(format!(
                "union {name}: field {f} is wider than its integer field {}",
                carrier.0
            ));
        }
        views.push((f.clone(), ty.clone(), bytes.into_iter().map(|(b, _)| b).collect()));
    }
    Ok(WholeUnion {
        name,
        tagged,
        owner_field,
        fields: fields.into_iter().map(|(f, _)| f).collect(),
        carrier,
        views,
    })
}

/// The Rust items standing for the union.
fn items(w: &WholeUnion) -> String {
    let (name, (cf, ct)) = (&w.name, &w.carrier);
    let width = int_width(ct).unwrap();
    let all: Vec<String> = w.fields.iter().map(|f| format!("`{f}`")).collect();
    let mut s = format!(
        "/// The C union of `{owner}` ({all}), as {width} bytes that every constructor writes: build it\n\
         /// with `from_FIELD`, read it with `FIELD()`. A read gives the bytes the C field of that name\n\
         /// covers, so a value always reads as the driver would read it; a view narrower than the union\n\
         /// writes zeros past its end. (bindgen's `union` let safe code leave bytes uninitialised.)\n\
         #[repr(transparent)]\n\
         #[derive(Debug, Default, Copy, Clone, Hash, PartialEq, Eq)]\n\
         pub struct {name} {{\n    raw: ::core::ffi::{ct},\n}}\n\
         impl {name} {{\n    \
         /// The union holding `{cf}`.\n    \
         pub const fn from_{cf}({cf}: ::core::ffi::{ct}) -> Self {{\n        Self {{ raw: {cf} }}\n    }}\n    \
         /// `{cf}`: every byte of the union.\n    \
         pub const fn {cf}(self) -> ::core::ffi::{ct} {{\n        self.raw\n    }}\n    \
         /// Writes `{cf}`.\n    \
         pub fn set_{cf}(&mut self, {cf}: ::core::ffi::{ct}) {{\n        *self = Self::from_{cf}({cf});\n    }}\n",
        owner = w.tagged.owner,
        all = all.join(", "),
    );
    for (f, ty, bytes) in &w.views {
        let mut packed: Vec<String> = bytes.iter().map(|b| format!("v.{b}")).collect();
        packed.resize(width, "0".into());
        let read: Vec<String> = bytes.iter().enumerate().map(|(i, b)| format!("{b}: b[{i}]")).collect();
        write!(
            s,
            "    /// The union holding `{f}`, its bytes past `{f}` zero.\n    \
             pub const fn from_{f}(v: {ty}) -> Self {{\n        \
             Self {{ raw: ::core::ffi::{ct}::from_ne_bytes([{packed}]) }}\n    }}\n    \
             /// `{f}`: the union's first {n} bytes.\n    \
             pub const fn {f}(self) -> {ty} {{\n        \
             let b = self.raw.to_ne_bytes();\n        {ty} {{ {read} }}\n    }}\n    \
             /// Writes `{f}`, and zeros past it.\n    \
             pub fn set_{f}(&mut self, v: {ty}) {{\n        *self = Self::from_{f}(v);\n    }}\n",
            packed = packed.join(", "),
            n = bytes.len(),
            read = read.join(", "),
        )
        .unwrap();
    }
    s.push_str("}\n");
    s
}

/// The lines of one top-level item of bindgen's (prettyplease-printed) output: the line `head`
/// starts, the attributes above it, through the first `}` at the start of a line after it.
fn item_lines(lines: &[&str], head: &str) -> Option<std::ops::Range<usize>> {
    let at = lines.iter().position(|l| l.starts_with(head))?;
    let mut from = at;
    while from > 0 && lines[from - 1].starts_with("#[") {
        from -= 1;
    }
    let to = at + lines[at..].iter().position(|l| *l == "}")?;
    Some(from..to + 1)
}

/// bindgen's output with every union rewritten (`bindings` unchanged where it has none), and what
/// was rewritten. The union, its `Default` and its layout test go; the new items take the union's
/// place; every other line stays as bindgen printed it.
pub fn whole_unions(bindings: &str) -> Result<(String, Vec<WholeUnion>), String> {
    let file = syn::parse_file(bindings).map_err(|e| format!("cannot parse bindgen output: {e}"))?;
    let plans = file
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Union(u) => Some(plan(&file, u)),
            _ => None,
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut text = bindings.to_string();
    for w in &plans {
        let name = &w.name;
        let lines: Vec<&str> = text.lines().collect();
        let union = item_lines(&lines, &format!("pub union {name} {{"))
            .ok_or_else(|| format!("union {name}: not found as bindgen prints a union"))?;
        let mut drop = vec![union.clone()];
        drop.extend(item_lines(&lines, &format!("impl Default for {name} {{")));
        drop.extend(item_lines(&lines, &format!("fn bindgen_test_layout_{name}() {{")));
        let mut out: Vec<String> = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            if i == union.start {
                out.extend(items(w).lines().map(str::to_string));
            }
            if !drop.iter().any(|r| r.contains(&i)) {
                out.push(l.to_string());
            }
        }
        text = out.join("\n") + "\n";
    }
    Ok((text, plans))
}

/// The ABI probe's entries for a rewritten union, as (key, C expression, Rust expression over the
/// module `B`): its size and alignment, where each C field lies in the owner, and where each byte
/// of a view lies in the field (the readers take byte `i` for the view's `i`-th field).
pub fn probe_entries(w: &WholeUnion, c_owner: &str) -> Vec<(String, String, String)> {
    let (name, owner, of) = (&w.name, w.tagged.owner, &w.owner_field);
    let cf = &w.carrier.0;
    let mut out = vec![
        (
            format!("size {name}"),
            format!("sizeof((({c_owner} *)0)->{cf})"),
            format!("::core::mem::size_of::<B::{name}>()"),
        ),
        (
            format!("align {name}"),
            format!("_Alignof(__typeof__((({c_owner} *)0)->{cf}))"),
            format!("::core::mem::align_of::<B::{name}>()"),
        ),
    ];
    for f in &w.fields {
        out.push((
            format!("offset {owner}.{f}"),
            format!("offsetof({c_owner}, {f})"),
            format!("::core::mem::offset_of!(B::{owner}, {of})"),
        ));
    }
    for (f, _, bytes) in &w.views {
        for (i, b) in bytes.iter().enumerate() {
            out.push((
                format!("byte {owner}.{f}.{b}"),
                format!("offsetof({c_owner}, {f}.{b}) - offsetof({c_owner}, {f})"),
                format!("{i}usize"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bindgen's output as it prints it.
    const SAMPLE: &str = "\
pub struct CUmemLocation_st {
    pub type_: ::core::ffi::c_uint,
    pub __bindgen_anon_1: CUmemLocation_st__bindgen_ty_1,
}
#[repr(C)]
#[derive(Copy, Clone)]
pub union CUmemLocation_st__bindgen_ty_1 {
    pub id: ::core::ffi::c_int,
    pub localized: Pair,
}
#[repr(C)]
#[derive(Debug, Default, Copy, Clone, Hash, PartialEq, Eq)]
pub struct Pair {
    pub deviceId: ::core::ffi::c_uchar,
    pub localityDomainId: ::core::ffi::c_uchar,
}
impl Default for CUmemLocation_st__bindgen_ty_1 {
    fn default() -> Self {
        todo!()
    }
}
#[test]
fn bindgen_test_layout_CUmemLocation_st__bindgen_ty_1() {
    let x = 1;
}
";

    #[test]
    fn a_union_becomes_a_whole_value() {
        let (out, plans) = whole_unions(SAMPLE).unwrap();
        assert_eq!(plans.len(), 1);
        assert_eq!(plans[0].owner_field, "__bindgen_anon_1");
        assert!(!out.contains("pub union"), "{out}");
        syn::parse_file(&out).expect("the rewritten text parses");
        assert!(
            !out.contains("bindgen_test_layout_CUmemLocation_st__bindgen_ty_1"),
            "{out}"
        );
        assert!(
            out.contains("pub struct CUmemLocation_st__bindgen_ty_1 {\n    raw: ::core::ffi::c_int,\n}"),
            "{out}"
        );
        // Every byte written: the view's two, then zeros.
        assert!(
            out.contains("raw: ::core::ffi::c_int::from_ne_bytes([v.deviceId, v.localityDomainId, 0, 0])"),
            "{out}"
        );
        assert!(out.contains("Pair { deviceId: b[0], localityDomainId: b[1] }"), "{out}");
        // Nothing bindgen wrote for the union stays but what the owner holds.
        assert_eq!(out.matches("impl Default for").count(), 0, "{out}");
        let keys: Vec<String> = probe_entries(&plans[0], "CUmemLocation")
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert!(
            keys.contains(&"byte CUmemLocation_st.localized.localityDomainId".to_string()),
            "{keys:?}"
        );
    }

    #[test]
    fn no_union_leaves_the_text_alone() {
        let text = "pub struct A {\n    pub x: u8,\n}\n";
        assert_eq!(whole_unions(text).unwrap().0, text);
    }

    #[test]
    fn a_union_it_cannot_rewrite_is_refused() {
        let e = whole_unions(&SAMPLE.replace("pub localized: Pair", "pub localized: f32")).unwrap_err();
        assert!(e.contains("localized") && e.contains("struct of bytes"), "{e}");
        let e = whole_unions("pub union U {\n    pub a: u8,\n}\n").unwrap_err();
        assert!(e.contains("TAGGED_UNIONS"), "{e}");
    }
}
