//! The ways the suite fills its table of the driver's entry points (CONFORMANCE_ENTRY), by name.
//! Filling the table is `cu`'s job; this file imports nothing, so that `given` can hold one.

/// How the table is filled (CONFORMANCE_ENTRY).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    ProcAddress,
    Dlsym,
    Link,
}
const ENTRIES: &[(Entry, &str)] = &[
    (Entry::ProcAddress, "proc-address"),
    (Entry::Dlsym, "dlsym"),
    (Entry::Link, "link"),
];

impl Entry {
    pub fn name(self) -> &'static str {
        ENTRIES.iter().find(|e| e.0 == self).unwrap().1
    }
    /// The way named `name` (as CONFORMANCE_ENTRY writes it), if one is.
    pub fn from_name(name: &str) -> Option<Entry> {
        ENTRIES.iter().find(|e| e.1 == name).map(|e| e.0)
    }
    /// Every way of filling the table, in CONFORMANCE_ENTRY's order.
    pub fn all() -> impl Iterator<Item = Entry> {
        ENTRIES.iter().map(|e| e.0)
    }
    /// The applications that reach the driver this way, in words.
    pub fn applications(self) -> &'static str {
        match self {
            Entry::ProcAddress => "applications of the CUDA runtime (cudart resolves the driver with cuGetProcAddress)",
            Entry::Dlsym => "programs that dlopen libcuda and dlsym its functions",
            Entry::Link => "programs linked against libcuda",
        }
    }
}
