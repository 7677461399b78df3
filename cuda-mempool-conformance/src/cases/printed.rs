//! Answers the report prints, checked: the device's pool claims (handle types, host, host NUMA and fabric pools) against the pools it makes, CUDA 13's pool attributes (or their refusal), reuse flags beyond 0 and 1, a trim below one chunk, an export of a pending allocation.

use super::attr::written_width;
use crate::cases::prelude::*;

use crate::driver::cu::CUdevice_attribute_enum as DA;
use crate::driver::cu::CUmemAllocationHandleType_enum as HT;
use crate::driver::cu::CUmemLocationType_enum as LT;
use crate::driver::cu::CUmemPool_attribute_enum as A;
use conformance_model::Device;

const MIB: usize = 1 << 20;
/// The driver branches that read a reuse flag set non-zero back as exactly 1 (R580, H100 and H200).
const REUSE_FLAG_READS_ONE: (u32, u32) = (580, 580);

/// Device attribute `a` (named `name`) of `dev`, as the device answers it now.
fn device_attr(dev: CUdevice, a: DA, name: &str) -> R<i32> {
    let mut v = 0i32;
    ok(&format!("cuDeviceGetAttribute({name})"), unsafe {
        cuDeviceGetAttribute(&mut v, a, dev)
    })?;
    Ok(v)
}

/// CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES of `dev`, as the report header shows it.
fn supported_handle_types(dev: CUdevice) -> R<u32> {
    let v = device_attr(
        dev,
        DA::CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES,
        "MEMPOOL_SUPPORTED_HANDLE_TYPES",
    )?;
    Ok(v as u32)
}

/// The code of creating a pool with `props` (a pool made is destroyed).
fn create_code(props: &CUmemPoolProps) -> CUresult {
    let mut p = std::ptr::null_mut();
    let r = unsafe { cuMemPoolCreate(&mut p, props) };
    if r == SUCCESS && !p.is_null() {
        let _ = unsafe { cuMemPoolDestroy(p) };
    }
    r
}

/// The code of creating a pool on `dev` with handle type `ht` (a pool made is destroyed).
fn create_with(dev: CUdevice, ht: HT) -> CUresult {
    let mut props = device_props(dev);
    props.handleTypes = ht;
    create_code(&props)
}

/// Whether `r` is a documented refusal of a pool the device does not offer.
fn refused(r: CUresult) -> bool {
    r == CUresult::CUDA_ERROR_INVALID_VALUE || r == CUresult::CUDA_ERROR_NOT_SUPPORTED
}

/// A pinned pool's properties at `location`.
fn pinned_at(location: CUmemLocation) -> CUmemPoolProps {
    CUmemPoolProps {
        allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        location,
        ..Default::default()
    }
}

/// A pool flag of the report header: the case, the device attribute behind it (and its name), the
/// flag as the header printed it, and the pool it promises on the case's device.
struct Claim {
    case: &'static str,
    attr: DA,
    name: &'static str,
    printed: fn(&Device) -> bool,
    pool: fn(&Env) -> CUmemPoolProps,
}

/// Each claimed pool is created, each unclaimed one refused (INVALID_VALUE or NOT_SUPPORTED). A
/// fabric pool is only created and destroyed, never exported: an export without an IMEX channel
/// crashes R580 (pool.rs, fabric_export_without_imex_channel_crashes_driver).
const CLAIMS: &[Claim] = &[
    // Kills 823-host-pools-underclaimed.
    Claim {
        case: "host_pools_flag_matches_host_pool_creation",
        attr: DA::CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED,
        name: "HOST_MEMORY_POOLS_SUPPORTED",
        printed: |d| d.host_pools,
        pool: |_| pinned_at(mem_location(LT::CU_MEM_LOCATION_TYPE_HOST, 0)),
    },
    // Kills 823-host-numa-pools-underclaimed.
    Claim {
        case: "host_numa_flag_matches_host_numa_pool_creation",
        attr: DA::CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED,
        name: "HOST_NUMA_MEMORY_POOLS_SUPPORTED",
        printed: |d| d.host_numa_pools,
        pool: |e| {
            let numa =
                e.m.devices
                    .get(e.dev as usize)
                    .map_or(0, |d| d.host_numa_id.max(0) as i32);
            pinned_at(mem_location(LT::CU_MEM_LOCATION_TYPE_HOST_NUMA, numa))
        },
    },
    // Kills 823-fabric-underclaimed.
    Claim {
        case: "fabric_flag_matches_fabric_pool_creation",
        attr: DA::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED,
        name: "HANDLE_TYPE_FABRIC_SUPPORTED",
        printed: |d| d.fabric,
        pool: |e| {
            let mut props = device_props(e.dev);
            props.handleTypes = HT::CU_MEM_HANDLE_TYPE_FABRIC;
            props
        },
    },
];

/// Attributes added by CUDA 13.x headers: name, attribute, value width (bytes), the driver CUDA
/// version from which it is answered (the header that added it: 13.5; R580, CUDA 13.0, refuses
/// each with INVALID_VALUE), and its value for a device pool of `MAX_SIZE` on the case's device.
type Newer = (&'static str, A, usize, i32, fn(CUdevice) -> u64);
const NEWER: &[Newer] = &[
    ("allocation_type", A::CU_MEMPOOL_ATTR_ALLOCATION_TYPE, 4, 13050, |_| 1),
    (
        "export_handle_types",
        A::CU_MEMPOOL_ATTR_EXPORT_HANDLE_TYPES,
        4,
        13050,
        |_| 0,
    ),
    ("location_id", A::CU_MEMPOOL_ATTR_LOCATION_ID, 4, 13050, |d| d as u64),
    ("location_type", A::CU_MEMPOOL_ATTR_LOCATION_TYPE, 4, 13050, |_| 1),
    ("max_pool_size", A::CU_MEMPOOL_ATTR_MAX_POOL_SIZE, 8, 13050, |_| {
        MAX_SIZE as u64
    }),
    (
        "hw_decompress_enabled",
        A::CU_MEMPOOL_ATTR_HW_DECOMPRESS_ENABLED,
        4,
        13050,
        |_| 0,
    ),
    // -1 (an int): a device pool is localised to no locality domain. Kills
    // 828-locality-domain-not-supported (issue 48).
    (
        "locality_domain_id",
        A::CU_MEMPOOL_ATTR_LOCALITY_DOMAIN_ID,
        4,
        13050,
        |_| 0xffff_ffff,
    ),
];
/// The maxSize of the pool whose CUDA 13 attributes are read.
const MAX_SIZE: usize = 256 << 20;

/// A pool on `dev` that keeps what is freed (threshold max); `live` bytes stay allocated, `freed`
/// blocks are allocated and freed. Returns the pool, the live pointer (0 for none) and the stream.
fn pool_holding(dev: CUdevice, live: usize, freed: &[usize]) -> R<(Pool, CUdeviceptr, Stream)> {
    let p = Pool::on_device(dev)?;
    set_u64(p.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
    let s = Stream::new()?;
    let a = if live > 0 { alloc_from(p.0, live, s.0)? } else { 0 };
    let ptrs: Vec<_> = freed.iter().map(|&n| alloc_from(p.0, n, s.0)).collect::<R<_>>()?;
    for q in ptrs {
        free_async(q, s.0)?;
    }
    s.sync()?;
    Ok((p, a, s))
}

/// The trials of `CLAIMS`: the flag the header printed is the device's answer now, and the pool
/// it promises is made exactly when it is claimed.
fn claim_cases() -> Vec<Case> {
    CLAIMS
        .iter()
        .map(|c| {
            Case::gpu(823, c.case, move |e| {
                let now = device_attr(e.dev, c.attr, c.name)? != 0;
                let printed = e.m.devices.get(e.dev as usize).map(c.printed);
                ensure!(
                    printed.is_none_or(|p| p == now),
                    "{} answers {now}, the report header printed {printed:?}",
                    c.name
                );
                let r = create_code(&(c.pool)(e));
                note(format!("{} {now}: cuMemPoolCreate answers {}", c.name, code_name(r)));
                if now {
                    ok(&format!("cuMemPoolCreate(the pool {} claims)", c.name), r)
                } else {
                    ensure!(
                        refused(r),
                        "{} is 0 but cuMemPoolCreate of that pool answers {} (expected INVALID_VALUE or NOT_SUPPORTED)",
                        c.name,
                        code_name(r)
                    );
                    Ok(())
                }
            })
        })
        .collect()
}

/// CUDA 13.x attribute `a` of `pool`, judged by `NEWER`'s rule: `Some(value)` (masked to its
/// width) where the driver answers it; `None` where a driver below the attribute's version refuses
/// it with the documented INVALID_VALUE (recorded; any other refusal fails, and so does any
/// refusal from a driver at or above it). A driver below the version that answers is noted.
pub(super) fn newer_attr(e: &Env, pool: CUmemoryPool, a: A) -> R<Option<u64>> {
    let &(name, _, width, since, _) = NEWER
        .iter()
        .find(|n| n.1 == a)
        .ok_or_else(|| format!("attribute {} is not one of CUDA 13's newer pool attributes", a.0))?;
    let mut buf = [0u8; 16];
    let r = unsafe { cuMemPoolGetAttribute(pool, a, buf.as_mut_ptr().cast()) };
    let what = format!(
        "cuMemPoolGetAttribute({name}) on driver CUDA {} (answered from {since})",
        e.m.driver_version
    );
    if e.m.driver_version < i64::from(since) && r != SUCCESS {
        return expect(&what, r, CUresult::CUDA_ERROR_INVALID_VALUE).map(|()| None);
    }
    ok(&what, r)?;
    if e.m.driver_version < i64::from(since) {
        note(format!(
            "driver CUDA {} answers {name}, which is listed from CUDA {since}",
            e.m.driver_version
        ));
    }
    let mask = if width == 4 { 0xffff_ffff } else { u64::MAX };
    Ok(Some(u64::from_le_bytes(buf[..8].try_into().unwrap()) & mask))
}

/// The trials of `NEWER`: a driver at or above the attribute's version answers SUCCESS, writes
/// the attribute's width and the pool's value; one below it refuses with the documented
/// INVALID_VALUE (judged: any other refusal fails), or answers as a newer one does
/// ([`newer_attr`]). Kills 828-max-pool-size-not-supported (on R580 and on a CUDA 13.5 driver
/// alike).
fn newer_cases() -> Vec<Case> {
    NEWER
        .iter()
        .map(|&(name, a, width, _, want)| {
            Case::gpu(828, format!("cuda13_{name}_value_width_{width}"), move |e| {
                let mut props = device_props(e.dev);
                props.maxSize = MAX_SIZE;
                let p = Pool::create(&props)?;
                let Some(val) = newer_attr(e, p.0, a)? else {
                    return Ok(());
                };
                let w = written_width(p.0, a)?;
                ensure!(w == width, "wrote {w} bytes, expected {width}");
                let want = want(e.dev);
                ensure!(val == want, "value {val}, expected {want} from the pool's properties");
                Ok(())
            })
        })
        .collect()
}

pub fn cases() -> Vec<Case> {
    let mut v = claim_cases();
    v.extend(newer_cases());
    v.extend([
        // The header's supported-handle-types value is what the device does: every claimed type
        // of Linux (POSIX fd, fabric) makes a pool, a claimed POSIX fd exports; an unclaimed one
        // is refused; no Windows type is claimed on Linux. Kills 823-handle-types-overclaimed.
        Case::gpu(823, "supported_handle_types_match_pools", |e| {
            let claimed = supported_handle_types(e.dev)?;
            let windows = (HT::CU_MEM_HANDLE_TYPE_WIN32.0 | HT::CU_MEM_HANDLE_TYPE_WIN32_KMT.0) & claimed;
            ensure!(
                windows == 0 && claimed & !0xf == 0,
                "MEMPOOL_SUPPORTED_HANDLE_TYPES {claimed:#x} claims types Linux has not (Windows {windows:#x}, \
                 unknown {:#x})",
                claimed & !0xf
            );
            for ht in [
                HT::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                HT::CU_MEM_HANDLE_TYPE_FABRIC,
            ] {
                let r = create_with(e.dev, ht);
                if claimed & ht.0 != 0 {
                    ensure!(
                        r == SUCCESS,
                        "handle type {:#x} claimed ({claimed:#x}) but cuMemPoolCreate answers {}",
                        ht.0,
                        code_name(r)
                    );
                } else {
                    ensure!(
                        r == CUresult::CUDA_ERROR_INVALID_VALUE || r == CUresult::CUDA_ERROR_NOT_SUPPORTED,
                        "handle type {:#x} not claimed ({claimed:#x}) but cuMemPoolCreate answers {}",
                        ht.0,
                        code_name(r)
                    );
                }
            }
            if claimed & HT::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR.0 != 0 {
                drop(export_pool_fd(Pool::ipc(e.dev)?.0)?);
            }
            Ok(())
        }),
        // The reuse flags are ints read as booleans: any non-zero value turns a flag on, and 0 reads
        // back 0. The documentation is silent on what a non-zero value reads back as; R580 reads
        // back 1 for 2, -1 and 0x100 on each flag (74 committed reports, H100 and H200, 2026-11-25 to
        // 27): on the branches of REUSE_FLAG_READS_ONE exactly 1, elsewhere the value set or 1,
        // noted as uncalibrated. Kills 832-reuse-flag-not-boolean and 832-reuse-flag-kept-as-set.
        Case::gpu(832, "reuse_flags_any_nonzero_is_on", |e| {
            let (version, branch) = crate::driver::departures::driver();
            let exact = crate::driver::departures::branch_within(REUSE_FLAG_READS_ONE, branch);
            if !exact {
                note(format!(
                    "uncalibrated: driver {version}'s read-back of a reuse flag set non-zero is judged as the value \
                     set or 1 (exactly 1 on branches {}-{})",
                    REUSE_FLAG_READS_ONE.0, REUSE_FLAG_READS_ONE.1
                ));
            }
            let p = Pool::on_device(e.dev)?;
            for a in [
                A::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
                A::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
                A::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
            ] {
                for val in [2, -1, 0x100] {
                    set_i32(p.0, a, 0)?;
                    set_i32(p.0, a, val)?;
                    let got = get_i32(p.0, a)?;
                    if exact {
                        ensure!(
                            got == 1,
                            "attribute {} set to {val} reads {got}, expected 1 (driver branches {}-{} read every \
                             non-zero value back as 1)",
                            a.0,
                            REUSE_FLAG_READS_ONE.0,
                            REUSE_FLAG_READS_ONE.1
                        );
                    }
                    ensure!(
                        got == val || got == 1,
                        "attribute {} set to {val} reads {got}, expected {val} or 1 (on)",
                        a.0
                    );
                    note(format!("attribute {} set to {val} reads {got}", a.0));
                }
            }
            Ok(())
        }),
        // A trim below one chunk, what exactly stays: 1 MiB in use and a chunk freed (C, the pool's
        // reservation chunk measured on this device: two chunks reserved), trimmed to 1 MiB: the chunk
        // in use stays, the free one goes. Kills 833-trim-keeps-too-much (and 833-trims-nothing).
        Case::gpu(833, "trim_below_a_chunk_keeps_the_chunk_in_use", |e| {
            let chunk = pool_chunk(e.dev)?;
            let (p, a, s) = pool_holding(e.dev, MIB, &[chunk as usize])?;
            let before = get_u64(p.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
            let trimmed = ok("cuMemPoolTrimTo(1 MiB)", unsafe { cuMemPoolTrimTo(p.0, MIB) });
            let after = get_u64(p.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
            free_async(a, s.0)?;
            s.sync()?;
            trimmed?;
            let (before, after) = (before?, after?);
            note(format!(
                "1 MiB in use, one chunk ({chunk} bytes, measured) freed: reserved {before} before, {after} after \
                 trimming to 1 MiB"
            ));
            ensure!(
                before == 2 * chunk && after == chunk,
                "reserved {before} before and {after} after trimming to 1 MiB; expected {} and {chunk} (one chunk \
                 holds the 1 MiB in use, the other is free; the chunk measured on this device is {chunk})",
                2 * chunk
            );
            Ok(())
        })
        .alone(),
        // Nothing in use, two freed chunks, trimmed to 1 MiB: R580 keeps whole chunks, so exactly
        // one chunk stays (at least 1 MiB kept, as little as the granule allows). Kills
        // 833-trim-keeps-too-much and 833-ignores-min-bytes.
        Case::gpu(833, "trim_below_a_chunk_keeps_one_chunk", |e| {
            let chunk = pool_chunk(e.dev)?;
            let (p, _, _s) = pool_holding(e.dev, 0, &[chunk as usize, chunk as usize])?;
            let before = get_u64(p.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
            ok("cuMemPoolTrimTo(1 MiB)", unsafe { cuMemPoolTrimTo(p.0, MIB) })?;
            let after = get_u64(p.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
            note(format!(
                "nothing in use, two chunks ({chunk} bytes each, measured) freed: reserved {before} before, {after} \
                 after trimming to 1 MiB"
            ));
            ensure!(
                before == 2 * chunk && after == chunk,
                "reserved {before} before and {after} after trimming to 1 MiB; expected {} and {chunk} (the chunk \
                 measured on this device)",
                2 * chunk
            );
            Ok(())
        })
        .alone(),
        // An export of an allocation still pending on a held stream: the documentation puts the
        // wait on the importer ("must not be accessed before the allocation operation completes
        // in the exporting process"), so the export itself succeeds at once, without waiting for
        // the stream. Kills 825-export-waits-for-allocation (the gate's safety limit opens it).
        Case::gpu(825, "export_pointer_of_a_pending_allocation", |e| {
            let p = Pool::ipc(e.dev)?;
            drop(export_pool_fd(p.0)?);
            let s = Stream::new()?;
            let gate = Gate::close(s.0, e.deadline())?;
            let a = alloc_from(p.0, MIB, s.0)?;
            let mut data = CUmemPoolPtrExportData::default();
            let r = unsafe { cuMemPoolExportPointer(&mut data, a) };
            let forced = gate.release();
            free_async(a, s.0)?;
            s.sync()?;
            ensure!(
                forced.is_none(),
                "cuMemPoolExportPointer waited for the held stream until the gate's safety limit opened it"
            );
            expect("cuMemPoolExportPointer(pending allocation)", r, SUCCESS)
        })
        .needs(Cap::Ipc),
    ]);
    v
}
