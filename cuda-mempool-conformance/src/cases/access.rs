//! 827 cuMemPoolGetAccess and 831 cuMemPoolSetAccess on one device: the owner's access, host
//! locations, and refusals. Peer access between devices is its own group (two GPUs).

use crate::cases::prelude::*;

use crate::driver::cu::CUmemAccess_flags_enum as F;
use crate::driver::cu::CUmemLocationType_enum as LT;
const E_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

fn get_access(pool: CUmemoryPool, mut loc: CUmemLocation) -> (CUresult, F) {
    let mut f = F(0xdead);
    let r = unsafe { cuMemPoolGetAccess(&mut f, pool, &mut loc) };
    (r, f)
}

fn set_access(pool: CUmemoryPool, loc: CUmemLocation, flags: F) -> CUresult {
    let d = CUmemAccessDesc { location: loc, flags };
    unsafe { cuMemPoolSetAccess(pool, &d, 1) }
}

/// (case, location, flags, expected code) rows for cuMemPoolSetAccess on a device-0 pool.
type SetRow = (
    &'static str,
    fn(&crate::harness::case::Env) -> CUmemLocation,
    F,
    CUresult,
);
/// The docs list only CUDA_ERROR_INVALID_VALUE; R580 answers with three different codes, asserted
/// here (names end in the code the driver uses).
const E_DEVICE: CUresult = CUresult::CUDA_ERROR_INVALID_DEVICE;
const E_NOT_SUPPORTED: CUresult = CUresult::CUDA_ERROR_NOT_SUPPORTED;
const SET_ROWS: &[SetRow] = &[
    (
        "owner_read_write_accepted",
        |e| mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.dev),
        F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        SUCCESS,
    ),
    (
        "owner_revoke_refused_invalid_device",
        |e| mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.dev),
        F::CU_MEM_ACCESS_FLAGS_PROT_NONE,
        E_DEVICE,
    ),
    (
        "owner_read_only_refused_not_supported",
        |e| mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.dev),
        F::CU_MEM_ACCESS_FLAGS_PROT_READ,
        E_NOT_SUPPORTED,
    ),
    (
        "flags_out_of_range",
        |e| mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.dev),
        F(7),
        E_VALUE,
    ),
    (
        "device_past_last_invalid_device",
        |e| mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.m.devices.len() as i32),
        F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        E_DEVICE,
    ),
    (
        "location_type_invalid_not_supported",
        |e| mem_location(LT::CU_MEM_LOCATION_TYPE_INVALID, e.dev),
        F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        E_NOT_SUPPORTED,
    ),
    (
        "host_location_not_supported",
        |_| mem_location(LT::CU_MEM_LOCATION_TYPE_HOST, 0),
        F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        E_NOT_SUPPORTED,
    ),
];

/// (case, location, expected code, expected flags when it succeeds) rows for cuMemPoolGetAccess.
type GetRow = (
    &'static str,
    fn(&crate::harness::case::Env) -> CUmemLocation,
    CUresult,
    F,
);
const GET_ROWS: &[GetRow] = &[
    (
        "owner_has_read_write",
        |e| mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.dev),
        SUCCESS,
        F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    ),
    (
        "device_past_last",
        |e| mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.m.devices.len() as i32),
        E_VALUE,
        F(0),
    ),
    (
        "location_type_invalid",
        |e| mem_location(LT::CU_MEM_LOCATION_TYPE_INVALID, e.dev),
        E_VALUE,
        F(0),
    ),
    // R580: a host location of a device pool is a valid query; the host has no access.
    (
        "host_location_has_none",
        |_| mem_location(LT::CU_MEM_LOCATION_TYPE_HOST, 0),
        SUCCESS,
        F::CU_MEM_ACCESS_FLAGS_PROT_NONE,
    ),
];

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for &(name, loc, want, flags) in GET_ROWS {
        for default in [false, true] {
            let which = if default { "default_pool" } else { "own_pool" };
            v.push(Case::gpu(827, format!("{which}_{name}"), move |e| {
                let own = if default { None } else { Some(Pool::on_device(e.dev)?) };
                let pool = match &own {
                    Some(p) => p.0,
                    None => default_pool(e.dev)?,
                };
                let (r, f) = get_access(pool, loc(e));
                expect("cuMemPoolGetAccess", r, want)?;
                ensure!(r != SUCCESS || f == flags, "access flags {}, expected {}", f.0, flags.0);
                Ok(())
            }));
        }
    }
    for &(name, loc, flags, want) in SET_ROWS {
        v.push(Case::gpu(831, name, move |e| {
            let p = Pool::on_device(e.dev)?;
            let r = set_access(p.0, loc(e), flags);
            // The codes the documentation does not list are R580's departures (`driver/departures.rs`).
            match want {
                E_DEVICE => expect_code(&e.policy(), "set_access_invalid_device", "cuMemPoolSetAccess", r),
                E_NOT_SUPPORTED => expect_code(&e.policy(), "set_access_not_supported", "cuMemPoolSetAccess", r),
                _ => expect("cuMemPoolSetAccess", r, want),
            }
        }));
    }
    v.extend([
        Case::gpu(827, "null_flags_out_invalid_value", |e| {
            let p = Pool::on_device(e.dev)?;
            let mut loc = mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.dev);
            expect(
                "cuMemPoolGetAccess(flags NULL)",
                unsafe { cuMemPoolGetAccess(std::ptr::null_mut(), p.0, &mut loc) },
                E_VALUE,
            )
        }),
        Case::gpu(827, "null_location_invalid_value", |e| {
            let p = Pool::on_device(e.dev)?;
            let mut f = F(0);
            expect(
                "cuMemPoolGetAccess(location NULL)",
                unsafe { cuMemPoolGetAccess(&mut f, p.0, std::ptr::null_mut()) },
                E_VALUE,
            )
        }),
        Case::gpu(827, "null_pool_invalid_value", |e| {
            let (r, _) = get_access(
                std::ptr::null_mut(),
                mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.dev),
            );
            expect("cuMemPoolGetAccess(pool NULL)", r, E_VALUE)
        }),
        Case::gpu(831, "null_pool_invalid_value", |e| {
            let r = set_access(
                std::ptr::null_mut(),
                mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.dev),
                F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            );
            expect("cuMemPoolSetAccess(pool NULL)", r, E_VALUE)
        }),
        Case::gpu(831, "count_zero_null_map_invalid_value", |e| {
            // R580 checks the map pointer even when count is 0.
            let p = Pool::on_device(e.dev)?;
            expect_code(
                &e.policy(),
                "set_access_count_zero_null_map_refused",
                "cuMemPoolSetAccess(NULL, 0)",
                unsafe { cuMemPoolSetAccess(p.0, std::ptr::null(), 0) },
            )
        }),
        Case::gpu(831, "count_zero_with_map_accepted", |e| {
            let p = Pool::on_device(e.dev)?;
            let d = CUmemAccessDesc {
                location: mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.dev),
                flags: F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            ok("cuMemPoolSetAccess(&desc, 0)", unsafe {
                cuMemPoolSetAccess(p.0, &d, 0)
            })
        }),
        Case::gpu(831, "null_map_with_count_invalid_value", |e| {
            let p = Pool::on_device(e.dev)?;
            expect(
                "cuMemPoolSetAccess(NULL, 1)",
                unsafe { cuMemPoolSetAccess(p.0, std::ptr::null(), 1) },
                E_VALUE,
            )
        }),
    ]);
    v
}
