//! Group `api`: what each of the 14 APIs costs on its common path, in ns per call (median, min and
//! max over rounds). Only the calls are timed, through driver/timed.rs's loops (no observation, no
//! allocation); setup and undo (destroying imported pools, closing fds, freeing imports,
//! synchronising) happen outside the timed region. Run the bench under a library's `LD_PRELOAD`
//! and compare with `cargo xtask bench-diff` to see what that library adds per API.

use super::measure::{row, Row, Scale};
use conformance::driver::check::*;
use conformance::driver::cu::untracked as raw;
use conformance::driver::cu::*;
use conformance::driver::timed;
use conformance::harness::{Cap, Env};
use std::time::Instant;

const SIZE: usize = 4096;

/// ns per call of one timed batch of `n` calls; a failing code becomes the error, after the clock.
fn batch(what: &str, n: usize, run: impl FnOnce() -> Result<(), CUresult>) -> R<f64> {
    let t = Instant::now();
    let r = run();
    let ns = t.elapsed().as_nanos() as f64 / n as f64;
    r.map_err(|c| format!("{what}: {c}"))?;
    Ok(ns)
}

struct Cases<'a> {
    rows: Vec<Row>,
    sc: Scale,
    skipped: &'a mut Vec<String>,
}

impl Cases<'_> {
    /// `sc.api_rounds` rounds of `round` (which returns ns per call of its batch).
    fn case(&mut self, case: &str, mut round: impl FnMut() -> R<f64>) -> R {
        let mut v = Vec::with_capacity(self.sc.api_rounds);
        for _ in 0..self.sc.api_rounds {
            v.push(round()?);
        }
        self.rows.push(row("api", case.to_string(), "ns/call", v));
        Ok(())
    }
}

pub fn api(e: &Env, sc: Scale, skipped: &mut Vec<String>) -> R<Vec<Row>> {
    let n = sc.api_calls;
    let n_ipc = sc.api_ipc_calls;
    let s = Stream::new()?;
    let stream = s.0;
    let own = Pool::on_device(e.dev)?;
    let pool = own.0;
    let max = CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
    set_u64(pool, max, u64::MAX)?;
    let def = default_pool(e.dev)?;
    let old_def = get_u64(def, max)?;
    set_u64(def, max, u64::MAX)?;
    let mut c = Cases {
        rows: Vec::new(),
        sc,
        skipped,
    };
    let result = (|| -> R {
        c.case(
            "820+822 cuMemAllocAsync + cuMemFreeAsync (default pool, 4 KiB), per pair",
            || {
                let ns = batch("cuMemAllocAsync/cuMemFreeAsync", n, || {
                    timed::alloc_free_pairs(
                        |p| unsafe { raw::cuMemAllocAsync(p, SIZE, stream) },
                        |p| unsafe { raw::cuMemFreeAsync(p, stream) },
                        n,
                    )
                })?;
                s.sync()?;
                Ok(ns)
            },
        )?;
        c.case(
            "821+822 cuMemAllocFromPoolAsync + cuMemFreeAsync (own pool, 4 KiB), per pair",
            || {
                let ns = batch("cuMemAllocFromPoolAsync/cuMemFreeAsync", n, || {
                    timed::alloc_free_pairs(
                        |p| unsafe { raw::cuMemAllocFromPoolAsync(p, SIZE, pool, stream) },
                        |p| unsafe { raw::cuMemFreeAsync(p, stream) },
                        n,
                    )
                })?;
                s.sync()?;
                Ok(ns)
            },
        )?;
        let props = device_props(e.dev);
        let n_pools = (n / 10).max(1);
        c.case("823+824 cuMemPoolCreate + cuMemPoolDestroy, per pair", || {
            batch("cuMemPoolCreate/cuMemPoolDestroy", n_pools, || {
                timed::pairs(
                    std::ptr::null_mut(),
                    |p| unsafe { raw::cuMemPoolCreate(p, &props) },
                    |p| unsafe { raw::cuMemPoolDestroy(p) },
                    n_pools,
                )
            })
        })?;
        let mut v: u64 = 0;
        let vp = (&mut v as *mut u64).cast::<std::ffi::c_void>();
        c.case("828 cuMemPoolGetAttribute (RELEASE_THRESHOLD)", || {
            batch("cuMemPoolGetAttribute", n, || {
                timed::calls(|| unsafe { raw::cuMemPoolGetAttribute(pool, max, vp) }, n)
            })
        })?;
        c.case("832 cuMemPoolSetAttribute (RELEASE_THRESHOLD)", || {
            batch("cuMemPoolSetAttribute", n, || {
                timed::calls(|| unsafe { raw::cuMemPoolSetAttribute(pool, max, vp) }, n)
            })
        })?;
        let mut loc = mem_location(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, e.dev);
        let mut flags = CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_NONE;
        let (lp, fp) = (&mut loc as *mut CUmemLocation, &mut flags as *mut CUmemAccess_flags);
        c.case("827 cuMemPoolGetAccess (the owning device)", || {
            batch("cuMemPoolGetAccess", n, || {
                timed::calls(|| unsafe { raw::cuMemPoolGetAccess(fp, pool, lp) }, n)
            })
        })?;
        let desc = CUmemAccessDesc {
            location: loc,
            flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        c.case("831 cuMemPoolSetAccess (the owning device, read-write)", || {
            batch("cuMemPoolSetAccess", n, || {
                timed::calls(|| unsafe { raw::cuMemPoolSetAccess(pool, &desc, 1) }, n)
            })
        })?;
        c.case("833 cuMemPoolTrimTo (0, nothing to release)", || {
            batch("cuMemPoolTrimTo", n, || {
                timed::calls(|| unsafe { raw::cuMemPoolTrimTo(pool, 0) }, n)
            })
        })?;
        if let Err(why) = e.m.has(Cap::Ipc) {
            c.skipped.push(format!("api 825, 826, 829, 830: {why}"));
            return Ok(());
        }
        ipc_cases(&mut c, e, n_ipc, stream, &s)
    })();
    set_u64(def, max, old_def)?;
    result.map(|_| c.rows)
}

/// 825, 826, 829, 830 within this process (an exported pool imported back, where the driver allows it).
fn ipc_cases(c: &mut Cases, e: &Env, n: usize, stream: CUstream, s: &Stream) -> R {
    let posix = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    let shared = Pool::ipc(e.dev)?;
    let pool = shared.0;
    let mut fds = vec![-1i32; n];
    c.case("826 cuMemPoolExportToShareableHandle (POSIX fd)", || {
        let ns = batch("cuMemPoolExportToShareableHandle", n, || {
            timed::each(&mut fds, |_, fd| unsafe {
                raw::cuMemPoolExportToShareableHandle((fd as *mut i32).cast(), pool, posix, 0)
            })
        });
        for fd in fds.iter_mut().filter(|fd| **fd >= 0) {
            unsafe { libc::close(*fd) };
            *fd = -1;
        }
        ns
    })?;
    let ptrs: Vec<CUdeviceptr> = (0..n).map(|_| alloc_from(pool, SIZE, stream)).collect::<R<_>>()?;
    s.sync()?;
    let mut data = vec![CUmemPoolPtrExportData::default(); n];
    c.case("825 cuMemPoolExportPointer", || {
        batch("cuMemPoolExportPointer", n, || {
            timed::each(&mut data, |i, d| unsafe { raw::cuMemPoolExportPointer(d, ptrs[i]) })
        })
    })?;
    let fd = export_pool_fd(pool)?;
    let raw_fd = std::os::fd::AsRawFd::as_raw_fd(&fd);
    let mut probe_pool: CUmemoryPool = std::ptr::null_mut();
    let r = import_pool_fd(raw_fd, &mut probe_pool);
    if r != CUresult::CUDA_SUCCESS {
        c.skipped.push(format!(
            "api 829, 830: this driver refuses to import a pool into the process that exported it ({r}); \
             the ipc group times them across processes"
        ));
    } else {
        unsafe {
            let _ = raw::cuMemPoolDestroy(probe_pool);
        }
        let mut imported = vec![std::ptr::null_mut(); n.min(64)];
        let k = imported.len();
        c.case("829 cuMemPoolImportFromShareableHandle (same process)", || {
            let ns = batch("cuMemPoolImportFromShareableHandle", k, || {
                timed::each(&mut imported, |_, p| unsafe {
                    raw::cuMemPoolImportFromShareableHandle(p, raw_fd as isize as *mut _, posix, 0)
                })
            });
            for p in imported.iter_mut().filter(|p| !p.is_null()) {
                unsafe {
                    let _ = raw::cuMemPoolDestroy(*p);
                }
                *p = std::ptr::null_mut();
            }
            ns
        })?;
        let mut back: CUmemoryPool = std::ptr::null_mut();
        ok("cuMemPoolImportFromShareableHandle", import_pool_fd(raw_fd, &mut back))?;
        let mut mapped = vec![0 as CUdeviceptr; n];
        let imported_case = c.case("830 cuMemPoolImportPointer (same process)", || {
            let ns = batch("cuMemPoolImportPointer", n, || {
                timed::each(&mut mapped, |i, p| unsafe {
                    raw::cuMemPoolImportPointer(p, back, &data[i] as *const _ as *mut _)
                })
            });
            // An import that answered an exporter's own address would be freed twice below: stop.
            if mapped.iter().zip(&ptrs).any(|(m, p)| m == p) {
                return Err("an imported pointer has the exporter's own address; not freed".into());
            }
            for p in mapped.iter_mut().filter(|p| **p != 0) {
                unsafe {
                    let _ = raw::cuMemFreeAsync(*p, stream);
                }
                *p = 0;
            }
            s.sync()?;
            ns
        });
        unsafe {
            let _ = raw::cuMemPoolDestroy(back);
        }
        if let Err(why) = imported_case {
            c.skipped.push(format!("api 830: {why}"));
        }
    }
    for &p in &ptrs {
        free_async(p, stream)?;
    }
    s.sync()
}
