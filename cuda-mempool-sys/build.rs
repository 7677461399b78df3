//! Finds and links the CUDA driver library (libcuda.so / cuda.lib). Nothing else: the bindings are
//! pre-generated, so no libclang or bindgen is needed to build this crate.
//!
//! Search order (the first hit wins):
//!   1. CUDA_MEMPOOL_SYS_LIB_DIR: a directory holding libcuda.so (or cuda.lib); nothing else is tried
//!   2. CUDA_PATH, CUDA_HOME, CUDA_ROOT, CUDA_TOOLKIT_ROOT_DIR: lib64/, lib/, lib/x64/, targets/*/lib/
//!   3. pkg-config: cuda-MAJOR.MINOR for the selected major, then cuda
//!   4. the usual driver and toolkit directories
//!   5. the toolkit's stubs/ directories, last: they link, but a program run with them finds no GPU
//!
//! CUDA_MEMPOOL_SYS_NO_LINK=1 skips linking (for crates that load libcuda themselves); docs.rs
//! builds (DOCS_RS) skip it too.
//!
//! Published to dependents (links = "cuda_mempool_sys"): DEP_CUDA_MEMPOOL_SYS_LIB_DIR (where libcuda
//! was found, absent when not linked), DEP_CUDA_MEMPOOL_SYS_CUDA_MAJOR (the selected bindings),
//! DEP_CUDA_MEMPOOL_SYS_STUB (1 when linked against a stub library).

use std::env;
use std::path::{Path, PathBuf};

const OWN_DIR_VAR: &str = "CUDA_MEMPOOL_SYS_LIB_DIR";
const TOOLKIT_VARS: &[&str] = &["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR"];

fn env_var(name: &str) -> Option<String> {
    println!("cargo:rerun-if-env-changed={name}");
    env::var(name).ok().filter(|v| !v.is_empty())
}

fn lib_file_names(windows: bool) -> &'static [&'static str] {
    if windows {
        &["cuda.lib"]
    } else {
        &["libcuda.so"]
    }
}

fn has_lib(dir: &Path, windows: bool) -> bool {
    lib_file_names(windows).iter().any(|f| dir.join(f).is_file())
}

fn toolkit_lib_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![root.join("lib64"), root.join("lib"), root.join("lib/x64")];
    if let Ok(rd) = std::fs::read_dir(root.join("targets")) {
        let mut t: Vec<PathBuf> = rd.flatten().map(|e| e.path().join("lib")).collect();
        t.sort();
        dirs.extend(t);
    }
    dirs
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let major = if env::var_os("CARGO_FEATURE_CUDA_13").is_some() {
        13
    } else if env::var_os("CARGO_FEATURE_CUDA_12").is_some() {
        12
    } else {
        11
    };
    println!("cargo:cuda_major={major}");

    if env_var("DOCS_RS").is_some() || env_var("CUDA_MEMPOOL_SYS_NO_LINK").map_or(false, |v| v != "0") {
        return;
    }
    let windows = env::var("CARGO_CFG_TARGET_OS").map_or(false, |os| os == "windows");
    let mut tried: Vec<String> = Vec::new();

    // 1. Our own variable: authoritative.
    if let Some(dir) = env_var(OWN_DIR_VAR) {
        let dir = PathBuf::from(dir);
        if has_lib(&dir, windows) {
            return link(&dir, false);
        }
        let so1 = dir.join("libcuda.so.1").is_file();
        panic!(
            "\n\ncuda-mempool-sys: {OWN_DIR_VAR}={} holds no {}.{}\nSet it to the directory that holds the driver library, or unset it to search the usual places.\n\n",
            dir.display(),
            lib_file_names(windows).join(" / "),
            if so1 { " It has libcuda.so.1 but not the link-time name libcuda.so: add a symlink libcuda.so -> libcuda.so.1." } else { "" }
        );
    }

    // 2. Toolkit roots from the environment (stubs are kept for last).
    let mut stub_dirs: Vec<PathBuf> = Vec::new();
    for var in TOOLKIT_VARS {
        if let Some(root) = env_var(var) {
            let root = PathBuf::from(root);
            for d in toolkit_lib_dirs(&root) {
                if has_lib(&d, windows) {
                    return link(&d, false);
                }
                tried.push(format!("{} (from {var})", d.display()));
                stub_dirs.push(d.join("stubs"));
            }
        }
    }

    // 3. pkg-config.
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let mut names: Vec<String> = (0..=9).rev().map(|minor| format!("cuda-{major}.{minor}")).collect();
    names.push("cuda".into());
    for name in &names {
        if let Ok(lib) = pkg_config::Config::new().cargo_metadata(false).probe(name) {
            for d in &lib.link_paths {
                if has_lib(d, windows) {
                    return link(d, d.ends_with("stubs"));
                }
            }
        }
    }
    tried.push(format!("pkg-config {} / cuda", names[..names.len() - 1].join(", ")));

    // 4. The usual places.
    let mut usual: Vec<PathBuf> = if windows {
        vec![]
    } else {
        [
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu",
            "/usr/lib64",
            "/usr/lib",
            "/usr/lib/wsl/lib",
            "/usr/local/cuda/lib64",
            "/usr/local/cuda/lib",
            "/opt/cuda/lib64",
        ]
        .iter()
        .map(PathBuf::from)
        .collect()
    };
    usual.retain(|d| d.is_dir());
    for d in &usual {
        if has_lib(d, windows) {
            return link(d, false);
        }
        tried.push(d.display().to_string());
    }
    let so1_only: Vec<String> = usual
        .iter()
        .filter(|d| d.join("libcuda.so.1").is_file())
        .map(|d| d.display().to_string())
        .collect();

    // 5. Stubs, last.
    if !windows {
        stub_dirs.extend(
            ["/usr/local/cuda/lib64/stubs", "/opt/cuda/lib64/stubs"]
                .iter()
                .map(PathBuf::from),
        );
    }
    for d in &stub_dirs {
        if has_lib(d, windows) {
            println!(
                "cargo:warning=cuda-mempool-sys: linking against the stub {}: programs will link but need the real driver to run",
                d.display()
            );
            return link(d, true);
        }
    }
    tried.push("toolkit stubs/ directories".into());

    let hint = if so1_only.is_empty() {
        String::new()
    } else {
        format!(
            "\nFound libcuda.so.1 but not libcuda.so in {}: install the development symlink (Debian: libcuda1 \
             provides both) or point {OWN_DIR_VAR} at a directory with libcuda.so -> libcuda.so.1.",
            so1_only.join(", ")
        )
    };
    panic!(
        "\n\ncuda-mempool-sys: cannot find the CUDA driver library ({}).\nTried:\n  - {}\n{hint}\n\
         Fix one of:\n  - set {OWN_DIR_VAR}=<dir containing {}>\n  - set CUDA_PATH to a CUDA toolkit\n  \
         - Debian: enable the non-free component and `apt-get install libcuda1` (works without a GPU)\n  \
         - set CUDA_MEMPOOL_SYS_NO_LINK=1 if your crate loads libcuda itself\n\n",
        lib_file_names(windows).join(" / "),
        tried.join("\n  - "),
        lib_file_names(windows).join(" / ")
    );
}

fn link(dir: &Path, stub: bool) {
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=cuda");
    println!("cargo:lib_dir={}", dir.display());
    println!("cargo:stub={}", u8::from(stub));
}
