//! Peer-access hygiene on two devices (824, 831; nvbug 5698116, cuda-python #2807): a destroyed pool's grants do not reach a pool that gets its handle, and a partly invalid access map changes nothing.
//!
//! Both need two devices that reach each other (`.pair()`): on one GPU they are ignored with the
//! machine's reason, and their mutants cannot be shown there.

use super::peer::{access, peer, set_access};
use crate::cases::prelude::*;
use crate::driver::cu::CUmemAccess_flags_enum as F;
use crate::driver::cu::CUmemLocationType_enum as LT;

/// How many pools are made, after A's destruction, to meet A's handle again.
const TRIES: usize = 8;

pub fn cases() -> Vec<Case> {
    vec![
        // Pool A on device A grants device B read-write and is destroyed; each new pool (up to
        // TRIES, kept alive so that the next gets a new handle), the one with A's recycled handle
        // above all, gives B no access. Kills 824-peer-grants-survive.
        peer(824, "destroyed_pool_grants_do_not_reach_a_new_pool", |e, b| {
            let a = Pool::on_device(e.dev)?;
            ok(
                "cuMemPoolSetAccess(B read-write)",
                set_access(a.0, b, F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE),
            )?;
            let old = a.0;
            ok("cuMemPoolDestroy", unsafe { cuMemPoolDestroy(a.take()) })?;
            let mut made = Vec::new();
            let mut recycled = false;
            for _ in 0..TRIES {
                let p = Pool::on_device(e.dev)?;
                let f = access(p.0, b)?;
                let same = p.0 == old;
                recycled |= same;
                ensure!(
                    f == F::CU_MEM_ACCESS_FLAGS_PROT_NONE,
                    "a new pool{} gives device {b} access {}, expected none (pool {old:?} granted it before its \
                     destruction)",
                    if same { " with the destroyed pool's handle" } else { "" },
                    f.0
                );
                made.push(p);
                if same {
                    break;
                }
            }
            if !recycled {
                note(format!(
                    "no new pool of {TRIES} got the destroyed pool's handle {old:?}"
                ));
            }
            Ok(())
        }),
        // A map of one valid descriptor (B read-write) and one bad location (a device past the
        // last) is refused, and changes nothing: B keeps no access. Kills 831-partial-map-applied.
        peer(831, "partly_invalid_map_changes_nothing", |e, b| {
            let p = Pool::on_device(e.dev)?;
            let before = access(p.0, b)?;
            let desc = |dev: CUdevice| CUmemAccessDesc {
                location: mem_location(LT::CU_MEM_LOCATION_TYPE_DEVICE, dev),
                flags: F::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            let map = [desc(b), desc(e.m.devices.len() as i32)];
            let r = unsafe { cuMemPoolSetAccess(p.0, map.as_ptr(), map.len()) };
            let after = access(p.0, b)?;
            ensure!(
                r != SUCCESS,
                "cuMemPoolSetAccess took a map naming a device past the last"
            );
            ensure!(
                after == before,
                "cuMemPoolSetAccess refused the map ({}) but changed device {b}'s access from {} to {}",
                code_name(r),
                before.0,
                after.0
            );
            Ok(())
        }),
    ]
}
