//! Many threads and streams allocating at once (trials named `…::load::…`): T threads, each with
//! S streams, make random-size allocations (256 B – 64 MiB), fill each with a pattern of its own,
//! and free them — often on another thread's stream, ordered after the allocation's last use by an
//! event. Checked throughout: live allocations never overlap; each allocation still holds its
//! pattern when it is freed; at quiescent points (every thread paused, every stream idle) the
//! pool's USED_MEM_CURRENT equals the bytes live; nothing is left at the end.
//! `load::threads_one_pool_no_lock`: 8 to 16 threads (the machine's parallelism) allocate from one
//! pool at the same moments, each on its own stream, with no lock around the driver calls.
//!
//! CONFORMANCE_STRESS_SECS (default 1) sets how long it runs, CONFORMANCE_STRESS_SEED the seed
//! (default: from the clock). The seed is in every failure message and in the report's notes, so
//! a failing run can be repeated; the operations per second are in the notes.

use crate::cases::prelude::*;
use crate::harness::settings::STRESS_SEED_VAR;
use std::collections::BTreeMap;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use CUmemPool_attribute as A;

const THREADS: usize = 4;
const STREAMS_PER_THREAD: usize = 2;
/// Live allocations a thread keeps at most (64 MiB each at most: 4 GiB for all threads).
const MAX_LIVE: usize = 16;
const MIN_SIZE: usize = 256;
const MAX_SIZE: usize = 64 << 20;
/// Bytes read back from each end and the middle of an allocation when it is freed.
const WINDOW: usize = 64;

/// How long the trial runs (CONFORMANCE_STRESS_SECS of the run's settings, default 1 s).
fn duration(e: &Env) -> Result<Duration, String> {
    Ok(e.settings.stress_secs.checked()?)
}

/// The trial's seed: CONFORMANCE_STRESS_SEED of the run's settings, else the clock's.
fn seed(e: &Env) -> Result<u64, String> {
    Ok(e.settings.stress_seed.checked()?.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    }))
}

/// splitmix64: small, seedable, and the same sequence on every machine.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// A size between MIN_SIZE and MAX_SIZE, spread evenly over the powers of two, a multiple of 4.
    fn size(&mut self) -> usize {
        let lo = MIN_SIZE.trailing_zeros() as usize;
        let hi = MAX_SIZE.trailing_zeros() as usize;
        let k = lo + self.below(hi - lo);
        let s = (1usize << k) + self.below(1usize << k);
        (s.min(MAX_SIZE) + 3) & !3
    }
}

struct Live {
    size: usize,
    pattern: u32,
    /// The stream it was allocated (and filled) on.
    stream: usize,
}

/// What all threads share: the streams, the live allocations by address, the operation count.
struct Shared {
    streams: Vec<Stream>,
    live: Mutex<BTreeMap<CUdeviceptr, Live>>,
    ops: std::sync::atomic::AtomicU64,
}
// SAFETY: streams are driver handles, usable from any thread.
unsafe impl Sync for Shared {}
unsafe impl Send for Shared {}

impl Shared {
    /// The live map, even after a thread panicked holding it (that panic is already a failure).
    fn live(&self) -> std::sync::MutexGuard<'_, BTreeMap<CUdeviceptr, Live>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// How a trial allocates: cuMemAllocAsync from the device's current pool, or
/// cuMemAllocFromPoolAsync from a pool of its own.
#[derive(Clone, Copy)]
enum Via {
    Current,
    OwnPool,
}

fn allocate(sh: &Shared, via: Via, pool: CUmemoryPool, rng: &mut Rng, t: usize) -> R<CUdeviceptr> {
    let size = rng.size();
    let stream = t * STREAMS_PER_THREAD + rng.below(STREAMS_PER_THREAD);
    let s = sh.streams[stream].0;
    let p = match via {
        Via::Current => alloc_async(size, s)?,
        Via::OwnPool => alloc_from(pool, size, s)?,
    };
    let pattern = (rng.next() as u32) | 1;
    let placed = (|| {
        let mut live = sh.live();
        let end = |q: CUdeviceptr, n: usize| q.checked_add(n as u64).ok_or(format!("{q:#x} + {n} overflows"));
        // The nearest live allocations below and above must end before / start after this one.
        if let Some((&q, l)) = live.range(..=p).next_back() {
            ensure!(
                end(q, l.size)? <= p,
                "allocation {p:#x} ({size} B) overlaps the live allocation {q:#x} ({} B)",
                l.size
            );
        }
        if let Some((&q, _)) = live.range(p..).next() {
            ensure!(
                end(p, size)? <= q,
                "allocation {p:#x} ({size} B) overlaps the live allocation {q:#x}"
            );
        }
        live.insert(p, Live { size, pattern, stream });
        Ok(())
    })();
    if let Err(m) = placed {
        // Not ours to track: give it back, so that the end-of-run accounting stays exact.
        let _ = free_async(p, s);
        return Err(m);
    }
    ok("cuMemsetD32Async", unsafe { cuMemsetD32Async(p, pattern, size / 4, s) })?;
    sh.ops.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(p)
}

/// Check `p`'s pattern on its own stream; then overwrite it there (its last use) and free it on a
/// random stream (often another thread's), ordered after that last write by an event only: a free
/// that ran early would hand the block to another allocation while the write still lands, and
/// that allocation's pattern check would see it. `p` is freed whatever the check found.
fn release(sh: &Shared, rng: &mut Rng, p: CUdeviceptr) -> R {
    let Live { size, pattern, stream } = sh.live().remove(&p).ok_or_else(|| format!("{p:#x} is not live"))?;
    let s = sh.streams[stream].0;
    let checked: R = (|| {
        let mut host = [0u32; 3 * WINDOW / 4];
        let win = WINDOW.min(size);
        for (i, off) in [0, (size / 2) & !3, size - win].into_iter().enumerate() {
            let off = off.min(size - win);
            ok("cuMemcpyDtoHAsync", unsafe {
                cuMemcpyDtoHAsync_v2(host[i * WINDOW / 4..].as_mut_ptr().cast(), p + off as u64, win, s)
            })?;
        }
        ok("cuStreamSynchronize", unsafe { cuStreamSynchronize(s) })?;
        for i in 0..3 {
            let w = &host[i * WINDOW / 4..i * WINDOW / 4 + win / 4];
            if let Some(bad) = w.iter().find(|&&x| x != pattern) {
                return Err(format!(
                    "allocation {p:#x} ({size} B) holds {bad:#010x} where its pattern {pattern:#010x} was written: \
                     its memory was reused or freed while live"
                )
                .into());
            }
        }
        Ok(())
    })();
    // The last use, then the free on another stream after it.
    let last = ok("cuMemsetD32Async", unsafe {
        cuMemsetD32Async(p, !pattern, size / 4, s)
    });
    let other = sh.streams[rng.below(sh.streams.len())].0;
    let ordered = (|| {
        let ev = Event::new(0)?;
        ev.record(s)?;
        ok("cuStreamWaitEvent", unsafe { cuStreamWaitEvent(other, ev.0, 0) })
    })();
    // Without the event, on its own stream: freed either way.
    let freed = free_async(p, if ordered.is_ok() { other } else { s });
    sh.ops.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    checked.and(last).and(ordered).and(freed)
}

/// Every stream idle; then the pool's used memory must equal the bytes live.
fn quiescent(sh: &Shared, pool: CUmemoryPool, when: &str) -> R {
    for s in &sh.streams {
        s.sync()?;
    }
    let live: u64 = sh.live().values().map(|l| l.size as u64).sum();
    let used = get_u64(pool, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
    ensure!(
        used == live,
        "{when}: the pool reports {used} bytes used; {live} bytes are live"
    );
    Ok(())
}

fn stress(e: &Env, via: Via) -> R {
    let secs = duration(e)?;
    let seed = seed(e)?;
    let own = Pool::on_device(e.dev)?;
    let pool = match via {
        Via::Current => current_pool(e.dev)?,
        Via::OwnPool => own.0,
    };
    let before = get_u64(pool, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
    ensure!(before == 0, "the pool has {before} bytes in use before the trial");
    // In the worker's stderr at once: a run that dies or hangs still tells its seed.
    eprintln!("load: seed {seed} ({STRESS_SEED_VAR}), {} s", secs.as_secs_f64());
    let sh = Arc::new(Shared {
        streams: (0..THREADS * STREAMS_PER_THREAD)
            .map(|_| Stream::new())
            .collect::<R<_>>()?,
        live: Mutex::new(BTreeMap::new()),
        ops: 0.into(),
    });
    // Quiescent points: four per run, at least every 250 ms.
    let epochs = ((secs.as_secs_f64() / 0.25).ceil() as usize).max(4);
    let epoch = secs / epochs as u32;
    let barrier = Arc::new(Barrier::new(THREADS));
    let failed = Arc::new(Mutex::new(None::<String>));
    let start = Instant::now();
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (sh, barrier, failed, e) = (sh.clone(), barrier.clone(), failed.clone(), e.clone());
            let pool_addr = pool as usize;
            std::thread::spawn(move || {
                e.bind();
                let pool = pool_addr as CUmemoryPool;
                let mut rng = Rng(seed ^ (t as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
                let mut mine: Vec<CUdeviceptr> = Vec::new();
                let fail = |m: String| {
                    failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(m);
                };
                // A panic (a bogus pointer from a broken library, say) is a failure like any
                // other: the thread goes on to the barriers, so that none waits there forever.
                let guarded = |f: &mut dyn FnMut() -> R| {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
                        .unwrap_or_else(|_| Err("a load thread panicked".into()))
                };
                let failing = || failed.lock().unwrap_or_else(|p| p.into_inner()).is_some();
                for k in 1..=epochs {
                    let until = start + epoch * k as u32;
                    while !failing() && Instant::now() < until {
                        let r = guarded(&mut || {
                            if !mine.is_empty() && (mine.len() >= MAX_LIVE || rng.below(2) == 0) {
                                let p = mine.swap_remove(rng.below(mine.len()));
                                release(&sh, &mut rng, p)
                            } else {
                                allocate(&sh, via, pool, &mut rng, t).map(|p| mine.push(p))
                            }
                        });
                        if let Err(m) = r {
                            fail(format!("thread {t}: {m}"));
                        }
                    }
                    // A quiescent point: every thread here, then thread 0 checks the accounting.
                    barrier.wait();
                    if t == 0 && !failing() {
                        if let Err(m) = guarded(&mut || quiescent(&sh, pool, &format!("quiescent point {k}"))) {
                            fail(m.to_string());
                        }
                    }
                    barrier.wait();
                }
                for p in std::mem::take(&mut mine) {
                    if let Err(m) = guarded(&mut || release(&sh, &mut rng, p)) {
                        fail(format!("thread {t}, freeing at the end: {m}"));
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().map_err(|_| format!("a load thread panicked (seed {seed})"))?;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let ops = sh.ops.load(std::sync::atomic::Ordering::Relaxed);
    note(format!(
        "{ops} allocations and frees in {elapsed:.2} s = {:.0} ops/s ({THREADS} threads × {STREAMS_PER_THREAD} \
         streams, sizes {MIN_SIZE} B–{} MiB, seed {seed})",
        ops as f64 / elapsed,
        MAX_SIZE >> 20
    ));
    let again = format!("(seed {seed}: rerun with {STRESS_SEED_VAR}={seed})");
    if let Some(m) = failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(format!("{m} {again}").into());
    }
    quiescent(&sh, pool, "at the end").map_err(|m| format!("{m} {again}"))?;
    ensure!(ops > 0, "no operation completed in {elapsed:.2} s {again}");
    Ok(())
}

/// Threads of the one-pool trial: the machine's parallelism, at least 8 and at most 16.
fn crowd() -> usize {
    std::thread::available_parallelism().map_or(8, |n| n.get()).clamp(8, 16)
}
/// Sizes the crowd asks for: few, so that threads often ask for one size at the same moment.
const CROWD_SIZES: [usize; 3] = [4096, 1 << 20, 3 * (1 << 20) + 4];
/// Blocks each thread holds per round.
const CROWD_BLOCKS: usize = 4;

/// One round of one thread: allocate CROWD_BLOCKS blocks from `pool` on its own stream, each
/// checked against every live block of every thread (no two overlap), fill each with a pattern of
/// its own, read the patterns back, then free them.
fn crowd_round(
    live: &Mutex<BTreeMap<CUdeviceptr, (usize, usize)>>,
    pool: CUmemoryPool,
    s: CUstream,
    rng: &mut Rng,
    t: usize,
    round: u64,
) -> R {
    let lock = || live.lock().unwrap_or_else(|p| p.into_inner());
    let mut mine: Vec<(CUdeviceptr, usize, u32)> = Vec::new();
    let mut result: R = Ok(());
    for k in 0..CROWD_BLOCKS {
        let size = CROWD_SIZES[rng.below(CROWD_SIZES.len())];
        let p = match alloc_from(pool, size, s) {
            Ok(p) => p,
            Err(m) => {
                result = Err(m);
                break;
            }
        };
        let clash = {
            let mut live = lock();
            let below = live.range(..=p).next_back().filter(|(&q, &(n, _))| q + n as u64 > p);
            let above = live.range(p..).next().filter(|(&q, _)| q < p + size as u64);
            match below.or(above) {
                Some((&q, &(n, other))) => Some(format!(
                    "thread {t} got {p:#x} ({size} B), which overlaps thread {other}'s live {q:#x} ({n} B)"
                )),
                None => {
                    live.insert(p, (size, t));
                    None
                }
            }
        };
        if let Some(m) = clash {
            let _ = free_async(p, s);
            result = Err(m.into());
            break;
        }
        let pattern = ((t as u32) << 24 | (round as u32 & 0xffff) << 8 | k as u32) | 1;
        mine.push((p, size, pattern));
        if let Err(m) = ok("cuMemsetD32Async", unsafe { cuMemsetD32Async(p, pattern, size / 4, s) }) {
            result = Err(m);
            break;
        }
    }
    let mut back = vec![[0u32; 2]; mine.len()];
    for ((p, size, _), b) in mine.iter().zip(back.iter_mut()) {
        if result.is_ok() {
            result = ok("cuMemcpyDtoHAsync", unsafe {
                cuMemcpyDtoHAsync_v2(b.as_mut_ptr().cast(), p + *size as u64 - 8, 8, s)
            });
        }
    }
    let synced = ok("cuStreamSynchronize", unsafe { cuStreamSynchronize(s) });
    if result.is_ok() {
        result = synced;
    }
    for ((p, size, pattern), b) in mine.iter().zip(&back) {
        if result.is_ok() && b.iter().any(|x| x != pattern) {
            result = Err(format!(
                "thread {t}'s {p:#x} ({size} B) ends with {b:08x?}, not its pattern {pattern:#010x}: another \
                 thread wrote it"
            )
            .into());
        }
        lock().remove(p);
        let freed = free_async(*p, s);
        if result.is_ok() {
            result = freed;
        }
    }
    result
}

/// N host threads (crowd()) allocate from ONE pool at the same moments, each on a stream of its
/// own, with no lock around the driver calls; the pool's used memory is back at its start value
/// when they are done.
fn crowd_on_one_pool(e: &Env) -> R {
    let secs = duration(e)?;
    let seed = seed(e)?;
    let n = crowd();
    let pool = Pool::on_device(e.dev)?;
    let start = get_u64(pool.0, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
    eprintln!(
        "load: seed {seed} ({STRESS_SEED_VAR}), {} s, {n} threads on one pool",
        secs.as_secs_f64()
    );
    let live = Arc::new(Mutex::new(BTreeMap::new()));
    let barrier = Arc::new(Barrier::new(n));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let failed = Arc::new(Mutex::new(None::<String>));
    let rounds = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let began = Instant::now();
    let pool_addr = pool.0 as usize;
    let threads: Vec<_> = (0..n)
        .map(|t| {
            let (live, barrier, stop, failed, rounds, e) = (
                live.clone(),
                barrier.clone(),
                stop.clone(),
                failed.clone(),
                rounds.clone(),
                e.clone(),
            );
            std::thread::spawn(move || {
                use std::sync::atomic::Ordering::SeqCst;
                e.bind();
                let pool = pool_addr as CUmemoryPool;
                let mut rng = Rng(seed ^ (t as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
                let stream = Stream::new();
                for round in 0.. {
                    // Everyone reads `stop` between the two barriers; it is written only after them.
                    barrier.wait();
                    let go = !stop.load(SeqCst);
                    barrier.wait();
                    if !go {
                        break;
                    }
                    let r = match &stream {
                        Ok(s) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            crowd_round(&live, pool, s.0, &mut rng, t, round)
                        }))
                        .unwrap_or_else(|_| Err("a load thread panicked".into())),
                        Err(m) => Err(m.clone()),
                    };
                    if let Err(m) = r {
                        failed
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .get_or_insert(m.to_string());
                        stop.store(true, SeqCst);
                    }
                    if t == 0 {
                        rounds.fetch_add(1, SeqCst);
                        if began.elapsed() >= secs {
                            stop.store(true, SeqCst);
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().map_err(|_| format!("a load thread panicked (seed {seed})"))?;
    }
    let rounds = rounds.load(std::sync::atomic::Ordering::SeqCst);
    note(format!(
        "{rounds} rounds of {n} threads × {CROWD_BLOCKS} blocks on one pool in {:.2} s (seed {seed})",
        began.elapsed().as_secs_f64()
    ));
    let again = format!("(seed {seed}: rerun with {STRESS_SEED_VAR}={seed})");
    if let Some(m) = failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(format!("{m} {again}").into());
    }
    let end = get_u64(pool.0, A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
    ensure!(
        end == start,
        "the pool reports {end} bytes used after every thread freed its blocks, {start} before {again}"
    );
    ensure!(rounds > 0, "no round completed {again}");
    Ok(())
}

pub fn cases() -> Vec<Case> {
    vec![
        Case::gpu(820, "load::threads_and_streams_current_pool", |e| {
            stress(e, Via::Current)
        })
        .alone()
        .slow(),
        Case::gpu(821, "load::threads_and_streams_own_pool", |e| stress(e, Via::OwnPool))
            .alone()
            .slow(),
        // Kills 821-unlocked-cache (two threads get one block).
        Case::gpu(821, "load::threads_one_pool_no_lock", crowd_on_one_pool)
            .alone()
            .slow(),
    ]
}
