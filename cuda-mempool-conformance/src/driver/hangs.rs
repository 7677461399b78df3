//! Calls the driver was seen to leave unanswered, each declared once (the idea of `departures.rs`,
//! for a hang): the call and its arguments, what was found to decide it, and the host shapes (GPU
//! model and number of GPUs) and driver branches it was verified on.

#[cfg(test)]
use crate::driver::departures::H100_SXM;
use crate::driver::departures::H200;
use crate::driver::departures::{branch_within, current_model, driver, driver_text, push_known, Policy, STRICT_VAR};
use crate::driver::fail::{Fail, R};
use crate::driver::observe::{record, Observation};
use std::sync::OnceLock;

/// The host's shape as a hang declaration names it: how many GPUs the host has (all of them,
/// whatever this process sees), set once the machine is known.
static HOST_GPUS: OnceLock<usize> = OnceLock::new();

/// Record how many GPUs the host has (`harness::machine::Machine::host_gpus`).
pub fn set_host_gpus(n: usize) {
    let _ = HOST_GPUS.set(n);
}

/// A call the driver was seen to leave unanswered: where it was seen, what was found to decide it
/// (`docs/conformance/hang/`), and the host shapes it was verified on. Such a call runs on a
/// watched thread (`harness::bounded`); a hang on a verified shape passes and is recorded, on another
/// shape it is a known departure, under CONFORMANCE_STRICT=documented a failure (no documentation
/// promises a hang). Where the call answers, its row is judged as any other.
pub struct Hang {
    pub id: &'static str,
    pub api: u32,
    /// The call and the arguments it hangs on.
    pub call: &'static str,
    /// What the calibration found decides it.
    pub decided_by: &'static str,
    pub seen_on: &'static [&'static str],
    pub branches: (u32, u32),
    /// Host shapes it was verified on: a GPU model and the least number of GPUs on the host.
    pub hosts: &'static [(&'static str, usize)],
}

pub const HANGS: &[Hang] = &[Hang {
    id: "max_size_size_max_hangs_driver",
    api: 823,
    call: "cuMemPoolCreate with maxSize = SIZE_MAX",
    decided_by: "the host: on a host of two H200 (NVLink) R580 spins a CPU in the call, holding the \
                 process's driver, for maxSize 1 << 63 and for every value from 2^64 - 32 MiB up, with \
                 every device visible or one; not every time (a later series answered OUT_OF_MEMORY at \
                 once); 1 << 62, 3 << 62 and 2^64 - 1 GiB answer at once; never seen on one-GPU hosts",
    seen_on: &["580.159.04 on 2× NVIDIA H200, 2026-11-26"],
    branches: (580, 580),
    hosts: &[(H200, 2)],
}];

pub fn hang(id: &str) -> &'static Hang {
    HANGS
        .iter()
        .find(|h| h.id == id)
        .unwrap_or_else(|| panic!("no hang declared as {id:?}"))
}

/// The pure rule: whether hang `h` was verified on a host of `gpus` GPUs of `model` under driver
/// branch `branch`.
pub fn shape_verified(h: &Hang, model: &str, gpus: usize, branch: Option<u32>) -> bool {
    branch_within(h.branches, branch) && h.hosts.iter().any(|(m, n)| *m == model && gpus >= *n)
}

/// Whether hang `h` was verified here: this host's shape and branch, or a `[[verified]]` entry for
/// it on this branch (policy `p`).
fn hang_verified_here(p: &Policy, h: &Hang) -> bool {
    let gpus = HOST_GPUS.get().copied().unwrap_or(0);
    shape_verified(h, &current_model(), gpus, driver().1) || p.user_verified(h.id)
}

/// A call with declared hang `id` gave no answer within `after`: recorded, and judged as the
/// declaration says (see [`Hang`]), under policy `p`. `what` starts with the call's name.
pub fn expect_hang(p: &Policy, id: &str, what: &str, after: std::time::Duration) -> R {
    let h = hang(id);
    let verified = hang_verified_here(p, h);
    let model = current_model();
    let observed = format!("no answer within {:.1} s", after.as_secs_f64());
    let shape = format!(
        "{} on a host of {} GPUs",
        if model.is_empty() { "an unknown model" } else { &model },
        HOST_GPUS.get().copied().unwrap_or(0)
    );
    let verified_on: Vec<String> = h.hosts.iter().map(|(m, n)| format!("{n}+ × {m}")).collect();
    let seen = format!(
        "declared hang `{id}`, verified on branches {}–{} on hosts of {}; seen on {}; decided by {}",
        h.branches.0,
        h.branches.1,
        verified_on.join(", "),
        h.seen_on.join(", "),
        h.decided_by
    );
    record(Observation {
        api: Some(h.api.into()),
        call: what.to_string(),
        documented: "(an answer)".into(),
        expected: if verified {
            "no answer (declared hang)".into()
        } else {
            "an answer".into()
        },
        observed: observed.clone(),
        ok: !p.strict,
        deviation: Some(id.to_string()),
        ..Observation::default()
    });
    if p.strict {
        crate::driver::blame::set(h.api);
        return Err(Fail::Departure(format!(
            "{what}: {observed} on {shape} — {seen}; a failure because {STRICT_VAR}=documented"
        )));
    }
    if !verified {
        push_known(format!(
            "{what}: {observed} on {shape}, {} ({seen}); not verified on this host shape or branch: \
                 record it in a CONFORMANCE_EXPECT [[verified]] entry once checked",
            driver_text()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    /// Each row a mutant of `shape_verified` it kills: the GPU count, the model or the branch
    /// ignored.
    #[test]
    fn shapes() {
        let h = hang("max_size_size_max_hangs_driver");
        let rows = [
            (H200, 2, Some(580), true),
            (H200, 4, Some(580), true),
            (H200, 1, Some(580), false),
            (H100_SXM, 2, Some(580), false),
            (H200, 2, Some(590), false),
            (H200, 2, None, false),
        ];
        for (model, gpus, branch, want) in rows {
            assert_eq!(
                shape_verified(h, model, gpus, branch),
                want,
                "{model} x{gpus} {branch:?}"
            );
        }
    }
}
