//! The bindings' types as a wrapper uses them, in every module: `Debug`, equality and hashing of
//! the pool structs (CUDA 13's `CUmemLocation` holds a union), and flag sets combined with `|`.

#![allow(non_snake_case)]

/// The same checks for every enabled major.
macro_rules! per_major {
    ($feature:literal, $m:ident) => {
        #[cfg(feature = $feature)]
        mod $m {
            use cuda_mempool_sys::$m::*;
            use std::collections::HashSet;

            fn device(id: i32) -> CUmemLocation {
                mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id)
            }

            /// A wrapper type holding the pool structs derives what the C types have.
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
            struct Wrapper {
                props: CUmemPoolProps,
                access: CUmemAccessDesc,
                node: CUDA_MEM_ALLOC_NODE_PARAMS,
            }

            #[test]
            fn pool_structs_print_compare_and_hash() {
                assert_eq!(
                    format!("{:?}", device(3)),
                    "CUmemLocation_st { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: 3 }"
                );
                assert_eq!(device(3), device(3));
                assert_ne!(device(3), device(4));
                assert_ne!(
                    device(0),
                    mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_INVALID, 0)
                );
                let set: HashSet<CUmemLocation> = [device(1), device(1), device(2)].into_iter().collect();
                assert_eq!(set.len(), 2);

                let props = CUmemPoolProps {
                    allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
                    location: device(0),
                    ..Default::default()
                };
                let access = CUmemAccessDesc {
                    location: device(1),
                    flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                };
                let w = Wrapper {
                    props,
                    access,
                    node: CUDA_MEM_ALLOC_NODE_PARAMS {
                        poolProps: props,
                        ..Default::default()
                    },
                };
                let text = format!("{w:?}");
                for part in [
                    "allocType: CU_MEM_ALLOCATION_TYPE_PINNED",
                    "location: CUmemLocation_st { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: 0 }",
                    "flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE",
                    "poolProps: CUmemPoolProps_st {",
                ] {
                    assert!(text.contains(part), "{part} in {text}");
                }
                assert_eq!(w, w.clone());
                let mut other = w;
                other.props.location = device(1);
                assert_ne!(w, other);
                let set: HashSet<Wrapper> = [w, w, other].into_iter().collect();
                assert_eq!(set.len(), 2);
            }

            #[test]
            fn flag_sets_combine() {
                let fd = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
                let win32 = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_WIN32;
                let both = fd | win32;
                assert_eq!(both.0, 3);
                assert_eq!(both & fd, fd);
                let mut acc = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
                acc |= fd;
                acc |= win32;
                assert_eq!(acc, both);
                acc &= win32;
                assert_eq!(acc, win32);
                assert_eq!(
                    format!("{both:?}"),
                    "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_WIN32"
                );
                // A named value is its name; bits no constant names are shown in hex.
                assert_eq!(format!("{fd:?}"), "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR");
                assert_eq!(
                    format!("{:?}", fd | CUmemAllocationHandleType(0x100)),
                    "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CUmemAllocationHandleType(0x100)"
                );
                // The flags an IPC event needs, in one value.
                let ipc = CUevent_flags::CU_EVENT_DISABLE_TIMING | CUevent_flags::CU_EVENT_INTERPROCESS;
                assert_eq!(ipc.0, 6);
                assert_eq!(
                    format!("{ipc:?}"),
                    "CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS"
                );
                let flags = CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC | CUctx_flags::CU_CTX_MAP_HOST;
                assert_eq!(
                    format!("{flags:?}"),
                    "CU_CTX_SCHED_BLOCKING_SYNC | CU_CTX_MAP_HOST"
                );
                let graph = CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH
                    | CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
                assert_eq!(graph.0, 9);
                let stream = CUstream_flags::CU_STREAM_DEFAULT | CUstream_flags::CU_STREAM_NON_BLOCKING;
                assert_eq!(stream, CUstream_flags::CU_STREAM_NON_BLOCKING);
                let wait = CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT | CUevent_wait_flags::CU_EVENT_WAIT_EXTERNAL;
                assert_eq!(wait, CUevent_wait_flags::CU_EVENT_WAIT_EXTERNAL);
                let lookup = CUdriverProcAddress_flags::CU_GET_PROC_ADDRESS_LEGACY_STREAM
                    | CUdriverProcAddress_flags::CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
                assert_eq!(lookup.0, 3);
            }
        }
    };
}
per_major!("cuda-11", cuda11);
per_major!("cuda-12", cuda12);
per_major!("cuda-13", cuda13);

/// CUDA 13's location keeps `id` in a union beside `localized`: `Debug`, `==` and `Hash` read the
/// field `type_` names, so a device location prints and compares as in the other modules.
#[cfg(feature = "cuda-13")]
#[test]
fn cuda13_location_reads_the_field_its_type_names() {
    use cuda_mempool_sys::cuda13::*;
    let domain = |device: u8, domain: u8| CUmemLocation {
        type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE_LOCALITY_DOMAIN,
        __bindgen_anon_1: CUmemLocation_st__bindgen_ty_1::from_localized(
            CUmemLocation_st__bindgen_ty_1__bindgen_ty_1 {
                deviceId: device,
                localityDomainId: domain,
            },
        ),
    };
    assert_eq!(
        format!("{:?}", domain(1, 2)),
        "CUmemLocation_st { type_: CU_MEM_LOCATION_TYPE_DEVICE_LOCALITY_DOMAIN, localized: \
         CUmemLocation_st__bindgen_ty_1__bindgen_ty_1 { deviceId: 1, localityDomainId: 2 } }"
    );
    assert_eq!(domain(1, 2), domain(1, 2));
    assert_ne!(domain(1, 2), domain(1, 3));
    // The union's part alone says nothing of which field is meant: it prints its bytes as `id` does.
    assert_eq!(
        format!("{:?}", domain(1, 2).__bindgen_anon_1),
        format!(
            "CUmemLocation_st__bindgen_ty_1 {{ raw: {} }}",
            i32::from_ne_bytes([1, 2, 0, 0])
        )
    );
    #[cfg(feature = "cuda-12")]
    {
        use cuda_mempool_sys::cuda12;
        let twelve = cuda12::mem_location(cuda12::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, 5);
        let thirteen = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, 5);
        assert_eq!(format!("{twelve:?}"), format!("{thirteen:?}"));
    }
}
