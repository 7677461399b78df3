//! No safe code reads an uninitialised byte through a generated type. Safe code can leave bytes
//! uninitialised in two ways: a struct's padding (which no generated `Debug`, `==` or `Hash` reads:
//! they go field by field) and a C union built through a field narrower than the union, which the
//! generator removes: every C union becomes a value each constructor writes whole
//! (xtask/src/table/unions.rs), so no module holds a `union` (checked below).
//!
//! The reads themselves are only caught by an interpreter that tracks initialisation: run this under
//! Miri, as `cargo xtask ci` does:
//! `cargo +nightly miri test -p cuda-mempool-sys --features cuda-11,cuda-12,cuda-13 --test uninit`.
//! The code before the rewrite failed it (docs/sys/uninit-2026-11-28/: Miri stops in
//! `CUmemLocation_st`'s `Debug`, reading `id` when only `localized` was written).
#![forbid(unsafe_code)]

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Every trait that reads a value: `Debug`, `==` (with itself and with a copy), `Hash`.
fn read_all<T: std::fmt::Debug + PartialEq + Hash + Copy>(v: &T) -> String {
    let text = format!("{v:?}");
    let copy = *v;
    // Both operand orders on purpose: each runs `eq` with the other value as `self`.
    #[allow(clippy::eq_op, clippy::nonminimal_bool)]
    let equal = *v == copy && copy == *v;
    assert!(equal, "{text}");
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    let mut h2 = DefaultHasher::new();
    copy.hash(&mut h2);
    assert_eq!(h.finish(), h2.finish(), "{text}");
    text
}

/// No generated module declares a `union`: each one bindgen wrote was rewritten.
#[test]
fn no_generated_module_holds_a_union() {
    for (name, text) in [
        ("common", include_str!("../src/generated/common.rs")),
        ("cuda11", include_str!("../src/generated/cuda11.rs")),
        ("cuda12", include_str!("../src/generated/cuda12.rs")),
        ("cuda13", include_str!("../src/generated/cuda13.rs")),
    ] {
        let unions: Vec<&str> = text
            .lines()
            .filter(|l| l.trim_start().starts_with("pub union "))
            .collect();
        assert!(unions.is_empty(), "{name}: {unions:?}");
    }
}

#[cfg(feature = "cuda-13")]
mod cuda13 {
    use super::read_all;
    use cuda_mempool_sys::cuda13::*;

    type Union = CUmemLocation_st__bindgen_ty_1;
    type Pair = CUmemLocation_st__bindgen_ty_1__bindgen_ty_1;

    /// Every value of the union's part that safe code can make: each constructor, each setter
    /// after another view, the default.
    fn unions() -> Vec<Union> {
        let pair = Pair {
            deviceId: 1,
            localityDomainId: 2,
        };
        let mut out = vec![
            Union::default(),
            Union::from_localized(pair),
            Union::from_localized(Pair::default()),
        ];
        for id in [0, 256, -1] {
            out.push(Union::from_id(id));
            let mut by_setter = Union::from_id(id);
            by_setter.set_localized(pair);
            out.push(by_setter);
            let mut back = Union::from_localized(pair);
            back.set_id(id);
            out.push(back);
        }
        out
    }

    /// Every tag value cuda.h names, and some it does not.
    fn tags() -> Vec<CUmemLocationType> {
        let mut out: Vec<_> = (0..=10).map(CUmemLocationType).collect();
        out.push(CUmemLocationType(0x7fff_ffff));
        out
    }

    fn locations() -> Vec<CUmemLocation> {
        let mut out = Vec::new();
        for type_ in tags() {
            out.push(mem_location(type_, 3));
            for u in unions() {
                out.push(CUmemLocation {
                    type_,
                    __bindgen_anon_1: u,
                });
            }
        }
        out
    }

    #[test]
    fn every_location_reads_initialised_bytes_in_every_struct_that_holds_one() {
        for location in locations() {
            read_all(&location);
            read_all(&location.__bindgen_anon_1);
            let access = CUmemAccessDesc {
                location,
                flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            read_all(&access);
            let props = CUmemPoolProps {
                location,
                ..Default::default()
            };
            read_all(&props);
            let node = CUDA_MEM_ALLOC_NODE_PARAMS {
                poolProps: props,
                accessDescs: &access,
                accessDescCount: 1,
                bytesize: 1 << 20,
                dptr: 0,
            };
            read_all(&node);
        }
    }

    #[test]
    fn each_view_reads_the_bytes_its_c_field_covers() {
        let pair = Pair {
            deviceId: 1,
            localityDomainId: 2,
        };
        // `localized` is the first two bytes; the rest are written zero.
        assert_eq!(Union::from_localized(pair).id(), i32::from_ne_bytes([1, 2, 0, 0]));
        assert_eq!(Union::from_id(i32::from_ne_bytes([1, 2, 3, 4])).localized(), pair);
        let mut u = Union::from_id(-1);
        u.set_localized(pair);
        assert_eq!(u.id(), i32::from_ne_bytes([1, 2, 0, 0]));
        // A device location built either way prints and compares through `id`.
        let device = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        let by_localized = CUmemLocation {
            type_: device,
            __bindgen_anon_1: Union::from_localized(pair),
        };
        assert_eq!(by_localized, mem_location(device, i32::from_ne_bytes([1, 2, 0, 0])));
        assert!(read_all(&by_localized).contains(&format!("id: {}", i32::from_ne_bytes([1, 2, 0, 0]))));
    }
}
