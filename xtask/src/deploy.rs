//! Checks the fleet files under deploy/ against their published schemas, offline: the GitHub
//! workflow with check-jsonschema's vendored GitHub schema, the Kubernetes Jobs (per-GPU and node
//! mode) with kubernetes-validate's bundled Kubernetes schemas; both pinned PyPI packages, installed
//! with pip into a virtual environment under target/ (the only network use: PyPI, once).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The validators, pinned: a new release may change what passes, so an upgrade is a commit.
const VALIDATORS: &[&str] = &["check-jsonschema==0.39.0", "kubernetes-validate==1.37.0"];
/// The Kubernetes version whose schemas the Jobs must meet (kubernetes-validate bundles them).
const KUBERNETES: &str = "1.37.0";

/// Each file and the command (in the venv's bin/) that validates it.
const FILES: &[(&str, &str, &[&str])] = &[
    (
        "deploy/github/gpu-conformance.yml",
        "check-jsonschema",
        &["--builtin-schema", "vendor.github-workflows"],
    ),
    (
        "deploy/k8s/conformance-job.yaml",
        "kubernetes-validate",
        &["--strict", "--kubernetes-version", KUBERNETES],
    ),
    (
        "deploy/k8s/conformance-node-job.yaml",
        "kubernetes-validate",
        &["--strict", "--kubernetes-version", KUBERNETES],
    ),
];

/// The virtual environment with the pinned validators: target/deploy-venv, made once (a stamp
/// names the pins it holds).
fn venv(root: &Path) -> Result<PathBuf, String> {
    let dir = root.join("target/deploy-venv");
    let stamp = dir.join(".pins");
    let pins = VALIDATORS.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == pins) {
        return Ok(dir.join("bin"));
    }
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "xtask: installing {} into {} with pip",
        VALIDATORS.join(", "),
        dir.display()
    );
    let made = Command::new(&python).args(["-m", "venv"]).arg(&dir).status();
    match made {
        Ok(s) if s.success() => {}
        other => {
            return Err(format!(
                "cannot make a virtual environment with `{python} -m venv` ({other:?}). The deploy/ files are \
                 validated by PyPI packages installed with pip: install python3 with venv and pip (Debian: apt-get \
                 install python3-venv python3-pip), or set PYTHON=/path/to/python"
            ))
        }
    }
    let pip = Command::new(dir.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .args(VALIDATORS)
        .status()
        .map_err(|e| format!("cannot run pip in {} ({e})", dir.display()))?;
    if !pip.success() {
        return Err(format!(
            "pip could not install {} ({pip}): is pip present in the virtual environment (Debian: apt-get \
             install python3-pip python3-venv), and is PyPI (or your pip index) reachable?",
            VALIDATORS.join(", ")
        ));
    }
    std::fs::write(&stamp, pins).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    Ok(dir.join("bin"))
}

/// Validate every file of `FILES`; an error names the file and what the validator said.
pub fn check(root: &Path) -> Result<(), String> {
    let bin = venv(root)?;
    for (file, tool, args) in FILES {
        let out = Command::new(bin.join(tool))
            .args(*args)
            .arg(root.join(file))
            .output()
            .map_err(|e| format!("cannot run {tool} from {}: {e}", bin.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{file} does not validate ({tool} {}):\n{}{}",
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        println!("xtask ci: {file} validates ({tool})");
    }
    Ok(())
}
