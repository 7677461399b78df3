//! The cudarc example's `interop.rs` built against the cudarc version this package's feature picks
//! (`cuda-11080`, `cuda-12020`, `cuda-12060` or `cuda-13000`, forwarded to cudarc's under the same
//! name only to pick it: the example's files need no feature of the crate that includes them), and
//! tested there: every code of the crate root's CUDA 12.9 header that this cudarc's `CUresult`
//! names maps to it and back under the same name, exactly as many as src/expected.rs (from
//! cudarc's source) counts, and the ones it lacks, like the crate's own
//! `CUDA_MEMPOOL_SYS_LOAD_FAILED`, are `None`.

#[path = "../../../examples/with_cudarc/interop.rs"]
pub mod interop;

#[cfg(test)]
#[rustfmt::skip]
mod expected;

#[cfg(not(any(
    feature = "cuda-11080",
    feature = "cuda-12020",
    feature = "cuda-12060",
    feature = "cuda-13000"
)))]
compile_error!("enable one of the features cuda-11080, cuda-12020, cuda-12060, cuda-13000 (cudarc's CUDA version)");

/// The cudarc feature this build forwards.
#[cfg(feature = "cuda-11080")]
pub const CUDARC_FEATURE: &str = "cuda-11080";
/// The cudarc feature this build forwards.
#[cfg(feature = "cuda-12020")]
pub const CUDARC_FEATURE: &str = "cuda-12020";
/// The cudarc feature this build forwards.
#[cfg(feature = "cuda-12060")]
pub const CUDARC_FEATURE: &str = "cuda-12060";
/// The cudarc feature this build forwards.
#[cfg(feature = "cuda-13000")]
pub const CUDARC_FEATURE: &str = "cuda-13000";

#[cfg(test)]
mod tests {
    use super::expected::{CUDARC, HEADER, VERSIONS};
    use super::interop::{result_from_cudarc, result_to_cudarc};
    use super::CUDARC_FEATURE;
    use cuda_mempool_sys::CUresult;

    /// What src/expected.rs says of this build's cudarc version: how many of the header's codes
    /// it names, and the ones it lacks.
    fn this_version() -> (usize, &'static [&'static str]) {
        let (_, named, lacks) = VERSIONS
            .iter()
            .find(|(f, _, _)| *f == CUDARC_FEATURE)
            .unwrap_or_else(|| panic!("src/expected.rs does not know cudarc's {CUDARC_FEATURE}"));
        assert_eq!(named + lacks.len(), HEADER.len());
        (*named, lacks)
    }

    /// The counts are of the cudarc this package builds with.
    #[test]
    fn expectations_are_of_this_cudarc() {
        let lock = include_str!("../Cargo.lock");
        let pinned = lock
            .split("[[package]]")
            .find(|p| p.contains("\nname = \"cudarc\"\n"))
            .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = \"")))
            .map(|v| v.trim_end_matches('"'));
        assert_eq!(
            pinned,
            Some(CUDARC),
            "Cargo.lock's cudarc is not the one src/expected.rs was read from"
        );
    }

    /// Every code of the header this cudarc names maps to it and back, under the same name, and
    /// as many as src/expected.rs counts; the others are `None`.
    #[test]
    fn every_named_code_maps_both_ways() {
        let (named, lacks) = this_version();
        let mut mapped = 0;
        for &(value, name) in HEADER {
            let ours = CUresult(value);
            assert_eq!(ours.name(), Some(name), "{value}");
            match result_to_cudarc(ours) {
                Some(theirs) => {
                    mapped += 1;
                    assert!(
                        !lacks.contains(&name),
                        "{name}: cudarc's {CUDARC_FEATURE} lacks it, yet it maps"
                    );
                    // The same name on both sides, and back to the same value.
                    assert_eq!(format!("{theirs:?}"), name);
                    assert_eq!(result_from_cudarc(theirs), ours);
                }
                None => assert!(
                    lacks.contains(&name),
                    "{name}: cudarc's {CUDARC_FEATURE} names it, yet it is None"
                ),
            }
        }
        assert_eq!(mapped, named, "cudarc's {CUDARC_FEATURE}");
    }

    /// Nothing outside the header's codes maps: not the crate's own code, not an unnamed value.
    #[test]
    fn other_values_are_none() {
        let (named, _) = this_version();
        let mapped = (0..100_000)
            .filter(|&v| result_to_cudarc(CUresult(v)).is_some())
            .count();
        assert_eq!(mapped, named);
        assert_eq!(result_to_cudarc(CUresult::CUDA_MEMPOOL_SYS_LOAD_FAILED), None);
        assert_eq!(result_to_cudarc(CUresult(u32::MAX)), None);
    }

    /// A code this cudarc lacks: `None`.
    #[test]
    fn lacking_codes_are_none() {
        let (_, lacks) = this_version();
        for name in lacks {
            let &(value, _) = HEADER.iter().find(|(_, n)| n == name).unwrap();
            assert_eq!(result_to_cudarc(CUresult(value)), None, "{name}");
        }
        // By this crate's constant, and independently of src/expected.rs: CUDA 12.8's
        // CUDA_ERROR_KEY_ROTATION is in cudarc's enum from its cuda-12080 on.
        let key_rotation = result_to_cudarc(CUresult::CUDA_ERROR_KEY_ROTATION);
        assert_eq!(key_rotation.is_some(), CUDARC_FEATURE == "cuda-13000");
    }

    /// The counts of src/expected.rs, stated per feature (cudarc 0.19.10's src/driver/sys/mod.rs:
    /// the `cudaError_enum` under each feature names that many of the header's 100 codes). A
    /// cudarc that names others changes src/expected.rs through `cargo xtask regen`, and this.
    #[test]
    fn counts_per_feature() {
        let (named, _) = this_version();
        let stated = match CUDARC_FEATURE {
            "cuda-11080" => 90,
            "cuda-12020" => 93,
            "cuda-12060" => 97,
            "cuda-13000" => 100,
            other => panic!("no count stated for {other}"),
        };
        assert_eq!((named, HEADER.len()), (stated, 100));
    }
}
