//! Which driver answers: its version and branch, asked of NVML, then read from the kernel module's
//! version file, the libcuda file name only as a last resort; every source's answer kept, the one
//! used named.

use conformance_model::Identity;

/// Where the loaded kernel module says its version.
pub const MODULE_VERSION_FILE: &str = "/proc/driver/nvidia/version";

/// Whether the file named `name` is the driver's installed file, `libcuda.so.VERSION` (`VERSION`
/// the driver's `version`, where it is known): anything else that answers for libcuda is a stand-in.
pub fn is_driver_file(name: &str, version: &str) -> bool {
    let dotted = |v: &str| v.contains('.') && v.chars().all(|c| c.is_ascii_digit() || c == '.');
    name.strip_prefix("libcuda.so.")
        .is_some_and(|v| dotted(v) && (!dotted(version) || v == version))
}

/// The branch of a driver version (580 for 580.159.04).
pub fn branch_of(version: &str) -> Option<u32> {
    version.split('.').next().and_then(|b| b.parse().ok())
}

/// A driver `version` read from `source`, in words: "580.159.04 (branch 580, from NVML
/// (libnvidia-ml.so.1))", or what is unknown.
pub fn describe(version: &str, source: &str) -> String {
    match branch_of(version) {
        _ if version.is_empty() => {
            "version unknown, branch unknown (no source could say: see the sources below)".to_string()
        }
        Some(b) => format!("{version} (branch {b}, from {source})"),
        None => format!("{version} (branch unknown, from {source})"),
    }
}

/// A dotted version ("580.159.04", "535.309.01", "580.65") at the start of `s`, if there is one.
fn leading_version(s: &str) -> Option<String> {
    let v: String = s.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let v = v.trim_end_matches('.');
    (v.contains('.') && v.split('.').all(|p| !p.is_empty())).then(|| v.to_string())
}

/// The version in the module's version file ("NVRM version: NVIDIA UNIX x86_64 Kernel Module
/// 580.159.04 ..."): the first word of its first line that is a dotted version.
pub fn module_version(text: &str) -> Option<String> {
    text.lines()
        .next()?
        .split_whitespace()
        .find_map(|w| leading_version(w).filter(|v| v.len() == w.len()))
}

/// The version in a libcuda file name (`libcuda.so.580.159.04`).
pub fn file_version(path: &str) -> Option<String> {
    path.rsplit_once("libcuda.so.")
        .and_then(|(_, v)| leading_version(v))
        .filter(|v| v.contains('.'))
}

/// NVML's answer: the driver version, or why there is none.
fn nvml_version(library: &str) -> Result<String, String> {
    let h = crate::os::dlopen_local(library)?;
    type Init = unsafe extern "C" fn() -> i32;
    type Version = unsafe extern "C" fn(*mut std::ffi::c_char, u32) -> i32;
    let (Some(init), Some(version)) = (h.symbol("nvmlInit_v2"), h.symbol("nvmlSystemGetDriverVersion")) else {
        return Err(format!("{library} lacks nvmlInit_v2 or nvmlSystemGetDriverVersion"));
    };
    // SAFETY: NVML's documented signatures; the buffer is larger than NVML's 80-byte maximum and
    // NUL-terminated by NVML on success.
    unsafe {
        let init: Init = std::mem::transmute(init);
        let version: Version = std::mem::transmute(version);
        let r = init();
        if r != 0 {
            return Err(format!("nvmlInit_v2 answered {r}"));
        }
        let mut buf = [0 as std::ffi::c_char; 96];
        let r = version(buf.as_mut_ptr(), buf.len() as u32);
        if let Some(shutdown) = h.symbol("nvmlShutdown") {
            let shutdown: Init = std::mem::transmute(shutdown);
            shutdown();
        }
        if r != 0 {
            return Err(format!("nvmlSystemGetDriverVersion answered {r}"));
        }
        let v = std::ffi::CStr::from_ptr(buf.as_ptr())
            .to_string_lossy()
            .trim()
            .to_string();
        leading_version(&v).ok_or_else(|| format!("nvmlSystemGetDriverVersion answered {v:?}"))
    }
}

/// Ask every source (in this process: the probe's child), `libcuda` being the path of the
/// libcuda file mapped here and `nvml` the NVML library to ask (CONFORMANCE_NVML, or the system's:
/// `Settings::nvml`).
pub fn identify(libcuda: &str, nvml: &str) -> Identity {
    let nvml = nvml.to_string();
    let module = std::fs::read_to_string(MODULE_VERSION_FILE)
        .map_err(|e| format!("not readable: {e}"))
        .and_then(|t| module_version(&t).ok_or_else(|| "no version on its first line".to_string()));
    let file = file_version(libcuda).ok_or_else(|| format!("no version in the file name {libcuda}"));
    let sources = vec![
        (format!("NVML ({nvml})"), nvml_version(&nvml)),
        (MODULE_VERSION_FILE.to_string(), module.clone()),
        ("the libcuda file name".to_string(), file.clone()),
    ];
    let (source, version) = sources
        .iter()
        .find_map(|(s, v)| v.as_ref().ok().map(|v| (s.clone(), v.clone())))
        .unwrap_or_else(|| ("none".to_string(), String::new()));
    Identity {
        version,
        source,
        sources: sources
            .into_iter()
            .map(|(s, v)| (s, v.unwrap_or_else(|e| format!("no answer: {e}"))))
            .collect(),
        module: module.ok(),
        libcuda: file.ok(),
        ..Identity::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_from_each_source() {
        let proprietary = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  9 2025\nGCC version: x";
        assert_eq!(module_version(proprietary).as_deref(), Some("580.159.04"));
        let open = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build";
        assert_eq!(module_version(open).as_deref(), Some("570.86.15"));
        assert_eq!(module_version("garbage"), None);
        assert_eq!(
            file_version("/usr/lib/nvidia/libcuda.so.535.309.01").as_deref(),
            Some("535.309.01")
        );
        assert_eq!(file_version("/opt/copy/libcuda.so.1"), None);
        assert_eq!(branch_of("590.12"), Some(590));
        assert!(describe("", "none").contains("branch unknown"));
    }
}
