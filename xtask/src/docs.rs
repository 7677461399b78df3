//! The documentation the generator writes on every bound function and attribute: our own one-line
//! text (fn_docs.rs), the PhOS index for the 14 APIs, the CUDA version of the bound ABI, a link to
//! the function's anchor in NVIDIA's driver API reference, and a `# Safety` section.

use crate::allowlist;
use crate::fn_docs::{FnDoc, FN_DOCS};

const REFERENCE: &str = "https://docs.nvidia.com/cuda/cuda-driver-api";

/// The rule every bound function shares; fn_docs.rs adds what is specific to one.
const GENERIC_SAFETY: &str = "A raw driver call: every pointer argument must be valid for the reads and writes the \
call makes (an output pointer writable for one value of its type), every handle a live object of this process, and \
no other thread may destroy a handle the call uses while it runs.";

fn entry(c_name: &str) -> Result<&'static FnDoc, String> {
    FN_DOCS
        .iter()
        .find(|d| d.name == c_name)
        .ok_or_else(|| format!("xtask/src/fn_docs.rs has no entry for {c_name}: add its one-line doc and anchor"))
}

/// The page (and anchor, when known) of a function in NVIDIA's reference.
pub fn link(d: &FnDoc) -> String {
    if d.anchor.is_empty() {
        format!("{REFERENCE}/group__{}.html", d.group)
    } else {
        format!("{REFERENCE}/group__{g}.html#group__{g}_{}", d.anchor, g = d.group)
    }
}

fn version_text(v: u32) -> String {
    format!("{}.{}", v / 1000, v % 1000 / 10)
}

/// What the docs say of one bound ABI (table.rs's `Abi`, passed in so that this module imports
/// nothing of the generator).
pub struct Bound<'a> {
    /// cuda.h's name (`cuMemAlloc`).
    pub c_name: &'a str,
    /// The CUDA version of the ABI (3020).
    pub version: u32,
    /// Its cudaTypedefs.h typedef (`PFN_cuMemAlloc_v3020`).
    pub pfn: &'a str,
    pub per_thread: bool,
}

/// fn_docs.rs's safety text may say `{value types of PREFIX}`: written here as the value type of
/// each enumerator of this major's header that starts with PREFIX, grouped by type, so that a
/// major's docs name only the attributes its header has.
fn with_value_types(text: &str, value_types: &[(String, String)]) -> Result<String, String> {
    const OPEN: &str = "{value types of ";
    let Some(start) = text.find(OPEN) else {
        return Ok(text.to_string());
    };
    let end = start
        + text[start..]
            .find('}')
            .ok_or("fn_docs.rs: an unclosed {value types of …}")?;
    let prefix = &text[start + OPEN.len()..end];
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (name, ty) in value_types.iter().filter(|(n, _)| n.starts_with(prefix)) {
        let ty = rust_type(ty);
        let short = &name[prefix.len()..];
        match groups.iter_mut().find(|(t, _)| *t == ty) {
            Some((_, names)) => names.push(short),
            None => groups.push((ty, vec![short])),
        }
    }
    if groups.is_empty() {
        return Err(format!("the header names the value type of no {prefix}* enumerator"));
    }
    let list: Vec<String> = groups
        .iter()
        .map(|(ty, names)| format!("{ty} for {}", names.join(", ")))
        .collect();
    Ok(format!("{}{}{}", &text[..start], list.join("; "), &text[end + 1..]))
}

/// The doc lines (without `///`) of the function bound as `symbol`; `note`, when not empty, is a
/// paragraph of its own before `# Safety`. `value_types`: this major's [`value_types`].
pub fn function(
    symbol: &str,
    abi: &Bound,
    note: &str,
    value_types: &[(String, String)],
) -> Result<Vec<String>, String> {
    let d = entry(abi.c_name)?;
    let mut first = d.doc.trim_end_matches('.').to_string();
    if abi.per_thread {
        first.push_str(", with the per-thread default stream as stream 0");
    }
    first.push('.');
    if let Some((_, i)) = allowlist::POOL_APIS.iter().find(|p| p.0 == abi.c_name) {
        first = format!("API {i}: {first}");
    }
    let mut lines = vec![first, String::new()];
    let mut origin = format!(
        "Since CUDA {v}: needs a driver whose `cuDriverGetVersion` is at least {n} (this ABI: cudaTypedefs.h `{}`)",
        abi.pfn,
        v = version_text(abi.version),
        n = abi.version
    );
    if symbol != abi.c_name {
        origin.push_str(&format!("; cuda.h's `{}` is a macro for this symbol", abi.c_name));
    }
    lines.push(format!("{origin}. [NVIDIA: `{}`]({})", abi.c_name, link(d)));
    if !note.is_empty() {
        lines.push(String::new());
        lines.push(note.to_string());
    }
    lines.push(String::new());
    lines.push("# Safety".into());
    lines.push(GENERIC_SAFETY.into());
    if !d.safety.is_empty() {
        lines.push(String::new());
        lines.push(with_value_types(d.safety, value_types)?);
    }
    Ok(lines)
}

/// `(value type = T)` from cuda.h's comment above each enumerator: (enumerator, T).
pub fn value_types(header: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for line in header.lines() {
        let t = line.trim();
        if let Some(rest) = t.split("(value type = ").nth(1) {
            pending = rest.split(')').next().map(|s| s.trim().to_string());
            continue;
        }
        if t.starts_with("*") || t.starts_with("/*") || t.is_empty() {
            continue;
        }
        if let Some(ty) = pending.take() {
            let name: String = t
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.starts_with("CU_") {
                out.push((name, ty));
            }
        }
    }
    out
}

/// The Rust name of a value type cuda.h's comments give.
fn rust_name(c: &str) -> &str {
    match c {
        "int" => "c_int",
        "cuuint64_t" => "u64",
        "unsigned int" => "c_uint",
        other => other,
    }
}

/// A value type as the safety texts write it: `` `u64` (cuda.h `cuuint64_t`) ``.
fn rust_type(c: &str) -> String {
    let rust = rust_name(c);
    if rust == c {
        format!("`{c}`")
    } else {
        format!("`{rust}` (cuda.h `{c}`)")
    }
}

/// The doc line of an enumerator whose cuda.h comment names its value type.
pub fn value_type(c: &str) -> String {
    format!("Value type: {}.", rust_type(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_types_follow_the_header() {
        let cuda12 =
            "    /**\n     * (value type = int)\n     */\n    CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC = 1,\n\
                      /** (value type = cuuint64_t) */\n    CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,\n\
                      /** (value type = cuuint64_t) */\n    CU_MEMPOOL_ATTR_USED_MEM_HIGH,\n";
        let types = value_types(cuda12);
        let text = with_value_types("`value` points to: {value types of CU_MEMPOOL_ATTR_}.", &types).unwrap();
        assert_eq!(
            text,
            "`value` points to: `c_int` (cuda.h `int`) for REUSE_ALLOW_OPPORTUNISTIC; `u64` (cuda.h `cuuint64_t`) \
             for RELEASE_THRESHOLD, USED_MEM_HIGH."
        );
        // An attribute of a newer header is named only in that major's docs.
        let cuda13 = format!("{cuda12}/** (value type = CUmemLocationType) */\n    CU_MEMPOOL_ATTR_LOCATION_TYPE,\n");
        let text13 = with_value_types("{value types of CU_MEMPOOL_ATTR_}", &value_types(&cuda13)).unwrap();
        assert!(text13.ends_with("; `CUmemLocationType` for LOCATION_TYPE"), "{text13}");
        assert!(!text.contains("LOCATION"));
        assert_eq!(with_value_types("no marker", &types).unwrap(), "no marker");
        assert!(with_value_types("{value types of CU_NONE_}", &types).is_err());
    }
}
