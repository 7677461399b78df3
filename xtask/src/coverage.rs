//! `cargo xtask ci`'s docs coverage: every public function of cuda-mempool-sys has a doc, every
//! unsafe or foreign one a `# Safety` section, every bound driver function a link to NVIDIA's
//! reference, and every function or trait impl that exists only on Unix, only on Windows or only
//! with `std` the docs.rs badge that says so (lib.rs turns rustdoc's automatic badges off). Reads
//! the sources with syn (rustdoc's own coverage report needs nightly).

use std::path::Path;

#[derive(Default)]
struct Tally {
    public: usize,
    unsafe_: usize,
    bound: usize,
    anchored: usize,
    missing: Vec<String>,
}

fn doc_of(attrs: &[syn::Attribute]) -> Option<String> {
    let mut text = String::new();
    for a in attrs {
        if !a.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &a.meta {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s), ..
            }) = &nv.value
            {
                text.push_str(&s.value());
                text.push('\n');
            }
        }
    }
    (!text.trim().is_empty()).then_some(text)
}

/// The cfgs a reader is told of with a badge: an item that exists only on Unix, only on Windows
/// or only with `std` (not `any(unix, windows)`, which both of docs.rs's targets have, nor
/// `dynamic-loading`, under which the same API exists another way), as written without spaces.
const BADGED: &[&str] = &["unix", "windows", "feature=\"std\""];

/// The predicate of each `#[cfg(..)]` of BADGED that `attrs` lack a `doc(cfg(..))` badge for.
fn missing_badges(attrs: &[syn::Attribute]) -> Vec<String> {
    let tokens = |a: &syn::Attribute| match &a.meta {
        syn::Meta::List(l) => l.tokens.to_string().replace(' ', ""),
        _ => String::new(),
    };
    let badges: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg_attr"))
        .map(tokens)
        .filter(|t| t.starts_with("docsrs,"))
        .collect();
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .map(tokens)
        .filter(|p| BADGED.contains(&p.as_str()))
        .filter(|p| !badges.iter().any(|b| b.contains(&format!("doc(cfg({p}))"))))
        .collect()
}

impl Tally {
    /// An item that exists only under a BADGED cfg must carry its badge.
    fn badge(&mut self, place: &str, name: &str, attrs: &[syn::Attribute]) {
        for p in missing_badges(attrs) {
            self.missing.push(format!(
                "{place}: `{name}` exists only under cfg({p}): add #[cfg_attr(docsrs, doc(cfg({p})))]"
            ));
        }
    }

    /// `bound`: a driver function (a foreign item or its `global` twin), which must link NVIDIA.
    fn check(&mut self, place: &str, name: &str, attrs: &[syn::Attribute], is_unsafe: bool, bound: bool) {
        self.public += 1;
        self.badge(place, name, attrs);
        let Some(doc) = doc_of(attrs) else {
            self.missing.push(format!("{place}: `{name}` has no doc"));
            return;
        };
        if is_unsafe {
            self.unsafe_ += 1;
            if !doc.contains("# Safety") {
                self.missing
                    .push(format!("{place}: unsafe `{name}` has no `# Safety` section"));
            }
        }
        if bound {
            self.bound += 1;
            if !doc.contains("https://docs.nvidia.com/cuda/cuda-driver-api/") {
                self.missing
                    .push(format!("{place}: `{name}` does not link NVIDIA's reference"));
            }
            if doc.contains(".html#group__") {
                self.anchored += 1;
            }
        }
    }

    fn items(&mut self, place: &str, items: &[syn::Item], in_global: bool) {
        for item in items {
            match item {
                syn::Item::ForeignMod(m) => {
                    for fi in &m.items {
                        if let syn::ForeignItem::Fn(f) = fi {
                            if matches!(f.vis, syn::Visibility::Public(_)) {
                                self.check(place, &f.sig.ident.to_string(), &f.attrs, true, true);
                            }
                        }
                    }
                }
                syn::Item::Fn(f) if matches!(f.vis, syn::Visibility::Public(_)) => {
                    let is_unsafe = f.sig.unsafety.is_some();
                    let name = f.sig.ident.to_string();
                    // `global`'s unsafe `cu*` functions are the bound functions themselves (its
                    // `install` is unsafe too, and no driver function).
                    let bound = in_global && is_unsafe && name.starts_with("cu");
                    self.check(place, &name, &f.attrs, is_unsafe, bound);
                }
                syn::Item::Impl(imp) if imp.trait_.is_some() => {
                    let (_, path, _) = imp.trait_.as_ref().unwrap();
                    let name = format!(
                        "impl {} for {}",
                        path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
                        quote_type(&imp.self_ty)
                    );
                    self.badge(place, &name, &imp.attrs);
                }
                syn::Item::Impl(imp) if imp.trait_.is_none() => {
                    for ii in &imp.items {
                        if let syn::ImplItem::Fn(f) = ii {
                            if matches!(f.vis, syn::Visibility::Public(_)) {
                                let name = f.sig.ident.to_string();
                                self.check(place, &name, &f.attrs, f.sig.unsafety.is_some(), false);
                            }
                        }
                    }
                }
                syn::Item::Mod(m) if matches!(m.vis, syn::Visibility::Public(_)) => {
                    if let Some((_, inner)) = &m.content {
                        self.items(place, inner, m.ident == "global");
                    }
                }
                _ => {}
            }
        }
    }
}

/// A type's last path segment (`CUresult`), for messages.
fn quote_type(t: &syn::Type) -> String {
    match t {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
        _ => "a type".into(),
    }
}

fn rs_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Checks cuda-mempool-sys/src; the summary line on success, every gap on failure.
pub fn check(root: &Path) -> Result<String, String> {
    let src = root.join("cuda-mempool-sys").join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let mut t = Tally::default();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap_or(f).display().to_string();
        let text = std::fs::read_to_string(f).map_err(|e| format!("cannot read {rel}: {e}"))?;
        let file = syn::parse_file(&text).map_err(|e| format!("cannot parse {rel}: {e}"))?;
        t.items(&rel, &file.items, false);
    }
    if !t.missing.is_empty() {
        return Err(format!(
            "docs coverage: {} gap(s) in cuda-mempool-sys:\n  {}",
            t.missing.len(),
            t.missing.join("\n  ")
        ));
    }
    Ok(format!(
        "docs coverage: {} public functions in {} files, all documented; {} unsafe, all with `# Safety`; \
         {} bound driver functions, all linking NVIDIA's reference ({} to the function's own anchor)",
        t.public,
        files.len(),
        t.unsafe_,
        t.bound,
        t.anchored
    ))
}

#[cfg(test)]
mod tests {
    use super::Tally;

    fn gaps(src: &str) -> Vec<String> {
        let mut t = Tally::default();
        t.items("t.rs", &syn::parse_file(src).unwrap().items, false);
        t.missing
    }

    #[test]
    fn each_gap_is_found() {
        assert_eq!(gaps("extern \"C\" { pub fn cuInit(flags: u32) -> i32; }").len(), 1);
        let no_safety =
            "extern \"C\" { /// Init. [x](https://docs.nvidia.com/cuda/cuda-driver-api/a.html)\n pub fn cuInit(); }";
        assert!(gaps(no_safety)[0].contains("# Safety"));
        let no_link = "pub mod global { /// Init.\n///\n/// # Safety\n/// Rules.\n pub unsafe fn cuInit() {} }";
        assert!(gaps(no_link)[0].contains("NVIDIA"));
        let method = "impl T { pub unsafe fn f(&self) {} }";
        assert_eq!(gaps(method).len(), 1);
        let fine = "extern \"C\" { /// Init. [x](https://docs.nvidia.com/cuda/cuda-driver-api/a.html)\n///\n/// # Safety\n/// Rules.\n pub fn cuInit(); }";
        assert!(gaps(fine).is_empty());
    }

    #[test]
    fn a_narrower_cfg_needs_its_badge() {
        let unix = "impl T { /// Doc.\n #[cfg(unix)] pub fn f() {} }";
        assert!(gaps(unix)[0].contains("cfg(unix)"), "{:?}", gaps(unix));
        let badged = "impl T { /// Doc.\n #[cfg(unix)] #[cfg_attr(docsrs, doc(cfg(unix)))] pub fn f() {} }";
        assert!(gaps(badged).is_empty());
        let std_impl = "#[cfg(feature = \"std\")] impl std::error::Error for CUresult {}";
        assert!(
            gaps(std_impl)[0].contains("impl Error for CUresult"),
            "{:?}",
            gaps(std_impl)
        );
        let std_badged =
            "#[cfg(feature = \"std\")]\n#[cfg_attr(docsrs, doc(cfg(feature = \"std\")))] impl std::error::Error for X {}";
        assert!(gaps(std_badged).is_empty());
        // Both docs.rs targets have the loaders: no badge wanted.
        assert!(gaps("/// Doc.\n #[cfg(any(unix, windows))] pub fn load() {}").is_empty());
    }
}
