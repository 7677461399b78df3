//! Where the driver departs from the documentation: each departure declared once, with the driver
//! versions it was seen on and the driver branches it is expected on (the idea of wgpu's
//! `FailureCase`).
//!
//! On a branch a departure was verified on (its own `branches`, or one a team recorded in its
//! expectation file) a check expects the driver's answer; elsewhere the documented one. The report
//! shows both either way. A departure that no longer reproduces on a verified branch is `changed`;
//! one that reproduces on a branch it was not verified on is a `known-departure`, counted apart and
//! not failing; an answer that is neither fails. CONFORMANCE_STRICT=documented fails every
//! departure from the documentation. Departures the documentation says nothing about
//! (`documented: None`) are expected everywhere.

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
    /// GPU models (as cuDeviceGetName names them) it was verified on, where the answer depends on
    /// the device; empty: the same on every model. On another model the documented answer passes
    /// and the departure's is a known departure.
    pub models: &'static [&'static str],
    /// A departure no call's code shows, only what the process sees (data, an effect): the
    /// documented and the observed behaviour in words, shown in place of `documented` and
    /// `observed` (which then only tell the two apart). Judged by [`expect_behaviour`].
    pub shows: Option<Shows>,
}

/// What a departure of behaviour looks like, documented and observed, in words.
#[derive(Clone, Copy, Debug)]
pub struct Shows {
    pub documented: &'static str,
    pub observed: &'static str,
}

impl Deviation {
    /// The documented answer as the report shows it.
    pub fn documented_text(&self) -> String {
        match (self.shows, self.documented) {
            (Some(s), _) => s.documented.to_string(),
            (None, Some(d)) => code_name(d),
            (None, None) => "(the documentation is silent)".to_string(),
        }
    }
    /// The observed answer as the report shows it.
    pub fn observed_text(&self) -> String {
        self.shows
            .map_or_else(|| code_name(self.observed), |s| s.observed.to_string())
    }
    /// `code` as the report shows it for this departure.
    fn answer_text(&self, code: CUresult) -> String {
        match self.shows {
            Some(s) if code == self.observed => s.observed.to_string(),
            Some(s) if Some(code) == self.documented => s.documented.to_string(),
            _ => code_name(code),
        }
    }
}

/// A departure the same on every GPU model.
const ANY: &[&str] = &[];

const E_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const R580: &[&str] = &["580.159.04"];
/// The GPU models departures and hangs were verified on, as cuDeviceGetName names them.
pub const H100_SXM: &str = "NVIDIA H100 80GB HBM3";
pub const H200: &str = "NVIDIA H200";

pub const ALL: &[Deviation] = &[
    Deviation {
        id: "size_zero_succeeds",
        api: 820,
        documented: Some(E_VALUE),
        docs: "no answer listed for size 0; cuMemAlloc's rule for size 0 is INVALID_VALUE",
        observed: CUresult::CUDA_SUCCESS,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "free_null_succeeds",
        api: 822,
        documented: Some(E_VALUE),
        docs: "0 is no allocation; the listed code for a bad pointer is INVALID_VALUE",
        observed: CUresult::CUDA_SUCCESS,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    // Usage bits by branch (issue 38). R580 ignores an unknown bit; the 12.2-era driver (R535)
    // refused the then-unknown bit 2 with INVALID_VALUE (rmm #1872), the documented answer, so
    // this departure stays R580's alone.
    Deviation {
        id: "usage_unknown_bit_accepted",
        api: 823,
        documented: Some(E_VALUE),
        docs: "unknown bits of a properties field are invalid",
        observed: CUresult::CUDA_SUCCESS,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    // CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS (2) is a usage bit from CUDA 12.8 on; a driver before
    // 12.8 (R535, CUDA 12.2: rmm #1872, cudf-spark #14896, public reports) refuses it as unknown.
    Deviation {
        id: "hw_decompress_usage_refused",
        api: 823,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "CUDA 12.8 and later name CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS a usage bit of cuMemPoolCreate",
        observed: E_VALUE,
        seen_on: &["535.x (CUDA 12.2; rmm #1872, public report)"],
        branches: (0, 565),
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "win32_handle_on_linux",
        api: 823,
        documented: None,
        docs: "silent about a Windows handle type on Linux",
        observed: E_VALUE,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "bad_fd_unknown_error",
        api: 829,
        documented: Some(E_VALUE),
        docs: "an invalid handle is INVALID_VALUE",
        observed: CUresult::CUDA_ERROR_UNKNOWN,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "set_access_invalid_device",
        api: 831,
        documented: Some(E_VALUE),
        docs: "cuMemPoolSetAccess lists INVALID_VALUE for a bad location or a revoke of the owner",
        observed: CUresult::CUDA_ERROR_INVALID_DEVICE,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "set_access_not_supported",
        api: 831,
        documented: Some(E_VALUE),
        docs: "cuMemPoolSetAccess lists INVALID_VALUE (NOT_SUPPORTED only in 13.4's list)",
        observed: CUresult::CUDA_ERROR_NOT_SUPPORTED,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "set_access_count_zero_null_map_refused",
        api: 831,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "a map of 0 descriptors sets nothing",
        observed: E_VALUE,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "imported_pool_attribute_query_refused",
        api: 828,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "the Programming Guide reads usage statistics of imported pools",
        observed: E_VALUE,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    // Pool calls during a global-mode capture (cases/capture/pool_calls.rs): their error lists name no capture
    // error, and the capture documentation does not list them among the prohibited calls.
    Deviation {
        id: "trim_during_global_capture_unsupported",
        api: 833,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "cuMemPoolTrimTo lists no capture error; it is not stream-ordered",
        observed: CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "get_attribute_during_global_capture_unsupported",
        api: 828,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "cuMemPoolGetAttribute lists no capture error; it is not stream-ordered",
        observed: CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "set_attribute_during_global_capture_unsupported",
        api: 832,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "cuMemPoolSetAttribute lists no capture error; it is not stream-ordered",
        observed: CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "ipc_pool_alloc_during_capture_not_supported",
        api: 821,
        documented: None,
        docs: "silent about capturing an allocation from an exportable pool (graph memory cannot be exported)",
        observed: CUresult::CUDA_ERROR_NOT_SUPPORTED,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "max_size_beyond_memory_out_of_memory",
        api: 823,
        documented: None,
        docs: "silent about a maxSize larger than the device's memory",
        observed: CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        seen_on: R580,
        branches: (580, 580),
        // 1 << 60 and SIZE_MAX are beyond every device's memory: the same on every model (seen on
        // the H100 and the H200).
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "first_free_unmaps_second_import",
        api: 830,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "silent on one pointer imported twice; cuda-python cites nvbug 5570902: the first free unmapping \
               both imports is a driver bug",
        observed: E_VALUE,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    Deviation {
        id: "imported_pool_trim_refused",
        api: 833,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "the Programming Guide calls trimming an imported pool harmless",
        observed: E_VALUE,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
    // The checkpoint leg (issue 57): R580's own engine restores the exporter's pool allocations into
    // new memory, while what it exported before the checkpoint (the pool's fd, the pointers' export
    // data) still names the memory of before: an importer maps that, reads the contents of the
    // checkpoint, and its writes never reach the exporter. Seen on one H200, 2026-11-29, in the
    // leg, 4 runs of 4 (three with the driver's engine, one with cump-checkpoint-engine).
    Deviation {
        id: "checkpoint_earlier_exports_stale",
        api: 829,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "an imported pool's memory is the exporter's; nothing lists a checkpoint as ending that",
        observed: CUresult::CUDA_ERROR_UNKNOWN,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: Some(Shows {
            documented: "the importer's writes reach the exporter's allocation",
            observed: "the importer maps the memory of before the checkpoint; its writes never reach the exporter",
        }),
    },
    // The checkpoint leg (issue 57): R580's own engine checkpoints a process that maps another
    // process's pool memory, then cannot restore it; the process stays checkpointed and Unlock
    // answers ILLEGAL_STATE. Seen on one H200, 2026-11-28, with a parent checkpointing its child.
    Deviation {
        id: "checkpoint_importer_not_restored",
        api: 830,
        documented: Some(CUresult::CUDA_SUCCESS),
        docs: "cuCheckpointProcessRestore restores a checkpointed process; no exception is listed for imported pool memory",
        observed: CUresult::CUDA_ERROR_OPERATING_SYSTEM,
        seen_on: R580,
        branches: (580, 580),
        models: ANY,
        shows: None,
    },
];

pub fn get(id: &str) -> &'static Deviation {
    ALL.iter()
        .find(|d| d.id == id)
        .unwrap_or_else(|| panic!("no deviation declared as {id:?}"))
}

static DRIVER: OnceLock<(String, Option<u32>)> = OnceLock::new();

/// The driver version this process talks to ("580.159.04", as `harness::identity` found it; empty
/// when unknown) and so its branch (580). Call once the machine is known.
pub fn set_driver(version: &str) {
    let branch = version.split('.').next().and_then(|b| b.parse().ok());
    let _ = DRIVER.set((version.to_string(), branch));
}

/// The driver version and branch, if known.
pub fn driver() -> (&'static str, Option<u32>) {
    DRIVER.get().map_or(("", None), |(v, b)| (v.as_str(), *b))
}

/// Whether driver branch `branch` (None: unknown) is one `branches` covers, inclusive.
pub fn branch_within(branches: (u32, u32), branch: Option<u32>) -> bool {
    branch.is_some_and(|b| branches.0 <= b && b <= branches.1)
}

/// Whether the running driver is one `branches` covers.
pub fn in_branches(branches: (u32, u32)) -> bool {
    branch_within(branches, driver().1)
}

/// The variable that makes every departure from the documentation fail, verified or not.
pub const STRICT_VAR: &str = "CONFORMANCE_STRICT";

/// How this run judges a declared departure, crash or hang: whether it is strict
/// (CONFORMANCE_STRICT=documented: every departure from the documentation fails, verified or not),
/// and the branches a team verified beyond the declared ones ((departure id or `*`, branch), the
/// expectation file's `[[verified]]` entries, `harness::expect`). A value the harness makes from
/// the process's settings and expectation file (`harness::case::Env`) and hands to every check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    pub strict: bool,
    pub verified: Vec<(String, u32)>,
}

impl Policy {
    /// Whether the expectation file verified `id` (or every departure, `*`) on the running branch.
    pub(crate) fn user_verified(&self, id: &str) -> bool {
        self.verified_on(id, driver().1)
    }

    /// Whether the expectation file verified `id` (or every departure, `*`) on driver branch
    /// `branch` (None: unknown, on which nothing is verified).
    pub fn verified_on(&self, id: &str, branch: Option<u32>) -> bool {
        branch.is_some_and(|b| self.verified.iter().any(|(v, vb)| *vb == b && (v == id || v == "*")))
    }
}

/// The branches departure `d` counts as verified on: its own, then the user's (and the GPU models,
/// for a departure of some models).
fn verified_text(p: &Policy, d: &Deviation) -> String {
    let mut s = format!("{}–{}", d.branches.0, d.branches.1);
    if !d.models.is_empty() {
        s.push_str(&format!(
            " on {} (this device: {})",
            d.models.join(", "),
            with_model(|m| m.to_string())
        ));
    }
    for (id, b) in &p.verified {
        if id == d.id || id == "*" {
            s.push_str(&format!(", {b} (CONFORMANCE_EXPECT)"));
        }
    }
    s
}

/// Whether a declared crash of `branches` was verified on the running driver's branch: its own
/// branches, or a `[[verified]]` entry for every departure (`*`) of this branch.
pub fn crash_verified_here(p: &Policy, branches: (u32, u32)) -> bool {
    in_branches(branches) || p.user_verified("*")
}

/// Whether departure `d` was verified on the running driver's branch (and, for a departure of
/// some GPU models, on the model of the trial's device).
pub fn verified_here(p: &Policy, d: &Deviation) -> bool {
    let model = d.models.is_empty() || with_model(|m| d.models.contains(&m));
    model && (in_branches(d.branches) || p.user_verified(d.id))
}

thread_local! {
    /// The model of the device the trial on this thread runs on (`harness::execute`).
    static MODEL: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Say which GPU model the trial on this thread runs on ("" when none).
pub fn set_model(name: &str) {
    MODEL.with(|m| *m.borrow_mut() = name.to_string());
}

/// The model of the trial's device on this thread ("" when unknown).
pub fn current_model() -> String {
    with_model(|m| m.to_string())
}

fn with_model<T>(f: impl FnOnce(&str) -> T) -> T {
    MODEL.with(|m| f(&m.borrow()))
}

thread_local! {
    static KNOWN: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Record a known departure the trial on this thread met (`driver::hangs` too).
pub(crate) fn push_known(line: String) {
    KNOWN.with(|k| k.borrow_mut().push(line));
}

/// The known departures the trial that just ran on this thread met (and forget them).
pub fn take_known() -> Vec<String> {
    KNOWN.with(|k| std::mem::take(&mut *k.borrow_mut()))
}

/// "driver 580.159.04 (branch 580)", or what is missing.
pub fn driver_text() -> String {
    match driver() {
        ("", _) => "a driver of unknown version".to_string(),
        (v, Some(b)) => format!("driver {v} (branch {b})"),
        (v, None) => format!("driver {v} (branch unknown)"),
    }
}

/// What an answer to a call with a declared departure comes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    /// The answer expected here.
    Pass,
    /// The departure's answer on a branch it was not verified on: accepted, reported apart.
    Known,
    /// The documented answer on a branch the departure was verified on: the driver changed.
    Changed,
    /// The departure's answer under CONFORMANCE_STRICT=documented.
    Strict,
    /// Neither the documented answer nor the departure's.
    Wrong,
}

/// The policy, as a pure function: departure `d`, the answer `got`, whether `d` was verified on
/// this branch, whether the run is strict; and the answer expected.
pub fn judge(d: &Deviation, got: CUresult, verified: bool, strict: bool) -> (Judged, CUresult) {
    let strict = strict && d.documented.is_some();
    let verified = verified || d.documented.is_none();
    let want = match d.documented {
        Some(doc) if strict || !verified => doc,
        _ => d.observed,
    };
    let j = if got == want {
        Judged::Pass
    } else if got == d.observed && strict {
        Judged::Strict
    } else if got == d.observed {
        Judged::Known
    } else if verified && !strict && Some(got) == d.documented {
        Judged::Changed
    } else {
        Judged::Wrong
    };
    (j, want)
}

/// Check `got` against deviation `id` (`judge`, on this run's branch and policy `p`): a known
/// departure is recorded for the report and the case goes on; a change, a strict failure or a
/// wrong answer end it. `what` starts with the call's name (for the blame, as in `driver::expect`).
pub fn expect_code(p: &Policy, id: &str, what: &str, got: CUresult) -> R {
    let d = get(id);
    let (judged, want) = judge(d, got, verified_here(p, d), p.strict);
    let documented = d.documented_text();
    let code_name = |c: CUresult| d.answer_text(c);
    record(Observation {
        api: crate::driver::blame::api_of(what).map(u64::from),
        call: what.to_string(),
        documented: documented.clone(),
        expected: code_name(want),
        observed: code_name(got),
        ok: matches!(judged, Judged::Pass | Judged::Known),
        deviation: Some(id.to_string()),
        ..Observation::default()
    });
    let driver = driver_text();
    let seen = format!(
        "verified on branches {}; seen on {}",
        verified_text(p, d),
        d.seen_on.join(", ")
    );
    match judged {
        Judged::Pass => return Ok(()),
        Judged::Known => {
            KNOWN.with(|k| {
                k.borrow_mut().push(format!(
                    "{what}: {driver} returned {}, departure `{id}` from the documented {documented} ({seen}); \
                     not verified on this branch: record it in a CONFORMANCE_EXPECT [[verified]] entry once checked",
                    code_name(got)
                ))
            });
            return Ok(());
        }
        Judged::Changed => {
            return Err(Fail::Changed(format!(
                "{what}: returned the documented {documented}; {driver} no longer shows departure `{id}` ({seen}: {})",
                code_name(d.observed)
            )))
        }
        Judged::Strict | Judged::Wrong => {}
    }
    if d.shows.is_none() {
        crate::driver::blame::answered(what, got);
    }
    if judged == Judged::Strict {
        return Err(Fail::Departure(format!(
            "{what}: expected the documented {documented}, {driver} returned {} — departure `{id}` ({seen}), \
             a failure because {STRICT_VAR}=documented",
            code_name(got)
        )));
    }
    Err(Fail::Wrong(format!(
        "{what}: expected {}, {driver} returned {}; documented: {documented}; departure `{id}`: {} ({seen})",
        code_name(want),
        code_name(got),
        code_name(d.observed)
    )))
}

/// Check a departure of behaviour ([`Deviation::shows`]): `holds`, whether the documented behaviour
/// held. Judged as [`expect_code`] judges the documented or the observed answer.
pub fn expect_behaviour(p: &Policy, id: &str, what: &str, holds: bool) -> R {
    let d = get(id);
    let got = if holds {
        d.documented.unwrap_or(CUresult::CUDA_SUCCESS)
    } else {
        d.observed
    };
    expect_code(p, id, what, got)
}

#[cfg(test)]
mod tests {
    use super::*;
    /// The policy's table: each row a mutant of `judge` it kills (swap verified/unverified, ignore
    /// strictness, take a change for a pass, accept any answer).
    #[test]
    fn policy_table() {
        let d = get("size_zero_succeeds"); // documented INVALID_VALUE, observed SUCCESS
        let (doc, dep, other) = (
            CUresult::CUDA_ERROR_INVALID_VALUE,
            CUresult::CUDA_SUCCESS,
            CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        );
        use Judged::*;
        // (answer, verified here, strict) -> judged
        let rows = [
            (dep, true, false, Pass),
            (doc, true, false, Changed),
            (dep, false, false, Known),
            (doc, false, false, Pass),
            (dep, true, true, Strict),
            (dep, false, true, Strict),
            (doc, true, true, Pass),
            (other, true, false, Wrong),
            (other, false, false, Wrong),
            (other, false, true, Wrong),
        ];
        for (got, verified, strict, want) in rows {
            assert_eq!(
                judge(d, got, verified, strict).0,
                want,
                "{got:?} verified={verified} strict={strict}"
            );
        }
        // A departure the documentation is silent on is expected everywhere, strict or not.
        let silent = get("win32_handle_on_linux");
        assert_eq!(judge(silent, silent.observed, false, true).0, Pass);
    }

    /// The expectation file's `[[verified]]` entries count on their branch only, for their
    /// departure or, as `*`, for every one; nothing is verified on an unknown branch.
    #[test]
    fn a_policy_verifies_on_the_branches_its_file_names() {
        let p = Policy {
            strict: false,
            verified: vec![("size_zero_succeeds".into(), 590), ("*".into(), 600)],
        };
        assert!(p.verified_on("size_zero_succeeds", Some(590)));
        assert!(!p.verified_on("size_zero_succeeds", Some(580)));
        assert!(!p.verified_on("free_null_succeeds", Some(590)));
        assert!(p.verified_on("free_null_succeeds", Some(600)));
        assert!(!p.verified_on("size_zero_succeeds", None));
        assert!(!Policy::default().verified_on("size_zero_succeeds", Some(590)));
    }

    #[test]
    fn ids_are_unique() {
        for (i, a) in ALL.iter().enumerate() {
            assert!(ALL[i + 1..].iter().all(|b| b.id != a.id), "{} declared twice", a.id);
        }
    }
}
