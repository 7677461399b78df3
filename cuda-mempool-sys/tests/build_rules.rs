//! build.rs's rules, run on made-up directories: stubs strictly last (even where pkg-config points
//! at them), always flagged, no host directories when cross-compiling, and Windows (cuda.lib in a
//! toolkit's lib/x64; without one, one message natively and `cuda` by name when cross-compiling).

#[allow(dead_code)]
#[path = "../build.rs"]
mod build_script;

use build_script::{decide, Decision, Target};
use std::path::{Path, PathBuf};

/// A scratch tree, removed when dropped.
struct Tree(PathBuf);
impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
impl std::ops::Deref for Tree {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

/// A scratch tree: `real/libcuda.so`, `toolkit/lib64/stubs/libcuda.so`, `other/` (empty).
fn tree(name: &str) -> Tree {
    let base = std::env::temp_dir().join(format!("cuda-mempool-sys-build-rules-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    for d in ["real", "toolkit/lib64/stubs", "other"] {
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
    std::fs::write(base.join("real/libcuda.so"), b"").unwrap();
    std::fs::write(base.join("toolkit/lib64/stubs/libcuda.so"), b"").unwrap();
    Tree(base)
}

fn target(base: &Path, cross: bool, usual: &[&str]) -> Target {
    Target {
        triple: if cross {
            "aarch64-unknown-linux-gnu"
        } else {
            "x86_64-unknown-linux-gnu"
        }
        .into(),
        cross,
        os: "linux".into(),
        arch: if cross { "aarch64" } else { "x86_64" }.into(),
        usual_dirs: usual.iter().map(|d| base.join(d)).collect(),
        usual_stub_dirs: vec![],
    }
}

fn no_vars(_: &str) -> Option<(String, String)> {
    None
}

#[test]
fn pkg_config_stubs_lose_to_a_real_library() {
    let base = tree("pkg");
    let stubs = base.join("toolkit/lib64/stubs");
    let pc = |name: &str| (name == "cuda-12.2").then(|| vec![stubs.clone()]);
    let d = decide(&target(&base, false, &["other", "real"]), &[12], false, &no_vars, &pc).unwrap();
    assert_eq!(
        d,
        Decision::Link {
            dir: base.join("real"),
            rule: format!("4: {}", base.join("real").display()),
            stub: false
        }
    );
}

#[test]
fn stubs_are_last_and_flagged() {
    let base = tree("last");
    let stubs = base.join("toolkit/lib64/stubs");
    let pc = |name: &str| (name == "cuda-12.2").then(|| vec![stubs.clone()]);
    let d = decide(&target(&base, false, &["other"]), &[12], false, &no_vars, &pc).unwrap();
    assert_eq!(
        d,
        Decision::Link {
            dir: stubs.clone(),
            rule: "5: stub library, found by 3: pkg-config cuda-12.2".into(),
            stub: true
        }
    );
    // A toolkit root's stubs/ too.
    let root = base.join("toolkit").display().to_string();
    let vars = |n: &str| (n == "CUDA_PATH").then(|| ("CUDA_PATH".to_string(), root.clone()));
    let d = decide(&target(&base, false, &["real"]), &[12], false, &vars, &|_: &str| None).unwrap();
    assert!(
        matches!(d, Decision::Link { stub: false, ref dir, .. } if dir == &base.join("real")),
        "{d:?}"
    );
    let d = decide(&target(&base, false, &[]), &[12], false, &vars, &|_: &str| None).unwrap();
    assert!(
        matches!(d, Decision::Link { stub: true, ref rule, .. } if rule == "5: stub library, found by 2: CUDA_PATH"),
        "{d:?}"
    );
}

#[test]
fn own_variable_is_authoritative_but_a_stub_is_flagged() {
    let base = tree("own");
    let stubs = base.join("toolkit/lib64/stubs").display().to_string();
    let vars = |n: &str| (n == "CUDA_MEMPOOL_SYS_LIB_DIR").then(|| (n.to_string(), stubs.clone()));
    let d = decide(&target(&base, false, &["real"]), &[12], false, &vars, &|_: &str| None).unwrap();
    assert!(
        matches!(d, Decision::Link { stub: true, ref rule, .. } if rule == "1: CUDA_MEMPOOL_SYS_LIB_DIR"),
        "{d:?}"
    );
    let other = base.join("other").display().to_string();
    let vars = |n: &str| (n == "CUDA_MEMPOOL_SYS_LIB_DIR").then(|| (n.to_string(), other.clone()));
    let e = decide(&target(&base, false, &["real"]), &[12], false, &vars, &|_: &str| None).unwrap_err();
    assert!(e.contains("holds no libcuda.so"), "{e}");
}

#[test]
fn cross_compiling_skips_host_directories() {
    let base = tree("cross");
    let e = decide(&target(&base, true, &["real"]), &[12], false, &no_vars, &|_: &str| None).unwrap_err();
    assert!(
        e.contains("no system directories: cross-compiling for aarch64-unknown-linux-gnu"),
        "{e}"
    );
    // A toolkit root: only targets/<arch>/lib/ of the target's architecture.
    std::fs::create_dir_all(base.join("toolkit/targets/sbsa-linux/lib")).unwrap();
    std::fs::write(base.join("toolkit/targets/sbsa-linux/lib/libcuda.so"), b"").unwrap();
    std::fs::write(base.join("toolkit/lib64/libcuda.so"), b"").unwrap();
    let root = base.join("toolkit").display().to_string();
    let vars = |n: &str| (n == "CUDA_PATH").then(|| ("AARCH64_UNKNOWN_LINUX_GNU_CUDA_PATH".to_string(), root.clone()));
    let d = decide(&target(&base, true, &["real"]), &[12], false, &vars, &|_: &str| None).unwrap();
    assert_eq!(
        d,
        Decision::Link {
            dir: base.join("toolkit/targets/sbsa-linux/lib"),
            rule: "2: AARCH64_UNKNOWN_LINUX_GNU_CUDA_PATH".into(),
            stub: false
        }
    );
}

#[test]
fn nothing_linked_when_asked() {
    let base = tree("none");
    let t = target(&base, false, &["real"]);
    let d = decide(&t, &[12], true, &no_vars, &|_: &str| None).unwrap();
    assert_eq!(
        d,
        Decision::NoLink {
            why: "feature dynamic-loading".into()
        }
    );
    let vars = |n: &str| (n == "CUDA_MEMPOOL_SYS_NO_LINK").then(|| (n.to_string(), "1".to_string()));
    assert!(matches!(
        decide(&t, &[12], false, &vars, &|_: &str| None).unwrap(),
        Decision::NoLink { .. }
    ));
}

fn windows_target(cross: bool) -> Target {
    Target {
        triple: "x86_64-pc-windows-msvc".into(),
        cross,
        os: "windows".into(),
        arch: "x86_64".into(),
        usual_dirs: vec![],
        usual_stub_dirs: vec![],
    }
}

#[test]
fn windows_finds_cuda_lib_under_the_toolkit() {
    let base = tree("win");
    std::fs::create_dir_all(base.join("toolkit/lib/x64")).unwrap();
    std::fs::write(base.join("toolkit/lib/x64/cuda.lib"), b"").unwrap();
    let root = base.join("toolkit").display().to_string();
    let vars = |n: &str| (n == "CUDA_PATH").then(|| ("CUDA_PATH".to_string(), root.clone()));
    // Native or cross: the toolkit's lib/x64 is the Windows layout either way.
    for cross in [false, true] {
        let d = decide(&windows_target(cross), &[12], false, &vars, &|_: &str| None).unwrap();
        assert_eq!(
            d,
            Decision::Link {
                dir: base.join("toolkit/lib/x64"),
                rule: "2: CUDA_PATH".into(),
                stub: false
            }
        );
    }
}

#[test]
fn windows_without_a_toolkit() {
    let base = tree("win-none");
    // A Linux toolkit's libraries are no Windows import library.
    let root = base.join("toolkit").display().to_string();
    let vars = |n: &str| (n == "CUDA_PATH").then(|| ("CUDA_PATH".to_string(), root.clone()));
    // Native: one message, Windows advice only.
    let e = decide(&windows_target(false), &[12], false, &vars, &|_: &str| None).unwrap_err();
    assert!(e.starts_with("cannot find cuda.lib"), "{e}");
    assert!(e.contains("install the CUDA toolkit"), "{e}");
    assert!(e.contains("dynamic-loading"), "{e}");
    assert!(
        e.contains(&base.join("toolkit").join("lib").join("x64").display().to_string()),
        "{e}"
    );
    assert!(!e.contains("Debian") && !e.contains("libcuda.so"), "{e}");
    // Cross-compiling: `cuda` by name, with a warning, so `cargo check` needs no toolkit.
    let d = decide(&windows_target(true), &[12], false, &vars, &|_: &str| None).unwrap();
    assert!(
        matches!(&d, Decision::LinkByName { rule, warning } if rule.starts_with("6: ") && warning.contains("dynamic-loading")),
        "{d:?}"
    );
    // dynamic-loading: nothing at all.
    let d = decide(&windows_target(true), &[12], true, &vars, &|_: &str| None).unwrap();
    assert!(matches!(d, Decision::NoLink { .. }), "{d:?}");
}
