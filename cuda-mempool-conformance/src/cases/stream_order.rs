//! Stream order of 820 cuMemAllocAsync, 821 cuMemAllocFromPoolAsync and 822 cuMemFreeAsync (trials
//! named `…::stream_order::…`): each call returns while its stream is held at a gate, an allocation
//! waits for no other stream, its pointer is known at return and is the one its stream's later work
//! uses, and a refusal comes at once.
//!
//! The documentation: the allocation "is returned immediately" for use in the stream's later work, and
//! the free is "stream ordered"; the real driver (R580) returns from each at once whatever the stream
//! is doing. A layer that synchronises the stream (or the device) inside the call returns only when
//! the gate's safety limit opens it: every trial here fails then, naming the call and how long it took.

use crate::cases::prelude::*;
use std::time::{Duration, Instant};

const MIB: usize = 1 << 20;
/// More than any device has (820's impossible size).
const HUGE: usize = 1 << 60;
/// The maxSize of 821's refusing pool; the refused allocation asks twice as much.
const MAX_SIZE: usize = 64 * MIB;

/// The allocator a row exercises: 820 from the device's current pool, 821 from a pool of the trial.
#[derive(Clone, Copy)]
enum Alloc {
    Current,
    FromPool,
}
const ALLOCS: [Alloc; 2] = [Alloc::Current, Alloc::FromPool];

impl Alloc {
    fn api(self) -> u32 {
        match self {
            Alloc::Current => 820,
            Alloc::FromPool => 821,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Alloc::Current => "cuMemAllocAsync",
            Alloc::FromPool => "cuMemAllocFromPoolAsync",
        }
    }
    /// The pool 821 allocates from (props as given); 820 needs none.
    fn pool(self, props: &CUmemPoolProps) -> R<Option<Pool>> {
        match self {
            Alloc::Current => Ok(None),
            Alloc::FromPool => Pool::create(props).map(Some),
        }
    }
    /// Allocate `size` bytes on `s` into `*p` (from `pool` for 821); the driver's code and how long
    /// the call took.
    fn call(self, p: &mut CUdeviceptr, size: usize, pool: &Option<Pool>, s: CUstream) -> (CUresult, Duration) {
        let start = Instant::now();
        let r = match pool {
            Some(pool) => unsafe { cuMemAllocFromPoolAsync(p, size, pool.0, s) },
            None => unsafe { cuMemAllocAsync(p, size, s) },
        };
        (r, start.elapsed())
    }
}

/// `Err` naming the call and how long it took when the gate's safety limit had to open its stream.
fn waited(what: &str, took: Duration, forced: Option<ForcedGate>) -> R {
    match forced {
        None => Ok(()),
        Some(f) => Err(Fail::Wrong(format!(
            "{what} returned after {took:?}, only once the held stream was released: it waited for the stream \
             instead of enqueuing its work ({})",
            f.describe()
        ))),
    }
}

/// The call returns while its stream is held: it enqueues the allocation and returns.
/// Kills 820-synchronous, 821-synchronous.
fn alloc_returns_while_held(a: Alloc, dev: CUdevice, deadline: Deadline) -> R {
    let pool = a.pool(&device_props(dev))?;
    let s = Stream::new()?;
    let gate = Gate::close(s.0, deadline)?;
    let mut p: CUdeviceptr = 0;
    let (r, took) = a.call(&mut p, MIB, &pool, s.0);
    let forced = gate.release();
    if r == SUCCESS {
        free_async(p, s.0)?;
    }
    s.sync()?;
    ok(a.name(), r)?;
    waited(&format!("{} on a held stream", a.name()), took, forced)
}

/// An allocation on stream B returns, and B runs its work, while another stream A is held: the call
/// synchronises neither A nor the device, and puts no dependency on A into B.
/// Kills 820-device-wide-sync, 821-device-wide-sync.
fn other_stream_does_not_wait(a: Alloc, dev: CUdevice, deadline: Deadline) -> R {
    let pool = a.pool(&device_props(dev))?;
    let (held, other) = (Stream::new()?, Stream::new()?);
    let gate = Gate::close(held.0, deadline)?;
    let mut p: CUdeviceptr = 0;
    let (r, took) = a.call(&mut p, MIB, &pool, other.0);
    let start = Instant::now();
    let freed = if r == SUCCESS { free_async(p, other.0) } else { Ok(()) };
    let synced = other.sync();
    let ran = start.elapsed();
    let forced = gate.release();
    held.sync()?;
    ok(a.name(), r)?;
    freed?;
    synced?;
    waited(
        &format!(
            "{} on stream B while another stream A was held (it took {took:?}; B's free and synchronisation \
             then took {ran:?})",
            a.name()
        ),
        took,
        forced,
    )
}

/// The pointer is written before the call returns, while its stream is held, and it is the memory
/// the stream's later work uses: a memset enqueued behind the allocation on the held stream lands
/// there, read back once the stream has run. The out-variable lives on the heap until the stream has
/// run, so that a library that writes it late writes there (and the trial frees what it got).
/// Kills 820-deferred-pointer, 821-deferred-pointer.
fn pointer_known_at_return(a: Alloc, dev: CUdevice, deadline: Deadline) -> R {
    const BYTE: u8 = 0xa5;
    let pool = a.pool(&device_props(dev))?;
    let s = Stream::new()?;
    let gate = Gate::close(s.0, deadline)?;
    let mut out: Box<CUdeviceptr> = Box::new(0);
    let (r, took) = a.call(&mut out, MIB, &pool, s.0);
    // SAFETY: a plain read of the box; volatile, since a library may write it from another thread.
    let at_return = unsafe { std::ptr::read_volatile(&*out) };
    let usable = r == SUCCESS && at_return != 0;
    let set = if usable {
        ok("cuMemsetD8Async", unsafe { cuMemsetD8Async(at_return, BYTE, MIB, s.0) })
    } else {
        Ok(())
    };
    let forced = gate.release();
    s.sync()?;
    // SAFETY: as above; the stream has run, so whatever a library wrote late is there now.
    let later = unsafe { std::ptr::read_volatile(&*out) };
    let mut host = vec![0u8; MIB];
    let copied = if usable && set.is_ok() {
        ok("cuMemcpyDtoH", unsafe {
            cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), at_return, MIB)
        })
    } else {
        Ok(())
    };
    if r == SUCCESS && later != 0 {
        free_async(later, s.0)?;
        s.sync()?;
    }
    ok(a.name(), r)?;
    let name = a.name();
    ensure!(
        at_return != 0,
        "{name} on a held stream returned SUCCESS after {took:?} with a null pointer{}",
        if later != 0 {
            format!(": the pointer ({later:#x}) was written only once the stream ran")
        } else {
            String::new()
        }
    );
    ensure!(
        later == at_return,
        "{name} returned pointer {at_return:#x}, which became {later:#x} once the stream ran"
    );
    waited(&format!("{name} on a held stream"), took, forced)?;
    set?;
    copied?;
    if let Some(i) = host.iter().position(|&b| b != BYTE) {
        return Err(Fail::Wrong(format!(
            "a memset of {BYTE:#x} enqueued behind {name} on its held stream did not land at the returned pointer \
             {at_return:#x}: byte {i} reads {:#x} once the stream ran",
            host[i]
        )));
    }
    Ok(())
}

/// An allocation that cannot be satisfied is refused with OUT_OF_MEMORY at once, while its stream
/// is held (not once the stream reaches it): 820 asks for more than any device has, 821 for twice
/// its pool's maxSize. Kills 820-synchronous, 821-synchronous (and 820/821-oom-invalid-value).
fn refused_at_once(a: Alloc, dev: CUdevice, deadline: Deadline) -> R {
    let mut props = device_props(dev);
    props.maxSize = MAX_SIZE;
    let pool = a.pool(&props)?;
    let size = match a {
        Alloc::Current => HUGE,
        Alloc::FromPool => 2 * MAX_SIZE,
    };
    let s = Stream::new()?;
    let gate = Gate::close(s.0, deadline)?;
    let mut p: CUdeviceptr = 0;
    let (r, took) = a.call(&mut p, size, &pool, s.0);
    let forced = gate.release();
    if r == SUCCESS && p != 0 {
        free_async(p, s.0)?;
    }
    s.sync()?;
    let what = format!("{}({size} bytes) on a held stream", a.name());
    expect(&what, r, CUresult::CUDA_ERROR_OUT_OF_MEMORY)?;
    waited(&what, took, forced)
}

/// (case, body, alone): the rows every allocator runs; the refusal row runs alone (a failed
/// oversized allocation releases the unused memory of every pool of its process).
type Row = (&'static str, fn(Alloc, CUdevice, Deadline) -> R, bool);
const ROWS: &[Row] = &[
    (
        "stream_order::returns_while_its_stream_is_held",
        alloc_returns_while_held,
        false,
    ),
    (
        "stream_order::other_stream_does_not_wait_for_a_held_one",
        other_stream_does_not_wait,
        false,
    ),
    (
        "stream_order::pointer_known_at_return_and_used_by_its_stream",
        pointer_known_at_return,
        false,
    ),
    (
        "stream_order::refused_at_once_while_its_stream_is_held",
        refused_at_once,
        true,
    ),
];

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for a in ALLOCS {
        for &(name, body, alone) in ROWS {
            let c = Case::gpu(a.api(), name, move |e| body(a, e.dev, e.deadline()));
            v.push(if alone { c.alone() } else { c });
        }
    }
    // cuMemFreeAsync enqueues the free and returns; it does not wait for the stream to reach it.
    // Kills 822-synchronous (the 832 reuse trials see it too, as gates their safety limit opened).
    v.push(Case::gpu(822, "stream_order::returns_while_its_stream_is_held", |e| {
        let pool = Pool::on_device(e.dev)?;
        let s = Stream::new()?;
        let a = alloc_from(pool.0, MIB, s.0)?;
        let gate = Gate::close(s.0, e.deadline())?;
        let start = Instant::now();
        let r = unsafe { cuMemFreeAsync(a, s.0) };
        let took = start.elapsed();
        let forced = gate.release();
        s.sync()?;
        ok("cuMemFreeAsync(on a held stream)", r)?;
        waited("cuMemFreeAsync on a held stream", took, forced)
    }));
    v
}
