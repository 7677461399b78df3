//! Which ABI each entry of the table is resolved at: the one `PFN_<name>_v<N>[_ptsz]` typedef of
//! cudaTypedefs.h that the C compiler finds compatible with cuda.h's declaration (and that the
//! `PFN_<name>` macro names, where the header still has it), its CUDA version and per-thread flag.

use std::collections::{BTreeMap, BTreeSet};

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
/// (CUDA 11 and 12 do; CUDA 13 dropped the macros); it must name the same typedef, or a newer one
/// that the bound symbol does not match: the macro then follows a newer symbol of the same C name
/// (12.5 added `cuStreamGetCtx_v2`, and `PFN_cuStreamGetCtx` names its `_v12050` while cuda.h's
/// `cuStreamGetCtx` is still the `_v9020` function), and the entry keeps its own symbol's ABI:
/// `cuGetProcAddress` asked at that version returns that function.
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
            ([one], Some(m)) if all.contains(&m.as_str()) && version(m) > version(one) => (*one).clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn one(c: &str, candidates: &[(&str, bool)], macro_to: Option<&str>) -> Result<u32, String> {
        let key = (c.to_string(), false);
        let compatible = BTreeMap::from([(
            key.clone(),
            candidates.iter().map(|(t, ok)| (t.to_string(), *ok)).collect(),
        )]);
        let macros = macro_to.map(|m| (key.clone(), m.to_string())).into_iter().collect();
        abi_versions(&compatible, &macros).map(|m| m[&key].version)
    }

    #[test]
    fn the_bound_symbol_decides() {
        // The macro names the one compatible typedef.
        let both = [("PFN_cuMemAlloc_v2000", false), ("PFN_cuMemAlloc_v3020", true)];
        assert_eq!(one("cuMemAlloc", &both, Some("PFN_cuMemAlloc_v3020")), Ok(3020));
        // The macro follows a newer symbol of the name (cuStreamGetCtx_v2): the bound one keeps its ABI.
        let ctx = [("PFN_cuStreamGetCtx_v12050", false), ("PFN_cuStreamGetCtx_v9020", true)];
        assert_eq!(one("cuStreamGetCtx", &ctx, Some("PFN_cuStreamGetCtx_v12050")), Ok(9020));
        assert_eq!(one("cuStreamGetCtx", &ctx, None), Ok(9020));
        // A macro naming an older ABI than the declaration's, or none matching: refused.
        let old = [("PFN_cuX_v2000", false), ("PFN_cuX_v3020", true)];
        assert!(one("cuX", &old, Some("PFN_cuX_v2000")).is_err());
        assert!(one("cuX", &[("PFN_cuX_v2000", false)], None).is_err());
    }
}
