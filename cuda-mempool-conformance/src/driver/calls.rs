//! Which of the 14 APIs a trial reached, as the mutation library (shim/calls.c) saw it: the mask
//! its hooks set in this process, what this process's children appended to their calls file, and
//! the masks of shared results the trial read (`harness::case::Shared`). Without the library loaded
//! nothing is known. The mutation run (tests/mutants.rs) runs a mutant of API `a` only against the
//! trials that reached `a`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::OnceLock;

/// The file a child of this process appends its mask to (shim/calls.c reads it in the child).
pub const CALLS_FILE_VAR: &str = "CONFORMANCE_SHIM_CALLS_FILE";

/// The exported `conformance_shim_take_calls` of the mutation library, if it is loaded.
fn shim_take() -> Option<extern "C" fn() -> u32> {
    static TAKE: OnceLock<Option<extern "C" fn() -> u32>> = OnceLock::new();
    *TAKE.get_or_init(|| {
        let p = crate::os::symbol_in_process("conformance_shim_take_calls")?;
        // SAFETY: shim/calls.c defines it as `unsigned conformance_shim_take_calls(void)`.
        Some(unsafe { std::mem::transmute::<*mut libc::c_void, extern "C" fn() -> u32>(p) })
    })
}

/// The calls file this process's children get (`set_children_file`), if any.
static CHILDREN: OnceLock<PathBuf> = OnceLock::new();
/// Masks of shared results read since the last `take`.
static READ: AtomicU16 = AtomicU16::new(0);

/// From now on every child this process starts (`harness::child::command`) appends its mask to
/// `path`. Set once, by a worker at its start; later calls change nothing.
pub fn set_children_file(path: PathBuf) {
    let _ = CHILDREN.set(path);
}

/// The calls file for this process's children, once set.
pub fn children_file() -> Option<&'static PathBuf> {
    CHILDREN.get()
}

/// Whether calls can be recorded here: the mutation library is loaded.
pub fn recorded() -> bool {
    shim_take().is_some()
}

/// The APIs reached since the last take (bit `api - 820`), and forget them: this process's hooks,
/// its children's lines (the file is emptied), and the shared results read. None when the library
/// is not loaded. A line a child appends while the file is read may be lost; children of a trial
/// are done when it ends, so only one that outlives its trial can lose one.
pub fn take() -> Option<u16> {
    let own = shim_take()?() as u16;
    let mut mask = own | READ.swap(0, Ordering::SeqCst);
    if let Some(path) = CHILDREN.get() {
        if let Ok(text) = std::fs::read_to_string(path) {
            let _ = std::fs::write(path, "");
            mask |= text
                .lines()
                .filter_map(|l| l.trim().parse::<u16>().ok())
                .fold(0, |a, b| a | b);
        }
    }
    Some(mask)
}

/// Count `mask` as reached by the current trial (a shared result it read was made with it).
pub fn add(mask: u16) {
    READ.fetch_or(mask, Ordering::SeqCst);
}

/// The APIs of `mask`, in order (820..=833).
pub fn apis(mask: u16) -> Vec<u32> {
    (0..14).filter(|b| mask & (1 << b) != 0).map(|b| 820 + b).collect()
}

/// The mask of `apis`; APIs outside 820..=833 are dropped.
pub fn mask(apis: &[u32]) -> u16 {
    apis.iter()
        .filter(|a| (820..=833).contains(*a))
        .fold(0, |m, a| m | 1 << (a - 820))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mask_and_its_apis_agree() {
        assert_eq!(apis(0), Vec::<u32>::new());
        assert_eq!(apis(0b1 | 0b100 | 1 << 13), vec![820, 822, 833]);
        assert_eq!(mask(&[820, 822, 833, 900, 0]), 0b1 | 0b100 | 1 << 13);
        assert_eq!(mask(&apis(0x3fff)), 0x3fff);
    }
}
