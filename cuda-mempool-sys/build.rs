//! Finds and links the CUDA driver library (libcuda.so / cuda.lib). Nothing else: the bindings are
//! pre-generated, so no libclang or bindgen is needed to build this crate.
//!
//! Rules, tried in order; the first that finds a real (non-stub) library wins:
//!   1. CUDA_MEMPOOL_SYS_LIB_DIR: a directory holding libcuda.so (or cuda.lib); authoritative
//!   2. CUDA_PATH, CUDA_HOME, CUDA_ROOT, CUDA_TOOLKIT_ROOT_DIR: the toolkit's library directories
//!      (natively lib64/, lib/, lib/x64/ and targets/<arch>/lib/; cross-compiling, only the
//!      targets/<arch>/lib/ directory of the target's architecture; for a Windows target, lib/x64/)
//!   3. pkg-config: cuda-MAJOR.MINOR for each enabled major (newest first), then cuda
//!   4. the usual driver directories for the target's architecture (native builds only; on
//!      Windows the toolkits under %ProgramFiles%\NVIDIA GPU Computing Toolkit\CUDA, newest first)
//!   5. stub libraries (a `stubs` directory found by any rule above, then the toolkit's usual
//!      stubs/), strictly last and always with a warning: they link, but a program run with them
//!      finds no GPU
//!
//! Every variable is also read with the target as prefix, first (openssl-sys's convention):
//! `X86_64_UNKNOWN_LINUX_GNU_CUDA_MEMPOOL_SYS_LIB_DIR` before `CUDA_MEMPOOL_SYS_LIB_DIR`.
//!
//! Nothing is linked with the `dynamic-loading` feature, with CUDA_MEMPOOL_SYS_NO_LINK=1 (for crates
//! that link libcuda themselves), or on docs.rs (DOCS_RS).
//!
//! When no rule finds a library the build fails with one message saying what was tried and how to
//! fix it, except when cross-compiling for Windows: there `cuda` is linked by name only (rule 6),
//! left to the linker's own search path (MSVC's LIB, say), with a warning. A build script cannot
//! tell `cargo check` from `cargo build`, and a Windows toolkit is rarely found on a non-Windows
//! host, so this keeps `cargo check --target x86_64-pc-windows-msvc` working without one; a program
//! still links only where the linker finds cuda.lib (else the linker says it cannot find it).
//!
//! The rule that matched is printed (`cargo build -vv` shows it) and published to dependents
//! (links = "cuda_mempool_sys"): DEP_CUDA_MEMPOOL_SYS_RULE, DEP_CUDA_MEMPOOL_SYS_LIB_DIR (absent when
//! nothing is linked), DEP_CUDA_MEMPOOL_SYS_STUB (1 for a stub library),
//! DEP_CUDA_MEMPOOL_SYS_CUDA_MAJORS (the enabled majors, e.g. `12,13`), and
//! DEP_CUDA_MEMPOOL_SYS_DYNAMIC_LOADING (1 with that feature).
//!
//! The decision itself (`decide`) reads nothing but its arguments and the file system, so
//! tests/build_rules.rs runs it on made-up directories.

use std::env;
use std::path::{Path, PathBuf};

const OWN_DIR_VAR: &str = "CUDA_MEMPOOL_SYS_LIB_DIR";
const TOOLKIT_VARS: &[&str] = &["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR"];

/// What is being built for, and where to look natively.
pub struct Target {
    pub triple: String,
    pub cross: bool,
    pub os: String,
    pub arch: String,
    /// Rule 4 (native builds only).
    pub usual_dirs: Vec<PathBuf>,
    /// The toolkit's usual stubs/ directories (rule 5, native builds only).
    pub usual_stub_dirs: Vec<PathBuf>,
}

impl Target {
    fn from_env() -> Target {
        let triple = env::var("TARGET").unwrap_or_default();
        let host = env::var("HOST").unwrap_or_default();
        let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
        let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
        let linux = os == "linux";
        let multiarch = match arch.as_str() {
            "x86_64" => Some("/usr/lib/x86_64-linux-gnu"),
            "aarch64" => Some("/usr/lib/aarch64-linux-gnu"),
            "powerpc64" => Some("/usr/lib/powerpc64le-linux-gnu"),
            _ => None,
        };
        let usual_dirs = multiarch
            .into_iter()
            .chain([
                "/usr/lib64",
                "/usr/lib",
                "/usr/lib/wsl/lib",
                "/usr/local/cuda/lib64",
                "/usr/local/cuda/lib",
                "/opt/cuda/lib64",
            ])
            .filter(|_| linux)
            .map(PathBuf::from)
            .collect();
        let mut usual_dirs: Vec<PathBuf> = usual_dirs;
        // Windows toolkits, when building on Windows for Windows.
        if os == "windows" && arch == "x86_64" && cfg!(windows) {
            usual_dirs.extend(windows_toolkits());
        }
        let usual_stub_dirs = ["/usr/local/cuda/lib64/stubs", "/opt/cuda/lib64/stubs"]
            .iter()
            .filter(|_| linux)
            .map(PathBuf::from)
            .collect();
        Target {
            cross: triple != host,
            triple,
            os,
            arch,
            usual_dirs,
            usual_stub_dirs,
        }
    }
    fn windows(&self) -> bool {
        self.os == "windows"
    }
    fn lib_file(&self) -> &'static str {
        if self.windows() {
            "cuda.lib"
        } else {
            "libcuda.so"
        }
    }
    /// A toolkit root's library directories for this target (rule 2).
    fn toolkit_lib_dirs(&self, root: &Path) -> Vec<PathBuf> {
        if self.windows() {
            // The Windows toolkit keeps its x64 import libraries in lib\x64, native or not.
            return if self.arch == "x86_64" {
                vec![root.join("lib").join("x64")]
            } else {
                Vec::new()
            };
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        if !self.cross {
            dirs.extend([root.join("lib64"), root.join("lib"), root.join("lib/x64")]);
        }
        dirs.extend(
            self.toolkit_target_dirs()
                .iter()
                .map(|d| root.join("targets").join(d).join("lib")),
        );
        dirs
    }
    /// The toolkit's `targets/<dir>` names for this architecture.
    fn toolkit_target_dirs(&self) -> &'static [&'static str] {
        match (self.os.as_str(), self.arch.as_str()) {
            ("linux", "x86_64") => &["x86_64-linux"],
            ("linux", "aarch64") => &["sbsa-linux", "aarch64-linux"],
            ("linux", "powerpc64") => &["ppc64le-linux"],
            _ => &[],
        }
    }
}

/// What to do.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision {
    NoLink {
        why: String,
    },
    Link {
        dir: PathBuf,
        rule: String,
        stub: bool,
    },
    /// Cross-compiling for Windows and no cuda.lib found: link `cuda` by name, from the linker's
    /// own search path, and warn.
    LinkByName {
        rule: String,
        warning: String,
    },
}

/// The installed Windows toolkits' `lib\x64` directories, newest version first (rule 4 on a
/// Windows host).
fn windows_toolkits() -> Vec<PathBuf> {
    let program_files = ["ProgramW6432", "ProgramFiles"]
        .into_iter()
        .find_map(env::var_os)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(r"C:\Program Files"));
    let base = program_files.join("NVIDIA GPU Computing Toolkit").join("CUDA");
    let mut found: Vec<((u32, u32), PathBuf)> = std::fs::read_dir(&base)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let (major, minor) = name.strip_prefix('v')?.split_once('.')?;
            Some((
                (major.parse().ok()?, minor.parse().ok()?),
                e.path().join("lib").join("x64"),
            ))
        })
        .collect();
    found.sort_by_key(|(version, _)| std::cmp::Reverse(*version));
    found.into_iter().map(|(_, dir)| dir).collect()
}

fn is_stub_dir(dir: &Path) -> bool {
    dir.components().any(|c| c.as_os_str() == "stubs")
}

struct Search<'a> {
    t: &'a Target,
    tried: Vec<String>,
    /// Stub directories met on the way, with the rule that met them; used only if nothing else is.
    stubs: Vec<(PathBuf, String)>,
}

impl Search<'_> {
    /// A real library in `dir`: Some(dir). A stub is remembered for rule 5.
    fn probe(&mut self, dir: &Path, rule: &str) -> Option<PathBuf> {
        if !dir.join(self.t.lib_file()).is_file() {
            self.tried.push(format!("{} ({rule})", dir.display()));
            return None;
        }
        if is_stub_dir(dir) {
            self.stubs.push((dir.to_path_buf(), rule.to_string()));
            return None;
        }
        Some(dir.to_path_buf())
    }
}

/// The rules. `var(name)`: the variable, target-prefixed first, as (the name found, value).
/// `pkg_config(name)`: the library directories of that pkg-config package, if it exists.
/// `majors`: the enabled majors, newest first. Err: the message to fail the build with.
pub fn decide(
    t: &Target,
    majors: &[u32],
    dynamic: bool,
    var: &dyn Fn(&str) -> Option<(String, String)>,
    pkg_config: &dyn Fn(&str) -> Option<Vec<PathBuf>>,
) -> Result<Decision, String> {
    let no_link = |why: String| Ok(Decision::NoLink { why });
    if dynamic {
        return no_link("feature dynamic-loading".into());
    }
    if var("DOCS_RS").is_some() {
        return no_link("DOCS_RS (docs.rs build)".into());
    }
    if let Some((name, v)) = var("CUDA_MEMPOOL_SYS_NO_LINK") {
        if v != "0" {
            return no_link(format!("{name}={v}"));
        }
    }
    let link = |dir: &Path, rule: String, stub: bool| {
        Ok(Decision::Link {
            dir: dir.to_path_buf(),
            rule,
            stub,
        })
    };

    // 1. Our own variable: authoritative (a stub there is linked, with the warning).
    if let Some((name, dir)) = var(OWN_DIR_VAR) {
        let dir = PathBuf::from(dir);
        if dir.join(t.lib_file()).is_file() {
            return link(&dir, format!("1: {name}"), is_stub_dir(&dir));
        }
        let so1 = !t.windows() && dir.join("libcuda.so.1").is_file();
        return Err(format!(
            "{name}={} holds no {}.{}\nSet it to the directory that holds the driver library, or unset it to search the usual places.",
            dir.display(),
            t.lib_file(),
            if so1 { " It has libcuda.so.1 but not the link-time name libcuda.so: add a symlink libcuda.so -> libcuda.so.1." } else { "" }
        ));
    }

    let mut s = Search {
        t,
        tried: Vec::new(),
        stubs: Vec::new(),
    };

    // 2. Toolkit roots from the environment.
    for toolkit_var in TOOLKIT_VARS {
        let (name, root) = match var(toolkit_var) {
            Some(found) => found,
            None => continue,
        };
        let root = PathBuf::from(root);
        let dirs = t.toolkit_lib_dirs(&root);
        let rule = format!("2: {name}");
        for d in dirs {
            if let Some(found) = s.probe(&d, &rule) {
                return link(&found, rule, false);
            }
            s.probe(&d.join("stubs"), &rule);
        }
    }

    // 3. pkg-config (the pkg-config crate itself refuses to answer for a cross build unless it is
    //    configured for one: PKG_CONFIG_ALLOW_CROSS, PKG_CONFIG_SYSROOT_DIR, ...).
    let mut names: Vec<String> = Vec::new();
    for m in majors {
        names.extend((0..=9).rev().map(|minor| format!("cuda-{m}.{minor}")));
    }
    names.push("cuda".into());
    for name in &names {
        for d in pkg_config(name).unwrap_or_default() {
            let rule = format!("3: pkg-config {name}");
            if let Some(found) = s.probe(&d, &rule) {
                return link(&found, rule, false);
            }
        }
    }
    s.tried.push(format!("pkg-config {}", names.join(", ")));

    // 4. The usual places, for native builds only.
    let mut so1_only = Vec::new();
    if t.cross {
        s.tried
            .push(format!("no system directories: cross-compiling for {}", t.triple));
    } else {
        for d in t.usual_dirs.iter().filter(|d| d.is_dir()) {
            let rule = format!("4: {}", d.display());
            if let Some(found) = s.probe(d, &rule) {
                return link(&found, rule, false);
            }
            if d.join("libcuda.so.1").is_file() {
                so1_only.push(d.display().to_string());
            }
        }
    }

    // 5. Stubs, strictly last.
    if !t.cross {
        for d in &t.usual_stub_dirs {
            s.probe(d, "toolkit stubs/");
        }
    }
    if let Some((dir, rule)) = s.stubs.first() {
        return link(dir, format!("5: stub library, found by {rule}"), true);
    }

    if t.windows() {
        let msg = format!(
            "cannot find cuda.lib (the CUDA toolkit's import library for nvcuda.dll) for {}.\nTried:\n  - {}\n\n\
             Fix one of:\n  \
             - install the CUDA toolkit: its installer sets CUDA_PATH, and cuda.lib is in %CUDA_PATH%\\lib\\x64\n  \
             - set CUDA_PATH to a CUDA toolkit, or {OWN_DIR_VAR} to the directory holding cuda.lib\n  \
             - enable the `dynamic-loading` feature, which links nothing and loads nvcuda.dll at run time\n  \
             - set CUDA_MEMPOOL_SYS_NO_LINK=1 if your crate links cuda.lib itself",
            t.triple,
            s.tried.join("\n  - ")
        );
        if t.cross {
            return Ok(Decision::LinkByName {
                rule: format!("6: cross-compiling for {}, no cuda.lib found: `cuda` by name", t.triple),
                warning: format!(
                    "no cuda.lib found for {} (cross-compiling): linking `cuda` by name, from the linker's own \
                     search path. Checking needs nothing, but a program links only if the linker finds cuda.lib: \
                     set {OWN_DIR_VAR} to its directory or CUDA_PATH to a Windows toolkit, or enable the \
                     `dynamic-loading` feature",
                    t.triple
                ),
            });
        }
        return Err(msg);
    }

    let hint = if so1_only.is_empty() {
        String::new()
    } else {
        format!(
            "\nFound libcuda.so.1 but not libcuda.so in {}: install the development symlink (Debian: libcuda1 \
             provides both) or point {OWN_DIR_VAR} at a directory with libcuda.so -> libcuda.so.1.",
            so1_only.join(", ")
        )
    };
    Err(format!(
        "cannot find the CUDA driver library ({}) for {}.\nTried:\n  - {}\n{hint}\n\
         Fix one of:\n  - set {OWN_DIR_VAR}=<dir containing {}>\n  - set CUDA_PATH to a CUDA toolkit\n  \
         - Debian: enable the non-free component and `apt-get install libcuda1` (works without a GPU)\n  \
         - enable the `dynamic-loading` feature, which links nothing and loads libcuda.so.1 at run time\n  \
         - set CUDA_MEMPOOL_SYS_NO_LINK=1 if your crate links libcuda itself",
        t.lib_file(),
        t.triple,
        s.tried.join("\n  - "),
        t.lib_file()
    ))
}

/// `<TARGET>_NAME` (target upper-cased, `-` and `.` as `_`), then `NAME`; empty counts as unset.
fn env_var(triple: &str, name: &str) -> Option<(String, String)> {
    let prefixed = format!("{}_{name}", triple.to_uppercase().replace(['-', '.'], "_"));
    for var in [prefixed, name.to_string()] {
        println!("cargo:rerun-if-env-changed={var}");
        if let Some(v) = env::var(&var).ok().filter(|v| !v.is_empty()) {
            return Some((var, v));
        }
    }
    None
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let t = Target::from_env();
    let majors: Vec<u32> = [13, 12, 11]
        .into_iter()
        .filter(|m| env::var_os(format!("CARGO_FEATURE_CUDA_{m}")).is_some())
        .collect();
    let mut listed = majors.clone();
    listed.sort_unstable();
    println!(
        "cargo:cuda_majors={}",
        listed.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
    );
    let dynamic = env::var_os("CARGO_FEATURE_DYNAMIC_LOADING").is_some();
    println!("cargo:dynamic_loading={}", u8::from(dynamic));

    let triple = t.triple.clone();
    let var = move |name: &str| env_var(&triple, name);
    let pkg_config = |name: &str| {
        pkg_config::Config::new()
            .cargo_metadata(false)
            .env_metadata(true)
            .probe(name)
            .ok()
            .map(|lib| lib.link_paths)
    };
    match decide(&t, &majors, dynamic, &var, &pkg_config) {
        Ok(Decision::NoLink { why }) => {
            println!("cuda-mempool-sys: not linking libcuda ({why})");
            println!("cargo:rule=none: {why}");
        }
        Ok(Decision::Link { dir, rule, stub }) => {
            println!("cuda-mempool-sys: linking libcuda from {} (rule {rule})", dir.display());
            if stub {
                println!(
                    "cargo:warning=cuda-mempool-sys: linking against the stub library in {} (rule {rule}): programs \
                     link, but need the real driver (libcuda.so.1) at run time; set {OWN_DIR_VAR} to the driver's \
                     directory to link the real one",
                    dir.display()
                );
            }
            println!("cargo:rustc-link-search=native={}", dir.display());
            println!("cargo:rustc-link-lib=dylib=cuda");
            println!("cargo:rule={rule}");
            println!("cargo:lib_dir={}", dir.display());
            println!("cargo:stub={}", u8::from(stub));
        }
        Ok(Decision::LinkByName { rule, warning }) => {
            println!("cuda-mempool-sys: linking libcuda by name only (rule {rule})");
            println!("cargo:warning=cuda-mempool-sys: {warning}");
            println!("cargo:rustc-link-lib=dylib=cuda");
            println!("cargo:rule={rule}");
            println!("cargo:stub=0");
        }
        Err(msg) => {
            // A message, not a panic: nothing here is a bug of the build script, and a backtrace
            // would only bury the advice.
            eprintln!("\ncuda-mempool-sys: {msg}\n");
            std::process::exit(1);
        }
    }
}
