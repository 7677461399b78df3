//! Finding each major's pinned cuda.h: a local toolkit (`--cuda-include DIR` or CUDA_PATH) when it
//! is the pinned version, otherwise the pinned PyPI wheel, fetched with pip into target/ and verified.

use crate::pins::{Pin, PINS};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the headers of one major came from.
pub struct Headers {
    pub include: PathBuf,
    /// CUDA_VERSION as the header defines it, e.g. 12090.
    pub cuda_version: u32,
}

/// `CUDA_VERSION` of the cuda.h in `include`.
pub fn cuda_version_of(include: &Path) -> Result<u32, String> {
    let h = include.join("cuda.h");
    let text = std::fs::read_to_string(&h).map_err(|e| format!("cannot read {}: {e}", h.display()))?;
    text.lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("#define CUDA_VERSION")
                .map(|v| v.trim().to_string())
        })
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| {
            format!(
                "{} defines no numeric CUDA_VERSION: is this the driver API header?",
                h.display()
            )
        })
}

fn pinned_cuda_version(pin: &Pin) -> u32 {
    let mut it = pin.version.split('.').map(|p| p.parse::<u32>().unwrap());
    let (major, minor) = (it.next().unwrap(), it.next().unwrap());
    major * 1000 + minor * 10
}

/// A local include dir, used for its major only if it is the pinned major.minor (output must not
/// depend on which toolkit a developer happens to have).
fn local(dir: &Path, pin: &Pin, explicit: bool) -> Result<Option<Headers>, String> {
    let v = match cuda_version_of(dir) {
        Ok(v) => v,
        Err(e) if explicit => return Err(e),
        Err(_) => return Ok(None),
    };
    if v / 1000 != pin.major {
        return Ok(None);
    }
    if v != pinned_cuda_version(pin) {
        let msg = format!(
            "{}/cuda.h is CUDA_VERSION {v}; the pinned header for CUDA {} is {} (CUDA_VERSION {}).",
            dir.display(),
            pin.major,
            pin.version,
            pinned_cuda_version(pin)
        );
        if explicit {
            return Err(format!(
                "{msg} Point --cuda-include at that toolkit, or leave it out to use the pinned wheel."
            ));
        }
        eprintln!("xtask: note: {msg} Using the pinned wheel instead.");
        return Ok(None);
    }
    Ok(Some(Headers {
        include: dir.to_path_buf(),
        cuda_version: v,
    }))
}

/// Headers for every pinned major.
pub fn all(root: &Path, cuda_include: Option<&Path>) -> Result<Vec<(&'static Pin, Headers)>, String> {
    let env_dir = std::env::var_os("CUDA_PATH").map(|p| PathBuf::from(p).join("include"));
    let mut out = Vec::new();
    let mut explicit_used = false;
    for pin in PINS {
        let mut found = None;
        if let Some(dir) = cuda_include {
            found = local(dir, pin, true)?;
            explicit_used |= found.is_some();
        }
        if found.is_none() {
            if let Some(dir) = env_dir.as_deref().filter(|d| d.join("cuda.h").is_file()) {
                found = local(dir, pin, false)?;
            }
        }
        let headers = match found {
            Some(h) => h,
            None => fetch_wheel(root, pin)?,
        };
        out.push((pin, headers));
    }
    if let (Some(dir), false) = (cuda_include, explicit_used) {
        return Err(format!(
            "--cuda-include {}: its cuda.h is not one of the supported majors 11, 12, 13",
            dir.display()
        ));
    }
    Ok(out)
}

fn sha256_file(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect())
}

/// The pinned wheel, downloaded by pip (so a configured index or mirror is honoured), checked
/// against its sha256, and unpacked into target/cuda-headers/PACKAGE-VERSION/.
fn fetch_wheel(root: &Path, pin: &Pin) -> Result<Headers, String> {
    let base = root
        .join("target/cuda-headers")
        .join(format!("{}-{}", pin.package, pin.version));
    let include = base.join(pin.include);
    let stamp = base.join(".verified");
    if stamp.is_file() && include.join("cuda.h").is_file() {
        let v = cuda_version_of(&include)?;
        return Ok(Headers {
            include,
            cuda_version: v,
        });
    }
    let dl = base.join("download");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&dl).map_err(|e| format!("cannot create {}: {e}", dl.display()))?;
    eprintln!(
        "xtask: fetching {}=={} (headers for CUDA {}) with pip",
        pin.package, pin.version, pin.major
    );
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let status = Command::new(&python)
        .args(["-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--python-version", "3.11"])
        .args(["--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64"])
        .arg("--dest")
        .arg(&dl)
        .arg(format!("{}=={}", pin.package, pin.version))
        .status()
        .map_err(|e| {
            format!(
                "cannot run `{python} -m pip` ({e}). The CUDA headers come from PyPI wheels fetched with pip: install python3 \
                 and pip (Debian: apt-get install python3-pip), set PYTHON=/path/to/python, or pass \
                 --cuda-include DIR with a local toolkit of the pinned version"
            )
        })?;
    if !status.success() {
        return Err(format!(
            "pip could not download {}=={} ({status}); check network access to PyPI (or your pip index), \
             or pass --cuda-include DIR with a local CUDA {} toolkit",
            pin.package, pin.version, pin.version
        ));
    }
    let wheel = std::fs::read_dir(&dl)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| format!("pip reported success but left no wheel in {}", dl.display()))?;
    let got = sha256_file(&wheel)?;
    if got != pin.sha256 {
        return Err(format!(
            "{} has sha256 {got}, the pin in xtask/src/pins.rs says {}; refusing to use it",
            wheel.display(),
            pin.sha256
        ));
    }
    // Unpack the include folder only (the wheel also carries libcudart, which nothing here needs).
    let script = "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\n\
                  z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith(sys.argv[3] + '/')])\n";
    let status = Command::new(&python)
        .args(["-c", script])
        .arg(&wheel)
        .arg(&base)
        .arg(pin.include)
        .status()
        .map_err(|e| format!("cannot run {python} to unpack {}: {e}", wheel.display()))?;
    if !status.success() || !include.join("cuda.h").is_file() {
        return Err(format!("unpacking {} gave no {}/cuda.h", wheel.display(), pin.include));
    }
    std::fs::write(&stamp, pin.sha256).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&dl);
    let v = cuda_version_of(&include)?;
    Ok(Headers {
        include,
        cuda_version: v,
    })
}
