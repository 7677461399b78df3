//! Virtual address space (issue 38): what each pool call reserves, as a child's /proc/self/maps sees it.
//!
//! One `vaspace` child per device and run (this binary re-executed, reached over a `channel::Peer`)
//! takes every measurement in a fixed order, the first default-pool query first (it must be the
//! process's first) and the RLIMIT_AS calls last, reading its maps before and after each call, and
//! sends each answer as soon as it has it; the trials, in one lane, read their own answer (a step
//! the child dies in costs that step's trials and the later ones only). The figures (bytes that
//! appeared, and their ratio to the device's memory) go into the report as notes of a fixed
//! wording, `vaspace <what>: <bytes> bytes, <ratio>x device memory (<device> bytes)`, and as
//! observations; only what is certain is judged: a destroyed pool gives back what its creation (or
//! import) took, and under RLIMIT_AS the calls answer a code (the documentation allows SUCCESS or
//! OUT_OF_MEMORY) instead of killing or hanging the process.

mod child;
mod steps;
mod trials;

pub use child::child_main;
pub use trials::cases;
