//! Figures of the driver that depend on the GPU model (a pool's reservation chunk, …): each
//! measured at run time by the trial that needs it, and judged against a reference declared per
//! model and driver branch, with where and when it was measured. On a model with no reference the
//! figure is `uncalibrated`: recorded and noted, never a skip, never a failure.

use crate::driver::check::note;
use crate::driver::departures::{branch_within, current_model, driver, H100_SXM, H200};
use crate::driver::fail::{Fail, R};
use crate::driver::observe::{record, Observation};

/// One reference: the value measured on a model under a range of driver branches.
pub struct Reference {
    pub model: &'static str,
    pub branches: (u32, u32),
    pub value: u64,
    pub measured: &'static str,
}

/// A figure and its references.
pub struct Figure {
    pub id: &'static str,
    pub api: u32,
    pub what: &'static str,
    pub references: &'static [Reference],
}

pub const FIGURES: &[Figure] = &[Figure {
    id: "pool_chunk",
    api: 828,
    what: "the bytes a fresh device pool reserves for a 1-byte allocation (its reservation chunk)",
    references: &[
        Reference {
            model: H100_SXM,
            branches: (580, 580),
            value: 32 << 20,
            measured: "580.159.04, 2026-11-24 (attr and trim trials), again 2026-11-26",
        },
        Reference {
            model: H200,
            branches: (580, 580),
            value: 32 << 20,
            measured: "580.159.04, 2026-11-26 (one H200 and two H200)",
        },
    ],
}];

fn figure(id: &str) -> &'static Figure {
    FIGURES
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no figure declared as {id:?}"))
}

/// What a measured figure came to against its references.
#[derive(Debug, PartialEq, Eq)]
pub enum Calibration {
    /// The reference of this model and branch.
    Matches,
    /// A reference exists and says another value.
    Differs(u64),
    /// No reference for this model and branch.
    Uncalibrated,
}

/// The pure rule: `measured` on `model` under `branch` against `f`'s references.
pub fn calibrate(f: &Figure, model: &str, branch: Option<u32>, measured: u64) -> Calibration {
    let r = f
        .references
        .iter()
        .find(|r| r.model == model && branch_within(r.branches, branch));
    match r {
        Some(r) if r.value == measured => Calibration::Matches,
        Some(r) => Calibration::Differs(r.value),
        None => Calibration::Uncalibrated,
    }
}

/// Judge figure `id`, measured as `measured` on the trial's device: a match passes, a difference
/// is a change of a calibrated model (`changed`, not failing), no reference is `uncalibrated`.
pub fn check_figure(id: &str, measured: u64) -> R {
    let f = figure(id);
    let model = current_model();
    let (version, branch) = driver();
    let c = calibrate(f, &model, branch, measured);
    let expected = match &c {
        Calibration::Matches => measured.to_string(),
        Calibration::Differs(v) => v.to_string(),
        Calibration::Uncalibrated => "uncalibrated (no reference for this model and branch)".to_string(),
    };
    record(Observation {
        api: Some(f.api.into()),
        call: format!("figure `{id}`: {}", f.what),
        documented: "(the documentation is silent)".into(),
        expected,
        observed: measured.to_string(),
        ok: !matches!(c, Calibration::Differs(_)),
        deviation: Some(format!("figure:{id}")),
        ..Observation::default()
    });
    let refs: Vec<String> = f
        .references
        .iter()
        .map(|r| {
            format!(
                "{} on {} (branches {}–{}; {})",
                r.value, r.model, r.branches.0, r.branches.1, r.measured
            )
        })
        .collect();
    match c {
        Calibration::Matches => Ok(()),
        Calibration::Differs(v) => Err(Fail::Changed(format!(
            "figure `{id}` ({}): measured {measured} on {model}, driver {version}; its reference is {v}: {}",
            f.what,
            refs.join("; ")
        ))),
        Calibration::Uncalibrated => {
            note(format!(
                "uncalibrated: figure `{id}` ({}) measured {measured} on {} with driver {version}; references: {}",
                f.what,
                if model.is_empty() { "an unknown model" } else { &model },
                refs.join("; ")
            ));
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    /// Each row a mutant of `calibrate` it kills: any model matching, a value never compared, the
    /// branch ignored.
    #[test]
    fn calibration_table() {
        let f = figure("pool_chunk");
        let c = 32 << 20;
        assert_eq!(calibrate(f, H100_SXM, Some(580), c), Calibration::Matches);
        assert_eq!(calibrate(f, H100_SXM, Some(580), 2 << 20), Calibration::Differs(c));
        assert_eq!(
            calibrate(f, "NVIDIA A100-SXM4-40GB", Some(580), c),
            Calibration::Uncalibrated
        );
        assert_eq!(calibrate(f, H200, Some(590), c), Calibration::Uncalibrated);
        assert_eq!(calibrate(f, H200, None, c), Calibration::Uncalibrated);
    }
}
