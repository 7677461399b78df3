//! 823 cuMemPoolCreate and 824 cuMemPoolDestroy: properties, defaults, refusals, destruction rules.

use crate::cases::prelude::*;

use crate::driver::cu::CUmemAllocationHandleType_enum as HT;
use crate::driver::cu::CUmemLocationType_enum as LT;
use crate::driver::cu::CUmemPool_attribute_enum as A;

/// A row of cuMemPoolCreate's negative table: a change to valid device-pool properties, and the
/// code the driver returns for it.
struct BadProps {
    case: &'static str,
    edit: fn(&mut CUmemPoolProps, &Env),
    want: CUresult,
    /// The driver's answer departs from the documentation (`driver/departures.rs`).
    deviation: Option<&'static str>,
}

const E_VALUE: CUresult = CUresult::CUDA_ERROR_INVALID_VALUE;

const BAD_PROPS: &[BadProps] = &[
    BadProps {
        case: "alloc_type_invalid",
        edit: |p, _| p.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_INVALID,
        want: E_VALUE,
        deviation: None,
    },
    BadProps {
        case: "alloc_type_out_of_range",
        edit: |p, _| p.allocType = CUmemAllocationType_enum(0x1000),
        want: E_VALUE,
        deviation: None,
    },
    BadProps {
        case: "location_type_invalid",
        edit: |p, e| p.location = mem_location(LT::CU_MEM_LOCATION_TYPE_INVALID, e.dev),
        want: E_VALUE,
        deviation: None,
    },
    BadProps {
        case: "location_type_out_of_range",
        edit: |p, e| p.location = mem_location(LT(0x1000), e.dev),
        want: E_VALUE,
        deviation: None,
    },
    BadProps {
        case: "location_device_past_last",
        edit: |p, e| p.location = mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.m.devices.len() as i32),
        want: E_VALUE,
        deviation: None,
    },
    BadProps {
        case: "location_device_negative",
        edit: |p, _| p.location = mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, -1),
        want: E_VALUE,
        deviation: None,
    },
    BadProps {
        case: "handle_type_unknown_bit",
        edit: |p, _| p.handleTypes = HT(0x40),
        want: E_VALUE,
        deviation: None,
    },
    // R580 answers INVALID_VALUE (not NOT_SUPPORTED) for a Windows handle type on Linux.
    BadProps {
        case: "handle_type_win32_on_linux",
        edit: |p, _| p.handleTypes = HT::CU_MEM_HANDLE_TYPE_WIN32,
        want: E_VALUE,
        deviation: Some("win32_handle_on_linux"),
    },
];

/// A fabric-handle pool on the case's device and the code of exporting its handle.
fn fabric_export(e: &Env) -> R<(Pool, CUresult)> {
    let mut props = device_props(e.dev);
    props.handleTypes = HT::CU_MEM_HANDLE_TYPE_FABRIC;
    let p = Pool::create(&props)?;
    let mut h = CUmemFabricHandle::default();
    let r = unsafe {
        cuMemPoolExportToShareableHandle(
            (&mut h as *mut CUmemFabricHandle).cast(),
            p.0,
            HT::CU_MEM_HANDLE_TYPE_FABRIC,
            0,
        )
    };
    Ok((p, r))
}

pub fn cases() -> Vec<Case> {
    let mut v = vec![
        Case::gpu(823, "device_pool_created_and_destroyed", |e| {
            let p = Pool::on_device(e.dev)?;
            ensure!(!p.0.is_null(), "cuMemPoolCreate returned success and a null pool");
            ok("cuMemPoolDestroy", unsafe { cuMemPoolDestroy(p.take()) })
        }),
        Case::gpu(823, "new_pool_defaults", |e| {
            let p = Pool::on_device(e.dev)?;
            for (a, want) in [
                (A::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, 1),
                (A::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, 1),
                (A::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, 1),
            ] {
                let got = get_i32(p.0, a)?;
                ensure!(
                    got == want,
                    "attribute {} of a new pool: expected {want}, got {got}",
                    a.0
                );
            }
            for a in [
                A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                A::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
                A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
                A::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
            ] {
                let got = get_u64(p.0, a)?;
                ensure!(got == 0, "attribute {} of a new pool: expected 0, got {got}", a.0);
            }
            Ok(())
        }),
        Case::gpu(823, "null_pool_out_invalid_value", |e| {
            expect(
                "cuMemPoolCreate(NULL, props)",
                unsafe { cuMemPoolCreate(std::ptr::null_mut(), &device_props(e.dev)) },
                E_VALUE,
            )
        }),
        Case::gpu(823, "null_props_invalid_value", |_| {
            let mut p = std::ptr::null_mut();
            expect(
                "cuMemPoolCreate(&pool, NULL)",
                unsafe { cuMemPoolCreate(&mut p, std::ptr::null()) },
                E_VALUE,
            )
        }),
        Case::gpu(823, "posix_fd_handle_type", |e| {
            // A pool made with the POSIX fd handle type is one whose handle exports as an fd.
            let mut props = device_props(e.dev);
            props.handleTypes = HT::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
            let p = Pool::create(&props)?;
            drop(export_pool_fd(p.0)?);
            Ok(())
        })
        .needs(Cap::Ipc),
        // The hardware-decompress usage bit, judged per branch: documented SUCCESS from CUDA 12.8
        // on, INVALID_VALUE on the branches before it (departure hw_decompress_usage_refused).
        // Kills 823-hw-decompress-not-supported.
        Case::gpu(823, "usage_hw_decompress_bit_per_branch", |e| {
            let mut props = device_props(e.dev);
            props.usage = CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS as u16;
            let mut p = std::ptr::null_mut();
            let r = unsafe { cuMemPoolCreate(&mut p, &props) };
            if r == SUCCESS {
                drop(Pool(p));
            }
            expect_code(
                &e.policy(),
                "hw_decompress_usage_refused",
                "cuMemPoolCreate(usage HW_DECOMPRESS)",
                r,
            )
        }),
        Case::gpu(823, "usage_unknown_bit_accepted_driver_behaviour", |e| {
            // R580 ignores unknown bits of `usage` (no refusal).
            let mut props = device_props(e.dev);
            props.usage = 0x8000;
            let mut p = std::ptr::null_mut();
            let r = unsafe { cuMemPoolCreate(&mut p, &props) };
            if r == SUCCESS {
                let _ = unsafe { cuMemPoolDestroy(p) };
            }
            expect_code(
                &e.policy(),
                "usage_unknown_bit_accepted",
                "cuMemPoolCreate(usage 0x8000)",
                r,
            )
        }),
        // On a device that reports fabric handles, R580 creates a fabric pool even with no IMEX
        // channel; exporting its handle answers NOT_PERMITTED (the documented code for a missing
        // channel) and destroying the pool afterwards dies by SIGSEGV inside cuMemPoolDestroy (H100,
        // 2026-11-24; earlier runs also died inside the export, or by SIGABRT at the destroy). The
        // destroy is reached only after the export answered NOT_PERMITTED: on any other answer the
        // pool is left to the process's end, so the later crash cannot pass a wrong answer (it did
        // before: 826-fabric-no-channel-invalid-value is the mutant that showed it).
        Case::gpu(826, "fabric_export_without_imex_channel_crashes_driver", |e| {
            if e.m.has(Cap::Imex).is_ok() {
                return ignore("this host has an IMEX channel: see fabric_export_with_imex_channel_succeeds");
            }
            let (p, r) = fabric_export(e)?;
            let answer = expect(
                "cuMemPoolExportToShareableHandle(fabric, no IMEX channel)",
                r,
                CUresult::CUDA_ERROR_NOT_PERMITTED,
            );
            if answer.is_err() {
                let _ = p.take();
            }
            answer
        })
        .needs(Cap::Fabric)
        .crashes(
            SIGSEGV_OR_SIGABRT,
            CUresult::CUDA_ERROR_NOT_PERMITTED,
            "R580 (580.159.04) without IMEX channels",
        )
        .or_later_inside(&[824])
        // Under jemalloc the corrupted heap aborted the process in the suite's own code, after
        // cuMemPoolDestroy returned (one H200, 2026-11-29, 3 runs of 3; issue 58).
        .heap_dependent(),
        Case::gpu(826, "fabric_export_with_imex_channel_succeeds", |e| {
            let (_p, r) = fabric_export(e)?;
            ok("cuMemPoolExportToShareableHandle(fabric)", r)
        })
        .needs(Cap::Imex),
        Case::gpu(823, "max_size_limits_allocation", |e| {
            let mut props = device_props(e.dev);
            props.maxSize = 64 << 20;
            let p = Pool::create(&props)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, 32 << 20, s.0)?;
            let mut b: CUdeviceptr = 0;
            let r = unsafe { cuMemAllocFromPoolAsync(&mut b, 64 << 20, p.0, s.0) };
            free_async(a, s.0)?;
            s.sync()?;
            expect("allocation beyond maxSize", r, CUresult::CUDA_ERROR_OUT_OF_MEMORY)
        })
        // Alone: it provokes out-of-memory in its process.
        .alone(),
        Case::gpu(823, "host_location_pool_needs_device_access", |e| {
            let props = CUmemPoolProps {
                allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
                location: mem_location(LT::CU_MEM_LOCATION_TYPE_HOST, 0),
                ..Default::default()
            };
            let p = Pool::create(&props)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, 1 << 20, s.0)?;
            // The device has no access to a host pool until granted.
            let r = unsafe { cuMemsetD8Async(a, 7, 1 << 20, s.0) };
            if r != E_VALUE {
                free_async(a, s.0)?;
                s.sync()?;
                return expect("device memset on a host pool before access is granted", r, E_VALUE);
            }
            let d = CUmemAccessDesc {
                location: mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, e.dev),
                flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            ok("cuMemPoolSetAccess(device, read-write)", unsafe {
                cuMemPoolSetAccess(p.0, &d, 1)
            })?;
            ok("cuMemsetD8Async", unsafe { cuMemsetD8Async(a, 7, 1 << 20, s.0) })?;
            let mut host = vec![0u8; 16];
            // Host-pool memory is host memory: copy with the unified cuMemcpyAsync (DtoH refuses it).
            ok("cuMemcpyAsync", unsafe {
                cuMemcpyAsync(host.as_mut_ptr() as CUdeviceptr, a, 16, s.0)
            })?;
            free_async(a, s.0)?;
            s.sync()?;
            ensure!(host.iter().all(|&b| b == 7), "host-pool memory read back wrong bytes");
            Ok(())
        })
        .needs(Cap::HostPool),
        Case::gpu(823, "host_numa_location_pool", |e| {
            let numa = e.m.devices[e.dev as usize].host_numa_id.max(0) as i32;
            let props = CUmemPoolProps {
                allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
                location: mem_location(LT::CU_MEM_LOCATION_TYPE_HOST_NUMA, numa),
                ..Default::default()
            };
            let p = Pool::create(&props)?;
            // Its memory is host memory (CU_MEMORYTYPE_HOST, 1; a device pool's is DEVICE, 2).
            let kind = pool_memory_type(p.0, 1 << 20)?;
            ensure!(
                kind == CU_MEMORYTYPE_HOST,
                "memory of a host NUMA pool has memory type {kind}, not host ({CU_MEMORYTYPE_HOST})"
            );
            Ok(())
        })
        .needs(Cap::HostNuma),
        Case::gpu(824, "null_pool_invalid_value", |_| {
            expect(
                "cuMemPoolDestroy(NULL)",
                unsafe { cuMemPoolDestroy(std::ptr::null_mut()) },
                E_VALUE,
            )
        }),
        Case::gpu(824, "default_pool_refused", |e| {
            let d = default_pool(e.dev)?;
            expect(
                "cuMemPoolDestroy(default pool)",
                unsafe { cuMemPoolDestroy(d) },
                E_VALUE,
            )
        }),
        Case::gpu(824, "destroying_current_pool_restores_default", |e| {
            let p = Pool::on_device(e.dev)?;
            let _cur = CurrentPool::set(e.dev, p.0)?;
            ensure!(
                current_pool(e.dev)? == p.0,
                "cuDeviceSetMemPool did not make the pool current"
            );
            ok("cuMemPoolDestroy(current pool)", unsafe { cuMemPoolDestroy(p.take()) })?;
            let (cur, def) = (current_pool(e.dev)?, default_pool(e.dev)?);
            ensure!(
                cur == def,
                "after destroying the current pool, the current pool is {cur:p}, not the default {def:p}"
            );
            Ok(())
        })
        .serial(),
        Case::gpu(824, "destroy_with_outstanding_allocation_then_free", |e| {
            // Destroying a pool with live allocations succeeds; the memory stays usable and is
            // released when freed.
            let p = Pool::on_device(e.dev)?;
            let s = Stream::new()?;
            let a = alloc_from(p.0, 1 << 20, s.0)?;
            s.sync()?;
            ok("cuMemPoolDestroy(pool with a live allocation)", unsafe {
                cuMemPoolDestroy(p.take())
            })?;
            ok("cuMemsetD8Async on memory of a destroyed pool", unsafe {
                cuMemsetD8Async(a, 1, 1 << 20, s.0)
            })?;
            free_async(a, s.0)?;
            s.sync()
        }),
        Case::gpu(824, "destroy_twice", |e| {
            let p = Pool::on_device(e.dev)?.take();
            ok("first cuMemPoolDestroy", unsafe { cuMemPoolDestroy(p) })?;
            expect(
                "second cuMemPoolDestroy of the same handle",
                unsafe { cuMemPoolDestroy(p) },
                E_VALUE,
            )
        })
        .hands_freed_handles(),
    ];
    for row in BAD_PROPS {
        let (edit, want, deviation) = (row.edit, row.want, row.deviation);
        v.push(Case::gpu(823, format!("{}_refused", row.case), move |e| {
            let mut props = device_props(e.dev);
            edit(&mut props, e);
            let mut p = std::ptr::null_mut();
            let r = unsafe { cuMemPoolCreate(&mut p, &props) };
            if r == SUCCESS {
                unsafe {
                    let _ = cuMemPoolDestroy(p);
                }
            }
            match deviation {
                Some(d) => expect_code(&e.policy(), d, "cuMemPoolCreate", r),
                None => expect("cuMemPoolCreate", r, want),
            }
        }));
    }
    v
}
