//! Where the driver departs from the documentation: each departure declared once, with the driver
//! versions it was seen on and the driver branches it is expected on (the idea of wgpu's
//! `FailureCase`).
//!
//! Inside its branches a check expects the driver's answer; outside them, the documented one. The
//! report shows both either way. A departure that no longer reproduces inside its branches (the
//! driver now gives the documented answer) is reported as `changed`, not as a failure; one that
//! shows up outside its branches fails, naming the entry to extend if that driver is meant to keep
//! it. Departures the documentation says nothing about (`documented: None`) are expected
//! everywhere.

use crate::driver::check::code_name;
use crate::driver::cu::*;
use crate::driver::fail::{Fail, R};
use crate::driver::observe::{record, Observation};
use std::sync::OnceLock;

pub struct Deviation {
    pub id: &'static str,
    pub api: u32,
    /// What the documentation says (or implies, see `docs`); None: it says nothing.
    pub documented: Option<CUresult>,
    /// Where the documented answer comes from, in a few words.
    pub docs: &'static str,
    /// What the driver answers instead.
    pub observed: CUresult,
    /// Driver versions it was seen on.
    pub seen_on: &'static [&'static str],
    /// Driver branches (580 for 580.x) it is expected on, inclusive.
    pub branches: (u32, u32),
}

const E_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const R580: &[&str] = &["580.159.04"];

pub const ALL: &[Deviation] = &[
    Deviation {
        id: "size_zero_succeeds",
        api: 820,
        documented: Some(E_VALUE),
        docs: "no answer listed for size 0; cuMemAlloc's rule for size 0 is INVALID_VALUE",
        observed: CUresult::CUDA_SUCCESS,
        seen_on: R580,
        branches: (580, 580),
    },
    Deviation {
        id: "free_null_succeeds",
        api: 822,
        documented: Some(E_VALUE),
        docs: "0 is no allocation; the listed code for a bad pointer is INVALID_VALUE",
        observed: CUresult::CUDA_SUCCESS,
        seen_on: R580,
        branches: (580, 580),
    },
    Deviation {
        id: "usage_unknown_bit_accepted",
        api: 823,
        documented: Some(E_VALUE),
        docs: "unknown bits of a properties field are invalid",
        observed: CUresult::CUDA_SUCCESS,
        seen_on: R580,
        branches: (580, 580),
    },
    Deviation {
        id: "win32_handle_on_linux",
        api: 823,
        documented: None,
        docs: "silent about a Windows handle type on Linux",
        observed: E_VALUE,
        seen_on: R580,
        branches: (580, 580),
    },
    Deviation {
        id: "bad_fd_unknown_error",
        api: 829,
        documented: Some(E_VALUE),
        docs: "an invalid handle is INVALID_VALUE",
        observed: CUresult::CUDA_ERROR_UNKNOWN,
        seen_on: R580,
        branches: (580, 580),
    },
    Deviation {
        id: "set_access_invalid_device",
        api: 831,
        documented: Some(E_VALUE),
        docs: "cuMemPoolSetAccess lists INVALID_VALUE for a bad location or a revoke of the owner",
        observed: CUresult::CUDA_ERROR_INVALID_DEVICE,
        seen_on: R580,
        branches: (580, 580),
    },
    Deviation {
        id: "set_access_not_supported",
        api: 831,
        documented: Some(E_VALUE),
        docs: "cuMemPoolSetAccess lists INVALID_VALUE (NOT_SUPPORTED only in 13.4's list)",
        observed: CUresult::CUDA_ERROR_NOT_SUPPORTED,
        seen_on: R580,
        branches: (580, 580),
    },
    Deviation {
        id: "set_access_count_zero_null_map_refused",
        api: 831,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "a map of 0 descriptors sets nothing",
        observed: E_VALUE,
        seen_on: R580,
        branches: (580, 580),
    },
    Deviation {
        id: "imported_pool_attribute_query_refused",
        api: 828,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "the Programming Guide reads usage statistics of imported pools",
        observed: E_VALUE,
        seen_on: R580,
        branches: (580, 580),
    },
    // Pool calls during a global-mode capture (capture.rs): their error lists name no capture
    // error, and the capture documentation does not list them among the prohibited calls.
    Deviation {
        id: "trim_during_global_capture_unsupported",
        api: 833,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "cuMemPoolTrimTo lists no capture error; it is not stream-ordered",
        observed: CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        seen_on: R580,
        branches: (580, 580),
    },
    Deviation {
        id: "get_attribute_during_global_capture_unsupported",
        api: 828,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "cuMemPoolGetAttribute lists no capture error; it is not stream-ordered",
        observed: CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        seen_on: R580,
        branches: (580, 580),
    },
    Deviation {
        id: "set_attribute_during_global_capture_unsupported",
        api: 832,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "cuMemPoolSetAttribute lists no capture error; it is not stream-ordered",
        observed: CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        seen_on: R580,
        branches: (580, 580),
    },
    Deviation {
        id: "ipc_pool_alloc_during_capture_not_supported",
        api: 821,
        documented: None,
        docs: "silent about capturing an allocation from an exportable pool (graph memory cannot be exported)",
        observed: CUresult::CUDA_ERROR_NOT_SUPPORTED,
        seen_on: R580,
        branches: (580, 580),
    },
    Deviation {
        id: "imported_pool_trim_refused",
        api: 833,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "the Programming Guide calls trimming an imported pool harmless",
        observed: E_VALUE,
        seen_on: R580,
        branches: (580, 580),
    },
];

pub fn get(id: &str) -> &'static Deviation {
    ALL.iter()
        .find(|d| d.id == id)
        .unwrap_or_else(|| panic!("no deviation declared as {id:?}"))
}

static DRIVER: OnceLock<(String, Option<u32>)> = OnceLock::new();

/// The driver version this process talks to ("580.159.04"), read from the libcuda file's name, and
/// its branch (580). Call once the machine is known.
pub fn set_driver(libcuda: &str) {
    let version = libcuda
        .rsplit_once("libcuda.so.")
        .map(|(_, v)| v.to_string())
        .filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap_or_default();
    let branch = version.split('.').next().and_then(|b| b.parse().ok());
    let _ = DRIVER.set((version, branch));
}

/// The driver version and branch, if known.
pub fn driver() -> (&'static str, Option<u32>) {
    DRIVER.get().map_or(("", None), |(v, b)| (v.as_str(), *b))
}

/// Whether the running driver is one `branches` covers.
pub fn in_branches(branches: (u32, u32)) -> bool {
    driver().1.is_some_and(|b| branches.0 <= b && b <= branches.1)
}

/// Check `got` against deviation `id`: the driver's answer inside its branches, the documented one
/// outside. `what` starts with the call's name (for the blame, as in `driver::expect`).
pub fn expect_code(id: &str, what: &str, got: CUresult) -> R {
    let d = get(id);
    let inside = in_branches(d.branches) || d.documented.is_none();
    let want = if inside { d.observed } else { d.documented.unwrap() };
    let documented = d
        .documented
        .map_or("(the documentation is silent)".to_string(), code_name);
    record(Observation {
        api: crate::driver::blame::api_of(what),
        call: what.to_string(),
        documented: documented.clone(),
        expected: code_name(want),
        observed: code_name(got),
        ok: got == want,
        deviation: Some(id.to_string()),
    });
    if got == want {
        return Ok(());
    }
    let (version, _) = driver();
    if inside && Some(got) == d.documented {
        return Err(Fail::Changed(format!(
            "{what}: returned the documented {documented}; driver {version} no longer shows deviation \
             `{id}` (seen on {}: {})",
            d.seen_on.join(", "),
            code_name(d.observed)
        )));
    }
    if let Some(api) = crate::driver::blame::api_of(what) {
        crate::driver::blame::set(api);
    }
    if !inside && got == d.observed {
        return Err(Fail::Departure(format!(
            "{what}: expected the documented {documented}, driver {version} returned {} — deviation `{id}`, \
             declared for branches {}–{} (seen on {}); extend its branches in driver/departures.rs if this driver is \
             meant to keep it",
            code_name(got),
            d.branches.0,
            d.branches.1,
            d.seen_on.join(", ")
        )));
    }
    Err(Fail::Wrong(format!(
        "{what}: expected {} ({}), driver returned {}; documented: {documented}",
        code_name(want),
        if inside {
            format!("deviation `{id}` of driver branches {}–{}", d.branches.0, d.branches.1)
        } else {
            "the documented answer".to_string()
        },
        code_name(got)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ids_are_unique() {
        for (i, a) in ALL.iter().enumerate() {
            assert!(ALL[i + 1..].iter().all(|b| b.id != a.id), "{} declared twice", a.id);
        }
    }
}
