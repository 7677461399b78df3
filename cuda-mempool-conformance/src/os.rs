//! The few OS calls the suite makes (Linux), behind one module: how a child of this binary is set
//! up between fork and exec, opening libraries and asking which object holds an address, the fd
//! table, and the one read of the suite's `CONFORMANCE_*` settings.
//! Imports nothing of the crate.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The `CONFORMANCE_*` variables of this process's environment as they were at its first read: the
/// only place the suite reads them (their table, what each accepts and who sets it:
/// `harness::settings`). Nothing in the suite sets its own environment, so one read serves the
/// process's life.
fn settings_env() -> &'static BTreeMap<OsString, OsString> {
    static ENV: std::sync::OnceLock<BTreeMap<OsString, OsString>> = std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        std::env::vars_os()
            .filter(|(k, _)| k.to_str().is_some_and(|k| k.starts_with("CONFORMANCE_")))
            .collect()
    })
}

/// The setting `name` (a `CONFORMANCE_*` variable), None when unset.
pub fn setting_os(name: &str) -> Option<OsString> {
    debug_assert!(name.starts_with("CONFORMANCE_"), "{name} is not a setting of the suite");
    settings_env().get(OsStr::new(name)).cloned()
}

/// [`setting_os`] as text: None when unset or not UTF-8 (as `std::env::var` failing).
pub fn setting(name: &str) -> Option<String> {
    setting_os(name).and_then(|v| v.into_string().ok())
}

/// The folders of PATH, in order (where `sh` looks a command up).
pub fn path_dirs() -> Vec<std::path::PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default()
}

/// Set up the child `cmd` will start: each `(ours, theirs)` fd placed at `theirs` (inherited), the
/// child killed when the thread that started it ends (so a worker killed for hanging takes its own
/// children with it), and no core files (children crash on purpose; a core of a process holding a
/// CUDA context runs to gigabytes).
pub fn child_setup(cmd: &mut Command, fds: Vec<(RawFd, RawFd)>) {
    // SAFETY: only async-signal-safe calls (fcntl, dup2, prctl, setrlimit) run between fork and
    // exec. Every fd is first copied above 10 with close-on-exec, so placing one at a low number
    // cannot overwrite another; the copies at their targets have close-on-exec cleared (dup2).
    unsafe {
        cmd.pre_exec(move || {
            // At most a few fds: a fixed array, since nothing may allocate here.
            let mut copies = [-1; 8];
            for (i, &(ours, _)) in fds.iter().take(copies.len()).enumerate() {
                copies[i] = libc::fcntl(ours, libc::F_DUPFD_CLOEXEC, 10);
                if copies[i] < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            for (i, &(_, theirs)) in fds.iter().take(copies.len()).enumerate() {
                if libc::dup2(copies[i], theirs) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            Ok(())
        });
    }
}

/// `dlopen(library, RTLD_NOW | RTLD_GLOBAL)`, kept open for the life of the process: its symbols
/// join the default namespace, behind the executable's and LD_PRELOAD's.
pub fn dlopen_global(library: &str) -> Result<(), String> {
    dlopen(library, libc::RTLD_NOW | libc::RTLD_GLOBAL).map(|_| ())
}

/// An open library (never closed: its functions may be called until the process ends).
#[derive(Clone, Copy)]
pub struct Handle(*mut libc::c_void);

/// `dlopen(library, RTLD_NOW | RTLD_LOCAL)`, kept open for the life of the process.
pub fn dlopen_local(library: &str) -> Result<Handle, String> {
    dlopen(library, libc::RTLD_NOW | libc::RTLD_LOCAL).map(Handle)
}

fn dlopen(library: &str, flags: libc::c_int) -> Result<*mut libc::c_void, String> {
    let name = std::ffi::CString::new(library).map_err(|e| format!("{library:?}: {e}"))?;
    // SAFETY: a NUL-terminated name; dlerror's string is read before any other dl call.
    unsafe {
        let h = libc::dlopen(name.as_ptr(), flags);
        if h.is_null() {
            let e = libc::dlerror();
            let why = if e.is_null() {
                "unknown error".to_string()
            } else {
                std::ffi::CStr::from_ptr(e).to_string_lossy().into_owned()
            };
            return Err(format!("cannot open {library}: {why}"));
        }
        Ok(h)
    }
}

impl Handle {
    /// The address of `symbol` in this library, if it has one.
    pub fn symbol(self, symbol: &str) -> Option<*mut libc::c_void> {
        let name = std::ffi::CString::new(symbol).ok()?;
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(self.0, name.as_ptr()) };
        (!p.is_null()).then_some(p)
    }
}

/// The address of `symbol` in the process's default namespace (`dlsym(RTLD_DEFAULT)`: the
/// executable, then what LD_PRELOAD and the loader brought in), if any object defines it.
pub fn symbol_in_process(symbol: &str) -> Option<*mut libc::c_void> {
    let name = std::ffi::CString::new(symbol).ok()?;
    // SAFETY: a NUL-terminated name; RTLD_DEFAULT is always a valid handle.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// The file of the loaded object that holds `addr` (`dladdr`), if any does.
pub fn object_of(addr: usize) -> Option<String> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address and fills `info`; dli_fname points into the loader's
    // own tables, read at once.
    unsafe {
        if addr == 0 || libc::dladdr(addr as *const libc::c_void, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        Some(std::ffi::CStr::from_ptr(info.dli_fname).to_string_lossy().into_owned())
    }
}

/// Close a raw fd this process owns (one a driver call handed over).
pub fn close(fd: RawFd) {
    // SAFETY: closing an fd has no memory effects; a bad fd is an error return.
    unsafe {
        libc::close(fd);
    }
}

/// Whether `fd` is open in this process.
pub fn fd_is_open(fd: RawFd) -> bool {
    // SAFETY: F_GETFD only reads the fd's flags.
    unsafe { libc::fcntl(fd, libc::F_GETFD) != -1 }
}

/// A new fd for what `fd` refers to (-1 on failure).
pub fn dup(fd: RawFd) -> RawFd {
    // SAFETY: dup has no memory effects.
    unsafe { libc::dup(fd) }
}

/// Open fds of this process (Linux /proc/self/fd), excluding the listing's own handle.
pub fn open_fds() -> usize {
    fd_table().len()
}

/// fd -> what it refers to (readlink of /proc/self/fd/N), without the listing's own handle (whose
/// link no longer resolves once the listing is done).
pub fn fd_table() -> BTreeMap<i32, String> {
    let mut fds = Vec::new();
    if let Ok(d) = std::fs::read_dir("/proc/self/fd") {
        fds.extend(
            d.flatten()
                .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok()),
        );
    }
    fds.into_iter()
        .filter_map(|fd| {
            std::fs::read_link(format!("/proc/self/fd/{fd}"))
                .ok()
                .map(|t| (fd, t.display().to_string()))
        })
        .collect()
}

/// The fds in `after` that `before` lacked (and the reverse), with their targets.
pub fn fd_diff(before: &BTreeMap<i32, String>, after: &BTreeMap<i32, String>) -> String {
    let only = |a: &BTreeMap<i32, String>, b: &BTreeMap<i32, String>| {
        a.iter()
            .filter(|(k, v)| b.get(k) != Some(v))
            .map(|(k, v)| format!("{k} -> {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("new: [{}], closed: [{}]", only(after, before), only(before, after))
}
