//! 827 cuMemPoolGetAccess and 831 cuMemPoolSetAccess: the location (type and device ordinal) and
//! the access flags.

use super::model::*;
use crate::cases::prelude::*;
use crate::driver::cu::CUmemAccess_flags_enum as F;
use crate::driver::cu::CUmemLocationType_enum as LT;

fn get_access_code(e: &Env, loc: CUmemLocation) -> R<Answer> {
    let pool = Pool::on_device(e.dev)?;
    let mut loc = loc;
    let mut f = F(0xdead);
    Answer::code(unsafe { cuMemPoolGetAccess(&mut f, pool.0, &mut loc) })
}
fn get_access_type_rows(_: &Env) -> Vec<Row> {
    named(UNKNOWN_LOCATION_TYPES, REFUSED)
}
fn get_access_type(e: &Env, v: u64) -> R<Answer> {
    get_access_code(e, mem_location(LT(v as u32), e.dev))
}
fn get_access_id_rows(e: &Env) -> Vec<Row> {
    ordinal_rows(e, REFUSED)
}
fn get_access_id(e: &Env, v: u64) -> R<Answer> {
    get_access_code(e, mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, as_int(v)))
}

fn set_access_code(e: &Env, loc: CUmemLocation, flags: u32) -> R<Answer> {
    let pool = Pool::on_device(e.dev)?;
    let d = CUmemAccessDesc {
        location: loc,
        flags: F(flags),
    };
    Answer::code(unsafe { cuMemPoolSetAccess(pool.0, &d, 1) })
}
/// NONE 0, READ 1, READWRITE 3: 2, each other bit alone and beside READWRITE, the MAX sentinel, all.
fn access_flags_rows(_: &Env) -> Vec<Row> {
    let mut v = named(&[(2, "2")], REFUSED);
    v.extend(each_bit(0, "", 2, 31, REFUSED));
    v.extend(each_bit(3, "READWRITE", 2, 31, REFUSED));
    v.extend(named(
        &[(0x7fff_ffff, "CU_MEM_ACCESS_FLAGS_PROT_MAX"), (0xffff_ffff, "UINT_MAX")],
        REFUSED,
    ));
    v
}
fn set_access_flags(e: &Env, v: u64) -> R<Answer> {
    set_access_code(e, mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.dev), v as u32)
}
/// R580 answers NOT_SUPPORTED for the INVALID location type (and a host location); the other
/// unknown types are expected to take the same path.
fn set_access_type_rows(_: &Env) -> Vec<Row> {
    named(UNKNOWN_LOCATION_TYPES, Want::Departure("set_access_not_supported"))
}
fn set_access_type(e: &Env, v: u64) -> R<Answer> {
    set_access_code(e, mem_location(LT(v as u32), e.dev), 3)
}
/// R580 answers INVALID_DEVICE for the device count; the other ordinals are expected alike.
fn set_access_id_rows(e: &Env) -> Vec<Row> {
    ordinal_rows(e, Want::Departure("set_access_invalid_device"))
}
fn set_access_id(e: &Env, v: u64) -> R<Answer> {
    set_access_code(e, mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, as_int(v)), 3)
}

pub const EDGES: &[Edge] = &[
    // Kills 827-location-type-negative-as-device (and 827-bad-location-type-accepted).
    Edge {
        api: 827,
        arg: "location_type",
        needs: &[],
        sharing: Sharing::Shared,
        rows: get_access_type_rows,
        call: get_access_type,
    },
    // Kills 827-negative-device-accepted (and 827-past-last-accepted).
    Edge {
        api: 827,
        arg: "location_device_id",
        needs: &[],
        sharing: Sharing::Shared,
        rows: get_access_id_rows,
        call: get_access_id,
    },
    // Kills 831-access-flags-low-byte-only (and 831-flags-masked).
    Edge {
        api: 831,
        arg: "access_flags",
        needs: &[],
        sharing: Sharing::Shared,
        rows: access_flags_rows,
        call: set_access_flags,
    },
    // Kills 831-location-type-negative-as-device.
    Edge {
        api: 831,
        arg: "location_type",
        needs: &[],
        sharing: Sharing::Shared,
        rows: set_access_type_rows,
        call: set_access_type,
    },
    // Kills 831-negative-device-skipped.
    Edge {
        api: 831,
        arg: "location_device_id",
        needs: &[],
        sharing: Sharing::Shared,
        rows: set_access_id_rows,
        call: set_access_id,
    },
];
