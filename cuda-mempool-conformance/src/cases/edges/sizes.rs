//! 820 cuMemAllocAsync and 821 cuMemAllocFromPoolAsync: the size of an allocation.

use super::model::*;
use crate::cases::prelude::*;

/// Sizes no allocation can have: each is OUT_OF_MEMORY (the listed code for a request the pool
/// cannot serve), including those whose round-up to the allocation granularity overflows.
const HUGE_SIZES: &[(u64, &str)] = &[
    (1 << 60, "1 << 60"),
    (1 << 63, "1 << 63"),
    (u64::MAX - 4095, "SIZE_MAX - 4095"),
    (u64::MAX, "SIZE_MAX"),
];

/// The sizes beyond the device's memory that any device refuses at once. The device's memory + 1,
/// which R580 takes 0.2-0.4 s to refuse on the H200, is `caps::beyond_reported_total_out_of_memory`'s
/// request (issue 45: one request beyond the device per path, not two).
fn size_rows(_: &Env) -> Vec<Row> {
    let mut v = vec![Row {
        value: 0,
        label: "0".into(),
        want: Want::Departure("size_zero_succeeds"),
        watch: Watch::Off,
    }];
    // Beyond the device's memory: watched (`model::Watch`).
    v.extend(watched(named(HUGE_SIZES, OOM), Watch::On));
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

pub const EDGES: &[Edge] = &[
    // Kills 820-size-round-up-wraps.
    Edge {
        api: 820,
        arg: "bytesize",
        needs: &[],
        sharing: Sharing::Beyond,
        rows: size_rows,
        call: alloc_async_size,
    },
    // Kills 821-size-round-up-wraps.
    Edge {
        api: 821,
        arg: "bytesize",
        needs: &[],
        sharing: Sharing::Beyond,
        rows: size_rows,
        call: alloc_from_pool_size,
    },
];
