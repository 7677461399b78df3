//! Each API as applications look it up (trials named `…::entry::…`): cuGetProcAddress asked at a
//! CUDA version before the API existed hands out nothing, in both forms (CUDA 12's
//! `cuGetProcAddress_v2` and CUDA 11's `cuGetProcAddress`); asked for the per-thread default
//! stream, it hands out the library's own `_ptsz` symbol where the API has one. The look-up
//! functions are the library's, found the way this run's mode finds its symbols.

use crate::cases::prelude::*;

/// A CUDA version before the 14 APIs existed (11.0; they came in 11.2).
const BEFORE: i32 = 11000;
/// CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.
const PER_THREAD: u64 = CUdriverProcAddress_flags::CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.0 as u64;
/// The APIs with a per-thread-default-stream variant (cuda.h's `_ptsz` symbols).
const WITH_PTSZ: &[u32] = &[820, 821, 822];

fn object(f: usize) -> String {
    crate::os::object_of(f).unwrap_or_else(|| "an unknown object".into())
}

/// Asked at CUDA 11.0, before `api` existed: `cuGetProcAddress_v2` writes no function and
/// reports CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT (Debian's 535 answers CUDA_SUCCESS with
/// that status; the documentation allows CUDA_ERROR_NOT_FOUND); `cuGetProcAddress` (CUDA 11's
/// form, where the library has it) answers an error and writes none (535: CUDA_ERROR_NOT_FOUND).
/// Kills lookup-ignores-version (the look-up hands out its hook at any version).
fn before_its_version(api: &'static str) -> R {
    let v2 = look_up(Form::V2, api, BEFORE, 0).map_err(Fail::from)?;
    let status = v2.status.map(CUdriverProcAddressQueryResult);
    let not_sufficient = CUdriverProcAddressQueryResult::CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    ensure!(
        v2.function == 0,
        "cuGetProcAddress_v2(\"{api}\", {BEFORE}) handed out {:#x} (in {}), answering {} with status {:?}: the \
         API came in CUDA 11.2, and an application asking for CUDA 11.0's ABI must get no function",
        v2.function,
        object(v2.function),
        code_name(v2.code),
        status
    );
    ensure!(
        status == Some(not_sufficient),
        "cuGetProcAddress_v2(\"{api}\", {BEFORE}) answered {} with status {status:?}; the driver reports \
         CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT for a version before the API's",
        code_name(v2.code)
    );
    ensure!(
        v2.code == SUCCESS || v2.code == CUresult::CUDA_ERROR_NOT_FOUND,
        "cuGetProcAddress_v2(\"{api}\", {BEFORE}) answered {}, neither CUDA_SUCCESS (the driver's, with the status) \
         nor CUDA_ERROR_NOT_FOUND",
        code_name(v2.code)
    );
    let Ok(v1) = look_up(Form::V1, api, BEFORE, 0) else {
        note("the library has no cuGetProcAddress (CUDA 11's form): only cuGetProcAddress_v2 was asked");
        return Ok(());
    };
    ensure!(
        v1.code != SUCCESS && v1.function == 0,
        "cuGetProcAddress(\"{api}\", {BEFORE}) (CUDA 11's form) answered {} and handed out {:#x} (in {}): the API \
         came in CUDA 11.2; the driver answers an error (CUDA_ERROR_NOT_FOUND) and no function",
        code_name(v1.code),
        v1.function,
        object(v1.function)
    );
    Ok(())
}

/// Asked with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, `cuGetProcAddress_v2` hands out
/// the `_ptsz` symbol of the object its function lives in (the driver's, or a layer's own
/// per-thread hook), never that object's legacy-stream function. Kills 820-proc-address-ignores-ptds
/// and 822-proc-address-ignores-ptds (the look-up hands out the legacy hook) and 821-ptsz-missing
/// (it hands out nothing).
fn per_thread_is_ptsz(api: &'static str) -> R {
    let ptsz = format!("{api}_ptsz");
    let got = look_up(Form::V2, api, APIS_SINCE, PER_THREAD).map_err(Fail::from)?;
    ensure!(
        got.code == SUCCESS && got.function != 0,
        "cuGetProcAddress_v2(\"{api}\", {APIS_SINCE}, PER_THREAD_DEFAULT_STREAM) answered {} with status {:?} and \
         no function: the driver hands out {ptsz}",
        code_name(got.code),
        got.status
    );
    let file = object(got.function);
    let own = crate::os::dlopen_local(&file)
        .ok()
        .and_then(|h| h.symbol(&ptsz))
        .map(|p| p as usize);
    ensure!(
        own == Some(got.function),
        "cuGetProcAddress_v2(\"{api}\", {APIS_SINCE}, PER_THREAD_DEFAULT_STREAM) handed out {:#x} in {file}, which \
         is not that object's {ptsz} ({}): an application built with --default-stream per-thread would order its \
         stream-0 calls on the legacy stream",
        got.function,
        own.map_or("it has none".to_string(), |p| format!("{p:#x}"))
    );
    Ok(())
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for (idx, api) in crate::driver::APIS {
        v.push(
            Case::new(
                *idx,
                "entry::lookup_before_its_version_hands_out_nothing",
                &[],
                move |_| before_its_version(api),
            )
            .relies(&[Precondition::Library]),
        );
        if WITH_PTSZ.contains(idx) {
            v.push(
                Case::new(*idx, "entry::per_thread_lookup_is_the_ptsz_symbol", &[], move |_| {
                    per_thread_is_ptsz(api)
                })
                .relies(&[Precondition::Library]),
            );
        }
    }
    v
}
