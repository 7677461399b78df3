//! Every API before `cuInit`, and after `cuInit` found no device. These run on any machine, GPU or
//! not, each in a fresh child (the parent's probe has already initialised the driver). On a GPU
//! machine the no-device child hides the GPUs with CUDA_VISIBLE_DEVICES="".

use crate::driver::*;
use crate::harness::{run_child, Case, Shared};
use crate::cu::*;
use std::collections::BTreeMap;

/// Call each of the 14 APIs once with harmless arguments; `(index, code)`.
pub fn call_all() -> Vec<(u32, u32)> {
    let mut p: CUdeviceptr = 0;
    let mut pool: CUmemoryPool = std::ptr::null_mut();
    let mut data = CUmemPoolPtrExportData::default();
    let mut fd: i32 = -1;
    let mut flags = CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE;
    let mut loc = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, 0);
    let desc = CUmemAccessDesc {
        location: loc,
        flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    let mut v: u64 = 0;
    let (ns, np): (CUstream, CUmemoryPool) = (std::ptr::null_mut(), std::ptr::null_mut());
    let posix = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    let attr = CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
    unsafe {
        vec![
            (820, cuMemAllocAsync(&mut p, 1024, ns)),
            (821, cuMemAllocFromPoolAsync(&mut p, 1024, np, ns)),
            (822, cuMemFreeAsync(0, ns)),
            (823, cuMemPoolCreate(&mut pool, &device_props(0))),
            (824, cuMemPoolDestroy(np)),
            (825, cuMemPoolExportPointer(&mut data, 0)),
            (
                826,
                cuMemPoolExportToShareableHandle((&mut fd as *mut i32).cast(), np, posix, 0),
            ),
            (827, cuMemPoolGetAccess(&mut flags, np, &mut loc)),
            (828, cuMemPoolGetAttribute(np, attr, (&mut v as *mut u64).cast())),
            (
                829,
                cuMemPoolImportFromShareableHandle(&mut pool, -1isize as *mut _, posix, 0),
            ),
            (830, cuMemPoolImportPointer(&mut p, np, &mut data)),
            (831, cuMemPoolSetAccess(np, &desc, 1)),
            (832, cuMemPoolSetAttribute(np, attr, (&mut v as *mut u64).cast())),
            (833, cuMemPoolTrimTo(np, 0)),
        ]
        .into_iter()
        .map(|(i, r)| (i, r.0))
        .collect()
    }
}

/// Child role `uninit`: no cuInit at all. Child role `nodevice`: cuInit first (and print its code).
pub fn child_main(init_first: bool) -> i32 {
    if init_first {
        println!("init {}", unsafe { cuInit(0) }.0);
    }
    for (i, r) in call_all() {
        println!("{i} {r}");
    }
    0
}

type Answers = BTreeMap<String, u32>;
static BEFORE: Shared<Answers> = Shared::new();
static NO_DEVICE: Shared<Answers> = Shared::new();

fn answers(role: &str, envs: &[(&str, &str)]) -> Result<Answers, String> {
    let out = run_child(role, envs)?;
    if out.status.and_then(|s| s.code()) != Some(0) {
        return Err(out.describe());
    }
    Ok(out
        .stdout
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter_map(|(k, v)| v.parse().ok().map(|v| (k.to_string(), v)))
        .collect())
}

fn check(a: &Answers, key: &str, want: CUresult, what: &str) -> R {
    let got = a
        .get(key)
        .copied()
        .ok_or_else(|| format!("child printed no answer for {key}"))?;
    expect(what, CUresult(got), want)
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for (idx, api) in crate::APIS {
        let key = idx.to_string();
        let k2 = key.clone();
        v.push(Case::new(*idx, "before_cuInit_not_initialized", &[], move |_| {
            let a = BEFORE.get(|| answers("uninit", &[]))?;
            check(
                a,
                &key,
                CUresult::CUDA_ERROR_NOT_INITIALIZED,
                &format!("{api} before cuInit"),
            )
        }));
        v.push(Case::new(
            *idx,
            "after_cuInit_no_device_not_initialized",
            &[],
            move |_| {
                let a = NO_DEVICE.get(|| answers("nodevice", &[("CUDA_VISIBLE_DEVICES", "")]))?;
                check(
                    a,
                    "init",
                    CUresult::CUDA_ERROR_NO_DEVICE,
                    "cuInit with no visible device",
                )?;
                check(
                    a,
                    &k2,
                    CUresult::CUDA_ERROR_NOT_INITIALIZED,
                    &format!("{api} after cuInit found no device"),
                )
            },
        ));
    }
    v
}
