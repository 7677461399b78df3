//! One version story, checked against the package's own files: the CHANGELOG opens with the
//! version Cargo.toml gives; `links` carries that version's semver-compatible part, and so does
//! every `DEP_CUDA_MEMPOOL_SYS_…` variable and `cuda_mempool_sys_…` override the README, build.rs
//! and Cargo.toml name; the README's dependency lines ask for that version.

const MANIFEST: &str = include_str!("../Cargo.toml");
const README: &str = include_str!("../README.md");
const BUILD: &str = include_str!("../build.rs");
const CHANGELOG: &str = include_str!("../CHANGELOG.md");

const MAJOR: &str = env!("CARGO_PKG_VERSION_MAJOR");
const MINOR: &str = env!("CARGO_PKG_VERSION_MINOR");

/// What two semver-compatible versions share: `0_1` for 0.1.x, `1` for 1.x.
fn compatible() -> String {
    if MAJOR == "0" {
        format!("0_{MINOR}")
    } else {
        MAJOR.to_string()
    }
}

/// The requirement a dependent writes for this version: `0.1`, `1`.
fn requirement() -> String {
    if MAJOR == "0" {
        format!("0.{MINOR}")
    } else {
        MAJOR.to_string()
    }
}

/// The first `## ` heading's first word.
fn changelog_version(text: &str) -> Option<&str> {
    text.lines()
        .find_map(|l| l.strip_prefix("## "))
        .and_then(|h| h.split_whitespace().next())
}

#[test]
fn changelog_opens_with_this_version() {
    assert_eq!(
        changelog_version("# Changelog\n\n## 0.3.1 (date)\n## 0.3.0\n"),
        Some("0.3.1")
    );
    assert_eq!(
        changelog_version(CHANGELOG),
        Some(env!("CARGO_PKG_VERSION")),
        "CHANGELOG.md's first entry must be the version Cargo.toml publishes"
    );
}

/// `links` carries the semver-compatible version (see the README's Linking section): two
/// incompatible versions can share a graph, and the DEP_ keys name it.
#[test]
fn links_names_the_compatible_version() {
    let links: Vec<&str> = MANIFEST
        .lines()
        .filter_map(|l| l.trim().strip_prefix("links = \""))
        .collect();
    let want = format!("cuda_mempool_sys_{}\"", compatible());
    assert_eq!(links, [want.as_str()], "Cargo.toml's `links` must follow the version");
}

/// Every `DEP_CUDA_MEMPOOL_SYS_<compatible>_*` variable and `cuda_mempool_sys_<compatible>` key
/// the package names is this version's.
#[test]
fn dep_names_follow_links() {
    let dep = format!("DEP_CUDA_MEMPOOL_SYS_{}_", compatible());
    let key = format!("cuda_mempool_sys_{}", compatible());
    for (file, text) in [("README.md", README), ("build.rs", BUILD), ("Cargo.toml", MANIFEST)] {
        let mut seen = 0;
        for (at, _) in text.match_indices("DEP_CUDA_MEMPOOL_SYS_") {
            assert!(text[at..].starts_with(&dep), "{file}: {}", &text[at..at + 40]);
            seen += 1;
        }
        for (at, _) in text.match_indices("cuda_mempool_sys_") {
            let rest = &text[at..];
            let next = rest[key.len().min(rest.len())..].chars().next();
            assert!(
                rest.starts_with(&key) && !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{file}: {}",
                &rest[..rest.len().min(40)]
            );
        }
        assert!(seen > 0 || file == "Cargo.toml", "{file} names no DEP_ variable");
    }
}

/// `cuda-mempool-sys = "0.1"` and `version = "0.1"` in the README are this version.
#[test]
fn readme_asks_for_this_version() {
    let mut lines = 0;
    for l in README.lines().filter(|l| l.contains("cuda-mempool-sys = ")) {
        let asked = l
            .split("cuda-mempool-sys = \"")
            .nth(1)
            .or_else(|| l.split("version = \"").nth(1))
            .and_then(|r| r.split('"').next());
        assert_eq!(asked, Some(requirement().as_str()), "{l}");
        lines += 1;
    }
    assert!(lines > 0, "the README has no dependency line");
}
