//! build.rs's rules, run on made-up directories: stubs strictly last (even where pkg-config points
//! at them), always flagged, no host directories when cross-compiling, and Windows (cuda.lib in a
//! toolkit's lib/x64; without one, one message natively and `cuda` by name when cross-compiling);
//! pkg-config probed only for the packages it lists, in order, stopping at the first real library;
//! every DEP_ key in every case; the link's private search directory. (`links` and the DEP_ names
//! following the version: tests/release.rs.)

#[allow(dead_code)]
#[path = "../build.rs"]
mod build_script;

use build_script::{decide, link_dir, metadata, pkg_config_candidates, pkg_config_names, Decision, PkgConfig, Target};
use std::cell::{Cell, RefCell};
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

fn lists_nothing() -> Result<Vec<String>, String> {
    Ok(Vec::new())
}
fn no_paths(_: &str) -> Option<Vec<PathBuf>> {
    None
}
/// pkg-config that knows no package.
const NO_PC: PkgConfig<'static> = PkgConfig {
    list: &lists_nothing,
    link_paths: &no_paths,
};

fn lists_cuda_12_2() -> Result<Vec<String>, String> {
    Ok(vec!["zlib".into(), "cuda-12.2".into()])
}

#[test]
fn pkg_config_stubs_lose_to_a_real_library() {
    let base = tree("pkg");
    let stubs = base.join("toolkit/lib64/stubs");
    let pc = |name: &str| (name == "cuda-12.2").then(|| vec![stubs.clone()]);
    let pc = PkgConfig {
        list: &lists_cuda_12_2,
        link_paths: &pc,
    };
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
    let pc = PkgConfig {
        list: &lists_cuda_12_2,
        link_paths: &pc,
    };
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
    let d = decide(&target(&base, false, &["real"]), &[12], false, &vars, &NO_PC).unwrap();
    assert!(
        matches!(d, Decision::Link { stub: false, ref dir, .. } if dir == &base.join("real")),
        "{d:?}"
    );
    let d = decide(&target(&base, false, &[]), &[12], false, &vars, &NO_PC).unwrap();
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
    let d = decide(&target(&base, false, &["real"]), &[12], false, &vars, &NO_PC).unwrap();
    assert!(
        matches!(d, Decision::Link { stub: true, ref rule, .. } if rule == "1: CUDA_MEMPOOL_SYS_LIB_DIR"),
        "{d:?}"
    );
    let other = base.join("other").display().to_string();
    let vars = |n: &str| (n == "CUDA_MEMPOOL_SYS_LIB_DIR").then(|| (n.to_string(), other.clone()));
    let e = decide(&target(&base, false, &["real"]), &[12], false, &vars, &NO_PC).unwrap_err();
    assert!(e.contains("holds no libcuda.so"), "{e}");
}

#[test]
fn cross_compiling_skips_host_directories() {
    let base = tree("cross");
    let e = decide(&target(&base, true, &["real"]), &[12], false, &no_vars, &NO_PC).unwrap_err();
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
    let d = decide(&target(&base, true, &["real"]), &[12], false, &vars, &NO_PC).unwrap();
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
    let d = decide(&t, &[12], true, &no_vars, &NO_PC).unwrap();
    assert_eq!(
        d,
        Decision::NoLink {
            rule: "none (dynamic-loading)".into()
        }
    );
    let vars = |n: &str| (n == "CUDA_MEMPOOL_SYS_NO_LINK").then(|| (n.to_string(), "1".to_string()));
    assert_eq!(
        decide(&t, &[12], false, &vars, &NO_PC).unwrap(),
        Decision::NoLink {
            rule: "none (CUDA_MEMPOOL_SYS_NO_LINK=1)".into()
        }
    );
    // The name it was read from, target prefix included.
    let vars = |n: &str| {
        (n == "CUDA_MEMPOOL_SYS_NO_LINK")
            .then(|| ("X86_64_UNKNOWN_LINUX_GNU_CUDA_MEMPOOL_SYS_NO_LINK".into(), "yes".into()))
    };
    assert_eq!(
        decide(&t, &[12], false, &vars, &NO_PC).unwrap(),
        Decision::NoLink {
            rule: "none (X86_64_UNKNOWN_LINUX_GNU_CUDA_MEMPOOL_SYS_NO_LINK=yes)".into()
        }
    );
    let vars = |n: &str| (n == "DOCS_RS").then(|| (n.to_string(), "1".to_string()));
    assert_eq!(
        decide(&t, &[12], false, &vars, &NO_PC).unwrap(),
        Decision::NoLink {
            rule: "none (docs.rs)".into()
        }
    );
    // CUDA_MEMPOOL_SYS_NO_LINK=0 links.
    let vars = |n: &str| (n == "CUDA_MEMPOOL_SYS_NO_LINK").then(|| (n.to_string(), "0".to_string()));
    assert!(matches!(
        decide(&t, &[12], false, &vars, &NO_PC).unwrap(),
        Decision::Link { .. }
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
        let d = decide(&windows_target(cross), &[12], false, &vars, &NO_PC).unwrap();
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
    let e = decide(&windows_target(false), &[12], false, &vars, &NO_PC).unwrap_err();
    assert!(e.starts_with("cannot find cuda.lib"), "{e}");
    assert!(e.contains("install the CUDA toolkit"), "{e}");
    assert!(e.contains("dynamic-loading"), "{e}");
    assert!(
        e.contains(&base.join("toolkit").join("lib").join("x64").display().to_string()),
        "{e}"
    );
    assert!(!e.contains("Debian") && !e.contains("libcuda.so"), "{e}");
    // Cross-compiling: `cuda` by name, with a warning, so `cargo check` needs no toolkit.
    let d = decide(&windows_target(true), &[12], false, &vars, &NO_PC).unwrap();
    assert!(
        matches!(&d, Decision::LinkByName { rule, warning } if rule.starts_with("6: ") && warning.contains("dynamic-loading")),
        "{d:?}"
    );
    // dynamic-loading: nothing at all.
    let d = decide(&windows_target(true), &[12], true, &vars, &NO_PC).unwrap();
    assert!(matches!(d, Decision::NoLink { .. }), "{d:?}");
}

/// pkg-config that lists `listed`, records every probe, and answers `answers` for a probed name.
struct FakePkgConfig {
    listed: Result<Vec<String>, String>,
    answers: Vec<(String, PathBuf)>,
    lists: Cell<u32>,
    probed: RefCell<Vec<String>>,
}

impl FakePkgConfig {
    fn new(listed: &[&str], answers: &[(&str, PathBuf)]) -> FakePkgConfig {
        FakePkgConfig {
            listed: Ok(listed.iter().map(|n| n.to_string()).collect()),
            answers: answers.iter().map(|(n, d)| (n.to_string(), d.clone())).collect(),
            lists: Cell::new(0),
            probed: RefCell::new(Vec::new()),
        }
    }
    fn decide(
        &self,
        t: &Target,
        majors: &[u32],
        var: &dyn Fn(&str) -> Option<(String, String)>,
    ) -> Result<Decision, String> {
        let list = || {
            self.lists.set(self.lists.get() + 1);
            self.listed.clone()
        };
        let link_paths = |name: &str| {
            self.probed.borrow_mut().push(name.to_string());
            let dirs: Vec<PathBuf> = self
                .answers
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, d)| d.clone())
                .collect();
            (!dirs.is_empty()).then_some(dirs)
        };
        decide(
            t,
            majors,
            false,
            var,
            &PkgConfig {
                list: &list,
                link_paths: &link_paths,
            },
        )
    }
    fn probed(&self) -> Vec<String> {
        self.probed.borrow().clone()
    }
}

const LISTED: &[&str] = &[
    "zlib",
    "cuda-12.2",
    "cudart-12.2",
    "cuda-12.10",
    "cuda-11.8",
    "cuda-13.0",
    "cuda-12.x",
    "cuda-12",
    "cuda",
];

#[test]
fn pkg_config_candidates_are_the_listed_packages_of_the_enabled_majors() {
    let listed: Vec<String> = LISTED.iter().map(|n| n.to_string()).collect();
    assert_eq!(
        pkg_config_candidates(&listed, &[12]),
        ["cuda-12.10", "cuda-12.2", "cuda"]
    );
    assert_eq!(
        pkg_config_candidates(&listed, &[13, 12, 11]),
        ["cuda-13.0", "cuda-12.10", "cuda-12.2", "cuda-11.8", "cuda"]
    );
    assert!(pkg_config_candidates(&["zlib".to_string()], &[12]).is_empty());
    assert_eq!(
        pkg_config_names("zlib    zlib - zlib compression library\ncuda-12.4     cuda - CUDA Driver Library\n\n"),
        ["zlib", "cuda-12.4"]
    );
}

#[test]
fn pkg_config_probes_only_listed_packages_until_a_real_library() {
    let base = tree("pc-order");
    let t = target(&base, false, &[]);
    // Nothing real anywhere: every listed candidate is probed once, newest first, `cuda` last;
    // nothing that is not listed.
    let pc = FakePkgConfig::new(LISTED, &[("cuda-12.2", base.join("other"))]);
    let e = pc.decide(&t, &[13, 12], &no_vars).unwrap_err();
    assert_eq!(pc.probed(), ["cuda-13.0", "cuda-12.10", "cuda-12.2", "cuda"]);
    assert_eq!(pc.lists.get(), 1);
    assert!(
        e.contains("pkg-config cuda-13.0, cuda-12.10, cuda-12.2, cuda (no library of theirs)"),
        "{e}"
    );
    // The first package with a real library wins; nothing after it is probed.
    let pc = FakePkgConfig::new(
        LISTED,
        &[
            ("cuda-12.10", base.join("other")),
            ("cuda-12.2", base.join("real")),
            ("cuda", base.join("real")),
        ],
    );
    let d = pc.decide(&t, &[12], &no_vars).unwrap();
    assert_eq!(
        d,
        Decision::Link {
            dir: base.join("real"),
            rule: "3: pkg-config cuda-12.2".into(),
            stub: false
        }
    );
    assert_eq!(pc.probed(), ["cuda-12.10", "cuda-12.2"]);
    // A package that points at stubs is remembered and probing goes on.
    let pc = FakePkgConfig::new(
        LISTED,
        &[
            ("cuda-12.10", base.join("toolkit/lib64/stubs")),
            ("cuda", base.join("real")),
        ],
    );
    let d = pc.decide(&t, &[12], &no_vars).unwrap();
    assert!(
        matches!(&d, Decision::Link { rule, stub: false, .. } if rule == "3: pkg-config cuda"),
        "{d:?}"
    );
    assert_eq!(pc.probed(), ["cuda-12.10", "cuda-12.2", "cuda"]);
}

#[test]
fn pkg_config_listing_nothing_or_failing_probes_nothing() {
    let base = tree("pc-none");
    let t = target(&base, false, &["real"]);
    let pc = FakePkgConfig::new(&["zlib", "cudart-12.2", "cuda-11.8"], &[]);
    let d = pc.decide(&t, &[12], &no_vars).unwrap();
    assert!(
        matches!(&d, Decision::Link { rule, .. } if rule.starts_with("4: ")),
        "{d:?}"
    );
    assert!(pc.probed().is_empty(), "{:?}", pc.probed());
    let e = pc.decide(&target(&base, false, &[]), &[12], &no_vars).unwrap_err();
    assert!(e.contains("pkg-config: lists no cuda-12.*, cuda"), "{e}");
    let mut pc = FakePkgConfig::new(&["cuda"], &[("cuda", base.join("real"))]);
    pc.listed = Err("cannot run pkg-config: not found".into());
    let e = pc.decide(&target(&base, false, &[]), &[12], &no_vars).unwrap_err();
    assert!(pc.probed().is_empty(), "{:?}", pc.probed());
    assert!(e.contains("pkg-config: cannot run pkg-config: not found"), "{e}");
}

#[test]
fn pkg_config_is_not_asked_when_an_earlier_rule_decides() {
    let base = tree("pc-late");
    let t = target(&base, false, &["real"]);
    let pc = FakePkgConfig::new(LISTED, &[("cuda", base.join("real"))]);
    let real = base.join("real").display().to_string();
    let own = |n: &str| (n == "CUDA_MEMPOOL_SYS_LIB_DIR").then(|| (n.to_string(), real.clone()));
    assert!(matches!(pc.decide(&t, &[12], &own).unwrap(), Decision::Link { .. }));
    let no_link = |n: &str| (n == "CUDA_MEMPOOL_SYS_NO_LINK").then(|| (n.to_string(), "1".to_string()));
    assert!(matches!(
        pc.decide(&t, &[12], &no_link).unwrap(),
        Decision::NoLink { .. }
    ));
    assert_eq!(pc.lists.get(), 0);
    assert!(pc.probed().is_empty());
}

#[test]
fn every_dep_key_in_every_case() {
    let keys = ["rule", "lib_dir", "stub", "cuda_majors", "dynamic_loading"];
    let cases = [
        (
            Decision::Link {
                dir: PathBuf::from("/usr/lib/x86_64-linux-gnu"),
                rule: "4: /usr/lib/x86_64-linux-gnu".into(),
                stub: false,
            },
            false,
            [
                "4: /usr/lib/x86_64-linux-gnu",
                "/usr/lib/x86_64-linux-gnu",
                "0",
                "12,13",
                "0",
            ],
        ),
        (
            Decision::Link {
                dir: PathBuf::from("/usr/local/cuda/lib64/stubs"),
                rule: "5: stub library, found by toolkit stubs/".into(),
                stub: true,
            },
            false,
            [
                "5: stub library, found by toolkit stubs/",
                "/usr/local/cuda/lib64/stubs",
                "1",
                "12,13",
                "0",
            ],
        ),
        (
            Decision::LinkByName {
                rule: "6: cross".into(),
                warning: "w".into(),
            },
            false,
            ["6: cross", "", "0", "12,13", "0"],
        ),
        (
            Decision::NoLink {
                rule: "none (dynamic-loading)".into(),
            },
            true,
            ["none (dynamic-loading)", "", "0", "12,13", "1"],
        ),
        (
            Decision::NoLink {
                rule: "none (docs.rs)".into(),
            },
            false,
            ["none (docs.rs)", "", "0", "12,13", "0"],
        ),
    ];
    for (d, dynamic, values) in cases {
        let got = metadata(&d, &[13, 12], dynamic);
        let want: Vec<(&str, String)> = keys.iter().copied().zip(values.iter().map(|v| v.to_string())).collect();
        assert_eq!(got, want, "{d:?}");
    }
    let none = metadata(
        &Decision::NoLink {
            rule: "none (docs.rs)".into(),
        },
        &[],
        false,
    );
    assert_eq!(none[3], ("cuda_majors", String::new()));
}

#[test]
fn the_link_searches_a_directory_holding_only_the_library() {
    let base = tree("link-dir");
    std::fs::write(base.join("real/libcuda.so"), b"real").unwrap();
    std::fs::write(base.join("real/libother.so"), b"other").unwrap();
    std::fs::write(base.join("toolkit/lib64/stubs/libcuda.so"), b"stub").unwrap();
    let out = base.join("out");
    let only = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    let dir = link_dir(&out, &base.join("real"), "libcuda.so").unwrap();
    assert_eq!(dir, out.join("link"));
    assert_eq!(only(&dir), ["libcuda.so"]);
    assert_eq!(std::fs::read(dir.join("libcuda.so")).unwrap(), b"real");
    // A later run with another library replaces it.
    let dir = link_dir(&out, &base.join("toolkit/lib64/stubs"), "libcuda.so").unwrap();
    assert_eq!(only(&dir), ["libcuda.so"]);
    assert_eq!(std::fs::read(dir.join("libcuda.so")).unwrap(), b"stub");
    // Windows: cuda.lib, and nothing of the earlier run.
    std::fs::create_dir_all(base.join("toolkit/lib/x64")).unwrap();
    std::fs::write(base.join("toolkit/lib/x64/cuda.lib"), b"import").unwrap();
    std::fs::write(base.join("toolkit/lib/x64/OpenCL.lib"), b"other").unwrap();
    let dir = link_dir(&out, &base.join("toolkit/lib/x64"), "cuda.lib").unwrap();
    assert_eq!(only(&dir), ["cuda.lib"]);
    assert!(link_dir(&out, &base.join("other"), "cuda.lib").is_err());
}
