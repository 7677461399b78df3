//! The steps of `cargo xtask ci` that build what a user of cuda-mempool-sys builds: the
//! feature-union workspace (a CUDA 12 and a CUDA 13 dependent in one build, and `dynamic-loading`),
//! the cudarc example's conversions against cudarc built for CUDA 11.8, 12.2, 12.6 and 13.0 (the
//! cudarc-versions package), the packaged crate (`cargo publish --dry-run`, then its own tests from the unpacked .crate) and
//! the declared MSRV (the feature-union programs built offline with that toolchain).

use crate::exec::{cargo, run, run_in};
use crate::pins;
use std::path::Path;

/// The test workspace that proves the major features additive (and builds with the MSRV).
pub(super) const FEATURE_UNION: &str = "cuda-mempool-sys/tests/feature-union";

/// The test package of the cudarc example's conversions under each CUDA version feature of cudarc.
pub(super) const CUDARC_VERSIONS: &str = "cuda-mempool-sys/tests/cudarc-versions";

/// Two dependents, one on the crate root (CUDA 12) and one on `cuda13`, in one build; and one
/// program with `dynamic-loading`. Both run: against CI's R535 driver (CUDA 12.2) they print the
/// CUDA 13 selectors as missing.
pub fn feature_union(root: &Path) -> Result<(), String> {
    let dir = root.join(FEATURE_UNION);
    let target = root.join("target/feature-union");
    let target = target.to_str().ok_or("non-UTF-8 target path")?;
    for bin in ["app", "loads", "mixed"] {
        run_in(
            &dir,
            "feature-union workspace",
            &cargo(),
            &["run", "--locked", "--target-dir", target, "-p", bin],
            &[],
        )?;
    }
    Ok(())
}

/// The cudarc-versions package's tests once per CUDA version feature of cudarc it forwards: the
/// example's `result_to_cudarc` compiles against each cudarc enum and maps exactly the codes it
/// names. One target dir for the four runs (only cudarc and the package differ between them).
pub fn cudarc_versions(root: &Path) -> Result<(), String> {
    let dir = root.join(CUDARC_VERSIONS);
    let target = root.join("target/cudarc-versions");
    let target = target.to_str().ok_or("non-UTF-8 target path")?;
    for feature in ["cuda-11080", "cuda-12020", "cuda-12060", "cuda-13000"] {
        run_in(
            &dir,
            &format!("cudarc-versions tests ({feature})"),
            &cargo(),
            &["test", "--locked", "--target-dir", target, "--features", feature],
            &[],
        )?;
    }
    Ok(())
}

/// `cargo publish --dry-run` (what crates.io would accept: manifest, included files, a build of
/// the packaged crate), then `cargo package`, unpacked under target/package-check/, and the
/// crate's own tests and doctests run there, by the lockfile in the .crate: what a user of the
/// published crate builds. The ABI test among them, against the pinned headers.
pub fn package(root: &Path) -> Result<(), String> {
    run(
        root,
        "cargo publish --dry-run",
        &[
            "publish",
            "--dry-run",
            "-p",
            "cuda-mempool-sys",
            "--locked",
            "--allow-dirty",
        ],
        &[],
    )?;
    run(
        root,
        "cargo package",
        &[
            "package",
            "-p",
            "cuda-mempool-sys",
            "--locked",
            "--no-verify",
            "--allow-dirty",
        ],
        &[],
    )?;
    let manifest = std::fs::read_to_string(root.join("cuda-mempool-sys/Cargo.toml")).map_err(|e| e.to_string())?;
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .map(|v| v.trim_end_matches('"'))
        .ok_or("cuda-mempool-sys/Cargo.toml: no version")?;
    let name = format!("cuda-mempool-sys-{version}");
    let check = root.join("target/package-check");
    let unpacked = check.join(&name);
    let _ = std::fs::remove_dir_all(&unpacked);
    std::fs::create_dir_all(&check).map_err(|e| e.to_string())?;
    let crate_file = root.join(format!("target/package/{name}.crate"));
    run_in(
        &check,
        "unpacking the .crate",
        "tar",
        &["-xzf", crate_file.to_str().ok_or("non-UTF-8 path")?],
        &[],
    )?;
    // A fresh target every time: the .crate's files carry cargo's fixed old mtime, so an earlier
    // check's artifacts would look newer than the sources and be reused (a second `cargo xtask ci`
    // after a change to the crate tested the previous build's library).
    let target = check.join("target");
    let _ = std::fs::remove_dir_all(&target);
    let target = target.to_str().ok_or("non-UTF-8 target path")?;
    // The packaged ABI probe compiles against the pinned headers `regen --check` fetched (never
    // packaged), and must run.
    let headers = root.join("target/cuda-headers");
    let headers = headers.to_str().ok_or("non-UTF-8 path")?;
    let envs = [
        ("CARGO_TARGET_DIR", target),
        ("CUDA_MEMPOOL_SYS_REQUIRE_LIBCUDA", "1"),
        ("CUDA_MEMPOOL_HEADERS_DIR", headers),
        ("CUDA_MEMPOOL_REQUIRE_ABI", "1"),
    ];
    for features in [&[][..], &["--all-features"][..]] {
        let mut args = vec!["test", "--locked"];
        args.extend(features);
        run_in(&unpacked, "the packaged crate's tests", &cargo(), &args, &envs)?;
    }
    Ok(())
}

/// The declared `rust-version` builds (and runs) the feature-union programs: cuda-11/12/13, linked
/// and `dynamic-loading`. The toolchain is installed with rustup if missing; Cargo of that age
/// cannot read today's index, so it builds offline from sources vendored by today's Cargo.
pub fn msrv(root: &Path) -> Result<(), String> {
    let manifest = std::fs::read_to_string(root.join("cuda-mempool-sys/Cargo.toml")).map_err(|e| e.to_string())?;
    let msrv = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .map(|v| v.trim_end_matches('"').to_string())
        .ok_or("cuda-mempool-sys/Cargo.toml: no rust-version")?;
    if msrv != format!("1.{}", pins::RUST_TARGET_MINOR) {
        return Err(format!(
            "rust-version {msrv} differs from the generator's rust target 1.{} (xtask/src/pins.rs)",
            pins::RUST_TARGET_MINOR
        ));
    }
    run_in(
        root,
        "installing the MSRV toolchain",
        "rustup",
        &[
            "toolchain",
            "install",
            &msrv,
            "--profile",
            "minimal",
            "--no-self-update",
        ],
        &[],
    )?;
    let dir = root.join(FEATURE_UNION);
    let vendor = root.join("target/feature-union/vendor");
    let vendor = vendor.to_str().ok_or("non-UTF-8 path")?;
    run_in(
        &dir,
        "cargo vendor",
        &cargo(),
        &["vendor", "--locked", "--quiet", vendor],
        &[],
    )?;
    let target = root.join("target/feature-union-msrv");
    let target = target.to_str().ok_or("non-UTF-8 path")?;
    let replace = "source.crates-io.replace-with=\"vendored-sources\"".to_string();
    let directory = format!("source.vendored-sources.directory=\"{vendor}\"");
    for bin in ["app", "loads", "mixed"] {
        run_in(
            &dir,
            &format!("MSRV {msrv} build"),
            "rustup",
            &[
                "run",
                &msrv,
                "cargo",
                "run",
                "--offline",
                "--locked",
                "--config",
                &replace,
                "--config",
                &directory,
                "--target-dir",
                target,
                "-p",
                bin,
            ],
            &[],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The workspace's pages and build scripts outside the crate ask for the crate's version and
    /// name its `DEP_…` keys as its `links` does (the crate's own files: its tests/release.rs).
    #[test]
    fn workspace_names_the_sys_version() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let manifest = std::fs::read_to_string(root.join("cuda-mempool-sys/Cargo.toml")).unwrap();
        let links = manifest
            .lines()
            .find_map(|l| l.strip_prefix("links = \""))
            .map(|v| v.trim_end_matches('"'))
            .unwrap();
        let version = manifest
            .lines()
            .find_map(|l| l.strip_prefix("version = \""))
            .map(|v| v.trim_end_matches('"'))
            .unwrap();
        let mut parts = version.split('.');
        let (major, minor) = (parts.next().unwrap(), parts.next().unwrap());
        let requirement = if major == "0" {
            format!("0.{minor}")
        } else {
            major.to_string()
        };
        let dep = format!("DEP_{}_", links.to_uppercase());
        for file in ["README.md", "docs/guide/bindings.md", "ffi-bench/build.rs"] {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            for (at, _) in text.match_indices("DEP_CUDA_MEMPOOL_SYS_") {
                assert!(text[at..].starts_with(&dep), "{file}: {}", &text[at..at + 40]);
            }
            for l in text.lines().filter(|l| l.contains("cuda-mempool-sys = ")) {
                let asked = l
                    .split("cuda-mempool-sys = \"")
                    .nth(1)
                    .or_else(|| l.split("version = \"").nth(1))
                    .and_then(|r| r.split('"').next());
                assert_eq!(asked, Some(requirement.as_str()), "{file}: {l}");
            }
        }
    }
}
