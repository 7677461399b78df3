//! The edges of every size, ordinal, flag and bit-field argument of the 14 APIs, table-driven: each
//! trial is one (API, argument) and runs every row of its table (the extremes, and each unknown bit
//! or value on its own), reporting every row the driver answers wrongly, not only the first.
//! Garbage handles and pointers are not here (they may crash the driver: see the API groups).

use crate::cases::prelude::*;

use crate::driver::cu::CUmemAccess_flags_enum as F;
use crate::driver::cu::CUmemAllocationHandleType_enum as HT;
use crate::driver::cu::CUmemAllocationType_enum as AT;
use crate::driver::cu::CUmemLocationType_enum as LT;
use crate::driver::cu::CUmemPool_attribute_enum as A;

const E_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;
const E_OOM: CUresult = CUresult::CUDA_ERROR_OUT_OF_MEMORY;
const MIB: usize = 1 << 20;
const POSIX: u64 = 1;

/// The answer a row expects.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// This code; after a success, the class's check of the value's effect too.
    Code(CUresult),
    /// The documented code, or a declared departure's (`driver/departures.rs`).
    Departure(&'static str),
}
const REFUSED: Want = Want::Code(E_VALUE);
const ACCEPTED: Want = Want::Code(SUCCESS);
const OOM: Want = Want::Code(E_OOM);

/// One row: the value the argument takes, its name in a failure message, the answer expected.
struct Row {
    value: u64,
    label: String,
    want: Want,
}

/// What one call under a row came to: the driver's code and, after a success, what the class's
/// check of the effect found. Whatever the call got (a pool, an allocation, an fd) is given back
/// before it returns.
struct Answer {
    code: CUresult,
    effect: R,
}
impl Answer {
    fn code(code: CUresult) -> R<Answer> {
        Ok(Answer { code, effect: Ok(()) })
    }
}

/// One (API, argument): the trial `edges_<arg>` of the API.
struct Edge {
    api: u32,
    arg: &'static str,
    needs: &'static [Cap],
    /// It provokes out-of-memory or watches reserved memory (see `cases::MEMORY_SENSITIVE`).
    alone: bool,
    rows: fn(&Env) -> Vec<Row>,
    call: fn(&Env, u64) -> R<Answer>,
}

/// Rows from (value, name) pairs, all expecting `want`.
fn named(values: &[(u64, &str)], want: Want) -> Vec<Row> {
    values
        .iter()
        .map(|&(value, name)| Row {
            value,
            label: format!("{name} ({value:#x})"),
            want,
        })
        .collect()
}

/// One row per bit `lo..=hi`, each alone over `base` (`base | 1 << k`), all expecting `want`.
fn each_bit(base: u64, base_name: &str, lo: u32, hi: u32, want: Want) -> Vec<Row> {
    (lo..=hi)
        .map(|k| {
            let value = base | 1u64 << k;
            let label = match base_name {
                "" => format!("bit {k} ({value:#x})"),
                b => format!("{b} | bit {k} ({value:#x})"),
            };
            Row { value, label, want }
        })
        .collect()
}

/// An int argument as a row value (its 32 bits), and back.
fn int(v: i32) -> u64 {
    v as u32 as u64
}
fn as_int(v: u64) -> i32 {
    v as u32 as i32
}

/// Device ordinals no device has: -1, the count of devices, one past it, INT_MAX and INT_MIN.
fn bad_ordinals(e: &Env) -> Vec<(u64, String)> {
    let n = e.m.devices.len() as i32;
    vec![
        (int(-1), "-1".to_string()),
        (int(n), format!("the device count {n}")),
        (int(n + 1), format!("the device count + 1 ({})", n + 1)),
        (int(i32::MAX), "INT_MAX".to_string()),
        (int(i32::MIN), "INT_MIN".to_string()),
    ]
}
fn ordinal_rows(e: &Env, want: Want) -> Vec<Row> {
    bad_ordinals(e)
        .into_iter()
        .map(|(value, label)| Row { value, label, want })
        .collect()
}

/// Location types no header knows (CUDA 13.5's INVISIBLE and DEVICE_LOCALITY_DOMAIN, 5 and 6, are
/// left out: a newer driver may take them), the INVALID 0 and the MAX sentinel among them.
const UNKNOWN_LOCATION_TYPES: &[(u64, &str)] = &[
    (0, "CU_MEM_LOCATION_TYPE_INVALID"),
    (7, "7"),
    (8, "8"),
    (16, "16"),
    (0x1000, "0x1000"),
    (0x7fff_ffff, "CU_MEM_LOCATION_TYPE_MAX"),
    (0x8000_0000, "INT_MIN as unsigned"),
    (0xffff_ffff, "UINT_MAX"),
];

/// Sizes no allocation can have: each is OUT_OF_MEMORY (the listed code for a request the pool
/// cannot serve), including those whose round-up to the allocation granularity overflows.
const HUGE_SIZES: &[(u64, &str)] = &[
    (1 << 60, "1 << 60"),
    (1 << 63, "1 << 63"),
    (u64::MAX - 4095, "SIZE_MAX - 4095"),
    (u64::MAX, "SIZE_MAX"),
];

fn size_rows(e: &Env) -> Vec<Row> {
    let total = e.m.devices.get(e.dev as usize).map_or(0, |d| d.total_mem) as u64;
    let mut v = vec![Row {
        value: 0,
        label: "0".into(),
        want: Want::Departure("size_zero_succeeds"),
    }];
    v.extend(named(HUGE_SIZES, OOM));
    if total > 0 {
        v.push(Row {
            value: total + 1,
            label: format!("the device's memory + 1 ({})", total + 1),
            want: OOM,
        });
    }
    v
}

/// What an allocation row got: nothing, or (size 0, R580) a null pointer. Anything else it got is
/// freed.
const UNTOUCHED: CUdeviceptr = 0xdead_0000;
fn allocation_answer(code: CUresult, p: CUdeviceptr) -> R<Answer> {
    if code == SUCCESS && p != 0 && p != UNTOUCHED {
        free_async(p, std::ptr::null_mut())?;
        ok("cuStreamSynchronize", unsafe {
            cuStreamSynchronize(std::ptr::null_mut())
        })?;
    }
    let effect = if p == 0 {
        Ok(())
    } else if p == UNTOUCHED {
        Err("success without writing a pointer".into())
    } else {
        Err(format!("success and pointer {p:#x}, expected a null pointer").into())
    };
    Ok(Answer { code, effect })
}

fn alloc_async_size(_: &Env, v: u64) -> R<Answer> {
    let mut p: CUdeviceptr = UNTOUCHED;
    let code = unsafe { cuMemAllocAsync(&mut p, v as usize, std::ptr::null_mut()) };
    allocation_answer(code, p)
}

fn alloc_from_pool_size(e: &Env, v: u64) -> R<Answer> {
    let pool = Pool::on_device(e.dev)?;
    let mut p: CUdeviceptr = UNTOUCHED;
    let code = unsafe { cuMemAllocFromPoolAsync(&mut p, v as usize, pool.0, std::ptr::null_mut()) };
    allocation_answer(code, p)
}

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
        &[(4, "WIN32_KMT"), (6, "WIN32 | WIN32_KMT")],
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
    let s = Stream::new()?;
    let a = alloc_from(pool.0, 4096, s.0)?;
    let mut kind: u32 = 0;
    let r = unsafe {
        cuPointerGetAttribute(
            (&mut kind as *mut u32).cast(),
            CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            a,
        )
    };
    free_async(a, s.0)?;
    s.sync()?;
    ok("cuPointerGetAttribute(MEMORY_TYPE)", r)?;
    let effect = if kind == 1 {
        Ok(())
    } else {
        Err(format!("the pool's memory has memory type {kind}, not host (1)").into())
    };
    Ok(Answer { code, effect })
}

/// 0 is the system's default; larger than any device is still a limit, and the pool serves an
/// allocation (a 2 MiB one here).
fn max_size_rows(_: &Env) -> Vec<Row> {
    named(&[(0, "0"), (1 << 60, "1 << 60"), (u64::MAX, "SIZE_MAX")], ACCEPTED)
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

/// Export an IPC pool's handle with `ht` and `flags` into a 64-byte buffer; an fd it got is closed.
fn export_code(e: &Env, ht: u64, flags: u64) -> R<Answer> {
    let pool = Pool::ipc(e.dev)?;
    let mut buf = [0xffu8; 64];
    let code = unsafe { cuMemPoolExportToShareableHandle(buf.as_mut_ptr().cast(), pool.0, HT(ht as u32), flags) };
    let fd = i32::from_ne_bytes(buf[..4].try_into().unwrap());
    if code == SUCCESS && fd >= 0 {
        crate::os::close(fd);
    }
    Answer::code(code)
}

/// "flags: must be 0": each of the 64 bits alone, and all of them.
fn flags_rows(_: &Env) -> Vec<Row> {
    let mut v = each_bit(0, "", 0, 63, REFUSED);
    v.extend(named(&[(u64::MAX, "every bit")], REFUSED));
    v
}
fn export_flags(e: &Env, v: u64) -> R<Answer> {
    export_code(e, POSIX, v)
}

/// A POSIX-only pool: POSIX with another type, each unknown bit alone and beside POSIX, and every
/// bit but fabric (a fabric export can crash R580: `pool.rs`).
fn export_handle_type_rows(_: &Env) -> Vec<Row> {
    let mut v = named(&[(3, "POSIX | WIN32"), (5, "POSIX | WIN32_KMT")], REFUSED);
    v.extend(each_bit(0, "", 4, 31, REFUSED));
    v.extend(each_bit(POSIX, "POSIX", 4, 31, REFUSED));
    v.extend(named(
        &[
            (0x7fff_fff7, "INT_MAX but fabric"),
            (0xffff_fff7, "UINT_MAX but fabric"),
        ],
        REFUSED,
    ));
    v
}
fn export_handle_type(e: &Env, v: u64) -> R<Answer> {
    export_code(e, v, 0)
}

/// Import a fresh export of an IPC pool with `ht` and `flags`: the driver's code. A pool it got is
/// destroyed; the fd stays the caller's (one the import closed is not closed again).
fn import_code(e: &Env, ht: u64, flags: u64) -> R<Answer> {
    use std::os::fd::AsRawFd;
    let pool = Pool::ipc(e.dev)?;
    let fd = export_pool_fd(pool.0)?;
    let raw = fd.as_raw_fd();
    let mut imported = std::ptr::null_mut();
    let code =
        unsafe { cuMemPoolImportFromShareableHandle(&mut imported, raw as isize as *mut _, HT(ht as u32), flags) };
    if code == SUCCESS && !imported.is_null() {
        let _ = unsafe { cuMemPoolDestroy(imported) };
    }
    if !crate::os::fd_is_open(raw) {
        std::mem::forget(fd);
    }
    Answer::code(code)
}
fn import_flags(e: &Env, v: u64) -> R<Answer> {
    import_code(e, POSIX, v)
}
/// Each unknown bit beside POSIX only: a Windows or fabric type would make the driver read the fd
/// number as a pointer.
fn import_handle_type_rows(_: &Env) -> Vec<Row> {
    each_bit(POSIX, "POSIX", 4, 31, REFUSED)
}
fn import_handle_type(e: &Env, v: u64) -> R<Answer> {
    import_code(e, v, 0)
}

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

/// Attribute values no header knows: 0, 16 to 64, and RELEASE_THRESHOLD (4) with each higher bit
/// (a library that keeps only some bits of the attribute finds a known one), INT_MAX, UINT_MAX.
/// CUDA 13.x's 9 to 15 are left out: a driver older than the attribute refuses it
/// (`attr.rs`'s cuda13 trials), a newer one answers.
fn attribute_rows(_: &Env) -> Vec<Row> {
    let mut v = named(&[(0, "0")], REFUSED);
    v.extend((16..=64).map(|a| Row {
        value: a,
        label: format!("{a}"),
        want: REFUSED,
    }));
    v.extend(each_bit(4, "RELEASE_THRESHOLD", 6, 31, REFUSED));
    v.extend(named(&[(0x7fff_ffff, "INT_MAX"), (0xffff_ffff, "UINT_MAX")], REFUSED));
    v
}
fn get_attribute(e: &Env, v: u64) -> R<Answer> {
    let pool = Pool::on_device(e.dev)?;
    let mut val = [0u64; 2];
    Answer::code(unsafe { cuMemPoolGetAttribute(pool.0, A(v as u32), val.as_mut_ptr().cast()) })
}
fn set_attribute(e: &Env, v: u64) -> R<Answer> {
    let pool = Pool::on_device(e.dev)?;
    let mut val = [0u64; 2];
    Answer::code(unsafe { cuMemPoolSetAttribute(pool.0, A(v as u32), val.as_mut_ptr().cast()) })
}

/// Any 64-bit threshold is valid; each must read back exactly.
fn threshold_rows(_: &Env) -> Vec<Row> {
    named(
        &[
            (0, "0"),
            (1, "1"),
            (1 << 32, "1 << 32"),
            (1 << 60, "1 << 60"),
            (i64::MAX as u64, "INT64_MAX"),
            (u64::MAX - 1, "UINT64_MAX - 1"),
            (u64::MAX, "UINT64_MAX"),
        ],
        ACCEPTED,
    )
}
fn set_threshold(e: &Env, v: u64) -> R<Answer> {
    let pool = Pool::on_device(e.dev)?;
    let threshold = A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
    let mut val = v;
    let code = unsafe { cuMemPoolSetAttribute(pool.0, threshold, (&mut val as *mut u64).cast()) };
    if code != SUCCESS {
        return Answer::code(code);
    }
    let got = get_u64(pool.0, threshold)?;
    let effect = if got == v {
        Ok(())
    } else {
        Err(format!("the threshold reads back {got:#x}").into())
    };
    Ok(Answer { code, effect })
}

/// A high-water mark takes 0 (a reset) and nothing else: each nonzero value is refused, those with
/// a zero low half among them.
fn mark_rows(_: &Env) -> Vec<Row> {
    named(
        &[
            (1, "1"),
            (1 << 32, "1 << 32"),
            (1 << 60, "1 << 60"),
            (u64::MAX, "UINT64_MAX"),
        ],
        REFUSED,
    )
}
fn set_mark(e: &Env, a: A, v: u64) -> R<Answer> {
    let pool = Pool::on_device(e.dev)?;
    let mut val = v;
    Answer::code(unsafe { cuMemPoolSetAttribute(pool.0, a, (&mut val as *mut u64).cast()) })
}
fn set_reserved_high(e: &Env, v: u64) -> R<Answer> {
    set_mark(e, A::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, v)
}
fn set_used_high(e: &Env, v: u64) -> R<Answer> {
    set_mark(e, A::CU_MEMPOOL_ATTR_USED_MEM_HIGH, v)
}

/// minBytesToKeep beyond what the pool holds: the documentation releases nothing then (it trims
/// "until the pool contains fewer than minBytesToKeep reserved bytes", which it already does).
/// R580 releases everything for SIZE_MAX (128 MiB reserved → 0, recorded in
/// docs/conformance/mutants.md), a driver behaviour its row asserts.
fn trim_rows(_: &Env) -> Vec<Row> {
    named(
        &[
            (1 << 60, "1 << 60"),
            (1 << 63, "1 << 63"),
            (u64::MAX, "SIZE_MAX (R580: releases everything)"),
        ],
        ACCEPTED,
    )
}
fn trim(e: &Env, v: u64) -> R<Answer> {
    let reserved = A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT;
    let pool = Pool::on_device(e.dev)?;
    set_u64(pool.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
    let s = Stream::new()?;
    let a = alloc_from(pool.0, 32 * MIB, s.0)?;
    free_async(a, s.0)?;
    s.sync()?;
    let before = get_u64(pool.0, reserved)?;
    ensure!(
        before >= 32 * MIB as u64,
        "only {before} bytes reserved before trimming"
    );
    let code = unsafe { cuMemPoolTrimTo(pool.0, v as usize) };
    let after = get_u64(pool.0, reserved)?;
    let effect = match v {
        u64::MAX if after != 0 => {
            Err(format!("reserved {before} before, {after} after; R580 released everything").into())
        }
        u64::MAX => Ok(()),
        _ if after != before => Err(format!(
            "reserved {before} before, {after} after: a trim to more than the pool holds released memory"
        )
        .into()),
        _ => Ok(()),
    };
    Ok(Answer { code, effect })
}

const EDGES: &[Edge] = &[
    // Kills 820-size-round-up-wraps.
    Edge {
        api: 820,
        arg: "bytesize",
        needs: &[],
        alone: true,
        rows: size_rows,
        call: alloc_async_size,
    },
    // Kills 821-size-round-up-wraps.
    Edge {
        api: 821,
        arg: "bytesize",
        needs: &[],
        alone: true,
        rows: size_rows,
        call: alloc_from_pool_size,
    },
    // Kills 823-alloc-type-negative-as-pinned.
    Edge {
        api: 823,
        arg: "alloc_type",
        needs: &[],
        alone: false,
        rows: alloc_type_rows,
        call: create_alloc_type,
    },
    // Kills 823-handle-types-high-bits-dropped (and 823-unknown-handle-bits-dropped).
    Edge {
        api: 823,
        arg: "handle_types",
        needs: &[],
        alone: false,
        rows: handle_types_rows,
        call: create_handle_types,
    },
    // Kills 823-usage-unknown-bits-not-supported.
    Edge {
        api: 823,
        arg: "usage",
        needs: &[],
        alone: false,
        rows: usage_rows,
        call: create_usage,
    },
    // Kills 823-location-type-negative-as-device (and 823-location-type-unchecked).
    Edge {
        api: 823,
        arg: "location_type",
        needs: &[],
        alone: false,
        rows: create_location_type_rows,
        call: create_location_type,
    },
    // Kills 823-device-id-modulo-count (and 823-bad-device-invalid-device).
    Edge {
        api: 823,
        arg: "location_device_id",
        needs: &[],
        alone: false,
        rows: create_device_id_rows,
        call: create_device_id,
    },
    // Kills 823-host-id-checked-as-device.
    Edge {
        api: 823,
        arg: "location_host_id_ignored",
        needs: &[Cap::HostPool],
        alone: false,
        rows: host_id_rows,
        call: create_host_id,
    },
    // Kills 823-max-size-over-memory-refused.
    Edge {
        api: 823,
        arg: "max_size",
        needs: &[],
        alone: false,
        rows: max_size_rows,
        call: create_max_size,
    },
    // Kills 823-reserved-nonzero-not-supported.
    Edge {
        api: 823,
        arg: "reserved_bytes",
        needs: &[],
        alone: false,
        rows: reserved_rows,
        call: create_reserved,
    },
    // Kills 823-zero-props-default-pool.
    Edge {
        api: 823,
        arg: "whole_props",
        needs: &[],
        alone: false,
        rows: whole_props_rows,
        call: create_whole_props,
    },
    // Kills 826-flags-high-half-dropped (and 826-flags-ignored).
    Edge {
        api: 826,
        arg: "flags",
        needs: &[Cap::Ipc],
        alone: false,
        rows: flags_rows,
        call: export_flags,
    },
    // Kills 826-handle-type-unknown-bits-dropped.
    Edge {
        api: 826,
        arg: "handle_type",
        needs: &[Cap::Ipc],
        alone: false,
        rows: export_handle_type_rows,
        call: export_handle_type,
    },
    // Kills 827-location-type-negative-as-device (and 827-bad-location-type-accepted).
    Edge {
        api: 827,
        arg: "location_type",
        needs: &[],
        alone: false,
        rows: get_access_type_rows,
        call: get_access_type,
    },
    // Kills 827-negative-device-accepted (and 827-past-last-accepted).
    Edge {
        api: 827,
        arg: "location_device_id",
        needs: &[],
        alone: false,
        rows: get_access_id_rows,
        call: get_access_id,
    },
    // Kills 828-attribute-low-byte-only (and 828-unknown-attribute-zero).
    Edge {
        api: 828,
        arg: "attribute",
        needs: &[],
        alone: false,
        rows: attribute_rows,
        call: get_attribute,
    },
    // Kills 829-flags-high-half-dropped (and 829-flags-ignored).
    Edge {
        api: 829,
        arg: "flags",
        needs: &[Cap::Ipc],
        alone: false,
        rows: flags_rows,
        call: import_flags,
    },
    // Kills 829-handle-type-unknown-bits-dropped.
    Edge {
        api: 829,
        arg: "handle_type",
        needs: &[Cap::Ipc],
        alone: false,
        rows: import_handle_type_rows,
        call: import_handle_type,
    },
    // Kills 831-access-flags-low-byte-only (and 831-flags-masked).
    Edge {
        api: 831,
        arg: "access_flags",
        needs: &[],
        alone: false,
        rows: access_flags_rows,
        call: set_access_flags,
    },
    // Kills 831-location-type-negative-as-device.
    Edge {
        api: 831,
        arg: "location_type",
        needs: &[],
        alone: false,
        rows: set_access_type_rows,
        call: set_access_type,
    },
    // Kills 831-negative-device-skipped.
    Edge {
        api: 831,
        arg: "location_device_id",
        needs: &[],
        alone: false,
        rows: set_access_id_rows,
        call: set_access_id,
    },
    // Kills 832-attribute-low-byte-only (and 832-unknown-attribute-accepted).
    Edge {
        api: 832,
        arg: "attribute",
        needs: &[],
        alone: false,
        rows: attribute_rows,
        call: set_attribute,
    },
    // Kills 832-release-threshold-as-u32.
    Edge {
        api: 832,
        arg: "release_threshold",
        needs: &[],
        alone: false,
        rows: threshold_rows,
        call: set_threshold,
    },
    // Kills 832-high-mark-value-as-u32 (and 832-nonzero-high-accepted).
    Edge {
        api: 832,
        arg: "reserved_mem_high_value",
        needs: &[],
        alone: false,
        rows: mark_rows,
        call: set_reserved_high,
    },
    // Kills 832-high-mark-value-as-u32 (and 832-nonzero-high-accepted).
    Edge {
        api: 832,
        arg: "used_mem_high_value",
        needs: &[],
        alone: false,
        rows: mark_rows,
        call: set_used_high,
    },
    // Kills 833-huge-min-bytes-trims-all (SIZE_MAX's row also 833-trims-nothing).
    Edge {
        api: 833,
        arg: "min_bytes_to_keep",
        needs: &[],
        alone: true,
        rows: trim_rows,
        call: trim,
    },
];

/// Run every row of `edge`: each wrong answer is listed (with the row's value), the worst kind of
/// failure decides the trial's (wrong, then a strict departure, then a changed one).
fn run(e: &Env, edge: &Edge) -> R {
    let rows = (edge.rows)(e);
    let (mut wrong, mut strict, mut changed) = (Vec::new(), Vec::new(), Vec::new());
    for row in &rows {
        let what = format!("{}({} = {})", api_name(edge.api), edge.arg, row.label);
        let answer = (edge.call)(e, row.value)?;
        let verdict = match row.want {
            Want::Code(c) => expect(&what, answer.code, c),
            Want::Departure(id) => expect_code(id, &what, answer.code),
        };
        let verdict = verdict.and_then(|()| {
            if answer.code == SUCCESS {
                answer.effect.map_err(|f| f.map(|m| format!("{what}: {m}")))
            } else {
                Ok(())
            }
        });
        match verdict {
            Ok(()) => {}
            Err(Fail::Changed(m)) => changed.push(m),
            Err(Fail::Departure(m)) => strict.push(m),
            Err(f) => wrong.push(f.into_message()),
        }
    }
    let list = |v: &[String]| format!("{} of {} rows:\n  {}", v.len(), rows.len(), v.join("\n  "));
    if !wrong.is_empty() || !strict.is_empty() {
        blame::set(edge.api);
    }
    if !wrong.is_empty() {
        return Err(Fail::Wrong(list(&wrong)));
    }
    if !strict.is_empty() {
        return Err(Fail::Departure(list(&strict)));
    }
    if !changed.is_empty() {
        return Err(Fail::Changed(list(&changed)));
    }
    Ok(())
}

pub fn cases() -> Vec<Case> {
    EDGES
        .iter()
        .map(|edge| {
            let mut c = Case::gpu(edge.api, format!("edges_{}", edge.arg), move |e| run(e, edge));
            for &cap in edge.needs {
                c = c.needs(cap);
            }
            if edge.alone {
                c = c.alone();
            }
            c
        })
        .collect()
}
