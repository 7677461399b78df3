//! Which API a failing trial holds responsible.
//!
//! A trial of one API often needs others to set up or to observe (an IPC round trip frees through
//! 822; a trim trial reads 828). When one of those answers wrongly, the report should mark the API
//! that answered wrongly, not the one the trial is filed under: an interposer vendor reads the
//! table to learn which APIs their library reproduces. Checks that fail (`driver::ok`, `expect`)
//! name the call they checked; a child or worker that died inside a tracked call leaves a
//! breadcrumb (`crumb.rs`). The first such API seen during a trial is its blame; with none, the
//! trial's own API is.

use std::cell::Cell;

thread_local! {
    static BLAME: Cell<Option<u32>> = const { Cell::new(None) };
}

/// Forget the blame of the previous trial on this thread.
pub fn reset() {
    BLAME.with(|b| b.set(None));
}

/// Hold `api` responsible, unless an earlier check of this trial already named one.
pub fn set(api: u32) {
    BLAME.with(|b| {
        if b.get().is_none() {
            b.set(Some(api));
        }
    });
}

/// The API held responsible so far, if any.
pub fn get() -> Option<u32> {
    BLAME.with(|b| b.get())
}

/// The index of the API a check's description starts with: `cuMemFreeAsync(interior pointer)` →
/// 822. `_ptsz` variants count as their API. Descriptions that start with anything else → None.
pub fn api_of(what: &str) -> Option<u32> {
    let ident: &str = what
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    let ident = ident.strip_suffix("_ptsz").unwrap_or(ident);
    crate::driver::APIS
        .iter()
        .find(|(_, name)| *name == ident)
        .map(|(i, _)| *i)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn names_the_leading_api() {
        assert_eq!(api_of("cuMemFreeAsync(interior pointer)"), Some(822));
        assert_eq!(api_of("cuMemAllocAsync_ptsz(stream 0)"), Some(820));
        assert_eq!(api_of("cuMemPoolCreate"), Some(823));
        assert_eq!(api_of("grant"), None);
        assert_eq!(api_of("cuMemPoolCreateX"), None);
    }
    #[test]
    fn first_blame_wins_until_reset() {
        reset();
        set(822);
        set(833);
        assert_eq!(get(), Some(822));
        reset();
        assert_eq!(get(), None);
    }
}
