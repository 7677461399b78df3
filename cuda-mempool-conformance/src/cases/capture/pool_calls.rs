//! Pool calls made while a stream captures (trials named `…::capture::…`): what each answers
//! during a global-mode capture, and in every mode that one which answers success has taken effect
//! (or, for a query, answered what the pool says once the capture has ended).

use super::graph::{capture, status, LiveGraphAlloc, MODES};
use crate::cases::prelude::*;

use CUmemPool_attribute as A;
use CUstreamCaptureMode as M;
const MIB: usize = 1 << 20;

/// One pool call made while a stream captures: what it answers, and whether the capture survives.
struct DuringCapture {
    api: u32,
    name: &'static str,
    /// The call's expected answer: a declared departure of the driver (`driver/departures.rs`), or a
    /// documented code.
    want: Want,
    /// Whether the capture is still active after the call is refused (it must be after a success).
    survives: bool,
    /// The call, given the capturing stream and the pools made before the capture began.
    op: fn(CUstream, &Pools) -> CUresult,
    needs: Option<Cap>,
}

/// The pools a call during capture may use, made before the capture began.
struct Pools {
    own: Pool,
    /// An IPC-capable pool (POSIX fd handles), where the trial needs one.
    ipc: Option<Pool>,
}

fn trim_op(_: CUstream, p: &Pools) -> CUresult {
    unsafe { cuMemPoolTrimTo(p.own.0, 0) }
}
fn get_attr_op(_: CUstream, p: &Pools) -> CUresult {
    let mut v: u64 = 0;
    unsafe {
        cuMemPoolGetAttribute(
            p.own.0,
            A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
            (&mut v as *mut u64).cast(),
        )
    }
}
fn set_attr_op(_: CUstream, p: &Pools) -> CUresult {
    let mut v: u64 = 4 * MIB as u64;
    unsafe {
        cuMemPoolSetAttribute(
            p.own.0,
            A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut v as *mut u64).cast(),
        )
    }
}
fn ipc_pool_alloc_op(s: CUstream, pools: &Pools) -> CUresult {
    let Some(ipc) = &pools.ipc else {
        return CUresult::CUDA_ERROR_UNKNOWN;
    };
    let mut p: CUdeviceptr = 0;
    let r = unsafe { cuMemAllocFromPoolAsync(&mut p, MIB, ipc.0, s) };
    if r == SUCCESS {
        let _ = unsafe { cuMemFreeAsync(p, s) };
    }
    r
}
fn legacy_alloc_op(_: CUstream, _: &Pools) -> CUresult {
    let mut p: CUdeviceptr = 0;
    let r = unsafe { cuMemAllocAsync(&mut p, MIB, CU_STREAM_LEGACY) };
    if r == SUCCESS {
        let _ = unsafe { cuMemFreeAsync(p, CU_STREAM_LEGACY) };
    }
    r
}

enum Want {
    Departure(&'static str),
    Documented(CUresult),
}

/// The documentation does not list the pool calls among those a global-mode capture prohibits, nor
/// what they answer during one: R580's answers (580.159.04, H100, 2026-11-22) are declared
/// departures, hence the `_driver_behaviour` names; other drivers are held to the calls' own error
/// lists (success, and the capture goes on).
const DURING: &[DuringCapture] = &[
    // R580: the pool calls that are not stream-ordered count as unsafe in a global-mode capture:
    // refused with STREAM_CAPTURE_UNSUPPORTED, and the capture is invalidated.
    DuringCapture {
        api: 833,
        name: "trim_to_unsupported_and_invalidates_driver_behaviour",
        want: Want::Departure("trim_during_global_capture_unsupported"),
        survives: false,
        op: trim_op,
        needs: None,
    },
    DuringCapture {
        api: 828,
        name: "get_attribute_unsupported_and_invalidates_driver_behaviour",
        want: Want::Departure("get_attribute_during_global_capture_unsupported"),
        survives: false,
        op: get_attr_op,
        needs: None,
    },
    DuringCapture {
        api: 832,
        name: "set_attribute_unsupported_and_invalidates_driver_behaviour",
        want: Want::Departure("set_attribute_during_global_capture_unsupported"),
        survives: false,
        op: set_attr_op,
        needs: None,
    },
    // Graph allocations cannot be shared between processes. R580 refuses an exportable pool with
    // NOT_SUPPORTED, and the capture goes on.
    DuringCapture {
        api: 821,
        name: "ipc_capable_pool_refused_capture_survives_driver_behaviour",
        want: Want::Departure("ipc_pool_alloc_during_capture_not_supported"),
        survives: true,
        op: ipc_pool_alloc_op,
        needs: Some(Cap::Ipc),
    },
    // The legacy stream synchronises with every blocking stream, the capturing one included: an
    // implicit dependency on a capture, which global mode refuses (STREAM_CAPTURE_IMPLICIT) and
    // which invalidates the capture (as the documentation describes for the legacy stream).
    DuringCapture {
        api: 820,
        name: "alloc_on_legacy_stream_implicit_and_invalidates",
        want: Want::Documented(CUresult::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT),
        survives: false,
        op: legacy_alloc_op,
        needs: None,
    },
];

fn during_capture(e: &Env, d: &DuringCapture) -> R {
    let pools = Pools {
        own: Pool::on_device(e.dev)?,
        ipc: match d.needs {
            Some(Cap::Ipc) => Some(Pool::ipc(e.dev)?),
            _ => None,
        },
    };
    // A blocking stream, so that the legacy stream's implicit synchronisation applies to it.
    let mut raw = std::ptr::null_mut();
    ok("cuStreamCreate", unsafe { cuStreamCreate(&mut raw, 0) })?;
    let s = Stream(raw);
    let (work, end, g) = capture(s.0, M::CU_STREAM_CAPTURE_MODE_GLOBAL, |c| {
        let r = (d.op)(c, &pools);
        let st = status(c)?;
        Ok((r, st))
    })?;
    drop(g);
    let (r, st) = work?;
    let survived = st == CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE;
    note(format!(
        "during global capture: {}, capture {:?}, cuStreamEndCapture {}",
        code_name(r),
        st,
        code_name(end)
    ));
    let what = format!("{} during a global-mode capture", crate::driver::api_name(d.api));
    let checked = match d.want {
        Want::Departure(id) => expect_code(&e.policy(), id, &what, r),
        Want::Documented(code) => expect(&what, r, code),
    };
    let survives = r == SUCCESS || d.survives;
    let ended = if survives {
        ok("cuStreamEndCapture", end)
    } else {
        expect(
            "cuStreamEndCapture (capture invalidated)",
            end,
            CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
        )
    };
    checked?;
    ensure!(
        survived == survives,
        "after {what} the capture is {st:?}; expected it {}",
        if survives { "still active" } else { "invalidated" }
    );
    ended
}

/// A pool call that is not stream-ordered, made while a stream captures.
#[derive(Clone, Copy)]
enum PoolCall {
    /// cuMemPoolSetAttribute(RELEASE_THRESHOLD, 7 MiB) on a new pool.
    SetThreshold,
    /// cuMemPoolTrimTo(0) on a pool holding 32 MiB reserved and nothing in use.
    TrimToZero,
    /// cuMemPoolGetAttribute(USED_MEM_CURRENT) on a pool with one allocation of `USED` bytes live.
    GetUsed,
}
const THRESHOLD: u64 = 7 * MIB as u64;
/// An odd size, so that an answer rounded to pages shows.
const USED: usize = 3 * MIB + 17;

/// In any capture mode, `call` either takes effect (it answers success, the capture goes on, and
/// once it has ended the pool shows the call's effect, or for a query the answer the pool gives
/// then) or is refused and invalidates the capture. A success that did nothing, or answered what
/// is not so, fails: an interposer that defers, drops or answers for pool calls while a capture is
/// under way. The capturing stream is blocking, as a default-flag stream of an application is.
fn takes_effect_or_invalidates(e: &Env, mode: M, call: PoolCall) -> R {
    let pool = Pool::on_device(e.dev)?;
    // GetUsed: the allocation the pool counts, freed on every path (after the capture has ended).
    let held_stream = Stream::new()?;
    let mut held = None;
    if let PoolCall::GetUsed = call {
        let p = alloc_from(pool.0, USED, held_stream.0)?;
        held = Some(LiveGraphAlloc {
            p,
            s: &held_stream,
            live: true,
        });
        held_stream.sync()?;
    }
    if let PoolCall::TrimToZero = call {
        set_u64(pool.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, u64::MAX)?;
        let s = Stream::new()?;
        let a = alloc_from(pool.0, 32 * MIB, s.0)?;
        free_async(a, s.0)?;
        s.sync()?;
        let r = get_u64(pool.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
        ensure!(r >= 32 * MIB as u64, "only {r} bytes reserved before the capture");
    }
    let mut raw = std::ptr::null_mut();
    ok("cuStreamCreate", unsafe { cuStreamCreate(&mut raw, 0) })?;
    let s = Stream(raw);
    let mut answered = u64::MAX;
    let (work, end, g) = capture(s.0, mode, |c| {
        let r = match call {
            PoolCall::SetThreshold => {
                let mut v = THRESHOLD;
                unsafe {
                    cuMemPoolSetAttribute(
                        pool.0,
                        A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                        (&mut v as *mut u64).cast(),
                    )
                }
            }
            PoolCall::TrimToZero => unsafe { cuMemPoolTrimTo(pool.0, 0) },
            PoolCall::GetUsed => unsafe {
                cuMemPoolGetAttribute(
                    pool.0,
                    A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
                    (&mut answered as *mut u64).cast(),
                )
            },
        };
        Ok((r, status(c)?))
    })?;
    drop(g);
    let (r, st) = work?;
    note(format!(
        "during the capture: {}, capture {st:?}, cuStreamEndCapture {}",
        code_name(r),
        code_name(end)
    ));
    let what = match call {
        PoolCall::SetThreshold => "cuMemPoolSetAttribute(RELEASE_THRESHOLD) during a capture",
        PoolCall::TrimToZero => "cuMemPoolTrimTo(0) during a capture",
        PoolCall::GetUsed => "cuMemPoolGetAttribute(USED_MEM_CURRENT) during a capture",
    };
    if r != SUCCESS {
        return expect(
            &format!("cuStreamEndCapture after {what} was refused ({})", code_name(r)),
            end,
            CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
        );
    }
    ensure!(
        st == CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE,
        "{what} answered success and left the capture {st:?}"
    );
    ok("cuStreamEndCapture", end)?;
    match call {
        PoolCall::SetThreshold => {
            let v = get_u64(pool.0, A::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)?;
            ensure!(
                v == THRESHOLD,
                "{what} answered success, but the threshold reads {v} after the capture, not {THRESHOLD}"
            );
        }
        PoolCall::TrimToZero => {
            let v = get_u64(pool.0, A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
            ensure!(
                v == 0,
                "{what} answered success, but {v} bytes are still reserved after the capture"
            );
        }
        PoolCall::GetUsed => {
            let v = get_u64(pool.0, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
            if let Some(h) = held.as_mut() {
                h.free()?;
            }
            ensure!(
                answered == v,
                "{what} answered success and {answered} bytes, but the pool reads {v} after the capture"
            );
            ensure!(
                v == USED as u64,
                "one allocation of {USED} bytes live: the pool reads {v} bytes used"
            );
        }
    }
    Ok(())
}

pub(super) fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for &(mode_name, mode) in MODES {
        // Kills 832-noop-during-capture.
        v.push(
            Case::gpu(
                832,
                format!("capture::set_attribute_during_{mode_name}_capture_takes_effect_or_invalidates"),
                move |e| takes_effect_or_invalidates(e, mode, PoolCall::SetThreshold),
            )
            .alone(),
        );
        // Kills 833-noop-during-capture.
        v.push(
            Case::gpu(
                833,
                format!("capture::trim_to_during_{mode_name}_capture_takes_effect_or_invalidates"),
                move |e| takes_effect_or_invalidates(e, mode, PoolCall::TrimToZero),
            )
            .alone(),
        );
        // Kills 828-stale-during-capture.
        v.push(
            Case::gpu(
                828,
                format!("capture::get_attribute_during_{mode_name}_capture_answers_or_invalidates"),
                move |e| takes_effect_or_invalidates(e, mode, PoolCall::GetUsed),
            )
            .alone(),
        );
    }
    for d in DURING {
        let mut c = Case::gpu(d.api, format!("capture::during_global_capture_{}", d.name), move |e| {
            during_capture(e, d)
        })
        .alone();
        if let Some(cap) = d.needs {
            c = c.needs(cap);
        }
        v.push(c);
    }
    v
}
