//! `Debug`, `PartialEq`, `Eq` and `Hash` for the structs bindgen cannot derive them for (those that
//! hold a C union, directly or through a field): written field by field, the union (rewritten by
//! unions.rs as a value every constructor writes whole) read through the view its struct's tag
//! names (allowlist::TAGGED_UNIONS); and the test, written into every module, that each of its
//! public types implements `Debug`.

use super::unions::WholeUnion;
use crate::allowlist::{TaggedUnion, TAGGED_UNIONS};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// The traits a struct of the bindings has in every module where its fields allow them (bindgen
/// derives them where it can).
const TRAITS: [&str; 4] = ["Debug", "PartialEq", "Eq", "Hash"];

/// The traits `#[derive(..)]` lists on an item.
fn derived(attrs: &[syn::Attribute]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = a.parse_nested_meta(|m| {
            if let Some(i) = m.path.get_ident() {
                out.insert(i.to_string());
            }
            Ok(())
        });
    }
    out
}

/// The last identifier of a path type (`CUmemLocationType`, `c_int`), if the type is a path.
fn type_name(t: &syn::Type) -> Option<String> {
    match t {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// One field of a struct as the impls treat it.
enum Field {
    /// Compared, hashed and printed as it is.
    Plain(String),
    /// A union, read through the field `tagged` says.
    Union(String, &'static TaggedUnion),
}

/// How `tagged` picks the union field: `(condition, union field)` for each case, then the default.
fn views(tagged: &TaggedUnion, tag_ty: &str) -> Vec<(Option<String>, &'static str)> {
    let mut out: Vec<(Option<String>, &'static str)> = tagged
        .cases
        .iter()
        .map(|(k, field)| (Some(format!("self.{} == {tag_ty}::{k}", tagged.tag)), *field))
        .collect();
    out.push((None, tagged.default));
    out
}

/// `if c1 {\n a\n} else if c2 {\n b\n} else {\n z\n}` over `views` at `indent` (the first line
/// unindented), each arm written by `arm(union field)`.
fn by_view(views: &[(Option<String>, &str)], indent: &str, arm: impl Fn(&str) -> String) -> String {
    let mut s = String::new();
    for (cond, field) in views {
        match cond {
            Some(c) => write!(s, "if {c} {{\n{indent}    {}\n{indent}}} else ", arm(field)).unwrap(),
            None if views.len() == 1 => s.push_str(&arm(field)),
            None => write!(s, "{{\n{indent}    {}\n{indent}}}", arm(field)).unwrap(),
        }
    }
    s
}

/// What the docs of a tagged struct's impls say of the union: `localized` for `K`, else `id`.
fn view_text(t: &TaggedUnion) -> String {
    let mut parts: Vec<String> = t.cases.iter().map(|(k, f)| format!("`{f}` for `{k}`")).collect();
    parts.push(format!("else `{}`", t.default));
    format!("its field that `{}` names ({})", t.tag, parts.join(", "))
}

/// The impls for every struct of bindgen's output that lacks one of [`TRAITS`]. `enums`: the enum
/// newtypes and their constants; `aliases`: bindgen's `pub use self::X_enum as X;` (enum to the name
/// cuda.h gives it); `whole`: the unions unions.rs rewrote (a C union left in `file` is refused).
pub fn struct_traits(
    file: &syn::File,
    enums: &[(String, Vec<(String, i128)>)],
    aliases: &BTreeMap<String, String>,
    whole: &[WholeUnion],
) -> Result<String, String> {
    let unions: BTreeMap<String, Vec<String>> = whole.iter().map(|w| (w.name.clone(), w.fields.clone())).collect();
    // An enum's constants, under its own name and cuda.h's.
    let mut consts: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, cs) in enums {
        let list: Vec<&str> = cs.iter().map(|(n, _)| n.as_str()).collect();
        if let Some(alias) = aliases.get(name) {
            consts.insert(alias, list.clone());
        }
        consts.insert(name, list);
    }
    let mut out = String::new();
    for item in &file.items {
        match item {
            syn::Item::Union(u) => {
                return Err(format!(
                    "union {}: left as a C union (table::whole_unions runs first)",
                    u.ident
                ));
            }
            syn::Item::Struct(s) => {
                let syn::Fields::Named(named) = &s.fields else { continue };
                let have = derived(&s.attrs);
                let wanted: Vec<&str> = TRAITS.iter().copied().filter(|t| !have.contains(*t)).collect();
                if wanted.is_empty() || !have.contains("Copy") {
                    continue; // derives them all, or an opaque handle (Debug only, derived)
                }
                let name = s.ident.to_string();
                let mut fields = Vec::new();
                let mut floats = false;
                for f in &named.named {
                    let field = f.ident.as_ref().unwrap().to_string();
                    let ty = type_name(&f.ty).unwrap_or_default();
                    floats |= matches!(ty.as_str(), "f32" | "f64" | "c_float" | "c_double");
                    match unions.get(&ty) {
                        None => fields.push(Field::Plain(field)),
                        Some(union_fields) => {
                            let tagged = TAGGED_UNIONS.iter().find(|t| t.owner == name).ok_or_else(|| {
                                format!("{name}.{field} is the union {ty}: add it to allowlist::TAGGED_UNIONS")
                            })?;
                            for v in tagged.cases.iter().map(|c| c.1).chain([tagged.default]) {
                                if !union_fields.iter().any(|u| u == v) {
                                    return Err(format!("allowlist::TAGGED_UNIONS: the union {ty} has no field {v}"));
                                }
                            }
                            fields.push(Field::Union(field, tagged));
                        }
                    }
                }
                out.push_str(&impls(&name, &fields, &wanted, floats, named, &consts)?);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The `wanted` impls of one struct.
fn impls(
    name: &str,
    fields: &[Field],
    wanted: &[&str],
    floats: bool,
    named: &syn::FieldsNamed,
    consts: &BTreeMap<&str, Vec<&str>>,
) -> Result<String, String> {
    let mut tag_views = BTreeMap::new();
    for f in fields {
        if let Field::Union(field, t) = f {
            let tag_ty = named
                .named
                .iter()
                .find(|nf| nf.ident.as_ref().is_some_and(|i| i == t.tag))
                .and_then(|nf| type_name(&nf.ty))
                .ok_or_else(|| format!("allowlist::TAGGED_UNIONS: {name} has no tag field {}", t.tag))?;
            let known = consts
                .get(tag_ty.as_str())
                .ok_or_else(|| format!("{name}.{}: {tag_ty} is not an enum of the bindings", t.tag))?;
            for (k, _) in t.cases {
                if !known.contains(k) {
                    return Err(format!("allowlist::TAGGED_UNIONS: {tag_ty} has no constant {k}"));
                }
            }
            tag_views.insert(field.clone(), (t, views(t, &tag_ty)));
        }
    }
    let mut out = String::new();
    if wanted.contains(&"Debug") {
        let mut body = format!("        let mut s = f.debug_struct(\"{name}\");\n");
        for f in fields {
            match f {
                Field::Plain(n) => writeln!(body, "        s.field(\"{n}\", &self.{n});").unwrap(),
                Field::Union(n, _) => {
                    let (_, v) = &tag_views[n];
                    writeln!(
                        body,
                        "        {}",
                        by_view(v, "        ", |u| format!("s.field(\"{u}\", &self.{n}.{u}());"))
                    )
                    .unwrap();
                }
            }
        }
        let doc = match tag_views.values().next() {
            None => String::new(),
            Some((t, _)) => format!(
                "/// Prints the union through {}, as the driver reads it.\n",
                view_text(t)
            ),
        };
        write!(
            out,
            "{doc}impl ::core::fmt::Debug for {name} {{\n    \
             fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {{\n{body}        s.finish()\n    }}\n}}\n"
        )
        .unwrap();
    }
    if floats {
        return Ok(out); // no Eq or Hash for a float, and PartialEq alone would surprise
    }
    // The tag first: each union is then compared through the one view both sides agree on.
    let tags: Vec<&str> = tag_views.values().map(|(t, _)| t.tag).collect();
    let mut order: Vec<&Field> = fields
        .iter()
        .filter(|f| matches!(f, Field::Plain(n) if tags.contains(&n.as_str())))
        .collect();
    order.extend(
        fields
            .iter()
            .filter(|f| !matches!(f, Field::Plain(n) if tags.contains(&n.as_str()))),
    );
    if wanted.contains(&"PartialEq") {
        let terms: Vec<String> = order
            .iter()
            .map(|f| match f {
                Field::Plain(n) => format!("self.{n} == other.{n}"),
                Field::Union(n, _) => by_view(&tag_views[n].1, "            ", |u| {
                    format!("self.{n}.{u}() == other.{n}.{u}()")
                }),
            })
            .collect();
        let expr = terms.join("\n            && ");
        let doc = match tag_views.values().next() {
            None => String::new(),
            Some((t, _)) => format!(
                "/// Equal when every field is, the union compared through {}.\n",
                view_text(t)
            ),
        };
        write!(
            out,
            "{doc}impl ::core::cmp::PartialEq for {name} {{\n    fn eq(&self, other: &Self) -> bool {{\n        {expr}\n    }}\n}}\n"
        )
        .unwrap();
    }
    if wanted.contains(&"Eq") {
        writeln!(out, "impl ::core::cmp::Eq for {name} {{}}").unwrap();
    }
    if wanted.contains(&"Hash") {
        let mut body = String::new();
        for f in &order {
            match f {
                Field::Plain(n) => writeln!(body, "        ::core::hash::Hash::hash(&self.{n}, state);").unwrap(),
                Field::Union(n, _) => writeln!(
                    body,
                    "        {}",
                    by_view(&tag_views[n].1, "        ", |u| format!(
                        "::core::hash::Hash::hash(&self.{n}.{u}(), state);"
                    ))
                )
                .unwrap(),
            }
        }
        let doc = match tag_views.values().next() {
            None => String::new(),
            Some((t, _)) => format!(
                "/// Hashes what `eq` compares: every field, the union through {}.\n",
                view_text(t)
            ),
        };
        write!(
            out,
            "{doc}impl ::core::hash::Hash for {name} {{\n    fn hash<H: ::core::hash::Hasher>(&self, state: &mut H) {{\n{body}    }}\n}}\n"
        )
        .unwrap();
    }
    Ok(out)
}

/// A test that every public struct, union and type alias at the top of a module implements
/// `Debug` (it does not compile otherwise), from the module's own text.
pub fn debug_test(module: &str) -> Result<String, String> {
    let file = syn::parse_file(module).map_err(|e| format!("cannot parse a generated module: {e}"))?;
    let public = |v: &syn::Visibility| matches!(v, syn::Visibility::Public(_));
    let mut names = Vec::new();
    for item in &file.items {
        let (vis, ident, generics) = match item {
            syn::Item::Struct(s) => (&s.vis, &s.ident, &s.generics),
            syn::Item::Union(u) => (&u.vis, &u.ident, &u.generics),
            syn::Item::Type(t) => (&t.vis, &t.ident, &t.generics),
            _ => continue,
        };
        if public(vis) && generics.params.is_empty() {
            names.push(ident.to_string());
        }
    }
    if names.is_empty() {
        return Err("a generated module has no public type".into());
    }
    let mut out = String::from(
        "\n/// Every public type of this module implements `Debug` (the list is written by `cargo xtask regen`\n\
         /// from the module itself).\n#[test]\nfn every_public_type_implements_debug() {\n    \
         fn debug<T: ::core::fmt::Debug>() {}\n",
    );
    for n in names {
        writeln!(out, "    debug::<{n}>();").unwrap();
    }
    out.push_str("}\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bindgen's output as it prints it (unions.rs finds items by their lines).
    const SAMPLE: &str = "\
#[repr(transparent)]
#[derive(Copy, Clone, Hash, PartialEq, Eq)]
pub struct CUmemLocationType_enum(pub ::core::ffi::c_uint);
impl CUmemLocationType_enum {
    pub const CU_MEM_LOCATION_TYPE_DEVICE: CUmemLocationType_enum = CUmemLocationType_enum(1);
    pub const CU_MEM_LOCATION_TYPE_DEVICE_LOCALITY_DOMAIN: CUmemLocationType_enum = CUmemLocationType_enum(6);
}
pub use self::CUmemLocationType_enum as CUmemLocationType;
#[repr(C)]
#[derive(Copy, Clone)]
pub struct CUmemLocation_st {
    pub type_: CUmemLocationType,
    pub __bindgen_anon_1: CUmemLocation_st__bindgen_ty_1,
}
#[repr(C)]
#[derive(Copy, Clone)]
pub union CUmemLocation_st__bindgen_ty_1 {
    pub id: ::core::ffi::c_int,
    pub localized: Pair,
}
#[repr(C)]
#[derive(Copy, Clone)]
pub struct CUmemAccessDesc_st {
    pub location: CUmemLocation,
    pub flags: ::core::ffi::c_uint,
}
#[repr(C)]
#[derive(Debug, Copy, Clone, Hash, PartialEq, Eq)]
pub struct Pair {
    pub a: u8,
}
";

    fn generated(text: &str) -> Result<String, String> {
        let (text, whole) = super::super::unions::whole_unions(text)?;
        let file = syn::parse_file(&text).unwrap();
        let enums = crate::table::enum_newtypes(&file);
        let mut aliases = BTreeMap::new();
        aliases.insert("CUmemLocationType_enum".to_string(), "CUmemLocationType".to_string());
        struct_traits(&file, &enums, &aliases, &whole)
    }

    #[test]
    fn the_tag_picks_the_union_field() {
        let out = generated(SAMPLE).unwrap();
        // Every trait for both structs, none for the one that derives them.
        for t in ["fmt::Debug", "cmp::PartialEq", "cmp::Eq", "hash::Hash"] {
            assert!(
                out.contains(&format!("impl ::core::{t} for CUmemLocation_st ")),
                "{t}\n{out}"
            );
            assert!(
                out.contains(&format!("impl ::core::{t} for CUmemAccessDesc_st ")),
                "{t}\n{out}"
            );
            assert!(!out.contains(&format!("impl ::core::{t} for Pair ")), "{t}\n{out}");
        }
        assert!(
            out.contains(
                "if self.type_ == CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE_LOCALITY_DOMAIN {\n            \
             s.field(\"localized\", &self.__bindgen_anon_1.localized());\n        } else {\n            \
             s.field(\"id\", &self.__bindgen_anon_1.id());\n        }"
            ),
            "{out}"
        );
        // The rewritten union derives its own; nothing reads a union field unsafely.
        assert!(!out.contains("for CUmemLocation_st__bindgen_ty_1 "), "{out}");
        assert!(!out.contains("unsafe"), "{out}");
        // Compared tag first.
        let eq = out.split("PartialEq for CUmemLocation_st ").nth(1).unwrap();
        assert!(
            eq.find("self.type_ == other.type_").unwrap() < eq.find("__bindgen_anon_1").unwrap(),
            "{out}"
        );
        syn::parse_file(&out).expect("the impls parse");
    }

    #[test]
    fn an_unlisted_union_or_constant_is_refused() {
        // A union in a struct nobody listed.
        let file = format!(
            "{SAMPLE}#[derive(Copy, Clone)]\npub struct Other {{\n    pub u: CUmemLocation_st__bindgen_ty_1,\n}}\n"
        );
        let e = generated(&file).unwrap_err();
        assert!(e.contains("Other.u") && e.contains("TAGGED_UNIONS"), "{e}");
        // A header without the case's constant.
        let file: String = SAMPLE
            .lines()
            .filter(|l| !l.contains("DOMAIN:"))
            .map(|l| format!("{l}\n"))
            .collect();
        let e = generated(&file).unwrap_err();
        assert!(e.contains("CU_MEM_LOCATION_TYPE_DEVICE_LOCALITY_DOMAIN"), "{e}");
    }

    #[test]
    fn the_debug_test_lists_public_types() {
        let t =
            debug_test("pub struct A; struct B; pub type C = u8; pub union D { x: u8 } pub struct G<T>(T);").unwrap();
        assert!(t.contains("debug::<A>();") && t.contains("debug::<C>();") && t.contains("debug::<D>();"));
        assert!(!t.contains("debug::<B>") && !t.contains("debug::<G>"));
    }
}
