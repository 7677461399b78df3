//! Access maps and streams across several devices (831, 827, and 820/822 across every device):
//! one access map for every peer at once and revoking one peer while the others keep access (three
//! or more devices that all reach each other: once over the group `harness/devices.rs` picks), duplicate
//! and conflicting descriptors for one device in one map (each peer pair), and allocation and free
//! on every device's stream (the group). Access is judged by the data path, and what
//! cuMemPoolGetAccess reports is checked against it (a wrong report counts against 827).

use super::peer::{access, access_is, fill_from, peer_fill_is, read_here, OnDevice, N};
use crate::cases::prelude::*;

use crate::driver::cu::CUmemAccess_flags_enum as F;
use crate::driver::cu::CUmemLocationType_enum as LT;

fn desc(dev: CUdevice, flags: F) -> CUmemAccessDesc {
    CUmemAccessDesc {
        location: mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, dev),
        flags,
    }
}

/// A pool on the group's first device with one region of N bytes per device of the group.
struct Setup {
    pool: Pool,
    s: Stream,
    base: CUdeviceptr,
    owner: CUdevice,
    peers: Vec<CUdevice>,
}
impl Setup {
    /// Over a multi-device case's group.
    fn new(e: &Env) -> R<Setup> {
        ensure!(e.multi.len() >= 3, "needs three devices, got {:?}", e.multi);
        Self::over(e.dev, e.multi.iter().copied().filter(|&d| d != e.dev).collect())
    }
    /// Over a pair case's two devices.
    fn pair(e: &Env) -> R<Setup> {
        Self::over(e.dev, vec![e.peer()?])
    }
    fn over(owner: CUdevice, peers: Vec<CUdevice>) -> R<Setup> {
        let pool = Pool::on_device(owner)?;
        let s = Stream::new()?;
        let n = N * (peers.len() + 1);
        let base = alloc_from(pool.0, n, s.0)?;
        ok("cuMemsetD8Async", unsafe { cuMemsetD8Async(base, 0, n, s.0) })?;
        s.sync()?;
        Ok(Setup {
            pool,
            s,
            base,
            owner,
            peers,
        })
    }
    /// One descriptor per peer, all with `flags`.
    fn every_peer(&self, flags: F) -> Vec<CUmemAccessDesc> {
        self.peers.iter().map(|&d| desc(d, flags)).collect()
    }
    fn region(&self, i: usize) -> CUdeviceptr {
        self.base + (N * i) as u64
    }
    fn set(&self, map: &[CUmemAccessDesc]) -> CUresult {
        unsafe { cuMemPoolSetAccess(self.pool.0, map.as_ptr(), map.len()) }
    }
}
impl Drop for Setup {
    fn drop(&mut self) {
        let _ = unsafe { cuMemFreeAsync(self.base, self.s.0) };
        let _ = self.s.sync();
    }
}

/// Which access `dev` has, as the data path shows it (its fill of `p` accepted or refused) and
/// as GetAccess reports it; they must agree.
fn observed(s: &Setup, dev: CUdevice, p: CUdeviceptr) -> R<F> {
    let r = fill_from(dev, p, 0x5c, N)?;
    let by_data = match r {
        SUCCESS => F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        CUresult::CUDA_ERROR_INVALID_VALUE => F::CU_MEM_ACCESS_FLAGS_PROT_NONE,
        other => return Err(format!("device {dev} filling pool memory: {}", code_name(other)).into()),
    };
    let reported = access(s.pool.0, dev)?;
    if reported != by_data {
        blame::set(827);
        return Err(format!(
            "cuMemPoolGetAccess reports {} for device {dev}, whose fill was {} ({})",
            reported.0,
            if r == SUCCESS { "accepted" } else { "refused" },
            code_name(r)
        )
        .into());
    }
    Ok(by_data)
}

pub fn cases() -> Vec<Case> {
    vec![
        // One cuMemPoolSetAccess call with a descriptor per peer (count = N - 1): every peer then
        // writes its own region and the owner reads them all back; GetAccess agrees for everyone.
        Case::gpu(831, "one_map_grants_every_peer", |e| {
            let st = Setup::new(e)?;
            let map = st.every_peer(F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
            ok(
                &format!("cuMemPoolSetAccess({} peers in one map)", map.len()),
                st.set(&map),
            )?;
            for (i, &d) in st.peers.iter().enumerate() {
                let r = fill_from(d, st.region(i + 1), 0x10 + i as u8, N)?;
                if r != SUCCESS {
                    blame::set(831);
                    return Err(format!("peer {d} writing after the one-map grant: {}", code_name(r)).into());
                }
            }
            for (i, &d) in st.peers.iter().enumerate() {
                let back = read_here(st.region(i + 1), N)?;
                ensure!(
                    back.iter().all(|&x| x == 0x10 + i as u8),
                    "the owner reads wrong bytes where device {d} wrote"
                );
                access_is(
                    st.pool.0,
                    d,
                    F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                    "after the one-map grant",
                )?;
            }
            access_is(
                st.pool.0,
                st.owner,
                F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                "for the owner",
            )
        })
        .multi(),
        // Revoking one peer leaves the others their read-write access.
        Case::gpu(831, "revoke_one_peer_others_keep_access", |e| {
            let st = Setup::new(e)?;
            let map = st.every_peer(F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
            ok("cuMemPoolSetAccess(every peer, read-write)", st.set(&map))?;
            let gone = st.peers[0];
            ok(
                "cuMemPoolSetAccess(one peer, none)",
                st.set(&[desc(gone, F::CU_MEM_ACCESS_FLAGS_PROT_NONE)]),
            )?;
            peer_fill_is(gone, st.region(1), N, false, "after its revoke")?;
            access_is(st.pool.0, gone, F::CU_MEM_ACCESS_FLAGS_PROT_NONE, "after its revoke")?;
            for (i, &d) in st.peers.iter().enumerate().skip(1) {
                peer_fill_is(d, st.region(i + 1), N, true, "after another peer's revoke")?;
                access_is(
                    st.pool.0,
                    d,
                    F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                    "after another peer's revoke",
                )?;
            }
            Ok(())
        })
        .multi(),
        // The same descriptor twice in one map: R580 accepts it (the docs are silent), and the
        // peer then has read-write access, the same on the data path and in GetAccess.
        Case::gpu(831, "duplicate_descriptors_accepted_driver_behaviour", |e| {
            let st = Setup::pair(e)?;
            let d = st.peers[0];
            let rw = desc(d, F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
            let r = st.set(&[rw, rw]);
            let now = observed(&st, d, st.region(1))?;
            ok(&format!("cuMemPoolSetAccess([{d} read-write, {d} read-write])"), r)?;
            ensure!(
                now == F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                "the duplicate map succeeded but device {d} has access {}",
                now.0
            );
            Ok(())
        })
        .pair(),
        // Two descriptors for one device that disagree, in both orders: R580 accepts the map and
        // the last descriptor wins (the docs are silent), on the data path and in GetAccess alike.
        Case::gpu(831, "conflicting_descriptors_last_wins_driver_behaviour", |e| {
            let st = Setup::pair(e)?;
            let d = st.peers[0];
            let (rw, none) = (
                desc(d, F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE),
                desc(d, F::CU_MEM_ACCESS_FLAGS_PROT_NONE),
            );
            for (order, map, last) in [
                ("read-write then none", [rw, none], F::CU_MEM_ACCESS_FLAGS_PROT_NONE),
                (
                    "none then read-write",
                    [none, rw],
                    F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                ),
            ] {
                // Start from the opposite of what the last descriptor asks.
                let start = if last == F::CU_MEM_ACCESS_FLAGS_PROT_NONE {
                    rw
                } else {
                    none
                };
                ok("cuMemPoolSetAccess(peer, starting state)", st.set(&[start]))?;
                let r = st.set(&map);
                let now = observed(&st, d, st.region(1))?;
                ok(&format!("cuMemPoolSetAccess([{order}])"), r)?;
                ensure!(
                    now == last,
                    "[{order}] left device {d} with access {}, expected the last descriptor's {}",
                    now.0,
                    last.0
                );
            }
            Ok(())
        })
        .pair(),
        // cuMemAllocAsync on a stream of each device draws from that device's current pool.
        Case::gpu(820, "each_device_draws_from_its_current_pool", |e| {
            for &d in &e.multi {
                let _on = OnDevice::enter(d)?;
                let s = Stream::new()?;
                let a = alloc_async(N, s.0)?;
                let owner = pool_of(a);
                free_async(a, s.0)?;
                s.sync()?;
                let cur = current_pool(d)?;
                ensure!(
                    owner? == cur,
                    "an allocation on device {d}'s stream does not come from its current pool {cur:p}"
                );
            }
            Ok(())
        })
        .multi(),
        // For every ordered pair (a, b): memory from a's pool, freed on b's stream after an event.
        Case::gpu(822, "free_on_every_other_device_stream", |e| {
            for &a in &e.multi {
                for &b in e.multi.iter().filter(|&&b| b != a) {
                    let (p, ev) = {
                        let _on = OnDevice::enter(a)?;
                        let p = Pool::on_device(a)?;
                        let s = Stream::new()?;
                        let m = alloc_from(p.0, N, s.0)?;
                        let ev = Event::new(0)?;
                        ev.record(s.0)?;
                        {
                            let _b = OnDevice::enter(b)?;
                            let sb = Stream::new()?;
                            ok("cuStreamWaitEvent", unsafe { cuStreamWaitEvent(sb.0, ev.0, 0) })?;
                            ok(
                                &format!("cuMemFreeAsync(memory of device {a} on device {b}'s stream)"),
                                unsafe { cuMemFreeAsync(m, sb.0) },
                            )?;
                            sb.sync()?;
                        }
                        (p, ev)
                    };
                    let _on = OnDevice::enter(a)?;
                    let used = get_u64(p.0, CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
                    drop(ev);
                    ensure!(
                        used == 0,
                        "{used} bytes of device {a}'s pool still in use after the free on {b}"
                    );
                }
            }
            Ok(())
        })
        .multi(),
    ]
}
