//! The ways the suite fills its table of the driver's entry points (CONFORMANCE_ENTRY): the
//! model's [`EntryMode`](conformance_model::EntryMode), and who reaches the driver each way.
//! Filling the table is `cu`'s job (`cu::load`, handed the entry point's value); this file imports
//! only the model.

/// How the table is filled (CONFORMANCE_ENTRY): the model's entry mode, its one definition.
pub use conformance_model::EntryMode as Entry;

/// The applications that reach the driver the way `entry`, in words.
pub fn applications(entry: Entry) -> &'static str {
    match entry {
        Entry::ProcAddress => "applications of the CUDA runtime (cudart resolves the driver with cuGetProcAddress)",
        Entry::Dlsym => "programs that dlopen libcuda and dlsym its functions",
        Entry::Link => "programs linked against libcuda",
    }
}
