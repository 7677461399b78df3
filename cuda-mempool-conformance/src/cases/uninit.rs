//! Every API before `cuInit`, and after `cuInit` found no device. These run on any machine, GPU or
//! not, each answer from a fresh child (the worker has already initialised the driver). On a GPU
//! machine the no-device child hides the GPUs with CUDA_VISIBLE_DEVICES="".
//!
//! The same child, asked to (LOOKUP_VAR), looks up the 14 APIs with cuGetProcAddress instead and
//! prints what cuDeviceGetCount answers afterwards, still without cuInit: a library that
//! initialises the driver in its look-up is `suite::lookup_does_not_initialise`'s one failure (the
//! coordinator asks it after the probe), and the before-cuInit trials are then not judged.
//!
//! The child prints each API's answer as soon as it has it. A child that dies or hangs inside one
//! API (a library that crashes on a NULL pool, say) loses that answer only: the next child skips
//! the APIs already answered and the one that failed, which is blamed for it.

use crate::cases::prelude::*;
use crate::harness::child::run_child_for;
use std::collections::BTreeMap;
use std::io::Write;

/// Call API `idx` once with harmless arguments.
fn call(idx: u32) -> CUresult {
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
        match idx {
            820 => cuMemAllocAsync(&mut p, 1024, ns),
            821 => cuMemAllocFromPoolAsync(&mut p, 1024, np, ns),
            822 => cuMemFreeAsync(0, ns),
            823 => cuMemPoolCreate(&mut pool, &device_props(0)),
            824 => cuMemPoolDestroy(np),
            825 => cuMemPoolExportPointer(&mut data, 0),
            826 => cuMemPoolExportToShareableHandle((&mut fd as *mut i32).cast(), np, posix, 0),
            827 => cuMemPoolGetAccess(&mut flags, np, &mut loc),
            828 => cuMemPoolGetAttribute(np, attr, (&mut v as *mut u64).cast()),
            829 => cuMemPoolImportFromShareableHandle(&mut pool, -1isize as *mut _, posix, 0),
            830 => cuMemPoolImportPointer(&mut p, np, &mut data),
            831 => cuMemPoolSetAccess(np, &desc, 1),
            832 => cuMemPoolSetAttribute(np, attr, (&mut v as *mut u64).cast()),
            833 => cuMemPoolTrimTo(np, 0),
            _ => CUresult::CUDA_ERROR_INVALID_VALUE,
        }
    }
}

/// Which APIs a child should skip (already answered): CONFORMANCE_UNINIT_SKIP=820,821,...
const SKIP_VAR: &str = "CONFORMANCE_UNINIT_SKIP";

/// Set (to anything) in an `uninit` child: look the 14 APIs up and print "lookup <code>" of
/// cuDeviceGetCount, calling none of them.
const LOOKUP_VAR: &str = "CONFORMANCE_UNINIT_LOOKUP";

/// cuGetProcAddress (the V2 form, else V1) for each of the 14 APIs at the version they appeared
/// in, then cuDeviceGetCount's answer: CUDA_ERROR_NOT_INITIALIZED unless a look-up initialised.
fn lookup_then_count() -> CUresult {
    for (_, api) in crate::driver::APIS {
        if look_up(Form::V2, api, APIS_SINCE, 0).is_err() {
            let _ = look_up(Form::V1, api, APIS_SINCE, 0);
        }
    }
    let mut n = 0;
    unsafe { cuDeviceGetCount(&mut n) }
}

/// cuDeviceGetCount's answer in an `uninit` child that looked up the 14 APIs (`lookup_then_count`),
/// or how that child failed; within `deadline`'s bound of a short-lived child.
pub fn lookup_in_child(deadline: Deadline) -> Result<i32, String> {
    let out = run_child_for(&Role::Uninit, &[(LOOKUP_VAR, "1")], deadline, deadline.child_answer())?;
    out.stdout
        .lines()
        .find_map(|l| l.strip_prefix("lookup ")?.trim().parse::<i64>().ok())
        .map(|c| c as i32)
        .ok_or_else(|| out.describe())
}

/// Child role `uninit`: no cuInit at all. Child role `nodevice`: cuInit first (and print its code).
pub fn child_main(init_first: bool) -> i32 {
    if !init_first && crate::os::setting_os(LOOKUP_VAR).is_some() {
        println!("lookup {}", lookup_then_count().0);
        return 0;
    }
    let skip: Vec<u32> = crate::os::setting(SKIP_VAR)
        .unwrap_or_default()
        .split(',')
        .filter_map(|s| s.parse().ok())
        .collect();
    let mut out = std::io::stdout().lock();
    if init_first {
        let _ = writeln!(out, "init {}", unsafe { cuInit(0) }.0);
        let _ = out.flush();
    }
    for (i, _) in crate::driver::APIS {
        if skip.contains(i) {
            continue;
        }
        let r = call(*i);
        let _ = writeln!(out, "{i} {}", r.0);
        let _ = out.flush();
    }
    0
}

/// An API's answer, or how the child that was asked died (and the API it was inside).
#[derive(Clone, Debug)]
enum Answer {
    Code(u32),
    Lost(String, Option<u32>),
}
type Answers = BTreeMap<String, Answer>;
static BEFORE: Shared<Answers> = Shared::new();
static NO_DEVICE: Shared<Answers> = Shared::new();

/// The answers of children in `role`, one more for each that died or hung on an API (bounded by
/// `deadline`'s bound of a short-lived child: a child normally answers all 14 in milliseconds; one
/// that hangs must not cost the trial's deadline).
fn answers(role: &Role, envs: &[(&str, &str)], deadline: Deadline) -> Result<Answers, String> {
    let mut a = Answers::new();
    for _ in 0..=crate::driver::APIS.len() {
        let skip: Vec<String> = a.keys().filter(|k| k.as_str() != "init").cloned().collect();
        let skip = skip.join(",");
        let mut env: Vec<(&str, &str)> = envs.to_vec();
        env.push((SKIP_VAR, &skip));
        let out = run_child_for(role, &env, deadline, deadline.child_answer())?;
        for (k, v) in out.stdout.lines().filter_map(|l| l.split_once(' ')) {
            if let Ok(v) = v.parse::<i64>() {
                a.insert(k.to_string(), Answer::Code(v as u32));
            }
        }
        if out.status.is_some_and(|s| s.success()) {
            return Ok(a);
        }
        // The API in flight: the first one without an answer.
        let Some((i, _)) = crate::driver::APIS
            .iter()
            .find(|(i, _)| !a.contains_key(&i.to_string()))
        else {
            return Err(out.describe());
        };
        a.insert(
            i.to_string(),
            Answer::Lost(out.describe(), out.inside.as_ref().map(|x| x.0)),
        );
    }
    Ok(a)
}

fn check(a: &Answers, key: &str, want: CUresult, what: &str) -> R {
    match a.get(key) {
        None => Err(format!("the child printed no answer for {key}").into()),
        Some(Answer::Lost(why, api)) => {
            if let Some(api) = api {
                blame::set(*api);
            }
            Err(format!("{what}: no answer, the {why}").into())
        }
        Some(Answer::Code(got)) => expect(what, CUresult(*got), want),
    }
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for (idx, api) in crate::driver::APIS {
        let key = idx.to_string();
        let k2 = key.clone();
        v.push(
            Case::new(*idx, "before_cuInit_not_initialized", &[], move |e| {
                let a = BEFORE.get(|| Ok(answers(&Role::Uninit, &[], e.deadline())?))?;
                check(
                    a,
                    &key,
                    CUresult::CUDA_ERROR_NOT_INITIALIZED,
                    &format!("{api} before cuInit"),
                )
            })
            .lane("uninit")
            .relies(&[Precondition::Library, Precondition::LookupNoInit]),
        );
        v.push(
            Case::new(*idx, "after_cuInit_no_device_not_initialized", &[], move |e| {
                let hidden = [("CUDA_VISIBLE_DEVICES", "")];
                let a = NO_DEVICE.get(|| Ok(answers(&Role::NoDevice, &hidden, e.deadline())?))?;
                blame::reset();
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
            })
            .lane("uninit")
            .relies(&[
                Precondition::Library,
                Precondition::Probe,
                Precondition::Init,
                Precondition::HiddenNoDevice,
            ]),
        );
    }
    v
}
