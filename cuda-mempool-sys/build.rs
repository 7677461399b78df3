//! Finds and links the CUDA driver library (libcuda.so / cuda.lib). Nothing else: the bindings are
//! pre-generated, so no libclang or bindgen is needed to build this crate.
//!
//! Rules, tried in order; the first that finds a real (non-stub) library wins:
//!   1. CUDA_MEMPOOL_SYS_LIB_DIR: a directory holding libcuda.so (or cuda.lib); authoritative
//!   2. CUDA_PATH, CUDA_HOME, CUDA_ROOT, CUDA_TOOLKIT_ROOT_DIR: the toolkit's library directories
//!      (natively lib64/, lib/, lib/x64/ and targets/<arch>/lib/; cross-compiling, only the
//!      targets/<arch>/lib/ directory of the target's architecture; for a Windows target, lib/x64/)
//!   3. pkg-config: one `pkg-config --list-all` (the program and search-path variables the
//!      pkg-config crate would use, target-specific ones first), then, of the packages it lists,
//!      `cuda-MAJOR.MINOR` for each enabled major (newest major, then newest minor, first) and
//!      `cuda`, probed through the pkg-config crate in that order until one holds a real library.
//!      A package that is not listed is not probed; nothing is run when the pkg-config crate would
//!      refuse (cross-compiling unless configured: PKG_CONFIG_ALLOW_CROSS, PKG_CONFIG_SYSROOT_DIR)
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
//! What the link gets: `-l cuda` and one search directory, OUT_DIR/link, which holds nothing but
//! libcuda.so (or cuda.lib): a symbolic link to the library found (a copy where the host cannot
//! make one). The directory the library was found in (/usr/lib/x86_64-linux-gnu, a toolkit's
//! lib64/, ...) is never a search directory of the link, so its other libraries cannot take the
//! place of ones another crate links from elsewhere. The pkg-config crate prints no link lines of
//! its own (`cargo_metadata(false)`). Rule 6 adds no search directory.
//!
//! The rule that decided is printed (`cargo build -vv` shows it). Dependents' build scripts get
//! (links = "cuda_mempool_sys_0_1", see Cargo.toml) every one of these keys, whatever happened:
//!   DEP_CUDA_MEMPOOL_SYS_0_1_RULE: the rule, as printed. Linked: `1: CUDA_MEMPOOL_SYS_LIB_DIR`,
//!     `2: CUDA_PATH`, `3: pkg-config cuda-12.4`, `4: /usr/lib/x86_64-linux-gnu` or
//!     `5: stub library, found by <one of those>`; linked by name: `6: cross-compiling for
//!     <target>, no cuda.lib found: cuda by name`; nothing linked: `none (dynamic-loading)`,
//!     `none (docs.rs)` or `none (CUDA_MEMPOOL_SYS_NO_LINK=<value>)`. Variables appear under the
//!     name they were read from (with the target prefix where that one was set).
//!   DEP_CUDA_MEMPOOL_SYS_0_1_LIB_DIR: the directory the library was found in (not OUT_DIR/link);
//!     empty when `cuda` is linked by name and when nothing is linked.
//!   DEP_CUDA_MEMPOOL_SYS_0_1_STUB: `1` when the library linked is a stub (rule 5, or a stub
//!     named by rule 1), else `0` (also when linking by name or linking nothing).
//!   DEP_CUDA_MEMPOOL_SYS_0_1_CUDA_MAJORS: the enabled majors, ascending, comma-separated (`12`,
//!     `12,13`; empty when none is enabled).
//!   DEP_CUDA_MEMPOOL_SYS_0_1_DYNAMIC_LOADING: `1` with the `dynamic-loading` feature, else `0`.
//!
//! The decision itself (`decide`) reads nothing but its arguments and the file system, so
//! tests/build_rules.rs runs it on made-up directories; so do `metadata` (the keys above) and
//! `link_dir` (OUT_DIR/link).

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    /// `rule`: `none (why)`, as published.
    NoLink {
        rule: String,
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

/// Rule 3's view of pkg-config.
pub struct PkgConfig<'a> {
    /// The packages pkg-config knows (`pkg-config --list-all`), or why it cannot say. Called once,
    /// and only when rule 3 is reached.
    pub list: &'a dyn Fn() -> Result<Vec<String>, String>,
    /// The library directories of one listed package (the pkg-config crate's probe), if any.
    pub link_paths: &'a dyn Fn(&str) -> Option<Vec<PathBuf>>,
}

/// The packages of `listed` worth probing, in rule 3's order: `cuda-MAJOR.MINOR` for each of
/// `majors` (newest first, as given), newest minor first, then `cuda`.
pub fn pkg_config_candidates(listed: &[String], majors: &[u32]) -> Vec<String> {
    let mut versioned: Vec<(usize, u32, &String)> = listed
        .iter()
        .filter_map(|name| {
            let (major, minor) = name.strip_prefix("cuda-")?.split_once('.')?;
            let (major, minor): (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
            let rank = majors.iter().position(|m| *m == major)?;
            Some((rank, minor, name))
        })
        .collect();
    versioned.sort_by_key(|&(rank, minor, _)| (rank, std::cmp::Reverse(minor)));
    let mut names: Vec<String> = versioned.into_iter().map(|(_, _, name)| name.clone()).collect();
    names.dedup();
    if listed.iter().any(|name| name == "cuda") {
        names.push("cuda".into());
    }
    names
}

/// The package names in `pkg-config --list-all` output: each line's first word.
pub fn pkg_config_names(list_all: &str) -> Vec<String> {
    list_all
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The rules. `var(name)`: the variable, target-prefixed first, as (the name found, value).
/// `pkg_config`: rule 3 (see [`PkgConfig`]). `majors`: the enabled majors, newest first.
/// Err: the message to fail the build with.
pub fn decide(
    t: &Target,
    majors: &[u32],
    dynamic: bool,
    var: &dyn Fn(&str) -> Option<(String, String)>,
    pkg_config: &PkgConfig,
) -> Result<Decision, String> {
    let no_link = |why: String| {
        Ok(Decision::NoLink {
            rule: format!("none ({why})"),
        })
    };
    if dynamic {
        return no_link("dynamic-loading".into());
    }
    if var("DOCS_RS").is_some() {
        return no_link("docs.rs".into());
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

    // 3. pkg-config: only the packages it lists (the pkg-config crate itself refuses to answer
    //    for a cross build unless it is configured for one: PKG_CONFIG_ALLOW_CROSS,
    //    PKG_CONFIG_SYSROOT_DIR, ...; `list` says so then).
    match (pkg_config.list)() {
        Err(why) => s.tried.push(format!("pkg-config: {why}")),
        Ok(listed) => {
            let names = pkg_config_candidates(&listed, majors);
            for name in &names {
                let rule = format!("3: pkg-config {name}");
                for d in (pkg_config.link_paths)(name).unwrap_or_default() {
                    if let Some(found) = s.probe(&d, &rule) {
                        return link(&found, rule, false);
                    }
                }
            }
            let wanted = majors
                .iter()
                .map(|m| format!("cuda-{m}.*"))
                .chain(["cuda".to_string()])
                .collect::<Vec<_>>()
                .join(", ");
            if names.is_empty() {
                s.tried.push(format!("pkg-config: lists no {wanted}"));
            } else {
                s.tried
                    .push(format!("pkg-config {} (no library of theirs)", names.join(", ")));
            }
        }
    }

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
                rule: format!("6: cross-compiling for {}, no cuda.lib found: cuda by name", t.triple),
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

/// Every DEP_CUDA_MEMPOOL_SYS_0_1_* key (lower case, as printed after `cargo:`) and its value,
/// for every decision (see the module's documentation).
pub fn metadata(d: &Decision, majors: &[u32], dynamic: bool) -> Vec<(&'static str, String)> {
    let (rule, lib_dir, stub) = match d {
        Decision::NoLink { rule } => (rule.clone(), String::new(), false),
        Decision::Link { dir, rule, stub } => (rule.clone(), dir.display().to_string(), *stub),
        Decision::LinkByName { rule, .. } => (rule.clone(), String::new(), false),
    };
    let mut listed = majors.to_vec();
    listed.sort_unstable();
    listed.dedup();
    vec![
        ("rule", rule),
        ("lib_dir", lib_dir),
        ("stub", u8::from(stub).to_string()),
        (
            "cuda_majors",
            listed.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
        ),
        ("dynamic_loading", u8::from(dynamic).to_string()),
    ]
}

/// The link's only search directory: `out/link`, holding nothing but `file` (libcuda.so or
/// cuda.lib), a symbolic link to `found/file` (a copy where the host cannot make one), so that the
/// directory the library was found in never becomes a search directory of the whole link.
pub fn link_dir(out: &Path, found: &Path, file: &str) -> std::io::Result<PathBuf> {
    let dir = out.join("link");
    // Whatever an earlier run left (another library, another file name) goes.
    if dir.symlink_metadata().is_ok() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let mut source = found.join(file);
    if source.is_relative() {
        source = env::current_dir()?.join(source);
    }
    if !source.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{} is not a file", source.display()),
        ));
    }
    let dest = dir.join(file);
    #[cfg(unix)]
    let linked = std::os::unix::fs::symlink(&source, &dest).is_ok();
    #[cfg(not(unix))]
    let linked = false;
    if !linked {
        std::fs::copy(&source, &dest)?;
    }
    Ok(dir)
}

/// `TARGET`/`HOST`-specific first, as the pkg-config crate reads its variables: `NAME_<target>`,
/// `NAME_<target with _>`, `HOST_NAME` (native) or `TARGET_NAME` (cross), `NAME`.
fn pkg_config_var(name: &str) -> Option<OsString> {
    let target = env::var("TARGET").unwrap_or_default();
    let host = env::var("HOST").unwrap_or_default();
    let kind = if host == target { "HOST" } else { "TARGET" };
    [
        format!("{name}_{target}"),
        format!("{name}_{}", target.replace('-', "_")),
        format!("{kind}_{name}"),
        name.to_string(),
    ]
    .iter()
    .find_map(|v| {
        println!("cargo:rerun-if-env-changed={v}");
        env::var_os(v)
    })
}

/// `pkg-config --list-all`, run as the pkg-config crate runs pkg-config: PKG_CONFIG or
/// `pkg-config` (then `pkgconf`), with PKG_CONFIG_PATH, PKG_CONFIG_LIBDIR and
/// PKG_CONFIG_SYSROOT_DIR, each target-specific first. Nothing is run where the crate would refuse.
fn pkg_config_list() -> Result<Vec<String>, String> {
    if !pkg_config::Config::new().target_supported() {
        return Err(
            "not used when cross-compiling unless configured for it (PKG_CONFIG_ALLOW_CROSS=1, \
             PKG_CONFIG_SYSROOT_DIR or a target-specific PKG_CONFIG)"
                .into(),
        );
    }
    let programs: Vec<OsString> = match pkg_config_var("PKG_CONFIG") {
        Some(program) => vec![program],
        None => vec!["pkg-config".into(), "pkgconf".into()],
    };
    let mut why = String::new();
    for program in &programs {
        let mut cmd = Command::new(program);
        cmd.arg("--list-all");
        for name in ["PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG_SYSROOT_DIR"] {
            if let Some(v) = pkg_config_var(name) {
                cmd.env(name, v);
            }
        }
        match cmd.output() {
            Ok(out) if out.status.success() => return Ok(pkg_config_names(&String::from_utf8_lossy(&out.stdout))),
            Ok(out) => {
                return Err(format!(
                    "`{} --list-all` failed ({})",
                    program.to_string_lossy(),
                    out.status
                ))
            }
            Err(e) => why = format!("cannot run {}: {e}", program.to_string_lossy()),
        }
    }
    Err(why)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let t = Target::from_env();
    let majors: Vec<u32> = [13, 12, 11]
        .into_iter()
        .filter(|m| env::var_os(format!("CARGO_FEATURE_CUDA_{m}")).is_some())
        .collect();
    let dynamic = env::var_os("CARGO_FEATURE_DYNAMIC_LOADING").is_some();

    let triple = t.triple.clone();
    let var = move |name: &str| env_var(&triple, name);
    let link_paths = |name: &str| {
        pkg_config::Config::new()
            .cargo_metadata(false)
            .env_metadata(true)
            .probe(name)
            .ok()
            .map(|lib| lib.link_paths)
    };
    let pkg_config = PkgConfig {
        list: &pkg_config_list,
        link_paths: &link_paths,
    };
    let decision = match decide(&t, &majors, dynamic, &var, &pkg_config) {
        Ok(decision) => decision,
        Err(msg) => {
            // A message, not a panic: nothing here is a bug of the build script, and a backtrace
            // would only bury the advice.
            eprintln!("\ncuda-mempool-sys: {msg}\n");
            std::process::exit(1);
        }
    };
    match &decision {
        Decision::NoLink { rule } => {
            println!("cuda-mempool-sys: not linking libcuda (rule {rule})");
        }
        Decision::Link { dir, rule, stub } => {
            println!("cuda-mempool-sys: linking libcuda from {} (rule {rule})", dir.display());
            if *stub {
                println!(
                    "cargo:warning=cuda-mempool-sys: linking against the stub library in {} (rule {rule}): programs \
                     link, but need the real driver (libcuda.so.1) at run time; set {OWN_DIR_VAR} to the driver's \
                     directory to link the real one",
                    dir.display()
                );
            }
            let lib_file = t.lib_file();
            println!("cargo:rerun-if-changed={}", dir.join(lib_file).display());
            let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
            let search = match link_dir(&out, dir, lib_file) {
                Ok(search) => search,
                Err(e) => {
                    println!(
                        "cargo:warning=cuda-mempool-sys: cannot make {} ({e}): searching {} itself, \
                         for every library of the link",
                        out.join("link").display(),
                        dir.display()
                    );
                    dir.clone()
                }
            };
            println!("cargo:rustc-link-search=native={}", search.display());
            println!("cargo:rustc-link-lib=dylib=cuda");
        }
        Decision::LinkByName { rule, warning } => {
            println!("cuda-mempool-sys: linking libcuda by name only (rule {rule})");
            println!("cargo:warning=cuda-mempool-sys: {warning}");
            println!("cargo:rustc-link-lib=dylib=cuda");
        }
    }
    for (key, value) in metadata(&decision, &majors, dynamic) {
        println!("cargo:{key}={value}");
    }
}
