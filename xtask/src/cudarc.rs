//! The cudarc example's `CUresult` map (`examples/with_cudarc/results.rs`), and what the
//! cudarc-versions test package expects of it (`tests/cudarc-versions/src/expected.rs`): every
//! code the crate root's header names (CUDA 12.9), as cudarc's enum, for whichever CUDA version
//! feature cudarc is built with.
//!
//! cudarc's `CUresult` is a Rust enum of the codes its own headers name, one enum per group of its
//! `cuda-NNNNN` features (older ones lack codes of CUDA 12.9: `cuda-11080` ten, `cuda-12060`
//! three). The generator reads those enums from cudarc's source, found through `cargo metadata`
//! (the cudarc the workspace's lock file gives cuda-mempool-sys), and names a code some cudarc
//! version lacks through a fallback trait constant (see [`map`]), so the map compiles and is exact
//! under each of them. Codes only a newer header names are left out (cudarc 13.0 lacks five of
//! CUDA 13.5's six) and map to `None`, as the crate's own `CUDA_MEMPOOL_SYS_LOAD_FAILED` does.

use crate::common::{Shared, RESULT};
use crate::exec::cargo;
use crate::pins::{self, Pin};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the map goes, relative to the workspace root.
pub const PATH: &str = "cuda-mempool-sys/examples/with_cudarc/results.rs";

/// Where the test package's expectations go, relative to the workspace root.
pub const EXPECTED_PATH: &str = "cuda-mempool-sys/tests/cudarc-versions/src/expected.rs";

/// The file of cudarc's package that holds its `cudaError_enum`s, relative to its manifest.
const ENUMS: &str = "src/driver/sys/mod.rs";

/// One `cudaError_enum` of cudarc's source: the version features of its `cfg`, and its codes.
struct Enum {
    features: Vec<String>,
    codes: BTreeMap<String, u32>,
}

/// The cudarc package cuda-mempool-sys depends on: its version, source folder and CUDA version
/// features (`cuda-11040`, …, in order).
struct Cudarc {
    version: String,
    dir: PathBuf,
    features: Vec<String>,
}

/// The map's and the expectations' sources (path, text), from the root major's codes (`majors`:
/// every major's pin, CUDA_VERSION and contribution, as regen collects them) and cudarc's enums.
pub fn generate(root: &Path, bindgen: &str, majors: &[(&Pin, u32, Shared)]) -> Result<Vec<(String, String)>, String> {
    let (pin, version, shared) = majors
        .iter()
        .find(|(p, _, _)| p.major == pins::ROOT_MAJOR)
        .ok_or("no headers of the root major")?;
    let mut seen = BTreeSet::new();
    let header: Vec<(u32, &str)> = shared
        .results
        .iter()
        .filter(|(_, value)| seen.insert(*value))
        .map(|(name, value)| {
            u32::try_from(*value)
                .map(|v| (v, name.as_str()))
                .map_err(|_| format!("{name} = {value} is not a u32"))
        })
        .collect::<Result<_, _>>()?;
    if header.is_empty() {
        return Err(format!("the CUDA {} header names no CUresult", pin.major));
    }
    let cudarc = locate(root)?;
    let path = cudarc.dir.join(ENUMS);
    let source = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "cannot read cudarc {}'s {ENUMS} ({}): {e}; the generator reads cudarc's `{RESULT}` enums there \
             (if a newer cudarc moved them, update ENUMS in xtask/src/cudarc.rs)",
            cudarc.version,
            path.display()
        )
    })?;
    let enums = enums(&source, &cudarc)?;
    // For each code of the header, the cudarc versions whose enum lacks it.
    let mut lacking: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for feature in &cudarc.features {
        let e = enums
            .iter()
            .find(|e| e.features.contains(feature))
            .expect("enums() checked every feature");
        for (value, name) in &header {
            match e.codes.get(*name) {
                Some(v) if v == value => {}
                Some(v) => {
                    return Err(format!(
                        "cudarc {}'s {feature} names {name} = {v}, the CUDA {} header = {value}",
                        cudarc.version, pin.major
                    ))
                }
                None => lacking.entry(*name).or_default().push(feature.as_str()),
            }
        }
    }
    let origin = format!(
        "// bindgen {bindgen} (rust_target 1.{}), wrapper.h over cuda.h CUDA_VERSION {version} (pinned: {}=={});\n\
         // cudarc {}'s `CUresult` enums ({ENUMS}, one per group of its CUDA version features).\n",
        pins::RUST_TARGET_MINOR,
        pin.package,
        pin.version,
        cudarc.version,
    );
    Ok(vec![
        (PATH.to_string(), map(&origin, pin.major, &header, &lacking, &cudarc)),
        (EXPECTED_PATH.to_string(), expected(&origin, &header, &lacking, &cudarc)),
    ])
}

/// results.rs: a `match` on the value. A code every cudarc version names is `Some(cu::CUresult::NAME)`;
/// one some version lacks is `cu::CUresult::NAME.into()`, where `NAME` is the enum's variant if the
/// cudarc in the build has it (a path through an enum names its variant; an associated item is looked
/// up only for a name the enum does not have), else the `Fallback` trait's constant of the unit
/// type `Lacking`, which converts to `None`. No `cfg` and no feature of the crate that includes
/// the file: it is right for whichever version feature cudarc is built with, however chosen
/// (`cuda-version-from-build-system` too), and nothing is left to rustc's `unexpected_cfgs`.
fn map(
    origin: &str,
    major: u32,
    header: &[(u32, &str)],
    lacking: &BTreeMap<&str, Vec<&str>>,
    cudarc: &Cudarc,
) -> String {
    let mut consts = String::new();
    let mut arms = String::new();
    for (value, name) in header {
        match lacking.get(name) {
            None => writeln!(arms, "        {value} => Some(cu::CUresult::{name}),").unwrap(),
            Some(versions) => {
                writeln!(
                    consts,
                    "        /// Not in cudarc's {}.\n        const {name}: Lacking = Lacking;",
                    span(versions, &cudarc.features)
                )
                .unwrap();
                writeln!(arms, "        {value} => cu::CUresult::{name}.into(),").unwrap();
            }
        }
    }
    let complete: Vec<&str> = cudarc
        .features
        .iter()
        .map(String::as_str)
        .filter(|f| !lacking.values().any(|l| l.contains(f)))
        .collect();
    let fallback = if lacking.is_empty() {
        // Every cudarc version names every code: nothing to fall back on.
        String::new()
    } else {
        format!(
            "    /// What `cu::CUresult::NAME` is for a code the cudarc in the build lacks: `None`.\n    \
             struct Lacking;\n    \
             impl From<Lacking> for Option<cu::CUresult> {{\n        \
             fn from(_: Lacking) -> Self {{\n            None\n        }}\n    }}\n    \
             /// The codes some cudarc version lacks, each as `Lacking`. A path through the enum names\n    \
             /// its variant where the enum has one; only a name the enum lacks is looked up among the\n    \
             /// associated items, and finds this trait's constant.\n    \
             #[allow(dead_code)] // Unused where the cudarc in the build names every code{}.\n    \
             trait Fallback {{\n{consts}    }}\n    \
             impl Fallback for cu::CUresult {{}}\n",
            if complete.is_empty() {
                String::new()
            } else {
                format!(" ({})", span(&complete, &cudarc.features))
            }
        )
    };
    format!(
        "// @generated by `cargo xtask regen`: the cudarc example's CUresult map. Do not edit by hand; edit xtask/ and regenerate.\n\
         {origin}\
         // Included by interop.rs beside this file.\n\n\
         /// This crate's `CUresult` as cudarc's, for each of the {count} codes the CUDA {major} header of the crate\n\
         /// root names (written by `cargo xtask regen` from it and from cudarc's source): cudarc's enum\n\
         /// holds only the codes its CUDA version feature's headers name, so a code the cudarc in the\n\
         /// build lacks ({lacks}), a code only a\n\
         /// newer header names, or the crate's own `CUDA_MEMPOOL_SYS_LOAD_FAILED`, is `None`. Right for\n\
         /// whichever CUDA version feature cudarc is built with, however it is chosen: the crate that\n\
         /// includes this file needs no feature or `cfg` of its own. (`CUdeviceptr` and `CUdevice` need\n\
         /// no conversion: both crates alias the same integers.)\n\
         pub fn result_to_cudarc(r: sys::CUresult) -> Option<cu::CUresult> {{\n\
         {fallback}    \
         match r.0 {{\n{arms}        _ => None,\n    }}\n}}\n",
        count = header.len(),
        lacks = if lacking.is_empty() {
            format!("none in cudarc {}", cudarc.version)
        } else {
            format!("its older versions lack up to {} of these: `Fallback` below", lacking.len())
        },
    )
}

/// expected.rs: the header's codes, and for every CUDA version feature of cudarc how many of them
/// its enum names and which it lacks.
fn expected(origin: &str, header: &[(u32, &str)], lacking: &BTreeMap<&str, Vec<&str>>, cudarc: &Cudarc) -> String {
    let mut out = format!(
        "// @generated by `cargo xtask regen`: what the cudarc-versions tests expect of the cudarc example's CUresult map. Do not edit by hand; edit xtask/ and regenerate.\n\
         {origin}\n\
         /// The cudarc whose enums these are (this package's Cargo.lock must pin the same).\n\
         pub const CUDARC: &str = \"{}\";\n\n\
         /// The codes the crate root's header names (value, name): what `result_to_cudarc` maps.\n\
         pub const HEADER: &[(u32, &str)] = &[\n",
        cudarc.version
    );
    for (value, name) in header {
        writeln!(out, "    ({value}, \"{name}\"),").unwrap();
    }
    out.push_str(
        "];\n\n\
         /// Each CUDA version feature of cudarc: how many codes of `HEADER` its `CUresult` names, and\n\
         /// the ones it lacks.\n\
         pub const VERSIONS: &[(&str, usize, &[&str])] = &[\n",
    );
    for feature in &cudarc.features {
        let lacks: Vec<&str> = header
            .iter()
            .map(|(_, n)| *n)
            .filter(|n| lacking.get(n).is_some_and(|l| l.contains(&feature.as_str())))
            .collect();
        let list: String = lacks.iter().map(|n| format!("\n        \"{n}\",")).collect();
        let close = if lacks.is_empty() { "" } else { "\n    " };
        writeln!(
            out,
            "    (\"{feature}\", {}, &[{list}{close}]),",
            header.len() - lacks.len()
        )
        .unwrap();
    }
    out.push_str("];\n");
    out
}

/// `of` (a subset of `all`, in its order) in few words: `cuda-11040 to cuda-12060` for a run of
/// `all`, `cuda-12080 and later` for a run to its end, else each named.
fn span(of: &[&str], all: &[String]) -> String {
    let at = |f: &str| all.iter().position(|a| a == f);
    let (Some(first), Some(last)) = (of.first().and_then(|f| at(f)), of.last().and_then(|f| at(f))) else {
        return String::new();
    };
    if last - first + 1 != of.len() || of.len() < 3 {
        return of.join(", ");
    }
    if last + 1 == all.len() {
        format!("{} and later", all[first])
    } else {
        format!("{} to {}", all[first], all[last])
    }
}

/// The cudarc that cuda-mempool-sys's dev-dependency resolves to, by `cargo metadata` (offline,
/// by the lock file, for the host only: the other platforms' packages need not be downloaded).
fn locate(root: &Path) -> Result<Cudarc, String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let vv = Command::new(&rustc)
        .arg("-vV")
        .output()
        .map_err(|e| format!("cannot run {rustc} -vV: {e}"))?;
    let vv = String::from_utf8_lossy(&vv.stdout);
    let host = vv
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .ok_or("`rustc -vV` names no host")?;
    let args = [
        "metadata",
        "--format-version",
        "1",
        "--locked",
        "--offline",
        "--filter-platform",
        host,
    ];
    let out = Command::new(cargo())
        .args(args)
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    let fetch = "the generator reads cudarc's source (a dev-dependency of cuda-mempool-sys) where Cargo \
                 unpacked it: run `cargo fetch --locked` (needs the network), then `cargo xtask regen` again";
    if !out.status.success() {
        return Err(format!(
            "`cargo {}` failed:\n{}\n{fetch}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let meta: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata's output: {e}"))?;
    let packages = meta["packages"].as_array().ok_or("cargo metadata: no packages")?;
    let id_of = |name: &str| {
        packages
            .iter()
            .find(|p| p["name"] == name && p["source"].is_null())
            .and_then(|p| p["id"].as_str())
    };
    let sys = id_of("cuda-mempool-sys").ok_or("cargo metadata: no cuda-mempool-sys in the workspace")?;
    let cudarc_id = meta["resolve"]["nodes"]
        .as_array()
        .and_then(|nodes| nodes.iter().find(|n| n["id"] == sys))
        .and_then(|n| n["deps"].as_array())
        .and_then(|deps| deps.iter().find(|d| d["name"] == "cudarc"))
        .and_then(|d| d["pkg"].as_str())
        .ok_or_else(|| {
            format!("cargo metadata: cuda-mempool-sys depends on no cudarc (its dev-dependency); {fetch}")
        })?;
    let package = packages
        .iter()
        .find(|p| p["id"] == cudarc_id)
        .ok_or("cargo metadata: cudarc's package is not listed")?;
    let manifest = package["manifest_path"]
        .as_str()
        .ok_or("cargo metadata: cudarc has no manifest_path")?;
    let mut features: Vec<String> = package["features"]
        .as_object()
        .ok_or("cargo metadata: cudarc has no features")?
        .keys()
        .filter(|f| {
            f.strip_prefix("cuda-")
                .is_some_and(|v| v.len() == 5 && v.bytes().all(|b| b.is_ascii_digit()))
        })
        .cloned()
        .collect();
    features.sort();
    let version = package["version"].as_str().unwrap_or("?").to_string();
    if features.is_empty() {
        return Err(format!("cudarc {version} has no cuda-NNNNN feature"));
    }
    let dir = Path::new(manifest)
        .parent()
        .ok_or("cudarc's manifest_path has no folder")?
        .to_path_buf();
    if !dir.join(ENUMS).is_file() {
        return Err(format!(
            "cudarc {version}'s source has no {ENUMS} (in {}): {fetch}",
            dir.display()
        ));
    }
    Ok(Cudarc { version, dir, features })
}

/// Every `pub enum cudaError_enum` of cudarc's `source`, with its `#[cfg(any(feature = "cuda-…", …))]`;
/// each CUDA version feature of `cudarc` must select exactly one.
fn enums(source: &str, cudarc: &Cudarc) -> Result<Vec<Enum>, String> {
    let where_ = format!("cudarc {}'s {ENUMS}", cudarc.version);
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with(&format!("pub enum {RESULT} ")) {
            continue;
        }
        // The enum's attributes, then the enum to its closing brace (no brace inside).
        let mut start = i;
        while start > 0 && lines[start - 1].trim_start().starts_with("#[") {
            start -= 1;
        }
        let end = (i..lines.len())
            .find(|&j| lines[j].trim() == "}")
            .ok_or_else(|| format!("{where_}: line {}: `{RESULT}` does not end", i + 1))?;
        let text = lines[start..=end].join("\n");
        let item: syn::ItemEnum =
            syn::parse_str(&text).map_err(|e| format!("{where_}: line {}: not an enum: {e}", i + 1))?;
        let mut features = Vec::new();
        for attr in item.attrs.iter().filter(|a| a.path().is_ident("cfg")) {
            attr.parse_nested_meta(|any| {
                if !any.path.is_ident("any") {
                    return Err(any.error("expected `any(feature = \"…\", …)`"));
                }
                any.parse_nested_meta(|f| {
                    if !f.path.is_ident("feature") {
                        return Err(f.error("expected `feature = \"…\"`"));
                    }
                    features.push(f.value()?.parse::<syn::LitStr>()?.value());
                    Ok(())
                })
            })
            .map_err(|e| format!("{where_}: line {}: the cfg of `{RESULT}`: {e}", start + 1))?;
        }
        if features.is_empty() {
            return Err(format!(
                "{where_}: line {}: a `{RESULT}` under no version feature",
                i + 1
            ));
        }
        let mut codes = BTreeMap::new();
        for v in &item.variants {
            let value = match &v.discriminant {
                Some((
                    _,
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(n), ..
                    }),
                )) => n.base10_parse::<u32>().ok(),
                _ => None,
            }
            .ok_or_else(|| format!("{where_}: line {}: {} has no integer value", i + 1, v.ident))?;
            codes.insert(v.ident.to_string(), value);
        }
        found.push(Enum { features, codes });
    }
    for feature in &cudarc.features {
        let n = found.iter().filter(|e| e.features.contains(feature)).count();
        if n != 1 {
            return Err(format!(
                "{where_}: {n} `{RESULT}` enums under cudarc's feature {feature}, not one; \
                 if cudarc changed how it lays them out, update xtask/src/cudarc.rs"
            ));
        }
    }
    if let Some(other) = found
        .iter()
        .flat_map(|e| &e.features)
        .find(|f| !cudarc.features.contains(f))
    {
        return Err(format!(
            "{where_}: a `{RESULT}` under {other}, which is not a feature of cudarc"
        ));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::span;

    #[test]
    fn spans() {
        let all: Vec<String> = ["a", "b", "c", "d", "e"].iter().map(|s| s.to_string()).collect();
        assert_eq!(span(&["a", "b", "c"], &all), "a to c");
        assert_eq!(span(&["c", "d", "e"], &all), "c and later");
        assert_eq!(span(&["a", "c", "d"], &all), "a, c, d");
        assert_eq!(span(&["a", "b"], &all), "a, b");
        assert_eq!(span(&["e"], &all), "e");
    }
}
