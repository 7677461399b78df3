//! Where a report came from: the suite's version and commit, the host, its kernel and OS, the
//! CONFORMANCE_* and CUDA_* settings, when the run started and ended, and the library under test's
//! file (size, sha256, `cu*` exports), so that two reports from two machines differ by content.

use conformance_model::{LibraryFile, RunProvenance};
use sha2::{Digest, Sha256};

/// The commit the suite was built from (build.rs: `git rev-parse HEAD`), or "unknown" (a build
/// from a package, without git).
pub const COMMIT: &str = env!("CONFORMANCE_GIT_COMMIT");
/// "true" or "false": tracked files differed from the commit when build.rs last ran (it reruns
/// when HEAD, the branch or the index changes); "unknown" with the commit.
pub const DIRTY: &str = env!("CONFORMANCE_GIT_DIRTY");
/// The prefixes of the settings a report records.
pub const RECORDED_PREFIXES: &[&str] = &["CONFORMANCE_", "CUDA_"];
/// What build.rs hands the compiler, which cargo also sets for the processes it runs (`cargo test`):
/// build paths, not settings, left out of the report while they hold the compiled-in value.
const FROM_BUILD: &[(&str, Option<&str>)] = &[
    ("CONFORMANCE_GIT_COMMIT", option_env!("CONFORMANCE_GIT_COMMIT")),
    ("CONFORMANCE_GIT_DIRTY", option_env!("CONFORMANCE_GIT_DIRTY")),
    ("CONFORMANCE_SHIM_BUILT", option_env!("CONFORMANCE_SHIM_BUILT")),
    (
        "CONFORMANCE_SHIM_BUILT_PROC_ONLY",
        option_env!("CONFORMANCE_SHIM_BUILT_PROC_ONLY"),
    ),
    (
        "CONFORMANCE_SHIM_BUILT_NO_PROC_ADDRESS",
        option_env!("CONFORMANCE_SHIM_BUILT_NO_PROC_ADDRESS"),
    ),
    (
        "CONFORMANCE_FAKE_NVML_BUILT",
        option_env!("CONFORMANCE_FAKE_NVML_BUILT"),
    ),
];

/// The run's provenance, gathered by the coordinator (not the probe's child, whose environment
/// carries the child's role), `started` being when the run started.
pub fn here(started: std::time::SystemTime) -> RunProvenance {
    let first_line = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|t| t.lines().next().map(|l| l.trim().to_string()))
            .filter(|l| !l.is_empty())
    };
    let mut environment: Vec<(String, String)> = std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .filter(|(k, _)| RECORDED_PREFIXES.iter().any(|p| k.starts_with(p)))
        .filter(|(k, v)| !FROM_BUILD.contains(&(k.as_str(), Some(v.as_str()))))
        .collect();
    environment.sort();
    RunProvenance {
        suite_version: env!("CARGO_PKG_VERSION").to_string(),
        commit: COMMIT.to_string(),
        dirty: DIRTY.parse().ok(),
        host: first_line("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
        kernel: first_line("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
        os: ["/etc/os-release", "/usr/lib/os-release"]
            .iter()
            .find_map(|p| std::fs::read_to_string(p).ok().and_then(|t| pretty_name(&t)))
            .unwrap_or_else(|| "unknown".into()),
        environment,
        started: rfc3339(started),
        ..RunProvenance::default()
    }
}

/// The suite of `version` built from `commit`, in words: "conformance 0.1.0, commit 045eeb5…
/// (dirty)".
pub fn suite(version: &str, commit: &str, dirty: Option<bool>) -> String {
    let state = match dirty {
        Some(true) => " (dirty)",
        Some(false) => "",
        None => " (tree state unknown)",
    };
    format!("conformance {version}, commit {commit}{state}")
}

/// PRETTY_NAME of an os-release file, unquoted.
pub fn pretty_name(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim().trim_matches('"').trim_matches('\'').to_string())
        .filter(|v| !v.is_empty())
}

/// `t` as RFC 3339 in UTC ("2026-11-25T18:28:57Z"), from the system clock without a date crate.
pub fn rfc3339(t: std::time::SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil(t);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `t` in UTC: year, month, day, hour, minute, second (Howard Hinnant's civil-from-days).
pub fn civil(t: std::time::SystemTime) -> (i64, i64, i64, u64, u64, u64) {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86400, secs % 86400);
    let z = days as i64 + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    (y, mo, d, rem / 3600, rem % 3600 / 60, rem % 60)
}

/// `named` as a file: the path itself, else (a bare LD_PRELOAD name) the object of that name this
/// process mapped.
fn locate(named: &str) -> String {
    if named.contains('/') {
        return named.to_string();
    }
    std::fs::read_to_string("/proc/self/maps")
        .ok()
        .and_then(|m| {
            m.lines()
                .filter_map(|l| l.split_whitespace().nth(5))
                .find(|p| p.rsplit('/').next() == Some(named))
                .map(String::from)
        })
        .unwrap_or_else(|| named.to_string())
}

/// The sha256 of `data`, in lowercase hex.
pub fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect()
}

/// The file of the library `named`: size, sha256 and `cu*` exports, read from disk (the ELF
/// dynamic symbol table, parsed by `object`; nothing loaded), or why it cannot be read.
pub fn library_file(named: &str) -> Result<LibraryFile, String> {
    use object::{Object, ObjectSymbol};
    let file = locate(named);
    let data = std::fs::read(&file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let elf = object::File::parse(&*data).map_err(|e| format!("{file} is not an ELF object: {e}"))?;
    let cu_exports = elf
        .dynamic_symbols()
        .filter(|s| s.is_definition() && s.is_global() && s.name().is_ok_and(|n| n.starts_with("cu")))
        .count();
    let sha256 = sha256_hex(&data);
    Ok(LibraryFile {
        file,
        size: data.len() as u64,
        sha256,
        cu_exports: cu_exports as u64,
        ..LibraryFile::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_names_and_files() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_631_337);
        assert_eq!(rfc3339(t), "2026-11-25T18:28:57Z");
        assert_eq!(rfc3339(std::time::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let release = "NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nID=ubuntu\n";
        assert_eq!(pretty_name(release).as_deref(), Some("Ubuntu 22.04.4 LTS"));
        assert_eq!(pretty_name("ID=x\n"), None);
        // This test binary is an ELF file: its size and digest are read; a missing file is an error.
        let me = std::env::current_exe().unwrap();
        let f = library_file(me.to_str().unwrap()).unwrap();
        assert_eq!(f.size, std::fs::metadata(&me).unwrap().len());
        assert_eq!(f.sha256.len(), 64);
        assert!(library_file("/no/such/library.so").unwrap_err().contains("cannot read"));
        let p = here(std::time::SystemTime::now());
        assert_eq!(p.suite_version, env!("CARGO_PKG_VERSION"));
        assert!(p
            .environment
            .iter()
            .all(|(k, _)| k.starts_with("CONFORMANCE_") || k.starts_with("CUDA_")));
    }
}
