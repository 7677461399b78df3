//! Timed loops: the calls and the comparison of their codes, nothing else — no observation, no
//! string, no allocation — exactly what the C half of the FFI bench (benches/ffi_loop.c) does. The
//! bench times these; the unit test below shows they record and allocate nothing.

use crate::driver::cu::untracked as raw;
use crate::driver::cu::{CUdeviceptr, CUmemoryPool, CUresult, CUstream};

/// `n` pairs of `alloc` then `free`, stopping at the first code that is not `CUDA_SUCCESS` (that
/// code is the error; the bench turns it into a message outside the timed region).
#[inline(always)]
pub fn alloc_free_pairs(
    alloc: impl Fn(&mut CUdeviceptr) -> CUresult,
    free: impl Fn(CUdeviceptr) -> CUresult,
    n: usize,
) -> Result<(), CUresult> {
    pairs(0, alloc, free, n)
}

/// `n` pairs of `make` (which fills a `T`, starting from `init`) then `undo` of what it made
/// (cuMemPoolCreate + cuMemPoolDestroy, an allocation and its free); stops at the first failing
/// code.
#[inline(always)]
pub fn pairs<T: Copy>(
    init: T,
    make: impl Fn(&mut T) -> CUresult,
    undo: impl Fn(T) -> CUresult,
    n: usize,
) -> Result<(), CUresult> {
    for _ in 0..n {
        let mut v = init;
        let r = make(&mut v);
        if r != CUresult::CUDA_SUCCESS {
            return Err(r);
        }
        let r = undo(v);
        if r != CUresult::CUDA_SUCCESS {
            return Err(r);
        }
    }
    Ok(())
}

/// The code as a `Result`.
#[inline(always)]
pub fn code(r: CUresult) -> Result<(), CUresult> {
    if r == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(r)
    }
}

/// One allocation of `size` (from `pool`, or the stream's current pool), its free, and a
/// synchronisation of the stream: the unit the bench's pairs, threads and capture groups time.
/// Returns the address it got (the reuse group compares them).
#[inline(always)]
pub fn alloc_free(pool: Option<CUmemoryPool>, size: usize, s: CUstream) -> Result<CUdeviceptr, CUresult> {
    let mut p: CUdeviceptr = 0;
    code(match pool {
        Some(pool) => unsafe { raw::cuMemAllocFromPoolAsync(&mut p, size, pool, s) },
        None => unsafe { raw::cuMemAllocAsync(&mut p, size, s) },
    })?;
    code(unsafe { raw::cuMemFreeAsync(p, s) })?;
    Ok(p)
}

/// `cuStreamSynchronize`.
#[inline(always)]
pub fn sync(s: CUstream) -> Result<(), CUresult> {
    code(unsafe { raw::cuStreamSynchronize(s) })
}

/// `n` calls of `call`; stops at the first failing code.
#[inline(always)]
pub fn calls(call: impl Fn() -> CUresult, n: usize) -> Result<(), CUresult> {
    for _ in 0..n {
        let r = call();
        if r != CUresult::CUDA_SUCCESS {
            return Err(r);
        }
    }
    Ok(())
}

/// One call per element of `out` (`call(i, &mut out[i])`): for calls whose results must be kept
/// and undone after the timed region (exported fds, imported pools and pointers).
#[inline(always)]
pub fn each<T>(out: &mut [T], call: impl Fn(usize, &mut T) -> CUresult) -> Result<(), CUresult> {
    for (i, o) in out.iter_mut().enumerate() {
        let r = call(i, o);
        if r != CUresult::CUDA_SUCCESS {
            return Err(r);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::observe;
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    /// Counts this thread's allocations.
    struct Counting;
    thread_local! {
        static ALLOCS: Cell<usize> = const { Cell::new(0) };
    }
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
            System.alloc(l)
        }
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            System.dealloc(p, l)
        }
    }
    #[global_allocator]
    static COUNTING: Counting = Counting;

    #[test]
    fn a_timed_loop_records_and_allocates_nothing() {
        observe::take();
        let next = Cell::new(0x1000u64);
        let before = ALLOCS.with(Cell::get);
        let r = alloc_free_pairs(
            |p| {
                *p = next.get();
                next.set(next.get() + 0x1000);
                CUresult::CUDA_SUCCESS
            },
            |_| CUresult::CUDA_SUCCESS,
            100_000,
        );
        let allocs = ALLOCS.with(Cell::get) - before;
        assert_eq!(r, Ok(()));
        assert_eq!(allocs, 0, "the timed loop allocated");
        assert_eq!(observe::take(), (Vec::new(), 0), "the timed loop recorded observations");
        // The counter works: the checked path (`check::ok`) records and allocates.
        let before = ALLOCS.with(Cell::get);
        crate::driver::check::ok("cuMemAllocAsync", CUresult::CUDA_SUCCESS).unwrap();
        assert!(ALLOCS.with(Cell::get) > before);
        assert_eq!(observe::take().0.len(), 1);
    }

    #[test]
    fn the_first_failing_code_stops_the_loop() {
        let calls = Cell::new(0);
        let r = alloc_free_pairs(
            |_| {
                calls.set(calls.get() + 1);
                if calls.get() == 3 {
                    CUresult::CUDA_ERROR_OUT_OF_MEMORY
                } else {
                    CUresult::CUDA_SUCCESS
                }
            },
            |_| CUresult::CUDA_SUCCESS,
            10,
        );
        assert_eq!((r, calls.get()), (Err(CUresult::CUDA_ERROR_OUT_OF_MEMORY), 3));
        let mut out = [0u8; 4];
        let r = each(&mut out, |i, o| {
            *o = i as u8 + 1;
            if i == 2 {
                CUresult::CUDA_ERROR_INVALID_VALUE
            } else {
                CUresult::CUDA_SUCCESS
            }
        });
        assert_eq!((r, out), (Err(CUresult::CUDA_ERROR_INVALID_VALUE), [1, 2, 3, 0]));
    }
}
