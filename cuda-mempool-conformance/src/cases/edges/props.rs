//! 823 cuMemPoolCreate: every field of CUmemPoolProps, and whole structures.

use super::model::*;
use crate::cases::prelude::*;
use crate::driver::cu::CUmemAllocationHandleType_enum as HT;
use crate::driver::cu::CUmemAllocationType_enum as AT;
use crate::driver::cu::CUmemLocationType_enum as LT;

/// Create a pool from `props`; one the driver makes is destroyed. The driver's code.
fn create_code(props: &CUmemPoolProps) -> CUresult {
    let mut p = std::ptr::null_mut();
    let r = unsafe { cuMemPoolCreate(&mut p, props) };
    if r == SUCCESS && !p.is_null() {
        let _ = unsafe { cuMemPoolDestroy(p) };
    }
    r
}

fn create_edited(e: &Env, edit: impl FnOnce(&mut CUmemPoolProps)) -> R<Answer> {
    let mut props = device_props(e.dev);
    edit(&mut props);
    Answer::code(create_code(&props))
}

fn alloc_type_rows(_: &Env) -> Vec<Row> {
    named(
        &[
            (0, "CU_MEM_ALLOCATION_TYPE_INVALID"),
            (3, "3"),
            (4, "4"),
            (0x100, "0x100"),
            (0x1000, "0x1000"),
            (0x7fff_ffff, "CU_MEM_ALLOCATION_TYPE_MAX"),
            (0x8000_0000, "INT_MIN as unsigned"),
            (0xffff_ffff, "UINT_MAX"),
        ],
        REFUSED,
    )
}
fn create_alloc_type(e: &Env, v: u64) -> R<Answer> {
    create_edited(e, |p| p.allocType = AT(v as u32))
}

/// Bits 0–3 are the POSIX fd, Win32, Win32 KMT and fabric types; every other bit is unknown, alone
/// and beside POSIX. R580 refuses the Windows types on Linux with INVALID_VALUE.
fn handle_types_rows(_: &Env) -> Vec<Row> {
    let mut v = each_bit(0, "", 4, 31, REFUSED);
    v.extend(each_bit(POSIX, "POSIX", 4, 31, REFUSED));
    v.extend(named(
        &[(2, "WIN32"), (4, "WIN32_KMT"), (6, "WIN32 | WIN32_KMT")],
        Want::Departure("win32_handle_on_linux"),
    ));
    v.extend(named(
        &[(0x7fff_ffff, "CU_MEM_HANDLE_TYPE_MAX"), (0xffff_ffff, "UINT_MAX")],
        REFUSED,
    ));
    v
}
fn create_handle_types(e: &Env, v: u64) -> R<Answer> {
    create_edited(e, |p| p.handleTypes = HT(v as u32))
}

/// Bit 1 is CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS; every other bit is unknown. R580 ignores
/// unknown bits (seen for 0x8000; the other bits to be confirmed).
fn usage_rows(_: &Env) -> Vec<Row> {
    let accepted = Want::Departure("usage_unknown_bit_accepted");
    let mut v = each_bit(0, "", 0, 0, accepted);
    v.extend(each_bit(0, "", 2, 15, accepted));
    v.extend(named(&[(0xfffd, "every unknown bit")], accepted));
    v
}
fn create_usage(e: &Env, v: u64) -> R<Answer> {
    create_edited(e, |p| p.usage = v as u16)
}

/// The documentation refuses HOST_NUMA_CURRENT for pools, beside the unknown types.
fn create_location_type_rows(_: &Env) -> Vec<Row> {
    let mut v = named(&[(4, "CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT")], REFUSED);
    v.extend(named(UNKNOWN_LOCATION_TYPES, REFUSED));
    v
}
fn create_location_type(e: &Env, v: u64) -> R<Answer> {
    let dev = e.dev;
    create_edited(e, |p| p.location = mem_location(LT(v as u32), dev))
}

fn create_device_id_rows(e: &Env) -> Vec<Row> {
    ordinal_rows(e, REFUSED)
}
fn create_device_id(e: &Env, v: u64) -> R<Answer> {
    create_edited(e, |p| {
        p.location = mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, as_int(v))
    })
}

/// The documentation: a host pool's location id is ignored. Each pool is made, and its memory
/// must be host memory (CU_MEMORYTYPE_HOST, 1).
fn host_id_rows(e: &Env) -> Vec<Row> {
    let mut v = ordinal_rows(e, ACCEPTED);
    v.push(Row {
        value: 1,
        label: "1".into(),
        want: ACCEPTED,
        watch: Watch::Off,
    });
    v
}
fn create_host_id(_: &Env, v: u64) -> R<Answer> {
    let props = CUmemPoolProps {
        allocType: AT::CU_MEM_ALLOCATION_TYPE_PINNED,
        location: mem_location(LT::CU_MEM_LOCATION_TYPE_HOST, as_int(v)),
        ..Default::default()
    };
    let mut p = std::ptr::null_mut();
    let code = unsafe { cuMemPoolCreate(&mut p, &props) };
    if code != SUCCESS {
        return Answer::code(code);
    }
    let pool = Pool(p);
    let kind = pool_memory_type(pool.0, 4096)?;
    let effect = if kind == CU_MEMORYTYPE_HOST {
        Ok(())
    } else {
        Err(format!("the pool's memory has memory type {kind}, not host ({CU_MEMORYTYPE_HOST})").into())
    };
    Ok(Answer { code, effect })
}

/// 0 is the system's default, and the pool serves an allocation (a 2 MiB one here); a limit
/// larger than the device R580 refuses (OUT_OF_MEMORY, H100 and H200, 2026-11-24/26). Both are
/// watched: on a host of two H200 R580 left SIZE_MAX unanswered (`max_size_size_max_hangs_driver`).
fn max_size_rows(_: &Env) -> Vec<Row> {
    let beyond = Want::Departure("max_size_beyond_memory_out_of_memory");
    let mut v = named(&[(0, "0")], ACCEPTED);
    v.extend(watched(named(&[(1 << 60, "1 << 60")], beyond), Watch::On));
    v.extend(watched(
        named(&[(u64::MAX, "SIZE_MAX")], beyond),
        Watch::Hangs("max_size_size_max_hangs_driver"),
    ));
    v
}
fn create_max_size(e: &Env, v: u64) -> R<Answer> {
    let mut props = device_props(e.dev);
    props.maxSize = v as usize;
    let mut p = std::ptr::null_mut();
    let code = unsafe { cuMemPoolCreate(&mut p, &props) };
    if code != SUCCESS {
        return Answer::code(code);
    }
    let pool = Pool(p);
    let mut a: CUdeviceptr = 0;
    let r = unsafe { cuMemAllocFromPoolAsync(&mut a, 2 * MIB, pool.0, std::ptr::null_mut()) };
    if r == SUCCESS {
        free_async(a, std::ptr::null_mut())?;
        ok("cuStreamSynchronize", unsafe {
            cuStreamSynchronize(std::ptr::null_mut())
        })?;
    }
    // The pool's limit is cuMemPoolCreate's doing: a refusal here is blamed on 823.
    let effect = if r == SUCCESS {
        Ok(())
    } else {
        Err(format!("a 2 MiB allocation from the pool: {}", code_name(r)).into())
    };
    Ok(Answer { code, effect })
}

/// "reserved for future use, must be 0": each byte of `reserved` set to 1 alone (CUDA 13.5's
/// layout: the byte before them is gpuDirectRDMACapable, a field of its own, left out).
fn reserved_rows(_: &Env) -> Vec<Row> {
    let n = CUmemPoolProps::default().reserved.len() as u64;
    (0..n)
        .map(|i| Row {
            value: i,
            label: format!("reserved[{i}] = 1"),
            want: REFUSED,
            watch: Watch::Off,
        })
        .collect()
}
fn create_reserved(e: &Env, i: u64) -> R<Answer> {
    create_edited(e, |p| p.reserved[i as usize] = 1)
}

/// Whole structures: all zero (allocation type INVALID), and every byte 0xff but the Windows
/// security pointer (which would be dereferenced for a Win32 handle type).
fn whole_props_rows(_: &Env) -> Vec<Row> {
    named(&[(0x00, "every byte 0x00"), (0xff, "every byte 0xff")], REFUSED)
}
fn create_whole_props(_: &Env, v: u64) -> R<Answer> {
    let mut props = CUmemPoolProps::default();
    // SAFETY: CUmemPoolProps is plain data; the pointer field is reset below.
    unsafe {
        std::ptr::write_bytes(
            (&mut props as *mut CUmemPoolProps).cast::<u8>(),
            v as u8,
            std::mem::size_of::<CUmemPoolProps>(),
        )
    };
    props.win32SecurityAttributes = std::ptr::null_mut();
    Answer::code(create_code(&props))
}

pub const EDGES: &[Edge] = &[
    // Kills 823-alloc-type-negative-as-pinned.
    Edge {
        api: 823,
        arg: "alloc_type",
        needs: &[],
        sharing: Sharing::Shared,
        rows: alloc_type_rows,
        call: create_alloc_type,
    },
    // Kills 823-handle-types-high-bits-dropped (and 823-unknown-handle-bits-dropped).
    Edge {
        api: 823,
        arg: "handle_types",
        needs: &[],
        sharing: Sharing::Shared,
        rows: handle_types_rows,
        call: create_handle_types,
    },
    // Kills 823-usage-unknown-bits-not-supported.
    Edge {
        api: 823,
        arg: "usage",
        needs: &[],
        sharing: Sharing::Shared,
        rows: usage_rows,
        call: create_usage,
    },
    // Kills 823-location-type-negative-as-device (and 823-location-type-unchecked).
    Edge {
        api: 823,
        arg: "location_type",
        needs: &[],
        sharing: Sharing::Shared,
        rows: create_location_type_rows,
        call: create_location_type,
    },
    // Kills 823-device-id-modulo-count (and 823-bad-device-invalid-device).
    Edge {
        api: 823,
        arg: "location_device_id",
        needs: &[],
        sharing: Sharing::Shared,
        rows: create_device_id_rows,
        call: create_device_id,
    },
    // Kills 823-host-id-checked-as-device.
    Edge {
        api: 823,
        arg: "location_host_id_ignored",
        needs: &[Cap::HostPool],
        sharing: Sharing::Shared,
        rows: host_id_rows,
        call: create_host_id,
    },
    // Kills 823-max-size-over-memory-refused and 823-max-size-huge-hangs.
    Edge {
        api: 823,
        arg: "max_size",
        needs: &[],
        sharing: Sharing::Shared,
        rows: max_size_rows,
        call: create_max_size,
    },
    // Kills 823-reserved-nonzero-not-supported.
    Edge {
        api: 823,
        arg: "reserved_bytes",
        needs: &[],
        sharing: Sharing::Shared,
        rows: reserved_rows,
        call: create_reserved,
    },
    // Kills 823-zero-props-default-pool.
    Edge {
        api: 823,
        arg: "whole_props",
        needs: &[],
        sharing: Sharing::Shared,
        rows: whole_props_rows,
        call: create_whole_props,
    },
];
